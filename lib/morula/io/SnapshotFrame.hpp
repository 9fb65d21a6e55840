/*!
  \file SnapshotFrame.hpp
  \brief What one snapshot frame writes to HDF5: groups, datasets and attributes below the frame, in
  order, as a model's writer describes them for io::SnapshotSeries.
*/
#ifndef MORULA_IO_SNAPSHOTFRAME_HPP
#define MORULA_IO_SNAPSHOTFRAME_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace morula::io
{

//! The element types a snapshot dataset or scalar attribute holds (stored little-endian as HDF5's native types).
enum class SnapshotType
{
    float64,
    int32,
    int64,
    uint32
};

//! The SnapshotType of a C++ type: double and the 32- and 64-bit signed and 32-bit unsigned integers.
template <class T>
constexpr SnapshotType snapshot_type_of()
{
    if constexpr ( std::is_same_v<T, double> )
        return SnapshotType::float64;
    else
    {
        static_assert( std::is_integral_v<T> && ( sizeof( T ) == 4 || ( sizeof( T ) == 8 && std::is_signed_v<T> ) ),
                       "snapshot datasets hold double, int32, int64 or uint32" );
        if constexpr ( sizeof( T ) == 8 )
            return SnapshotType::int64;
        else if constexpr ( std::is_signed_v<T> )
            return SnapshotType::int32;
        else
            return SnapshotType::uint32;
    }
}

/*!
  \brief The HDF5 objects of one frame, named relative to the frame: "positions", "cells/radius". The
  empty name is the frame itself: a frame with a dataset of that name is that one dataset (a lattice's
  array of site words), any other frame a group holding what is added (or, one file per frame, the
  file's root). Entries are written in the order they were added, so a group comes before its
  datasets and an attribute after its object.

  Datasets borrow their data: it must live until SnapshotSeries::append returns.
*/
class SnapshotFrame
{
  public:
    enum class Kind
    {
        group,
        dataset,
        attribute,
        names //!< an attribute holding a list of variable-length UTF-8 strings
    };

    //! One group, dataset or attribute; `object` is the group or dataset (an attribute's owner).
    struct Entry
    {
        Kind kind = Kind::group;
        std::string object;
        std::string name; //!< an attribute's name
        SnapshotType type = SnapshotType::float64;
        std::vector<std::size_t> dims; //!< a dataset's shape, slowest first
        const void* data = nullptr;
        double real = 0;           //!< a float64 attribute's value
        std::int64_t integer = 0;  //!< an integer attribute's value
        std::vector<std::string> strings;
    };

    //! A group below the frame (e.g. "cells"), before anything inside it.
    void group( std::string name ) { add( Kind::group, std::move( name ) ); }

    //! A dataset of shape `dims` (slowest first, x fastest as in memory); `data` holds their product.
    template <class T>
    void dataset( std::string name, const T* data, std::vector<std::size_t> dims )
    {
        Entry& e = add( Kind::dataset, std::move( name ) );
        e.type = snapshot_type_of<T>();
        e.dims = std::move( dims );
        e.data = data;
    }

    //! A scalar attribute of `object` (the empty name: the frame itself).
    template <class T>
    void attribute( std::string object, std::string name, T value )
    {
        Entry& e = add( Kind::attribute, std::move( object ), std::move( name ) );
        e.type = snapshot_type_of<T>();
        if constexpr ( std::is_same_v<T, double> )
            e.real = value;
        else
            e.integer = std::int64_t( value );
    }

    //! A one-dimensional attribute of variable-length UTF-8 strings (h5py reads it as a list of str).
    void names( std::string object, std::string name, std::vector<std::string> values )
    {
        add( Kind::names, std::move( object ), std::move( name ) ).strings = std::move( values );
    }

    const std::vector<Entry>& entries() const { return m_entries; }

    //! Whether the frame is one dataset (one named "") rather than a group.
    bool is_dataset() const
    {
        for ( const auto& e : m_entries )
            if ( e.kind == Kind::dataset && e.object.empty() )
                return true;
        return false;
    }

  private:
    Entry& add( Kind kind, std::string object, std::string name = {} )
    {
        Entry& e = m_entries.emplace_back();
        e.kind = kind;
        e.object = std::move( object );
        e.name = std::move( name );
        return e;
    }

    std::vector<Entry> m_entries;
};

} // namespace morula::io

#endif
