/*!
  \file ProliferationPeers.hpp
  \brief What mechanics::Proliferation adds on several ranks: the distributed mechanics (migration, halo,
  forces with ghosts), division with the ids one rank would give, and checkpoints gathered to rank 0.
*/
#ifndef MORULA_PARALLEL_DETAIL_PROLIFERATIONPEERS_HPP
#define MORULA_PARALLEL_DETAIL_PROLIFERATIONPEERS_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/ProliferationCheckpoint.hpp>
#include <morula/mechanics/ProliferationPhase.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>
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

namespace morula::parallel::detail
{

/*!
  \brief The part of mechanics::Proliferation that runs over the ranks of a CartesianDecomposition (two
  ranks or more; one rank takes the single-rank path).

  A step is the single-rank step: growth and division of the owned agents (the ghosts of the previous
  step are dropped first), then DistributedSphereMechanics::run_step, which migrates the owned agents and
  the new daughters to their owners, sorts them when due, builds the halo and moves the owned agents.
  Division is decided per agent (its diameter) with random numbers keyed by the mother's id and the
  step, and daughters get next_id + the rank of their mother's id among the mothers of all ranks
  (MPI_Allgatherv of the sorted ids), so ids, diameters and counts are those of a single rank exactly;
  positions agree to round-off (see DistributedSphereMechanics). With growth the halo is rebuilt every
  step (new agents need ghosts).
*/
template <class Scalar, class MemorySpace>
class ProliferationPeers
{
  public:
    using agents_type = mechanics::SphereAgents<Scalar, MemorySpace>;
    using growth_type = std::optional<mechanics::GrowthDivision<Scalar, MemorySpace>>;
    using Phase = mechanics::ProliferationPhase;

    ProliferationPeers( const CartesianDecomposition<Scalar>& decomposition,
                        const mechanics::MechanicsParameters<Scalar>& params )
        : m_mechanics( decomposition, params, 1 )
    {
    }

    const DistributedSphereMechanics<Scalar, MemorySpace>& mechanics() const { return m_mechanics; }
    DistributedSphereMechanics<Scalar, MemorySpace>& mechanics() { return m_mechanics; }
    const CartesianDecomposition<Scalar>& decomposition() const { return m_mechanics.decomposition(); }
    MPI_Comm comm() const { return decomposition().comm(); }

    //! One step's phases (collective); the report's divisions and interactions are this rank's.
    template <class ExecutionSpace, class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, mechanics::ProliferationReport& report,
                      agents_type& agents, growth_type& growth )
    {
        if ( report.step == 0 )
            agree_on_next_id( agents );
        if ( growth )
        {
            if ( report.step > 0 )
                agents.resize( m_mechanics.num_owned() ); // the ghosts must neither grow nor divide
            report.divisions = phase.synced(
                Phase::division,
                [&] {
                    exec.fence();
                    MPI_Barrier( comm() );
                },
                [&] { return divide( exec, agents, *growth, report.step ); } );
            m_mechanics.owned_agents_changed();
        }
        else
            m_last_all_divisions = 0;
        report.sorted = m_mechanics.sort_due();
        report.interactions = m_mechanics.run_step( exec, agents, phase );
    }

    //! Owned agents over all ranks (collective); before the first step, all the agents given.
    long long all_agents( const agents_type& agents, long long steps_done ) const
    {
        long long mine = static_cast<long long>( owned( agents, steps_done ) ), all = 0;
        MPI_Allreduce( &mine, &all, 1, MPI_LONG_LONG, MPI_SUM, comm() );
        return all;
    }
    long long all_divisions() const { return m_last_all_divisions; }
    //! This rank's owned agents: before the first step every agent given is this rank's.
    std::size_t owned( const agents_type& agents, long long steps_done ) const
    {
        return steps_done == 0 ? agents.size() : m_mechanics.num_owned();
    }

