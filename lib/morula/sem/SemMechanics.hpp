/*!
  \file SemMechanics.hpp
  \brief The subcellular element method on the device: cell centres, the inter-cell Verlet list through
  the sorted uniform grid, velocities, potential energy and the Runge-Kutta (or Euler) step.
*/
#ifndef MORULA_SEM_SEMMECHANICS_HPP
#define MORULA_SEM_SEMMECHANICS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/grid/UniformGrid.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>
#include <morula/sem/detail/SemKernels.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::sem
{

/*!
  \brief Moves the elements of a Tissue by the SEM equations of motion.

  The box has periodic or open x and y axes (the paper's periodic boundary, through minimum images
  instead of eight explicit mirror copies, or its "no boundary") and an open z axis; the basement
  membrane is the plane z = 0. Inter-cell pairs come from a Verlet list over all elements, built through
  the sorted uniform grid with radius cutoff + skin and rebuilt when the displacement bound since the
  build (reduced in the last stage kernel, read once per step) could exceed skin / 2. Intra-cell pairs
  are all pairs of the cell (cells are contiguous in memory), as in the paper.
*/
template <class Scalar, class MemorySpace>
class SemMechanics
{
  public:
    using tissue_type = Tissue<Scalar, MemorySpace>;
    using position_view = typename tissue_type::position_view;

    SemMechanics( const core::Box<Scalar>& box, const SemParameters& params )
        : m_box( box )
        , m_params( resolved_for<MemorySpace>( params ) )
    {
        params.validate( "SemMechanics" );
        box.validate( "SemMechanics" );
        if ( box.boundary[2] != core::Boundary::open )
            throw core::InputError(
                "SemMechanics: the z axis must be open (the membrane is z = 0, the top is free)" );
        m_cutoff = static_cast<Scalar>( params.effective_inter_cutoff() );
        m_skin = static_cast<Scalar>( *m_params.skin_factor * params.effective_inter_cutoff() );
        for ( int d = 0; d < 2; ++d )
            if ( box.is_periodic( d ) && !( box.length( d ) >= 2 * ( m_cutoff + m_skin ) ) )
                throw core::InputError( core::detail::concat(
                    "SemMechanics: the periodic box is ", box.length( d ), " long along ",
                    "xy"[d], ", less than twice the intercellular cutoff plus skin (",
                    m_cutoff + m_skin, ")" ) );
        // m_metric is the bound a plain step reduces and reads (slot 0); a chunk's step j reads slot j and
        // reduces into slot j + 1 of m_metrics, so that the bound a failing step read survives its chunk.
        m_metric = Kokkos::View<Scalar, MemorySpace>( "morula::sem::list_metric" );
        m_metrics = Kokkos::View<Scalar*, MemorySpace>( "morula::sem::chunk_list_metrics", max_chunk_steps + 1 );
    }

    //! Most steps one chunk of Epidermis::advance runs (the number of displacement-bound slots).
    static constexpr int max_chunk_steps = 64;

    const core::Box<Scalar>& box() const { return m_box; }
    const SemParameters& parameters() const { return m_params; }
    Scalar inter_cutoff() const { return m_cutoff; }
    Scalar skin() const { return m_skin; }
    long long list_builds() const { return m_list_builds; }
    //! Steps since the list was last built, and the length of the interval between the last two builds.
    long long steps_since_build() const { return m_steps - m_steps_at_build; }
    long long last_build_interval() const { return m_last_interval; }

    //! The box of the element grid (covers every element along open axes); valid after prepare().
    core::Box<Scalar> grid_box() const { return m_grid ? m_grid->geometry().box : m_box; }

    //! Rebuilds the inter-cell list if it is due (step() calls this itself).
    template <class ExecutionSpace>
    void prepare( const ExecutionSpace& exec, tissue_type& t )
    {
        prepare_list( exec, t );
    }

    //! Forces a list rebuild before the next step (needed after elements were added or regrouped).
    void invalidate_list() { m_list_valid = false; }

    //! Cell centres (periodic unwrapping) and membrane adhesion of every cell.
    template <class ExecutionSpace>
    void compute_cell_geometry( const ExecutionSpace& exec, tissue_type& t ) const
    {
        Kokkos::parallel_for( "morula::sem::cell_geometry",
                              core::LaunchRange<ExecutionSpace>( exec, 0, t.num_cells() ),
                              geometry_functor( t, t.positions() ) );
    }

    //! The cell-geometry kernel over positions x (a plain step's: no chunk guard).
    detail::CellGeometryFunctor<Scalar, MemorySpace> geometry_functor( const tissue_type& t,
                                                                       const position_view& x ) const
    {
        detail::CellGeometryFunctor<Scalar, MemorySpace> f{ x, t.cell_offset(), t.cell_count(),
                                                            t.element_type(), t.centres(), t.adhesion(),
                                                            m_box };
        f.metric = m_metric;
        f.half_skin = m_skin / 2;
        return f;
    }

    /*!
      \brief The stages of one step from positions x into `out` (first: RK2's half step; unused for Euler).
      On host backends (intra_by_cell) each stage is two kernels: first_intra / last_intra over cells,
      then the stage over elements, which adds the other pairs to those sums (detail::IntraCellFunctor:
      the same bits, half the Morse evaluations); on GPUs one kernel per stage. launch_stage() runs one.
    */
    struct Stages
    {
        detail::StageFunctor<Scalar, MemorySpace> first, last;
        detail::IntraCellFunctor<Scalar, MemorySpace> first_intra, last_intra;
        bool intra_by_cell = false;
        int cells = 0;
        int elements = 0;

        //! Sets the chunk guard of every kernel of the stages.
        void set_guard( const detail::StepGuard<MemorySpace>& g )
        {
            first.guard = last.guard = first_intra.guard = last_intra.guard = g;
        }
    };
    Stages stage_functors( const tissue_type& t, const position_view& x, const position_view& out ) const
    {
        const Scalar dt = static_cast<Scalar>( m_params.time_step );
        Stages s{ { evaluator( t, x, false ), x, m_half, m_reference, dt / 2 },
                  { evaluator( t, x, false ), x, out, m_reference, dt } };
        if ( m_params.integrator == TimeScheme::runge_kutta2 )
            s.last.velocity = evaluator( t, m_half, false );
        s.cells = t.num_cells();
        s.elements = t.num_elements();
        s.intra_by_cell = intra_by_cell;
        if ( intra_by_cell )
        {
            for ( auto* stage : { &s.first, &s.last } )
            {
                stage->velocity.pairs.skip_intra = true;
                stage->velocity.intra_sums = m_intra_sums;
            }
            s.first_intra = { x, m_intra_sums, t.cell_offset(), t.cell_count(), m_box, m_params.intra, {} };
            s.last_intra = s.first_intra;
            s.last_intra.x = s.last.velocity.pairs.x;
        }
        return s;
    }

    //! Enqueues the first (RK2's half step) or the last stage: its intra-cell kernel, if any, then the
    //! stage; the last stage reduces the list's displacement bound into `metric_out`.
    template <class ExecutionSpace>
    static void launch_stage( const ExecutionSpace& exec, const Stages& s, bool last,
                              const Kokkos::View<Scalar, MemorySpace>& metric_out )
    {
        using policy = core::LaunchRange<ExecutionSpace>;
        if ( s.intra_by_cell )
            Kokkos::parallel_for( "morula::sem::intra_cell_sums", policy( exec, 0, s.cells ),
                                  last ? s.last_intra : s.first_intra );
        if ( last )
            Kokkos::parallel_reduce( "morula::sem::final_stage", policy( exec, 0, s.elements ), s.last,
                                     Kokkos::Max<Scalar, MemorySpace>( metric_out ) );
        else
            Kokkos::parallel_for( "morula::sem::rk2_half_step", policy( exec, 0, s.elements ), s.first );
    }
    bool runge_kutta2() const { return m_params.integrator == TimeScheme::runge_kutta2; }

    //! Spare position arrays of the tissue's capacity (the stages write into them).
    void ensure_spares( const tissue_type& t )
    {
        ensure( m_half, t.element_capacity(), "morula::sem::positions_half" );
        ensure( m_next, t.element_capacity(), "morula::sem::positions_next" );
        if ( intra_by_cell )
            ensure( m_intra_sums, t.element_capacity(), "morula::sem::intra_cell_sums" );
    }
    //! The array the next step writes its positions into (swapped with the tissue's afterwards).
    const position_view& spare_positions() const { return m_next; }
    //! Device scalar j of the displacement bounds (slot 0: the plain steps').
    Kokkos::View<Scalar, MemorySpace> metric_slot( int j ) const
    {
        return j == 0 ? m_metric : Kokkos::View<Scalar, MemorySpace>( m_metrics.data() + j );
    }
    const Kokkos::View<Scalar*, MemorySpace>& metric_slots() const { return m_metrics; }

    //! After a plain step's final stage (into spare_positions()): its positions become the tissue's.
    void finish_step( tissue_type& t )
    {
        t.swap_positions( m_next );
        m_metric_pending = true;
        ++m_steps;
    }

    /*!
      \brief After a chunk that completed `done` steps (ping-ponging between the tissue's positions and
      spare_positions()): the last positions become the tissue's and the bound of its last step becomes
      slot 0's, so the next plain step reads what it would have read after `done` plain steps.
    */
    template <class ExecutionSpace>
    void finish_chunk( const ExecutionSpace& exec, tissue_type& t, int done )
    {
        if ( done <= 0 )
            return;
        if ( done % 2 == 1 )
            t.swap_positions( m_next );
        Kokkos::deep_copy( exec, m_metric, metric_slot( done ) );
        m_metric_pending = true;
        m_steps += done;
    }

    //! Whether a chunk may start now: the list is current for these elements and its bound is pending.
    bool ready_for_chunk( const tissue_type& t ) const
    {
        return m_list_valid && m_metric_pending && m_list.num_particles() == t.num_elements() &&
               static_cast<int>( m_next.extent( 0 ) ) == t.element_capacity() &&
               static_cast<int>( m_half.extent( 0 ) ) == t.element_capacity() &&
               ( !intra_by_cell || static_cast<int>( m_intra_sums.extent( 0 ) ) == t.element_capacity() );
    }

    //! Pointers and sizes a chunk's kernels freeze (a CUDA graph keeps them); any change needs a new capture.
    void chunk_signature( const tissue_type& t, std::vector<std::uintptr_t>& sig ) const
    {
        auto p = []( const void* q ) { return reinterpret_cast<std::uintptr_t>( q ); };
        const auto a = p( t.positions().data() ), b = p( m_next.data() );
        sig.insert( sig.end(), { a < b ? a : b, a < b ? b : a, p( m_half.data() ), p( m_reference.data() ), p( m_intra_sums.data() ),
                                 p( m_list.offsets().data() ), p( m_list.indices().data() ),
                                 p( t.element_cell().data() ), p( t.element_type().data() ),
                                 p( t.cell_offset().data() ), p( t.cell_count().data() ),
                                 p( t.centres().data() ), p( t.adhesion().data() ),
                                 static_cast<std::uintptr_t>( t.num_elements() ),
                                 static_cast<std::uintptr_t>( t.num_cells() ) } );
    }

    /*!
      \brief One time step of the equations of motion (RK2 midpoint or Euler).
      \throws core::InputError if a position became non-finite (the time step is too large for the
      potentials); the message names the step size.
    */
    template <class ExecutionSpace>
    void step( const ExecutionSpace& exec, tissue_type& t )
    {
        compat::ScopedRegion region( "morula::sem::SemMechanics::step" );
        prepare_list( exec, t );
        ensure_spares( t );
        const auto stages = stage_functors( t, t.positions(), m_next );
        if ( runge_kutta2() )
            launch_stage( exec, stages, false, m_metric );
        launch_stage( exec, stages, true, m_metric );
        // The new positions become the tissue's; the old array is the next step's spare.
        finish_step( t );
    }

    //! Velocities dX/dt of every element into v (first num_elements rows).
    template <class ExecutionSpace, class VelocityView>
    void velocities( const ExecutionSpace& exec, tissue_type& t, const VelocityView& v,
                     bool brute_force = false )
    {
        if ( !brute_force )
            prepare_list( exec, t );
        const auto eval = evaluator( t, t.positions(), brute_force );
        Kokkos::parallel_for(
            "morula::sem::velocities", core::LaunchRange<ExecutionSpace>( exec, 0, t.num_elements() ),
            KOKKOS_LAMBDA( const int i ) {
                Scalar u[3];
                eval( i, u );
                for ( int d = 0; d < 3; ++d )
                    v( i, d ) = u[d];
            } );
    }

    //! Total potential energy (intra-cell Morse, positive inter-cell Morse, membrane), in double.
    template <class ExecutionSpace>
    double potential_energy( const ExecutionSpace& exec, tissue_type& t, bool brute_force = false )
    {
        if ( !brute_force )
            prepare_list( exec, t );
        detail::EnergyEvaluator<Scalar, MemorySpace> e{ evaluator( t, t.positions(), brute_force ).pairs,
                                                        m_params.intra, m_params.inter,
                                                        m_params.membrane };
        double energy = 0;
        Kokkos::parallel_reduce( "morula::sem::potential_energy",
                                 core::LaunchRange<ExecutionSpace>( exec, 0, t.num_elements() ),
                                 e, energy );
        return energy;
    }

    /*!
      \brief Rebuilds the inter-cell list now (public only because CUDA lambdas cannot live in private
      member functions; prepare() calls it when due).
    */
    template <class ExecutionSpace>
    void build_list( const ExecutionSpace& exec, tissue_type& t )
    {
        const int n = t.num_elements();
        auto x = t.positions();
        const auto box = m_box;
        // Wrap periodic coordinates into the box (the list is rebuilt, so nothing refers to the old
        // images) and find the extent along the open axes for the grid.
        Scalar lo[3], hi[3];
        for ( int d = 0; d < 3; ++d )
        {
            Scalar mn = 0, mx = 0;
            Kokkos::parallel_reduce(
                "morula::sem::wrap_and_extent", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
                KOKKOS_LAMBDA( const int i, Scalar& m ) {
                    const Scalar w = detail::wrap( box, d, x( i, d ) );
                    x( i, d ) = w;
                    m = w < m ? w : m;
                },
                Kokkos::Min<Scalar>( mn ) );
            Kokkos::parallel_reduce(
                "morula::sem::extent", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
                KOKKOS_LAMBDA( const int i, Scalar& m ) { m = x( i, d ) > m ? x( i, d ) : m; },
                Kokkos::Max<Scalar>( mx ) );
            if ( !std::isfinite( static_cast<double>( mn ) ) || !std::isfinite( static_cast<double>( mx ) ) )
                throw core::InputError( core::detail::concat(
                    "SemMechanics: an element position is not finite after step ", m_steps,
                    "; the time step ", m_params.time_step, " is too large for these potentials" ) );
            lo[d] = mn;
            hi[d] = mx;
        }
        const Scalar edge = grid_edge();
        core::Box<Scalar> gbox = m_box;
        bool regrid = !m_grid.has_value();
        for ( int d = 0; d < 3; ++d )
        {
            if ( m_box.is_periodic( d ) )
                continue;
            // Open axes: cover the elements with margin; keep the grid while they stay inside it.
            if ( m_grid && lo[d] >= m_grid->geometry().box.lo[d] && hi[d] < m_grid->geometry().box.hi[d] )
            {
                gbox.lo[d] = m_grid->geometry().box.lo[d];
                gbox.hi[d] = m_grid->geometry().box.hi[d];
                continue;
            }
            const Scalar margin = 4 * edge + Scalar( 0.25 ) * ( hi[d] - lo[d] );
            gbox.lo[d] = lo[d] - margin;
            gbox.hi[d] = hi[d] + margin;
            regrid = true;
        }
        if ( regrid )
            m_grid.emplace( gbox, edge );
        m_grid->build( exec, x, n );
        m_list.build( exec, m_grid->query( x ), m_cutoff, m_skin );
        // Positions at build time, for the displacement bound.
        if ( static_cast<int>( m_reference.extent( 0 ) ) < n )
            m_reference = position_view(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::sem::list_reference" ),
                n + n / 2 + 16 );
        Kokkos::deep_copy( exec, Kokkos::subview( m_reference, std::make_pair( 0, n ), Kokkos::ALL ),
                           Kokkos::subview( x, std::make_pair( 0, n ), Kokkos::ALL ) );
        m_list_valid = true;
        m_metric_pending = false;
        ++m_list_builds;
        m_last_interval = m_steps - m_steps_at_build;
        m_steps_at_build = m_steps;
    }

    /*!
      \brief Writes what decides the continuation under `prefix` ("mechanics/"): the step counters, the
      list's state (valid, bound pending, the last bound, builds, the steps of the last two builds), the
      element grid's box (kept between builds while the elements stay inside it, so it decides later
      grids) and, for a valid list, the positions it was built from. The list itself is not written:
      restart() rebuilds it from those positions through a grid of that box, which gives the same list.
    */
    void checkpoint( io::CheckpointWriter& out, const std::string& prefix ) const
    {
        Scalar metric = 0;
        Kokkos::deep_copy( metric, m_metric );
        out.put_scalar( prefix + "steps", m_steps );
        out.put_scalar( prefix + "steps_at_build", m_steps_at_build );
        out.put_scalar( prefix + "last_build_interval", m_last_interval );
        out.put_scalar( prefix + "list_builds", m_list_builds );
        out.put_scalar( prefix + "list_valid", static_cast<std::uint8_t>( m_list_valid ) );
        out.put_scalar( prefix + "bound_pending", static_cast<std::uint8_t>( m_metric_pending ) );
        out.put_scalar( prefix + "bound", metric );
        out.put_scalar( prefix + "grid", static_cast<std::uint8_t>( m_grid.has_value() ) );
        if ( m_grid )
        {
            const auto& b = m_grid->geometry().box;
            out.put( prefix + "grid_lo", std::vector<Scalar>{ b.lo[0], b.lo[1], b.lo[2] } );
            out.put( prefix + "grid_hi", std::vector<Scalar>{ b.hi[0], b.hi[1], b.hi[2] } );
        }
        if ( m_list_valid )
            out.put_field( prefix + "list_reference", m_reference, m_list.num_particles() );
    }

    /*!
      \brief Restores what checkpoint() wrote for the tissue `t` (already restored): the counters, the
      bound, the grid's box and a valid list rebuilt from its reference positions.
      \throws core::InputError naming the checkpoint file if the list's size differs from the tissue's
    */
    template <class ExecutionSpace>
    void restart( const ExecutionSpace& exec, const io::CheckpointReader& in, const tissue_type& t,
                  const std::string& prefix )
    {
        const bool valid = in.scalar<std::uint8_t>( prefix + "list_valid" ) != 0;
        const bool has_grid = in.scalar<std::uint8_t>( prefix + "grid" ) != 0;
        const Scalar metric = in.scalar<Scalar>( prefix + "bound" );
        const bool pending = in.scalar<std::uint8_t>( prefix + "bound_pending" ) != 0;
        const long long steps = in.scalar<long long>( prefix + "steps" );
        const long long steps_at_build = in.scalar<long long>( prefix + "steps_at_build" );
        const long long last_interval = in.scalar<long long>( prefix + "last_build_interval" );
        const long long builds = in.scalar<long long>( prefix + "list_builds" );
        std::optional<grid::UniformGrid<Scalar, MemorySpace>> grid;
        if ( has_grid )
        {
            const auto lo = in.get<Scalar>( prefix + "grid_lo" );
            const auto hi = in.get<Scalar>( prefix + "grid_hi" );
            if ( lo.size() != 3 || hi.size() != 3 )
                in.fail( "'" + prefix + "grid_lo/grid_hi' must hold 3 values each" );
            core::Box<Scalar> gbox = m_box;
            for ( int d = 0; d < 3; ++d )
            {
                gbox.lo[d] = lo[d];
                gbox.hi[d] = hi[d];
            }
            grid.emplace( gbox, grid_edge() );
        }
        if ( valid && ( !has_grid || in.rows( prefix + "list_reference" ) !=
                                         static_cast<std::size_t>( t.num_elements() ) ) )
            in.fail( core::detail::concat( "'", prefix, "list_reference' does not match the tissue's ",
                                           t.num_elements(), " elements" ) );
        m_grid = std::move( grid );
        m_list_valid = false;
        if ( valid )
        {
            const int n = t.num_elements();
            if ( static_cast<int>( m_reference.extent( 0 ) ) < n )
                m_reference = position_view(
                    Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::sem::list_reference" ),
                    n + n / 2 + 16 );
            in.get_field( prefix + "list_reference", m_reference, n );
            m_grid->build( exec, m_reference, n );
            m_list.build( exec, m_grid->query( m_reference ), m_cutoff, m_skin );
            m_list_valid = true;
        }
        Kokkos::deep_copy( m_metric, metric );
        m_metric_pending = pending;
        m_steps = steps;
        m_steps_at_build = steps_at_build;
        m_last_interval = last_interval;
        m_list_builds = builds;
        exec.fence();
    }

  private:
    // Grid cells no smaller than about one element spacing, so that the grid holds O(elements)
    // cells even though the repulsive range (0.058) is much shorter than the spacing (0.19-0.30).
    Scalar grid_edge() const
    {
        const Scalar radius = m_cutoff + m_skin;
        const Scalar spacing = Scalar( 0.5 * m_params.intra.minimum() );
        return radius > spacing ? radius : spacing;
    }

    detail::VelocityEvaluator<Scalar, MemorySpace> evaluator( const tissue_type& t,
                                                              const position_view& x,
                                                              bool brute_force ) const
    {
        detail::PairVisitor<Scalar, MemorySpace> p;
        p.x = x;
        p.cell = t.element_cell();
        p.type = t.element_type();
        p.offset = t.cell_offset();
        p.count = t.cell_count();
        p.list = m_list.view();
        p.box = m_box;
        p.inter_cutoff2 = m_cutoff * m_cutoff;
        p.num_elements = t.num_elements();
        p.brute_force = brute_force;
        return { p, m_params.intra, m_params.inter, m_params.membrane };
    }

    // Spare position arrays have exactly the tissue's capacity, so that they can be swapped in.
    static void ensure( position_view& v, int capacity, const char* label )
    {
        if ( static_cast<int>( v.extent( 0 ) ) != capacity )
            v = position_view( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ),
                               capacity );
    }

    // Reads the last step's displacement bound (the one host synchronisation of a step) and rebuilds
    // the list when it is due.
    template <class ExecutionSpace>
    void prepare_list( const ExecutionSpace& exec, tissue_type& t )
    {
        bool rebuild = !m_list_valid || m_list.num_particles() != t.num_elements();
        if ( !rebuild && m_metric_pending )
        {
            Scalar metric = 0;
            Kokkos::deep_copy( exec, metric, m_metric );
            exec.fence();
            m_metric_pending = false;
            if ( !std::isfinite( static_cast<double>( metric ) ) )
                throw core::InputError( core::detail::concat(
                    "SemMechanics: an element position became non-finite after step ", m_steps,
                    "; the time step ", m_params.time_step,
                    " is too large for these potentials (see docs/models/epidermis.md)" ) );
            rebuild = !( metric <= m_skin / 2 );
        }
        if ( rebuild )
            build_list( exec, t );
    }

    core::Box<Scalar> m_box;
    SemParameters m_params;
    Scalar m_cutoff = 0;
    Scalar m_skin = 0;
    std::optional<grid::UniformGrid<Scalar, MemorySpace>> m_grid;
    grid::NeighborList<Scalar, MemorySpace> m_list;
    position_view m_reference, m_half, m_next;
    //! Host backends: the intra-cell sums of the stage being evaluated (detail::IntraCellFunctor).
    static constexpr bool intra_by_cell = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
    position_view m_intra_sums;
    Kokkos::View<Scalar*, MemorySpace> m_metrics;
    Kokkos::View<Scalar, MemorySpace> m_metric;
    long long m_steps_at_build = 0;
    long long m_last_interval = 0;
    bool m_list_valid = false;
    bool m_metric_pending = false;
    long long m_list_builds = 0;
    long long m_steps = 0;
};

} // namespace morula::sem

#endif
