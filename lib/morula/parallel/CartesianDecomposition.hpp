/*!
  \file CartesianDecomposition.hpp
  \brief Regular Cartesian decomposition of a core::Box over MPI ranks (MPI_Cart_create), with the 26
  neighbour directions, their periodic shifts and a device-callable owner computation.
*/
#ifndef MORULA_PARALLEL_CARTESIANDECOMPOSITION_HPP
#define MORULA_PARALLEL_CARTESIANDECOMPOSITION_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/parallel/Transport.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <array>
#include <cmath>
#include <memory>
#include <vector>

namespace morula::parallel
{

//! Number of neighbour directions of a 3D Cartesian grid: {-1, 0, 1}^3 without (0, 0, 0).
constexpr int num_directions = 26;

/*!
  \brief Direction of slot s in [0, 26): the offsets {-1, 0, 1}^3 in the order x slowest, z fastest,
  skipping (0, 0, 0). The opposite of slot s is slot 25 - s.
*/
KOKKOS_INLINE_FUNCTION Kokkos::Array<int, 3> direction_of_slot( int s )
{
    const int f = s < 13 ? s : s + 1;
    return { f / 9 - 1, f / 3 % 3 - 1, f % 3 - 1 };
}

//! Slot in [0, 26) of the direction (dx, dy, dz), each in {-1, 0, 1}, not all zero.
KOKKOS_INLINE_FUNCTION int slot_of_direction( int dx, int dy, int dz )
{
    const int f = ( dx + 1 ) * 9 + ( dy + 1 ) * 3 + ( dz + 1 );
    return f < 13 ? f : f - 1;
}

//! Slot of the opposite direction.
KOKKOS_INLINE_FUNCTION constexpr int opposite_slot( int s ) { return num_directions - 1 - s; }

/*!
  \brief Which rank owns a position: a small trivially copyable struct for kernels.

  Periodic axes are wrapped into [lo, hi) first. On a closed or open axis a position below lo belongs
  to the first rank along that axis and one at or above hi to the last: nothing is ever ownerless.
  Subdomain i along an axis is [bound(i), bound(i + 1)), bound(i) = lo + (hi - lo) * i / dims, the same
  expression on the host and the device, so that neighbouring subdomains share their face exactly.
*/
template <class Scalar>
struct CartesianOwner
{
    Kokkos::Array<Scalar, 3> lo{};
    Kokkos::Array<Scalar, 3> hi{};
    Kokkos::Array<int, 3> dims{ 1, 1, 1 };
    Kokkos::Array<int, 3> periodic{ 0, 0, 0 };

    //! Lower bound of subdomain i (0 <= i <= dims) along axis a; bound(dims) is hi exactly.
    KOKKOS_INLINE_FUNCTION Scalar bound( int a, int i ) const
    {
        if ( i >= dims[a] )
            return hi[a];
        return lo[a] + ( hi[a] - lo[a] ) * static_cast<Scalar>( i ) / static_cast<Scalar>( dims[a] );
    }

    //! x wrapped into [lo, hi) on a periodic axis; unchanged otherwise.
    KOKKOS_INLINE_FUNCTION Scalar wrap( int a, Scalar x ) const
    {
        if ( !periodic[a] )
            return x;
        const Scalar L = hi[a] - lo[a];
        if ( x >= lo[a] && x < hi[a] )
            return x;
        Scalar w = x - L * compat::floor( ( x - lo[a] ) / L );
        // Rounding can land exactly on hi (x a tiny bit below lo) or just outside: clamp into [lo, hi).
        if ( w >= hi[a] || w < lo[a] )
            w = lo[a];
        return w;
    }

    //! Grid coordinate along axis a of an (already wrapped) position component x.
    KOKKOS_INLINE_FUNCTION int coord( int a, Scalar x ) const
    {
        const int n = dims[a];
        if ( !( x >= lo[a] ) ) // also catches NaN: the first rank keeps it
            return 0;
        if ( x >= hi[a] )
            return n - 1;
        int c = static_cast<int>( ( x - lo[a] ) / ( hi[a] - lo[a] ) * static_cast<Scalar>( n ) );
        c = c < 0 ? 0 : ( c >= n ? n - 1 : c );
        // The estimate can be one off at a face; the bounds decide.
        while ( c > 0 && x < bound( a, c ) )
            --c;
        while ( c < n - 1 && x >= bound( a, c + 1 ) )
            ++c;
        return c;
    }

    //! Rank (in the Cartesian communicator, row-major as MPI_Cart_create orders it) of grid coordinates.
    KOKKOS_INLINE_FUNCTION int rank_of_coords( int cx, int cy, int cz ) const
    {
        return ( cx * dims[1] + cy ) * dims[2] + cz;
    }

