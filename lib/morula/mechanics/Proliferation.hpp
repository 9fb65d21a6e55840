/*!
  \file Proliferation.hpp
  \brief The cell-division simulation of Hesam et al. 2021 (benchmark A) and the static mechanics benchmark
  (benchmark B) as one driver, on one rank or over the ranks of a parallel::CartesianDecomposition:
  growth and division, grid build, Z-order sort, forces, displacement.
*/
#ifndef MORULA_MECHANICS_PROLIFERATION_HPP
#define MORULA_MECHANICS_PROLIFERATION_HPP

#include <morula/Config.hpp>
#include <morula/core/Box.hpp>
#include <morula/core/Driver.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/ProliferationCheckpoint.hpp>
#include <morula/mechanics/ProliferationPhase.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereMechanics.hpp>

#if MORULA_HAVE_MPI
#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/parallel/DistributedSphereMechanics.hpp>
#include <morula/parallel/detail/AgreeOnError.hpp>
#include <morula/parallel/detail/ProliferationPeers.hpp>
#include <mpi.h>
#endif

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace morula::mechanics
{

/*!
  \brief Agents under growth, division and mechanics, one step at a time, on one rank or over the ranks
  of a parallel::CartesianDecomposition.

  A step is: growth and division (if enabled), grid build, the Z-order sort when due, the mechanical
  operation, and the displacement, as in BioDynaMo's scheduler for the cell-division benchmark. With
  timing on, each phase is fenced and timed separately (core::PhaseTimer: the fences cost a few
  microseconds per phase; leave timing off for production runs).

  Over several ranks (the decomposition's constructor, in builds with MPI) each rank steps the agents of
  its subdomain with the agents near its faces as ghosts (parallel::DistributedSphereMechanics: migration,
  halo, forces overlapped with the exchange); daughters get the ids one rank would give them, so ids,
  diameters and counts are one rank's exactly and positions agree to round-off. Before the first step the
  agents may be anywhere in the box (all of them on rank 0, say: the first step sends each to its owner);
  after a step agents() holds this rank's owned agents first (num_owned() of them), then the ghosts.
  Every call is then collective where it says so. A decomposition of one rank is the one-rank driver.

  checkpoint() and restart() save and resume the whole state (ProliferationCheckpoint.hpp): a run of
  2N steps and a run of N steps, a checkpoint, a restart and N steps give the same agents bit for bit.
  Over several ranks one file holds every rank's owned agents in the layout of one rank's, written by
  rank 0 (write_checkpoint()); a restart on the same ranks and decomposition continues exactly, on
  another rank count (one included) to round-off.
*/
template <class Scalar, class MemorySpace>
class Proliferation
    : public core::ModelDriver<Proliferation<Scalar, MemorySpace>, ProliferationPhase, ProliferationReport>
{
  public:
    using agents_type = SphereAgents<Scalar, MemorySpace>;
    using Phase = ProliferationPhase;
    //! The model name of its checkpoints, on one rank or many.
    static constexpr const char* checkpoint_model = proliferation_checkpoint_model;

    //! On one rank.
    Proliferation( agents_type agents, const core::Box<Scalar>& box, const MechanicsParameters<Scalar>& mechanics,
                   const std::optional<GrowthParameters<Scalar>>& growth )
        : m_agents( std::move( agents ) )
        , m_box( box )
        , m_single( std::in_place, box, mechanics )
    {
        if ( growth )
            m_growth.emplace( *growth );
    }

#if MORULA_HAVE_MPI
    /*!
      Over the ranks of `decomposition` (whose box it is, and whose halo width must cover the largest
      interaction distance: the largest diameter plus twice the radius extension; every step checks it
      collectively). `agents` are this rank's: anywhere in the box, none on some ranks if need be.
    */
    Proliferation( agents_type agents, const parallel::CartesianDecomposition<Scalar>& decomposition,
                   const MechanicsParameters<Scalar>& mechanics, const std::optional<GrowthParameters<Scalar>>& growth )
        : m_agents( std::move( agents ) )
        , m_box( decomposition.box() )
    {
        if ( decomposition.size() == 1 )
            m_single.emplace( m_box, mechanics );
        else
            m_peers = std::make_unique<parallel::detail::ProliferationPeers<Scalar, MemorySpace>>( decomposition,
                                                                                                 mechanics );
        if ( growth )
            m_growth.emplace( *growth );
    }
#endif

    Proliferation( Proliferation&& ) = default;
    Proliferation& operator=( Proliferation&& ) = default;
    Proliferation( const Proliferation& ) = delete;
    Proliferation& operator=( const Proliferation& ) = delete;

    //! Whether steps count the interacting pairs into their reports (costs one array and an atomic add);
    //! over several ranks this rank's owned agents' (each pair between ranks counted on both sides).
    void set_count_interactions( bool on )
    {
        m_count_interactions = on;
#if MORULA_HAVE_MPI
        if ( m_peers )
            m_peers->mechanics().set_count_interactions( on );
#endif
    }
    bool count_interactions() const { return m_count_interactions; }

    //! The phases of one step (core::ModelDriver::step() runs them; collective over several ranks); public
    //! for nvcc's device lambdas.
    template <class ExecutionSpace, class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, ProliferationReport& report )
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->step_phases( exec, phase, report, m_agents, m_growth );
#endif
        auto& mechanics = *m_single;
        report.divisions = 0;
        if ( m_growth )
            report.divisions = phase( Phase::division, [&] {
                return m_growth->step( exec, m_agents, static_cast<std::uint32_t>( report.step ) );
            } );
        m_last_divisions = report.divisions;
        report.sorted = mechanics.sort_due();
        phase( Phase::grid, [&] { mechanics.build_grid( exec, m_agents ); } );
        if ( report.sorted )
            phase( Phase::sort, [&] { mechanics.sort_agents( exec, m_agents ); } );
        report.interactions = phase( Phase::forces, [&] {
            return mechanics.compute_displacements( exec, m_agents, m_count_interactions );
        } );
        phase( Phase::move, [&] { mechanics.apply_displacements( exec, m_agents ); } );
    }

    //! This rank's agents: on several ranks, after a step, the owned ones first (num_owned()), then the
    //! ghosts of the last step.
    const agents_type& agents() const { return m_agents; }
    agents_type& agents() { return m_agents; }
    //! The whole box (on several ranks the decomposition's).
    const core::Box<Scalar>& box() const { return m_box; }
    /*!
      \brief The mechanics of this rank's agents: forces() and displacements() of the last step, the grid
      and the parameters. On several ranks those of the owned agents over this rank's local box
      (parallel::DistributedSphereMechanics::local_mechanics()).
    */
    const SphereMechanics<Scalar, MemorySpace>& mechanics() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->mechanics().local_mechanics();
