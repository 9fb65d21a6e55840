#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/AngioSnapshots.hpp>

#include <algorithm>
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
        throw core::InputError( core::detail::concat( where, ": angio frame field '", field, "' has ", found,
                                                      " values, expected ", expected, " (", rule, ")" ) );
}

void expect_triples( const std::string& where, const char* field, std::size_t found, const char* what )
{
    if ( found % 3 != 0 )
        throw core::InputError( core::detail::concat( where, ": angio frame field '", field, "' has ", found,
                                                      " values, not a multiple of 3 (x, y, z per ", what, ")" ) );
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

void AngioFrame::validate( const std::string& where ) const
{
    expect_triples( where, "cell_positions", cell_positions.size(), "cell" );
    const std::size_t n = cells();
    const char* per_cell = "one per cell: cell_positions.size() / 3";
    expect_size( where, "cell_radius", cell_radius.size(), n, per_cell );
    expect_size( where, "cell_age", cell_age.size(), n, per_cell );
    expect_size( where, "cell_oxygen", cell_oxygen.size(), n, per_cell );
    expect_size( where, "cell_taf", cell_taf.size(), n, per_cell );
    expect_size( where, "cell_pressure", cell_pressure.size(), n, per_cell );
    expect_size( where, "cell_state", cell_state.size(), n, per_cell );
    expect_size( where, "cell_id", cell_id.size(), n, per_cell );

    expect_triples( where, "tube_end_a", tube_end_a.size(), "tube" );
    const std::size_t m = tubes();
    const char* per_tube = "one per tube: tube_end_a.size() / 3";
    expect_size( where, "tube_end_b", tube_end_b.size(), 3 * m, "3 per tube: tube_end_a.size()" );
    expect_size( where, "tube_radius_a", tube_radius_a.size(), m, per_tube );
    expect_size( where, "tube_radius_b", tube_radius_b.size(), m, per_tube );
    expect_size( where, "tube_flow", tube_flow.size(), m, per_tube );
    expect_size( where, "tube_blood_oxygen", tube_blood_oxygen.size(), m, per_tube );
    expect_size( where, "tube_delivered", tube_delivered.size(), m, per_tube );
    expect_size( where, "tube_taf", tube_taf.size(), m, per_tube );
    expect_size( where, "tube_parent", tube_parent.size(), m, per_tube );
    expect_size( where, "tube_flags", tube_flags.size(), m, per_tube );
    expect_size( where, "tube_id", tube_id.size(), m, per_tube );

    for ( std::size_t i = 0; i < n; ++i )
        if ( cell_state[i] < 0 || cell_state[i] > 3 )
            throw core::InputError( core::detail::concat( where, ": angio frame field 'cell_state'[", i,
                                                          "] = ", cell_state[i],
                                                          " is not a state in [0, 3] (new, mature, hypoxic, dead)" ) );
    for ( std::size_t i = 0; i < m; ++i )
        if ( tube_parent[i] < -1 || ( tube_parent[i] >= 0 && std::size_t( tube_parent[i] ) >= m ) )
            throw core::InputError( core::detail::concat( where, ": angio frame field 'tube_parent'[", i, "] = ",
                                                          tube_parent[i], " is neither -1 nor a tube index in [0, ",
                                                          m, ")" ) );
}

bool angio_snapshots_available() { return MORULA_HAVE_HDF5 != 0; }

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

hid_t create_group( hid_t parent, const std::string& name, const std::string& path )
{
    const hid_t group = H5Gcreate2( parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT );
    if ( group < 0 )
        throw core::IoError( "cannot create group " + name + " in '" + path + "'" );
    return group;
}

void write_cells( hid_t group, const AngioFrame& f, const std::string& path )
{
    const std::size_t n = f.cells();
    write_dataset( group, "positions", H5T_NATIVE_DOUBLE, n, 3, f.cell_positions.data(), path );
    write_dataset( group, "radius", H5T_NATIVE_DOUBLE, n, 0, f.cell_radius.data(), path );
    write_dataset( group, "age", H5T_NATIVE_DOUBLE, n, 0, f.cell_age.data(), path );
    write_dataset( group, "oxygen", H5T_NATIVE_DOUBLE, n, 0, f.cell_oxygen.data(), path );
    write_dataset( group, "taf", H5T_NATIVE_DOUBLE, n, 0, f.cell_taf.data(), path );
    write_dataset( group, "pressure", H5T_NATIVE_DOUBLE, n, 0, f.cell_pressure.data(), path );
    write_dataset( group, "state", H5T_NATIVE_INT32, n, 0, f.cell_state.data(), path );
    write_dataset( group, "id", H5T_NATIVE_INT64, n, 0, f.cell_id.data(), path );
    // The Xdmf3 readers make no cells of a Polyvertex topology without a connectivity array, and
    // ParaView then shows nothing; XDMF has no implicit 0..n-1, so it is stored.
    std::vector<std::int32_t> index( n );
    std::iota( index.begin(), index.end(), 0 );
    write_dataset( group, "index", H5T_NATIVE_INT32, n, 0, index.data(), path );
}

void write_tubes( hid_t group, const AngioFrame& f, const std::string& path )
{
    const std::size_t m = f.tubes();
    // Each tube is a polyline of its own two points, so the Tube filter can vary the radius along it;
    // shared junction points would force one radius on the parent's end and the child's start.
    std::vector<double> points( 6 * m ), radius( 2 * m );
    for ( std::size_t t = 0; t < m; ++t )
    {
        for ( int d = 0; d < 3; ++d )
        {
            points[6 * t + d] = f.tube_end_a[3 * t + d];
            points[6 * t + 3 + d] = f.tube_end_b[3 * t + d];
        }
        radius[2 * t] = f.tube_radius_a[t];
        radius[2 * t + 1] = f.tube_radius_b[t];
    }
    write_dataset( group, "points", H5T_NATIVE_DOUBLE, 2 * m, 3, points.data(), path );
    write_dataset( group, "radius", H5T_NATIVE_DOUBLE, 2 * m, 0, radius.data(), path );
    write_dataset( group, "radius_a", H5T_NATIVE_DOUBLE, m, 0, f.tube_radius_a.data(), path );
    write_dataset( group, "radius_b", H5T_NATIVE_DOUBLE, m, 0, f.tube_radius_b.data(), path );
    write_dataset( group, "flow", H5T_NATIVE_DOUBLE, m, 0, f.tube_flow.data(), path );
    write_dataset( group, "blood_oxygen", H5T_NATIVE_DOUBLE, m, 0, f.tube_blood_oxygen.data(), path );
    write_dataset( group, "delivered", H5T_NATIVE_DOUBLE, m, 0, f.tube_delivered.data(), path );
    write_dataset( group, "taf", H5T_NATIVE_DOUBLE, m, 0, f.tube_taf.data(), path );
    write_dataset( group, "parent", H5T_NATIVE_INT32, m, 0, f.tube_parent.data(), path );
    write_dataset( group, "flags", H5T_NATIVE_INT32, m, 0, f.tube_flags.data(), path );
    write_dataset( group, "id", H5T_NATIVE_INT64, m, 0, f.tube_id.data(), path );
    std::vector<std::int32_t> connectivity( 2 * m );
    std::iota( connectivity.begin(), connectivity.end(), 0 );
    write_dataset( group, "connectivity", H5T_NATIVE_INT32, m, 2, connectivity.data(), path );
}
} // namespace
#endif

