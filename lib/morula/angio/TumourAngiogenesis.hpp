/*!
  \file TumourAngiogenesis.hpp
  \brief The tumour growth and angiogenesis model of Worecki and Wcisło 2012 (complex automata: spherical cells and vessel
  tubes driven by particle dynamics), every phase a device kernel.
*/
#ifndef MORULA_ANGIO_TUMOURANGIOGENESIS_HPP
#define MORULA_ANGIO_TUMOURANGIOGENESIS_HPP

#include <morula/angio/AngioParameters.hpp>
#include <morula/angio/TumourCells.hpp>
#include <morula/angio/VesselTubes.hpp>
#include <morula/angio/detail/CellCellKernels.hpp>
#include <morula/angio/detail/ExchangeKernels.hpp>
#include <morula/angio/detail/KernelData.hpp>
#include <morula/angio/detail/PhaseAccess.hpp>
#include <morula/angio/detail/TubeKernels.hpp>
#include <morula/angio/detail/UpdateKernels.hpp>
#include <morula/core/Box.hpp>
#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/PhaseTimer.hpp>
#include <morula/core/StepGraph.hpp>
#include <morula/grid/UniformGrid.hpp>
#include <morula/io/Checkpoint.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <stdexcept>
#include <string>

namespace morula::angio
{

/*!
  \brief The phases of a step (Worecki and Wcisło 2012, section 2.1), indices into TumourAngiogenesis::times(), in the
  order of their names there:
  - removal: removing lysed cells (stable compaction)
  - grid: binning cells, and every sort_every steps rearranging them in grid order
  - cell_cell: forces, pressure and exchange contacts
  - blood_flow: Murray split and blood oxygen along the vessels
  - tube_tube: tube grid, tube contacts, anastomosis
  - tube_cell: Algorithm 5 (per tube) and Algorithm 6 (per cell)
  - exchange: oxygen and TAF sweeps
  - motion: barrier forces and overdamped motion
  - tube_growth: tip growth and sprouting
  - life_cycle: states, growth, division, lysis
  - counters: the one read of the step's counters
*/
struct TumourAngiogenesisPhase
{
    enum : int
    {
        removal,
        grid,
        cell_cell,
        blood_flow,
        tube_tube,
        tube_cell,
        exchange,
        motion,
        tube_growth,
        life_cycle,
        counters
    };
    static constexpr const char* scope = "morula::angio::TumourAngiogenesis";
    static constexpr const char* names[] = { "removal",  "grid",   "cell_cell",   "blood_flow", "tube_tube", "tube_cell",
                                             "exchange", "motion", "tube_growth", "life_cycle", "counters" };
};

//! What one step did.
struct TumourAngiogenesisReport : core::StepReport
{
    int divisions = 0;   //!< cells added by division
    int removed = 0;     //!< dead cells that shrank away (lysed) and were removed this step
    int new_tubes = 0;   //!< tubes added (sprouts and tip splits)
    int sprouts = 0;
    int anastomoses = 0;
    bool sorted = false; //!< whether the cells were rearranged in grid order

