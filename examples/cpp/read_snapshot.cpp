// Reading a snapshot series back: a proliferating cluster of cells writes its agents every 10 steps
// (io::AgentSnapshotWriter, one HDF5 file per frame and an XDMF index for ParaView), and the same program
// then reads the frames back with io::SnapshotReader, as an analysis code would, without the HDF5 API.
// Each frame must hold what the model held at that step: the same number of agents, distinct ids, the
// same diameters in the same order (their sum equal bit for bit) and the same centre of mass.
//
//   read_snapshot [prefix]     writes <prefix>_<step>.h5 and <prefix>.xmf (default read_snapshot_example)
#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace
{
// What the model held at a written step, computed on the host from the same arrays the writer copies.
struct Census
{
    std::size_t agents = 0;
    double diameter_sum = 0;
    std::array<double, 3> centre{};
};

Census census( const std::vector<double>& xyz, const std::vector<double>& diameter )
{
    Census c;
    c.agents = diameter.size();
    for ( std::size_t i = 0; i < c.agents; ++i )
    {
        c.diameter_sum += diameter[i];
        for ( int d = 0; d < 3; ++d )
            c.centre[d] += xyz[3 * i + d] / double( c.agents );
    }
    return c;
}
} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    if ( !morula::io::hdf5_available() )
    {
        std::printf( "this Morula was built without HDF5: no snapshots to read (skipped)\n" );
        return 77; // ctest's SKIP_RETURN_CODE
    }
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    namespace mech = morula::mechanics;
    const std::string prefix = argc > 1 ? argv[1] : "read_snapshot_example";

    // A 6 x 6 x 6 block of touching cells in open space that grow and divide.
    const double spacing = 20;
    const morula::core::Box<double> box( { -200, -200, -200 }, { 300, 300, 300 }, morula::core::Boundary::open );
    mech::GrowthParameters<double> growth;
    growth.growth_rate = 40000;
    mech::Proliferation<double, mem> model( mech::lattice_agents<double, mem>( exec(), 6, spacing, {} ), box,
                                            mech::MechanicsParameters<double>{}, growth );

    // The run: a frame every 10 steps, and what the model held then.
    std::vector<long long> written;
    std::vector<Census> expected;
    {
        morula::io::AgentSnapshotWriter writer( prefix );
        for ( long long step = 0; step <= 40; ++step )
        {
            if ( step % 10 == 0 )
            {
                const auto& a = model.agents();
                std::vector<double> xyz, diameter;
                std::vector<std::int64_t> id;
                morula::core::copy_to_host( a.positions(), a.size(), xyz );
                morula::core::copy_to_host( a.diameters(), a.size(), diameter );
                morula::core::copy_to_host( a.ids(), a.size(), id );
                writer.write( step, step * growth.time_step, xyz, diameter, id );
                written.push_back( step );
                expected.push_back( census( xyz, diameter ) );
            }
            if ( step < 40 )
                model.step( exec() );
        }
    }

    // The analysis: every frame of the series, read back.
    const morula::io::SnapshotReader reader( prefix );
    const std::vector<long long> steps = reader.steps();
    bool ok = steps == written;
    if ( !ok )
        std::printf( "MISMATCH: the series lists %zu frames, the run wrote %zu\n", steps.size(), written.size() );
    std::printf( "%6s %8s %14s %28s\n", "step", "agents", "mean diameter", "centre of mass" );
    for ( std::size_t f = 0; ok && f < steps.size(); ++f )
    {
        const auto x = reader.read<double>( steps[f], "positions" );
        const auto d = reader.read<double>( steps[f], "diameter" );
        const auto id = reader.read<std::int64_t>( steps[f], "id" );
        const Census got = census( x.values, d.values );
        const std::set<std::int64_t> distinct( id.values.begin(), id.values.end() );
        const bool same = x.rows() == expected[f].agents && x.dims.size() == 2 && x.dims[1] == 3 &&
                          d.rows() == got.agents && distinct.size() == got.agents &&
                          got.diameter_sum == expected[f].diameter_sum && got.centre == expected[f].centre;
        std::printf( "%6lld %8zu %14.4f  (%8.3f, %8.3f, %8.3f)%s\n", steps[f], got.agents,
                     got.diameter_sum / double( got.agents ), got.centre[0], got.centre[1], got.centre[2],
                     same ? "" : "  MISMATCH" );
        ok = ok && same;
    }
    // The cluster must have grown: the last frame holds more agents than the first.
    ok = ok && expected.back().agents > expected.front().agents;
    std::printf( "%s: %zu frames read back from %s_*.h5 (index %s.xmf)\n", ok ? "OK" : "FAILED", steps.size(),
                 prefix.c_str(), prefix.c_str() );
    return ok ? 0 : 1;
}
