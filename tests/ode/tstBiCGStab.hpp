// Morula's Jacobi-preconditioned BiCGStab (the BDF Newton solver for large sparse systems) on its own,
// run by one thread (ThreadOps) and by one team (TeamOps): a nonsymmetric well-conditioned system with a
// known solution, the stopping tolerance honoured, Newton matrices I - c J of Robertson's stiff problem
// against a dense direct solve, and the failures it reports (iteration limit, breakdown). The solver is
// double precision only (not templated on the scalar), so there is no float variant.
#include <OdeTestUtils.hpp>
#include <RobertsonReference.hpp>

#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/detail/BiCGStab.hpp>
#include <morula/ode/detail/MassActionKernels.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace morula_test_bicgstab
{
using morula::ode::detail::Strided;

// A sparse matrix in CSR form with the diagonal stored in every row, as the model's Jacobian pattern is.
struct Csr
{
    int n = 0;
    std::vector<int> row_offsets, columns;
    std::vector<double> values;
};

// Row-major dense n x n -> CSR with its nonzeros and the whole diagonal.
Csr to_csr( int n, const std::vector<double>& dense )
{
    Csr a;
    a.n = n;
    a.row_offsets.push_back( 0 );
    for ( int i = 0; i < n; ++i )
    {
        for ( int j = 0; j < n; ++j )
            if ( i == j || dense[std::size_t( i ) * n + j] != 0.0 )
            {
                a.columns.push_back( j );
                a.values.push_back( dense[std::size_t( i ) * n + j] );
            }
        a.row_offsets.push_back( static_cast<int>( a.columns.size() ) );
    }
    return a;
}

std::vector<double> multiply( const Csr& a, const std::vector<double>& x )
{
    std::vector<double> y( std::size_t( a.n ), 0.0 );
    for ( int i = 0; i < a.n; ++i )
        for ( int z = a.row_offsets[std::size_t( i )]; z < a.row_offsets[std::size_t( i ) + 1]; ++z )
            y[std::size_t( i )] += a.values[std::size_t( z )] * x[std::size_t( a.columns[std::size_t( z )] )];
    return y;
}

double norm2( const std::vector<double>& v )
{
    double s = 0.0;
    for ( double e : v )
        s += e * e;
    return std::sqrt( s );
}

// ||b - A x|| / ||b||, the quantity BiCGStab's stopping rule bounds (through its recurrence residual).
double relative_residual( const Csr& a, const std::vector<double>& x, const std::vector<double>& b )
{
    std::vector<double> r = multiply( a, x );
    for ( std::size_t i = 0; i < r.size(); ++i )
        r[i] = b[i] - r[i];
    return norm2( r ) / norm2( b );
}

// max_i |x_i - y_i| / max_i |y_i|
double relative_error( const std::vector<double>& x, const std::vector<double>& y )
{
    double e = 0.0, m = 0.0;
    for ( std::size_t i = 0; i < y.size(); ++i )
    {
        e = std::max( e, std::abs( x[i] - y[i] ) );
        m = std::max( m, std::abs( y[i] ) );
    }
    return e / m;
}

// Dense Gaussian elimination with partial pivoting in long double: the reference solution.
std::vector<double> dense_solve( const Csr& a, const std::vector<double>& b )
{
    const int n = a.n;
    std::vector<long double> m( std::size_t( n ) * n, 0.0L ), x( b.begin(), b.end() );
    for ( int i = 0; i < n; ++i )
        for ( int z = a.row_offsets[std::size_t( i )]; z < a.row_offsets[std::size_t( i ) + 1]; ++z )
            m[std::size_t( i ) * n + a.columns[std::size_t( z )]] = a.values[std::size_t( z )];
    for ( int k = 0; k < n; ++k )
    {
        int p = k;
        for ( int i = k + 1; i < n; ++i )
            if ( std::abs( m[std::size_t( i ) * n + k] ) > std::abs( m[std::size_t( p ) * n + k] ) )
                p = i;
        for ( int j = 0; j < n; ++j )
            std::swap( m[std::size_t( k ) * n + j], m[std::size_t( p ) * n + j] );
        std::swap( x[std::size_t( k )], x[std::size_t( p )] );
        for ( int i = k + 1; i < n; ++i )
        {
            const long double l = m[std::size_t( i ) * n + k] / m[std::size_t( k ) * n + k];
            for ( int j = k; j < n; ++j )
                m[std::size_t( i ) * n + j] -= l * m[std::size_t( k ) * n + j];
            x[std::size_t( i )] -= l * x[std::size_t( k )];
        }
    }
    for ( int i = n - 1; i >= 0; --i )
    {
        for ( int j = i + 1; j < n; ++j )
            x[std::size_t( i )] -= m[std::size_t( i ) * n + j] * x[std::size_t( j )];
        x[std::size_t( i )] /= m[std::size_t( i ) * n + i];
    }
    return std::vector<double>( x.begin(), x.end() );
}

struct Outcome
{
    bool converged = false;
    long iterations = 0;
    std::vector<double> x;
};

template <class T>
Kokkos::View<T*, TEST_MEMSPACE> to_device( const std::string& label, const std::vector<T>& v )
{
    Kokkos::View<T*, TEST_MEMSPACE> d( label, v.size() );
    auto h = Kokkos::create_mirror_view( d );
    for ( std::size_t i = 0; i < v.size(); ++i )
        h( i ) = v[i];
    Kokkos::deep_copy( d, h );
    return d;
}

// Solves A x = b on the device by one thread or by one team; dinv = 1 / diag(A) as the integrator
// prepares it.
Outcome solve( const Csr& a, const std::vector<double>& b, double tolerance, int max_iterations, bool team )
{
    using morula::ode::detail::bicgstab_jacobi;
    using morula::ode::detail::bicgstab_work_vectors;
    const int n = a.n;
    std::vector<double> dinv( std::size_t( n ), 0.0 );
    for ( int i = 0; i < n; ++i )
        for ( int z = a.row_offsets[std::size_t( i )]; z < a.row_offsets[std::size_t( i ) + 1]; ++z )
            if ( a.columns[std::size_t( z )] == i )
                dinv[std::size_t( i )] = 1.0 / a.values[std::size_t( z )];
    const auto rows = to_device( "rows", a.row_offsets );
    const auto columns = to_device( "columns", a.columns );
    const auto values = to_device( "values", a.values );
    const auto inverse_diagonal = to_device( "dinv", dinv );
    const auto x = to_device( "b", b );
    Kokkos::View<double*, TEST_MEMSPACE> work( "work", std::size_t( bicgstab_work_vectors ) * std::size_t( n ) );
    Kokkos::View<long*, TEST_MEMSPACE> result( "result", 2 );
    if ( team )
    {
        using Policy = Kokkos::TeamPolicy<TEST_EXECSPACE>;
        using Member = Policy::member_type;
        Kokkos::parallel_for(
            "bicgstab_test_team", Policy( 1, Kokkos::AUTO ), KOKKOS_LAMBDA( const Member& member ) {
                const morula::ode::detail::TeamOps<Member> ops{ member };
                long iterations = 0;
                const bool ok = bicgstab_jacobi( ops, n, rows, columns, Strided<double>{ values.data(), 1 },
                                                 Strided<double>{ inverse_diagonal.data(), 1 },
                                                 Strided<double>{ work.data(), 1 }, Strided<double>{ x.data(), 1 },
                                                 tolerance, max_iterations, iterations );
                ops.single( [&]() {
                    result( 0 ) = ok ? 1 : 0;
                    result( 1 ) = iterations;
                } );
            } );
    }
    else
    {
        Kokkos::parallel_for(
            "bicgstab_test_thread", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 1 ), KOKKOS_LAMBDA( const int ) {
                const morula::ode::detail::ThreadOps ops;
                long iterations = 0;
                const bool ok = bicgstab_jacobi( ops, n, rows, columns, Strided<double>{ values.data(), 1 },
                                                 Strided<double>{ inverse_diagonal.data(), 1 },
                                                 Strided<double>{ work.data(), 1 }, Strided<double>{ x.data(), 1 },
                                                 tolerance, max_iterations, iterations );
                result( 0 ) = ok ? 1 : 0;
                result( 1 ) = iterations;
            } );
    }
    auto result_host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), result );
    auto x_host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), x );
    Outcome o;
    o.converged = result_host( 0 ) == 1;
    o.iterations = result_host( 1 );
    o.x.assign( x_host.data(), x_host.data() + n );
    return o;
}

