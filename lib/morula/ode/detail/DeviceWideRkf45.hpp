/*!
  \file DeviceWideRkf45.hpp
  \brief The kernels of the device-wide mode: one large system's RKF45 stages spread over the whole
         device, one kernel per stage, as in LASSIE.

  Each stage is one kernel over species: thread i sums nu_ir k_r prod_p y_q^a_p over the reactions that
  change species i, computing each reactant's stage value y_q = x_q + dt sum_l a_sl k_l(q) on the fly
  (LASSIE's species-major decoding of V_H and V_A, which recomputes a rate once per species it changes
  instead of storing it - that trade saves a launch and a barrier per stage). The error kernel forms u, w,
  the kept state and the error measure in one reduction, whose value is the only thing the host reads per
  step.
*/
#ifndef MORULA_ODE_DETAIL_DEVICEWIDERKF45_HPP
#define MORULA_ODE_DETAIL_DEVICEWIDERKF45_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/MassActionSystem.hpp>
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

//! Counts entries of x that are NaN or infinite.
template <class MemorySpace>
struct NonFiniteCount
{
    Kokkos::View<const double*, MemorySpace> x;
    KOKKOS_INLINE_FUNCTION void operator()( const int j, double& acc ) const { acc += x( j ) - x( j ) == 0.0 ? 0.0 : 1.0; }
};

} // namespace morula::ode::detail

#endif
