/*!
  \file LocalBoxes.hpp
  \brief The boxes a rank of DistributedSphereMechanics works in: its local grid's and the one its owned
  agents move in.
*/
#ifndef MORULA_PARALLEL_DETAIL_LOCALBOXES_HPP
#define MORULA_PARALLEL_DETAIL_LOCALBOXES_HPP

#include <morula/core/Box.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/parallel/Halo.hpp>

namespace morula::parallel::detail
{

// The subdomain grown by the halo width, open: the ghosts stand for the periodic images and the
// walls, so the local grid needs neither (and follows agents that drift out). Axes whose images
// are the rank's own (PeriodicImages::minimum_image, one rank along a periodic axis) stay the
// whole periodic axis: the grid's minimum image replaces the ghosts.
template <class Scalar>
core::Box<Scalar> local_box( const CartesianDecomposition<Scalar>& dec, PeriodicImages images )
{
    core::Box<Scalar> box = dec.box();
    for ( int a = 0; a < 3; ++a )
    {
        if ( images == PeriodicImages::minimum_image && dec.periodic_within_rank( a ) )
            continue;
        box.lo[a] = dec.lo()[a] - dec.halo_width();
        box.hi[a] = dec.hi()[a] + dec.halo_width();
        box.boundary[a] = core::Boundary::open;
    }
    return box;
}

// The box for moving owned agents: closed walls stay; periodic axes are left unwrapped (see
// DistributedSphereMechanics), except those the local grid wraps itself, where no ghost depends on it.
template <class Scalar>
core::Box<Scalar> move_box( const CartesianDecomposition<Scalar>& dec, PeriodicImages images )
{
    core::Box<Scalar> box = dec.box();
    for ( int a = 0; a < 3; ++a )
        if ( box.boundary[a] == core::Boundary::periodic &&
             !( images == PeriodicImages::minimum_image && dec.periodic_within_rank( a ) ) )
            box.boundary[a] = core::Boundary::open;
    return box;
}

} // namespace morula::parallel::detail

#endif
