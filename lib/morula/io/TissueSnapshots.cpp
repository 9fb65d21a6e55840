#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/TissueSnapshots.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <numeric>

#include <morula/io/detail/Hdf5Handle.hpp>

namespace morula::io
{

namespace
{
void expect_size( const std::string& where, const char* field, std::size_t found, std::size_t expected,
                  const char* rule )
{
    if ( found != expected )
        throw core::InputError( core::detail::concat( where, ": tissue frame field '", field, "' has ", found,
                                                      " values, expected ", expected, " (", rule, ")" ) );
}

// The shortest of 15 or 17 significant digits that reads back as the same double, so the XDMF times
// are exact without printing 0.1 as 0.10000000000000001.
std::string exact( double v )
{
    char text[32];
    std::snprintf( text, sizeof text, "%.15g", v );
    if ( std::strtod( text, nullptr ) != v )
        std::snprintf( text, sizeof text, "%.17g", v );
    return text;
}
} // namespace

void TissueFrame::validate( const std::string& where ) const
{
    if ( positions.size() % 3 != 0 )
        throw core::InputError( core::detail::concat( where, ": tissue frame field 'positions' has ", positions.size(),
                                                      " values, not a multiple of 3 (x, y, z per element)" ) );
    const std::size_t n = elements(), m = cells();
    expect_size( where, "cell", cell.size(), n, "one per element: positions.size() / 3" );
    expect_size( where, "type", type.size(), n, "one per element: positions.size() / 3" );
    expect_size( where, "state", state.size(), n, "one per element: positions.size() / 3" );
    expect_size( where, "cell_centres", cell_centres.size(), 3 * m, "3 per cell: 3 * cell_elements.size()" );
    expect_size( where, "cell_state", cell_state.size(), m, "one per cell: cell_elements.size()" );
    if ( species_count < 0 )
        throw core::InputError(
            core::detail::concat( where, ": tissue frame field 'species_count' = ", species_count, " is negative" ) );
    expect_size( where, "species", species.size(), m * std::size_t( species_count ),
                 "species_count per cell: cell_elements.size() * species_count" );
    if ( !species_names.empty() || !species.empty() )
        expect_size( where, "species_names", species_names.size(), std::size_t( species_count ),
                     "species_count names, or none when species is empty" );
    for ( std::size_t i = 0; i < n; ++i )
        if ( cell[i] < 0 || std::size_t( cell[i] ) >= m )
            throw core::InputError( core::detail::concat( where, ": tissue frame field 'cell'[", i, "] = ", cell[i],
                                                          " is not a cell index in [0, ", m, ")" ) );
}

bool tissue_snapshots_available() { return MORULA_HAVE_HDF5 != 0; }

#if MORULA_HAVE_HDF5
using detail::Handle;
namespace
{
void write_dataset( hid_t parent, const char* name, hid_t type, std::size_t rows, std::size_t columns,
                    const void* data, const std::string& path )
{
    const hsize_t dims[2] = { rows, columns };
    Handle set( detail::write_dataset( parent, name, type, columns == 0 ? 1 : 2, dims, data, path ), H5Dclose );
}

template <class T>
void write_scalar_attribute( hid_t object, const char* name, hid_t type, T value, const std::string& path )
{
    Handle space( H5Screate( H5S_SCALAR ), H5Sclose );
    Handle attr( H5Acreate2( object, name, type, space.id, H5P_DEFAULT, H5P_DEFAULT ), H5Aclose );
    if ( attr.id < 0 || H5Awrite( attr.id, type, &value ) < 0 )
        throw core::IoError( "cannot write attribute '" + std::string( name ) + "' to " + path );
}

// A one-dimensional attribute of variable-length UTF-8 strings: h5py reads it as a list of str.
void write_names_attribute( hid_t object, const char* name, const std::vector<std::string>& names,
                            const std::string& path )
{
    std::vector<const char*> pointers;
    for ( const auto& s : names )
        pointers.push_back( s.c_str() );
    const hsize_t dims[1] = { names.size() };
    Handle type( H5Tcopy( H5T_C_S1 ), H5Tclose );
    Handle space( H5Screate_simple( 1, dims, nullptr ), H5Sclose );
    if ( type.id < 0 || H5Tset_size( type.id, H5T_VARIABLE ) < 0 || H5Tset_cset( type.id, H5T_CSET_UTF8 ) < 0 ||
         space.id < 0 )
        throw core::IoError( "cannot write attribute '" + std::string( name ) + "' to " + path );
    Handle attr( H5Acreate2( object, name, type.id, space.id, H5P_DEFAULT, H5P_DEFAULT ), H5Aclose );
    if ( attr.id < 0 || H5Awrite( attr.id, type.id, pointers.data() ) < 0 )
        throw core::IoError( "cannot write attribute '" + std::string( name ) + "' to " + path );
}
} // namespace
#endif

TissueSnapshotWriter::TissueSnapshotWriter( std::string prefix )
    : m_hdf5( prefix + ".h5" )
    , m_xdmf( prefix + ".xmf" )
{
    if ( !tissue_snapshots_available() )
        throw core::InputError( "tissue snapshots were requested (prefix '" + prefix +
                                "') but this Morula was built without HDF5; rebuild with "
                                "-DMorula_ENABLE_HDF5=ON or leave snapshots off" );
    // The XDMF index refers to the HDF5 file by name, relative to its own folder (the same one).
    const auto slash = m_hdf5.find_last_of( '/' );
    m_hdf5_name = slash == std::string::npos ? m_hdf5 : m_hdf5.substr( slash + 1 );
#if MORULA_HAVE_HDF5
    Handle file( detail::create_file( m_hdf5 ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( "cannot create the tissue snapshot file '" + m_hdf5 + "'" );
#endif
    write_xdmf();
}

void TissueSnapshotWriter::write( const TissueFrame& frame )
{
    frame.validate( "TissueSnapshotWriter::write ('" + m_hdf5 + "', step " + std::to_string( frame.step ) + ")" );
    if ( frame.elements() > std::size_t( std::numeric_limits<std::int32_t>::max() ) )
        throw core::InputError( core::detail::concat( "TissueSnapshotWriter::write: ", frame.elements(),
                                                      " elements cannot be indexed with 32-bit integers" ) );
    char group_name[48];
    std::snprintf( group_name, sizeof group_name, "step_%010lld", frame.step );
    const std::size_t n = frame.elements();
#if MORULA_HAVE_HDF5
    {
        const std::size_t m = frame.cells();
        Handle file( detail::open_file_rw( m_hdf5 ), H5Fclose );
        if ( file.id < 0 )
            throw core::IoError( "cannot reopen the tissue snapshot file '" + m_hdf5 + "'" );
        if ( H5Lexists( file.id, group_name, H5P_DEFAULT ) > 0 )
            throw core::InputError( core::detail::concat( "TissueSnapshotWriter::write: step ", frame.step,
                                                          " is already in '", m_hdf5, "' (group /", group_name,
                                                          ")" ) );
        Handle group( H5Gcreate2( file.id, group_name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT ), H5Gclose );
        if ( group.id < 0 )
            throw core::IoError( "cannot create group /" + std::string( group_name ) + " in '" + m_hdf5 + "'" );
        const std::int64_t step = frame.step;
        write_scalar_attribute( group.id, "step", H5T_NATIVE_INT64, step, m_hdf5 );
        write_scalar_attribute( group.id, "time", H5T_NATIVE_DOUBLE, frame.time, m_hdf5 );
        write_dataset( group.id, "positions", H5T_NATIVE_DOUBLE, n, 3, frame.positions.data(), m_hdf5 );
        write_dataset( group.id, "cell", H5T_NATIVE_INT32, n, 0, frame.cell.data(), m_hdf5 );
        write_dataset( group.id, "type", H5T_NATIVE_INT32, n, 0, frame.type.data(), m_hdf5 );
        write_dataset( group.id, "state", H5T_NATIVE_INT32, n, 0, frame.state.data(), m_hdf5 );
        // The Xdmf3 readers make no cells of a Polyvertex topology without a connectivity array, and
        // ParaView then shows nothing; XDMF has no implicit 0..n-1, so it is stored.
        std::vector<std::int32_t> index( n );
        std::iota( index.begin(), index.end(), 0 );
        write_dataset( group.id, "element_index", H5T_NATIVE_INT32, n, 0, index.data(), m_hdf5 );
        write_dataset( group.id, "cell_centres", H5T_NATIVE_DOUBLE, m, 3, frame.cell_centres.data(), m_hdf5 );
        write_dataset( group.id, "cell_elements", H5T_NATIVE_INT32, m, 0, frame.cell_elements.data(), m_hdf5 );
        write_dataset( group.id, "cell_state", H5T_NATIVE_INT32, m, 0, frame.cell_state.data(), m_hdf5 );
        if ( frame.species_count > 0 )
        {
            const hsize_t dims[2] = { m, hsize_t( frame.species_count ) };
            Handle set( detail::write_dataset( group.id, "species", H5T_NATIVE_DOUBLE, 2, dims, frame.species.data(),
                                               m_hdf5 ),
                        H5Dclose );
            if ( !frame.species_names.empty() )
                write_names_attribute( set.id, "names", frame.species_names, m_hdf5 );
        }
    }
#endif
    m_entries.push_back( { group_name, frame.time, n } );
    write_xdmf();
}

void TissueSnapshotWriter::write_xdmf() const
{
    std::ofstream out( m_xdmf, std::ios::trunc );
    if ( !out )
        throw core::IoError( "cannot write the XDMF index '" + m_xdmf + "'" );
    out << "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
        << "  <Grid Name=\"tissue\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for ( const auto& e : m_entries )
    {
        const std::string h5 = m_hdf5_name + ":/" + e.group + "/";
        out << "   <Grid Name=\"" << e.group << "\" GridType=\"Uniform\">\n"
            << "    <Time Value=\"" << exact( e.time ) << "\"/>\n"
            << "    <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << e.n << "\" NodesPerElement=\"1\">\n"
            << "     <DataItem Dimensions=\"" << e.n << "\" NumberType=\"Int\" Precision=\"4\" Format=\"HDF\">" << h5
            << "element_index</DataItem>\n"
            << "    </Topology>\n"
            << "    <Geometry GeometryType=\"XYZ\">\n"
            << "     <DataItem Dimensions=\"" << e.n << " 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">"
            << h5 << "positions</DataItem>\n"
            << "    </Geometry>\n";
        for ( const char* name : { "cell", "type", "state" } )
            out << "    <Attribute Name=\"" << name << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
                << "     <DataItem Dimensions=\"" << e.n << "\" NumberType=\"Int\" Precision=\"4\" Format=\"HDF\">"
                << h5 << name << "</DataItem>\n"
                << "    </Attribute>\n";
        out << "   </Grid>\n";
    }
    out << "  </Grid>\n </Domain>\n</Xdmf>\n";
    if ( !out.flush() )
        throw core::IoError( "cannot write the XDMF index '" + m_xdmf + "'" );
}

} // namespace morula::io
