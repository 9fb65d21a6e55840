/*!
  \file DistributedProliferation.hpp
  \brief Growth, division and sphere mechanics over MPI: mechanics::Proliferation on the agents of each
  rank's subdomain, with daughters given the ids a single rank would give them.
*/
#ifndef MORULA_PARALLEL_DISTRIBUTEDPROLIFERATION_HPP
#define MORULA_PARALLEL_DISTRIBUTEDPROLIFERATION_HPP

#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/Proliferation.hpp>
#include <morula/mechanics/ProliferationCheckpoint.hpp>
#include <morula/parallel/DistributedSphereMechanics.hpp>
#include <morula/parallel/detail/AgreeOnError.hpp>
#include <morula/parallel/detail/GatherToRoot.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace morula::parallel
{

//! The phases of DistributedProliferation::step(): DistributedMechanicsPhase's (division included), in
//! profiling regions and a timer of the driver's own.
struct DistributedProliferationPhase : DistributedMechanicsPhase
{
    static constexpr const char* scope = "morula::parallel::DistributedProliferation";
};

/*!
  \brief One step of growth, division and mechanics per call, on the agents of this rank's subdomain.

  A step is the single-rank Proliferation step: growth and division of the owned agents (the ghosts of
  the previous step are dropped first), then DistributedSphereMechanics::step, which migrates the
  owned agents and the new daughters to their owners, sorts them when due, builds the halo and moves the
  owned agents. Division is decided per agent (its diameter) with random numbers keyed by the mother's
  id and the step, and daughters get next_id + the rank of their mother's id among the mothers of all
  ranks (MPI_Allgatherv of the sorted ids), so ids, diameters and counts are those of a single rank
  exactly; positions agree to round-off (see DistributedSphereMechanics). With growth the halo is
  rebuilt every step (new agents need ghosts).

  The driver owns this rank's agents: before the first step they may be anywhere in the box (e.g. all
  of them on rank 0 and none elsewhere; the first step sends each to its owner), and the largest
  next_id() over the ranks is taken. After a step, agents() holds the owned agents first
  (num_owned() of them), then the ghosts.

  Checkpoints (write_checkpoint(), restart()) hold every rank's owned agents in one file, in the layout
  of a single rank's (mechanics/ProliferationCheckpoint.hpp), written by rank 0. A restart on the same
  ranks and decomposition continues the saved run exactly (each rank takes back its agents in their
  order and its grid); on another rank count, or from a single rank's checkpoint, each rank keeps the
  agents it owns and the continuation equals the saved run's to round-off.
*/
template <class Scalar, class MemorySpace>
class DistributedProliferation
    : public core::ModelDriver<DistributedProliferation<Scalar, MemorySpace>, DistributedProliferationPhase,
                               mechanics::ProliferationReport>
{
  public:
    using agents_type = mechanics::SphereAgents<Scalar, MemorySpace>;
    //! Its phases: those of the mechanics, and DistributedMechanicsPhase::division.
    using Phase = DistributedProliferationPhase;
    //! The model name of its checkpoints: that of mechanics::Proliferation, whose layout they share.
    static constexpr const char* checkpoint_model = mechanics::proliferation_checkpoint_model;

    DistributedProliferation( const CartesianDecomposition<Scalar>& decomposition, agents_type agents,
                              const mechanics::MechanicsParameters<Scalar>& mechanics,
                              const std::optional<mechanics::GrowthParameters<Scalar>>& growth )
        : m_agents( std::move( agents ) )
        , m_mechanics( decomposition, mechanics, 1 )
    {
        if ( growth )
            m_growth.emplace( *growth );
    }

    /*!
      \brief One step's phases (collective; core::ModelDriver::step() runs them). The report's divisions
      and interactions are this rank's; all_divisions() and all_agents() give the totals over the ranks. On
      a timed step each phase is fenced and timed, between barriers over the ranks, into times().
    */
    template <class ExecutionSpace, class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, mechanics::ProliferationReport& report )
    {
        compat::ScopedRegion region( "morula::parallel::DistributedProliferation::step" );
        if ( report.step == 0 )
            agree_on_next_id();
        if ( m_growth )
        {
            if ( report.step > 0 )
                m_agents.resize( m_mechanics.num_owned() ); // the ghosts must neither grow nor divide
            report.divisions = phase.synced(
                Phase::division,
                [&] {
                    exec.fence();
                    MPI_Barrier( m_mechanics.decomposition().comm() );
                },
                [&] { return divide( exec, report.step ); } );
            m_mechanics.owned_agents_changed();
        }
        report.sorted = m_mechanics.sort_due();
        report.interactions = m_mechanics.run_step( exec, m_agents, phase );
    }

    //! Whether steps count the interacting pairs: the report's `interactions` are then this rank's owned
    //! agents' (each pair between ranks counted on both), summing over the ranks to Proliferation's.
    void set_count_interactions( bool on ) { m_mechanics.set_count_interactions( on ); }
    bool count_interactions() const { return m_mechanics.count_interactions(); }

    //! This rank's agents: the owned ones first (num_owned()), then the ghosts of the last step.
    const agents_type& agents() const { return m_agents; }
    agents_type& agents() { return m_agents; }
    //! Agents over all ranks after the last step (collective).
    long long all_agents() const
    {
        long long mine = static_cast<long long>( m_mechanics.num_owned() ), all = 0;
        MPI_Allreduce( &mine, &all, 1, MPI_LONG_LONG, MPI_SUM, m_mechanics.decomposition().comm() );
        return all;
    }
    //! Divisions over all ranks in the last step.
    long long all_divisions() const { return m_last_all_divisions; }
    std::size_t num_owned() const { return m_mechanics.num_owned(); }
    const DistributedSphereMechanics<Scalar, MemorySpace>& mechanics() const { return m_mechanics; }

    //! The growth parameters, if agents grow and divide.
    std::optional<mechanics::GrowthParameters<Scalar>> growth_parameters() const
    {
        return m_growth ? std::optional<mechanics::GrowthParameters<Scalar>>( m_growth->parameters() )
                        : std::nullopt;
    }

    /*!
      \brief Collective: gathers the whole state into `out` on rank 0 of the decomposition's communicator
      (the other ranks' `out` stays empty): every rank's owned agents in rank order with the next id,
      the step count and the parameters, in a single rank's layout, and per rank what an exact restart
      on the same ranks needs (its number of owned agents, capacity, local grid and the sort's and
      migration's progress; see ProliferationCheckpoint.hpp).
    */
    void checkpoint( io::CheckpointWriter& out ) const
    {
        const MPI_Comm comm = m_mechanics.decomposition().comm();
        const int size = m_mechanics.decomposition().size();
        // Before the first step every agent given is this rank's; afterwards the owned ones lead.
        const std::size_t mine = this->steps_done() == 0 ? m_agents.size() : m_mechanics.num_owned();
        const auto host = mechanics::detail::agents_to_host( m_agents, mine );
        mechanics::HostAgents<Scalar> all;
        all.position = detail::gather_to_root( comm, host.position );
        all.diameter = detail::gather_to_root( comm, host.diameter );
        all.adherence = detail::gather_to_root( comm, host.adherence );
        all.density = detail::gather_to_root( comm, host.density );
        all.id = detail::gather_to_root( comm, host.id );
        const auto st = m_mechanics.state();
        const auto owned = detail::gather_to_root( comm, std::vector<std::int64_t>{ std::int64_t( mine ) } );
        const auto capacity =
            detail::gather_to_root( comm, std::vector<std::int64_t>{ std::int64_t( m_agents.capacity() ) } );
        const auto builds = detail::gather_to_root( comm, std::vector<std::int64_t>{ st.local.grid_builds } );
        const auto has_grid =
            detail::gather_to_root( comm, std::vector<std::uint8_t>{ std::uint8_t( st.local.has_grid ? 1 : 0 ) } );
        const auto& g = st.local.grid_box;
        const auto grid_lo = detail::gather_to_root( comm, std::vector<Scalar>{ g.lo[0], g.lo[1], g.lo[2] } );
        const auto grid_hi = detail::gather_to_root( comm, std::vector<Scalar>{ g.hi[0], g.hi[1], g.hi[2] } );
        const auto grid_cutoff = detail::gather_to_root( comm, std::vector<Scalar>{ st.local.grid_cutoff } );
        // Equal on every rank after the first step; before it the largest, which the first step takes.
        long long my_next = static_cast<long long>( m_agents.next_id() ), next_id = 0;
        MPI_Allreduce( &my_next, &next_id, 1, MPI_LONG_LONG, MPI_MAX, comm );
        if ( m_mechanics.decomposition().rank() != 0 )
            return;
        mechanics::detail::put_proliferation_parameters( out, m_mechanics.decomposition().box(),
                                                         m_mechanics.parameters(), growth_parameters() );
        out.put_scalar( "step", this->steps_done() );
        std::int64_t total_capacity = 0;
        for ( const auto c : capacity )
            total_capacity += c;
        mechanics::detail::put_agents( out, all, static_cast<std::int64_t>( next_id ),
                                       static_cast<std::size_t>( total_capacity ) );
        const auto dims = m_mechanics.decomposition().dims();
        const std::size_t ranks = static_cast<std::size_t>( size );
        out.put_scalar( "distributed/ranks", static_cast<std::int32_t>( size ) );
        out.put( "distributed/dims", std::vector<std::int32_t>{ dims[0], dims[1], dims[2] } );
        out.put( "distributed/owned", owned );
        out.put( "distributed/capacity", capacity );
        out.put( "distributed/grid_builds", builds );
        out.put( "distributed/has_grid", has_grid );
        out.put( "distributed/grid_lo", grid_lo, { ranks, 3 } );
        out.put( "distributed/grid_hi", grid_hi, { ranks, 3 } );
        out.put( "distributed/grid_cutoff", grid_cutoff );
        // The same on every rank: the ranks step together.
        out.put_scalar( "distributed/steps_since_sort", static_cast<std::int32_t>( st.steps_since_sort ) );
        out.put_scalar( "distributed/sorted_once", static_cast<std::uint8_t>( st.sorted_once ? 1 : 0 ) );
        out.put_scalar( "distributed/migrated_once", static_cast<std::uint8_t>( st.migrated_once ? 1 : 0 ) );
    }

    /*!
      \brief Collective: checkpoint(), written by rank 0 to `path` (io::CheckpointWriter::write: a
      temporary file renamed when complete).
      \throws core::IoError on every rank if rank 0 cannot write it
    */
    void write_checkpoint( const std::string& path ) const
    {
        io::CheckpointWriter out( checkpoint_model );
        checkpoint( out );
        const MPI_Comm comm = m_mechanics.decomposition().comm();
        int rank = 0;
        MPI_Comm_rank( comm, &rank );
        detail::agree_on_error( comm, [&] {
            if ( rank == 0 )
                out.write( path );
        } );
    }

    /*!
      \brief Continues from a checkpoint (every rank reads it) into this driver, made from the same
      parameters on any number of ranks; its agents are replaced. From a checkpoint of the same ranks and
      decomposition each rank takes back its agents, in their order, and its grid: the run continues
      exactly. Otherwise (another rank count, or a single rank's checkpoint) each rank keeps the agents
      it owns, in the file's order, and the next step migrates and sorts them as at a rebuild: equal to
      the saved run to round-off. Collective only in that every rank must call it.
      \throws core::InputError naming the checkpoint file (on every rank alike) if its parameters differ
      from this driver's (naming the parameter and both values), it holds another precision, or it is
      inconsistent; the driver is then unchanged
    */
    void restart( const io::CheckpointReader& in )
    {
        const auto& dec = m_mechanics.decomposition();
        mechanics::detail::check_proliferation_parameters( in, dec.box(), m_mechanics.parameters(),
                                                           growth_parameters() );
        const long long step = mechanics::detail::get_proliferation_step( in );
        std::int64_t next_id = 0;
        std::size_t capacity = 0;
        const auto all = mechanics::detail::get_agents<Scalar>( in, next_id, capacity );
        const int size = dec.size(), rank = dec.rank();
        const auto dims = dec.dims();
        bool same_ranks = in.has( "distributed/ranks" ) && in.scalar<std::int32_t>( "distributed/ranks" ) == size;
        if ( same_ranks )
        {
            mechanics::detail::expect_shape( in, "distributed/dims", { 3 } );
            const auto saved = in.get<std::int32_t>( "distributed/dims" );
            same_ranks = saved[0] == dims[0] && saved[1] == dims[1] && saved[2] == dims[2];
        }
        mechanics::HostAgents<Scalar> mine;
        DistributedMechanicsState<Scalar> st;
        st.local.grid_box = m_mechanics.local_mechanics().box();
        if ( same_ranks )
        {
            const std::size_t ranks = static_cast<std::size_t>( size );
            for ( const char* name : { "distributed/owned", "distributed/capacity", "distributed/grid_builds",
                                       "distributed/has_grid", "distributed/grid_cutoff" } )
                mechanics::detail::expect_shape( in, name, { ranks } );
            mechanics::detail::expect_shape( in, "distributed/grid_lo", { ranks, 3 } );
            mechanics::detail::expect_shape( in, "distributed/grid_hi", { ranks, 3 } );
            const auto owned = in.get<std::int64_t>( "distributed/owned" );
            std::int64_t first = 0, total = 0;
            for ( int r = 0; r < size; ++r )
            {
                if ( owned[r] < 0 )
                    in.fail( core::detail::concat( "distributed/owned holds ", owned[r], " agents for rank ", r ) );
                first += r < rank ? owned[r] : 0;
                total += owned[r];
            }
            if ( total != static_cast<std::int64_t>( all.size() ) )
                in.fail( core::detail::concat( "distributed/owned counts ", total, " agents but the checkpoint holds ",
                                               all.size() ) );
            for ( std::int64_t i = first; i < first + owned[rank]; ++i )
                mine.push_back( all, static_cast<std::size_t>( i ) );
            capacity = static_cast<std::size_t>( std::max<std::int64_t>( 0, in.get<std::int64_t>( "distributed/capacity" )[rank] ) );
            st.local.grid_builds = in.get<std::int64_t>( "distributed/grid_builds" )[rank];
            st.local.has_grid = in.get<std::uint8_t>( "distributed/has_grid" )[rank] != 0;
            const auto lo = in.get<Scalar>( "distributed/grid_lo" );
            const auto hi = in.get<Scalar>( "distributed/grid_hi" );
            for ( int d = 0; d < 3; ++d )
            {
                st.local.grid_box.lo[d] = lo[3 * rank + d];
                st.local.grid_box.hi[d] = hi[3 * rank + d];
            }
            st.local.grid_cutoff = in.get<Scalar>( "distributed/grid_cutoff" )[rank];
            st.steps_since_sort = in.scalar<std::int32_t>( "distributed/steps_since_sort" );
            st.sorted_once = in.scalar<std::uint8_t>( "distributed/sorted_once" ) != 0;
            st.migrated_once = in.scalar<std::uint8_t>( "distributed/migrated_once" ) != 0;
        }
        else
        {
            // Each rank keeps what it owns; the first step migrates (wrapping periodic axes) and sorts
            // when the saved run would have: it sorted at the same steps (every sort_every-th, the first
            // included), one grid update a step.
            const auto& owner = dec.owner();
            for ( std::size_t i = 0; i < all.size(); ++i )
                if ( owner( all.position[3 * i], all.position[3 * i + 1], all.position[3 * i + 2] ) == rank )
                    mine.push_back( all, i );
            capacity = mine.size();
            st.local.grid_builds = step;
            mechanics::detail::sort_progress( step, m_mechanics.parameters().sort_every, st.steps_since_sort,
                                              st.sorted_once );
            st.migrated_once = false;
        }
        auto agents = mechanics::detail::agents_from_host<Scalar, MemorySpace>( m_agents.label(), mine, capacity,
                                                                                next_id );
        try
        {
            m_mechanics.restore( mine.size(), st );
        }
        catch ( const core::InputError& e )
        {
            in.fail( e.what() );
        }
        m_agents = std::move( agents );
        this->set_steps_done( step );
        m_last_all_divisions = 0;
    }

    //! Growth and division of the owned agents; returns this rank's divisions. Public for nvcc, which
    //! rejects extended lambdas in private member functions (and their callees).
    template <class ExecutionSpace>
    int divide( const ExecutionSpace& exec, long long step )
    {
        return m_growth->step( exec, m_agents, static_cast<std::uint32_t>( step ),
                               [&]( const auto& mine ) { return all_mothers( exec, mine ); } );
    }

    // Public because nvcc rejects extended lambdas in private member functions.
    //! The sorted ids of the dividing mothers of all ranks, given this rank's (sorted).
    template <class ExecutionSpace, class View>
    Kokkos::View<const std::int64_t*, MemorySpace> all_mothers( const ExecutionSpace& exec, const View& mine )
    {
        const MPI_Comm comm = m_mechanics.decomposition().comm();
        int size = 1;
        MPI_Comm_size( comm, &size );
        const int count = static_cast<int>( mine.extent( 0 ) );
        std::vector<int> counts( size ), displs( size, 0 );
        MPI_Allgather( &count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm );
        long long total = 0;
        for ( int r = 0; r < size; ++r )
        {
            displs[r] = static_cast<int>( total );
            total += counts[r];
        }
        if ( total > INT_MAX )
            throw core::CapacityError( core::detail::concat( "DistributedProliferation: ", total,
                                                             " divisions in one step exceed MPI's int counts" ) );
        m_last_all_divisions = total;
        auto h_mine = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), mine );
        std::vector<std::int64_t> all( static_cast<std::size_t>( total ) );
        MPI_Allgatherv( h_mine.data(), count, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T, comm );
        std::sort( all.begin(), all.end() ); // each rank's part is sorted; a merge would do, this is simpler
        // Grows only: no device allocation in the steps that divide no more cells than an earlier one.
        if ( m_all_mothers.extent( 0 ) < all.size() )
            m_all_mothers = Kokkos::View<std::int64_t*, MemorySpace>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::all_mothers" ),
                all.size() + all.size() / 2 );
        const auto d = Kokkos::subview( m_all_mothers, std::make_pair( std::size_t( 0 ), all.size() ) );
        Kokkos::deep_copy( exec, d, Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                        all.data(), all.size() ) );
        exec.fence();
        return d;
    }

  private:
    void agree_on_next_id()
    {
        long long mine = static_cast<long long>( m_agents.next_id() ), all = 0;
        MPI_Allreduce( &mine, &all, 1, MPI_LONG_LONG, MPI_MAX, m_mechanics.decomposition().comm() );
        m_agents.set_next_id( static_cast<std::int64_t>( all ) );
    }

    agents_type m_agents;
    DistributedSphereMechanics<Scalar, MemorySpace> m_mechanics;
    std::optional<mechanics::GrowthDivision<Scalar, MemorySpace>> m_growth;
    long long m_last_all_divisions = 0;
    Kokkos::View<std::int64_t*, MemorySpace> m_all_mothers; // the sorted mothers of all ranks
};

} // namespace morula::parallel

#endif
