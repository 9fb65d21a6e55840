/*!
  \file DeviceWideRkf45.hpp
  \brief The kernels of the device-wide mode: one large system's RKF45 stages spread over the whole
         device, one kernel per stage, as in LASSIE, and the
         step decided on the device.

  An attempt is nine kernels: samples and k1, k2..k5, k6 fused with the error norm's reduction, the two
  halves of the stiffness estimate (they return at once unless the estimate is due), and a one-thread
  control kernel that decides the step on the device (DeviceWideControl.hpp). The reductions go into device scalars, so a run of attempts launches
  with no value read back and can be captured once and replayed (core::StepGraph).
*/
#ifndef MORULA_ODE_DETAIL_DEVICEWIDERKF45_HPP
#define MORULA_ODE_DETAIL_DEVICEWIDERKF45_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/detail/DeviceWideControl.hpp>
#include <morula/ode/detail/FehlbergTableau.hpp>
#include <morula/ode/detail/MassActionKernels.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

//! One thread per species: a species' sum over its terms from left to right; writes done by the thread.
struct SerialLanes
{
    template <class Term>
    KOKKOS_INLINE_FUNCTION double sum( const int begin, const int end, const Term& term ) const
    {
        double s = 0.0;
        for ( int t = begin; t < end; ++t )
            s += term( t );
        return s;
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION void single( const F& f ) const
    {
        f();
    }
};

//! A species per team thread, its terms spread over the thread's vector lanes (a fixed tree of partial
//! sums); writes and reduction contributions made once per species, by one lane.
template <class Member>
struct VectorLanes
{
    const Member& member;

    template <class Term>
    KOKKOS_INLINE_FUNCTION double sum( const int begin, const int end, const Term& term ) const
    {
        double s = 0.0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange( member, begin, end ), [&]( const int t, double& partial ) { partial += term( t ); },
            s );
        return s;
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION void single( const F& f ) const
    {
        Kokkos::single( Kokkos::PerThread( member ), f );
    }
};

//! The mass-action right-hand side f_i(y) through raw device pointers: the kernels that hold it stay far
//! below the size (512 bytes on CUDA) above which Kokkos launches through constant memory with a host
//! synchronisation per launch, as the Views of a whole MassActionSystem would
//! (docs/performance.md, "Design choices measured (moved from source comments, issue #46)").
struct MassActionRates
{
    const int* term_offsets = nullptr;
    const int* term_reaction = nullptr;
    const double* term_coefficient = nullptr;
    const int* reactant_offsets = nullptr;
    const int* reactant_species = nullptr;
    const int* reactant_order = nullptr;
    const double* k = nullptr;

    MassActionRates() = default;
    template <class MemorySpace>
    MassActionRates( const MassActionSystem<MemorySpace>& sys, const Kokkos::View<double*, MemorySpace>& k_ )
        : term_offsets( sys.species_term_offsets.data() )
        , term_reaction( sys.species_term_reaction.data() )
        , term_coefficient( sys.species_term_coefficient.data() )
        , reactant_offsets( sys.reactant_offsets.data() )
        , reactant_species( sys.reactant_species.data() )
        , reactant_order( sys.reactant_order.data() )
        , k( k_.data() )
    {
    }

    //! sum over the reactions r changing species i of nu_ir k_r prod_p y(q_p)^a_p; y(q) gives a species'
    //! stage value, computed on the fly (LASSIE's species-major decoding of V_H and V_A, which recomputes a
    //! rate once per species it changes instead of storing it - that saves a launch and a barrier per stage).
    template <class Y>
    KOKKOS_INLINE_FUNCTION double rhs( const int i, const Y& y ) const
    {
        return rhs( SerialLanes{}, i, y );
    }

    //! The same, the terms summed through `lanes` (SerialLanes: left to right, as above).
    template <class Lanes, class Y>
    KOKKOS_INLINE_FUNCTION double rhs( const Lanes& lanes, const int i, const Y& y ) const
    {
        return lanes.sum( term_offsets[i], term_offsets[i + 1], [&]( const int t ) {
            const int r = term_reaction[t];
            double v = k[r];
            for ( int p = reactant_offsets[r]; p < reactant_offsets[r + 1]; ++p )
                v *= integer_power( y( reactant_species[p] ), reactant_order[p] );
            return term_coefficient[t] * v;
        } );
    }
};

//! y_q = x_q + h sum_{l < terms} a_l stage_l(q), stage 0 being k1's row.
struct StageValue
{
    const double* x;
    const double* stages;
    const double* a;
    int n, terms, k1_row;
    double h;

