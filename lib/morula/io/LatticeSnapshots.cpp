#include <morula/core/Error.hpp>
#include <morula/io/AgentSnapshots.hpp>
#include <morula/io/LatticeSnapshots.hpp>
#include <morula/io/detail/Hdf5Handle.hpp>

#include <cstdio>

namespace morula::io
{

LatticeSnapshotWriter::LatticeSnapshotWriter( std::string path, int nx, int ny, int nz, double spacing_nm,
                                              int slots_per_site )
    : m_path( std::move( path ) )
    , m_n{ nx, ny, nz }
    , m_spacing( spacing_nm )
    , m_slots( slots_per_site )
{
    if ( !hdf5_available() )
        throw core::InputError( "lattice snapshots were requested ('" + m_path +
                                "') but this Morula was built without HDF5; rebuild with "
                                "-DMorula_ENABLE_HDF5=ON or leave snapshots off" );
#if MORULA_HAVE_HDF5
    detail::Handle file( detail::create_file( m_path ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( "cannot create the snapshot file '" + m_path + "'" );
    detail::Handle group( H5Gcreate2( file.id, "snapshots", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT ), H5Gclose );
    if ( group.id < 0 )
        throw core::IoError( "cannot create group /snapshots in '" + m_path + "'" );
#endif
}

#if MORULA_HAVE_HDF5
namespace
{
template <class T>
void attribute( hid_t object, const char* name, hid_t type, T value, const std::string& path )
{
    detail::Handle space( H5Screate( H5S_SCALAR ), H5Sclose );
    detail::Handle attr( H5Acreate2( object, name, type, space.id, H5P_DEFAULT, H5P_DEFAULT ), H5Aclose );
    if ( attr.id < 0 || H5Awrite( attr.id, type, &value ) < 0 )
        throw core::IoError( "cannot write attribute '" + std::string( name ) + "' to " + path );
}
} // namespace
#endif

void LatticeSnapshotWriter::write( long long step, double time_s, const std::vector<std::uint32_t>& words )
{
    const std::size_t n = std::size_t( m_n[0] ) * m_n[1] * m_n[2];
    if ( words.size() != n )
        throw core::InputError( core::detail::concat( "LatticeSnapshotWriter::write: ", words.size(), " words for ",
                                                      m_n[0], " x ", m_n[1], " x ", m_n[2], " sites" ) );
#if MORULA_HAVE_HDF5
    detail::Handle file( detail::open_file_rw( m_path ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( "cannot reopen the snapshot file '" + m_path + "'" );
    char name[48];
    std::snprintf( name, sizeof name, "/snapshots/step_%010lld", step );
    const hsize_t dims[3] = { hsize_t( m_n[2] ), hsize_t( m_n[1] ), hsize_t( m_n[0] ) };
    detail::Handle set( detail::write_dataset( file.id, name, H5T_NATIVE_UINT32, 3, dims, words.data(), m_path ),
                        H5Dclose );
    attribute( set.id, "nx", H5T_NATIVE_INT, m_n[0], m_path );
    attribute( set.id, "ny", H5T_NATIVE_INT, m_n[1], m_path );
    attribute( set.id, "nz", H5T_NATIVE_INT, m_n[2], m_path );
    attribute( set.id, "spacing_nm", H5T_NATIVE_DOUBLE, m_spacing, m_path );
    attribute( set.id, "step", H5T_NATIVE_LLONG, step, m_path );
    attribute( set.id, "time_s", H5T_NATIVE_DOUBLE, time_s, m_path );
    attribute( set.id, "slots_per_site", H5T_NATIVE_INT, m_slots, m_path );
    attribute( set.id, "bits_per_slot", H5T_NATIVE_INT, 28 / m_slots, m_path );
#else
    (void)step;
    (void)time_s;
#endif
}

} // namespace morula::io
