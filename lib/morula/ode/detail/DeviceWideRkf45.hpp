/*!
  \file DeviceWideRkf45.hpp
  \brief The kernels of the device-wide mode: one large system's RKF45 stages spread over the whole
         device, one kernel per stage, as in LASSIE, and the
         step decided on the device.

  An attempt is seven kernels: samples, k1 and the second half of a pending stiffness estimate; k2..k5;
  k6 fused with the error norm's reduction (and the estimate's first half); and a one-thread control
  kernel that decides the step on the device (DeviceWideControl.hpp). The reductions go into device scalars, so a run of attempts launches
  with no value read back and can be captured once and replayed (core::StepGraph).
*/
#ifndef MORULA_ODE_DETAIL_DEVICEWIDERKF45_HPP
#define MORULA_ODE_DETAIL_DEVICEWIDERKF45_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/detail/DeviceWideControl.hpp>
#include <morula/ode/detail/MassActionKernels.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

//! Fehlberg's tableau (rows of a, b4, b5), shared by the host loop and the kernels.
struct FehlbergTableau
{
    double a[6][5] = { { 0, 0, 0, 0, 0 },
                       { 1.0 / 4.0, 0, 0, 0, 0 },
                       { 3.0 / 32.0, 9.0 / 32.0, 0, 0, 0 },
                       { 1932.0 / 2197.0, -7200.0 / 2197.0, 7296.0 / 2197.0, 0, 0 },
                       { 439.0 / 216.0, -8.0, 3680.0 / 513.0, -845.0 / 4104.0, 0 },
                       { -8.0 / 27.0, 2.0, -3544.0 / 2565.0, 1859.0 / 4104.0, -11.0 / 40.0 } };
    double b4[6] = { 25.0 / 216.0, 0, 1408.0 / 2565.0, 2197.0 / 4104.0, -1.0 / 5.0, 0 };
    double b5[6] = { 16.0 / 135.0, 0, 6656.0 / 12825.0, 28561.0 / 56430.0, -9.0 / 50.0, 2.0 / 55.0 };
};

//! The mass-action right-hand side f_i(y) through raw device pointers: the kernels that hold it stay far
//! below the size (512 bytes on CUDA) above which Kokkos launches through constant memory with a host
//! synchronisation per launch - measured at ~20 us per stage with the Views of a whole MassActionSystem.
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

    //! k_r prod_p y(q_p)^a_p for the reaction of species term t.
    template <class Y>
    KOKKOS_INLINE_FUNCTION double term_rate( const int t, const Y& y ) const
    {
        const int r = term_reaction[t];
        double v = k[r];
        for ( int p = reactant_offsets[r]; p < reactant_offsets[r + 1]; ++p )
            v *= integer_power( y( reactant_species[p] ), reactant_order[p] );
        return v;
    }

    //! sum over the reactions r changing species i of nu_ir k_r prod_p y(q_p)^a_p; y(q) gives a species'
    //! stage value, computed on the fly (LASSIE's species-major decoding of V_H and V_A, which recomputes a
    //! rate once per species it changes instead of storing it - that saves a launch and a barrier per stage).
    //! Four terms' rates are formed before they are summed, in term order as one at a time would: each
    //! rate is a chain of dependent loads (term -> reaction -> reactants -> stage values) that a fresh
    //! kernel serves from L2, and four independent chains in flight hide most of that latency.
    template <class Y>
    KOKKOS_INLINE_FUNCTION double rhs( const int i, const Y& y ) const
    {
        double sum = 0.0;
        int t = term_offsets[i];
        const int end = term_offsets[i + 1];
        for ( ; t + 3 < end; t += 4 )
        {
            const double v0 = term_rate( t, y ), v1 = term_rate( t + 1, y ), v2 = term_rate( t + 2, y ),
                         v3 = term_rate( t + 3, y );
            sum += term_coefficient[t] * v0;
            sum += term_coefficient[t + 1] * v1;
            sum += term_coefficient[t + 2] * v2;
            sum += term_coefficient[t + 3] * v3;
        }
        for ( ; t < end; ++t )
            sum += term_coefficient[t] * term_rate( t, y );
        return sum;
    }
};

