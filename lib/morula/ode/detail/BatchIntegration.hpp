/*!
  \file BatchIntegration.hpp
  \brief The batched (a thread per system, or a team thread's vector lanes per system on chip) and
         fine-grained (a team per system) integration of a batch as an object: its workspace, per-system
         integrator states, samples and statistics, advanced to a sample and resumed from there, with the
         state saved to and restored from a checkpoint.

  OdeSolver::solve runs it once to the last sample (no state kept); OdeIntegration pauses it at
  samples, checkpoints it and restarts it. Both launch the same SystemIntegrator code, so a run paused
  anywhere takes the same steps as one that is not.
*/
#ifndef MORULA_ODE_DETAIL_BATCHINTEGRATION_HPP
#define MORULA_ODE_DETAIL_BATCHINTEGRATION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/ode/OdeResult.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/Integrator.hpp>
#include <morula/ode/detail/ResultStorage.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace morula::ode::detail
{

/*!
  One leg of an integration: starts (first leg) or loads each system's state, steps it to sample `stop`,
  reports its counters and stores its state for the next leg (unless `states` is empty: a one-leg run).
  OdeSolver::solve and OdeIntegration launch this one kernel, so that both are the same compiled code:
  separately compiled kernels may contract floating-point operations differently (CUDA's FMAs).
*/
template <class MemorySpace, class Model>
struct ResumableIntegrate
{
    SystemIntegrator<MemorySpace, Model> integrator;
    Kokkos::View<IntegratorState*, MemorySpace> states;
    int stop = 0;
    bool first = false;

    template <class Ops>
    KOKKOS_INLINE_FUNCTION void body( const Ops& ops, long s ) const
    {
        IntegratorState st;
        if ( first )
            integrator.begin( ops, s, st );
        else
            st = states( s );
        integrator.run( ops, s, st, stop );
        integrator.report( ops, s, st );
        if ( states.extent( 0 ) > 0 )
            ops.single( [&]() { states( s ) = st; } );
    }
    KOKKOS_INLINE_FUNCTION void operator()( const long s ) const { body( ThreadOps{}, s ); }
    template <class Member>
    KOKKOS_INLINE_FUNCTION void operator()( const Member& member ) const
    {
        body( TeamOps<Member>{ member }, member.league_rank() );
    }
};

/*!
  The batched mode's on-chip layout: team thread r of team g integrates system g * systems_per_team + r,
  its vector lanes sharing the system's loops (LaneOps), and the system's workspace (vectors, Jacobian,
  factorised matrix, pivots) is its slice of the team's scratch memory - shared memory on a GPU - for the
  whole leg. The interleaved layout keeps the same arrays in device memory, where a system's many passes
  over its matrices per step go to DRAM once the batch outgrows the caches.

  Between legs (resumable runs) the slice is copied to and from the global workspace in the interleaved
  layout's places, so a checkpoint has the same format (and, on a host backend, the same bytes) whichever
  layout wrote it. A one-leg run needs no global workspace.
*/
//! Team scratch memory (bytes) the on-chip layout gives one team: within 40 KB a GPU block fits the
//! 48 KB of shared memory it gets without opting into more.
template <class ExecutionSpace>
std::size_t on_chip_team_budget()
{
    const std::size_t most = static_cast<std::size_t>( core::LaunchTeam<ExecutionSpace>::scratch_size_max( 0 ) );
    return most < 40960 ? most : 40960;
}

template <class MemorySpace, class Model>
struct OnChipIntegrate
{
    SystemIntegrator<MemorySpace, Model> integrator; // interleaved, over the global workspace (may be empty)
    Kokkos::View<IntegratorState*, MemorySpace> states;
    int stop = 0;
    bool first = false;
    int systems_per_team = 1;
    int scratch_level = 0;

    //! Doubles of scratch per system: the workspace and the pivots (two ints to a double).
    KOKKOS_INLINE_FUNCTION static long slice_length( const WorkspaceMap& map ) { return map.per_system + ( map.n + 1 ) / 2; }

    template <class Member>
    KOKKOS_INLINE_FUNCTION void operator()( const Member& member ) const
    {
        const WorkspaceMap& map = integrator.map;
        const long slice = slice_length( map );
        // Every thread of the team asks for the same block (the same pointer), before any returns.
        double* team_block =
            static_cast<double*>( member.team_scratch( scratch_level ).get_shmem( sizeof( double ) * slice * systems_per_team ) );
        const long s = static_cast<long>( member.league_rank() ) * systems_per_team + member.team_rank();
        if ( s >= integrator.systems )
            return;
        double* mine = team_block + slice * member.team_rank();
        SystemIntegrator<MemorySpace, Model> local = integrator;
        local.workspace = Kokkos::View<double*, MemorySpace>( mine, map.per_system );
        local.pivots = Kokkos::View<int*, MemorySpace>( reinterpret_cast<int*>( mine + map.per_system ), map.n );
        local.interleaved = false;
        local.first_system = s;
        const LaneOps<Member> ops{ member };
        // Only a paused run (states kept) has a global workspace to copy from and to.
        const bool resumable = states.extent( 0 ) > 0;
        const int length = static_cast<int>( map.per_system );
        const Strided<int> pivots = local.pivot_vec( s );
        if ( resumable )
        {
            // A first leg starts from zeros, as the interleaved layout's zeroed workspace does, so that
            // slots a system never reaches are the same bytes in every checkpoint.
            const Strided<double> global = integrator.at( s, 0 );
            const Strided<int> global_pivots = integrator.pivot_vec( s );
            ops.for_each( length, [&]( int e ) { mine[e] = first ? 0.0 : global[e]; } );
            ops.for_each( map.n, [&]( int i ) { pivots[i] = first ? 0 : global_pivots[i]; } );
        }
        ResumableIntegrate<MemorySpace, Model>{ local, states, stop, first }.body( ops, s );
        if ( resumable )
        {
            const Strided<double> global = integrator.at( s, 0 );
            const Strided<int> global_pivots = integrator.pivot_vec( s );
            ops.for_each( length, [&]( int e ) { global[e] = mine[e]; } );
            ops.for_each( map.n, [&]( int i ) { global_pivots[i] = pivots[i]; } );
        }
    }
};

/*!
  Why a system's on-chip slice does not fit the team scratch memory one team may use on this backend, or
  an empty string when it does (always on a host backend, whose teams take host memory where level 0 is
  too small).
*/
template <class ExecutionSpace, class MemorySpace, class Model>
std::string on_chip_refusal( const WorkspaceMap& map )
{
    const std::size_t bytes = sizeof( double ) * static_cast<std::size_t>( OnChipIntegrate<MemorySpace, Model>::slice_length( map ) );
    const std::size_t budget = on_chip_team_budget<ExecutionSpace>();
    if ( Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible || bytes <= budget )
        return {};
    return core::detail::concat( "ODE solver: batched_layout on_chip needs ", bytes, " bytes of team scratch memory per system (",
                                 map.n, " species, ", map.m, " reactions); a team may use ", budget,
                                 " here (use batched_layout interleaved)" );
}

//! Threads per team in the fine-grained mode when the options leave it to the solver.
template <class MemorySpace>
int default_team_size( int max_size, int n, int m )
{
    // Enough threads to cover the longer of the species and reaction loops, within the kernel's limit;
    // on a host backend the team is the whole thread pool.
    if ( Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible )
        return max_size;
    int want = 32;
    const int work = n > m ? n : m;
    while ( want < work && want < 512 )
        want *= 2;
    return want < max_size ? want : max_size;
}

template <class T, class MemorySpace>
Kokkos::View<const T*, MemorySpace> to_device( const char* label, const std::vector<T>& v )
{
    Kokkos::View<T*, MemorySpace> d( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ), v.size() );
    Kokkos::deep_copy( d, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>( v.data(), v.size() ) );
    return d;
}