    //! Rank owning the position (x, y, z), periodic axes wrapped first.
    KOKKOS_INLINE_FUNCTION int operator()( Scalar x, Scalar y, Scalar z ) const
    {
        return rank_of_coords( coord( 0, wrap( 0, x ) ), coord( 1, wrap( 1, y ) ),
                               coord( 2, wrap( 2, z ) ) );
    }
};

//! A neighbour of this rank in one of the 26 directions.
template <class Scalar>
struct Neighbor
{
    int slot = 0;                       //!< Direction slot, see direction_of_slot().
    Kokkos::Array<int, 3> direction{};  //!< Offsets in {-1, 0, 1} per axis.
    int rank = MPI_PROC_NULL;           //!< Rank in the Cartesian communicator (may be this rank).
    Kokkos::Array<Scalar, 3> shift{};   //!< Added to positions sent this way (+-box length on wrap).
};

/*!
  \brief A regular Cartesian decomposition of a box over the ranks of an MPI communicator.

  Built once from the communicator, the box, the halo width (the interaction cutoff) and optional
  ranks per axis. Every check happens before the first collective call (MPI_Cart_create), so a bad
  input throws core::InputError on every rank alike and nothing has been communicated.

  Closed and open axes are both decomposed over the box's finite bounds [lo, hi); on an open axis a
  particle that leaves the box stays with the boundary rank on that side (see CartesianOwner).

  Copies share the Cartesian communicator, which is freed with the last copy (before MPI_Finalize).
*/
template <class Scalar>
class CartesianDecomposition
{
  public:
    using scalar_type = Scalar;

    /*!
      \param comm the ranks to decompose over (duplicated into a Cartesian communicator)
      \param box the simulation box; periodic axes become periodic grid dimensions
      \param halo_width the cutoff: ghosts are the particles within it of a subdomain
      \param dims ranks per axis; 0 entries are chosen by MPI_Dims_create
    */
    CartesianDecomposition( MPI_Comm comm, const core::Box<Scalar>& box, Scalar halo_width,
                            std::array<int, 3> dims = { 0, 0, 0 } )
        : m_box( box ), m_halo_width( halo_width )
    {
        const char* where = "parallel::CartesianDecomposition";
        int size = 0;
        MPI_Comm_size( comm, &size );
        box.validate( where );
        if ( !( halo_width > 0 ) || !std::isfinite( static_cast<double>( halo_width ) ) )
            throw core::InputError( core::detail::concat(
                where, ": the halo width must be positive and finite, got ", halo_width ) );
        int fixed = 1;
        for ( int a = 0; a < 3; ++a )
        {
            if ( dims[a] < 0 )
                throw core::InputError( core::detail::concat( where, ": ranks along axis ", "xyz"[a],
                                                              " must be >= 0 (0 = choose), got ",
                                                              dims[a] ) );
            if ( dims[a] > 0 )
                fixed *= dims[a];
        }
        const bool all_fixed = dims[0] > 0 && dims[1] > 0 && dims[2] > 0;
        if ( ( all_fixed && fixed != size ) || ( !all_fixed && size % fixed != 0 ) )
            throw core::InputError( core::detail::concat(
                where, ": ranks per axis ", dims[0], " x ", dims[1], " x ", dims[2],
                ( all_fixed ? " multiply to " : " (0 = free) have a fixed product " ), fixed,
                ( all_fixed ? ", not to" : " that does not divide" ),
                " the communicator size ", size ) );
        int d[3] = { dims[0], dims[1], dims[2] };
        MPI_Dims_create( size, 3, d ); // local computation, no communication
        for ( int a = 0; a < 3; ++a )
        {
            m_owner.dims[a] = d[a];
            m_owner.lo[a] = box.lo[a];
            m_owner.hi[a] = box.hi[a];
            m_owner.periodic[a] = box.is_periodic( a ) ? 1 : 0;
        }
        for ( int a = 0; a < 3; ++a )
        {
            const Scalar L = box.length( a );
            if ( d[a] > 1 )
            {
                // The thinnest subdomain along the axis (bounds are rounded, so check each).
                Scalar thinnest = L;
                for ( int i = 0; i < d[a]; ++i )
                {
                    const Scalar w = m_owner.bound( a, i + 1 ) - m_owner.bound( a, i );
                    thinnest = w < thinnest ? w : thinnest;
                }
                if ( thinnest < halo_width )
                {
                    const int fit = static_cast<int>( std::floor( static_cast<double>( L / halo_width ) ) );
                    throw core::InputError( core::detail::concat(
                        where, ": ", size, " ranks as ", d[0], " x ", d[1], " x ", d[2], " put ", d[a],
                        " ranks along axis ", "xyz"[a], " (length ", L, "), giving subdomains ",
                        thinnest, " wide, thinner than the halo width ", halo_width,
                        "; at most ", fit, " ranks fit along that axis (pass dims explicitly)" ) );
                }
            }
            else if ( box.is_periodic( a ) && L < halo_width )
                throw core::InputError( core::detail::concat(
                    where, ": periodic axis ", "xyz"[a], " with one rank has length ", L,
                    ", shorter than the halo width ", halo_width ) );
        }

        // Collective from here on: every rank has passed the same checks.
        int periods[3] = { m_owner.periodic[0], m_owner.periodic[1], m_owner.periodic[2] };
        MPI_Comm cart = MPI_COMM_NULL;
        MPI_Cart_create( comm, 3, d, periods, /*reorder=*/0, &cart );
        m_comm = std::shared_ptr<MPI_Comm>( new MPI_Comm( cart ), []( MPI_Comm* c ) {
            int finalized = 0;
            MPI_Finalized( &finalized );
            if ( !finalized && *c != MPI_COMM_NULL )
                MPI_Comm_free( c );
            delete c;
        } );
        m_transport = TransportContext( cart );
        MPI_Comm_rank( cart, &m_rank );
        m_size = size;
        int c[3];
        MPI_Cart_coords( cart, m_rank, 3, c );
        for ( int a = 0; a < 3; ++a )
        {
            m_coords[a] = c[a];
            m_lo[a] = m_owner.bound( a, c[a] );
            m_hi[a] = m_owner.bound( a, c[a] + 1 );
        }
        if ( m_owner.rank_of_coords( c[0], c[1], c[2] ) != m_rank )
            throw core::InputError( core::detail::concat(
                where, ": MPI_Cart_create did not number ranks row-major (rank ", m_rank,
                " at coordinates ", c[0], ", ", c[1], ", ", c[2], ")" ) );

        for ( int s = 0; s < num_directions; ++s )
        {
            const auto dir = direction_of_slot( s );
            Neighbor<Scalar> nb;
            nb.slot = s;
            nb.direction = dir;
            bool exists = true;
            int nc[3];
            for ( int a = 0; a < 3; ++a )
            {
                nc[a] = c[a] + dir[a];
                nb.shift[a] = 0;
                if ( nc[a] < 0 || nc[a] >= d[a] )
                {
                    if ( !periods[a] )
                        exists = false;
                    // Leaving through the low face re-enters at the high end: the receiver sees +L.
                    nb.shift[a] = nc[a] < 0 ? box.length( a ) : -box.length( a );
                    nc[a] = ( nc[a] + d[a] ) % d[a];
                }
            }
            m_slot_rank[s] = MPI_PROC_NULL;
            if ( !exists )
                continue;
            nb.rank = m_owner.rank_of_coords( nc[0], nc[1], nc[2] );
            m_slot_rank[s] = nb.rank;
            m_slot_shift[s] = nb.shift;
            m_neighbors.push_back( nb );
        }
    }

