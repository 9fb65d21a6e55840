/*!
  \file detail/SlabWindow.hpp
  \brief Which z planes of a lattice one set of arrays holds, and how a kernel maps its local sites to
  global ones.
*/
#ifndef MORULA_LATTICE_DETAIL_SLABWINDOW_HPP
#define MORULA_LATTICE_DETAIL_SLABWINDOW_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

/*!
  \brief Which z planes of a lattice one set of arrays holds: the whole lattice (one rank), or a slab with
  ghost planes on each side (LatticeDiffusion on slabs over MPI ranks). Local plane p is global plane z_first + p,
  wrapped on a periodic axis; the passes write local planes [owned_begin, owned_end).

  Every kernel keys its random draws and overflow entries on global site indices, so a slab computes
  bit for bit what the whole lattice computes for the same sites.
*/
struct SlabWindow
{
    int nz = 0;          //!< planes of the whole lattice
    int z_first = 0;     //!< global z of local plane 0 (negative below the first slab of a periodic axis)
    int planes = 0;      //!< local planes stored
    int owned_begin = 0; //!< first local plane this rank updates
    int owned_end = 0;   //!< one past the last
    bool periodic = true;
    bool whole = true; //!< the arrays hold the whole axis: neighbours wrap locally

    static SlabWindow whole_axis( int nz, bool periodic ) { return { nz, 0, nz, 0, nz, periodic, true }; }

    KOKKOS_FORCEINLINE_FUNCTION int owned_planes() const { return owned_end - owned_begin; }

    //! Global z of local plane p (wrapped into [0, nz) on a periodic axis).
    KOKKOS_FORCEINLINE_FUNCTION int global_z( int p ) const
    {
        const int g = z_first + p;
        return g < 0 ? g + nz : ( g >= nz ? g - nz : g );
    }

    //! Local plane one step m (-1, 0 or +1) along z from local plane p, or -1 where a reflecting face
    //! refuses the move.
    KOKKOS_FORCEINLINE_FUNCTION int neighbor( int p, int m ) const
    {
        const int g = z_first + p + m;
        if ( !periodic && ( g < 0 || g >= nz ) )
            return -1;
        const int t = p + m;
        if ( !whole )
            return t; // a slab's ghost planes hold the neighbours
        return t < 0 ? t + nz : ( t >= nz ? t - nz : t );
    }

    //! Local plane that holds global plane gz (in [0, nz)), or -1 if these arrays do not hold it.
    KOKKOS_FORCEINLINE_FUNCTION int local_of_global( int gz ) const
    {
        int p = gz - z_first;
        if ( periodic && !whole )
            p = p < 0 ? p + nz : ( p >= nz ? p - nz : p );
        return p >= 0 && p < planes ? p : -1;
    }
};

//! Calls pass(x, y, p) for flat site index i over the owned planes (x fastest), p the local plane: the
//! flat launch of a 3D pass.
template <class Pass>
KOKKOS_FORCEINLINE_FUNCTION void for_site_index( const Pass& pass, const int i, const int nx, const int ny,
                                                 const int first_plane )
{
    const int nxy = nx * ny;
    const int z = i / nxy;
    const int r = i - z * nxy;
    const int y = r / nx;
    pass( r - y * nx, y, first_plane + z );
}

//! Added to a local site index of local plane p, gives its global index (modulo 2^64 arithmetic: the
//! offset is negative for the ghost planes below a periodic lattice's first slab).
KOKKOS_FORCEINLINE_FUNCTION std::size_t global_offset( const SlabWindow& w, int p, std::size_t plane )
{
    return std::size_t( std::int64_t( w.global_z( p ) - p ) * std::int64_t( plane ) );
}

} // namespace morula::lattice::detail

#endif
