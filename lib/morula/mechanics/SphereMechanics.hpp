/*!
  \file SphereMechanics.hpp
  \brief The mechanical interaction operation of BioDynaMo on the sorted uniform grid: collision
  forces between overlapping spheres, the adherence threshold, the bounded displacement, and the
  periodic re-sort of agents in Z-order.
*/
#ifndef MORULA_MECHANICS_SPHEREMECHANICS_HPP
#define MORULA_MECHANICS_SPHEREMECHANICS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/grid/NeighborReduction.hpp>
#include <morula/grid/NeighborSweep.hpp>
#include <morula/grid/UniformGrid.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereForce.hpp>
#include <morula/mechanics/detail/MechanicsKernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

namespace morula::mechanics
{

//! Parameters of the mechanical interaction operation (BioDynaMo's defaults).
template <class Scalar>
struct MechanicsParameters
{
    ForceParameters<Scalar> force;
    Scalar time_step = Scalar( 0.01 );  //!< BioDynaMo's simulation_time_step
    Scalar max_displacement = Scalar( 3 ); //!< bound on one step's displacement (0 locks agents)
    //! Re-sort the agents by cell every this many grid updates (0: never; the grid is then read
    //! through its permutation).
    int sort_every = 1;
    //! Cell order of the grid and therefore of the sorted agents. The default is a Z-order of whole rows of
    //! cells (grid::CellOrdering::morton_rows): the paper's space-filling-curve sort (Hesam et al. 2021) kept
    //! for the rows, whose cells stay contiguous so that the force kernel walks nine runs instead of 27
    //! cells. It is faster than Z-order of single cells (morton) on GPUs and CPU cores, and about as fast as
    //! row-major (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): fourth pass").
    grid::CellOrdering ordering = grid::CellOrdering::morton_rows;
    //! Agents of one grid cell per thread of the force kernel: 0 picks it (one: the force kernel batches
    //! its pairs, where more per thread is slower), 1 to 4 forces it (grid::NeighborReduction)
    //! (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): third pass").
    //! Every choice gives the same forces.
    int particles_per_thread = 0;

    //! Throws core::InputError naming the first parameter out of range.
    void validate( const std::string& where ) const
    {
        auto require = [&]( bool ok, const char* name, Scalar v, const char* expected ) {
            if ( !ok )
                throw core::InputError( core::detail::concat( where, ": ", name, " = ", v,
                                                              " (expected ", expected, ")" ) );
        };
        auto finite = []( Scalar v ) { return std::isfinite( static_cast<double>( v ) ); };
        require( finite( time_step ) && time_step > 0, "time_step", time_step, "a finite value > 0" );
        require( finite( max_displacement ) && max_displacement >= 0, "max_displacement",
                 max_displacement, "a finite value >= 0" );
        require( finite( force.repulsion ) && force.repulsion >= 0, "repulsion", force.repulsion,
                 "a finite value >= 0" );
        require( finite( force.attraction ) && force.attraction >= 0, "attraction",
                 force.attraction, "a finite value >= 0" );
        require( finite( force.radius_extension ) && force.radius_extension >= 0,
                 "radius_extension", force.radius_extension, "a finite value >= 0" );
        if ( particles_per_thread < 0 || particles_per_thread > 4 )
            throw core::InputError( core::detail::concat( where, ": particles_per_thread = ", particles_per_thread,
                                                          " (expected 0 for automatic, or 1 to 4)" ) );
        if ( sort_every < 0 )
            throw core::InputError( core::detail::concat( where, ": sort_every = ", sort_every,
                                                          " (expected 0 for never, or k >= 1)" ) );
    }
};

/*!
  \brief What SphereMechanics carries from one step to the next, for checkpoints: the number of grid
  updates (which decides when the agents are sorted) and the grid's box and cell size. Both only grow
  along open axes, with slack, so they depend on the run's history; the cell order, and with it the
  order of the sorted agents and of the force sums, depends on them.
*/
template <class Scalar>
struct SphereMechanicsState
{
    long long grid_builds = 0;
    bool has_grid = false;       //!< false before the first grid update
    core::Box<Scalar> grid_box;  //!< the grid's box (when has_grid; its boundaries are those of the model's box)
    Scalar grid_cutoff = 0;      //!< the cell size it guarantees (when has_grid)
};

/*!
  \brief Mechanical interaction of spherical agents through the sorted uniform grid.

  Each step: update_grid() bins the agents (cells at least as wide as the largest interaction distance,
  the largest diameter plus twice the radius extension, so every overlapping pair is found) and, every
  sort_every updates, permutes all agent fields into the grid's cell order; compute_displacements()
  sums the forces of equation (1) over every overlapping neighbour and turns them into the step's
  displacement as BioDynaMo does (a cell moves only if the force exceeds its adherence; the move is
  force x time_step / mass, bounded by max_displacement); apply_displacements() moves the agents.
  All forces of a step are computed from the same positions (a Jacobi update), so results do not
  depend on the order of the agents in memory.

  Open axes of the box follow the agents: the grid's box is their bounding box, widened when they
  leave it. Periodic axes wrap positions; closed axes are walls, on which a displacement stops.
*/
template <class Scalar, class MemorySpace>
class SphereMechanics
{
  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using agents_type = SphereAgents<Scalar, MemorySpace>;
    using grid_type = grid::UniformGrid<Scalar, MemorySpace>;
    using vector_view = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace>;