    //! Sums an advance()'s steps; `sorted` if any of them sorted.
    void merge( const TumourAngiogenesisReport& other )
    {
        divisions += other.divisions;
        removed += other.removed;
        new_tubes += other.new_tubes;
        sprouts += other.sprouts;
        anastomoses += other.anastomoses;
        sorted = sorted || other.sorted;
    }
};

/*!
  \brief Tumour cells and vessel tubes in a closed box, one step at a time, entirely on the device.

  A step: bin the cells in the sorted uniform grid (rearranging them in grid order
  every sort_every steps); cell-cell interactions; blood flow; tube-tube interactions; tube-cell and
  cell-tube interactions; oxygen and TAF exchange sweeps; barrier forces and motion; tube growth and
  sprouting; the cell life cycle; removal of the cells that lysed. Capacities are reserved before the kernels run (a step can at most
  double the cells and the tubes), so new cells and tubes are appended on the device; the host reads
  one small array of counters at the end of the step (and the grid its status when it builds). Nothing
  else crosses between host and device inside the time loop.

  The exchange (two rate maxima and `exchange.sweeps` sweeps, most of a step's launches) is recorded in a
  core::StepGraph and replayed: on CUDA one graph submission instead of some 65 launches. Its kernels run
  over the cells' capacity and read the cell count from the device, so one graph serves every step whose
  arrays are those it was captured with; the arrays move when cells are sorted, removed or outgrow their
  capacity, so the model keeps a graph for each of the last two sets of arrays (sorting alternates between
  two buffers) and captures again on a miss. Replayed or launched one by one, the kernels and data are the
  same, so the results are the same bit for bit (set_step_graphs(false) launches them one by one).

  \tparam Scalar float or double (all fields)
  \tparam MemorySpace where the cells, tubes and scratch arrays live
*/
template <class Scalar, class MemorySpace>
class TumourAngiogenesis : public core::ModelDriver<TumourAngiogenesis<Scalar, MemorySpace>, TumourAngiogenesisPhase,
                                                    TumourAngiogenesisReport>
{
  public:
    using cells_type = TumourCells<Scalar, MemorySpace>;
    using tubes_type = VesselTubes<Scalar, MemorySpace>;
    using grid_type = grid::UniformGrid<Scalar, MemorySpace>;

    /*!
      \throws core::InputError for bad parameters, a box that is not closed on every axis, cells larger than
      the division radius or tubes longer than the tube grid allows (the message names the item)
    */
    TumourAngiogenesis( cells_type cells, tubes_type tubes, const core::Box<Scalar>& box, const AngioParameters& p )
        : m_cells( std::move( cells ) )
        , m_tubes( std::move( tubes ) )
        , m_box( box )
        , m_params( p )
    {
        const std::string where = "TumourAngiogenesis";
        box.validate( where );
        p.validate( where );
        for ( int d = 0; d < 3; ++d )
            if ( box.boundary[d] != core::Boundary::closed )
                throw core::InputError( core::detail::concat( where, ": the box must be closed on every axis (walls); axis ",
                                                              "xyz"[d], " is ", core::to_string( box.boundary[d] ) ) );
        m_constants = detail::Constants<Scalar>::make( p, box, p.exchange.max_contacts );
        check_inputs( where );
        m_counters = Kokkos::View<long long*, MemorySpace>( "morula::angio::counters", detail::num_counters );
        m_work.counters = m_counters;
        m_work.exchange_rate = Kokkos::View<Scalar*, MemorySpace>( "morula::angio::exchange_rate", 2 );
        m_work.num_cells = Kokkos::View<int, MemorySpace>( "morula::angio::num_cells" );
        grid::GridOptions options; // row-major cells: Algorithm 5 reads rows of cells as one run
        // The grids' cutoffs are the interaction reaches the parameters imply, not a user's setting: a
        // grid that cannot be laid is a box too large for them, reported as such (issue #46).
        try
        {
            m_grid = std::make_unique<grid_type>( box, m_constants.cell_reach, options );
            m_tube_grid = std::make_unique<grid_type>( box, m_tube_reach, options );
        }
        catch ( const core::CapacityError& )
        {
            throw core::InputError( core::detail::concat(
                where, ": the box (", box.length( 0 ), " x ", box.length( 1 ), " x ", box.length( 2 ),
                ") is too large for the neighbour grids, whose cells are at least the interaction reach (cells ",
                m_constants.cell_reach, " = 2 division_radius (1 + adhesion_range), tubes ", m_tube_reach,
                "), more than a grid's limit of ", options.max_cells, " cells; expected a smaller box" ) );
        }
    }

    const AngioParameters& parameters() const { return m_params; }
    const core::Box<Scalar>& box() const { return m_box; }
    const cells_type& cells() const { return m_cells; }
    const tubes_type& tubes() const { return m_tubes; }
    int num_cells() const { return static_cast<int>( m_cells.size() ); }
    int num_tubes() const { return static_cast<int>( m_tubes.size() ); }
    double time() const { return m_time; }
    const grid_type& grid() const { return *m_grid; }
    //! Largest centre distance of two interacting cells (the grid's cutoff).
    Scalar cell_reach() const { return m_constants.cell_reach; }
    //! Largest midpoint distance of two touching tubes (the tube grid's cutoff).
    Scalar tube_reach() const { return m_tube_reach; }
    //! Exchange contacts of the last cell-cell phase (neighbour, conductance sqrt(2) rho w, count).
    const detail::Workspace<Scalar, MemorySpace>& workspace() const { return m_work; }

    /*!
      \brief One step's phases (see the class description; core::ModelDriver::step() runs them, and
      advance( exec, n ) sums n untimed steps' reports).
    */
    template <class ExecutionSpace, class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, TumourAngiogenesisReport& report )
    {
        using Phase = TumourAngiogenesisPhase;
        compat::ScopedRegion region( "morula::angio::TumourAngiogenesis::step" );
        prepare_step( exec );
        report.sorted = phase( Phase::grid, [&] { return build_grid( exec ); } );
        phase( Phase::cell_cell, [&] { interact_cells( exec ); } );
        phase( Phase::blood_flow, [&] { update_blood_flow( exec ); } );
        phase( Phase::tube_tube, [&] { interact_tubes( exec ); } );
        phase( Phase::tube_cell, [&] { interact_tubes_and_cells( exec ); } );
        phase( Phase::exchange, [&] { exchange_replayed( exec ); } );
        phase( Phase::motion, [&] { move( exec ); } );
        phase( Phase::tube_growth, [&] { grow_vessels( exec ); } );
        phase( Phase::life_cycle, [&] { advance_life_cycle( exec ); } );
        phase( Phase::counters, [&] { finish_step( exec, report ); } );
        report.removed = phase( Phase::removal, [&] { return remove_lysed( exec ); } );
    }

