/*!
  \file Proliferation.hpp
  \brief The cell-division simulation of Hesam et al. 2021 (benchmark A) and the static mechanics benchmark
  (benchmark B) as one driver: growth and division, grid build, Z-order sort, forces, displacement.
*/
#ifndef MORULA_MECHANICS_PROLIFERATION_HPP
#define MORULA_MECHANICS_PROLIFERATION_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Driver.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <optional>
#include <utility>

namespace morula::mechanics
{

//! The phases of Proliferation::step(), in the order of the names in its times().
struct ProliferationPhase
{
    enum : int
    {
        division,    //!< growth and division
        grid_build,  //!< binning the agents
        sort,        //!< permuting every agent field into Z-order
        forces,      //!< the mechanical operation: forces and displacements
        displacement //!< moving the agents
    };
};

//! What one step did.
struct ProliferationReport : core::StepReport
{
    int divisions = 0;
    bool sorted = false;
    long long interactions = 0; //!< overlapping (agent, neighbour) pairs, when counted
};

/*!
  \brief Agents under growth, division and mechanics, one step at a time.

  A step is: growth and division (if enabled), grid build, the Z-order sort when due, the mechanical
  operation, and the displacement, as in BioDynaMo's scheduler for the cell-division benchmark. With
  timing on, each phase is fenced and timed separately (core::PhaseTimer: the fences cost a few
  microseconds per phase; leave timing off for production runs).
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

    //! One step; with `timed` each phase is fenced and timed into times().
    template <class ExecutionSpace>
    ProliferationReport step( const ExecutionSpace& exec, bool timed = false, bool count_interactions = false )
    {
        using Phase = ProliferationPhase;
        ProliferationReport report;
        report.step = m_step;
        if ( m_growth )
            report.divisions = m_times.run( timed, Phase::division, exec, [&] {
                return m_growth->step( exec, m_agents, static_cast<std::uint32_t>( m_step ) );
            } );
        report.sorted = m_mechanics.sort_due();
        m_times.run( timed, Phase::grid_build, exec, [&] { m_mechanics.build_grid( exec, m_agents ); } );
        if ( report.sorted )
            m_times.run( timed, Phase::sort, exec, [&] { m_mechanics.sort_agents( exec, m_agents ); } );
        report.interactions = m_times.run( timed, Phase::forces, exec, [&] {
            return m_mechanics.compute_displacements( exec, m_agents, count_interactions );
        } );
        m_times.run( timed, Phase::displacement, exec, [&] { m_mechanics.apply_displacements( exec, m_agents ); } );
        ++m_step;
        if ( timed )
            m_times.count_step();
        return report;
    }

    const agents_type& agents() const { return m_agents; }
    agents_type& agents() { return m_agents; }
    const SphereMechanics<Scalar, MemorySpace>& mechanics() const { return m_mechanics; }
    //! Seconds per ProliferationPhase, summed over the timed steps.
    const core::PhaseTimer& times() const { return m_times; }
    void reset_times() { m_times.reset(); }
    long long steps_done() const { return m_step; }

  private:
    agents_type m_agents;
    SphereMechanics<Scalar, MemorySpace> m_mechanics;
    std::optional<GrowthDivision<Scalar, MemorySpace>> m_growth;
    core::PhaseTimer m_times{ "morula::mechanics::Proliferation",
                              { "division", "grid_build", "sort", "forces", "displacement" } };
    long long m_step = 0;
};

} // namespace morula::mechanics

#endif
