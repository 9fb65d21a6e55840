/*!
  \file DeviceWideDriver.hpp
  \brief Runs the device-wide RKF45 phase of one system: runs of attempts launched (or replayed as one
         captured graph) with the step decided on the device, the host reading the status between runs.
*/
#ifndef MORULA_ODE_DETAIL_DEVICEWIDEDRIVER_HPP
#define MORULA_ODE_DETAIL_DEVICEWIDEDRIVER_HPP

#include <morula/core/LaunchPolicy.hpp>
#include <morula/core/StepGraph.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/DeviceWideControl.hpp>
#include <morula/ode/detail/DeviceWideRkf45.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace morula::ode::detail
{

/*!
  The buffers, kernels and captured graphs of the device-wide mode, kept from one solve to the next so
  that a repeated solve replays the graphs it captured before (capturing costs about one plain run plus
  the instantiation). The graphs freeze the buffers' addresses and the sample and saved-species counts:
  any change of those reallocates and invalidates them.
*/
template <class ExecutionSpace, class MemorySpace>
class DeviceWideDriver
{
  public:
    using View1 = Kokkos::View<double*, MemorySpace>;
    using Rows = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>;
    using Samples = Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace>;
    //! The longest run of attempts between two status reads when the count is chosen automatically.
    static constexpr int max_attempts = 32;

    DeviceWideDriver( const MassActionSystem<MemorySpace>& system, const SolverOptions& options,
                      const Kokkos::View<double*, MemorySpace>& atol )
        : m_system( system )
        , m_options( options )
        , m_atol( atol )
    {
        const int n = system.species;
        m_states = Rows( "morula::ode::dw::states", 2, n );
        m_stages = Rows( "morula::ode::dw::stages", dw_stage_rows, n );
        m_perturbed = View1( "morula::ode::dw::perturbed", n );
        m_k = View1( "morula::ode::dw::k", system.reactions );
        m_status = Kokkos::View<DeviceWideStatus*, MemorySpace>( "morula::ode::dw::status", 1 );
        m_host_status = Kokkos::View<DeviceWideStatus*, Kokkos::HostSpace>( "morula::ode::dw::status_host", 1 );
        m_q = Kokkos::View<double, MemorySpace>( "morula::ode::dw::q" );
        m_den = Kokkos::View<double, MemorySpace>( "morula::ode::dw::den" );
        m_num = Kokkos::View<double, MemorySpace>( "morula::ode::dw::num" );
    }

    /*!
      RKF45 from (t_start, x0) with rate constants k through `times`, samples of `saved` into the driver's
      sample buffer (samples()). Returns the final status: stopped with all samples reached, a handover
      to BDF, max_steps or step_too_small; the state is state().
    */
    template <class X0, class K>
    DeviceWideStatus run( const ExecutionSpace& exec, const X0& x0, const K& k, const std::vector<double>& times,
                          const std::vector<int>& saved, double t_start )
    {
        start( exec, x0, k, times, saved, t_start );
        return advance( exec, static_cast<int>( times.size() ) );
    }

    //! Sets up the integration run() does, paused before its first attempt.
    template <class X0, class K>
    void start( const ExecutionSpace& exec, const X0& x0, const K& k, const std::vector<double>& times,
                const std::vector<int>& saved, double t_start )
    {
        const int nsamples = static_cast<int>( times.size() ), nsaved = static_cast<int>( saved.size() );
        if ( m_samples.extent( 1 ) != times.size() || m_samples.extent( 2 ) != saved.size() )
        {
            // The graphs hold the sample buffer's address and both counts.
            m_samples = Samples( Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::dw::samples" ), 1,
                                 nsamples, nsaved );
            m_times = View1( Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::dw::times" ), nsamples );
            m_saved = Kokkos::View<int*, MemorySpace>( Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::dw::saved" ),
                                                       nsaved );
            for ( auto& g : m_graphs )
                g.second.invalidate();
            build_kernels();
        }
        m_host_times = times;
        Kokkos::deep_copy( exec, m_samples, std::numeric_limits<double>::quiet_NaN() );
        Kokkos::deep_copy( exec, m_times, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                              times.data(), times.size() ) );
        Kokkos::deep_copy( exec, m_saved, Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                              saved.data(), saved.size() ) );
        Kokkos::deep_copy( exec, Kokkos::subview( m_states, 0, Kokkos::ALL ), x0 );
        Kokkos::deep_copy( exec, m_k, k );

        DeviceWideStatus& s = m_host_status( 0 );
        s = DeviceWideStatus{};
        s.t = t_start;
        s.dt = m_options.initial_step;
        while ( s.sample < nsamples && times[s.sample] <= t_start )
            ++s.sample;
        s.record_end = s.sample;
        s.handover = m_options.method == Method::bdf ? 1 : 0;
        s.stopped = 1; // paused: advance() prepares the first attempt
        Kokkos::deep_copy( exec, m_status, m_host_status );
        // Samples at t_start are written by the first attempt, or here when there will be none.
        if ( !paused() && s.record_begin < s.record_end )
            Kokkos::parallel_for( "morula::ode::dw::record", core::LaunchRange<ExecutionSpace>( exec, 0, nsaved ), m_record );
        exec.fence();
    }

    //! Whether the integration is paused at a sample (not finished, handed over or failed).
    bool paused() const
    {
        const DeviceWideStatus& s = m_host_status( 0 );
        return s.stopped && !s.handover && s.status == 0 && s.sample < m_params.samples;
    }

    //! Continues until the samples before `stop` are reached, the handover, the end or an error.
    DeviceWideStatus advance( const ExecutionSpace& exec, int stop )
    {
        DeviceWideStatus& s = m_host_status( 0 );
        if ( !paused() || s.sample >= stop )
            return s;
        s.stopped = 0;
        s.stop_sample = stop;
        device_wide_prepare( s, m_params, m_host_times.data() );
        Kokkos::deep_copy( exec, m_status, m_host_status );

        while ( !s.stopped )
        {
            const int attempts = attempts_for( s, m_host_times );
            if ( m_options.device_wide_graphs && m_kernels_ran )
            {
                auto& graph = m_graphs[attempts];
                if ( !graph.recorded() )
                    graph.record( [this, attempts]( const ExecutionSpace& e ) { enqueue( e, attempts ); } );
                graph.replay( exec );
            }
            else
                enqueue( exec, attempts ); // also the plain run every kernel needs before a capture
            m_kernels_ran = true;
            ++m_runs;
            Kokkos::deep_copy( exec, m_host_status, m_status );
            exec.fence();
        }
        if ( s.record_begin < s.record_end )
            Kokkos::parallel_for( "morula::ode::dw::record", core::LaunchRange<ExecutionSpace>( exec, 0, static_cast<int>( m_saved.extent( 0 ) ) ),
                                  m_record );
        exec.fence();
        return s;
    }

    //! The status after the last advance (on the host).
    const DeviceWideStatus& status() const { return m_host_status( 0 ); }

    /*!
      Writes the RKF45 phase's state under `prefix`: the status, both state buffers, the stage rows (k1
      survives between attempts), the rate constants and the samples. The reduction scalars are not
      state: each attempt writes them before its control reads them (and attempts launched after the
      stop, whose number depends on where runs paused, write the reductions' identity).
    */
    void checkpoint( const ExecutionSpace& exec, io::CheckpointWriter& out, const std::string& prefix ) const
    {
        exec.fence();
        const DeviceWideStatus& s = m_host_status( 0 );
        out.put( prefix + "status/times", std::vector<double>{ s.t, s.dt, s.h } );
        out.put( prefix + "status/counters", std::vector<std::int64_t>{ s.steps, s.rejected, s.rhs_evaluations } );
        out.put( prefix + "status/flags",
                 std::vector<std::int32_t>{ s.sample, s.record_begin, s.record_end, s.clipped, s.current, s.k1_row, s.k1_valid,
                                            s.since_check, s.stiff, s.nonstiff, s.stopped, s.handover, s.status } );
        out.put_field( prefix + "states", m_states, m_states.extent( 0 ) );
        out.put_field( prefix + "stages", m_stages, m_stages.extent( 0 ) );
        out.put_field( prefix + "perturbed", m_perturbed, m_perturbed.extent( 0 ) );
        out.put_field( prefix + "rate_constants", m_k, m_k.extent( 0 ) );
        const auto samples = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_samples );
        out.put( prefix + "samples", std::vector<double>( samples.data(), samples.data() + samples.size() ),
                 { m_samples.extent( 2 ), m_samples.extent( 1 ) } );

    }

    //! Restores what checkpoint() wrote into a driver start()ed with the same inputs.
    void restart( const ExecutionSpace& exec, const io::CheckpointReader& in, const std::string& prefix )
    {
        const auto times = fixed<double>( in, prefix + "status/times", 3 );
        const auto counters = fixed<std::int64_t>( in, prefix + "status/counters", 3 );
        const auto flags = fixed<std::int32_t>( in, prefix + "status/flags", 13 );
        DeviceWideStatus& s = m_host_status( 0 );
        s.t = times[0];
        s.dt = times[1];
        s.h = times[2];
        s.steps = counters[0];
        s.rejected = counters[1];
        s.rhs_evaluations = counters[2];
        int* f[13] = { &s.sample, &s.record_begin, &s.record_end, &s.clipped, &s.current, &s.k1_row, &s.k1_valid,
                       &s.since_check, &s.stiff, &s.nonstiff, &s.stopped, &s.handover, &s.status };
        for ( int i = 0; i < 13; ++i )
            *f[i] = flags[i];
        s.stop_sample = s.sample; // where the leg that wrote it paused; the next advance() sets its own
        if ( s.sample < 0 || s.sample > m_params.samples || ( s.current != 0 && s.current != 1 ) )
            in.fail( core::detail::concat( "'", prefix, "status/flags' holds sample ", s.sample, " and state buffer ", s.current,
                                           "; expected a sample in [0, ", m_params.samples, "] and a buffer 0 or 1" ) );
        in.get_field( prefix + "states", m_states, m_states.extent( 0 ) );
        in.get_field( prefix + "stages", m_stages, m_stages.extent( 0 ) );
        in.get_field( prefix + "perturbed", m_perturbed, m_perturbed.extent( 0 ) );
        in.get_field( prefix + "rate_constants", m_k, m_k.extent( 0 ) );
        const std::vector<std::size_t> shape{ m_samples.extent( 2 ), m_samples.extent( 1 ) };
        if ( in.dims( prefix + "samples" ) != shape )
            in.fail( core::detail::concat( "'", prefix, "samples' is not ", m_samples.extent( 1 ), " samples x ",
                                           m_samples.extent( 2 ), " saved species" ) );
        const auto samples = in.get<double>( prefix + "samples" );
        auto host = Kokkos::create_mirror_view( Kokkos::HostSpace(), m_samples );
        for ( std::size_t i = 0; i < samples.size(); ++i )
            host.data()[i] = samples[i];
        Kokkos::deep_copy( exec, m_samples, host );

        Kokkos::deep_copy( exec, m_status, m_host_status );
        exec.fence();
    }

    //! (1, samples, saved) as written by the last run; NaN where no sample was reached.
    const Samples& samples() const { return m_samples; }
    //! The state reached, given the final status's `current`.
    auto state( const DeviceWideStatus& s ) const { return Kokkos::subview( m_states, s.current, Kokkos::ALL ); }
    const View1& rate_constants() const { return m_k; }
    //! Runs of attempts launched so far (each followed by one status read).
    long runs() const { return m_runs; }
    //! Graph captures so far (0 where replay relaunches).
    long long captures() const
    {
        long long c = 0;
        for ( const auto& g : m_graphs )
            c += g.second.captures();
        return c;
    }

    //! Enqueues `attempts` RKF45 attempts; reads and writes only device data (replayable as a graph).
    void enqueue( const ExecutionSpace& exec, int attempts ) const
    {
        using Range = core::LaunchRange<ExecutionSpace>;
        const int n = m_system.species;
        const int begin_range = std::max( n, static_cast<int>( m_saved.extent( 0 ) ) );
        for ( int a = 0; a < attempts; ++a )
        {
            over_species( exec, "morula::ode::dw::begin", begin_range, m_begin );
            for ( int r = 0; r < 4; ++r )
                over_species( exec, "morula::ode::dw::stage", n, m_stage[r] );
            if ( m_params.paper )
                over_species( exec, "morula::ode::dw::last_stage_error", n, m_last, Kokkos::Max<double, MemorySpace>( m_q ) );
            else
                over_species( exec, "morula::ode::dw::last_stage_error", n, m_last, m_q );
            if ( m_params.automatic )
            {
                Kokkos::parallel_reduce( "morula::ode::dw::perturb", Range( exec, 0, n ), m_perturb, m_den );
                over_species( exec, "morula::ode::dw::check_rhs", n, m_check, m_num );
            }
            Kokkos::parallel_for( "morula::ode::dw::control", Range( exec, 0, 1 ), m_control );
        }
    }

    //! Threads sharing one species' terms (SolverOptions::device_wide_lanes; 1: one thread per species).
    int lanes() const
    {
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecutionSpace::memory_space>::accessible;
        const int wanted = m_options.device_wide_lanes > 0 ? m_options.device_wide_lanes : ( host ? 1 : 8 );
        return std::min( wanted, static_cast<int>( core::LaunchTeam<ExecutionSpace>::vector_length_max() ) );
    }

  private:
    template <class T>
    static std::vector<T> fixed( const io::CheckpointReader& in, const std::string& name, std::size_t count )
    {
        std::vector<T> v = in.get<T>( name );
        if ( v.size() != count )
            in.fail( core::detail::concat( "'", name, "' has ", v.size(), " values; expected ", count ) );
        return v;
    }

    // One species per thread (range) or per team thread with its terms over vector lanes; `result...` is
    // the reduction's target when the kernel reduces.
    template <class Kernel, class... Result>
    void over_species( const ExecutionSpace& exec, const char* label, int range, const Kernel& kernel,
                       const Result&... result ) const
    {
        const int vector = lanes();
        if ( vector == 1 )
        {
            if constexpr ( sizeof...( Result ) == 0 )
                Kokkos::parallel_for( label, core::LaunchRange<ExecutionSpace>( exec, 0, range ), kernel );
            else
                Kokkos::parallel_reduce( label, core::LaunchRange<ExecutionSpace>( exec, 0, range ), kernel, result... );
            return;
        }
        using Policy = core::LaunchTeam<ExecutionSpace>;
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecutionSpace::memory_space>::accessible;
        // 128 threads per block on a GPU; a host team is one thread.
        const int species_per_team = host ? 1 : std::max( 1, 128 / vector );
        const Policy policy( exec, ( range + species_per_team - 1 ) / species_per_team, species_per_team, vector );
        if constexpr ( sizeof...( Result ) == 0 )
            Kokkos::parallel_for( label, policy, OnVectorLanes<typename Policy::member_type, Kernel>{ kernel, range } );
        else
            Kokkos::parallel_reduce( label, policy, OnVectorLanesReduce<typename Policy::member_type, Kernel>{ kernel, range },
                                     result... );
    }

    //! Attempts before the next status read: fixed by the option, or about the steps left at the current
    //! step size (a power of two, so a few graphs serve every run), at most max_attempts.
    int attempts_for( const DeviceWideStatus& s, const std::vector<double>& times ) const
    {
        if ( m_options.device_wide_attempts_per_sync > 0 )
            return m_options.device_wide_attempts_per_sync;
        const double left = ( times.back() - s.t ) / s.dt;
        int attempts = 1;
        while ( attempts < max_attempts && 2.0 * attempts <= left + 1.0 )
            attempts *= 2;
        return attempts;
    }

    void build_kernels()
    {
        const int n = m_system.species;
        m_params.n = n;
        m_params.samples = static_cast<int>( m_samples.extent( 1 ) );
        m_params.paper = m_options.error_norm == ErrorNorm::paper;
        m_params.automatic = m_options.method == Method::automatic;
        m_params.stiffness_threshold = m_options.stiffness_threshold;
        m_params.max_steps = m_options.max_steps;

        DeviceWideBuffers b;
        b.status = m_status.data();
        b.states = m_states.data();
        b.stages = m_stages.data();
        b.n = n;
        const MassActionRates rates( m_system, m_k );

        m_begin = DeviceWideBegin{ b, rates, m_samples.data(), m_saved.data(), m_params.samples,
                                   static_cast<int>( m_saved.extent( 0 ) ) };
        m_record = DeviceWideRecord{ b, m_samples.data(), m_saved.data(), m_params.samples };
        for ( int r = 0; r < 4; ++r )
        {
            m_stage[r].b = b;
            m_stage[r].rates = rates;
            m_stage[r].row = r + 1;
            for ( int l = 0; l < 5; ++l )
                m_stage[r].a[l] = fehlberg_a( r + 1, l );
        }
        m_last.b = b;
        m_last.rates = rates;
        m_last.atol = m_atol.data();
        m_last.atol_count = static_cast<int>( m_atol.extent( 0 ) );
        m_last.rtol = m_options.relative_tolerance;
        m_last.paper = m_params.paper;
        for ( int l = 0; l < 5; ++l )
            m_last.a[l] = fehlberg_a( 5, l );
        m_perturb = DeviceWidePerturb{ b, m_params, m_perturbed.data() };
        m_check = DeviceWideCheckRhs{ b, m_params, rates, m_perturbed.data(), m_den.data() };
        m_control = DeviceWideControlKernel{ m_status.data(), m_params, m_times.data(), m_q.data(), m_den.data(), m_num.data() };
    }

    MassActionSystem<MemorySpace> m_system;
    SolverOptions m_options;
    Kokkos::View<double*, MemorySpace> m_atol;
    Rows m_states, m_stages;
    View1 m_perturbed, m_k, m_times;
    Kokkos::View<int*, MemorySpace> m_saved;
    Samples m_samples;
    Kokkos::View<DeviceWideStatus*, MemorySpace> m_status;
    Kokkos::View<DeviceWideStatus*, Kokkos::HostSpace> m_host_status;
    Kokkos::View<double, MemorySpace> m_q, m_den, m_num;

    DeviceWideParameters m_params;
    DeviceWideBegin m_begin;
    DeviceWideRecord m_record;
    DeviceWideStage m_stage[4];
    DeviceWideLastStageError m_last;
    DeviceWidePerturb m_perturb;
    DeviceWideCheckRhs m_check;
    DeviceWideControlKernel m_control;

    std::vector<double> m_host_times;
    std::map<int, core::StepGraph<ExecutionSpace>> m_graphs;
    bool m_kernels_ran = false;
    long m_runs = 0;
};

} // namespace morula::ode::detail

#endif