    SphereMechanics( const core::Box<Scalar>& box, const MechanicsParameters<Scalar>& params )
        : m_box( box )
        , m_params( params )
    {
        box.validate( "SphereMechanics" );
        params.validate( "SphereMechanics" );
        m_reduction.set_particles_per_thread( params.particles_per_thread );
        // The force per pair is the heavy part of the kernel: batched pairs let a warp's lanes compute it
        // together (grid::PairBatching).
        m_reduction.set_pair_batching( grid::PairBatching::batched );
    }

    const MechanicsParameters<Scalar>& parameters() const { return m_params; }
    const core::Box<Scalar>& box() const { return m_box; }
    const grid_type& grid() const { return *m_grid; }

    /*!
      \brief Builds the grid over the agents and, every sort_every calls, sorts them into cell order
      (build_grid() then, when due, sort_agents()).
      \return whether the agents were permuted (views fetched before are then stale).
    */
    template <class ExecutionSpace>
    bool update_grid( const ExecutionSpace& exec, agents_type& agents )
    {
        const bool due = sort_due();
        build_grid( exec, agents );
        if ( due )
            sort_agents( exec, agents );
        return due;
    }

    //! Whether the next update_grid() sorts the agents (the first one does, then every sort_every-th).
    bool sort_due() const
    {
        return m_params.sort_every > 0 && m_builds % m_params.sort_every == 0;
    }

    //! Bins the agents in the grid (cells wide enough for the largest interaction distance).
    template <class ExecutionSpace>
    void build_grid( const ExecutionSpace& exec, const agents_type& agents )
    {
        build_grid( exec, agents, agents.size() );
    }

    /*!
      \brief Bins the first n agents only (a distributed run's owned agents, ahead of its ghosts): the
      cells fit their largest interaction distance, and compute_owned_displacements( exec, agents, n )
      then sums the forces among them.
    */
    template <class ExecutionSpace>
    void build_grid( const ExecutionSpace& exec, const agents_type& agents, std::size_t num_binned )
    {
        if ( num_binned > agents.size() )
            throw core::InputError( core::detail::concat( "SphereMechanics::build_grid: ", num_binned,
                                                          " agents to bin, but there are ", agents.size() ) );
        const int n = static_cast<int>( num_binned );
        build_grid( exec, agents, num_binned,
                    detail::agent_extent( exec, agents.positions(), agents.diameters(), agents.densities(), n,
                                          m_box ) );
    }

