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
#include <morula/io/Checkpoint.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/ProliferationCheckpoint.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <optional>
#include <string>
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
        forces,      //!< the mechanical operation: each agent's force and bounded displacement, computed
        displacement //!< moving the agents by the displacements of `forces`
    };
    static constexpr const char* scope = "morula::mechanics::Proliferation";
    static constexpr const char* names[] = { "division", "grid_build", "sort", "forces", "displacement" };
};

//! What one step did.
struct ProliferationReport : core::StepReport
{
    int divisions = 0;
    bool sorted = false;
    long long interactions = 0; //!< overlapping (agent, neighbour) pairs, when counted

    //! Sums an advance()'s steps: divisions and interactions added, sorted if any step sorted.
    void merge( const ProliferationReport& other )
    {
        divisions += other.divisions;
        sorted = sorted || other.sorted;
        interactions += other.interactions;
    }
};

/*!
  \brief Agents under growth, division and mechanics, one step at a time.

  A step is: growth and division (if enabled), grid build, the Z-order sort when due, the mechanical
  operation, and the displacement, as in BioDynaMo's scheduler for the cell-division benchmark. With
  timing on, each phase is fenced and timed separately (core::PhaseTimer: the fences cost a few
  microseconds per phase; leave timing off for production runs).

  checkpoint() and restart() save and resume the whole state (ProliferationCheckpoint.hpp): a run of
  2N steps and a run of N steps, a checkpoint, a restart and N steps give the same agents bit for bit.
*/
template <class Scalar, class MemorySpace>
class Proliferation
    : public core::ModelDriver<Proliferation<Scalar, MemorySpace>, ProliferationPhase, ProliferationReport>
{
  public:
    using agents_type = SphereAgents<Scalar, MemorySpace>;
    //! The model name of its checkpoints (those of parallel::DistributedProliferation too).
    static constexpr const char* checkpoint_model = proliferation_checkpoint_model;

    Proliferation( agents_type agents, const core::Box<Scalar>& box,
                   const MechanicsParameters<Scalar>& mechanics,
                   const std::optional<GrowthParameters<Scalar>>& growth )
        : m_agents( std::move( agents ) )
        , m_mechanics( box, mechanics )
    {
        if ( growth )
            m_growth.emplace( *growth );
    }

    //! Whether steps count the interacting pairs into their reports (costs one array and an atomic add).
    void set_count_interactions( bool on ) { m_count_interactions = on; }
    bool count_interactions() const { return m_count_interactions; }

    //! The phases of one step (core::ModelDriver::step() runs them); public for nvcc's device lambdas.
    template <class ExecutionSpace, class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, ProliferationReport& report )
    {
        using Phase = ProliferationPhase;
        if ( m_growth )
            report.divisions = phase( Phase::division, [&] {
                return m_growth->step( exec, m_agents, static_cast<std::uint32_t>( report.step ) );
            } );
        report.sorted = m_mechanics.sort_due();
        phase( Phase::grid_build, [&] { m_mechanics.build_grid( exec, m_agents ); } );
        if ( report.sorted )
            phase( Phase::sort, [&] { m_mechanics.sort_agents( exec, m_agents ); } );
        report.interactions = phase( Phase::forces, [&] {
            return m_mechanics.compute_displacements( exec, m_agents, m_count_interactions );
        } );
        phase( Phase::displacement, [&] { m_mechanics.apply_displacements( exec, m_agents ); } );
    }

    const agents_type& agents() const { return m_agents; }
    agents_type& agents() { return m_agents; }
    const SphereMechanics<Scalar, MemorySpace>& mechanics() const { return m_mechanics; }
    //! The growth parameters, if agents grow and divide.
    std::optional<GrowthParameters<Scalar>> growth_parameters() const
    {
        return m_growth ? std::optional<GrowthParameters<Scalar>>( m_growth->parameters() ) : std::nullopt;
    }

    /*!
      \brief Writes the whole state into `out`: the agents in memory order with their next id and
      capacity, the step count (the growth RNG's step), the grid's box, cell size and updates (the
      sort's phase), and the parameters, which a restart compares.
    */
    void checkpoint( io::CheckpointWriter& out ) const
    {
        detail::put_proliferation_parameters( out, m_mechanics.box(), m_mechanics.parameters(), growth_parameters() );
        out.put_scalar( "step", this->steps_done() );
        detail::put_agents( out, detail::agents_to_host( m_agents, m_agents.size() ), m_agents.next_id(),
                            m_agents.capacity() );
        const auto st = m_mechanics.state();
        out.put_scalar( "mechanics/grid_builds", static_cast<std::int64_t>( st.grid_builds ) );
        if ( st.has_grid )
        {
            out.put( "mechanics/grid_lo", std::vector<Scalar>{ st.grid_box.lo[0], st.grid_box.lo[1], st.grid_box.lo[2] } );
            out.put( "mechanics/grid_hi", std::vector<Scalar>{ st.grid_box.hi[0], st.grid_box.hi[1], st.grid_box.hi[2] } );
            out.put_scalar( "mechanics/grid_cutoff", st.grid_cutoff );
        }
    }

    /*!
      \brief Continues from a checkpoint into this driver, made from the same parameters (its agents
      are replaced, whatever their number). A checkpoint of this driver continues exactly; one of a
      distributed run starts over new grids and equals that run's continuation to round-off.
      \throws core::InputError naming the checkpoint file if its parameters differ from this driver's
      (naming the parameter and both values), it holds another precision, or it is inconsistent; the
      driver is then unchanged
    */
    void restart( const io::CheckpointReader& in )
    {
        detail::check_proliferation_parameters( in, m_mechanics.box(), m_mechanics.parameters(), growth_parameters() );
        const long long step = detail::get_proliferation_step( in );
        std::int64_t next_id = 0;
        std::size_t capacity = 0;
        const auto host = detail::get_agents<Scalar>( in, next_id, capacity );
        SphereMechanicsState<Scalar> st;
        if ( in.has( "mechanics/grid_builds" ) )
        {
            st.grid_builds = in.scalar<std::int64_t>( "mechanics/grid_builds" );
            st.has_grid = in.has( "mechanics/grid_lo" );
            st.grid_box = m_mechanics.box();
            if ( st.has_grid )
            {
                detail::expect_shape( in, "mechanics/grid_lo", { 3 } );
                detail::expect_shape( in, "mechanics/grid_hi", { 3 } );
                const auto lo = in.get<Scalar>( "mechanics/grid_lo" );
                const auto hi = in.get<Scalar>( "mechanics/grid_hi" );
                for ( int d = 0; d < 3; ++d )
                {
                    st.grid_box.lo[d] = lo[d];
                    st.grid_box.hi[d] = hi[d];
                }
                st.grid_cutoff = in.scalar<Scalar>( "mechanics/grid_cutoff" );
            }
        }
        else
            // A distributed run's: it sorted at the steps this driver sorts at (one grid update a step).
            st.grid_builds = step;
        auto agents = detail::agents_from_host<Scalar, MemorySpace>( m_agents.label(), host, capacity, next_id );
        try
        {
            m_mechanics.restore( st );
        }
        catch ( const core::InputError& e )
        {
            in.fail( e.what() );
        }
        m_agents = std::move( agents );
        this->set_steps_done( step );
    }

  private:
    agents_type m_agents;
    SphereMechanics<Scalar, MemorySpace> m_mechanics;
    std::optional<GrowthDivision<Scalar, MemorySpace>> m_growth;
    bool m_count_interactions = false;
};

} // namespace morula::mechanics

#endif
