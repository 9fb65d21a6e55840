/*!
  \file MessageRows.hpp
  \brief Gather/scatter kernels between every field of a SoA and message rows: one row per particle with
  all its fields, so that one message per neighbour carries them all.
*/
#ifndef MORULA_PARALLEL_DETAIL_MESSAGEROWS_HPP
#define MORULA_PARALLEL_DETAIL_MESSAGEROWS_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/core/SoA.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>


namespace morula::parallel::detail
{

/*!
  \brief Every field of a particle set as one message row: field f of particle i occupies bytes
  [offset_f, offset_f + sizeof(T_f)) of its row (offsets aligned to the field's element type, rows a
  multiple of 8 bytes), so that one message per neighbour carries all fields and one kernel packs them.
  A recursive list rather than a std::tuple: std::get is not callable on the device without
  --expt-relaxed-constexpr.
*/
template <class... Views>
struct FieldRows;

template <>
struct FieldRows<>
{
    KOKKOS_INLINE_FUNCTION void gather( unsigned char*, std::size_t ) const {}
    KOKKOS_INLINE_FUNCTION void scatter( const unsigned char*, std::size_t ) const {}
    KOKKOS_INLINE_FUNCTION void copy( std::size_t, std::size_t ) const {}
};

template <class View, class... Rest>
struct FieldRows<View, Rest...>
{
    using value_type = typename View::non_const_value_type;
    View view;
    std::size_t offset = 0;
    int components = 1;
    FieldRows<Rest...> rest;

    //! row <- particle i
    KOKKOS_INLINE_FUNCTION void gather( unsigned char* row, std::size_t i ) const
    {
        auto* p = reinterpret_cast<value_type*>( row + offset );
        if constexpr ( View::rank == 1 )
            p[0] = view( i );
        else
            for ( int c = 0; c < components; ++c )
                p[c] = view( i, c );
        rest.gather( row, i );
    }
    //! particle i <- row
    KOKKOS_INLINE_FUNCTION void scatter( const unsigned char* row, std::size_t i ) const
    {
        const auto* p = reinterpret_cast<const value_type*>( row + offset );
        if constexpr ( View::rank == 1 )
            view( i ) = p[0];
        else
            for ( int c = 0; c < components; ++c )
                view( i, c ) = p[c];
        rest.scatter( row, i );
    }
    //! particle dst <- particle src, every field
    KOKKOS_INLINE_FUNCTION void copy( std::size_t dst, std::size_t src ) const
    {
        if constexpr ( View::rank == 1 )
            view( dst ) = view( src );
        else
            for ( int c = 0; c < components; ++c )
                view( dst, c ) = view( src, c );
        rest.copy( dst, src );
    }
};

inline FieldRows<> make_field_rows( std::size_t& ) { return {}; }

//! The rows of `view, rest...`, laid out from byte `at` (which ends past the last field).
template <class View, class... Rest>
FieldRows<View, Rest...> make_field_rows( std::size_t& at, const View& view, const Rest&... rest )
{
    using T = typename View::non_const_value_type;
    static_assert( alignof( T ) <= 8, "FieldRows: a field aligned beyond 8 bytes" );
    FieldRows<View, Rest...> rows;
    at = ( at + alignof( T ) - 1 ) / alignof( T ) * alignof( T );
    rows.view = view;
    rows.offset = at;
    rows.components = View::rank == 1 ? 1 : static_cast<int>( view.extent( 1 ) );
    at += sizeof( T ) * std::size_t( rows.components );
    rows.rest = make_field_rows( at, rest... );
    return rows;
}

//! Row bytes ending at byte `end`: a multiple of 8, so that every row starts aligned.
inline std::size_t row_bytes_for( std::size_t end ) { return ( end + 7 ) / 8 * 8; }

template <class SoAType, std::size_t... I>
auto soa_field_rows( const SoAType& soa, std::size_t& at, std::index_sequence<I...> )
{
    return make_field_rows( at, soa.template get<I>()... );
}

//! Every field of `soa` as rows, and the row size in bytes.
template <class SoAType>
auto soa_field_rows( const SoAType& soa, std::size_t& row_bytes )
{
    std::size_t at = 0;
    auto rows = soa_field_rows( soa, at, std::make_index_sequence<SoAType::num_fields>{} );
    row_bytes = row_bytes_for( at );
    return rows;
}

//! Row k of `buf` <- particle idx(k), k < n. Free function: nvcc rejects extended lambdas elsewhere.
template <class ExecutionSpace, class Rows, class IndexView, class Bytes>
void pack_particle_rows( const ExecutionSpace& exec, std::size_t n, const Rows& rows, const IndexView& idx,
                         const Bytes& buf, std::size_t row_bytes )
{
    if ( n == 0 )
        return;
    Kokkos::parallel_for(
        "morula::parallel::pack_rows", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t k ) { rows.gather( buf.data() + k * row_bytes, std::size_t( idx( k ) ) ); } );
}

/*!
  As pack_particle_rows, then the position (field 0, Scalar[3] at byte 0 of the row) gets the periodic
  shift of the direction slot(k) it is exported to.
*/
template <class ExecutionSpace, class Rows, class IndexView, class ShiftView, class Bytes>
void pack_shifted_particle_rows( const ExecutionSpace& exec, std::size_t n, const Rows& rows, const IndexView& idx,
                                 const IndexView& slot, const ShiftView& shift, const Bytes& buf,
                                 std::size_t row_bytes )
{
    if ( n == 0 )
        return;
    using Scalar = typename ShiftView::non_const_value_type;
    Kokkos::parallel_for(
        "morula::parallel::pack_shifted_rows", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t k ) {
            unsigned char* row = buf.data() + k * row_bytes;
            rows.gather( row, std::size_t( idx( k ) ) );
            Scalar* x = reinterpret_cast<Scalar*>( row );
            const int s = slot( k );
            for ( int c = 0; c < 3; ++c )
                x[c] += shift( s, c );
        } );
}

//! Particle dst + k <- row k of `buf`, k < n.
template <class ExecutionSpace, class Rows, class Bytes>
void unpack_particle_rows( const ExecutionSpace& exec, std::size_t n, const Rows& rows, const Bytes& buf,
                           std::size_t row_bytes, std::size_t dst )
{
    if ( n == 0 )
        return;
    Kokkos::parallel_for(
        "morula::parallel::unpack_rows", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t k ) { rows.scatter( buf.data() + k * row_bytes, dst + k ); } );
}

} // namespace morula::parallel::detail

#endif
