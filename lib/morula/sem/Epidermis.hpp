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
#include <morula/sem/GeneCoupling.hpp>
#include <morula/sem/SemMechanics.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>
#include <morula/sem/TissueGrowth.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <utility>

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
        geometry,  //!< cell centres and adhesion
        mechanics, //!< list upkeep and the Runge-Kutta stages of the elements
        genes,     //!< neighbour inputs and the gene network stages
        growth     //!< growth and division events
    };
};

//! What one step did: the growth event's counts (zero on steps without one).
struct EpidermisReport : core::StepReport
{
    int grown = 0;     //!< cells that gained an element
    int divisions = 0; //!< cells that divided (= cells added)
};

/*!
  \brief One time step is, as in the paper: cell centres and adhesion; the element stages (RK2 or
  Euler); the neighbour inputs and gene-network stages (with the centres and species of the start of
  the step); and, every `growth.interval` steps of the full model, growth and division.
*/
template <class Scalar, class MemorySpace>
class Epidermis
{
  public:
    using tissue_type = Tissue<Scalar, MemorySpace>;

    Epidermis( tissue_type tissue, const core::Box<Scalar>& box, const EpidermisParameters& params )
        : m_tissue( std::move( tissue ) )
        , m_params( params )
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
    long long steps_done() const { return m_step; }
    double time() const { return m_step * m_params.mechanics.time_step; }
    //! Seconds per EpidermisPhase, summed over the timed steps.
    const core::PhaseTimer& times() const { return m_times; }
    void reset_times() { m_times.reset(); }
    long long divisions() const { return m_divisions; }
    bool gene_network() const { return m_params.model != EpidermisModel::movement; }

    //! One step; with `timed`, each phase is fenced and timed (a few microseconds each).
    template <class ExecutionSpace>
    EpidermisReport step( const ExecutionSpace& exec, bool timed = false )
    {
        using Phase = EpidermisPhase;
        EpidermisReport report;
        report.step = m_step;
        const bool genes = gene_network();
        m_times.run( timed, Phase::geometry, exec, [&] {
            m_mechanics.compute_cell_geometry( exec, m_tissue );
            m_mechanics.prepare( exec, m_tissue );
        } );
        if ( genes )
            m_times.run( timed, Phase::genes, exec,
                         [&] { m_genes.compute_inputs( exec, m_tissue, m_mechanics.grid_box() ); } );
        m_times.run( timed, Phase::mechanics, exec, [&] { m_mechanics.step( exec, m_tissue ); } );
        if ( genes )
            m_times.run( timed, Phase::genes, exec, [&] {
                m_genes.step( exec, m_tissue, m_params.mechanics.time_step, m_params.mechanics.integrator );
            } );
        ++m_step;
        if ( m_params.model == EpidermisModel::full && m_growth.due( m_step ) )
            m_times.run( timed, Phase::growth, exec, [&] {
                m_mechanics.compute_cell_geometry( exec, m_tissue );
                const GrowthReport grew = m_growth.apply( exec, m_tissue, genes );
                if ( grew.grown > 0 || grew.divisions > 0 )
                    m_mechanics.invalidate_list();
                report.grown = grew.grown;
                report.divisions = grew.divisions;
                m_divisions += grew.divisions;
            } );
        if ( timed )
            m_times.count_step();
        return report;
    }

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
    tissue_type m_tissue;
    EpidermisParameters m_params;
    SemMechanics<Scalar, MemorySpace> m_mechanics;
    GeneCoupling<Scalar, MemorySpace> m_genes;
    TissueGrowth<Scalar, MemorySpace> m_growth;
    core::PhaseTimer m_times{ "morula::sem::Epidermis", { "geometry", "mechanics", "genes", "growth" } };
    long long m_step = 0;
    long long m_divisions = 0;
};

} // namespace morula::sem

#endif