#endif
        return *m_single;
    }
    const MechanicsParameters<Scalar>& parameters() const { return mechanics().parameters(); }
    //! The growth parameters, if agents grow and divide.
    std::optional<GrowthParameters<Scalar>> growth_parameters() const
    {
        return m_growth ? std::optional<GrowthParameters<Scalar>>( m_growth->parameters() ) : std::nullopt;
    }

    //! This rank's owned agents: all of them on one rank; before the first step on several, all given.
    std::size_t num_owned() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->owned( m_agents, this->steps_done() );
#endif
        return m_agents.size();
    }
    //! Agents over all ranks (collective).
    long long all_agents() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->all_agents( m_agents, this->steps_done() );
#endif
        return static_cast<long long>( m_agents.size() );
    }
    //! Divisions over all ranks in the last step.
    long long all_divisions() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->all_divisions();
#endif
        return m_last_divisions;
    }
    //! This rank and the number of ranks (0 and 1 on one rank).
    int rank() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->decomposition().rank();
#endif
        return 0;
    }
    int size() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->decomposition().size();
#endif
        return 1;
    }
#if MORULA_HAVE_MPI
    //! The ranks' communicator (MPI_COMM_SELF on one rank).
    MPI_Comm comm() const { return m_peers ? m_peers->comm() : MPI_COMM_SELF; }
    /*!
      \brief The mechanics over the ranks (halo, migration, their phases' counts), or nullptr on one rank.
    */
    const parallel::DistributedSphereMechanics<Scalar, MemorySpace>* distributed_mechanics() const
    {
        return m_peers ? &m_peers->mechanics() : nullptr;
    }