    KOKKOS_INLINE_FUNCTION double operator()( const int q ) const
    {
        double y = x[q];
        if ( terms > 0 )
        {
            double s = 0.0;
            for ( int l = 0; l < terms; ++l )
                s += a[l] * stages[( l == 0 ? k1_row : l ) * n + q];
            y += h * s;
        }
        return y;
    }
};

//! y_q = x_q.
struct PlainValue
{
    const double* x;
    KOKKOS_INLINE_FUNCTION double operator()( const int q ) const { return x[q]; }
};

/*
  The kernels of one device-wide RKF45 attempt. Each reads the attempt's step, the current state buffer and
  k1's row from the DeviceWideStatus in device memory (never from host arguments), and returns at once once
  the status says the integration stopped: a captured run of attempts (core::StepGraph) stays valid
  whatever the device decides, and the attempts after the stop cost only empty launches. Only
  DeviceWideControlKernel writes the status; every other kernel only reads it.
*/

//! Shared by the attempt's kernels: where the state buffers, stages and status are.
struct DeviceWideBuffers
{
    const DeviceWideStatus* status = nullptr;
    double* states = nullptr; // (2, n) row-major: x and the candidate next state, swapped by status.current
    double* stages = nullptr; // (dw_stage_rows, n) row-major
    int n = 0;

    KOKKOS_INLINE_FUNCTION const double* x( const DeviceWideStatus& s ) const { return states + s.current * n; }
    KOKKOS_INLINE_FUNCTION double* next( const DeviceWideStatus& s ) const { return states + ( 1 - s.current ) * n; }
};

//! Writes the samples reached by the last accepted step (from x) and, unless k1 is valid, k1 = f(x).
struct DeviceWideBegin
{
    DeviceWideBuffers b;
    MassActionRates rates;
    double* output = nullptr; // (samples, saved) column-major: output[sample + samples * j]
    const int* saved = nullptr;
    int samples = 0, nsaved = 0;

    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const { body( SerialLanes{}, i ); }

    template <class Lanes>
    KOKKOS_INLINE_FUNCTION void body( const Lanes& lanes, const int i ) const
    {
        const DeviceWideStatus& s = *b.status;
        if ( s.stopped )
            return;
        const double* x = b.x( s );
        if ( i < nsaved )
            lanes.single( [&]() {
                for ( int m = s.record_begin; m < s.record_end; ++m )
                    output[m + samples * i] = x[saved[i]];
            } );
        if ( i < b.n && !s.k1_valid )
        {
            const double f = rates.rhs( lanes, i, PlainValue{ x } );
            lanes.single( [&]() { b.stages[s.k1_row * b.n + i] = f; } );
        }
    }
};

//! Writes the samples [record_begin, record_end) from x even after the stop (the last accepted step's).
struct DeviceWideRecord
{
    DeviceWideBuffers b;
    double* output = nullptr;
    const int* saved = nullptr;
    int samples = 0;

    KOKKOS_INLINE_FUNCTION void operator()( const int j ) const
    {
        const DeviceWideStatus& s = *b.status;
        const double* x = b.x( s );
        for ( int m = s.record_begin; m < s.record_end; ++m )
            output[m + samples * j] = x[saved[j]];
    }
};

//! stages(row, i) = f_i(x + h sum_{l<row} a_l k_l), row 1..4 (k2..k5).
struct DeviceWideStage
{
    DeviceWideBuffers b;
    MassActionRates rates;
    int row = 1;
    double a[5] = { 0, 0, 0, 0, 0 };

    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const { body( SerialLanes{}, i ); }

    template <class Lanes>
    KOKKOS_INLINE_FUNCTION void body( const Lanes& lanes, const int i ) const
    {
        const DeviceWideStatus& s = *b.status;
        if ( s.stopped )
            return;
        const StageValue y{ b.x( s ), b.stages, a, b.n, row, s.k1_row, s.h };
        const double f = rates.rhs( lanes, i, y );
        lanes.single( [&]() { b.stages[row * b.n + i] = f; } );
    }
};

/*!
  k6 and, in the same pass, u (4th order) and w (5th order) from the stages; the kept one (u for the
  paper's rule, w for the mixed norm) goes to the candidate next state. Reduces max_j ER_j / eps_j (paper)
  or sum_j (|w - u| / sc_j)^2 (mixed).
*/
struct DeviceWideLastStageError
{
    DeviceWideBuffers b;
    MassActionRates rates;
    const double* atol = nullptr;
    int atol_count = 1;
    double rtol = 0.0;
    bool paper = false;
    double a[5] = { 0, 0, 0, 0, 0 };

    KOKKOS_INLINE_FUNCTION void operator()( const int j, double& acc ) const { body( SerialLanes{}, j, acc ); }

    template <class Lanes>
    KOKKOS_INLINE_FUNCTION void body( const Lanes& lanes, const int j, double& acc ) const
    {
        const DeviceWideStatus& s = *b.status;
        if ( s.stopped )
            return;
        const int n = b.n;
        const double* x = b.x( s );
        const double h = s.h;
        const StageValue y{ x, b.stages, a, n, 5, s.k1_row, h };
        const double k6 = rates.rhs( lanes, j, y );
        lanes.single( [&]() { finish( s, j, k6, acc ); } );
    }

