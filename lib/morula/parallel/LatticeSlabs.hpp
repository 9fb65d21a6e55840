/*!
  \file LatticeSlabs.hpp
  \brief How lattice::LatticeDiffusion cuts a lattice into slabs along z over MPI ranks: which planes each
  rank owns, how many ghost planes it keeps, which cuts work, and a rank's slab of a whole lattice.
*/
#ifndef MORULA_PARALLEL_LATTICESLABS_HPP
#define MORULA_PARALLEL_LATTICESLABS_HPP

#include <morula/core/Error.hpp>
#include <morula/lattice/Lattice.hpp>

#include <cstddef>
#include <cstdint>

namespace morula::parallel
{

//! Planes [begin, end) of a lattice's z axis.
struct PlaneRange
{
    int begin = 0;
    int end = 0;
    int size() const { return end - begin; }
};

//! The planes rank `rank` of `ranks` owns: [nz rank / ranks, nz (rank + 1) / ranks).
inline PlaneRange slab_of_rank( int nz, int rank, int ranks )
{
    return { int( std::int64_t( nz ) * rank / ranks ), int( std::int64_t( nz ) * ( rank + 1 ) / ranks ) };
}

//! Ghost planes on each side of a slab: the overflow placement reaches 3 planes (origin one plane away,
//! its 5^3 cube two more).
inline constexpr int lattice_slab_ghost_planes = 3;

//! \throws core::InputError unless `ranks` slabs of `whole` work (the same answer on every rank);
//! `owned` must be rank `rank`'s slab.
inline void validate_lattice_slabs( const lattice::LatticeShape& whole, const lattice::LatticeShape& owned, int rank,
                                    int ranks )
{
    using core::detail::concat;
    constexpr int ghost_planes = lattice_slab_ghost_planes;
    whole.validate();
    const auto thinnest = slab_of_rank( whole.nz, 0, ranks ).size(); // nz / ranks rounded down
    const int thickest = ( whole.nz + ranks - 1 ) / ranks;
    if ( ranks > 1 && thinnest < ghost_planes )
        throw core::InputError( concat( "LatticeDiffusion on slabs: ", ranks, " ranks cut the ", whole.nz,
                                        " planes of z into slabs of ", thinnest, "; each needs at least ",
                                        ghost_planes, " planes (the overflow placement reaches 3 sites): use at most ",
                                        whole.nz / ghost_planes, " ranks" ) );
    if ( ranks > 1 && whole.boundary[2] == lattice::LatticeBoundary::periodic && whole.nz < thickest + 2 * ghost_planes )
        throw core::InputError( concat( "LatticeDiffusion on slabs: with a periodic z axis of ", whole.nz,
                                        " planes, a slab of ", thickest, " planes and its ", 2 * ghost_planes,
                                        " ghost planes would wrap onto itself: use more planes or more ranks" ) );
    const auto mine = slab_of_rank( whole.nz, rank, ranks );
    if ( owned.nx != whole.nx || owned.ny != whole.ny || owned.nz != mine.size() )
        throw core::InputError( concat( "LatticeDiffusion on slabs: rank ", rank, " was given ", owned.nx, " x ",
                                        owned.ny, " x ", owned.nz, " sites; its slab of the ", whole.nx, " x ",
                                        whole.ny, " x ", whole.nz, " lattice is ", whole.nx, " x ", whole.ny, " x ",
                                        mine.size(), " (planes ", mine.begin, " to ", mine.end - 1, ")" ) );
}

/*!
  \brief Rank `rank`'s slab of `whole` (planes slab_of_rank(nz, rank, ranks)), a copy on `exec`: what the
  slab constructors of lattice::LatticeDiffusion take when every rank holds the whole initial lattice.
  \throws core::InputError unless `ranks` slabs of the lattice work (validate_lattice_slabs())
*/
template <int Slots, class MemorySpace, class ExecutionSpace>
lattice::Lattice<Slots, MemorySpace> owned_slab( const ExecutionSpace& exec, const lattice::Lattice<Slots, MemorySpace>& whole,
                                                 int rank, int ranks )
{
    const auto& shape = whole.shape();
    const auto mine = slab_of_rank( shape.nz, rank, ranks );
    lattice::LatticeShape slab_shape = shape;
    slab_shape.nz = mine.size();
    validate_lattice_slabs( shape, slab_shape, rank, ranks ); // a bad rank count is reported as such
    lattice::Lattice<Slots, MemorySpace> slab( slab_shape, "lattice_slab_initial" );
    const std::size_t plane = std::size_t( shape.nx ) * std::size_t( shape.ny );
    Kokkos::deep_copy( exec, slab.sites(),
                       Kokkos::subview( whole.sites(), Kokkos::make_pair( plane * std::size_t( mine.begin ),
                                                                          plane * std::size_t( mine.end ) ) ) );
    exec.fence();
    return slab;
}

} // namespace morula::parallel

#endif
