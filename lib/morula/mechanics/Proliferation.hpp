/*!
  \file Proliferation.hpp
  \brief The cell-division simulation of seed 004 (benchmark A) and the static mechanics benchmark
  (benchmark B) as one driver: growth and division, grid build, Z-order sort, forces, displacement.
*/
#ifndef MORULA_MECHANICS_PROLIFERATION_HPP
#define MORULA_MECHANICS_PROLIFERATION_HPP

#include <morula/core/Box.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <optional>
#include <utility>

namespace morula::mechanics
{

//! Seconds spent per operation, summed over steps (filled only when steps are timed).
struct OperationTimes
{
    double division = 0;     //!< growth and division
    double grid_build = 0;   //!< binning the agents
    double sort = 0;         //!< permuting every agent field into Z-order
    double forces = 0;       //!< the mechanical operation: forces and displacements
    double displacement = 0; //!< moving the agents
    long long steps = 0;

    double total() const { return division + grid_build + sort + forces + displacement; }
};

//! What one step did.
struct StepReport
{
    int divisions = 0;
    bool sorted = false;
    long long interactions = 0; //!< overlapping (agent, neighbour) pairs, when counted
};

/*!
  \brief Agents under growth, division and mechanics, one step at a time.

  A step is: growth and division (if enabled), grid build, the Z-order sort when due, the mechanical
  operation, and the displacement, as in BioDynaMo's scheduler for the cell-division benchmark. With
  timing on, each operation is fenced and timed separately (the fences cost a few microseconds per
  operation; leave timing off for production runs).
*/
template <class Scalar, class MemorySpace>
class Proliferation
{
  public:
    using agents_type = SphereAgents<Scalar, MemorySpace>;

    Proliferation( agents_type agents, const core::Box<Scalar>& box,
                   const MechanicsParameters<Scalar>& mechanics,
                   const std::optional<GrowthParameters<Scalar>>& growth )
        : m_agents( std::move( agents ) )
        , m_mechanics( box, mechanics )
    {
        if ( growth )
            m_growth.emplace( *growth );
    }

    template <class ExecutionSpace>
    StepReport step( const ExecutionSpace& exec, bool time_operations = false,
                     bool count_interactions = false )
    {
        StepReport report;
        auto timed = [&]( double& slot, auto&& op ) {
            if ( !time_operations )
                return op();
            exec.fence();
            const auto t0 = std::chrono::steady_clock::now();
            op();
            exec.fence();
            slot += std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        };
        if ( m_growth )
            timed( m_times.division, [&] {
                report.divisions = m_growth->step( exec, m_agents, static_cast<std::uint32_t>( m_step ) );
            } );
        report.sorted = m_mechanics.sort_due();
        timed( m_times.grid_build, [&] { m_mechanics.build_grid( exec, m_agents ); } );
        if ( report.sorted )
            timed( m_times.sort, [&] { m_mechanics.sort_agents( exec, m_agents ); } );
        timed( m_times.forces, [&] {
            report.interactions = m_mechanics.compute_displacements( exec, m_agents, count_interactions );
        } );
        timed( m_times.displacement, [&] { m_mechanics.apply_displacements( exec, m_agents ); } );
        ++m_step;
        if ( time_operations )
            ++m_times.steps;
        return report;
    }

    const agents_type& agents() const { return m_agents; }
    agents_type& agents() { return m_agents; }
    const SphereMechanics<Scalar, MemorySpace>& mechanics() const { return m_mechanics; }
    const OperationTimes& times() const { return m_times; }
    void reset_times() { m_times = {}; }
    long long step_index() const { return m_step; }

  private:
    agents_type m_agents;
    SphereMechanics<Scalar, MemorySpace> m_mechanics;
    std::optional<GrowthDivision<Scalar, MemorySpace>> m_growth;
    OperationTimes m_times;
    long long m_step = 0;
};

} // namespace morula::mechanics

#endif
