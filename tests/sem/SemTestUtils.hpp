// Helpers of the SEM tests: small tissues built on the host.
#ifndef MORULA_TESTS_SEM_SEMTESTUTILS_HPP
#define MORULA_TESTS_SEM_SEMTESTUTILS_HPP

#include <morula/sem/Initializers.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <vector>

namespace morula_test_sem
{
using morula::sem::HostTissue;

//! Appends a cell: the template `cell` shifted by `at`, with the given number of type-1 elements (lowest first).
inline void add_cell( HostTissue& h, const std::vector<std::array<double, 3>>& cell, std::array<double, 3> at,
                      int adhesive = 0 )
{
    std::vector<int> order( cell.size() );
    for ( std::size_t k = 0; k < cell.size(); ++k )
        order[k] = static_cast<int>( k );
    std::sort( order.begin(), order.end(), [&]( int a, int b ) { return cell[a][2] < cell[b][2]; } );
    std::vector<int> type( cell.size(), 0 );
    for ( int k = 0; k < adhesive; ++k )
        type[order[k]] = 1;
    for ( std::size_t k = 0; k < cell.size(); ++k )
    {
        for ( int d = 0; d < 3; ++d )
            h.positions.push_back( cell[k][d] + at[d] );
        h.type.push_back( type[k] );
    }
    h.cell_elements.push_back( static_cast<int>( cell.size() ) );
}

template <class View>
std::vector<std::array<double, 3>> rows( const View& v, int n )
{
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), v );
    std::vector<std::array<double, 3>> out( n );
    for ( int i = 0; i < n; ++i )
        for ( int d = 0; d < 3; ++d )
            out[i][d] = static_cast<double>( h( i, d ) );
    return out;
}

inline double max_abs( const std::vector<std::array<double, 3>>& v )
{
    double m = 0;
    for ( const auto& a : v )
        for ( double x : a )
            m = std::max( m, std::fabs( x ) );
    return m;
}

} // namespace morula_test_sem

#endif