//! y_q = x_q + h sum_{l < terms} a_l stage_l(q).
struct StageValue
{
    const double* x;
    const double* stages;
    const double* a;
    int n, terms;
    double h;

    KOKKOS_INLINE_FUNCTION double operator()( const int q ) const
    {
        double y = x[q];
        if ( terms > 0 )
        {
            double s = 0.0;
            for ( int l = 0; l < terms; ++l )
                s += a[l] * stages[l * n + q];
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

// Fehlberg's weights of the 4th- and 5th-order solutions, for the kernels below (small functors).
KOKKOS_INLINE_FUNCTION double fehlberg_b4( int l )
{
    constexpr double b[6] = { 25.0 / 216.0, 0, 1408.0 / 2565.0, 2197.0 / 4104.0, -1.0 / 5.0, 0 };
    return b[l];
}
KOKKOS_INLINE_FUNCTION double fehlberg_b5( int l )
{
    constexpr double b[6] = { 16.0 / 135.0, 0, 6656.0 / 12825.0, 28561.0 / 56430.0, -9.0 / 50.0, 2.0 / 55.0 };
    return b[l];
}

/*
  The kernels of one device-wide RKF45 attempt. Each reads the attempt's step and the current state buffer
  from the DeviceWideStatus in device memory (never from host arguments), and returns at once once the
  status says the integration stopped: a captured run of attempts (core::StepGraph) stays valid whatever
  the device decides, and the attempts after the stop cost only empty launches. Only
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

/*!
  The attempt's first kernel: writes the samples the last accepted step reached (from x), k1 = f(x) unless
  it is valid, and, when a stiffness estimate is pending, f(x + e) into the scratch row; reduces
  |f(x + e) - f(x)|^2 (zero otherwise).
*/
struct DeviceWideBegin
{
    DeviceWideBuffers b;
    MassActionRates rates;
    const double* perturbed = nullptr; // x + e, written by the previous attempt's last kernel
    double* output = nullptr;          // (samples, saved) column-major: output[sample + samples * j]
    const int* saved = nullptr;
    int samples = 0, nsaved = 0;

    KOKKOS_INLINE_FUNCTION void operator()( const int i, double& acc ) const
    {
        const DeviceWideStatus& s = *b.status;
        if ( s.stopped )
            return;
        const double* x = b.x( s );
        if ( i < nsaved )
            for ( int m = s.record_begin; m < s.record_end; ++m )
                output[m + samples * i] = x[saved[i]];
        if ( i < b.n && !s.k1_valid )
        {
            const double k1 = rates.rhs( i, PlainValue{ x } );
            b.stages[i] = k1;
            if ( s.check_pending )
            {
                const double fy = rates.rhs( i, PlainValue{ perturbed } );
                b.stages[dw_row_perturbed * b.n + i] = fy;
                const double d = fy - k1;
                acc += d * d;
            }
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

    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const
    {
        const DeviceWideStatus& s = *b.status;
        if ( !device_wide_attempting( s ) )
            return;
        const StageValue y{ b.x( s ), b.stages, a, b.n, row, s.h };
        b.stages[row * b.n + i] = rates.rhs( i, y );
    }
};

//! The last kernel's two reduced values: the error measure and the stiffness estimate's |e|^2.
struct DeviceWideError
{
    double q;
    double den;
};

//! Reduces DeviceWideError: q by max (paper) or sum (mixed), den by sum, into a device View.
template <class MemorySpace>
struct DeviceWideErrorReducer
{
    using reducer = DeviceWideErrorReducer;
    using value_type = DeviceWideError;
    using result_view_type = Kokkos::View<value_type, MemorySpace>;

    result_view_type value;
    bool paper = false;

    KOKKOS_INLINE_FUNCTION void join( value_type& dest, const value_type& src ) const
    {
        dest.q = paper ? ( src.q > dest.q ? src.q : dest.q ) : dest.q + src.q;
        dest.den += src.den;
    }
    // Kokkos 3.4 joins through volatile references; Kokkos 4 takes the overload above.
    KOKKOS_INLINE_FUNCTION void join( volatile value_type& dest, const volatile value_type& src ) const
    {
        dest.q = paper ? ( src.q > dest.q ? src.q : dest.q ) : dest.q + src.q;
        dest.den = dest.den + src.den;
    }
    KOKKOS_INLINE_FUNCTION void init( value_type& v ) const
    {
        v.q = paper ? Kokkos::reduction_identity<double>::max() : 0.0;
        v.den = 0.0;
    }
    KOKKOS_INLINE_FUNCTION value_type& reference() const { return *value.data(); }
    KOKKOS_INLINE_FUNCTION result_view_type view() const { return value; }
    KOKKOS_INLINE_FUNCTION bool references_scalar() const { return false; }
};

/*!
  k6 and, in the same pass, u (4th order) and w (5th order) from the stages; the kept one (u for the
  paper's rule, w for the mixed norm) goes to the candidate next state. Reduces max_j ER_j / eps_j (paper)
  or sum_j (|w - u| / sc_j)^2 (mixed); when a stiffness estimate would be due should the step be
  accepted, also x_new + e (e = w - u) and |e|^2, ahead of the decision.
*/
struct DeviceWideLastStageError
{
    DeviceWideBuffers b;
    MassActionRates rates;
    DeviceWideParameters p;
    double* perturbed = nullptr;
    const double* atol = nullptr;
    int atol_count = 1;
    double rtol = 0.0;
    double a[5] = { 0, 0, 0, 0, 0 };

    KOKKOS_INLINE_FUNCTION void operator()( const int j, DeviceWideError& acc ) const
    {
        const DeviceWideStatus& s = *b.status;
        if ( !device_wide_attempting( s ) )
            return;
        const int n = b.n;
        const double* x = b.x( s );
        const double h = s.h;
        const StageValue y{ x, b.stages, a, n, 5, h };
        const double k6 = rates.rhs( j, y );
        b.stages[5 * n + j] = k6;
        double du = 0.0, dw = 0.0;
        for ( int l = 0; l < 6; ++l )
        {
            const double kl = l == 5 ? k6 : b.stages[l * n + j];
            du += fehlberg_b4( l ) * kl;
            dw += fehlberg_b5( l ) * kl;
        }
        const double u = x[j] + h * du, w = x[j] + h * dw;
        const double e = compat::fabs( w - u );
        const double tol = atol[atol_count == 1 ? 0 : j];
        double* next = b.next( s );
        if ( p.paper )
        {
            next[j] = u;
            const double v = e / h / tol;
            acc.q = v > acc.q ? v : acc.q;
        }
        else
        {
            next[j] = w;
            const double ax = compat::fabs( x[j] ), aw = compat::fabs( w );
            const double r = e / ( tol + rtol * ( ax > aw ? ax : aw ) );
            acc.q += r * r;
        }
        if ( device_wide_check_due( s, p ) )
        {
            double d = 0.0;
            for ( int l = 0; l < 6; ++l )
                d += ( fehlberg_b5( l ) - fehlberg_b4( l ) ) * ( l == 5 ? k6 : b.stages[l * n + j] );
            const double ej = h * d;
            perturbed[j] = next[j] + ej;
            acc.den += ej * ej;
        }
    }
};

//! One thread: device_wide_control from the reduced values.
struct DeviceWideControlKernel
{
    DeviceWideStatus* status = nullptr;
    DeviceWideParameters p;
    const double* times = nullptr;
    const DeviceWideError* error = nullptr;
    const double* num = nullptr;

    KOKKOS_INLINE_FUNCTION void operator()( const int ) const
    {
        device_wide_control( *status, p, times, error->q, error->den, *num );
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