    /*!
      \brief build_grid( exec, agents, num_binned ) with the first num_binned agents' extent known:
      detail::agent_extent() over them and box(), computed by the caller for a check of its own (one
      reduction, and its host round trip, instead of two).
    */
    template <class ExecutionSpace>
    void build_grid( const ExecutionSpace& exec, const agents_type& agents, std::size_t num_binned,
                     const detail::AgentExtent<Scalar>& extent )
    {
        compat::ScopedRegion region( "morula::mechanics::SphereMechanics::build_grid" );
        if ( num_binned > agents.size() )
            throw core::InputError( core::detail::concat( "SphereMechanics::build_grid: ", num_binned,
                                                          " agents to bin, but there are ", agents.size() ) );
        const int n = static_cast<int>( num_binned );
        const Scalar cutoff = extent.max_diameter + 2 * m_params.force.radius_extension;
        ensure_grid( extent, cutoff > 0 ? cutoff : Scalar( 1 ) );
        m_grid->build( exec, agents.positions(), n );
        ++m_builds;
    }

    /*!
      \brief sort_agents() for the agents binned by the last build_grid( exec, agents, n ): the first n
      go into cell order, the agents behind them (a distributed run's ghosts) keep their rows.
    */
    template <class ExecutionSpace>
    void sort_binned_agents( const ExecutionSpace& exec, agents_type& agents )
    {
        compat::ScopedRegion region( "morula::mechanics::SphereMechanics::sort_binned_agents" );
        m_grid->permute_leading( exec, agents );
    }

    //! Permutes every agent field into the order of the last build_grid() (Z-order by default).
    template <class ExecutionSpace>
    void sort_agents( const ExecutionSpace& exec, agents_type& agents )
    {
        compat::ScopedRegion region( "morula::mechanics::SphereMechanics::sort_agents" );
        m_grid->permute( exec, agents );
    }

    /*!
      \brief Forces and displacements of all agents from the current positions (call update_grid()
      first, after any change of positions or diameters).
      \return the number of interacting pairs (each counted once per side) if count_interactions.
    */
    template <class ExecutionSpace>
    long long compute_displacements( const ExecutionSpace& exec, const agents_type& agents,
                                     bool count_interactions = false )
    {
        return compute_owned_displacements( exec, agents, agents.size(), count_interactions );
    }

    /*!
      \brief Like compute_displacements(), for the first n_owned agents only, from the agents the grid
      holds: all of them (the ghosts of a distributed run behind the owned agents then act on the owned
      ones but get no force or displacement), or the first n_owned (build_grid( exec, agents, n_owned ):
      forces among those alone). Rows [0, n_owned) of forces() and displacements() are written.
    */
    template <class ExecutionSpace>
    long long compute_owned_displacements( const ExecutionSpace& exec, const agents_type& agents,
                                           std::size_t n_owned, bool count_interactions = false )
    {
        compat::ScopedRegion region( "morula::mechanics::SphereMechanics::compute_displacements" );
        const int n = static_cast<int>( agents.size() );
        const std::size_t binned = m_grid ? static_cast<std::size_t>( m_grid->num_particles() ) : 0;
        if ( !m_grid || binned > agents.size() || binned < std::min( n_owned, agents.size() ) )
            throw core::InputError( core::detail::concat(
                "SphereMechanics::compute_displacements: the grid holds ", binned, " agents but there are ", n,
                n_owned < agents.size() ? core::detail::concat( " (", n_owned, " owned)" ) : std::string(),
                "; call update_grid() after adding or removing agents" ) );
        if ( n_owned > agents.size() )
            throw core::InputError( core::detail::concat(
                "SphereMechanics::compute_owned_displacements: n_owned = ", n_owned, " exceeds the ",
                n, " agents" ) );
        const int n_targets = static_cast<int>( n_owned );
        detail::ensure_rows( m_force, n_targets, "morula::mechanics::force" );
        detail::ensure_rows( m_displacement, n_targets, "morula::mechanics::displacement" );
        if ( count_interactions )
            detail::ensure_rows( m_overlaps, n_targets, "morula::mechanics::overlaps" );
        return detail::compute_displacements( exec, m_grid->query( agents.positions() ), m_reduction, agents,
                                              m_params, m_force, m_displacement, m_overlaps,
                                              count_interactions, n_targets );
    }

    //! Adds the displacements to the positions (wrapping periodic axes, stopping at closed walls).
    template <class ExecutionSpace>
    void apply_displacements( const ExecutionSpace& exec, const agents_type& agents ) const
    {
        detail::apply_displacements( exec, agents.positions(), m_displacement,
                                     static_cast<int>( agents.size() ), m_box );
    }