// Nonsymmetric, strictly diagonally dominant (well conditioned): a random band with long-range couplings.
Csr nonsymmetric_system( int n, unsigned seed )
{
    std::mt19937_64 rng( seed );
    std::uniform_real_distribution<double> u( 0.0, 1.0 );
    std::vector<double> dense( std::size_t( n ) * n, 0.0 );
    for ( int i = 0; i < n; ++i )
    {
        dense[std::size_t( i ) * n + i] = 4.0 + u( rng );
        if ( i + 1 < n )
            dense[std::size_t( i ) * n + i + 1] = -1.0 - 0.3 * u( rng );
        if ( i > 0 )
            dense[std::size_t( i ) * n + i - 1] = 0.5 + 0.3 * u( rng );
        const int far = ( 7 * i + 3 ) % n;
        if ( std::abs( far - i ) > 1 )
            dense[std::size_t( i ) * n + far] = 0.5 * u( rng ) - 0.25;
    }
    return to_csr( n, dense );
}

std::vector<double> random_vector( int n, unsigned seed )
{
    std::mt19937_64 rng( seed );
    std::uniform_real_distribution<double> u( -1.0, 1.0 );
    std::vector<double> v( static_cast<std::size_t>( n ) );
    for ( auto& e : v )
        e = u( rng );
    return v;
}