    //! The Cartesian communicator every exchange of this decomposition uses.
    MPI_Comm comm() const { return *m_comm; }
    int rank() const { return m_rank; }
    int size() const { return m_size; }
    //! Ranks per axis.
    std::array<int, 3> dims() const { return { m_owner.dims[0], m_owner.dims[1], m_owner.dims[2] }; }
    //! This rank's grid coordinates.
    std::array<int, 3> coords() const { return m_coords; }
    //! This rank's subdomain is [lo, hi) per axis.
    const Kokkos::Array<Scalar, 3>& lo() const { return m_lo; }
    const Kokkos::Array<Scalar, 3>& hi() const { return m_hi; }
    const core::Box<Scalar>& box() const { return m_box; }
    Scalar halo_width() const { return m_halo_width; }

    //! The existing neighbour directions (26 when every axis is periodic or interior), in slot order.
    const std::vector<Neighbor<Scalar>>& neighbors() const { return m_neighbors; }
    //! Rank of direction slot s, MPI_PROC_NULL where there is no neighbour that way.
    int neighbor_rank( int s ) const { return m_slot_rank[s]; }
    //! Periodic shift of positions sent in direction slot s (zero without wrap or neighbour).
    Kokkos::Array<Scalar, 3> neighbor_shift( int s ) const { return m_slot_shift[s]; }

    //! The owner computation, for kernels.
    const CartesianOwner<Scalar>& owner() const { return m_owner; }

    //! How the exchanges of this decomposition move data (chosen on first use, collectively; shared
    //! by copies of the decomposition, with the NCCL communicator when NCCL is chosen).
    const TransportContext& transport_context() const { return m_transport; }

    /*!
      \brief Whether axis a is periodic with one rank along it: every neighbour across it is this rank's
      own periodic image, which a rank-local grid can reach by the minimum image instead of ghosts.
    */
    bool periodic_within_rank( int a ) const { return m_owner.periodic[a] && m_owner.dims[a] == 1; }

  private:
    core::Box<Scalar> m_box;
    Scalar m_halo_width;
    CartesianOwner<Scalar> m_owner;
    std::shared_ptr<MPI_Comm> m_comm;
    TransportContext m_transport;
    int m_rank = 0;
    int m_size = 1;
    std::array<int, 3> m_coords{};
    Kokkos::Array<Scalar, 3> m_lo{};
    Kokkos::Array<Scalar, 3> m_hi{};
    std::vector<Neighbor<Scalar>> m_neighbors;
    std::array<int, num_directions> m_slot_rank{};
    std::array<Kokkos::Array<Scalar, 3>, num_directions> m_slot_shift{};
};

} // namespace morula::parallel

#endif