/*!
  A batch of systems integrated by the batched or fine-grained kernel. Constructed from validated
  inputs; `resumable` keeps each system's integrator state between legs (advance) and zeroes the
  workspace first, so that a checkpoint of it is the same bytes for the same state.
*/
template <class ExecutionSpace, class MemorySpace, class Model>
class BatchIntegration
{
  public:
    using matrix_type = Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>;

    BatchIntegration( const ExecutionSpace& exec, const Model& system, const DeviceOptions& options,
                      const Kokkos::View<double*, MemorySpace>& atol, int team_size_option, bool team,
                      const matrix_type& initial_states, const matrix_type& rate_constants,
                      const SampleTimes<MemorySpace>& sample_times, const std::vector<int>& saved, double t_start,
                      bool resumable, Kokkos::View<double*, MemorySpace> workspace = {},
                      Kokkos::View<int*, MemorySpace> pivots = {}, const OdeResult<MemorySpace>& reuse = {} )
        : m_team( team )
        , m_resumable( resumable )
        , m_sample_count( sample_times.count() )
    {
        const long systems = static_cast<long>( initial_states.extent( 0 ) );
        const int n = system.species, m = system.reactions;
        const WorkspaceMap map( n, m, options.linear == LinearKind::sparse_bicgstab, system.jacobian_nonzeros_count );
        m_on_chip = !team && options.on_chip_lanes > 0;
        // The on-chip layout keeps a one-leg run's workspace in scratch memory only.
        const bool global_workspace = resumable || !m_on_chip;
        m_workspace_length = global_workspace ? static_cast<std::size_t>( map.per_system ) * static_cast<std::size_t>( systems ) : 0;
        if ( workspace.extent( 0 ) < m_workspace_length )
            workspace = Kokkos::View<double*, MemorySpace>( Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::workspace" ),
                                                            m_workspace_length );
        m_pivot_length = global_workspace ? static_cast<std::size_t>( n ) * static_cast<std::size_t>( systems ) : 0;
        if ( pivots.extent( 0 ) < m_pivot_length )
            pivots = Kokkos::View<int*, MemorySpace>( Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::pivots" ),
                                                      m_pivot_length );
        if ( resumable )
        {
            // Parts of the workspace a system never reaches (another method's slots) would otherwise be
            // whatever the memory held, and differ between two checkpoints of the same state.
            Kokkos::deep_copy( exec, Kokkos::subview( workspace, std::make_pair( std::size_t( 0 ), m_workspace_length ) ), 0.0 );
            Kokkos::deep_copy( exec, Kokkos::subview( pivots, std::make_pair( std::size_t( 0 ), m_pivot_length ) ), 0 );
            m_states = Kokkos::View<IntegratorState*, MemorySpace>( "morula::ode::integrator_states", systems );
        }

        m_result = result_storage( exec, reuse, systems, sample_times.count(), saved.size(), true );

        m_integ.sys = system;
        m_integ.opt = options;
        m_integ.map = map;
        m_integ.workspace = workspace;
        m_integ.pivots = pivots;
        m_integ.atol = atol;
        m_integ.sample_times = sample_times;
        m_integ.saved_species = to_device<int, MemorySpace>( "morula::ode::saved_species", saved );
        m_integ.initial_states = initial_states;
        m_integ.rate_constants = rate_constants;
        m_integ.output = m_result.samples;
        m_integ.statistics = m_result.statistics;
        m_integ.t_start = t_start;
        m_integ.systems = systems;
        m_integ.interleaved = !team;

        if ( m_on_chip )
        {
            on_chip_geometry( exec, options.on_chip_lanes );
            if ( ( systems + m_systems_per_team - 1 ) / m_systems_per_team > std::numeric_limits<int>::max() )
                throw core::InputError( core::detail::concat( "ODE solver: ", systems, " systems are more teams than the "
                                                              "on-chip layout can launch (use batched_layout interleaved)" ) );
        }
        if ( team )
        {
            using Policy = core::LaunchTeam<ExecutionSpace>;
            Policy probe( exec, static_cast<int>( systems > 0 ? systems : 1 ), 1 );
            const int max_size = probe.team_size_max( ResumableIntegrate<MemorySpace, Model>{ m_integ, m_states },
                                                      Kokkos::ParallelForTag() );
            m_team_size = team_size_option > 0 ? team_size_option : default_team_size<MemorySpace>( max_size, n, m );
            if ( m_team_size > max_size )
                throw core::InputError( core::detail::concat( "ODE solver: team_size = ", m_team_size,
                                                              " exceeds this kernel's maximum ", max_size ) );
        }
    }