TEST( TEST_CATEGORY, bicgstab_nonsymmetric_known_solution )
{
    const int n = 40;
    const Csr a = nonsymmetric_system( n, 11 );
    const std::vector<double> x_true = random_vector( n, 12 );
    const std::vector<double> b = multiply( a, x_true );
    for ( bool team : { false, true } )
    {
        const Outcome o = solve( a, b, 1e-10, n + 50, team );
        ASSERT_TRUE( o.converged ) << ( team ? "team" : "thread" );
        EXPECT_GT( o.iterations, 1 );
        EXPECT_LE( o.iterations, n );
        EXPECT_LE( relative_residual( a, o.x, b ), 1.5e-10 ) << ( team ? "team" : "thread" );
        EXPECT_LE( relative_error( o.x, x_true ), 1e-9 ) << ( team ? "team" : "thread" );
    }
}

// The stopping rule ||r|| <= tol ||b||: each tolerance is met, a looser one stops earlier (the solver
// does not simply iterate to rounding), and a tighter one never takes fewer iterations.
TEST( TEST_CATEGORY, bicgstab_meets_the_requested_tolerance )
{
    const int n = 60;
    const Csr a = nonsymmetric_system( n, 21 );
    const std::vector<double> b = random_vector( n, 22 );
    const std::vector<double> reference = dense_solve( a, b );
    for ( bool team : { false, true } )
    {
        long previous = 0;
        double loosest_residual = 0.0;
        long loosest_iterations = 0;
        for ( double tolerance : { 1e-2, 1e-5, 1e-8, 1e-11, 1e-13 } )
        {
            const Outcome o = solve( a, b, tolerance, n + 50, team );
            ASSERT_TRUE( o.converged ) << "tolerance " << tolerance;
            const double residual = relative_residual( a, o.x, b );
            EXPECT_LE( residual, 1.5 * tolerance ) << "tolerance " << tolerance;
            EXPECT_GE( o.iterations, previous ) << "tolerance " << tolerance;
            previous = o.iterations;
            if ( tolerance == 1e-2 )
            {
                loosest_residual = residual;
                loosest_iterations = o.iterations;
            }
            else
                EXPECT_LE( relative_error( o.x, reference ), 100 * tolerance ) << "tolerance " << tolerance;
        }
        EXPECT_GT( loosest_residual, 1e-10 ) << "tolerance 1e-2 solved to rounding: the tolerance is not used";
        EXPECT_LT( loosest_iterations, previous );
    }
}