    //! Whether the exchange is replayed from a captured graph (the default) or launched kernel by kernel.
    void set_step_graphs( bool on ) { m_use_graphs = on; }
    bool step_graphs() const { return m_use_graphs; }
    //! Device graphs captured so far (0 where replays relaunch: host backends, Kokkos without graphs).
    long long graph_captures() const
    {
        long long k = 0;
        for ( const auto& g : m_exchange_graphs )
            k += g.graph.captures();
        return k;
    }

    /*!
      \brief Turns sprouting on or off from the next step: the angiogenic switch, the moment a dormant
      avascular tumour starts recruiting vessels.
    */
    void set_sprouting( bool on )
    {
        m_params.vessels.sprouting = on;
        m_constants.sprouting = on;
        for ( auto& g : m_exchange_graphs ) // a graph keeps the constants it was captured with
            g.graph.invalidate();
    }

    long long divisions() const { return m_divisions; }
    long long sprouts() const { return m_sprouts; }
    long long anastomoses() const { return m_anastomoses; }

    //! The model's name in checkpoints (io::write_checkpoint, io::restart_from_checkpoint).
    static constexpr const char* checkpoint_model = "angiogenesis";
    //! Writes the whole state between two steps (TumourAngiogenesisCheckpoint.hpp says what it holds).
    void checkpoint( io::CheckpointWriter& out ) const;
    //! Resumes from a checkpoint of a run of the same parameters and box (TumourAngiogenesisCheckpoint.hpp).
    void restart( const io::CheckpointReader& in );

    //! Kernel handles of the current cell and tube arrays (fetch again after a step: arrays may move).
    detail::CellViews<Scalar, MemorySpace> cells_view() const { return detail::CellViews<Scalar, MemorySpace>( m_cells ); }
    detail::TubeViews<Scalar, MemorySpace> tubes_view() const { return detail::TubeViews<Scalar, MemorySpace>( m_tubes ); }

  private:
    // The phases, in step order (step_phases runs them; detail::PhaseAccess runs one alone for tests and
    // benchmarks). No device lambdas here: nvcc does not allow them in private member functions.
    friend struct detail::PhaseAccess;

    //! Removes the cells that lysed in this step's life cycle (stable: the others keep their order); call
    //! after finish_step(), which counts them.
    template <class ExecutionSpace>
    int remove_lysed( const ExecutionSpace& exec )
    {
        if ( m_pending_lysed == 0 )
            return 0;
        const int n = num_cells();
        const int kept = n - m_pending_lysed;
        detail::ensure_extent_1d( m_work.permutation, m_cells.capacity(), "morula::angio::permutation" );
        detail::removal_permutation( exec, cells_view(), n, kept, m_work.permutation );
        m_cells.permute( exec, m_work.permutation );
        m_cells.set_size( kept );
        const int removed = m_pending_lysed;
        m_pending_lysed = 0;
        return removed;
    }

