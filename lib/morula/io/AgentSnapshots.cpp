#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/AgentSnapshots.hpp>

#include <cstdio>
#include <fstream>

#include <morula/io/detail/Hdf5Handle.hpp>

namespace morula::io
{

bool hdf5_available() { return MORULA_HAVE_HDF5 != 0; }

AgentSnapshotWriter::AgentSnapshotWriter( std::string prefix )
    : m_prefix( std::move( prefix ) )
    , m_xdmf( m_prefix + ".xmf" )
{
    if ( !hdf5_available() )
        throw core::InputError( "snapshots were requested (prefix '" + m_prefix +
                                "') but this Morula was built without HDF5; rebuild with "
                                "-DMorula_ENABLE_HDF5=ON or leave snapshots off" );
}

#if MORULA_HAVE_HDF5
using detail::Handle;
namespace
{
void write_dataset( hid_t file, const char* name, hid_t type, int rank, const hsize_t* dims, const void* data,
                    const std::string& path )
{
    Handle set( detail::write_dataset( file, name, type, rank, dims, data, path ), H5Dclose );
}
} // namespace
#endif

void AgentSnapshotWriter::write( long long step, double time, const std::vector<double>& xyz,
                                 const std::vector<double>& diameter,
                                 const std::vector<std::int64_t>& id )
{
    const std::size_t n = diameter.size();
    if ( xyz.size() != 3 * n || id.size() != n )
        throw core::InputError( "AgentSnapshotWriter::write: inconsistent array sizes" );
    char suffix[32];
    std::snprintf( suffix, sizeof( suffix ), "_%06lld.h5", step );
    const std::string path = m_prefix + suffix;
#if MORULA_HAVE_HDF5
    {
        Handle file( detail::create_file( path ), H5Fclose );
        if ( file.id < 0 )
            throw core::IoError( "cannot create the snapshot file " + path );
        const hsize_t dims3[2] = { n, 3 };
        const hsize_t dims1[1] = { n };
        write_dataset( file.id, "positions", H5T_NATIVE_DOUBLE, 2, dims3, xyz.data(), path );
        write_dataset( file.id, "diameter", H5T_NATIVE_DOUBLE, 1, dims1, diameter.data(), path );
        write_dataset( file.id, "id", H5T_NATIVE_INT64, 1, dims1, id.data(), path );
    }
#else
    (void)time;
#endif
    // The XDMF index refers to the files by name, relative to its own folder.
    const auto slash = path.find_last_of( '/' );
    m_entries.push_back( { slash == std::string::npos ? path : path.substr( slash + 1 ), time, n } );
    write_xdmf();
}

void AgentSnapshotWriter::write_xdmf() const
{
    std::ofstream out( m_xdmf );
    if ( !out )
        throw core::IoError( "cannot write the XDMF index " + m_xdmf );
    out << "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
        << "  <Grid Name=\"agents\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for ( const auto& e : m_entries )
    {
        out << "   <Grid Name=\"step\" GridType=\"Uniform\">\n"
            << "    <Time Value=\"" << e.time << "\"/>\n"
            << "    <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << e.n << "\"/>\n"
            << "    <Geometry GeometryType=\"XYZ\">\n"
            << "     <DataItem Dimensions=\"" << e.n << " 3\" NumberType=\"Float\" Precision=\"8\" "
            << "Format=\"HDF\">" << e.file << ":/positions</DataItem>\n    </Geometry>\n"
            << "    <Attribute Name=\"diameter\" AttributeType=\"Scalar\" Center=\"Node\">\n"
            << "     <DataItem Dimensions=\"" << e.n << "\" NumberType=\"Float\" Precision=\"8\" "
            << "Format=\"HDF\">" << e.file << ":/diameter</DataItem>\n    </Attribute>\n"
            << "    <Attribute Name=\"id\" AttributeType=\"Scalar\" Center=\"Node\">\n"
            << "     <DataItem Dimensions=\"" << e.n << "\" NumberType=\"Int\" Precision=\"8\" "
            << "Format=\"HDF\">" << e.file << ":/id</DataItem>\n    </Attribute>\n"
            << "   </Grid>\n";
    }
    out << "  </Grid>\n </Domain>\n</Xdmf>\n";
}

} // namespace morula::io
