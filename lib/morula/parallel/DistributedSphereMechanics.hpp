/*!
  \file DistributedSphereMechanics.hpp
  \brief SphereMechanics over MPI: each rank moves the agents of its subdomain, with the agents within
  the interaction distance on the neighbouring ranks as ghosts (Halo), and hands agents that leave its
  subdomain to their new owner (migrate).
*/
#ifndef MORULA_PARALLEL_DISTRIBUTEDSPHEREMECHANICS_HPP
#define MORULA_PARALLEL_DISTRIBUTEDSPHEREMECHANICS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereMechanics.hpp>
#include <morula/mechanics/detail/MechanicsKernels.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/parallel/Halo.hpp>
#include <morula/parallel/Migration.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <chrono>
#include <limits>
#include <optional>
#include <string>

namespace morula::parallel
{

/*!
  \brief Seconds per phase of DistributedSphereMechanics::step(), summed over the timed steps, and
  what the communication phases moved (filled only when steps are timed).

  Each phase is fenced and timed on this rank alone (no barrier): a phase that waits for a message
  includes the wait for the slower ranks.
*/
struct DistributedStepTimes
{
    double migration = 0;   //!< migrate(): owners, sort by destination, counts, fields
    double sort = 0;        //!< cell-order sort of the owned agents (every sort_every rebuilds)
    double halo_build = 0;  //!< halo-width check (MPI_Allreduce) and new Halo: plan, counts, all fields
    double halo_update = 0; //!< Halo::update() of the ghost positions between rebuilds
    double grid = 0;        //!< local grid of owned agents and ghosts
    double forces = 0;      //!< forces and displacements of the owned agents
    double move = 0;        //!< moving the owned agents
    long long steps = 0;
    long long rebuilds = 0;
    long long updates = 0;
    long long migrated_sent = 0;      //!< agents this rank sent in migrate()
    long long migrated_received = 0;  //!< agents this rank received in migrate()
    long long halo_build_rows = 0;    //!< rows sent by Halo construction (all fields each)
    long long halo_update_rows = 0;   //!< rows sent by Halo::update() (positions only)
    long long ghosts = 0;             //!< ghosts received, summed over the timed steps

    //! Halo exchange and migration.
    double communication() const { return migration + halo_build + halo_update; }
    //! Grid, sort, forces and move.
    double compute() const { return sort + grid + forces + move; }
    double total() const { return communication() + compute(); }
};

/*!
  \brief One SphereMechanics step per call on the agents of this rank's subdomain.

  The SphereAgents passed to step() hold this rank's owned agents first (num_owned() of them), then
  the ghosts of the last halo (the agents of the neighbouring ranks within the halo width, periodic
  images shifted). Each step:
  1. every rebuild_every steps (and on the first): migrate() hands every owned agent that left the
     subdomain to its owner, with all fields of the SoA (periodic axes are wrapped there), drops the
     ghosts, sorts the owned agents in cell order every parameters().sort_every rebuilds, checks that
     the halo is wide enough (collectively) and builds a new Halo; in between, Halo::update() refreshes
     the ghost positions only (the mechanics change no other field);
  2. the grid of an internal SphereMechanics bins owned agents and ghosts;
  3. forces and displacements of the owned agents only (SphereMechanics::compute_owned_displacements,
     the single-rank kernel), from the neighbours among owned agents and ghosts;
  4. the owned agents move; closed walls stop them as in the single-rank model, but periodic axes are
     not wrapped here: a ghost of the steps before the next rebuild is the owner's position plus the
     shift of the direction it was exported to, which is only right for unwrapped positions.
     migrate() wraps them.

  Ghosts are never sorted into the owned agents: the internal SphereMechanics bins through the grid's
  permutation, and only the owned agents are permuted, before the halo is built.

  The halo width of the decomposition must cover the largest interaction distance (the largest
  diameter plus twice the radius extension, over all ranks) plus, with rebuild_every = k > 1, twice
  the drift of k - 1 steps (2 (k - 1) max_displacement: owner and neighbour may both drift towards
  each other). Every rebuild checks this on every rank alike and throws core::InputError.

  Results equal the single-rank SphereMechanics up to round-off: the forces of a step come from the
  same positions (Jacobi update) and from the same set of neighbours, but summed in another order (the
  local grids differ) and with periodic images formed as x + L instead of the minimum image.
*/
template <class Scalar, class MemorySpace>
class DistributedSphereMechanics
{
  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using agents_type = mechanics::SphereAgents<Scalar, MemorySpace>;
    using mechanics_type = mechanics::SphereMechanics<Scalar, MemorySpace>;
    using halo_type = Halo<MemorySpace, Scalar>;

    /*!
      \param decomposition the ranks' subdomains; its halo width bounds the interaction distance
      \param params the single-rank parameters; sort_every counts rebuilds here (0: never sort)
      \param rebuild_every migrate and rebuild the halo every this many steps (>= 1)
    */
    DistributedSphereMechanics( const CartesianDecomposition<Scalar>& decomposition,
                                const mechanics::MechanicsParameters<Scalar>& params,
                                int rebuild_every = 1 )
        : m_decomposition( decomposition )
        , m_local( local_box( decomposition ), validated( params, rebuild_every ) )
        , m_rebuild_every( rebuild_every )
        , m_move_box( move_box( decomposition.box() ) )
    {
    }