    //! Reserves room for a step that doubles cells and tubes, sizes the scratch arrays, zeroes the counters.
    template <class ExecutionSpace>
    void prepare_step( const ExecutionSpace& exec )
    {
        const std::size_t n = m_cells.size(), m = m_tubes.size();
        if ( m_cells.capacity() < 2 * n )
            m_cells.reserve( 3 * n + 16 );
        if ( m_tubes.capacity() < 2 * m )
            m_tubes.reserve( 3 * m + 16 );
        const std::size_t cap = m_cells.capacity(), tcap = m_tubes.capacity();
        if ( m_work.contact.extent( 0 ) < cap )
        {
            using namespace Kokkos;
            const int K = m_params.exchange.max_contacts, Kt = m_params.max_tubes_per_cell;
            m_work.contact = decltype( m_work.contact )( view_alloc( WithoutInitializing, std::string( "morula::angio::contact" ) ), cap, K );
            m_work.conductance = decltype( m_work.conductance )( view_alloc( WithoutInitializing, std::string( "morula::angio::conductance" ) ), cap, K );
            m_work.contact_count = decltype( m_work.contact_count )( "morula::angio::contact_count", cap );
            m_work.tube_list = decltype( m_work.tube_list )( view_alloc( WithoutInitializing, std::string( "morula::angio::tube_list" ) ), cap, Kt );
            m_work.tube_count = decltype( m_work.tube_count )( "morula::angio::tube_count", cap );
            m_work.supply_level = decltype( m_work.supply_level )( "morula::angio::supply_level", cap );
            m_work.supply_rate = decltype( m_work.supply_rate )( "morula::angio::supply_rate", cap );
            m_work.oxygen_next = decltype( m_work.oxygen_next )( "morula::angio::oxygen_next", cap );
            m_work.taf_next = decltype( m_work.taf_next )( "morula::angio::taf_next", cap );
        }
        if ( m_work.midpoints.extent( 0 ) < tcap )
        {
            m_work.midpoints = decltype( m_work.midpoints )( "morula::angio::tube_midpoints", tcap );
            m_work.children_fixed = decltype( m_work.children_fixed )( "morula::angio::murray_sums", tcap );
        }
        detail::begin_step( exec, num_cells(), m_work );
    }

    //! Bins the cells; every sort_every builds also rearranges them in grid order. Returns whether it did.
    template <class ExecutionSpace>
    bool build_grid( const ExecutionSpace& exec )
    {
        const bool sort = m_params.sort_every > 0 && m_builds % m_params.sort_every == 0;
        m_grid->build( exec, m_cells.positions(), num_cells() );
        if ( sort )
            m_grid->permute( exec, m_cells );
        ++m_builds;
        return sort;
    }

    //! Cell-cell forces, pressure and exchange contacts (from both sides, or once with atomics).
    template <class ExecutionSpace>
    void interact_cells( const ExecutionSpace& exec )
    {
        const auto query = m_grid->query( m_cells.positions() );
        if ( m_params.atomic_cell_cell )
            detail::cell_cell_atomic( exec, query, cells_view(), num_cells(), m_constants, m_work );
        else
            detail::cell_cell_both_sides( exec, query, m_cell_reduction, cells_view(), num_cells(), m_constants, m_work );
    }

    //! Flow and blood oxygen of every tube.
    template <class ExecutionSpace>
    void update_blood_flow( const ExecutionSpace& exec )
    {
        if ( num_tubes() > 0 )
            detail::blood_flow( exec, tubes_view(), num_tubes(), m_constants, m_work );
    }

    //! Tube-tube contacts and anastomosis: through a tube grid over the midpoints, or (few tubes, device
    //! backends) every pair directly.
    template <class ExecutionSpace>
    void interact_tubes( const ExecutionSpace& exec )
    {
        const int m = num_tubes();
        if ( m == 0 )
            return;
        // A few hundred tubes: every pair directly, one kernel instead of a grid build and its host read.
        constexpr bool host_backend =
            Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecutionSpace::memory_space>::accessible;
        if ( !host_backend && m <= detail::tube_tube_all_pairs_max )
        {
            detail::tube_tube_all_pairs( exec, tubes_view(), m, m_tube_reach, m_constants, m_work );
            return;
        }
        detail::tube_midpoints( exec, tubes_view(), m, m_work );
        m_tube_grid->build( exec, m_work.midpoints, m );
        detail::tube_tube( exec, m_tube_grid->query( m_work.midpoints ), tubes_view(), m, m_tube_reach, m_constants,
                           m_work );
    }

