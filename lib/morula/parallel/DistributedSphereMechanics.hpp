/*!
  \file DistributedSphereMechanics.hpp
  \brief SphereMechanics over MPI: each rank moves the agents of its subdomain, with the agents within
  the interaction distance on the neighbouring ranks as ghosts (Halo), and hands agents that leave its
  subdomain to their new owner (migrate).
*/
#ifndef MORULA_PARALLEL_DISTRIBUTEDSPHEREMECHANICS_HPP
#define MORULA_PARALLEL_DISTRIBUTEDSPHEREMECHANICS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/grid/UniformGrid.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereMechanics.hpp>
#include <morula/mechanics/detail/MechanicsKernels.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/parallel/DistributedMechanicsOptions.hpp>
#include <morula/parallel/Halo.hpp>
#include <morula/parallel/Migration.hpp>
#include <morula/parallel/detail/LocalBoxes.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <any>
#include <memory>
#include <typeinfo>
#include <limits>
#include <optional>
#include <string>

namespace morula::parallel
{

/*!
  \brief What DistributedSphereMechanics carries from one step to the next on a rank, for checkpoints:
  its local SphereMechanics' grid (whose cells decide the order of the sorted agents and of the force
  sums) and the sort's and migration's progress. The halo and the ghosts' grid are rebuilt from these.
*/
template <class Scalar>
struct DistributedMechanicsState
{
    mechanics::SphereMechanicsState<Scalar> local;
    int steps_since_sort = 0;
    bool sorted_once = false;
    bool migrated_once = false;
};

/*!
  \brief One SphereMechanics step per call on the agents of this rank's subdomain.

  The SphereAgents passed to step() hold this rank's owned agents first (num_owned() of them), then
  the ghosts of the last halo (the agents of the neighbouring ranks within the halo width, periodic
  images shifted). Each step:
  1. every rebuild_every steps (and on the first): migrate() hands every owned agent that left the
     subdomain to its owner, with all fields of the SoA (periodic axes are wrapped there), drops the
     ghosts and checks (collectively) that the halo is wide enough. When due (every
     parameters().sort_every steps), the owned agents are sorted in cell order: at a rebuild before the
     halo is built, between rebuilds ahead of the ghosts, whose rows stay, with the halo's lists
     renumbered (Halo::renumber_owned);
  2. the ghost exchange starts, on an execution space instance of its own (a second, high-priority
     stream on a GPU): at a rebuild a new halo (export lists, counts, every field), in between
     Halo::update() of the ghost positions only (the mechanics change no other field);
  3. while its messages travel, on `exec`: the grid of the owned agents (unless the sort left it
     current) and their forces among themselves (SphereMechanics::compute_owned_displacements, the
     single-rank kernel), final for every agent farther than the halo width from the faces towards
     neighbours. With OverlapOrder::forces_first, 3 is launched before 2 (at a rebuild, after the
     halo's export lists are found), so that the host's part of the exchange, and at a rebuild its
     wait for the neighbours' counts, hides under the forces;
  4. the ghosts arrive; after the forces, a grid of their own bins them, and one kernel adds their
     forces to the owned agents near those faces (the halo's boundary_particles()) and recomputes
     their displacements;
  5. the owned agents move; closed walls stop them as in the single-rank model, but periodic axes
     with several ranks are not wrapped here: a ghost of the steps before the next rebuild is the
     owner's position plus the shift of the direction it was exported to, which is only right for
     unwrapped positions. migrate() wraps them.

  Periodic axes with one rank along them (PeriodicImages::minimum_image, the default): the local grid
  spans the whole axis and wraps it by the minimum image, the agents wrap when they move, and no ghost
  crosses that axis. With one rank in a periodic box the step is then the single-rank step (no ghosts,
  no messages, no migration after the first) plus the collective halo-width check.

  Ghosts are never sorted into the owned agents: only the owned agents are permuted, before the halo is
  built, and the ghosts' grid reads them through its permutation.

  The halo width of the decomposition must cover the largest interaction distance (the largest
  diameter plus twice the radius extension, over all ranks) plus, with rebuild_every = k > 1, twice
  the drift of k - 1 steps (2 (k - 1) max_displacement: owner and neighbour may both drift towards
  each other). Every rebuild checks this on every rank alike and throws core::InputError.

  Results equal the single-rank SphereMechanics up to round-off: the forces of a step come from the
  same positions (Jacobi update) and from the same set of neighbours, but summed in another order (the
  local grids differ; owned neighbours before ghosts) and with periodic images formed as x + L instead
  of the minimum image. One rank in a periodic box is the single-rank step bit for bit.
*/
template <class Scalar, class MemorySpace>
class DistributedSphereMechanics
{
  public:
    using Phase = DistributedMechanicsPhase;
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using agents_type = mechanics::SphereAgents<Scalar, MemorySpace>;
    using mechanics_type = mechanics::SphereMechanics<Scalar, MemorySpace>;
    using halo_type = Halo<MemorySpace, Scalar>;
    using grid_type = grid::UniformGrid<Scalar, MemorySpace>;

