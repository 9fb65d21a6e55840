// The device-wide mode's host-driven RKF45 loop as it was before issue #26 moved the step decision onto
// the device: one kernel per stage, the error norm reduced to a host value every attempt, the host
// deciding the step, t, the samples and the stiffness checks. Kept verbatim (kernels included) as the
// reference the device-side control must reproduce bit for bit. It stops where the old code handed
// over to the team integrator and returns the state it would have handed over.
#ifndef MORULA_TESTS_ODE_DEVICEWIDEREFERENCE_HPP
#define MORULA_TESTS_ODE_DEVICEWIDEREFERENCE_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/OdeSolver.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/DeviceWideRkf45.hpp>
#include <morula/ode/detail/Rkf45.hpp>
#include <morula/ode/detail/StiffnessDetection.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace morula::test::reference
{
using ode::detail::fehlberg_b4;
using ode::detail::fehlberg_b5;
using ode::detail::integer_power;
using ode::MassActionSystem;

/*!
  stages(s, i) = f_i(y) with y = x + dt sum_{l<s} a_l stages(l, .). With s = 0 (or dt = 0) it is f(x).
*/
template <class MemorySpace>
struct StageRhs
{
    // Raw device pointers instead of Views: the functor stays far below the size (512 bytes on CUDA)
    // above which Kokkos launches through constant memory with a host synchronisation per launch -
    // measured at ~20 us per stage with the Views of a whole MassActionSystem captured.
    const int* term_offsets;
    const int* term_reaction;
    const double* term_coefficient;
    const int* reactant_offsets;
    const int* reactant_species;
    const int* reactant_order;
    const double* k;
    const double* x;
    double* stages; // row-major (7, n): k1..k6 and a scratch row
    int n = 0;
    int stage = 0;  // the row written
    int terms = 0;  // how many earlier rows enter y
    double a[5] = { 0, 0, 0, 0, 0 };
    double dt = 0.0;

    StageRhs( const MassActionSystem<MemorySpace>& sys, const Kokkos::View<double*, MemorySpace>& k_,
              const Kokkos::View<double*, MemorySpace>& x_, const Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>& stages_,
              int stage_, int terms_, const double* a_, double dt_ )
        : term_offsets( sys.species_term_offsets.data() )
        , term_reaction( sys.species_term_reaction.data() )
        , term_coefficient( sys.species_term_coefficient.data() )
        , reactant_offsets( sys.reactant_offsets.data() )
        , reactant_species( sys.reactant_species.data() )
        , reactant_order( sys.reactant_order.data() )
        , k( k_.data() )
        , x( x_.data() )
        , stages( stages_.data() )
        , n( sys.species )
        , stage( stage_ )
        , terms( terms_ )
        , dt( dt_ )
    {
        for ( int l = 0; l < terms; ++l )
            a[l] = a_[l];
    }

    KOKKOS_INLINE_FUNCTION double stage_value( int q ) const
    {
        double y = x[q];
        if ( terms > 0 )
        {
            double s = 0.0;
            for ( int l = 0; l < terms; ++l )
                s += a[l] * stages[l * n + q];
            y += dt * s;
        }
        return y;
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const
    {
        double sum = 0.0;
        for ( int t = term_offsets[i]; t < term_offsets[i + 1]; ++t )
        {
            const int r = term_reaction[t];
            double v = k[r];
            for ( int p = reactant_offsets[r]; p < reactant_offsets[r + 1]; ++p )
                v *= integer_power( stage_value( reactant_species[p] ), reactant_order[p] );
            sum += term_coefficient[t] * v;
        }
        stages[stage * n + i] = sum;
    }
};

/*!
  u (4th order) and w (5th order) from the stages; the kept one (u for the paper's rule, w for the mixed
  norm) goes to `next`. Reduces max_j ER_j / eps_j (paper) or sum_j (|w - u| / sc_j)^2 (mixed).
*/
template <class MemorySpace>
struct StepError
{
    Kokkos::View<const double*, MemorySpace> x;
    Kokkos::View<const double**, Kokkos::LayoutRight, MemorySpace> stages;
    Kokkos::View<double*, MemorySpace> next;
    Kokkos::View<const double*, MemorySpace> atol;
    double rtol = 0.0;
    double dt = 0.0;
    bool paper = false;

    KOKKOS_INLINE_FUNCTION void operator()( const int j, double& acc ) const
    {
        double du = 0.0, dw = 0.0;
        for ( int l = 0; l < 6; ++l )
        {
            du += fehlberg_b4( l ) * stages( l, j );
            dw += fehlberg_b5( l ) * stages( l, j );
        }
        const double u = x( j ) + dt * du, w = x( j ) + dt * dw;
        const double e = compat::fabs( w - u );
        const double tol = atol( atol.extent( 0 ) == 1 ? 0 : j );
        if ( paper )
        {
            next( j ) = u;
            const double v = e / dt / tol;
            acc = v > acc ? v : acc;
        }
        else
        {
            next( j ) = w;
            const double ax = compat::fabs( x( j ) ), aw = compat::fabs( w );
            const double r = e / ( tol + rtol * ( ax > aw ? ax : aw ) );
            acc += r * r;
        }
    }
};

//! y = x + e with e = w - u of the last step's stages; reduces |e|^2 (the stiffness estimate's denominator).
template <class MemorySpace>
struct PerturbByError
{
    Kokkos::View<const double*, MemorySpace> x;
    Kokkos::View<const double**, Kokkos::LayoutRight, MemorySpace> stages;
    Kokkos::View<double*, MemorySpace> y;
    double dt = 0.0;

    KOKKOS_INLINE_FUNCTION void operator()( const int j, double& acc ) const
    {
        double d = 0.0;
        for ( int l = 0; l < 6; ++l )
            d += ( fehlberg_b5( l ) - fehlberg_b4( l ) ) * stages( l, j );
        const double e = dt * d;
        y( j ) = x( j ) + e;
        acc += e * e;
    }
};

//! |stages(a) - stages(b)|^2.
template <class MemorySpace>
struct RowDistance
{
    Kokkos::View<const double**, Kokkos::LayoutRight, MemorySpace> stages;
    int a = 0, b = 0;
    KOKKOS_INLINE_FUNCTION void operator()( const int j, double& acc ) const
    {
        const double d = stages( a, j ) - stages( b, j );
        acc += d * d;
    }
};

//! output(0, sample, j) = x(saved(j)).
template <class MemorySpace>
struct RecordSample
{
    Kokkos::View<const double*, MemorySpace> x;
    Kokkos::View<const int*, MemorySpace> saved;
    Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace> output;
    int sample = 0;
    KOKKOS_INLINE_FUNCTION void operator()( const int j ) const { output( 0, sample, j ) = x( saved( j ) ); }
};


//! Where the old loop stopped: everything the team integrator would have been handed, and the samples.
struct Outcome
{
    std::vector<double> samples; // (samples x saved), sample fastest; NaN where not reached
    std::vector<double> x;
    double t = 0.0, dt = 0.0;
    long steps = 0, rejected = 0, rhs_evaluations = 0;
    int sample = 0;
    bool handover = false;
    ode::SolverStatus status = ode::SolverStatus::success;
};

template <class ExecutionSpace>
Outcome device_wide( const MassActionSystem<typename ExecutionSpace::memory_space>& m_system, const ode::SolverOptions& m_options,
                     const std::vector<double>& times, const std::vector<int>& saved, double t_start = 0.0 )
{
    using namespace morula::ode;
    using MemorySpace = typename ExecutionSpace::memory_space;
    ExecutionSpace exec;
    Kokkos::View<double*, MemorySpace> m_atol( "atol", m_options.absolute_tolerance.size() );
    Kokkos::deep_copy( m_atol, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                   m_options.absolute_tolerance.data(), m_options.absolute_tolerance.size() ) );
    Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> initial_states( "x0", 1, m_system.species );
    Kokkos::deep_copy( Kokkos::subview( initial_states, 0, Kokkos::ALL ), m_system.initial_state );
    Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace> rate_constants;
    Kokkos::View<int*, MemorySpace> saved_view( "saved", saved.size() );
    Kokkos::deep_copy( saved_view, Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                       saved.data(), saved.size() ) );
        using View1 = Kokkos::View<double*, MemorySpace>;
        using Stages = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>;
        const int n = m_system.species, m = m_system.reactions;
        const int nsamples = static_cast<int>( times.size() );
        const int nsaved = static_cast<int>( saved.size() );
        OdeResult<MemorySpace> result;
        result.samples = Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::samples" ), 1, nsamples, nsaved );
        Kokkos::deep_copy( exec, result.samples, std::numeric_limits<double>::quiet_NaN() );
        result.statistics = Kokkos::View<long**, Kokkos::LayoutLeft, MemorySpace>( "morula::ode::statistics", 1, stat_count );

        View1 x( "morula::ode::dw::x", n ), next( "morula::ode::dw::next", n ), perturbed( "morula::ode::dw::perturbed", n );
        Stages stages( "morula::ode::dw::stages", 7, n );
        View1 k( Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::dw::k" ), m );
        Kokkos::deep_copy( exec, x, Kokkos::subview( initial_states, 0, Kokkos::ALL ) );
        if ( rate_constants.extent( 0 ) > 0 )
            Kokkos::deep_copy( exec, k, Kokkos::subview( rate_constants, 0, Kokkos::ALL ) );
        else
            Kokkos::deep_copy( exec, k, m_system.rate_constants );
        const auto saved_device = saved_view;

        long c[stat_count] = {};
        const bool paper = m_options.error_norm == ErrorNorm::paper;
        const bool automatic = m_options.method == Method::automatic;
        using Range = Kokkos::RangePolicy<ExecutionSpace>;
        auto record = [&]( int sample ) {
            Kokkos::parallel_for( "morula::ode::dw::record", Range( exec, 0, nsaved ),
                                  RecordSample<MemorySpace>{ x, saved_device, result.samples, sample } );
        };
        auto stage = [&]( const View1& from, int row, int terms, double dt ) {
            // Only the `terms` coefficients the stage reads: the scratch row 6 (the stiffness check's
            // perturbed slope, terms 0) has no row in the tableau.
            double a[5] = { 0, 0, 0, 0, 0 };
            for ( int l = 0; l < terms; ++l )
                a[l] = ode::detail::fehlberg_a( row, l );
            const StageRhs<MemorySpace> f( m_system, k, from, stages, row, terms, a, dt );
            Kokkos::parallel_for( "reference::stage", Range( exec, 0, n ), f );
            ++c[stat_rhs_evaluations];
        };

        double t = t_start, dt = m_options.initial_step;
        int sample = 0;
        while ( sample < nsamples && times[sample] <= t )
            record( sample++ );
        bool k1_valid = false, handover = m_options.method == Method::bdf;
        int since_check = 0;
        ode::detail::StiffnessCounter stiffness;
        SolverStatus status = SolverStatus::success;
        while ( sample < nsamples && !handover )
        {
            if ( c[stat_steps] + c[stat_rejected] >= m_options.max_steps )
            {
                status = SolverStatus::max_steps;
                break;
            }
            const double target = times[sample];
            const bool clipped = dt >= target - t;
            const double h = clipped ? target - t : dt;
            if ( !clipped && !( h > 4.0e-16 * std::max( 1.0, std::fabs( t ) ) ) )
            {
                status = SolverStatus::step_too_small;
                break;
            }
            if ( !k1_valid )
                stage( x, 0, 0, 0.0 );
            for ( int s = 1; s < 6; ++s )
                stage( x, s, s, h );
            StepError<MemorySpace> err{ x, stages, next, m_atol, m_options.relative_tolerance, h, paper };
            double q = 0.0;
            if ( paper )
                Kokkos::parallel_reduce( "morula::ode::dw::error", Range( exec, 0, n ), err, Kokkos::Max<double>( q ) );
            else
                Kokkos::parallel_reduce( "morula::ode::dw::error", Range( exec, 0, n ), err, q );
            double dt_new;
            const bool accepted = ode::detail::rkf45_step_control( paper, q, n, h, dt_new );
            if ( !accepted )
            {
                ++c[stat_rejected];
                dt = dt_new;
                if ( automatic && dt_new < m_options.stiffness_threshold )
                    handover = true;
                continue;
            }
            std::swap( x, next );
            k1_valid = false;
            ++c[stat_steps];
            ++c[stat_rkf_steps];
            t = clipped ? target : t + h;
            dt = clipped ? std::max( dt_new, dt ) : dt_new;
            while ( sample < nsamples && times[sample] <= t )
                record( sample++ );
            if ( automatic && ++since_check >= 5 )
            {
                since_check = 0;
                double den = 0.0, num = 0.0;
                Kokkos::parallel_reduce( "morula::ode::dw::perturb", Range( exec, 0, n ),
                                         PerturbByError<MemorySpace>{ x, stages, perturbed, h }, den );
                double h_rho = 0.0;
                if ( den > 0.0 )
                {
                    stage( perturbed, 6, 0, 0.0 );
                    stage( x, 0, 0, 0.0 );
                    k1_valid = true;
                    Kokkos::parallel_reduce( "morula::ode::dw::distance", Range( exec, 0, n ),
                                             RowDistance<MemorySpace>{ stages, 6, 0 }, num );
                    h_rho = h * std::sqrt( num / den );
                }
                if ( stiffness.stiff_enough( h_rho ) )
                    handover = true;
            }
        }
        if ( status == SolverStatus::success && !handover )
        {
            double bad = 0.0;
            Kokkos::parallel_reduce(
                "morula::ode::dw::finite", Range( exec, 0, n ), ode::detail::NonFiniteCount<MemorySpace>{ x }, bad );
            if ( bad > 0.0 )
                status = SolverStatus::not_finite;
        }

    Outcome out;
    auto hs = Kokkos::create_mirror_view( result.samples );
    Kokkos::deep_copy( hs, result.samples );
    auto hx = Kokkos::create_mirror_view( x );
    Kokkos::deep_copy( hx, x );
    for ( int j = 0; j < nsaved; ++j )
        for ( int i = 0; i < nsamples; ++i )
            out.samples.push_back( hs( 0, i, j ) );
    for ( int i = 0; i < n; ++i )
        out.x.push_back( hx( i ) );
    out.t = t;
    out.dt = dt;
    out.steps = c[stat_steps];
    out.rejected = c[stat_rejected];
    out.rhs_evaluations = c[stat_rhs_evaluations];
    out.sample = sample;
    out.handover = handover;
    out.status = status;
    return out;
}

} // namespace morula::test::reference

#endif