// The mass-action Jacobian at y on its CSR pattern, as the integrator evaluates it.
Kokkos::View<double*, TEST_MEMSPACE> jacobian_values( const morula::ode::MassActionSystem<TEST_MEMSPACE>& sys,
                                                      const std::vector<double>& k, const std::vector<double>& y )
{
    Kokkos::View<double*, TEST_MEMSPACE> values( "J", std::size_t( sys.jacobian_nonzeros_count ) );
    const auto x = to_device( "y", y );
    const auto rates = to_device( "k", k );
    Kokkos::parallel_for(
        "bicgstab_test_jacobian", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 1 ), KOKKOS_LAMBDA( const int ) {
            const morula::ode::detail::ThreadOps ops;
            morula::ode::detail::evaluate_jacobian_values( ops, sys, Strided<const double>{ rates.data(), 1 },
                                                           Strided<const double>{ x.data(), 1 },
                                                           Strided<double>{ values.data(), 1 } );
        } );
    return values;
}

// Newton matrices of BDF on Robertson's problem: I - c J with J the analytic mass-action Jacobian, on
// its CSR pattern, for several copies of the system at states from t = 0.4 to 4e9 (the stiff eigenvalue
// from ~2e3 to ~1e4, c up to 1e3: c |lambda| up to 1e7), against a dense direct solve.
TEST( TEST_CATEGORY, bicgstab_robertson_newton_matrices )
{
    namespace rob = morula::test::robertson;
    using morula::test::reaction;
    const int copies[] = { 0, 2, 4, 6, 10 }; // rows of the decade table: t = 0.4, 40, 4e3, 4e5, 4e9
    const int k = static_cast<int>( sizeof( copies ) / sizeof( copies[0] ) );
    const int n = 3 * k;
    // k independent Robertson systems in one network: species (A_c, B_c, C_c) are 3c, 3c + 1, 3c + 2.
    std::vector<std::string> names;
    std::vector<morula::ode::Reaction> reactions;
    std::vector<double> y;
    for ( int c = 0; c < k; ++c )
    {
        const int A = 3 * c, B = A + 1, C = A + 2;
        for ( const char* s : { "A", "B", "C" } )
            names.push_back( s + std::to_string( c ) );
        reactions.push_back( reaction( { { A, 1 } }, { { B, 1 } }, rob::kRate1 ) );
        reactions.push_back( reaction( { { B, 2 } }, { { B, 1 }, { C, 1 } }, rob::kRate2 ) );
        reactions.push_back( reaction( { { B, 1 }, { C, 1 } }, { { A, 1 }, { C, 1 } }, rob::kRate3 ) );
        for ( int j = 0; j < 3; ++j )
            y.push_back( rob::kDecadeStates[copies[c]][j] );
    }
    const morula::ode::MassActionSystem<TEST_MEMSPACE> sys( morula::test::network( names, reactions, y ) );
    ASSERT_EQ( sys.species, n );

    std::vector<double> rate_constants;
    for ( const auto& r : reactions )
        rate_constants.push_back( r.rate_constant );
    const auto values = jacobian_values( sys, rate_constants, y );
    Csr jac;
    jac.n = n;
    {
        auto ro = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sys.jacobian_row_offsets );
        auto co = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sys.jacobian_columns );
        auto va = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), values );
        jac.row_offsets.assign( ro.data(), ro.data() + n + 1 );
        jac.columns.assign( co.data(), co.data() + sys.jacobian_nonzeros_count );
        jac.values.assign( va.data(), va.data() + sys.jacobian_nonzeros_count );
    }
    // The same Jacobian written out by hand (Robertson's y' = f(y)), so the matrices below are the
    // problem's and not only whatever the mass-action kernels produce.
    std::vector<double> analytic( std::size_t( n ) * n, 0.0 );
    for ( int c = 0; c < k; ++c )
    {
        const double y2 = y[std::size_t( 3 * c + 1 )], y3 = y[std::size_t( 3 * c + 2 )];
        const double block[3][3] = { { -rob::kRate1, rob::kRate3 * y3, rob::kRate3 * y2 },
                                     { rob::kRate1, -rob::kRate3 * y3 - 2 * rob::kRate2 * y2, -rob::kRate3 * y2 },
                                     { 0.0, 2 * rob::kRate2 * y2, 0.0 } };
        for ( int i = 0; i < 3; ++i )
            for ( int j = 0; j < 3; ++j )
                analytic[std::size_t( 3 * c + i ) * n + 3 * c + j] = block[i][j];
    }
    for ( int i = 0; i < n; ++i )
        for ( int z = jac.row_offsets[std::size_t( i )]; z < jac.row_offsets[std::size_t( i ) + 1]; ++z )
        {
            const double expected = analytic[std::size_t( i ) * n + jac.columns[std::size_t( z )]];
            ASSERT_NEAR( jac.values[std::size_t( z )], expected, 1e-12 * std::abs( expected ) ) << "J(" << i << ", " << z << ")";
        }

    // b: a Newton right-hand side c f(y) - psi - d has no structure to exploit; any mixed-sign vector will do.
    const std::vector<double> b = random_vector( n, 31 );
    for ( double c : { 1e-3, 1e-1, 1.0, 1e2, 1e3 } )
    {
        Csr m = jac; // I - c J on J's pattern, as form_newton_matrix builds it
        for ( int i = 0; i < n; ++i )
            for ( int z = m.row_offsets[std::size_t( i )]; z < m.row_offsets[std::size_t( i ) + 1]; ++z )
                m.values[std::size_t( z )] = ( m.columns[std::size_t( z )] == i ? 1.0 : 0.0 ) - c * jac.values[std::size_t( z )];
        const std::vector<double> reference = dense_solve( m, b );
        for ( bool team : { false, true } )
        {
            const Outcome o = solve( m, b, 1e-10, n + 50, team );
            ASSERT_TRUE( o.converged ) << "c = " << c;
            EXPECT_LE( relative_residual( m, o.x, b ), 1.5e-10 ) << "c = " << c;
            EXPECT_LE( relative_error( o.x, reference ), 1e-8 ) << "c = " << c;
        }
    }
}