    const CartesianDecomposition<Scalar>& decomposition() const { return m_decomposition; }
    const mechanics::MechanicsParameters<Scalar>& parameters() const { return m_local.parameters(); }
    int rebuild_every() const { return m_rebuild_every; }
    //! Owned agents: entries [0, num_owned()) of the agents; ghosts follow.
    std::size_t num_owned() const { return m_n_owned; }
    //! The halo of the last rebuild (call step() or rebuild() first).
    const halo_type& halo() const { return *m_halo; }
    //! The rank-local model: forces() and displacements() of the last step, rows [0, num_owned()).
    const mechanics_type& local_mechanics() const { return m_local; }
    //! Interaction distance found by the last rebuild (largest diameter + 2 radius extensions).
    Scalar interaction_distance() const { return m_interaction_distance; }

    /*!
      \brief Migrates the owned agents to their owners (all fields, periodic axes wrapped), sorts them
      when due and builds the halo. Collective. Before the first step() or rebuild(), all entries of
      `agents` are this rank's (anywhere in the box: migrate() sends each to its owner); afterwards
      the first num_owned() are. step() calls it when due; call it after the last step to get every
      agent wrapped, on its owner.
    */
    template <class ExecutionSpace>
    void rebuild( const ExecutionSpace& exec, agents_type& agents )
    {
        rebuild( exec, agents, false );
    }

    /*!
      \brief Declares that `agents` now holds only owned agents, all of them this rank's (no ghosts):
      e.g. after growth and division appended daughters to the owned agents. The next step() migrates
      and rebuilds the halo whatever rebuild_every says.
    */
    void owned_agents_changed() { m_halo.reset(); }

    //! One mechanics step of the owned agents (collective: migration and halo exchange).
    //! With time_phases, each phase is fenced and timed into times() (leave it off in production).
    template <class ExecutionSpace>
    void step( const ExecutionSpace& exec, agents_type& agents, bool time_phases = false )
    {
        compat::ScopedRegion region( "morula::parallel::DistributedSphereMechanics::step" );
        if ( !m_halo || m_since_rebuild >= m_rebuild_every )
            rebuild( exec, agents, time_phases );
        else
        {
            timed( exec, time_phases, m_times.halo_update, [&] { m_halo->update( exec, agents ); } );
            if ( time_phases )
            {
                ++m_times.updates;
                m_times.halo_update_rows += static_cast<long long>( m_halo->num_exports() );
            }
        }
        ++m_since_rebuild;
        timed( exec, time_phases, m_times.grid, [&] { m_local.build_grid( exec, agents ); } );
        timed( exec, time_phases, m_times.forces,
               [&] { m_local.compute_owned_displacements( exec, agents, m_n_owned ); } );
        timed( exec, time_phases, m_times.move, [&] {
            mechanics::detail::apply_displacements( exec, agents.positions(), m_local.displacements(),
                                                    static_cast<int>( m_n_owned ), m_move_box );
        } );
        if ( time_phases )
        {
            ++m_times.steps;
            m_times.ghosts += static_cast<long long>( m_halo->num_ghosts() );
        }
    }

    //! Phase times of the timed steps since construction or reset_times().
    const DistributedStepTimes& times() const { return m_times; }
    void reset_times() { m_times = {}; }

  private:
    template <class ExecutionSpace>
    void rebuild( const ExecutionSpace& exec, agents_type& agents, bool time_phases )
    {
        compat::ScopedRegion region( "morula::parallel::DistributedSphereMechanics::rebuild" );
        const std::size_t n = m_halo ? m_n_owned : agents.size();
        m_halo.reset();
        timed( exec, time_phases, m_times.migration, [&] {
            const MigrationResult moved = migrate( exec, m_decomposition, agents, n, m_migration_workspace );
            m_n_owned = moved.num_owned;
            if ( time_phases )
            {
                m_times.migrated_sent += static_cast<long long>( moved.num_sent );
                m_times.migrated_received += static_cast<long long>( moved.num_received );
            }
        } );
        // Before the sort: a bad diameter or density must throw on every rank alike.
        timed( exec, time_phases, m_times.halo_build, [&] { check_halo_width( exec, agents ); } );
        const int sort_every = m_local.parameters().sort_every;
        if ( sort_every > 0 && m_rebuilds % sort_every == 0 )
        {
            // The agents hold exactly the owned ones here: a grid over them alone gives their order.
            timed( exec, time_phases, m_times.sort, [&] {
                m_local.build_grid( exec, agents );
                m_local.sort_agents( exec, agents );
            } );
        }
        ++m_rebuilds;
        timed( exec, time_phases, m_times.halo_build, [&] {
            m_halo.emplace( exec, m_decomposition, agents, m_n_owned, m_migration_workspace.buffers );
        } );
        // Halo and migration take turns with one set of message buffers: keep what the halo grew (its
        // updates move positions only, sent at construction too, so they do not grow it further).
        m_migration_workspace.buffers = m_halo->buffers();
        if ( time_phases )
        {
            ++m_times.rebuilds;
            m_times.halo_build_rows += static_cast<long long>( m_halo->num_exports() );
        }
        m_since_rebuild = 0;
    }

