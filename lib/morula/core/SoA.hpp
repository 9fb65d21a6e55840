/*!
  \file SoA.hpp
  \brief Structure-of-arrays storage on Kokkos Views, with a capacity that grows without losing data.
*/
#ifndef MORULA_CORE_SOA_HPP
#define MORULA_CORE_SOA_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/detail/Gather.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace morula::core
{

namespace detail
{
//! Kokkos data type of a field: T -> T*, and a fixed-size array T[N] -> T*[N] (rank 2, N static).
template <class T>
struct soa_data_type
{
    using type = T*;
};
template <class T, std::size_t N>
struct soa_data_type<T[N]>
{
    using type = T* [N];
};
} // namespace detail

/*!
  \brief Fields of element types Types... stored as one View per field (structure of arrays).

  Field I is a `Kokkos::View<T*, Kokkos::LayoutLeft, MemorySpace>`; T may be a scalar (`double`, `int`)
  or a fixed-size array (`double[3]`), whose components are then contiguous per component, so that
  neighbouring threads read neighbouring addresses.

  The views are allocated with a capacity >= size(). Growing past the capacity reallocates every
  field and copies the existing entries; nothing is lost. View handles fetched with get<I>() before a
  reserve(), resize() beyond capacity or permute() refer to the old storage: fetch them again.
*/
template <class MemorySpace, class... Types>
class SoA
{
  public:
    using memory_space = MemorySpace;
    static constexpr std::size_t num_fields = sizeof...( Types );

    template <std::size_t I>
    using field_type = std::tuple_element_t<I, std::tuple<Types...>>;

    template <std::size_t I>
    using view_type =
        Kokkos::View<typename detail::soa_data_type<field_type<I>>::type, Kokkos::LayoutLeft,
                     MemorySpace>;

    SoA() = default;

    //! Storage with `size` entries (zero-initialised) and at least that capacity.
    explicit SoA( std::string label, std::size_t size = 0, std::size_t capacity = 0 )
        : m_label( std::move( label ) )
    {
        allocate( std::make_index_sequence<num_fields>{},
                  capacity > size ? capacity : size );
        m_size = size;
    }

    std::size_t size() const { return m_size; }
    std::size_t capacity() const { return m_capacity; }
    const std::string& label() const { return m_label; }

    //! Full-capacity View of field I (entries [size(), capacity()) are unspecified).
    template <std::size_t I>
    const view_type<I>& get() const
    {
        return std::get<I>( m_views );
    }

    //! Ensures capacity() >= new_capacity, copying every existing entry.
    void reserve( std::size_t new_capacity )
    {
        if ( new_capacity <= m_capacity )
            return;
        grow( std::make_index_sequence<num_fields>{}, new_capacity );
    }

    /*!
      \brief Sets the number of entries. Growing past the capacity reallocates geometrically (x1.5),
      keeping every existing entry; new entries are zero. Shrinking keeps the capacity.
    */
    void resize( std::size_t new_size )
    {
        if ( new_size > m_capacity )
        {
            std::size_t grown = m_capacity + m_capacity / 2 + 16;
            reserve( grown > new_size ? grown : new_size );
        }
        if ( new_size > m_size )
            zero_range( std::make_index_sequence<num_fields>{}, m_size, new_size );
        m_size = new_size;
    }

    /*!
      \brief Sets the number of entries to `new_size` <= capacity() without touching any entry: for
      entries [size(), new_size) that a kernel has already written (appends on the device), or to drop
      trailing entries. Larger than the capacity is an InputError.
    */
    void set_size( std::size_t new_size )
    {
        if ( new_size > m_capacity )
            throw InputError( detail::concat( "SoA::set_size(", m_label, "): ", new_size,
                                              " entries exceed the capacity ", m_capacity,
                                              "; reserve() first" ) );
        m_size = new_size;
    }

    /*!
      \brief Reorders every field by a gather: entry i becomes old entry perm(i), i < size().

      Uses a spare buffer per field (allocated once, then swapped), so repeated permutes allocate
      nothing.
    */
    template <class ExecutionSpace, class PermutationView>
    void permute( const ExecutionSpace& exec, const PermutationView& perm )
    {
        static_assert( Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                       "SoA::permute: the execution space cannot access this memory space" );
        if ( perm.extent( 0 ) < m_size )
            throw InputError( detail::concat( "SoA::permute(", m_label,
                                              "): permutation has ", perm.extent( 0 ),
                                              " entries, fewer than the ", m_size,
                                              " stored" ) );
        compat::ScopedRegion region( "morula::core::SoA::permute" );
        permute_fields( std::make_index_sequence<num_fields>{}, exec, perm );
    }

    /*!
      \brief Reorders the first n entries of every field by a gather (entry i < n becomes old entry
      perm(i), perm a permutation of [0, n)); entries n .. size() stay as they are. For the owned
      particles of a distributed run, ahead of ghosts that must keep their rows.
    */
    template <class ExecutionSpace, class PermutationView>
    void permute_leading( const ExecutionSpace& exec, const PermutationView& perm, std::size_t n )
    {
        static_assert( Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                       "SoA::permute_leading: the execution space cannot access this memory space" );
        if ( n > m_size || perm.extent( 0 ) < n )
            throw InputError( detail::concat( "SoA::permute_leading(", m_label, "): ", n,
                                              " entries to permute, with ", m_size, " stored and a permutation of ",
                                              perm.extent( 0 ) ) );
        compat::ScopedRegion region( "morula::core::SoA::permute_leading" );
        permute_leading_fields( std::make_index_sequence<num_fields>{}, exec, perm, n );
    }

  private:
    template <std::size_t... I, class ExecutionSpace, class PermutationView>
    void permute_leading_fields( std::index_sequence<I...>, const ExecutionSpace& exec, const PermutationView& perm,
                                 std::size_t n )
    {
        ( permute_leading_one( exec, perm, n, std::get<I>( m_views ), std::get<I>( m_spare ) ), ... );
    }

    template <class ExecutionSpace, class PermutationView, class V>
    void permute_leading_one( const ExecutionSpace& exec, const PermutationView& perm, std::size_t n, V& field,
                              V& spare ) const
    {
        if ( spare.extent( 0 ) != field.extent( 0 ) )
            spare = V( Kokkos::view_alloc( Kokkos::WithoutInitializing, field.label() + "::spare" ),
                       field.extent( 0 ) );
        detail::gather( exec, n, perm, field, spare );
        if ( n < m_size )
        {
            const auto rest = std::make_pair( n, m_size );
            if constexpr ( V::rank == 1 )
                Kokkos::deep_copy( exec, Kokkos::subview( spare, rest ), Kokkos::subview( field, rest ) );
            else
                Kokkos::deep_copy( exec, Kokkos::subview( spare, rest, Kokkos::ALL ),
                                   Kokkos::subview( field, rest, Kokkos::ALL ) );
        }
        std::swap( field, spare );
    }

    template <std::size_t... I>
    void allocate( std::index_sequence<I...>, std::size_t cap )
    {
        ( ( std::get<I>( m_views ) =
                view_type<I>( m_label + "::field" + std::to_string( I ), cap ) ),
          ... );
        m_capacity = cap;
    }

    template <std::size_t... I>
    void grow( std::index_sequence<I...>, std::size_t cap )
    {
        // Kokkos::resize allocates, zero-fills and copies the overlap: nothing stored is lost.
        ( resize_field( std::get<I>( m_views ), cap ), ... );
        ( drop_spare( std::get<I>( m_spare ) ), ... );
        m_capacity = cap;
    }

    template <class V>
    static void resize_field( V& v, std::size_t cap )
    {
        Kokkos::resize( v, cap );
    }

    template <class V>
    static void drop_spare( V& v )
    {
        v = V();
    }

    template <std::size_t... I>
    void zero_range( std::index_sequence<I...>, std::size_t begin, std::size_t end )
    {
        ( zero_field( std::get<I>( m_views ), begin, end ), ... );
    }

    template <class V>
    static void zero_field( const V& v, std::size_t begin, std::size_t end )
    {
        if constexpr ( V::rank == 1 )
            Kokkos::deep_copy( Kokkos::subview( v, std::make_pair( begin, end ) ),
                               typename V::non_const_value_type{} );
        else
            Kokkos::deep_copy( Kokkos::subview( v, std::make_pair( begin, end ), Kokkos::ALL ),
                               typename V::non_const_value_type{} );
    }

    template <std::size_t... I, class ExecutionSpace, class PermutationView>
    void permute_fields( std::index_sequence<I...>, const ExecutionSpace& exec,
                         const PermutationView& perm )
    {
        ( permute_one( exec, perm, std::get<I>( m_views ), std::get<I>( m_spare ) ), ... );
    }

    template <class ExecutionSpace, class PermutationView, class V>
    void permute_one( const ExecutionSpace& exec, const PermutationView& perm, V& field,
                      V& spare ) const
    {
        // Every field type is T or T[N]: the first extent is the only runtime one.
        if ( spare.extent( 0 ) != field.extent( 0 ) )
            spare = V( Kokkos::view_alloc( Kokkos::WithoutInitializing, field.label() + "::spare" ),
                       field.extent( 0 ) );
        detail::gather( exec, m_size, perm, field, spare );
        std::swap( field, spare );
    }

    std::string m_label = "morula::SoA";
    std::size_t m_size = 0;
    std::size_t m_capacity = 0;
    using views_tuple = std::tuple<Kokkos::View<typename detail::soa_data_type<Types>::type,
                                                Kokkos::LayoutLeft, MemorySpace>...>;
    views_tuple m_views;
    views_tuple m_spare;
};

/*!
  \brief Particle storage: positions (field 0, `Scalar[3]`, one contiguous array per axis) plus any
  extra per-particle fields.

  \tparam Scalar float or double
  \tparam MemorySpace where the Views live
  \tparam Extra further field types (diameter, id, state, ...)
*/
template <class Scalar, class MemorySpace, class... Extra>
class Particles : public SoA<MemorySpace, Scalar[3], Extra...>
{
    using base = SoA<MemorySpace, Scalar[3], Extra...>;

  public:
    using scalar_type = Scalar;
    using positions_type = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace>;

    using base::base;

    //! Positions, shape (capacity, 3), LayoutLeft: x, y and z each contiguous.
    const positions_type& positions() const { return this->template get<0>(); }
};

} // namespace morula::core

#endif
