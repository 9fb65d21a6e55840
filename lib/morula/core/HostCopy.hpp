/*!
  \file HostCopy.hpp
  \brief Copies between the first n entries of a device field and a host std::vector, the shape of
  input, output and checkpoints, and the next free id of a set of ids.

  Only the n live entries cross between memory spaces, never the field's whole capacity (growth keeps
  it well above n), and entries from n on stay as they are. Both directions use Kokkos::deep_copy without an execution space instance:
  it fences, which these host-side conversions need anyway (the host reads or has written the values).
*/
#ifndef MORULA_CORE_HOSTCOPY_HPP
#define MORULA_CORE_HOSTCOPY_HPP

#include <morula/core/Error.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace morula::core
{
namespace detail
{

//! Host values per entry: 1 for a rank-1 field, extent(1) for a rank-2 one (n x k).
template <class View>
std::size_t host_copy_width( const View& field )
{
    static_assert( View::rank == 1 || View::rank == 2, "host copies take rank-1 or rank-2 Views" );
    if constexpr ( View::rank == 1 )
        return 1;
    else
        return field.extent( 1 );
}

template <class View>
void check_host_copy_rows( const View& field, std::size_t n, const char* where )
{
    if ( n > field.extent( 0 ) )
        throw InputError( concat( where, ": ", n, " entries asked of field '", field.label(), "', which holds ",
                                  field.extent( 0 ) ) );
}

/*!
  \brief Calls f( rows, j ) for blocks of the first n rows that a deep_copy between memory spaces
  accepts: such a copy needs contiguous Views. The first n rows of a LayoutRight field are one
  contiguous block (j = -1: all columns); those of a LayoutLeft field are k pieces a capacity apart,
  each column's piece contiguous (j = 0 ... k - 1).
*/
template <class View, class F>
void for_each_contiguous_block( const View& field, std::size_t n, F&& f )
{
    const auto rows = std::make_pair( std::size_t( 0 ), n );
    if constexpr ( View::rank == 1 )
        f( Kokkos::subview( field, rows ), -1 );
    else if constexpr ( std::is_same_v<typename View::array_layout, Kokkos::LayoutRight> )
        f( Kokkos::subview( field, rows, Kokkos::ALL ), -1 );
    else
        for ( std::size_t j = 0; j < field.extent( 1 ); ++j )
            f( Kokkos::subview( field, rows, j ), static_cast<int>( j ) );
}

} // namespace detail

/*!
  \brief Copies the first n entries of a device field into `out` (resized to k n): rank 1 -> out[i];
  rank 2 (n x k: Scalar*[3] positions, n x species) -> out[k i + j], converted to T.
  \throws InputError if the field has fewer than n entries
*/
template <class T, class View>
void copy_to_host( const View& field, std::size_t n, std::vector<T>& out )
{
    const std::size_t k = detail::host_copy_width( field );
    detail::check_host_copy_rows( field, n, "core::copy_to_host" );
    out.resize( k * n );
    if ( n == 0 )
        return;
    detail::for_each_contiguous_block( field, n, [&]( const auto& block, int j ) {
        // the block itself when the field is host-accessible: no copy
        const auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), block );
        if constexpr ( std::decay_t<decltype( h )>::rank == 1 )
        {
            const std::size_t stride = j < 0 ? 1 : k, first = j < 0 ? 0 : j;
            for ( std::size_t i = 0; i < n; ++i )
                out[stride * i + first] = static_cast<T>( h( i ) );
        }
        else
        {
            for ( std::size_t i = 0; i < n; ++i )
                for ( std::size_t c = 0; c < k; ++c )
                    out[k * i + c] = static_cast<T>( h( i, c ) );
        }
    } );
}

/*!
  \brief Writes the first n entries of a device field from `in`, in copy_to_host's order and converted
  to the field's value type; entries from n on are left as they are.
  \throws InputError if the field has fewer than n entries or `in` fewer than k n values
*/
template <class View, class T>
void copy_from_host( const std::vector<T>& in, std::size_t n, const View& field )
{
    using value_type = typename View::non_const_value_type;
    static_assert( !std::is_const_v<typename View::value_type>, "copy_from_host writes into the field" );
    const std::size_t k = detail::host_copy_width( field );
    detail::check_host_copy_rows( field, n, "core::copy_from_host" );
    if ( in.size() < k * n )
        throw InputError( detail::concat( "core::copy_from_host: ", in.size(), " values for ", n, " entries of field '",
                                  field.label(), "' (expected ", k, " per entry)" ) );
    if ( n == 0 )
        return;
    detail::for_each_contiguous_block( field, n, [&]( const auto& block, int j ) {
        // the block itself when the field is host-accessible, and the deep_copy is then a no-op
        const auto h = Kokkos::create_mirror_view( block );
        if constexpr ( std::decay_t<decltype( h )>::rank == 1 )
        {
            const std::size_t stride = j < 0 ? 1 : k, first = j < 0 ? 0 : j;
            for ( std::size_t i = 0; i < n; ++i )
                h( i ) = static_cast<value_type>( in[stride * i + first] );
        }
        else
        {
            for ( std::size_t i = 0; i < n; ++i )
                for ( std::size_t c = 0; c < k; ++c )
                    h( i, c ) = static_cast<value_type>( in[k * i + c] );
        }
        Kokkos::deep_copy( block, h );
    } );
}

/*!
  \brief The id for the next new agent: the smallest non-negative id above every id in `ids` (0 if
  empty or all negative).
  \throws CapacityError if an id is the largest std::int64_t
*/
inline std::int64_t next_free_id( const std::vector<std::int64_t>& ids )
{
    std::int64_t next = 0;
    for ( const std::int64_t id : ids )
    {
        if ( id == std::numeric_limits<std::int64_t>::max() )
            throw CapacityError( "core::next_free_id: an id is the largest 64-bit integer, none is left above it" );
        next = id + 1 > next ? id + 1 : next;
    }
    return next;
}

} // namespace morula::core

#endif