TEST( TEST_CATEGORY, bicgstab_reports_failure )
{
    const int n = 40;
    const Csr a = nonsymmetric_system( n, 41 );
    const std::vector<double> b = random_vector( n, 42 );
    for ( bool team : { false, true } )
    {
        // The iteration limit: not converged after 2 iterations at 1e-12, b holds the last iterate.
        const Outcome limited = solve( a, b, 1e-12, 2, team );
        EXPECT_FALSE( limited.converged );
        EXPECT_EQ( limited.iterations, 2 );
        const double residual = relative_residual( a, limited.x, b );
        EXPECT_GT( residual, 1e-12 );
        EXPECT_LT( residual, 1.0 ); // two iterations still improved on x0 = 0

        // No iterations allowed: x stays x0 = 0.
        const Outcome none = solve( a, b, 1e-12, 0, team );
        EXPECT_FALSE( none.converged );
        EXPECT_EQ( none.iterations, 0 );
        EXPECT_EQ( norm2( none.x ), 0.0 );

        // b = 0 converges at once to x = 0.
        const Outcome zero = solve( a, std::vector<double>( std::size_t( n ), 0.0 ), 1e-12, n + 50, team );
        EXPECT_TRUE( zero.converged );
        EXPECT_EQ( zero.iterations, 0 );
        EXPECT_EQ( norm2( zero.x ), 0.0 );

        // A singular system with b outside the range of A: [[1, 1], [1, 1]] x = (1, -1). A v = 0 for the
        // first search direction, r0 . v = 0: a breakdown, reported as failure, without NaN in x.
        const Csr singular = to_csr( 2, { 1.0, 1.0, 1.0, 1.0 } );
        const Outcome broken = solve( singular, { 1.0, -1.0 }, 1e-10, 52, team );
        EXPECT_FALSE( broken.converged );
        EXPECT_EQ( broken.iterations, 1 );
        for ( double v : broken.x )
            EXPECT_TRUE( std::isfinite( v ) );
    }
}

} // namespace morula_test_bicgstab
