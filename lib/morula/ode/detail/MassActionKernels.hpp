/*!
  \file MassActionKernels.hpp
  \brief Right-hand side and analytic Jacobian of a MassActionSystem for one system, over VectorOps.
*/
#ifndef MORULA_ODE_DETAIL_MASSACTIONKERNELS_HPP
#define MORULA_ODE_DETAIL_MASSACTIONKERNELS_HPP

#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/detail/VectorOps.hpp>

namespace morula::ode::detail
{

//! x^a for a small non-negative integer a by repeated multiplication (exact for a <= 2, no pow call).
KOKKOS_INLINE_FUNCTION double integer_power( double x, int a )
{
    double p = 1.0;
    for ( int i = 0; i < a; ++i )
        p *= x;
    return p;
}

/*!
  f = (B - A)^T [K o X^A]: first every reaction's rate into `rates` (length M), then every species'
  sum over the reactions that change it. Two gathers, no atomics.
*/
template <class Ops, class System>
KOKKOS_INLINE_FUNCTION void evaluate_rhs( const Ops& ops, const System& sys, const Strided<const double>& k,
                                          const Strided<const double>& x, const Strided<double>& rates,
                                          const Strided<double>& f )
{
    ops.for_each( sys.reactions, [&]( int r ) {
        double v = k[r];
        for ( int p = sys.reactant_offsets( r ); p < sys.reactant_offsets( r + 1 ); ++p )
            v *= integer_power( x[sys.reactant_species( p )], sys.reactant_order( p ) );
        rates[r] = v;
    } );
    ops.for_each( sys.species, [&]( int i ) {
        double s = 0.0;
        for ( int t = sys.species_term_offsets( i ); t < sys.species_term_offsets( i + 1 ); ++t )
            s += sys.species_term_coefficient( t ) * rates[sys.species_term_reaction( t )];
        f[i] = s;
    } );
}

//! d rate_r / d x_q where q is the species of reactant factor p of reaction r:
//! k_r a_p x_q^(a_p - 1) prod_{p' != p} x_{p'}^(a_p'). Exact at x_q = 0 (no division by x).
template <class System>
KOKKOS_INLINE_FUNCTION double rate_derivative( const System& sys, const Strided<const double>& k,
                                               const Strided<const double>& x, int r, int p )
{
    double v = k[r] * sys.reactant_order( p ) * integer_power( x[sys.reactant_species( p )], sys.reactant_order( p ) - 1 );
    for ( int o = sys.reactant_offsets( r ); o < sys.reactant_offsets( r + 1 ); ++o )
        if ( o != p )
            v *= integer_power( x[sys.reactant_species( o )], sys.reactant_order( o ) );
    return v;
}

//! The Jacobian's nonzero values in the CSR order of sys.jacobian_columns (one gather per nonzero).
template <class Ops, class System>
KOKKOS_INLINE_FUNCTION void evaluate_jacobian_values( const Ops& ops, const System& sys,
                                                      const Strided<const double>& k,
                                                      const Strided<const double>& x,
                                                      const Strided<double>& values )
{
    ops.for_each( sys.jacobian_nonzeros_count, [&]( int z ) {
        double v = 0.0;
        for ( int c = sys.jacobian_contribution_offsets( z ); c < sys.jacobian_contribution_offsets( z + 1 ); ++c )
            v += sys.contribution_coefficient( c ) *
                 rate_derivative( sys, k, x, sys.contribution_reaction( c ), sys.contribution_factor( c ) );
        values[z] = v;
    } );
}

//! The dense Jacobian, row-major (J(i, q) at index i n + q), zeros included.
template <class Ops, class System>
KOKKOS_INLINE_FUNCTION void evaluate_dense_jacobian( const Ops& ops, const System& sys,
                                                     const Strided<const double>& k,
                                                     const Strided<const double>& x, const Strided<double>& J )
{
    const int n = sys.species;
    ops.for_each( n, [&]( int i ) {
        for ( int q = 0; q < n; ++q )
            J[i * n + q] = 0.0;
        for ( int z = sys.jacobian_row_offsets( i ); z < sys.jacobian_row_offsets( i + 1 ); ++z )
        {
            double v = 0.0;
            for ( int c = sys.jacobian_contribution_offsets( z ); c < sys.jacobian_contribution_offsets( z + 1 ); ++c )
                v += sys.contribution_coefficient( c ) *
                     rate_derivative( sys, k, x, sys.contribution_reaction( c ), sys.contribution_factor( c ) );
            J[i * n + sys.jacobian_columns( z )] = v;
        }
    } );
}

} // namespace morula::ode::detail

#endif