    /*!
      \brief Collective: gathers the whole state into `out` on rank 0 (the other ranks' `out` stays
      empty): every rank's owned agents in rank order with the next id, the step count and the
      parameters, in a single rank's layout, and per rank what an exact restart on the same ranks needs
      (its number of owned agents, capacity, local grid and the sort's and migration's progress; see
      mechanics/ProliferationCheckpoint.hpp).
    */
    void checkpoint( io::CheckpointWriter& out, const agents_type& agents, long long steps_done,
                     const std::optional<mechanics::GrowthParameters<Scalar>>& growth ) const
    {
        const MPI_Comm c = comm();
        const int size = decomposition().size();
        const std::size_t mine = owned( agents, steps_done );
        const auto host = mechanics::detail::agents_to_host( agents, mine );
        mechanics::HostAgents<Scalar> all;
        all.position = gather_to_root( c, host.position );
        all.diameter = gather_to_root( c, host.diameter );
        all.adherence = gather_to_root( c, host.adherence );
        all.density = gather_to_root( c, host.density );
        all.id = gather_to_root( c, host.id );
        const auto st = m_mechanics.state();
        const auto owned = gather_to_root( c, std::vector<std::int64_t>{ std::int64_t( mine ) } );
        const auto capacity = gather_to_root( c, std::vector<std::int64_t>{ std::int64_t( agents.capacity() ) } );
        const auto builds = gather_to_root( c, std::vector<std::int64_t>{ st.local.grid_builds } );
        const auto has_grid = gather_to_root( c, std::vector<std::uint8_t>{ std::uint8_t( st.local.has_grid ? 1 : 0 ) } );
        const auto& g = st.local.grid_box;
        const auto grid_lo = gather_to_root( c, std::vector<Scalar>{ g.lo[0], g.lo[1], g.lo[2] } );
        const auto grid_hi = gather_to_root( c, std::vector<Scalar>{ g.hi[0], g.hi[1], g.hi[2] } );
        const auto grid_cutoff = gather_to_root( c, std::vector<Scalar>{ st.local.grid_cutoff } );
        // Equal on every rank after the first step; before it the largest, which the first step takes.
        long long my_next = static_cast<long long>( agents.next_id() ), next_id = 0;
        MPI_Allreduce( &my_next, &next_id, 1, MPI_LONG_LONG, MPI_MAX, c );
        if ( decomposition().rank() != 0 )
            return;
        mechanics::detail::put_proliferation_parameters( out, decomposition().box(), m_mechanics.parameters(), growth );
        out.put_scalar( "step", steps_done );
        std::int64_t total_capacity = 0;
        for ( const auto n : capacity )
            total_capacity += n;
        mechanics::detail::put_agents( out, all, static_cast<std::int64_t>( next_id ),
                                       static_cast<std::size_t>( total_capacity ) );
        const auto dims = decomposition().dims();
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
      \brief This rank's part of a checkpoint (every rank reads it): from one of the same ranks and
      decomposition its agents, in their order, and its grid (the run continues exactly); otherwise
      (another rank count, or a single rank's checkpoint) the agents it owns, in the file's order, which
      the next step migrates and sorts as at a rebuild (equal to the saved run to round-off). Returns
      the agents and the step; `label` names their Views.
      \throws core::InputError naming the checkpoint file (on every rank alike) if its parameters differ
      from this driver's, it holds another precision, or it is inconsistent; nothing is changed then
    */
    std::pair<agents_type, long long> restart( const io::CheckpointReader& in, const std::string& label,
                                               const std::optional<mechanics::GrowthParameters<Scalar>>& growth )
    {
        const auto& dec = decomposition();
        mechanics::detail::check_proliferation_parameters( in, dec.box(), m_mechanics.parameters(), growth );
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
            capacity = static_cast<std::size_t>(
                std::max<std::int64_t>( 0, in.get<std::int64_t>( "distributed/capacity" )[rank] ) );
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
        auto agents = mechanics::detail::agents_from_host<Scalar, MemorySpace>( label, mine, capacity, next_id );
        try
        {
            m_mechanics.restore( mine.size(), st );
        }
        catch ( const core::InputError& e )
        {
            in.fail( e.what() );
        }
        m_last_all_divisions = 0;
        return { std::move( agents ), step };
    }

    // Public because nvcc rejects extended lambdas in private member functions (and their callees).
    //! Growth and division of the owned agents; returns this rank's divisions.
    template <class ExecutionSpace>
    int divide( const ExecutionSpace& exec, agents_type& agents, mechanics::GrowthDivision<Scalar, MemorySpace>& growth,
                long long step )
    {
        return growth.step( exec, agents, static_cast<std::uint32_t>( step ),
                            [&]( const auto& mine ) { return all_mothers( exec, mine ); } );
    }

    //! The sorted ids of the dividing mothers of all ranks, given this rank's (sorted).
    template <class ExecutionSpace, class View>
    Kokkos::View<const std::int64_t*, MemorySpace> all_mothers( const ExecutionSpace& exec, const View& mine )
    {
        const MPI_Comm c = comm();
        int size = 1;
        MPI_Comm_size( c, &size );
        const int count = static_cast<int>( mine.extent( 0 ) );
        std::vector<int> counts( size ), displs( size, 0 );
        MPI_Allgather( &count, 1, MPI_INT, counts.data(), 1, MPI_INT, c );
        long long total = 0;
        for ( int r = 0; r < size; ++r )
        {
            displs[r] = static_cast<int>( total );
            total += counts[r];
        }
        if ( total > INT_MAX )
            throw core::CapacityError( core::detail::concat( "mechanics::Proliferation: ", total,
                                                             " divisions in one step exceed MPI's int counts" ) );
        m_last_all_divisions = total;
        auto h_mine = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), mine );
        std::vector<std::int64_t> all( static_cast<std::size_t>( total ) );
        MPI_Allgatherv( h_mine.data(), count, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T, c );
        std::sort( all.begin(), all.end() ); // each rank's part is sorted; a merge would do, this is simpler
        // Grows only: no device allocation in the steps that divide no more cells than an earlier one.
        if ( m_all_mothers.extent( 0 ) < all.size() )
            m_all_mothers = Kokkos::View<std::int64_t*, MemorySpace>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::all_mothers" ),
                all.size() + all.size() / 2 );
        const auto d = Kokkos::subview( m_all_mothers, std::make_pair( std::size_t( 0 ), all.size() ) );
        Kokkos::deep_copy( exec, d,
                           Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                               all.data(), all.size() ) );
        exec.fence();
        return d;
    }

  private:
    void agree_on_next_id( agents_type& agents ) const
    {
        long long mine = static_cast<long long>( agents.next_id() ), all = 0;
        MPI_Allreduce( &mine, &all, 1, MPI_LONG_LONG, MPI_MAX, comm() );
        agents.set_next_id( static_cast<std::int64_t>( all ) );
    }

    DistributedSphereMechanics<Scalar, MemorySpace> m_mechanics;
    long long m_last_all_divisions = 0;
    Kokkos::View<std::int64_t*, MemorySpace> m_all_mothers; // the sorted mothers of all ranks
};

} // namespace morula::parallel::detail

#endif
