/*!
  \file DeviceWideIntegration.hpp
  \brief The device-wide mode's whole integration of one system as an object: the RKF45 phase over the
         device (DeviceWideDriver) and, once the system turns stiff, the team integrator in BDF from the
         state reached; advanced to a sample, checkpointed and restarted in either phase.
*/
#ifndef MORULA_ODE_DETAIL_DEVICEWIDEINTEGRATION_HPP
#define MORULA_ODE_DETAIL_DEVICEWIDEINTEGRATION_HPP

#include <morula/core/LaunchPolicy.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/OdeResult.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/BatchIntegration.hpp>
#include <morula/ode/detail/DeviceWideDriver.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace morula::ode::detail
{

template <class ExecutionSpace, class MemorySpace>
class DeviceWideIntegration
{
  public:
    using System = MassActionSystem<MemorySpace>;
    using Driver = DeviceWideDriver<ExecutionSpace, MemorySpace>;
    using Tail = BatchIntegration<ExecutionSpace, MemorySpace, System>;

    //! Starts the RKF45 phase from (t_start, x0) with rate constants k (Views of one system's values).
    template <class X0, class K>
    DeviceWideIntegration( const ExecutionSpace& exec, std::shared_ptr<Driver> driver, const System& system,
                           const SolverOptions& options, const DeviceOptions& device_options,
                           const Kokkos::View<double*, MemorySpace>& atol, const X0& x0, const K& k,
                           const std::vector<double>& times, const std::vector<int>& saved, double t_start, bool resumable )
        : m_driver( std::move( driver ) )
        , m_system( system )
        , m_options( options )
        , m_device( device_options )
        , m_atol( atol )
        , m_times( times )
        , m_saved( saved )
        , m_resumable( resumable )
    {
        m_driver->start( exec, x0, k, times, saved, t_start );
    }

    //! Integrates until the samples before `stop` are filled (or the integration ended).
    void advance( const ExecutionSpace& exec, int stop )
    {
        const int nsamples = static_cast<int>( m_times.size() );
        stop = std::min( stop, nsamples );
        if ( !m_tail )
        {
            const DeviceWideStatus st = m_driver->advance( exec, stop );
            if ( st.handover && st.sample < nsamples )
                hand_over( exec, st );
            else if ( st.status == static_cast<int>( SolverStatus::success ) && !st.handover && st.sample >= nsamples )
            {
                double bad = 0.0;
                Kokkos::parallel_reduce( "morula::ode::dw::finite", core::LaunchRange<ExecutionSpace>( exec, 0, m_system.species ),
                                         NonFiniteCount<MemorySpace>{ m_driver->state( st ) }, bad );
                m_not_finite = bad > 0.0;
            }
        }
        if ( m_tail )
        {
            if ( m_resumable )
                m_tail->advance( exec, stop - m_handover_sample );
            else
                m_tail->run_to_end( exec );
        }
        m_samples_done = std::max( m_samples_done, stop );
    }

    int samples_done() const { return m_samples_done; }

    //! The samples so far (NaN where not reached) and the statistics, in fresh Views.
    OdeResult<MemorySpace> result( const ExecutionSpace& exec ) const
    {
        const int nsamples = static_cast<int>( m_times.size() );
        OdeResult<MemorySpace> result;
        result.samples = Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::samples" ), 1, nsamples, m_saved.size() );
        result.statistics = Kokkos::View<long**, Kokkos::LayoutLeft, MemorySpace>( "morula::ode::statistics", 1, stat_count );
        Kokkos::deep_copy( exec, result.samples, m_driver->samples() );
        const DeviceWideStatus& st = m_driver->status();
        long c[stat_count] = {};
        c[stat_steps] = st.steps;
        c[stat_rejected] = st.rejected;
        c[stat_rkf_steps] = st.steps;
        c[stat_rhs_evaluations] = st.rhs_evaluations;
        SolverStatus status = static_cast<SolverStatus>( st.status );
        if ( m_not_finite )
            status = SolverStatus::not_finite;
        if ( m_tail )
        {
            if ( m_options.method == Method::automatic )
                ++c[stat_switches_to_bdf];
            const auto& tail = m_tail->result();
            Kokkos::deep_copy( exec,
                               Kokkos::subview( result.samples, Kokkos::ALL, std::make_pair( m_handover_sample, nsamples ), Kokkos::ALL ),
                               tail.samples );
            auto tail_stats = Kokkos::create_mirror_view( tail.statistics );
            Kokkos::deep_copy( exec, tail_stats, tail.statistics );
            exec.fence();
            for ( int col = 1; col < stat_count; ++col )
                c[col] += tail_stats( 0, col );
            status = static_cast<SolverStatus>( tail_stats( 0, stat_status ) );
        }
        c[stat_status] = static_cast<long>( status );
        auto stats = Kokkos::create_mirror_view( result.statistics );
        for ( int col = 0; col < stat_count; ++col )
            stats( 0, col ) = c[col];
        Kokkos::deep_copy( exec, result.statistics, stats );
        exec.fence();
        return result;
    }

    //! The RKF45 phase under "device_wide/", the team phase (once handed over) under "team/".
    void checkpoint( const ExecutionSpace& exec, io::CheckpointWriter& out ) const
    {
        out.put_scalar( "device_wide/handed_over", static_cast<std::uint8_t>( m_tail ? 1 : 0 ) );
        out.put_scalar( "device_wide/not_finite", static_cast<std::uint8_t>( m_not_finite ? 1 : 0 ) );
        m_driver->checkpoint( exec, out, "device_wide/" );
        if ( m_tail )
            m_tail->checkpoint( exec, out, "team/" );
    }

    void restart( const ExecutionSpace& exec, const io::CheckpointReader& in, int samples_done )
    {
        m_driver->restart( exec, in, "device_wide/" );
        m_not_finite = in.scalar<std::uint8_t>( "device_wide/not_finite" ) != 0;
        m_tail.reset();
        if ( in.scalar<std::uint8_t>( "device_wide/handed_over" ) != 0 )
        {
            const DeviceWideStatus& st = m_driver->status();
            if ( !st.handover || st.sample >= static_cast<int>( m_times.size() ) )
                in.fail( "'device_wide/handed_over' is set but the RKF45 phase did not hand the system over" );
            hand_over( exec, st );
            m_tail->restart( exec, in, "team/" );
        }
        m_samples_done = samples_done;
    }

  private:
    //! Continues from the RKF45 phase's (t, x) in the team integrator, in BDF from the step RKF45 last
    //! proposed, for the samples not reached yet.
    void hand_over( const ExecutionSpace& exec, const DeviceWideStatus& st )
    {
        const int n = m_system.species, m = m_system.reactions;
        m_handover_sample = st.sample;
        Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> x0_team( "morula::ode::dw::x0", 1, n );
        Kokkos::deep_copy( exec, Kokkos::subview( x0_team, 0, Kokkos::ALL ), m_driver->state( st ) );
        Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> k0( "morula::ode::dw::k0", 1, m );
        Kokkos::deep_copy( exec, Kokkos::subview( k0, 0, Kokkos::ALL ), m_driver->rate_constants() );
        DeviceOptions team_options = m_device;
        team_options.start_in_bdf = true;
        team_options.initial_step = m_options.bdf_fixed_step > 0.0 ? m_options.bdf_fixed_step : st.dt;
        team_options.max_steps = std::max( 1L, m_options.max_steps - st.steps - st.rejected );
        const std::vector<double> rest( m_times.begin() + st.sample, m_times.end() );
        m_tail = std::make_unique<Tail>( exec, m_system, team_options, m_atol, m_options.team_size, true, x0_team, k0,
                                         shared_sample_times<MemorySpace>( rest ), m_saved, st.t, m_resumable );
    }

    std::shared_ptr<Driver> m_driver;
    System m_system;
    SolverOptions m_options;
    DeviceOptions m_device;
    Kokkos::View<double*, MemorySpace> m_atol;
    std::vector<double> m_times;
    std::vector<int> m_saved;
    bool m_resumable = false;
    bool m_not_finite = false;
    int m_handover_sample = 0;
    int m_samples_done = 0;
    std::unique_ptr<Tail> m_tail;
};

} // namespace morula::ode::detail

#endif
