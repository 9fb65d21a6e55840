#include <morula/core/Error.hpp>
#include <morula/io/AngioSnapshots.hpp>
#include <morula/io/detail/XdmfText.hpp>

#include <algorithm>
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
        throw core::InputError( core::detail::concat( where, ": angio frame field '", field, "' has ", found,
                                                      " values, expected ", expected, " (", rule, ")" ) );
}

void expect_triples( const std::string& where, const char* field, std::size_t found, const char* what )
{
    if ( found % 3 != 0 )
        throw core::InputError( core::detail::concat( where, ": angio frame field '", field, "' has ", found,
                                                      " values, not a multiple of 3 (x, y, z per ", what, ")" ) );
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

bool angio_snapshots_available() { return hdf5_available(); }

namespace
{
SnapshotLayout angio_layout( const std::string& prefix )
{
    require_hdf5( "angiogenesis snapshots were requested (prefix '" + prefix + "')" );
    SnapshotLayout layout;
    // One file per frame: HDF5 updates a file in place, so a run killed while it added a frame to a
    // single file could damage the frames before (seen in CI); a frame file is renamed into place whole.
    layout.hdf5 = prefix;
    layout.file_per_frame = true;
    layout.xdmf = prefix + ".xmf";
    layout.collection = "angiogenesis";
    layout.description = "angiogenesis snapshot file";
    return layout;
}

// The frame's arrays that are not the AngioFrame's own: each tube is a polyline of its own two points,
// so the Tube filter can vary the radius along it (shared junction points would force one radius on
// the parent's end and the child's start), and the connectivity ParaView's readers need.
struct DerivedArrays
{
    std::vector<std::int32_t> cell_index;        // 0, 1, ..., n - 1
    std::vector<double> tube_points, tube_radius; // a0, b0, a1, ...; radius_a0, radius_b0, ...
    std::vector<std::int32_t> tube_connectivity;  // 0, 1, ..., 2m - 1

    explicit DerivedArrays( const AngioFrame& f )
        : cell_index( f.cells() )
        , tube_points( 6 * f.tubes() )
        , tube_radius( 2 * f.tubes() )
        , tube_connectivity( 2 * f.tubes() )
    {
        // The Xdmf3 readers make no cells of a Polyvertex topology without a connectivity array, and
        // ParaView then shows nothing; XDMF has no implicit 0..n-1, so it is stored.
        std::iota( cell_index.begin(), cell_index.end(), 0 );
        std::iota( tube_connectivity.begin(), tube_connectivity.end(), 0 );
        for ( std::size_t t = 0; t < f.tubes(); ++t )
        {
            for ( int d = 0; d < 3; ++d )
            {
                tube_points[6 * t + d] = f.tube_end_a[3 * t + d];
                tube_points[6 * t + 3 + d] = f.tube_end_b[3 * t + d];
            }
            tube_radius[2 * t] = f.tube_radius_a[t];
            tube_radius[2 * t + 1] = f.tube_radius_b[t];
        }
    }
};

SnapshotFrame frame_of( const AngioFrame& f, const DerivedArrays& derived )
{
    const std::size_t n = f.cells(), m = f.tubes();
    SnapshotFrame s;
    s.attribute( "", "step", std::int64_t( f.step ) );
    s.attribute( "", "time", f.time );
    s.group( "cells" );
    s.dataset( "cells/positions", f.cell_positions.data(), { n, 3 } );
    s.dataset( "cells/radius", f.cell_radius.data(), { n } );
    s.dataset( "cells/age", f.cell_age.data(), { n } );
    s.dataset( "cells/oxygen", f.cell_oxygen.data(), { n } );
    s.dataset( "cells/taf", f.cell_taf.data(), { n } );
    s.dataset( "cells/pressure", f.cell_pressure.data(), { n } );
    s.dataset( "cells/state", f.cell_state.data(), { n } );
    s.dataset( "cells/id", f.cell_id.data(), { n } );
    s.dataset( "cells/index", derived.cell_index.data(), { n } );
    s.group( "tubes" );
    s.dataset( "tubes/points", derived.tube_points.data(), { 2 * m, 3 } );
    s.dataset( "tubes/radius", derived.tube_radius.data(), { 2 * m } );
    s.dataset( "tubes/radius_a", f.tube_radius_a.data(), { m } );
    s.dataset( "tubes/radius_b", f.tube_radius_b.data(), { m } );
    s.dataset( "tubes/flow", f.tube_flow.data(), { m } );
    s.dataset( "tubes/blood_oxygen", f.tube_blood_oxygen.data(), { m } );
    s.dataset( "tubes/delivered", f.tube_delivered.data(), { m } );
    s.dataset( "tubes/taf", f.tube_taf.data(), { m } );
    s.dataset( "tubes/parent", f.tube_parent.data(), { m } );
    s.dataset( "tubes/flags", f.tube_flags.data(), { m } );
    s.dataset( "tubes/id", f.tube_id.data(), { m } );
    s.dataset( "tubes/connectivity", derived.tube_connectivity.data(), { m, 2 } );
    return s;
}

// A spatial collection of the cells grid and the tubes grid; `step` is the frame's reference in the index.
std::string xdmf_grid( const AngioFrame& f, const std::string& group, const std::string& step )
{
    using detail::xdmf_attribute;
    using detail::xdmf_data_item;
    const std::string cells = step + "/cells/", tubes = step + "/tubes/";
    const std::string n = std::to_string( f.cells() ), m = std::to_string( f.tubes() ),
                      points = std::to_string( 2 * f.tubes() );
    std::string x = "   <Grid Name=\"" + group + "\" GridType=\"Collection\" CollectionType=\"Spatial\">\n" +
                    "    <Time Value=\"" + detail::exact_decimal( f.time ) + "\"/>\n";

    x += "    <Grid Name=\"cells\" GridType=\"Uniform\">\n"
         "     <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" + n + "\" NodesPerElement=\"1\">\n" +
         xdmf_data_item( 6, n, "Int", 4, cells + "index" ) + "     </Topology>\n" +
         "     <Geometry GeometryType=\"XYZ\">\n" + xdmf_data_item( 6, n + " 3", "Float", 8, cells + "positions" ) +
         "     </Geometry>\n";
    for ( const char* name : { "radius", "age", "oxygen", "taf", "pressure" } )
        x += xdmf_attribute( 5, name, "Node", n, "Float", 8, cells + name );
    x += xdmf_attribute( 5, "state", "Node", n, "Int", 4, cells + "state" );
    x += xdmf_attribute( 5, "id", "Node", n, "Int", 8, cells + "id" );
    x += "    </Grid>\n";

    x += "    <Grid Name=\"tubes\" GridType=\"Uniform\">\n"
         "     <Topology TopologyType=\"Polyline\" NumberOfElements=\"" + m + "\" NodesPerElement=\"2\">\n" +
         xdmf_data_item( 6, m + " 2", "Int", 4, tubes + "connectivity" ) + "     </Topology>\n" +
         "     <Geometry GeometryType=\"XYZ\">\n" + xdmf_data_item( 6, points + " 3", "Float", 8, tubes + "points" ) +
         "     </Geometry>\n";
    x += xdmf_attribute( 5, "radius", "Node", points, "Float", 8, tubes + "radius" );
    for ( const char* name : { "radius_a", "radius_b", "flow", "blood_oxygen", "delivered", "taf" } )
        x += xdmf_attribute( 5, name, "Cell", m, "Float", 8, tubes + name );
    x += xdmf_attribute( 5, "parent", "Cell", m, "Int", 4, tubes + "parent" );
    x += xdmf_attribute( 5, "flags", "Cell", m, "Int", 4, tubes + "flags" );
    x += xdmf_attribute( 5, "id", "Cell", m, "Int", 8, tubes + "id" );
    return x + "    </Grid>\n" + "   </Grid>\n";
}
} // namespace

AngioSnapshotWriter::AngioSnapshotWriter( std::string prefix, long long resume_after )
    : m_series( angio_layout( prefix ), SnapshotSeries::open_mode( resume_after ), resume_after )
{
}

void AngioSnapshotWriter::write( const AngioFrame& frame )
{
    frame.validate( "AngioSnapshotWriter::write ('" + hdf5_file( frame.step ) + "', step " +
                    std::to_string( frame.step ) + ")" );
    const std::size_t n = frame.cells(), m = frame.tubes();
    const std::size_t largest = std::max( n, 2 * m );
    if ( largest > std::size_t( std::numeric_limits<std::int32_t>::max() ) )
        throw core::InputError( core::detail::concat( "AngioSnapshotWriter::write ('", hdf5_file( frame.step ),
                                                      "', step ", frame.step, "): ", n, " cells and ", m,
                                                      " tubes (2 points each) cannot be indexed with 32-bit "
                                                      "integers" ) );
    const DerivedArrays derived( frame );
    const std::string group = SnapshotSeries::step_name( frame.step );
    m_series.append( frame.step, frame_of( frame, derived ),
                     xdmf_grid( frame, group, m_series.xdmf_reference( frame.step ) ) );
}

} // namespace morula::io