    //! Algorithm 5 (tube-cell, per tube, building the per-cell tube lists) then Algorithm 6 (cell-tube).
    template <class ExecutionSpace>
    void interact_tubes_and_cells( const ExecutionSpace& exec )
    {
        const int n = num_cells(), m = num_tubes();
        Kokkos::deep_copy( exec, m_work.tube_count, 0 );
        if ( m > 0 )
            detail::tube_cell( exec, m_grid->query( m_cells.positions() ), cells_view(), tubes_view(), m, m_constants,
                               m_work );
        detail::cell_tube( exec, cells_view(), tubes_view(), n, m_constants, m_work );
    }

    //! The pseudo-time steps, then `sweeps` exchange sweeps of oxygen and TAF, launched one by one (the
    //! cell count is the one prepare_step() stored on the device).
    template <class ExecutionSpace>
    void exchange( const ExecutionSpace& exec )
    {
        if ( m_params.exchange.sweeps == 0 || num_cells() == 0 )
            return;
        launch_exchange( exec );
    }

    //! exchange(), replayed from a captured graph where step graphs are on and the backend has them.
    template <class ExecutionSpace>
    void exchange_replayed( const ExecutionSpace& exec )
    {
        if ( m_params.exchange.sweeps == 0 || num_cells() == 0 )
            return;
        // Through the graphs on the host backends too (where a replay relaunches the recorded kernels), so
        // that the keyed recordings are exercised, and tested, wherever the model runs.
        if constexpr ( std::is_same_v<ExecutionSpace, graph_space> )
        {
            if ( m_use_graphs )
            {
                replay_exchange( exec );
                return;
            }
        }
        launch_exchange( exec );
    }

    //! The exchange's kernels (detail::exchange_all), over the cells' capacity.
    template <class ExecutionSpace>
    void launch_exchange( const ExecutionSpace& exec ) const
    {
        detail::exchange_all( exec, cells_view(), static_cast<int>( m_cells.capacity() ), m_params.exchange.sweeps,
                              m_constants, m_work );
    }

    //! Barrier forces and overdamped motion.
    template <class ExecutionSpace>
    void move( const ExecutionSpace& exec )
    {
        detail::move_cells( exec, cells_view(), num_cells(), m_constants );
    }

    //! Tip growth and sprouting (new tubes appended on the device).
    template <class ExecutionSpace>
    void grow_vessels( const ExecutionSpace& exec )
    {
        if ( num_tubes() > 0 )
            detail::grow_tubes( exec, tubes_view(), num_tubes(), m_constants, static_cast<Scalar>( m_time ),
                                static_cast<std::uint32_t>( this->steps_done() ), m_tubes.next_id(), m_work );
    }

    //! States, growth, division and lysis (daughters appended on the device).
    template <class ExecutionSpace>
    void advance_life_cycle( const ExecutionSpace& exec )
    {
        if ( num_cells() > 0 )
            detail::life_cycle( exec, cells_view(), num_cells(), m_constants, static_cast<std::uint32_t>( this->steps_done() ),
                                m_cells.next_id(), m_work );
    }