AngioSnapshotWriter::AngioSnapshotWriter( std::string prefix )
    : m_hdf5( prefix + ".h5" )
    , m_xdmf( prefix + ".xmf" )
{
    if ( !angio_snapshots_available() )
        throw core::InputError( "angiogenesis snapshots were requested (prefix '" + prefix +
                                "') but this Morula was built without HDF5; rebuild with "
                                "-DMorula_ENABLE_HDF5=ON or leave snapshots off" );
    // The XDMF index refers to the HDF5 file by name, relative to its own folder (the same one).
    const auto slash = m_hdf5.find_last_of( '/' );
    m_hdf5_name = slash == std::string::npos ? m_hdf5 : m_hdf5.substr( slash + 1 );
#if MORULA_HAVE_HDF5
    Handle file( detail::create_file( m_hdf5 ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( "cannot create the angiogenesis snapshot file '" + m_hdf5 + "'" );
#endif
    write_xdmf();
}

void AngioSnapshotWriter::write( const AngioFrame& frame )
{
    frame.validate( "AngioSnapshotWriter::write ('" + m_hdf5 + "', step " + std::to_string( frame.step ) + ")" );
    const std::size_t n = frame.cells(), m = frame.tubes();
    const std::size_t largest = std::max( n, 2 * m );
    if ( largest > std::size_t( std::numeric_limits<std::int32_t>::max() ) )
        throw core::InputError( core::detail::concat( "AngioSnapshotWriter::write ('", m_hdf5, "', step ",
                                                      frame.step, "): ", n, " cells and ", m, " tubes (2 points "
                                                      "each) cannot be indexed with 32-bit integers" ) );
    char group_name[48];
    std::snprintf( group_name, sizeof group_name, "step_%010lld", frame.step );
#if MORULA_HAVE_HDF5
    {
        Handle file( detail::open_file_rw( m_hdf5 ), H5Fclose );
        if ( file.id < 0 )
            throw core::IoError( "cannot reopen the angiogenesis snapshot file '" + m_hdf5 + "'" );
        if ( H5Lexists( file.id, group_name, H5P_DEFAULT ) > 0 )
            throw core::InputError( core::detail::concat( "AngioSnapshotWriter::write: step ", frame.step,
                                                          " is already in '", m_hdf5, "' (group /", group_name,
                                                          ")" ) );
        const std::string step_path = std::string( "/" ) + group_name;
        Handle group( create_group( file.id, step_path, m_hdf5 ), H5Gclose );
        const std::int64_t step = frame.step;
        write_scalar_attribute( group.id, "step", H5T_NATIVE_INT64, step, m_hdf5 );
        write_scalar_attribute( group.id, "time", H5T_NATIVE_DOUBLE, frame.time, m_hdf5 );
        {
            Handle cells( create_group( group.id, step_path + "/cells", m_hdf5 ), H5Gclose );
            write_cells( cells.id, frame, m_hdf5 );
        }
        {
            Handle tubes( create_group( group.id, step_path + "/tubes", m_hdf5 ), H5Gclose );
            write_tubes( tubes.id, frame, m_hdf5 );
        }
    }
#endif
    m_entries.push_back( { group_name, frame.time, n, m } );
    write_xdmf();
}

void AngioSnapshotWriter::write_xdmf() const
{
    std::ofstream out( m_xdmf, std::ios::trunc );
    if ( !out )
        throw core::IoError( "cannot write the XDMF index '" + m_xdmf + "'" );
    auto item = [&]( const std::string& dims, const char* number_type, int precision, const std::string& h5,
                     const char* name ) {
        out << "      <DataItem Dimensions=\"" << dims << "\" NumberType=\"" << number_type << "\" Precision=\""
            << precision << "\" Format=\"HDF\">" << h5 << name << "</DataItem>\n";
    };
    auto attribute = [&]( const char* name, const char* center, std::size_t count, const char* number_type,
                          int precision, const std::string& h5 ) {
        out << "     <Attribute Name=\"" << name << "\" AttributeType=\"Scalar\" Center=\"" << center << "\">\n";
        item( std::to_string( count ), number_type, precision, h5, name );
        out << "     </Attribute>\n";
    };
    out << "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
        << "  <Grid Name=\"angiogenesis\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for ( const auto& e : m_entries )
    {
        const std::string step = m_hdf5_name + ":/" + e.group + "/";
        const std::string cells = step + "cells/", tubes = step + "tubes/";
        const std::string n = std::to_string( e.cells ), m = std::to_string( e.tubes ),
                          points = std::to_string( 2 * e.tubes );
        out << "   <Grid Name=\"" << e.group << "\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
            << "    <Time Value=\"" << exact( e.time ) << "\"/>\n";

        out << "    <Grid Name=\"cells\" GridType=\"Uniform\">\n"
            << "     <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << n << "\" NodesPerElement=\"1\">\n";
        item( n, "Int", 4, cells, "index" );
        out << "     </Topology>\n"
            << "     <Geometry GeometryType=\"XYZ\">\n";
        item( n + " 3", "Float", 8, cells, "positions" );
        out << "     </Geometry>\n";
        for ( const char* name : { "radius", "age", "oxygen", "taf", "pressure" } )
            attribute( name, "Node", e.cells, "Float", 8, cells );
        attribute( "state", "Node", e.cells, "Int", 4, cells );
        attribute( "id", "Node", e.cells, "Int", 8, cells );
        out << "    </Grid>\n";

        out << "    <Grid Name=\"tubes\" GridType=\"Uniform\">\n"
            << "     <Topology TopologyType=\"Polyline\" NumberOfElements=\"" << m << "\" NodesPerElement=\"2\">\n";
        item( m + " 2", "Int", 4, tubes, "connectivity" );
        out << "     </Topology>\n"
            << "     <Geometry GeometryType=\"XYZ\">\n";
        item( points + " 3", "Float", 8, tubes, "points" );
        out << "     </Geometry>\n";
        attribute( "radius", "Node", 2 * e.tubes, "Float", 8, tubes );
        for ( const char* name : { "radius_a", "radius_b", "flow", "blood_oxygen", "delivered", "taf" } )
            attribute( name, "Cell", e.tubes, "Float", 8, tubes );
        attribute( "parent", "Cell", e.tubes, "Int", 4, tubes );
        attribute( "flags", "Cell", e.tubes, "Int", 4, tubes );
        attribute( "id", "Cell", e.tubes, "Int", 8, tubes );
        out << "    </Grid>\n"
            << "   </Grid>\n";
    }
    out << "  </Grid>\n </Domain>\n</Xdmf>\n";
    if ( !out.flush() )
        throw core::IoError( "cannot write the XDMF index '" + m_xdmf + "'" );
}

} // namespace morula::io