#endif

    /*!
      \brief Writes the whole state into `out`: the agents in memory order with their next id and
      capacity, the step count (the growth RNG's step), the grid's box, cell size and updates (the
      sort's phase), and the parameters, which a restart compares. Over several ranks collective: rank 0's
      `out` gets every rank's owned agents in rank order, in one rank's layout, and per rank what an exact
      restart on the same ranks needs; the other ranks' `out` stays empty.
    */
    void checkpoint( io::CheckpointWriter& out ) const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->checkpoint( out, m_agents, this->steps_done(), growth_parameters() );
#endif
        const auto& mechanics = *m_single;
        detail::put_proliferation_parameters( out, m_box, mechanics.parameters(), growth_parameters() );
        out.put_scalar( "step", this->steps_done() );
        detail::put_agents( out, detail::agents_to_host( m_agents, m_agents.size() ), m_agents.next_id(),
                            m_agents.capacity() );
        const auto st = mechanics.state();
        out.put_scalar( "mechanics/grid_builds", static_cast<std::int64_t>( st.grid_builds ) );
        if ( st.has_grid )
        {
            out.put( "mechanics/grid_lo", std::vector<Scalar>{ st.grid_box.lo[0], st.grid_box.lo[1], st.grid_box.lo[2] } );
            out.put( "mechanics/grid_hi", std::vector<Scalar>{ st.grid_box.hi[0], st.grid_box.hi[1], st.grid_box.hi[2] } );
            out.put_scalar( "mechanics/grid_cutoff", st.grid_cutoff );
        }
    }

    /*!
      \brief checkpoint() written to `path` (io::CheckpointWriter::write: a temporary file renamed when
      complete); over several ranks collective, written by rank 0.
      \throws core::IoError (on every rank) if it cannot be written
    */
    void write_checkpoint( const std::string& path ) const
    {
        io::CheckpointWriter out( checkpoint_model );
        checkpoint( out );
#if MORULA_HAVE_MPI
        if ( m_peers )
        {
            const int rank = m_peers->decomposition().rank();
            parallel::detail::agree_on_error( m_peers->comm(), [&] {
                if ( rank == 0 )
                    out.write( path );
            } );
            return;
        }
#endif
        out.write( path );
    }

    /*!
      \brief Continues from a checkpoint into this driver, made from the same parameters (its agents
      are replaced, whatever their number; over several ranks every rank reads the file). A checkpoint of
      the same rank count (and decomposition) continues exactly; one of another rank count starts over
      new grids (each rank keeping the agents it owns) and equals that run's continuation to round-off.
      \throws core::InputError naming the checkpoint file (on every rank alike) if its parameters differ
      from this driver's (naming the parameter and both values), it holds another precision, or it is
      inconsistent; the driver is then unchanged
    */
    void restart( const io::CheckpointReader& in )
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
        {
            auto [agents, step] = m_peers->restart( in, m_agents.label(), growth_parameters() );
            m_agents = std::move( agents );
            this->set_steps_done( step );
            return;
        }
#endif
        auto& mechanics = *m_single;
        detail::check_proliferation_parameters( in, m_box, mechanics.parameters(), growth_parameters() );
        const long long step = detail::get_proliferation_step( in );
        std::int64_t next_id = 0;
        std::size_t capacity = 0;
        const auto host = detail::get_agents<Scalar>( in, next_id, capacity );
        SphereMechanicsState<Scalar> st;
        if ( in.has( "mechanics/grid_builds" ) )
        {
            st.grid_builds = in.scalar<std::int64_t>( "mechanics/grid_builds" );
            st.has_grid = in.has( "mechanics/grid_lo" );
            st.grid_box = m_box;
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
            mechanics.restore( st );
        }
        catch ( const core::InputError& e )
        {
            in.fail( e.what() );
        }
        m_agents = std::move( agents );
        m_last_divisions = 0;
        this->set_steps_done( step );
    }

  private:
    agents_type m_agents;
    core::Box<Scalar> m_box;
    std::optional<SphereMechanics<Scalar, MemorySpace>> m_single; // one rank
#if MORULA_HAVE_MPI
    std::unique_ptr<parallel::detail::ProliferationPeers<Scalar, MemorySpace>> m_peers; // several ranks
#endif
    std::optional<GrowthDivision<Scalar, MemorySpace>> m_growth;
    bool m_count_interactions = false;
    long long m_last_divisions = 0;
};

} // namespace morula::mechanics

#endif
