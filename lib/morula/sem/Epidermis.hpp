/*!
  \file Epidermis.hpp
  \brief The 3D epidermis model of Christley et al. (2010) as one driver: SEM mechanics, the
  per-cell gene network coupled through Notch signalling and membrane adhesion, growth and division.
*/
#ifndef MORULA_SEM_EPIDERMIS_HPP
#define MORULA_SEM_EPIDERMIS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/core/StepGraph.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/sem/GeneCoupling.hpp>
#include <morula/sem/SemMechanics.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>
#include <morula/sem/TissueGrowth.hpp>
#include <morula/sem/detail/EpidermisStep.hpp>
#include <morula/sem/detail/SemKernels.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace morula::sem
{

//! The paper's three models.
enum class EpidermisModel : int
{
    movement,     //!< SEM mechanics only
    gene_network, //!< mechanics + the coupled gene network
    full          //!< mechanics + gene network + growth and division
};

inline const char* to_string( EpidermisModel m )
{
    return m == EpidermisModel::movement ? "movement"
           : m == EpidermisModel::gene_network ? "gene_network" : "full";
}

struct EpidermisParameters
{
    EpidermisModel model = EpidermisModel::full;
    SemParameters mechanics;
    GeneCouplingParameters genes;
    TissueGrowthParameters growth;

    void validate( const std::string& where ) const
    {
        mechanics.validate( where );
        genes.validate( where );
        growth.validate( where );
    }
};

//! The phases of Epidermis::step(), in the order of the names in its times().
struct EpidermisPhase
{
    enum : int
    {
        geometry,  //!< cell centres and adhesion, and the element list's upkeep
        mechanics, //!< the Runge-Kutta stages of the elements
        genes,     //!< the centre list's upkeep, neighbour inputs and the gene network stages
        growth     //!< growth and division events
    };
    static constexpr const char* scope = "morula::sem::Epidermis";
    static constexpr const char* names[] = { "geometry", "mechanics", "genes", "growth" };
};

//! What one step did: the growth event's counts (zero on steps without one).
struct EpidermisReport : core::StepReport
{
    int grown = 0;     //!< cells that gained an element
    int divisions = 0; //!< cells that divided (= cells added)

    //! Sums an advance()'s steps.
    void merge( const EpidermisReport& other )
    {
        grown += other.grown;
        divisions += other.divisions;
    }
};

//! What Epidermis::advance did so far (summed over its calls).
struct EpidermisChunkStats
{
    long long chunks = 0;       //!< chunks replayed
    long long chunk_steps = 0;  //!< steps completed inside chunks
    long long failed = 0;       //!< chunks ended early by a failed check (the "rollbacks")
    long long wasted = 0;       //!< steps of failed chunks that did nothing after the failure
    long long plain_steps = 0;  //!< steps advance() ran as plain step()s (events, failures, starts)
    long long captures = 0;     //!< graph captures (records) of chunks, each after a pointer or size change
};

/*!
  \brief One time step is, as in the paper: cell centres and adhesion; the element stages (RK2 or
  Euler); the neighbour inputs and gene-network stages (with the centres and species of the start of
  the step); and, every `growth.interval` steps of the full model, growth and division.
*/
template <class Scalar, class MemorySpace>
class Epidermis : public core::ModelDriver<Epidermis<Scalar, MemorySpace>, EpidermisPhase, EpidermisReport>
{
  public:
    using tissue_type = Tissue<Scalar, MemorySpace>;

    Epidermis( tissue_type tissue, const core::Box<Scalar>& box, const EpidermisParameters& params )
        : m_tissue( std::move( tissue ) )
        , m_params( resolved( params ) )
        , m_mechanics( box, params.mechanics )
        , m_genes( box, params.genes )
        , m_growth( params.growth )
    {
        params.validate( "Epidermis" );
    }

    const tissue_type& tissue() const { return m_tissue; }
    tissue_type& tissue() { return m_tissue; }
    const EpidermisParameters& parameters() const { return m_params; }
    const SemMechanics<Scalar, MemorySpace>& mechanics() const { return m_mechanics; }
    SemMechanics<Scalar, MemorySpace>& mechanics() { return m_mechanics; }
    const GeneCoupling<Scalar, MemorySpace>& genes() const { return m_genes; }
    double time() const { return this->steps_done() * m_params.mechanics.time_step; }
    long long divisions() const { return m_divisions; }
    bool gene_network() const { return m_params.model != EpidermisModel::movement; }

    //! The model's name in its checkpoints (io::write_checkpoint, io::restart_from_checkpoint).
    static constexpr const char* checkpoint_model = "epidermis";
    /*!
      \brief Writes the whole state (after a fence): precision, parameters and box, step and division
      counters, the tissue at its capacities, both Verlet lists' state (EpidermisCheckpoint.hpp).
    */
    void checkpoint( io::CheckpointWriter& out ) const;
    /*!
      \brief Continues the checkpointed run in this driver, made from the same parameters and box (its
      tissue may differ: it is replaced). The continuation equals the uninterrupted run bit for bit, by
      step() or advance() (whose chunks are recorded anew).
      \throws core::InputError naming the checkpoint file for another precision, a parameter that
      differs (named with both values) or an inconsistent state. The parameters and the tissue are
      checked before anything changes; after a later failure (a damaged file) make a new driver.
    */
    void restart( const io::CheckpointReader& in );

    /*!
      \brief One step's phases (core::ModelDriver::step() runs them, timed or not: the same kernels in the
      same order as a chunk's step). The host reads the element list's displacement bound and the centre
      list's check once each.
    */
    template <class ExecutionSpace, class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, EpidermisReport& report )
    {
        using Phase = EpidermisPhase;
        const bool genes = gene_network();
        phase( Phase::geometry, [&] {
            m_mechanics.ensure_spares( m_tissue );
            m_mechanics.compute_cell_geometry( exec, m_tissue );
            m_mechanics.prepare( exec, m_tissue );
        } );
        // The kernels are made after both lists' upkeep, which may rebuild or resize what they read.
        StepKernels k;
        const auto make_kernels = [&] { k = step_kernels( m_tissue.positions(), m_mechanics.spare_positions(), -1 ); };
        if ( genes )
            phase( Phase::genes, [&] {
                m_genes.prepare( exec, m_tissue );
                make_kernels();
                detail::launch_inputs( exec, k );
            } );
        else
            make_kernels();
        phase( Phase::mechanics, [&] {
            detail::launch_mechanics( exec, k, m_mechanics.metric_slot( 0 ) );
            m_mechanics.finish_step( m_tissue );
        } );
        if ( genes )
            phase( Phase::genes, [&] { detail::launch_genes( exec, k ); } );
        // The step whose count (after it) is a multiple of the interval ends with a growth event.
        if ( m_params.model == EpidermisModel::full && m_growth.due( report.step + 1 ) )
            phase( Phase::growth, [&] {
                m_mechanics.compute_cell_geometry( exec, m_tissue );
                const GrowthReport grew = m_growth.apply( exec, m_tissue, genes );
                if ( grew.grown > 0 || grew.divisions > 0 )
                {
                    m_mechanics.invalidate_list();
                    m_genes.invalidate_list();
                }
                report.grown = grew.grown;
                report.divisions = grew.divisions;
                m_divisions += grew.divisions;
            } );
    }

    /*!
      \brief advance( exec, n )'s steps (core::ModelDriver::advance checks n and merges the reports),
      equal bit for bit to n calls of step(exec), with the host out of the loop: runs of
      k steps ("chunks", k a power of two up to SemMechanics::max_chunk_steps) are recorded once and
      replayed (one CUDA graph per k and position buffer on CUDA with Kokkos >= 4.6.99, relaunched
      elsewhere). The checks a plain step makes on the host (the element list's displacement bound, a
      non-finite position, the centre list's validity) run on the device; the first failing step and
      every later one of the chunk do nothing, the host reads the outcome once per chunk and runs the
      failing step as a plain step (which rebuilds or throws exactly as step() does). Growth events are
      plain steps too. k follows the predicted steps until the next list rebuild; while chunks fail at
      their first or second step, plain steps run instead for a growing number of steps.
    */
    template <class ExecutionSpace>
    void advance_steps( const ExecutionSpace& exec, long long n, EpidermisReport& total )
    {
        compat::ScopedRegion region( "morula::sem::Epidermis::advance" );
        const auto plain = [&] {
            this->merge_report( total, this->step( exec ) );
            ++m_stats.plain_steps;
        };
        long long left = n;
        while ( left > 0 )
        {
            const long long at = this->steps_done();
            long long room = left;
            if ( m_params.model == EpidermisModel::full )
            {
                // The step whose count is a multiple of the interval ends with a growth event: plain.
                const long long interval = m_params.growth.interval;
                const long long growth_step = ( at / interval + 1 ) * interval - 1;
                room = room < growth_step - at ? room : growth_step - at;
            }
            if ( room < 1 || !ready_for_chunk() || at < m_plain_until )
            {
                plain();
                --left;
                continue;
            }
            const int k = chunk_length( room );
            const int done = run_chunk( exec, k );
            left -= done;
            if ( done > 0 )
                total.step = this->steps_done() - 1;
            if ( done < k )
            {
                plain();
                --left;
            }
        }
    }

    //! What advance() did so far.
    const EpidermisChunkStats& chunk_stats() const { return m_stats; }

    //! Centres and adhesion of the current positions (for output between steps).
    template <class ExecutionSpace>
    void update_geometry( const ExecutionSpace& exec )
    {
        m_mechanics.compute_cell_geometry( exec, m_tissue );
    }

    //! Per cell: 0 basal, 1 suprabasal (see is_basal); call update_geometry() first.
    template <class ExecutionSpace>
    Kokkos::View<int*, MemorySpace> cell_states( const ExecutionSpace& exec ) const
    {
        Kokkos::View<int*, MemorySpace> state( "morula::sem::cell_state", m_tissue.num_cells() );
        auto species = m_tissue.species();
        auto adhesion = m_tissue.adhesion();
        const bool genes = gene_network();
        Kokkos::parallel_for(
            "morula::sem::cell_states", core::LaunchRange<ExecutionSpace>( exec, 0, m_tissue.num_cells() ),
            KOKKOS_LAMBDA( const int c ) { state( c ) = is_basal( species, adhesion, c, genes ) ? 0 : 1; } );
        return state;
    }

  private:
    using StepKernels = detail::EpidermisStepKernels<Scalar, MemorySpace>;

    //! The kernels of one step from positions x into out; guard step j >= 0 inside a chunk.
    StepKernels step_kernels( const typename tissue_type::position_view& x,
                              const typename tissue_type::position_view& out, int j ) const
    {
        StepKernels k;
        const detail::StepGuard<MemorySpace> guard{ m_failed, j };
        k.geometry = m_mechanics.geometry_functor( m_tissue, x );
        k.geometry.guard = guard;
        k.geometry.metric = m_mechanics.metric_slot( j < 0 ? 0 : j );
        k.cells = m_tissue.num_cells();
        k.rk2 = m_mechanics.runge_kutta2();
        k.stages = m_mechanics.stage_functors( m_tissue, x, out );
        k.stages.set_guard( guard );
        k.genes = gene_network();
        if ( k.genes )
        {
            const auto g = m_genes.stage_functors( m_tissue, m_params.mechanics.time_step,
                                                   m_params.mechanics.integrator );
            k.gene_first = g.first;
            k.gene_last = g.last;
            k.gene_first->guard = k.gene_last->guard = guard;
            k.inputs = m_genes.inputs_functor( m_tissue, false );
            k.counts = m_genes.inputs_functor( m_tissue, true );
            k.inputs.guard = k.counts.guard = guard;
            k.distribute = m_genes.distribute();
        }
        return k;
    }

    //! Runs one chunk of k steps; returns the steps it completed (k unless a check failed).
    template <class ExecutionSpace>
    int run_chunk( const ExecutionSpace& exec, int k )
    {
        std::vector<std::uintptr_t> sig;
        m_mechanics.chunk_signature( m_tissue, sig );
        if ( gene_network() )
            m_genes.chunk_signature( m_tissue, sig );
        if ( sig != m_signature )
        {
            m_graphs.clear();
            m_signature = sig;
        }
        // Parity: whether the chunk starts from the lower of the two position buffers.
        const auto x = m_tissue.positions();
        const auto y = m_mechanics.spare_positions();
        const int parity = reinterpret_cast<std::uintptr_t>( x.data() ) ==
                                   static_cast<std::uintptr_t>( m_signature[0] )
                               ? 0
                               : 1;
        auto build = [&] {
            std::vector<StepKernels> steps;
            std::vector<Kokkos::View<Scalar, MemorySpace>> metrics;
            for ( int j = 0; j < k; ++j )
            {
                steps.push_back( j % 2 == 0 ? step_kernels( x, y, j ) : step_kernels( y, x, j ) );
                metrics.push_back( m_mechanics.metric_slot( j + 1 ) );
            }
            using Chunk = detail::EpidermisChunkOperation<ExecutionSpace, Scalar, MemorySpace>;
            return Chunk{ std::move( steps ), std::move( metrics ), m_failed };
        };
        if constexpr ( std::is_same_v<ExecutionSpace, graph_space> )
        {
            auto& graph = m_graphs[k][parity];
            if ( !graph.recorded() )
            {
                // Every kernel of a capture must have run before (scratch allocation): the step kernels
                // ran in the plain steps; the guard reset runs here once.
                if ( !m_reset_ran )
                {
                    Kokkos::parallel_for( "morula::sem::chunk_reset",
                                          core::LaunchRange<ExecutionSpace>( exec, 0, 1 ),
                                          detail::ResetGuardFunctor<MemorySpace>{ m_failed } );
                    m_reset_ran = true;
                }
                graph.record( build() );
                ++m_stats.captures;
            }
            graph.replay( exec );
        }
        else
            build()( exec ); // another instance type than the graphs': the same kernels, launched directly
        Kokkos::deep_copy( exec, m_failed_host, m_failed );
        exec.fence();
        const int failed = m_failed_host();
        const int done = failed < k ? failed : k;
        m_mechanics.finish_chunk( exec, m_tissue, done );
        this->set_steps_done( this->steps_done() + done );
        ++m_stats.chunks;
        m_stats.chunk_steps += done;
        if ( done < k )
        {
            ++m_stats.failed;
            m_stats.wasted += k - done;
            m_chunk_cap = k / 2 > 2 ? k / 2 : 2;
        }
        else if ( m_chunk_cap < detail_max_chunk )
            m_chunk_cap *= 2;
        // A chunk that completed at most one step bought nothing over plain steps and cost a replay and a
        // read: the full model's list falls due every step once cells divide, and chunks that fail at once
        // make those steps slower than plain ones
        // (docs/performance.md, "Design choices measured (moved from source comments, issue #46)"). Back off to
        // plain steps for 2, 4, ... 64 steps while that lasts; a chunk of two or more steps ends the back-off.
        if ( done <= 1 && done < k )
        {
            m_backoff = m_backoff == 0 ? 2 : ( 2 * m_backoff < detail_max_chunk ? 2 * m_backoff : detail_max_chunk );
            m_plain_until = this->steps_done() + 1 + m_backoff; // the failing step runs plain anyway
        }
        else if ( done >= 2 )
            m_backoff = 0;
        return done;
    }

    static constexpr int detail_max_chunk = SemMechanics<Scalar, MemorySpace>::max_chunk_steps;

    // The parameters as run (and checkpointed): backend-dependent defaults filled in.
    static EpidermisParameters resolved( EpidermisParameters p )
    {
        p.mechanics = resolved_for<MemorySpace>( p.mechanics );
        return p;
    }

    bool ready_for_chunk() const
    {
        return m_mechanics.ready_for_chunk( m_tissue ) &&
               ( !gene_network() || m_genes.ready_for_chunk( m_tissue ) );
    }

    // Steps of the next chunk: a power of two, at most `room`, the cap (halved after a failure, doubled
    // after a success) and the steps the last rebuild interval predicts before the element list falls
    // due (a failure wastes the rest of its chunk's launches, a short chunk costs one more host read).
    int chunk_length( long long room ) const
    {
        long long cap = room < m_chunk_cap ? room : m_chunk_cap;
        const long long interval = m_mechanics.last_build_interval();
        const long long since = m_mechanics.steps_since_build();
        if ( interval > 0 )
        {
            // Past the last interval the list is due any step now: short chunks waste little.
            const long long predicted = since < interval ? interval - since : ( interval / 4 > 2 ? interval / 4 : 2 );
            cap = cap < predicted ? cap : predicted;
        }
        int k = 1;
        while ( 2 * k <= cap && 2 * k <= detail_max_chunk )
            k *= 2;
        return k;
    }

    tissue_type m_tissue;
    EpidermisParameters m_params;
    SemMechanics<Scalar, MemorySpace> m_mechanics;
    GeneCoupling<Scalar, MemorySpace> m_genes;
    TissueGrowth<Scalar, MemorySpace> m_growth;
    long long m_divisions = 0;
    // advance(): the chunk failure flag, its host copy, one recorded chunk per length and parity, the
    // pointers the recordings froze.
    Kokkos::View<int, MemorySpace> m_failed{ "morula::sem::chunk_failed" };
    Kokkos::View<int, Kokkos::HostSpace> m_failed_host{ "morula::sem::chunk_failed_host" };
    using graph_space = typename MemorySpace::execution_space;
    std::map<int, std::array<core::StepGraph<graph_space>, 2>> m_graphs;
    std::vector<std::uintptr_t> m_signature;
    EpidermisChunkStats m_stats;
    long long m_chunk_cap = 8;
    long long m_backoff = 0;
    long long m_plain_until = 0;
    bool m_reset_ran = false;
};

} // namespace morula::sem

// The definitions of Epidermis::checkpoint and Epidermis::restart.
#include <morula/sem/EpidermisCheckpoint.hpp>

#endif
