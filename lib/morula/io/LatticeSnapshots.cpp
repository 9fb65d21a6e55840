#include <morula/core/Error.hpp>
#include <morula/io/LatticeSnapshots.hpp>

namespace morula::io
{
namespace
{
SnapshotLayout lattice_layout( const std::string& path )
{
    require_hdf5( "lattice snapshots were requested ('" + path + "')" );
    // One file per frame, `<prefix>_<step>.h5`, a trailing ".h5" of the name given dropped: HDF5 updates
    // a file in place, so a run killed while it added a frame to a single file could damage the frames
    // before it; a frame file is renamed into place whole and never reopened.
    const std::string suffix = ".h5";
    const bool named_as_file =
        path.size() > suffix.size() && path.compare( path.size() - suffix.size(), suffix.size(), suffix ) == 0;
    SnapshotLayout layout;
    layout.hdf5 = named_as_file ? path.substr( 0, path.size() - suffix.size() ) : path;
    layout.file_per_frame = true;
    layout.description = "lattice snapshot file";
    return layout;
}
} // namespace

LatticeSnapshotWriter::LatticeSnapshotWriter( std::string prefix, int nx, int ny, int nz, double spacing_nm,
                                              int slots_per_site, long long resume_after )
    : m_series( lattice_layout( prefix ), SnapshotSeries::open_mode( resume_after ), resume_after )
    , m_n{ nx, ny, nz }
    , m_spacing( spacing_nm )
    , m_slots( slots_per_site )
{
}

void LatticeSnapshotWriter::write( long long step, double time_s, const std::vector<std::uint32_t>& words )
{
    const std::size_t n = std::size_t( m_n[0] ) * m_n[1] * m_n[2];
    if ( words.size() != n )
        throw core::InputError( core::detail::concat( "LatticeSnapshotWriter::write: ", words.size(), " words for ",
                                                      m_n[0], " x ", m_n[1], " x ", m_n[2], " sites" ) );
    // The frame's file holds one dataset of site words; its attributes say how to read it.
    SnapshotFrame frame;
    frame.dataset( "sites", words.data(), { std::size_t( m_n[2] ), std::size_t( m_n[1] ), std::size_t( m_n[0] ) } );
    frame.attribute( "sites", "nx", std::int32_t( m_n[0] ) );
    frame.attribute( "sites", "ny", std::int32_t( m_n[1] ) );
    frame.attribute( "sites", "nz", std::int32_t( m_n[2] ) );
    frame.attribute( "sites", "spacing_nm", m_spacing );
    frame.attribute( "sites", "step", std::int64_t( step ) );
    frame.attribute( "sites", "time_s", time_s );
    frame.attribute( "sites", "slots_per_site", std::int32_t( m_slots ) );
    frame.attribute( "sites", "bits_per_slot", std::int32_t( 28 / m_slots ) );
    m_series.append( step, frame );
}

} // namespace morula::io