    // The rest of species j's work once k6 is known: the candidate state and the error's contribution.
    KOKKOS_INLINE_FUNCTION void finish( const DeviceWideStatus& s, const int j, const double k6, double& acc ) const
    {
        const int n = b.n;
        const double* x = b.x( s );
        const double h = s.h;
        b.stages[5 * n + j] = k6;
        double du = 0.0, dw = 0.0;
        for ( int l = 0; l < 6; ++l )
        {
            const double kl = l == 5 ? k6 : b.stages[( l == 0 ? s.k1_row : l ) * n + j];
            du += fehlberg_b4( l ) * kl;
            dw += fehlberg_b5( l ) * kl;
        }
        const double u = x[j] + h * du, w = x[j] + h * dw;
        const double e = compat::fabs( w - u );
        const double tol = atol[atol_count == 1 ? 0 : j];
        double* next = b.next( s );
        if ( paper )
        {
            next[j] = u;
            const double v = e / h / tol;
            acc = v > acc ? v : acc;
        }
        else
        {
            next[j] = w;
            const double ax = compat::fabs( x[j] ), aw = compat::fabs( w );
            const double r = e / ( tol + rtol * ( ax > aw ? ax : aw ) );
            acc += r * r;
        }
    }
};

/*!
  The stiffness estimate's first half, run when the check is due should the attempt be accepted:
  y = x_new + e with e = w - u of the attempt's stages; reduces |e|^2. Computed before the decision (on the
  candidate state) so that the decision needs no further round of kernels; wasted when rejected.
*/
struct DeviceWidePerturb
{
    DeviceWideBuffers b;
    DeviceWideParameters p;
    double* y = nullptr;

    KOKKOS_INLINE_FUNCTION void operator()( const int j, double& acc ) const
    {
        const DeviceWideStatus& s = *b.status;
        if ( !device_wide_check_due( s, p ) )
            return;
        const int n = b.n;
        double d = 0.0;
        for ( int l = 0; l < 6; ++l )
            d += ( fehlberg_b5( l ) - fehlberg_b4( l ) ) * b.stages[( l == 0 ? s.k1_row : l ) * n + j];
        const double e = s.h * d;
        y[j] = b.next( s )[j] + e;
        acc += e * e;
    }
};

/*!
  The estimate's second half: f(x_new + e) into the scratch row and f(x_new) into the other k1 row (the
  next step's k1 if the attempt is accepted); reduces |f(x_new + e) - f(x_new)|^2.
*/
struct DeviceWideCheckRhs
{
    DeviceWideBuffers b;
    DeviceWideParameters p;
    MassActionRates rates;
    const double* y = nullptr;
    const double* den = nullptr;

    KOKKOS_INLINE_FUNCTION void operator()( const int i, double& acc ) const { body( SerialLanes{}, i, acc ); }

    template <class Lanes>
    KOKKOS_INLINE_FUNCTION void body( const Lanes& lanes, const int i, double& acc ) const
    {
        const DeviceWideStatus& s = *b.status;
        if ( !device_wide_check_due( s, p ) || !( *den > 0.0 ) )
            return;
        const int n = b.n;
        const double fy = rates.rhs( lanes, i, PlainValue{ y } );
        const double fx = rates.rhs( lanes, i, PlainValue{ b.next( s ) } );
        lanes.single( [&]() {
            b.stages[dw_row_perturbed * n + i] = fy;
            b.stages[( s.k1_row == 0 ? dw_k1_alt : 0 ) * n + i] = fx;
            const double d = fy - fx;
            acc += d * d;
        } );
    }
};

//! One thread: device_wide_control from the reduced values.
struct DeviceWideControlKernel
{
    DeviceWideStatus* status = nullptr;
    DeviceWideParameters p;
    const double* times = nullptr;
    const double* q = nullptr;
    const double* den = nullptr;
    const double* num = nullptr;

    KOKKOS_INLINE_FUNCTION void operator()( const int ) const
    {
        const bool check = device_wide_check_due( *status, p );
        device_wide_control( *status, p, times, *q, check ? *den : 0.0, check ? *num : 0.0 );
    }
};

/*!
  A kernel above launched with a team policy: team thread t of league entry l takes species
  l * team_size + t (below `range`), its vector lanes that species' terms.
*/
template <class Member, class Kernel>
struct OnVectorLanes
{
    Kernel kernel;
    int range = 0;

    KOKKOS_INLINE_FUNCTION void operator()( const Member& m ) const
    {
        const int i = m.league_rank() * m.team_size() + m.team_rank();
        if ( i < range )
            kernel.body( VectorLanes<Member>{ m }, i );
    }
};

//! The same for the kernels that reduce (a separate type: Kokkos 3.4 deduces the reduction's value type
//! from the one call operator).
template <class Member, class Kernel>
struct OnVectorLanesReduce
{
    using value_type = double;
    Kernel kernel;
    int range = 0;

    KOKKOS_INLINE_FUNCTION void operator()( const Member& m, double& acc ) const
    {
        const int i = m.league_rank() * m.team_size() + m.team_rank();
        if ( i < range )
            kernel.body( VectorLanes<Member>{ m }, i, acc );
    }
};

//! Counts entries of x that are NaN or infinite.
template <class MemorySpace>
struct NonFiniteCount
{
    Kokkos::View<const double*, MemorySpace> x;
    KOKKOS_INLINE_FUNCTION void operator()( const int j, double& acc ) const { acc += x( j ) - x( j ) == 0.0 ? 0.0 : 1.0; }
};

} // namespace morula::ode::detail

#endif