    /*!
      \param decomposition the ranks' subdomains; its halo width bounds the interaction distance
      \param params the single-rank parameters; sort_every counts steps, as on one rank (0: never sort)
      \param rebuild_every migrate and rebuild the halo every this many steps (>= 1)
      \param images how a rank reaches its own periodic images across an axis with one rank: by the
             minimum image of its local grid (default: no ghosts, no messages for them; one rank in a
             periodic box then runs the single-rank step) or as ghosts (the general path, kept for
             comparison and tests)
      \param order whether a step starts the ghost exchange or the owned forces first (automatic: see
             OverlapOrder); results are the same either way
    */
    DistributedSphereMechanics( const CartesianDecomposition<Scalar>& decomposition,
                                const mechanics::MechanicsParameters<Scalar>& params,
                                int rebuild_every = 1,
                                PeriodicImages images = PeriodicImages::minimum_image,
                                OverlapOrder order = OverlapOrder::automatic )
        : m_decomposition( decomposition )
        , m_images( images )
        , m_order( order )
        , m_local( detail::local_box( decomposition, images ), validated( params, rebuild_every ) )
        , m_rebuild_every( rebuild_every )
        , m_move_box( detail::move_box( decomposition, images ) )
    {
    }

    const CartesianDecomposition<Scalar>& decomposition() const { return m_decomposition; }
    const mechanics::MechanicsParameters<Scalar>& parameters() const { return m_local.parameters(); }
    int rebuild_every() const { return m_rebuild_every; }
    //! Steps since the last rebuild (rebuild_every() when the next step rebuilds).
    int steps_since_rebuild() const { return m_since_rebuild; }
    PeriodicImages periodic_images() const { return m_images; }
    /*!
      \brief The order of a step (automatic resolved: collective on the first call, which the first
      step makes).
    */
    OverlapOrder overlap_order() const
    {
        if ( m_order != OverlapOrder::automatic )
            return m_order;
        return m_decomposition.transport_context().template transport<MemorySpace>() == Transport::nccl
                   ? OverlapOrder::forces_first
                   : OverlapOrder::exchange_first;
    }
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
        core::StepPhases<core::detail::NoSync> untimed( m_times, false, core::detail::NoSync{} );
        prepare_owned_agents( exec, agents, untimed );
        start_halo_build( exec, agents, [] {} );
        m_halo->finish_build( exec, agents );
    }

    /*!
      \brief Declares that `agents` now holds only owned agents, all of them this rank's (no ghosts):
      e.g. after growth and division appended daughters to the owned agents. The next step() migrates
      and rebuilds the halo whatever rebuild_every says.
    */
    void owned_agents_changed() { m_halo_current = false; }

    //! Whether steps count the interacting pairs (step() returns them; costs a per-agent array and a sum).
    void set_count_interactions( bool on ) { m_count_interactions = on; }
    bool count_interactions() const { return m_count_interactions; }

    //! Whether the next step() sorts the owned agents into cell order (every sort_every steps, the first
    //! step included), as SphereMechanics::sort_due() says for one rank.
    bool sort_due() const
    {
        const int sort_every = m_local.parameters().sort_every;
        return sort_every > 0 && ( !m_sorted_once || m_since_sort >= sort_every );
    }