    /*!
      \brief Reads the step's counters (the one host read of a step), updates the sizes and the clock.
      \throws core::CapacityError if a cell had more contacts or tubes than its lists hold (the message
      names the parameter to raise); core::InputError if a concentration went negative or non-finite
      (an exchange.sweep_fraction too large: the message names it)
    */
    template <class ExecutionSpace>
    void finish_step( const ExecutionSpace& exec, TumourAngiogenesisReport& report )
    {
        long long host[detail::num_counters];
        Kokkos::View<long long*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h( host, detail::num_counters );
        Kokkos::deep_copy( exec, h, m_counters );
        exec.fence();
        if ( host[detail::counter_max_contacts] > 0 )
            throw core::CapacityError( core::detail::concat(
                "TumourAngiogenesis: at step ", this->steps_done(), " a cell had ", host[detail::counter_max_contacts],
                " exchange contacts, more than exchange.max_contacts = ", m_params.exchange.max_contacts,
                "; raise it" ) );
        if ( host[detail::counter_max_tubes] > 0 )
            throw core::CapacityError( core::detail::concat(
                "TumourAngiogenesis: at step ", this->steps_done(), " a cell touched ", host[detail::counter_max_tubes],
                " tubes, more than max_tubes_per_cell = ", m_params.max_tubes_per_cell, "; raise it" ) );
        if ( host[detail::counter_negative] > 0 )
            throw core::InputError( core::detail::concat(
                "TumourAngiogenesis: at step ", this->steps_done(), " the oxygen or TAF of ", host[detail::counter_negative],
                " cells became negative or non-finite; lower exchange.sweep_fraction" ) );
        report.divisions = static_cast<int>( host[detail::counter_divisions] );
        const int lysed = static_cast<int>( host[detail::counter_lysed] );
        report.new_tubes = static_cast<int>( host[detail::counter_new_tubes] );
        report.sprouts = static_cast<int>( host[detail::counter_sprouts] );
        report.anastomoses = static_cast<int>( host[detail::counter_anastomoses] );
        m_cells.set_size( m_cells.size() + report.divisions );
        m_cells.set_next_id( m_cells.next_id() + report.divisions );
        m_tubes.set_size( m_tubes.size() + report.new_tubes );
        m_tubes.set_next_id( m_tubes.next_id() + report.new_tubes );
        m_pending_lysed += lysed;
        m_divisions += report.divisions;
        m_sprouts += report.sprouts;
        m_anastomoses += report.anastomoses;
        m_time += m_params.time_step; // the step count is the framework's (core::ModelDriver)
    }

    using graph_space = typename MemorySpace::execution_space;

    //! What a captured exchange graph froze: every array its kernels touch, the launch size and the stream.
    struct ExchangeKey
    {
        std::array<const void*, 13> arrays{};
        std::size_t capacity = 0;
        std::uint64_t instance = 0;
        bool operator==( const ExchangeKey& o ) const
        {
            return arrays == o.arrays && capacity == o.capacity && instance == o.instance;
        }
    };
    struct ExchangeGraph
    {
        ExchangeKey key;
        core::StepGraph<graph_space> graph;
        long long last_use = -1; // -1: nothing recorded
    };

    ExchangeKey exchange_key( const graph_space& exec ) const
    {
        ExchangeKey k;
        const auto c = cells_view();
        k.arrays = { c.oxygen.data(), c.taf.data(), c.s.data(), c.r.data(), m_work.contact.data(),
                     m_work.conductance.data(), m_work.contact_count.data(), m_work.supply_level.data(),
                     m_work.supply_rate.data(), m_work.oxygen_next.data(), m_work.taf_next.data(),
                     m_work.exchange_rate.data(), m_work.counters.data() };
        k.capacity = m_cells.capacity();
        if constexpr ( core::StepGraph<graph_space>::uses_device_graph() )
            k.instance = static_cast<std::uint64_t>( exec.impl_instance_id() );
        return k;
    }

    // The graph whose key matches the current arrays replays; on a miss the least recently used slot
    // records the exchange again and this step launches it plainly (a kernel must have run once before
    // its capture), so the next step with these arrays captures and later ones replay.
    void replay_exchange( const graph_space& exec )
    {
        const ExchangeKey key = exchange_key( exec );
        ExchangeGraph* hit = nullptr;
        for ( auto& g : m_exchange_graphs )
            if ( g.last_use >= 0 && g.key == key )
                hit = &g;
        if ( hit )
        {
            hit->last_use = this->steps_done();
            hit->graph.replay( exec );
            return;
        }
        ExchangeGraph& slot = m_exchange_graphs[0].last_use <= m_exchange_graphs[1].last_use ? m_exchange_graphs[0]
                                                                                              : m_exchange_graphs[1];
        slot.key = key;
        slot.last_use = this->steps_done();
        // The operation holds its own handles (not `this`: the model may move), the ones the key names.
        slot.graph.record( [cells = cells_view(), cap = static_cast<int>( m_cells.capacity() ),
                            sweeps = m_params.exchange.sweeps, c = m_constants, w = m_work]( const graph_space& e ) {
            detail::exchange_all( e, cells, cap, sweeps, c, w );
        } );
        launch_exchange( exec );
    }