    // Runs op, fenced and timed into `slot` when `on` (host-side lambdas only: no kernels here).
    template <class ExecutionSpace, class Op>
    static void timed( const ExecutionSpace& exec, bool on, double& slot, Op&& op )
    {
        if ( !on )
        {
            op();
            return;
        }
        exec.fence();
        const auto t0 = std::chrono::steady_clock::now();
        op();
        exec.fence();
        slot += std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    }

    // Before the local SphereMechanics validates them, so that errors name this class.
    static const mechanics::MechanicsParameters<Scalar>&
    validated( const mechanics::MechanicsParameters<Scalar>& params, int rebuild_every )
    {
        params.validate( "DistributedSphereMechanics" );
        if ( rebuild_every < 1 )
            throw core::InputError( core::detail::concat(
                "DistributedSphereMechanics: rebuild_every = ", rebuild_every, " (expected >= 1)" ) );
        return params;
    }

    // Collective: the largest interaction distance over all ranks, against the halo width.
    template <class ExecutionSpace>
    void check_halo_width( const ExecutionSpace& exec, const agents_type& agents )
    {
        // A bad diameter or density throws on its rank only; reduce first so that every rank throws.
        const double inf = std::numeric_limits<double>::infinity();
        // No open axis: only the largest diameter is wanted, not the positions' range.
        core::Box<Scalar> closed = m_decomposition.box();
        for ( int a = 0; a < 3; ++a )
            closed.boundary[a] = core::Boundary::closed;
        double local = 0;
        std::string error;
        try
        {
            local = static_cast<double>(
                mechanics::detail::agent_extent( exec, agents.positions(), agents.diameters(),
                                                 agents.densities(),
                                                 static_cast<int>( m_n_owned ), closed )
                    .max_diameter );
        }
        catch ( const core::InputError& e )
        {
            local = inf;
            error = e.what();
        }
        double global = 0;
        MPI_Allreduce( &local, &global, 1, MPI_DOUBLE, MPI_MAX, m_decomposition.comm() );
        if ( !error.empty() )
            throw core::InputError( core::detail::concat( "DistributedSphereMechanics (rank ",
                                                          m_decomposition.rank(), "): ", error ) );
        if ( !( global < inf ) )
            throw core::InputError( "DistributedSphereMechanics: another rank holds an agent with an "
                                    "invalid diameter or density" );
        const auto& p = m_local.parameters();
        m_interaction_distance = static_cast<Scalar>( global ) + 2 * p.force.radius_extension;
        const Scalar drift = 2 * Scalar( m_rebuild_every - 1 ) * p.max_displacement;
        if ( m_interaction_distance + drift > m_decomposition.halo_width() )
            throw core::InputError( core::detail::concat(
                "DistributedSphereMechanics: the halo width ", m_decomposition.halo_width(),
                " is less than the interaction distance ", m_interaction_distance,
                " (largest diameter ", global, " + 2 x radius_extension ", p.force.radius_extension,
                ") + 2 x (rebuild_every - 1) x max_displacement = ", drift ) );
    }

    // The subdomain grown by the halo width, every axis open: the ghosts stand for the periodic
    // images and the walls, so the local grid needs neither (and follows agents that drift out).
    static core::Box<Scalar> local_box( const CartesianDecomposition<Scalar>& dec )
    {
        core::Box<Scalar> box = dec.box();
        for ( int a = 0; a < 3; ++a )
        {
            box.lo[a] = dec.lo()[a] - dec.halo_width();
            box.hi[a] = dec.hi()[a] + dec.halo_width();
            box.boundary[a] = core::Boundary::open;
        }
        return box;
    }

    // The box for moving owned agents: closed walls stay, periodic axes are left unwrapped (see the
    // class comment).
    static core::Box<Scalar> move_box( core::Box<Scalar> box )
    {
        for ( int a = 0; a < 3; ++a )
            if ( box.boundary[a] == core::Boundary::periodic )
                box.boundary[a] = core::Boundary::open;
        return box;
    }

    CartesianDecomposition<Scalar> m_decomposition;
    mechanics_type m_local;
    int m_rebuild_every = 1;
    core::Box<Scalar> m_move_box;
    std::optional<halo_type> m_halo;
    // Kept across rebuilds: migrations of no more agents than an earlier one allocate nothing, and its
    // message buffers are shared with each new halo.
    MigrationWorkspace<MemorySpace> m_migration_workspace;
    std::size_t m_n_owned = 0;
    int m_since_rebuild = 0;
    long long m_rebuilds = 0;
    Scalar m_interaction_distance = 0;
    DistributedStepTimes m_times;
};

} // namespace morula::parallel

#endif