    /*!
      \brief One mechanics step of the owned agents (collective: migration and halo exchange).

      The ghost exchange runs on an execution space instance of its own (compat::concurrent_instance:
      a second, high-priority stream on a GPU) while the forces of the owned agents among themselves
      run on `exec`; the ghosts' forces are then added to the agents near a face. With `timed`,
      every phase is fenced on both instances and starts and ends with a barrier over the ranks (no
      overlap, and no waiting for other ranks inside a phase), and is timed into times() (leave it off
      in production).
      \return this rank's overlapping (owned agent, neighbour) pairs, ghosts included, each counted from
      its owned side, if set_count_interactions(true); else 0. Summed over the ranks, the count of one
      rank's SphereMechanics over all the agents.
    */
    template <class ExecutionSpace>
    long long step( const ExecutionSpace& exec, agents_type& agents, bool timed = false )
    {
        // Every phase brings its own synchronisation (run_phase), so the default one is never called.
        core::StepPhases<core::detail::NoSync> phases( m_times, timed, core::detail::NoSync{} );
        const long long interactions = run_step( exec, agents, phases );
        if ( timed )
            m_times.count_step();
        return interactions;
    }

    /*!
      \brief step() with the phases (and counts) going to a driver's timer: `phase` is the core::StepPhases
      of the step of a driver on core::ModelDriver whose phase declaration numbers these mechanics'
      phases as DistributedMechanicsPhase does (mechanics::ProliferationPhase, over several ranks).
    */
    template <class ExecutionSpace, class Phases>
    long long run_step( const ExecutionSpace& exec, agents_type& agents, Phases& phase )
    {
        compat::ScopedRegion region( "morula::parallel::DistributedSphereMechanics::step" );
        const ExecutionSpace& comm = exchange_instance( exec );
        const bool rebuild_due = !m_halo_current || m_since_rebuild >= m_rebuild_every;
        // (On a timed step every rank makes the same run_phase() calls: they hold barriers.)
        if ( rebuild_due )
            prepare_owned_agents( exec, agents, phase );
        else if ( m_halo->num_ghosts() == 0 && m_halo->num_exports() == 0 )
            // No halo refers to the owned agents' order (one rank with its images by the minimum
            // image): all the agents are owned ones.
            sort_owned_agents( exec, agents, phase, sort_due() );
        else
            // Between rebuilds: the owned agents in cell order ahead of the ghosts, the halo's lists
            // renumbered. Forces over agents in cell order read them directly, not through the grid's
            // permutation, which is faster (docs/performance.md,
            // "Two GPUs over NVLink: weak and strong scaling (issue #24)").
            sort_owned_agents_keeping_ghosts( exec, agents, phase, sort_due() );
        const int halo_phase = rebuild_due ? Phase::halo_build : Phase::halo_update;
        const bool forces_first = overlap_order() == OverlapOrder::forces_first;
        // 1. The ghost exchange starts on its own instance (a high-priority stream on a GPU), after
        //    exec's last writes of the positions (moves, migration, sort): at a rebuild a new halo (plan,
        //    counts, every field), in between the ghost positions only. Its messages travel while ...
        exec.fence();
        const auto start_exchange = [&] {
            run_phase( exec, comm, phase, halo_phase, [&] {
                if ( rebuild_due )
                    // The forces may be running on exec and read the owned rows: wait for them only if
                    // the ghosts need a larger SoA.
                    start_halo_build( comm, agents, [&] { exec.fence(); } );
                else
                    m_halo->start_update( comm, agents );
            } );
        };
        if ( forces_first && rebuild_due )
            // The halo's scans over every position run here, before the forces, not beside them, where
            // they slowed the forces (docs/performance.md,
            // "Design choices measured (moved from source comments, issue #46)"); the count exchange,
            // the pack and the messages follow the forces' launch.
            run_phase( exec, comm, phase, halo_phase,
                   [&] { halo_for_build().find_exports( exec, agents, m_n_owned ); } );
        else if ( !forces_first )
            start_exchange();
        // 2. ... the owned agents' grid (unless the sort left it current) and the forces among them run on
        //    exec: final for every agent farther than the halo width from a ghost.
        run_phase( exec, comm, phase, Phase::grid, [&] {
            if ( !m_grid_current )
                m_local.build_grid( exec, agents, m_n_owned );
        } );
        m_grid_current = false;
        long long interactions = 0;
        run_phase( exec, comm, phase, Phase::forces, [&] {
            interactions = m_local.compute_owned_displacements( exec, agents, m_n_owned, m_count_interactions );
        } );
        if ( forces_first )
            start_exchange();
        run_phase( exec, comm, phase, halo_phase, [&] {
            if ( rebuild_due )
                m_halo->finish_build( comm, agents );
            else
                m_halo->finish_update( comm, agents );
        } );
        // 3. The ghosts' grid, then their forces on the agents near a face, on exec after the owned
        //    forces: built beside them on the exchange's stream, the grid ran several times slower than
        //    alone and slowed the forces, and Kokkos would hold its launches until the forces end anyway
        //    (functors of 512 B and more share one constant-memory buffer per device, and each launch
        //    through it waits for the last kernel that used it, on any stream; docs/performance.md,
        //    "Two GPUs over NVLink: weak and strong scaling (issue #24)").
        const bool ghost_forces = m_halo->num_ghosts() > 0 && m_halo->num_boundary() > 0;
        comm.fence(); // the ghosts have arrived
        run_phase( exec, comm, phase, Phase::grid, [&] {
            if ( ghost_forces )
                build_ghost_grid( exec, agents );
        } );
        run_phase( exec, comm, phase, Phase::forces, [&] {
            if ( !ghost_forces )
                return;
            const auto ghost_x = Kokkos::subview(
                agents.positions(), std::make_pair( m_n_owned, m_n_owned + m_halo->num_ghosts() ), Kokkos::ALL );
            interactions += mechanics::detail::add_ghost_displacements(
                exec, m_ghost_grid->query( ghost_x ), m_n_owned, m_halo->boundary_particles(), m_halo->num_boundary(),
                agents, m_local.parameters(), m_local.forces(), m_local.displacements(), m_count_interactions );
        } );
        ++m_since_rebuild;
        ++m_since_sort;
        run_phase( exec, comm, phase, Phase::move, [&] {
            mechanics::detail::apply_displacements( exec, agents.positions(), m_local.displacements(),
                                                    static_cast<int>( m_n_owned ), m_move_box );
        } );
        using Count = DistributedMechanicsCount; // added on timed steps only
        phase.add( Count::ghosts, static_cast<long long>( m_halo->num_ghosts() ) );
        phase.add( rebuild_due ? Count::rebuilds : Count::updates, 1 );
        phase.add( rebuild_due ? Count::halo_build_rows : Count::halo_update_rows,
                   static_cast<long long>( m_halo->num_exports() ) );
        return interactions;
    }

