#include <morula/core/Error.hpp>
#include <morula/io/TissueSnapshots.hpp>
#include <morula/io/detail/XdmfText.hpp>

#include <limits>
#include <numeric>

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

bool tissue_snapshots_available() { return hdf5_available(); }

namespace
{
SnapshotLayout tissue_layout( const std::string& prefix )
{
    require_hdf5( "tissue snapshots were requested (prefix '" + prefix + "')" );
    SnapshotLayout layout;
    // One file per frame: HDF5 updates a file in place, so a run killed while it added a frame to a
    // single file could damage the frames before (seen in CI); a frame file is renamed into place whole.
    layout.hdf5 = prefix;
    layout.file_per_frame = true;
    layout.xdmf = prefix + ".xmf";
    layout.collection = "tissue";
    layout.description = "tissue snapshot file";
    return layout;
}

SnapshotFrame frame_of( const TissueFrame& f, const std::vector<std::int32_t>& element_index )
{
    const std::size_t n = f.elements(), m = f.cells();
    SnapshotFrame s;
    s.attribute( "", "step", std::int64_t( f.step ) );
    s.attribute( "", "time", f.time );
    s.dataset( "positions", f.positions.data(), { n, 3 } );
    s.dataset( "cell", f.cell.data(), { n } );
    s.dataset( "type", f.type.data(), { n } );
    s.dataset( "state", f.state.data(), { n } );
    s.dataset( "element_index", element_index.data(), { n } );
    s.dataset( "cell_centres", f.cell_centres.data(), { m, 3 } );
    s.dataset( "cell_elements", f.cell_elements.data(), { m } );
    s.dataset( "cell_state", f.cell_state.data(), { m } );
    if ( f.species_count > 0 )
    {
        s.dataset( "species", f.species.data(), { m, std::size_t( f.species_count ) } );
        if ( !f.species_names.empty() )
            s.names( "species", "names", f.species_names );
    }
    return s;
}

// A point cloud of the elements; `step` is the frame's reference in the index.
std::string xdmf_grid( const TissueFrame& f, const std::string& group, const std::string& step )
{
    const std::string h5 = step + "/", n = std::to_string( f.elements() );
    std::string x = "   <Grid Name=\"" + group + "\" GridType=\"Uniform\">\n" + "    <Time Value=\"" +
                    detail::exact_decimal( f.time ) + "\"/>\n" + "    <Topology TopologyType=\"Polyvertex\" " +
                    "NumberOfElements=\"" + n + "\" NodesPerElement=\"1\">\n" +
                    detail::xdmf_data_item( 5, n, "Int", 4, h5 + "element_index" ) + "    </Topology>\n" +
                    "    <Geometry GeometryType=\"XYZ\">\n" +
                    detail::xdmf_data_item( 5, n + " 3", "Float", 8, h5 + "positions" ) + "    </Geometry>\n";
    for ( const char* name : { "cell", "type", "state" } )
        x += detail::xdmf_attribute( 4, name, "Node", n, "Int", 4, h5 + name );
    return x + "   </Grid>\n";
}
} // namespace

TissueSnapshotWriter::TissueSnapshotWriter( std::string prefix, long long resume_after )
    : m_series( tissue_layout( prefix ), SnapshotSeries::open_mode( resume_after ), resume_after )
{
}

void TissueSnapshotWriter::write( const TissueFrame& frame )
{
    frame.validate( "TissueSnapshotWriter::write ('" + hdf5_file( frame.step ) + "', step " +
                    std::to_string( frame.step ) + ")" );
    if ( frame.elements() > std::size_t( std::numeric_limits<std::int32_t>::max() ) )
        throw core::InputError( core::detail::concat( "TissueSnapshotWriter::write: ", frame.elements(),
                                                      " elements cannot be indexed with 32-bit integers" ) );
    // The Xdmf3 readers make no cells of a Polyvertex topology without a connectivity array, and
    // ParaView then shows nothing; XDMF has no implicit 0..n-1, so it is stored.
    std::vector<std::int32_t> element_index( frame.elements() );
    std::iota( element_index.begin(), element_index.end(), 0 );
    const std::string group = SnapshotSeries::step_name( frame.step );
    m_series.append( frame.step, frame_of( frame, element_index ),
                     xdmf_grid( frame, group, m_series.xdmf_reference( frame.step ) ) );
}

} // namespace morula::io