    //! The whole integration in one kernel (not resumable: OdeSolver::solve).
    void run_to_end( const ExecutionSpace& exec ) { launch( exec, m_sample_count ); }

    //! Steps every system until samples [0, stop) are filled (or it stopped on an error); resumable only.
    void advance( const ExecutionSpace& exec, int stop )
    {
        stop = stop < m_sample_count ? stop : m_sample_count;
        if ( m_started && stop <= m_samples_done )
            return;
        launch( exec, stop );
    }

    const OdeResult<MemorySpace>& result() const { return m_result; }
    bool started() const { return m_started; }
    int samples_done() const { return m_samples_done; }
    int sample_count() const { return m_sample_count; }
    long systems() const { return m_integ.systems; }
    //! The buffers used (the caller's, or larger ones allocated here), for the caller to keep for its next run.
    const Kokkos::View<double*, MemorySpace>& workspace() const { return m_integ.workspace; }
    const Kokkos::View<int*, MemorySpace>& pivots() const { return m_integ.pivots; }

    /*!
      Writes the integration's state under `prefix`: each system's integrator scalars (one array per
      field), its workspace (state, BDF differences, Jacobian, factorised Newton matrix, pivots), the
      samples filled so far and the statistics. Fences `exec` first.
    */
    void checkpoint( const ExecutionSpace& exec, io::CheckpointWriter& out, const std::string& prefix ) const
    {
        exec.fence();
        out.put_scalar( prefix + "started", static_cast<std::uint8_t>( m_started ? 1 : 0 ) );
        out.put_scalar( prefix + "samples_done", static_cast<std::int32_t>( m_samples_done ) );
        out.put_field( prefix + "workspace", m_integ.workspace, m_workspace_length );
        out.put_field( prefix + "pivots", m_integ.pivots, m_pivot_length );
        put_samples( out, prefix + "samples", m_result.samples );
        put_matrix( out, prefix + "statistics", m_result.statistics );
        const auto states = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_states );
        const std::size_t count = states.extent( 0 );
        std::vector<double> t( count ), dt( count ), h( count ), lu_c( count ), h_rho( count );
        std::vector<std::int32_t> sample( count ), order( count ), n_equal( count ), since_check( count ), stiff( count ),
            nonstiff( count );
        std::vector<std::uint8_t> flags( count * 6 );
        std::vector<std::int64_t> counters( count * stat_count );
        for ( std::size_t s = 0; s < count; ++s )
        {
            const IntegratorState& st = states( s );
            t[s] = st.t;
            dt[s] = st.dt;
            h[s] = st.h;
            lu_c[s] = st.lu_c;
            h_rho[s] = st.h_rho;
            sample[s] = st.sample;
            order[s] = st.order;
            n_equal[s] = st.n_equal_steps;
            since_check[s] = st.steps_since_check;
            stiff[s] = st.stiffness.stiff;
            nonstiff[s] = st.stiffness.nonstiff;
            const bool f[6] = { st.in_bdf, st.jacobian_valid, st.jacobian_current, st.k1_valid, st.done, st.after_rejection };
            for ( int j = 0; j < 6; ++j )
                flags[s * 6 + j] = f[j] ? 1 : 0;
            for ( int c = 0; c < stat_count; ++c )
                counters[s * stat_count + c] = st.counters[c];
        }
        out.put( prefix + "state/t", t );
        out.put( prefix + "state/dt", dt );
        out.put( prefix + "state/bdf_h", h );
        out.put( prefix + "state/lu_c", lu_c );
        out.put( prefix + "state/h_rho", h_rho );
        out.put( prefix + "state/sample", sample );
        out.put( prefix + "state/bdf_order", order );
        out.put( prefix + "state/bdf_equal_steps", n_equal );
        out.put( prefix + "state/steps_since_check", since_check );
        out.put( prefix + "state/stiff_run", stiff );
        out.put( prefix + "state/nonstiff_run", nonstiff );
        out.put( prefix + "state/flags", flags, { count, 6 } );
        out.put( prefix + "state/counters", counters, { count, std::size_t( stat_count ) } );
    }

    //! Restores what checkpoint() wrote under `prefix` into this integration, made from the same inputs.
    void restart( const ExecutionSpace& exec, const io::CheckpointReader& in, const std::string& prefix )
    {
        const bool started = in.scalar<std::uint8_t>( prefix + "started" ) != 0;
        const int done = in.scalar<std::int32_t>( prefix + "samples_done" );
        if ( done < 0 || done > m_sample_count )
            in.fail( core::detail::concat( "'", prefix, "samples_done' = ", done, "; expected 0 to ", m_sample_count ) );
        in.get_field( prefix + "workspace", m_integ.workspace, m_workspace_length );
        in.get_field( prefix + "pivots", m_integ.pivots, m_pivot_length );
        get_samples( in, prefix + "samples", m_result.samples );
        get_matrix( in, prefix + "statistics", m_result.statistics );
        const std::size_t count = static_cast<std::size_t>( m_integ.systems );
        auto states = Kokkos::create_mirror_view( Kokkos::HostSpace(), m_states );
        const auto t = column<double>( in, prefix + "state/t", count ), dt = column<double>( in, prefix + "state/dt", count ),
                   h = column<double>( in, prefix + "state/bdf_h", count ), lu_c = column<double>( in, prefix + "state/lu_c", count ),
                   h_rho = column<double>( in, prefix + "state/h_rho", count );
        const auto sample = column<std::int32_t>( in, prefix + "state/sample", count ),
                   order = column<std::int32_t>( in, prefix + "state/bdf_order", count ),
                   n_equal = column<std::int32_t>( in, prefix + "state/bdf_equal_steps", count ),
                   since_check = column<std::int32_t>( in, prefix + "state/steps_since_check", count ),
                   stiff = column<std::int32_t>( in, prefix + "state/stiff_run", count ),
                   nonstiff = column<std::int32_t>( in, prefix + "state/nonstiff_run", count );
        const auto flags = column<std::uint8_t>( in, prefix + "state/flags", count * 6 );
        const auto counters = column<std::int64_t>( in, prefix + "state/counters", count * stat_count );
        for ( std::size_t s = 0; s < count; ++s )
        {
            IntegratorState& st = states( s );
            st.t = t[s];
            st.dt = dt[s];
            st.h = h[s];
            st.lu_c = lu_c[s];
            st.h_rho = h_rho[s];
            st.sample = sample[s];
            st.order = order[s];
            st.n_equal_steps = n_equal[s];
            st.steps_since_check = since_check[s];
            st.stiffness.stiff = stiff[s];
            st.stiffness.nonstiff = nonstiff[s];
            st.in_bdf = flags[s * 6] != 0;
            st.jacobian_valid = flags[s * 6 + 1] != 0;
            st.jacobian_current = flags[s * 6 + 2] != 0;
            st.k1_valid = flags[s * 6 + 3] != 0;
            st.done = flags[s * 6 + 4] != 0;
            st.after_rejection = flags[s * 6 + 5] != 0;
            for ( int c = 0; c < stat_count; ++c )
                st.counters[c] = counters[s * stat_count + c];
            if ( st.sample < 0 || st.sample > m_sample_count || st.order < 1 || st.order > bdf_max_order_supported )
                in.fail( core::detail::concat( "system ", s, " has sample ", st.sample, " and BDF order ", st.order,
                                               "; expected a sample in [0, ", m_sample_count, "] and an order in [1, ",
                                               bdf_max_order_supported, "]" ) );
        }
        Kokkos::deep_copy( exec, m_states, states );
        exec.fence();
        m_started = started;
        m_samples_done = done;
    }

  private:
    //! Launches one leg of every system to sample `stop`.
    void launch( const ExecutionSpace& exec, int stop )
    {
        const long systems = m_integ.systems;
        ResumableIntegrate<MemorySpace, Model> functor{ m_integ, m_states, stop, !m_started };
        if ( m_on_chip )
        {
            OnChipIntegrate<MemorySpace, Model> on_chip{ m_integ, m_states, stop, !m_started, m_systems_per_team, m_scratch_level };
            const long teams = ( systems + m_systems_per_team - 1 ) / m_systems_per_team;
            Kokkos::parallel_for( "morula::ode::integrate_batched_on_chip",
                                  on_chip_policy( exec, static_cast<int>( teams > 0 ? teams : 1 ), m_systems_per_team ), on_chip );
        }
        else if ( !m_team )
            Kokkos::parallel_for( "morula::ode::integrate_batched",
                                  core::LaunchRange<ExecutionSpace, Kokkos::IndexType<long>>( exec, 0, systems ), functor );
        else
            Kokkos::parallel_for( "morula::ode::integrate_fine_grained",
                                  core::LaunchTeam<ExecutionSpace>( exec, static_cast<int>( systems ), m_team_size ), functor );
        m_started = true;
        m_samples_done = stop;
    }

    core::LaunchTeam<ExecutionSpace> on_chip_policy( const ExecutionSpace& exec, int teams, int systems_per_team ) const
    {
        core::LaunchTeam<ExecutionSpace> policy( exec, teams, systems_per_team, m_lanes );
        policy.set_scratch_size( m_scratch_level, Kokkos::PerTeam( m_scratch_bytes_per_system * systems_per_team ) );
        return policy;
    }

    /*!
      The on-chip layout's team shape: `lanes` vector lanes per system, as many systems per team as make
      about 128 threads within the scratch memory a team may have (level 0: on-chip). A host backend runs
      one system per team in its thread's scratch (level 1, host memory, where level 0 is too small).
    */
    void on_chip_geometry( const ExecutionSpace& exec, int lanes )
    {
        using Policy = core::LaunchTeam<ExecutionSpace>;
        const bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
        m_lanes = lanes;
        m_scratch_bytes_per_system = sizeof( double ) * static_cast<std::size_t>( OnChipIntegrate<MemorySpace, Model>::slice_length( m_integ.map ) );
        const std::size_t on_chip_max = static_cast<std::size_t>( Policy::scratch_size_max( 0 ) );
        const std::size_t budget = on_chip_team_budget<ExecutionSpace>();
        if ( host )
        {
            m_systems_per_team = 1;
            m_scratch_level = m_scratch_bytes_per_system <= on_chip_max ? 0 : 1;
            return;
        }
        const std::string refusal = on_chip_refusal<ExecutionSpace, MemorySpace, Model>( m_integ.map );
        if ( !refusal.empty() )
            throw core::InputError( refusal );
        int per_team = 128 / lanes;
        per_team = per_team > 1 ? per_team : 1;
        while ( per_team > 1 && m_scratch_bytes_per_system * per_team > budget )
            --per_team;
        OnChipIntegrate<MemorySpace, Model> probe_functor{ m_integ, m_states, 0, true, per_team, 0 };
        const int max_team = on_chip_policy( exec, 1, 1 ).team_size_max( probe_functor, Kokkos::ParallelForTag() );
        if ( max_team < 1 )
            throw core::InputError( core::detail::concat( "ODE solver: batched_lanes = ", lanes,
                                                          " leaves no room for a team of this kernel on this backend" ) );
        m_systems_per_team = per_team < max_team ? per_team : max_team;
    }

    template <class T>
    static std::vector<T> column( const io::CheckpointReader& in, const std::string& name, std::size_t count )
    {
        std::vector<T> v = in.get<T>( name );
        if ( v.size() != count )
            in.fail( core::detail::concat( "'", name, "' has ", v.size(), " values; this integration needs ", count ) );
        return v;
    }

    // (systems, samples, saved) as one array of that shape, LayoutLeft order (system fastest).
    static void put_samples( io::CheckpointWriter& out, const std::string& name,
                             const Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace>& v )
    {
        const auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), v );
        std::vector<double> values( host.data(), host.data() + host.size() );
        out.put( name, values, { v.extent( 2 ), v.extent( 1 ), v.extent( 0 ) } );
    }
    static void get_samples( const io::CheckpointReader& in, const std::string& name,
                             const Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace>& v )
    {
        const std::vector<std::size_t> shape{ v.extent( 2 ), v.extent( 1 ), v.extent( 0 ) };
        if ( in.dims( name ) != shape )
            in.fail( core::detail::concat( "'", name, "' is not ", v.extent( 0 ), " systems x ", v.extent( 1 ),
                                           " samples x ", v.extent( 2 ), " saved species" ) );
        const auto values = in.get<double>( name );
        auto host = Kokkos::create_mirror_view( Kokkos::HostSpace(), v );
        for ( std::size_t i = 0; i < values.size(); ++i )
            host.data()[i] = values[i];
        Kokkos::deep_copy( v, host );
    }
    static void put_matrix( io::CheckpointWriter& out, const std::string& name,
                            const Kokkos::View<long**, Kokkos::LayoutLeft, MemorySpace>& v )
    {
        const auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), v );
        std::vector<std::int64_t> values( host.size() );
        for ( std::size_t i = 0; i < values.size(); ++i )
            values[i] = host.data()[i];
        out.put( name, values, { v.extent( 1 ), v.extent( 0 ) } );
    }
    static void get_matrix( const io::CheckpointReader& in, const std::string& name,
                            const Kokkos::View<long**, Kokkos::LayoutLeft, MemorySpace>& v )
    {
        const std::vector<std::size_t> shape{ v.extent( 1 ), v.extent( 0 ) };
        if ( in.dims( name ) != shape )
            in.fail( core::detail::concat( "'", name, "' is not ", v.extent( 0 ), " systems x ", v.extent( 1 ), " counters" ) );
        const auto values = in.get<std::int64_t>( name );
        auto host = Kokkos::create_mirror_view( Kokkos::HostSpace(), v );
        for ( std::size_t i = 0; i < values.size(); ++i )
            host.data()[i] = values[i];
        Kokkos::deep_copy( v, host );
    }

    SystemIntegrator<MemorySpace, Model> m_integ;
    Kokkos::View<IntegratorState*, MemorySpace> m_states;
    OdeResult<MemorySpace> m_result;
    std::size_t m_workspace_length = 0, m_pivot_length = 0;
    bool m_team = false;
    bool m_on_chip = false;
    int m_lanes = 1, m_systems_per_team = 1, m_scratch_level = 0;
    std::size_t m_scratch_bytes_per_system = 0;
    bool m_resumable = false;
    bool m_started = false;
    int m_team_size = 1;
    int m_sample_count = 0;
    int m_samples_done = 0;
};

} // namespace morula::ode::detail

#endif