    //! This rank's state between steps (see DistributedMechanicsState).
    DistributedMechanicsState<Scalar> state() const
    {
        DistributedMechanicsState<Scalar> st;
        st.local = m_local.state();
        st.steps_since_sort = m_since_sort;
        st.sorted_once = m_sorted_once;
        st.migrated_once = m_migrated_once;
        return st;
    }

    /*!
      \brief Continues from `st` with `num_owned` owned agents and no ghosts (a restart): the agents passed
      to the next step() must hold exactly those. That step migrates and builds a new halo, as a step
      after owned_agents_changed() does; with st of this rank from the same rank count and parameters it
      continues the saved run exactly. Set migrated_once false when the agents are not where this
      decomposition put them (another rank count): the next step then migrates even on one rank.
    */
    void restore( std::size_t num_owned, const DistributedMechanicsState<Scalar>& st )
    {
        if ( st.steps_since_sort < 0 )
            throw core::InputError( core::detail::concat( "DistributedSphereMechanics::restore: steps_since_sort = ",
                                                          st.steps_since_sort, " (expected >= 0)" ) );
        m_local.restore( st.local );
        m_n_owned = num_owned;
        m_since_sort = st.steps_since_sort;
        m_sorted_once = st.sorted_once;
        m_migrated_once = st.migrated_once;
        m_halo_current = false;
        m_grid_current = false;
        m_since_rebuild = 0;
        m_rebuild_extent.reset();
    }

    //! Seconds per DistributedMechanicsPhase and DistributedMechanicsCount of the timed steps since
    //! construction or reset_times().
    const core::PhaseTimer& times() const { return m_times; }
    void reset_times() { m_times.reset(); }