    //! The state a restart needs (see SphereMechanicsState).
    SphereMechanicsState<Scalar> state() const
    {
        SphereMechanicsState<Scalar> st;
        st.grid_builds = m_builds;
        st.has_grid = m_grid != nullptr;
        if ( m_grid )
        {
            st.grid_box = m_grid->geometry().box;
            st.grid_cutoff = m_grid->geometry().cutoff;
        }
        return st;
    }

    /*!
      \brief Continues from `st` (of a SphereMechanics with the same parameters): the next update_grid()
      sorts when the saved run's would, over a grid of the same cells. The grid is empty until then.
      \throws core::InputError if the grid's box or cell size is invalid
    */
    void restore( const SphereMechanicsState<Scalar>& st )
    {
        if ( st.grid_builds < 0 )
            throw core::InputError( core::detail::concat( "SphereMechanics::restore: grid_builds = ", st.grid_builds,
                                                          " (expected >= 0)" ) );
        std::unique_ptr<grid_type> grid;
        if ( st.has_grid )
        {
            grid::GridOptions options;
            options.ordering = m_params.ordering;
            core::Box<Scalar> box = st.grid_box;
            box.boundary = m_box.boundary; // as ensure_grid() makes them
            grid = std::make_unique<grid_type>( box, st.grid_cutoff, options );
        }
        m_grid = std::move( grid );
        m_builds = st.grid_builds;
    }

    //! Net collision force on every agent of the last compute_displacements() (first size() rows).
    const vector_view& forces() const { return m_force; }
    //! Displacement of every agent of the last compute_displacements() (first size() rows).
    const vector_view& displacements() const { return m_displacement; }

    //! The agents of one cell the force kernel gives each thread, for the grid of the last update.
    template <class ExecutionSpace>
    int particles_per_thread( const ExecutionSpace& exec, const agents_type& agents ) const
    {
        return m_grid ? m_reduction.resolved_particles_per_thread( exec, m_grid->query( agents.positions() ) ) : 0;
    }

  private:
    // A new grid only when the cells must widen (larger agents) or an open axis must grow, with
    // slack so that growing agents do not rebuild the grid's arrays every step.
    void ensure_grid( const detail::AgentExtent<Scalar>& extent, Scalar cutoff )
    {
        core::Box<Scalar> box = m_grid ? m_grid->geometry().box : m_box;
        bool rebuild = !m_grid || cutoff > m_grid->geometry().cutoff;
        for ( int d = 0; d < 3; ++d )
        {
            if ( m_box.boundary[d] != core::Boundary::open || !( extent.hi[d] >= extent.lo[d] ) )
                continue;
            const bool outside = extent.lo[d] < box.lo[d] || extent.hi[d] >= box.hi[d];
            if ( !m_grid || outside )
            {
                const Scalar lo = extent.lo[d] < m_box.lo[d] ? extent.lo[d] : m_box.lo[d];
                const Scalar hi = extent.hi[d] > m_box.hi[d] ? extent.hi[d] : m_box.hi[d];
                const Scalar slack = Scalar( 0.125 ) * ( hi - lo ) + cutoff;
                box.lo[d] = lo - slack;
                box.hi[d] = hi + slack;
                rebuild = true;
            }
        }
        if ( rebuild )
        {
            grid::GridOptions options;
            options.ordering = m_params.ordering;
            const Scalar grid_cutoff = m_grid ? Scalar( 1.125 ) * cutoff : cutoff;
            m_grid = std::make_unique<grid_type>( box, grid_cutoff, options );
        }
    }

    core::Box<Scalar> m_box;
    MechanicsParameters<Scalar> m_params;
    std::unique_ptr<grid_type> m_grid;
    grid::NeighborReduction<MemorySpace> m_reduction; // the force kernel's launch and its group arrays
    vector_view m_force;
    vector_view m_displacement;
    Kokkos::View<int*, MemorySpace> m_overlaps; // per-agent interaction counts, when counted
    long long m_builds = 0;
};

} // namespace morula::mechanics

#endif
