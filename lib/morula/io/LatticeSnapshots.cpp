#include <morula/core/Error.hpp>
#include <morula/io/LatticeSnapshots.hpp>

namespace morula::io
{
namespace
{
SnapshotLayout lattice_layout( const std::string& path )
{
    require_hdf5( "lattice snapshots were requested ('" + path + "')" );
    SnapshotLayout layout;
    layout.hdf5 = path;
    layout.frames_group = "snapshots";
    return layout;
}
} // namespace

LatticeSnapshotWriter::LatticeSnapshotWriter( std::string path, int nx, int ny, int nz, double spacing_nm,
                                              int slots_per_site, long long resume_after )
    : m_series( lattice_layout( path ), SnapshotSeries::open_mode( resume_after ), resume_after )
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
    // The frame is the one dataset of site words; its attributes say how to read it.
    SnapshotFrame frame;
    frame.dataset( "", words.data(), { std::size_t( m_n[2] ), std::size_t( m_n[1] ), std::size_t( m_n[0] ) } );
    frame.attribute( "", "nx", std::int32_t( m_n[0] ) );
    frame.attribute( "", "ny", std::int32_t( m_n[1] ) );
    frame.attribute( "", "nz", std::int32_t( m_n[2] ) );
    frame.attribute( "", "spacing_nm", m_spacing );
    frame.attribute( "", "step", std::int64_t( step ) );
    frame.attribute( "", "time_s", time_s );
    frame.attribute( "", "slots_per_site", std::int32_t( m_slots ) );
    frame.attribute( "", "bits_per_slot", std::int32_t( 28 / m_slots ) );
    m_series.append( step, frame );
}

} // namespace morula::io
