/*!
  \file Checkpoint.hpp
  \brief A model's whole state in one HDF5 file, written crash-safely and read back exactly: the
  storage every driver's checkpoint and restart shares.

  A driver describes its state as named arrays and scalars ("agents/position", "step") and restores it
  from the same names:

  \code
  io::CheckpointWriter out( "lattice" );                 // the model's name, checked on restart
  out.put_scalar( "step", steps_done );
  out.put_field( "sites", sites_view, site_count );      // the first n entries of a (device) View
  out.write( "run.ckpt.h5" );                            // "run.ckpt.h5.tmp" first, then renamed

  io::CheckpointReader in( "run.ckpt.h5", "lattice" );   // refuses another model or Morula version
  const auto steps = in.scalar<long long>( "step" );
  in.get_field( "sites", sites_view, site_count );
  \endcode

  Values keep their exact type and bits (float stays float, uint32 stays uint32): a restarted run
  continues from the same numbers, and asking for another type is an error that names both types, so
  that a float run cannot silently take a double checkpoint. `write` puts everything into
  "<path>.tmp", flushes it to the disk and renames it over `path`, so a run killed while writing leaves
  the previous checkpoint intact. The reader loads the whole file when constructed (a checkpoint holds
  what the host copied out anyway) and closes it.

  Every file carries Morula's version, the checkpoint format and the model's name under "morula/";
  a checkpoint from another version, another format or another model is refused with core::InputError.
  Collecting a state (CheckpointWriter's put calls, entries(), first_difference) needs no HDF5;
  writing or reading a file does, and throws core::InputError naming the file in a build without it.
*/
#ifndef MORULA_IO_CHECKPOINT_HPP
#define MORULA_IO_CHECKPOINT_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace morula::io
{

//! The element types a checkpoint holds, each stored as HDF5's native type of that size.
enum class CheckpointType
{
    float32,
    float64,
    int8,
    uint8,
    int32,
    uint32,
    int64,
    uint64,
    text //!< a UTF-8 string
};

//! "float32", "int64", ...: for messages.
const char* to_string( CheckpointType type );

//! The CheckpointType of an arithmetic C++ type (bool is not one: store it as std::uint8_t).
template <class T>
constexpr CheckpointType checkpoint_type_of()
{
    static_assert( std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                   "checkpoints hold float, double and 8-, 32- and 64-bit integers" );
    if constexpr ( std::is_floating_point_v<T> )
    {
        static_assert( sizeof( T ) == 4 || sizeof( T ) == 8, "checkpoints hold float and double" );
        return sizeof( T ) == 4 ? CheckpointType::float32 : CheckpointType::float64;
    }
    else
    {
        static_assert( sizeof( T ) == 1 || sizeof( T ) == 4 || sizeof( T ) == 8,
                       "checkpoints hold 8-, 32- and 64-bit integers" );
        if constexpr ( sizeof( T ) == 1 )
            return std::is_signed_v<T> ? CheckpointType::int8 : CheckpointType::uint8;
        else if constexpr ( sizeof( T ) == 4 )
            return std::is_signed_v<T> ? CheckpointType::int32 : CheckpointType::uint32;
        else
            return std::is_signed_v<T> ? CheckpointType::int64 : CheckpointType::uint64;
    }
}

//! The version of the checkpoint layout; a reader refuses files of another format.
inline constexpr int checkpoint_format = 1;

//! One array or scalar of a checkpoint: its type, its shape (empty for a scalar) and its bytes.
struct CheckpointEntry
{
    CheckpointType type = CheckpointType::float64;
    std::vector<std::size_t> dims; //!< slowest first; empty: a scalar (or a string)
    std::vector<unsigned char> bytes;
};

//! Name -> entry, names with '/' inside groups ("agents/position").
using CheckpointEntries = std::map<std::string, CheckpointEntry>;

/*!
  \brief Collects a model's state (copies of it: the sources may change right after) and writes it.
*/
class CheckpointWriter
{
  public:
    //! `model` names the model whose state this is ("epidermis"); the reader checks it.
    explicit CheckpointWriter( std::string model );

    //! An array of `values.size()` values; `dims` (slowest first) default to one dimension.
    //! \throws core::InputError if the name is taken, reserved ("morula/...") or dims do not match
    template <class T>
    void put( const std::string& name, const std::vector<T>& values, std::vector<std::size_t> dims = {} )
    {
        if ( dims.empty() )
            dims = { values.size() };
        std::size_t count = 1;
        for ( const auto d : dims )
            count *= d;
        if ( count != values.size() )
            throw core::InputError( core::detail::concat( "CheckpointWriter: '", name, "' has ", values.size(),
                                                          " values but its shape holds ", count ) );
        CheckpointEntry& e = add( name, checkpoint_type_of<T>() );
        e.dims = std::move( dims );
        e.bytes.resize( values.size() * sizeof( T ) );
        if ( !values.empty() )
            std::memcpy( e.bytes.data(), values.data(), e.bytes.size() );
    }

    //! One value.
    template <class T>
    void put_scalar( const std::string& name, T value )
    {
        CheckpointEntry& e = add( name, checkpoint_type_of<T>() );
        e.bytes.resize( sizeof( T ) );
        std::memcpy( e.bytes.data(), &value, sizeof( T ) );
    }

    //! A string (a parameter's name, a rule).
    void put_text( const std::string& name, const std::string& value );

    //! The first n entries of a rank-1 or rank-2 View in any memory space, in its own value type:
    //! shape {n} or {n, k} (core::copy_to_host's order).
    template <class View>
    void put_field( const std::string& name, const View& field, std::size_t n )
    {
        using T = typename View::non_const_value_type;
        std::vector<T> host;
        core::copy_to_host( field, n, host );
        const std::size_t k = core::detail::host_copy_width( field );
        put( name, host, View::rank == 1 ? std::vector<std::size_t>{ n } : std::vector<std::size_t>{ n, k } );
    }

    /*!
      \brief Writes the checkpoint to "<path>.tmp", flushes it to the disk and renames it to `path`
      (replacing an older checkpoint only once the new one is complete).
      \throws core::IoError naming the file if it cannot be written (the temporary file is removed);
      core::InputError if this Morula was built without HDF5
    */
    void write( const std::string& path ) const;

    const std::string& model() const { return m_model; }
    const CheckpointEntries& entries() const { return m_entries; }

  private:
    CheckpointEntry& add( const std::string& name, CheckpointType type );

    std::string m_model;
    CheckpointEntries m_entries;
};

/*!
  \brief Reads a checkpoint written by CheckpointWriter and hands out its entries by name.
*/
class CheckpointReader
{
  public:
    /*!
      \brief Loads the checkpoint `path` of model `model`.
      \throws core::IoError if the file cannot be opened or read; core::InputError if it is not a
      Morula checkpoint, is of another model, or was written by another Morula version or format
    */
    CheckpointReader( std::string path, const std::string& model );

    const std::string& path() const { return m_path; }
    bool has( const std::string& name ) const { return m_entries.count( name ) != 0; }
    //! The shape of `name`. \throws core::InputError if there is no such entry
    const std::vector<std::size_t>& dims( const std::string& name ) const { return entry( name ).dims; }

    //! The values of `name`, which must hold T. \throws core::InputError naming the file, the
    //! entry and both types if it holds another type, or if it is missing
    template <class T>
    std::vector<T> get( const std::string& name ) const
    {
        const CheckpointEntry& e = typed_entry( name, checkpoint_type_of<T>() );
        std::vector<T> values( e.bytes.size() / sizeof( T ) );
        if ( !values.empty() )
            std::memcpy( values.data(), e.bytes.data(), e.bytes.size() );
        return values;
    }

    //! The single value of `name`. \throws core::InputError as get(), or if it is not a scalar
    template <class T>
    T scalar( const std::string& name ) const
    {
        const CheckpointEntry& e = typed_entry( name, checkpoint_type_of<T>() );
        if ( !e.dims.empty() )
            throw not_scalar( name );
        T value;
        std::memcpy( &value, e.bytes.data(), sizeof( T ) );
        return value;
    }

    //! The string `name`. \throws core::InputError as get()
    std::string text( const std::string& name ) const;

    /*!
      \brief Writes the checkpoint's `name` into the first n entries of `field` (rank 1 or 2, any memory
      space), which must hold exactly n rows of the field's width and value type.
      \throws core::InputError naming the file and entry if the shape or the type differs
    */
    template <class View>
    void get_field( const std::string& name, const View& field, std::size_t n ) const
    {
        using T = typename View::non_const_value_type;
        const std::size_t k = core::detail::host_copy_width( field );
        const auto& shape = dims( name );
        const bool fits = View::rank == 1 ? shape.size() == 1 && shape[0] == n
                                          : shape.size() == 2 && shape[0] == n && shape[1] == k;
        if ( !fits )
            throw wrong_shape( name, View::rank == 1 ? std::vector<std::size_t>{ n } : std::vector<std::size_t>{ n, k } );
        core::copy_from_host( get<T>( name ), n, field );
    }

    //! The number of rows (first dimension) of array `name`. \throws core::InputError if missing or scalar
    std::size_t rows( const std::string& name ) const;

    //! Every entry but Morula's header.
    const CheckpointEntries& entries() const { return m_entries; }

    //! Throws core::InputError "checkpoint '<path>': <what>" (a model's own consistency checks).
    [[noreturn]] void fail( const std::string& what ) const;

  private:
    const CheckpointEntry& entry( const std::string& name ) const;
    const CheckpointEntry& typed_entry( const std::string& name, CheckpointType type ) const;
    core::InputError not_scalar( const std::string& name ) const;
    core::InputError wrong_shape( const std::string& name, const std::vector<std::size_t>& expected ) const;

    std::string m_path;
    CheckpointEntries m_entries;
};

/*!
  \brief The first name whose entry differs between two states (type, shape or any bit), or that only
  one holds; "" when they are the same. Tests compare a resumed run with an uninterrupted one this way.
*/
std::string first_difference( const CheckpointEntries& a, const CheckpointEntries& b );

namespace detail
{
template <class Driver, class = void>
struct is_checkpointable : std::false_type
{
};

template <class Driver>
struct is_checkpointable<Driver,
                         std::void_t<decltype( std::string( Driver::checkpoint_model ) ),
                                     decltype( std::declval<const Driver&>().checkpoint( std::declval<CheckpointWriter&>() ) ),
                                     decltype( std::declval<Driver&>().restart( std::declval<const CheckpointReader&>() ) )>>
    : std::true_type
{
};
} // namespace detail

//! Whether `Driver` can be checkpointed: `checkpoint_model`, `checkpoint( CheckpointWriter& ) const` and
//! `restart( const CheckpointReader& )` (every model driver; see core/Driver.hpp).
template <class Driver>
inline constexpr bool is_checkpointable_v = detail::is_checkpointable<Driver>::value;

namespace detail
{
template <class Driver, class = void>
struct writes_own_checkpoint : std::false_type
{
};

template <class Driver>
struct writes_own_checkpoint<
    Driver, std::void_t<decltype( std::declval<const Driver&>().write_checkpoint( std::declval<const std::string&>() ) )>>
    : std::true_type
{
};
} // namespace detail

/*!
  \brief Writes `driver`'s checkpoint to `path`: drivers have `checkpoint_model` (their model's name)
  and `void checkpoint( io::CheckpointWriter& ) const`. A distributed driver, whose ranks gather their
  parts to one of them, writes the file itself (`write_checkpoint( path )`, collective): every rank
  calls this and one writes.
*/
template <class Driver>
void write_checkpoint( const Driver& driver, const std::string& path )
{
    if constexpr ( detail::writes_own_checkpoint<Driver>::value )
        driver.write_checkpoint( path );
    else
    {
        CheckpointWriter out( Driver::checkpoint_model );
        driver.checkpoint( out );
        out.write( path );
    }
}

/*!
  \brief Resumes `driver` (made from the run's configuration) from the checkpoint `path`: drivers have
  `void restart( const io::CheckpointReader& )`, which refuses a checkpoint of other parameters.
*/
template <class Driver>
void restart_from_checkpoint( Driver& driver, const std::string& path )
{
    const CheckpointReader in( path, Driver::checkpoint_model );
    driver.restart( in );
}

namespace detail
{
//! Writes `entries` to the HDF5 file `path` (truncating it). \throws core::IoError naming the file
void write_checkpoint_file( const std::string& path, const CheckpointEntries& entries );
//! Every dataset of the HDF5 file `path`. \throws core::IoError naming the file
CheckpointEntries read_checkpoint_file( const std::string& path );
} // namespace detail

} // namespace morula::io

#endif