    // Cells must be alive or dead, no larger than the division radius; tubes no longer than the tube
    // grid's reach allows (longer ones must be cut, as HostTubes::add_vessel does).
    void check_inputs( const std::string& where )
    {
        const auto hc = m_cells.to_host();
        for ( std::size_t i = 0; i < hc.size(); ++i )
        {
            if ( hc.state[i] < cell_new || hc.state[i] > cell_dead )
                throw core::InputError( core::detail::concat( where, ": cell ", i, " has state ", hc.state[i],
                                                              " (expected 0 new, 1 mature, 2 hypoxic or 3 dead)" ) );
            if ( !( hc.radius[i] > 0 && hc.radius[i] <= m_params.life.division_radius * ( 1 + 1e-6 ) ) )
                throw core::InputError( core::detail::concat( where, ": cell ", i, " has radius ", hc.radius[i],
                                                              " (expected a value in (0, life.division_radius = ",
                                                              m_params.life.division_radius, "])" ) );
        }
        const auto ht = m_tubes.to_host();
        double rmax = m_params.vessels.sprout_radius, lmax = 0;
        for ( std::size_t i = 0; i < ht.size(); ++i )
        {
            rmax = std::max( { rmax, ht.radius_a[i], ht.radius_b[i] } );
            double l2 = 0;
            for ( int d = 0; d < 3; ++d )
                l2 += ( ht.end_b[3 * i + d] - ht.end_a[3 * i + d] ) * ( ht.end_b[3 * i + d] - ht.end_a[3 * i + d] );
            lmax = std::max( lmax, std::sqrt( l2 ) );
            for ( int d = 0; d < 3; ++d )
                for ( double x : { ht.end_a[3 * i + d], ht.end_b[3 * i + d] } )
                    if ( !( x >= m_box.lo[d] && x <= m_box.hi[d] ) )
                        throw core::InputError( core::detail::concat( where, ": tube ", i, " has an end outside the box along ",
                                                                      "xyz"[d], ": ", x, " not in [", m_box.lo[d], ", ",
                                                                      m_box.hi[d], "]" ) );
        }
        const double grown = m_params.vessels.max_tube_length + m_params.vessels.tip_speed * m_params.time_step;
        if ( lmax > 4 * m_params.vessels.max_tube_length )
            throw core::InputError( core::detail::concat( where, ": a tube is ", lmax, " um long, more than 4 x vessels.max_tube_length = ",
                                                          4 * m_params.vessels.max_tube_length,
                                                          "; cut long vessels into tubes (HostTubes::add_vessel does)" ) );
        // Two tubes touch only if their midpoints are within half their lengths plus their radii.
        m_tube_reach = static_cast<Scalar>( std::max( grown, lmax ) + 2 * rmax );
    }

    cells_type m_cells;
    tubes_type m_tubes;
    core::Box<Scalar> m_box;
    AngioParameters m_params;
    detail::Constants<Scalar> m_constants;
    detail::Workspace<Scalar, MemorySpace> m_work;
    Kokkos::View<long long*, MemorySpace> m_counters;
    std::unique_ptr<grid_type> m_grid, m_tube_grid;
    // Cell-cell interactions: one cell per thread, pairs batched (their pair work is heavy: a square
    // root, the contact force and the exchange weight).
    grid::NeighborReduction<MemorySpace> m_cell_reduction{ 1, grid::PairBatching::batched };
    Scalar m_tube_reach = 0;
    double m_time = 0;
    long long m_builds = 0;
    int m_pending_lysed = 0;
    long long m_divisions = 0, m_sprouts = 0, m_anastomoses = 0;
    bool m_use_graphs = true;
    std::array<ExchangeGraph, 2> m_exchange_graphs;
};

} // namespace morula::angio

// The definitions of checkpoint() and restart().
#include <morula/angio/TumourAngiogenesisCheckpoint.hpp>

#endif
