#include <morula/core/Error.hpp>
#include <morula/io/AgentSnapshots.hpp>
#include <morula/io/detail/XdmfText.hpp>

#include <sstream>

namespace morula::io
{
namespace
{
SnapshotLayout agent_layout( const std::string& prefix )
{
    require_hdf5( "snapshots were requested (prefix '" + prefix + "')" );
    SnapshotLayout layout;
    layout.hdf5 = prefix;
    layout.file_per_frame = true;
    layout.xdmf = prefix + ".xmf";
    layout.collection = "agents";
    layout.doctype = false;
    return layout;
}
} // namespace

AgentSnapshotWriter::AgentSnapshotWriter( std::string prefix, long long resume_after )
    : m_series( agent_layout( prefix ), SnapshotSeries::open_mode( resume_after ), resume_after )
{
}

void AgentSnapshotWriter::write( long long step, double time, const std::vector<double>& xyz,
                                 const std::vector<double>& diameter,
                                 const std::vector<std::int64_t>& id )
{
    const std::size_t n = diameter.size();
    if ( xyz.size() != 3 * n || id.size() != n )
        throw core::InputError( "AgentSnapshotWriter::write: inconsistent array sizes" );
    SnapshotFrame frame;
    frame.dataset( "positions", xyz.data(), { n, 3 } );
    frame.dataset( "diameter", diameter.data(), { n } );
    frame.dataset( "id", id.data(), { n } );

    const std::string h5 = m_series.xdmf_reference( step ) + "/", count = std::to_string( n );
    std::ostringstream grid;
    // The time as an ostream prints it (6 significant digits), as this index always has.
    grid << "   <Grid Name=\"step\" GridType=\"Uniform\">\n"
         << "    <Time Value=\"" << time << "\"/>\n"
         << "    <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << n << "\"/>\n"
         << "    <Geometry GeometryType=\"XYZ\">\n"
         << detail::xdmf_data_item( 5, count + " 3", "Float", 8, h5 + "positions" ) << "    </Geometry>\n"
         << detail::xdmf_attribute( 4, "diameter", "Node", count, "Float", 8, h5 + "diameter" )
         << detail::xdmf_attribute( 4, "id", "Node", count, "Int", 8, h5 + "id" ) << "   </Grid>\n";
    m_series.append( step, frame, grid.str() );
}

} // namespace morula::io
