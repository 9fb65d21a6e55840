// Helpers of the tumour/angiogenesis tests: small scenes built on the host.
#ifndef MORULA_TESTS_ANGIO_ANGIOTESTUTILS_HPP
#define MORULA_TESTS_ANGIO_ANGIOTESTUTILS_HPP

#include <morula/angio/Angiogenesis.hpp>
#include <morula/core/Box.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <vector>

namespace morula_test_angio
{
using morula::angio::AngioParameters;
using morula::angio::HostCells;
using morula::angio::HostTubes;
using Model = morula::angio::TumourAngiogenesis<double, TEST_MEMSPACE>;
using Cells = morula::angio::TumourCells<double, TEST_MEMSPACE>;
using Tubes = morula::angio::VesselTubes<double, TEST_MEMSPACE>;

inline morula::core::Box<double> cube( double edge )
{
    return morula::core::Box<double>::cube( edge, morula::core::Boundary::closed );
}

inline Model make_model( const HostCells& c, const HostTubes& t, double edge, const AngioParameters& p )
{
    return Model( Cells( c ), Tubes( t ), cube( edge ), p );
}

//! A cluster of `radius` μm at the centre of a cube of `edge` μm.
inline HostCells centred_cluster( double edge, double radius, std::uint64_t seed = 1 )
{
    HostCells h;
    morula::angio::ClusterSpec s;
    s.centre[0] = s.centre[1] = s.centre[2] = 0.5 * edge;
    s.radius = radius;
    s.seed = seed;
    morula::angio::add_cluster( h, s );
    return h;
}

inline double volume( double r ) { return 4.0 / 3.0 * M_PI * r * r * r; }

} // namespace morula_test_angio

#endif