    // Public because nvcc rejects extended lambdas in private member functions (and their callees).
    //! Bins the ghosts of the last halo in a grid of their own, over the owned agents' grid's box.
    template <class ExecutionSpace>
    void build_ghost_grid( const ExecutionSpace& exec, const agents_type& agents )
    {
        const auto& geometry = m_local.grid().geometry();
        // Cells at least as wide as any owned-ghost interaction (the largest diameter over all ranks).
        const Scalar cutoff = std::max( m_interaction_distance, geometry.cutoff );
        bool same = m_ghost_grid && m_ghost_grid->geometry().cutoff == cutoff;
        for ( int a = 0; a < 3 && same; ++a )
        {
            const auto& box = m_ghost_grid->geometry().box;
            same = box.lo[a] == geometry.box.lo[a] && box.hi[a] == geometry.box.hi[a] &&
                   box.boundary[a] == geometry.box.boundary[a];
        }
        if ( !same )
        {
            grid::GridOptions options;
            options.ordering = m_local.parameters().ordering;
            m_ghost_grid = std::make_unique<grid_type>( geometry.box, cutoff, options );
        }
        const std::size_t n_ghost = m_halo->num_ghosts();
        const auto ghost_x =
            Kokkos::subview( agents.positions(), std::make_pair( m_n_owned, m_n_owned + n_ghost ), Kokkos::ALL );
        m_ghost_grid->build( exec, ghost_x, static_cast<int>( n_ghost ) );
    }

  private:
    // The instance the ghost exchange runs on: a concurrent one of exec's space, made once (a new
    // stream per step would cost its creation).
    template <class ExecutionSpace>
    const ExecutionSpace& exchange_instance( const ExecutionSpace& exec )
    {
        if ( !m_exchange_instance.has_value() || m_exchange_instance.type() != typeid( ExecutionSpace ) )
            m_exchange_instance = compat::concurrent_instance( exec );
        return *std::any_cast<ExecutionSpace>( &m_exchange_instance );
    }

    // The rebuild's work on the owned agents: migration (all fields, periodic axes wrapped), the
    // collective halo-width check, and the cell-order sort when due (which leaves the grid current).
    template <class ExecutionSpace, class Phases>
    void prepare_owned_agents( const ExecutionSpace& exec, agents_type& agents, Phases& phase )
    {
        compat::ScopedRegion region( "morula::parallel::DistributedSphereMechanics::rebuild" );
        const std::size_t n = m_halo_current ? m_n_owned : agents.size();
        // One rank whose periodic axes all wrap in its own grid (and in move()) owns every agent where
        // it is: after the first migration, which wraps the initial positions, there is nothing to move.
        const bool alone = m_decomposition.size() == 1 && m_images == PeriodicImages::minimum_image;
        run_phase( exec, exec, phase, Phase::migration, [&] {
            if ( alone && m_migrated_once )
            {
                agents.resize( n ); // drops the ghosts (there are none with one rank and minimum images)
                m_n_owned = n;
                return;
            }
            const MigrationResult moved = migrate( exec, m_decomposition, agents, n, m_migration_workspace );
            m_n_owned = moved.num_owned;
            phase.add( DistributedMechanicsCount::migrated_sent, static_cast<long long>( moved.num_sent ) );
            phase.add( DistributedMechanicsCount::migrated_received, static_cast<long long>( moved.num_received ) );
        } );
        m_migrated_once = true;
        // Before the sort: a bad diameter or density must throw on every rank alike.
        run_phase( exec, exec, phase, Phase::halo_build, [&] { check_halo_width( exec, agents ); } );
        m_grid_current = false;
        sort_owned_agents( exec, agents, phase, sort_due() );
        m_rebuild_extent.reset();
        m_since_rebuild = 0;
    }


    // The agents hold exactly the owned ones here: a grid over them gives their order, and stays the
    // grid of this step (ghosts are binned in a grid of their own).
    template <class ExecutionSpace, class Phases>
    void sort_owned_agents( const ExecutionSpace& exec, agents_type& agents, Phases& phase, bool sort )
    {
        run_phase( exec, exec, phase, Phase::sort, [&] {
            if ( !sort )
                return;
            // The halo-width check of this rebuild reduced over the same agents already.
            if ( m_rebuild_extent )
                m_local.build_grid( exec, agents, agents.size(), *m_rebuild_extent );
            else
                m_local.build_grid( exec, agents );
            m_local.sort_agents( exec, agents );
        } );
        if ( !sort )
            return;
        m_grid_current = true;
        m_sorted_once = true;
        m_since_sort = 0;
    }

