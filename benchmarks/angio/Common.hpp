/*!
  \file Common.hpp
  \brief What the parts of angio_benchmark share: the spaces and model types, the settings, the model calls
  around the timed phases, and the three cases (CellCellCase.cpp, TubeCellCase.cpp, WholeCase.cpp).
*/
#ifndef MORULA_BENCHMARKS_ANGIO_COMMON_HPP
#define MORULA_BENCHMARKS_ANGIO_COMMON_HPP

#include <common/BenchmarkUtils.hpp>

#include <morula/angio/Angiogenesis.hpp>
#include <morula/core/HostCopy.hpp>

#include <Kokkos_Core.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace angio_bench
{

namespace angio = morula::angio;
namespace core = morula::core;
using morula::bench::Stats;
using morula::angio::detail::PhaseAccess;
using exec_space = Kokkos::DefaultExecutionSpace;
using mem_space = exec_space::memory_space;

template <class Scalar>
using Model = angio::TumourAngiogenesis<Scalar, mem_space>;
template <class Scalar>
using Cells = angio::TumourCells<Scalar, mem_space>;
template <class Scalar>
using Tubes = angio::VesselTubes<Scalar, mem_space>;

//! The command line (angio_benchmark.cpp; defaults of the paper's cases, sizes filled in per case).
struct Settings
{
    std::string which = "all";
    std::vector<int> cells;
    std::vector<int> tubes;
    int steps = 200;
    int warmup_steps = 20;
    int runs = 5;
    int warmup = 1;
    int sweeps = 64;
    std::string precision = "both";
    std::string out;
    double cell_radius = 5;
    double volume_fraction = 0.5;
    int max_tubes_per_cell = 64;
    double cluster_radius = 150;
    double edge = 800;
    double vessel_radius = 5;
    std::uint64_t seed = 1;
};

//! Reads the step counters (capacity overflows, negative concentrations throw), zeroes them again. Phases
//! run one by one are not steps: the model's step count (which keys its random numbers) stays.
template <class Scalar>
void check_counters( const exec_space& exec, Model<Scalar>& m )
{
    angio::TumourAngiogenesisReport report;
    PhaseAccess::finish_step( m, exec, report );
    PhaseAccess::prepare_step( m, exec );
}

//! Every interaction phase once, untimed, so that grids, contact and tube lists are those of a step.
template <class Scalar>
void make_ready( const exec_space& exec, Model<Scalar>& m )
{
    PhaseAccess::prepare_step( m, exec );
    PhaseAccess::build_grid( m, exec );
    PhaseAccess::interact_cells( m, exec );
    PhaseAccess::update_blood_flow( m, exec );
    PhaseAccess::interact_tubes( m, exec );
    PhaseAccess::interact_tubes_and_cells( m, exec );
    check_counters( exec, m );
}

//! The first n entries of a rank-1 View of counts, on the host.
template <class View>
std::vector<long long> first_n_to_host( const View& v, int n )
{
    std::vector<long long> out;
    core::copy_to_host( v, static_cast<std::size_t>( n ), out );
    return out;
}

inline long long sum_of( const std::vector<long long>& v )
{
    long long s = 0;
    for ( auto x : v )
        s += x;
    return s;
}

inline long long max_of( const std::vector<long long>& v )
{
    long long s = 0;
    for ( auto x : v )
        s = x > s ? x : s;
    return s;
}

//! cellcell: the random input without tubes (rows and roofline records appended).
template <class Scalar>
void cellcell( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows,
               nlohmann::json& kernels );

//! tubecell: the random input with dense random tubes.
template <class Scalar>
void tubecell( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows,
               nlohmann::json& kernels );

//! whole: the full model, a tumour beside two vessels.
template <class Scalar>
void whole( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows );

} // namespace angio_bench

#endif
