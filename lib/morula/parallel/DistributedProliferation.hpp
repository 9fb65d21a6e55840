/*!
  \file DistributedProliferation.hpp
  \brief Growth, division and sphere mechanics over MPI: mechanics::Proliferation on the agents of each
  rank's subdomain, with daughters given the ids a single rank would give them.
*/
#ifndef MORULA_PARALLEL_DISTRIBUTEDPROLIFERATION_HPP
#define MORULA_PARALLEL_DISTRIBUTEDPROLIFERATION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/Proliferation.hpp>
#include <morula/parallel/DistributedSphereMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace morula::parallel
{

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
*/
template <class Scalar, class MemorySpace>
class DistributedProliferation
{
  public:
    using agents_type = mechanics::SphereAgents<Scalar, MemorySpace>;
    //! Its phases: those of the mechanics, and DistributedMechanicsPhase::division.
    using Phase = DistributedMechanicsPhase;

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
      \brief One step (collective). The report's divisions are this rank's; all_divisions() and
      all_agents() give the totals over the ranks. With `timed` each phase is fenced and timed, between
      barriers over the ranks, into times().
    */
    template <class ExecutionSpace>
    mechanics::ProliferationReport step( const ExecutionSpace& exec, bool timed = false )
    {
        compat::ScopedRegion region( "morula::parallel::DistributedProliferation::step" );
        mechanics::ProliferationReport report;
        report.step = m_step;
        if ( m_step == 0 )
            agree_on_next_id();
        if ( m_growth )
        {
            if ( m_step > 0 )
                m_agents.resize( m_mechanics.num_owned() ); // the ghosts must neither grow nor divide
            report.divisions = m_mechanics.times().run_synced(
                timed, Phase::division,
                [&] {
                    exec.fence();
                    MPI_Barrier( m_mechanics.decomposition().comm() );
                },
                [&] { return divide( exec ); } );
            m_mechanics.owned_agents_changed();
        }
        m_mechanics.step( exec, m_agents, timed );
        ++m_step;
        return report;
    }

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
    long long steps_done() const { return m_step; }
    //! Seconds per DistributedMechanicsPhase (division included) and the counts of the timed steps.
    const core::PhaseTimer& times() const { return m_mechanics.times(); }
    void reset_times() { m_mechanics.reset_times(); }
    const DistributedSphereMechanics<Scalar, MemorySpace>& mechanics() const { return m_mechanics; }

    //! Growth and division of the owned agents; returns this rank's divisions. Public for nvcc, which
    //! rejects extended lambdas in private member functions (and their callees).
    template <class ExecutionSpace>
    int divide( const ExecutionSpace& exec )
    {
        return m_growth->step( exec, m_agents, static_cast<std::uint32_t>( m_step ),
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
    long long m_step = 0;
    long long m_last_all_divisions = 0;
    Kokkos::View<std::int64_t*, MemorySpace> m_all_mothers; // the sorted mothers of all ranks
};

} // namespace morula::parallel

#endif