    // The owned agents into cell order between rebuilds: entries behind them (the ghosts) keep their
    // rows, and the halo's export and boundary lists follow the owned agents to their new places.
    template <class ExecutionSpace, class Phases>
    void sort_owned_agents_keeping_ghosts( const ExecutionSpace& exec, agents_type& agents, Phases& phase,
                                           bool sort )
    {
        // run_phase() whether due or not, as sort_owned_agents(): on a timed step every rank must reach
        // the same barriers, and a rank without ghosts takes the other function.
        run_phase( exec, exec, phase, Phase::sort, [&] {
            if ( !sort )
                return;
            m_local.build_grid( exec, agents, m_n_owned );
            m_local.sort_binned_agents( exec, agents );
            m_halo->renumber_owned( exec, m_local.grid().permutation() );
        } );
        if ( !sort )
            return;
        m_grid_current = true;
        m_sorted_once = true;
        m_since_sort = 0;
    }

    // Starts building the halo (plan, counts, every field) on `comm`; the halo is kept across rebuilds,
    // and shares its message buffers with the migration workspace (they take turns).
    template <class ExecutionSpace, class BeforeReallocation>
    void start_halo_build( const ExecutionSpace& comm, agents_type& agents, BeforeReallocation&& before_reallocation )
    {
        halo_for_build().start_build( comm, agents, m_n_owned, before_reallocation );
        m_halo_current = true;
        // Keep what the halo grew (its updates move positions only, sent at the build too, so they do
        // not grow the buffers further).
        m_migration_workspace.buffers = m_halo->buffers();
    }

    // The halo, made on first use; kept across rebuilds, it shares its message buffers with the
    // migration workspace (they take turns).
    halo_type& halo_for_build()
    {
        if ( !m_halo )
            m_halo.emplace( m_decomposition, m_migration_workspace.buffers, m_images );
        return *m_halo;
    }

    // Runs op as phase `index` of the step's phases, timed when the step is: fenced on both instances and
    // between barriers over the ranks, so that a phase neither overlaps another nor includes a wait for a
    // rank still in an earlier phase (with ranks sharing a GPU, the phase's time is that of all ranks' work
    // on it). Else just op (host-side lambdas only: no kernels here).
    template <class ExecutionSpace, class Phases, class Op>
    void run_phase( const ExecutionSpace& exec, const ExecutionSpace& comm, Phases& phase, int index, Op&& op )
    {
        phase.synced( index,
                      [&] {
                          exec.fence();
                          comm.fence();
                          MPI_Barrier( m_decomposition.comm() );
                      },
                      std::forward<Op>( op ) );
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
        // Over the local grid's box: the positions' range along its open axes comes with the largest
        // diameter in the same reduction, and the sort's grid build of this rebuild reuses it.
        double local = 0;
        std::string error;
        m_rebuild_extent.reset();
        try
        {
            m_rebuild_extent = mechanics::detail::agent_extent( exec, agents.positions(), agents.diameters(),
                                                                agents.densities(), static_cast<int>( m_n_owned ),
                                                                m_local.box() );
            local = static_cast<double>( m_rebuild_extent->max_diameter );
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

    CartesianDecomposition<Scalar> m_decomposition;
    PeriodicImages m_images = PeriodicImages::minimum_image;
    OverlapOrder m_order = OverlapOrder::automatic;
    mechanics_type m_local;
    int m_rebuild_every = 1;
    core::Box<Scalar> m_move_box;
    std::optional<halo_type> m_halo; // kept across rebuilds: its lists and buffers only grow
    std::unique_ptr<grid_type> m_ghost_grid; // the ghosts' own grid, over the owned grid's box
    std::any m_exchange_instance;            // where ghost exchanges run (see exchange_instance())
    bool m_halo_current = false;     // false before the first step and after owned_agents_changed()
    bool m_grid_current = false;     // the rebuild's sort left the grid built over the owned agents
    bool m_migrated_once = false;
    // Kept across rebuilds: migrations of no more agents than an earlier one allocate nothing, and its
    // message buffers are shared with each new halo.
    MigrationWorkspace<MemorySpace> m_migration_workspace;
    std::size_t m_n_owned = 0;
    int m_since_rebuild = 0;
    int m_since_sort = 0;     // steps since the last cell-order sort
    bool m_sorted_once = false;
    bool m_count_interactions = false;
    Scalar m_interaction_distance = 0;
    // The owned agents' extent found by the halo-width check of the rebuild under way (for its sort).
    std::optional<mechanics::detail::AgentExtent<Scalar>> m_rebuild_extent;
    core::PhaseTimer m_times{ DistributedMechanicsPhase::scope, DistributedMechanicsPhase::names,
                              DistributedMechanicsPhase::counts };
};

} // namespace morula::parallel

#endif
