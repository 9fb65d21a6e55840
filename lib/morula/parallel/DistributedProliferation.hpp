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
#include <chrono>
#include <climits>
#include <cstdint>
#include <optional>
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

  Before the first step, `agents` holds this rank's agents, anywhere in the box (e.g. all of them on
  rank 0 and none elsewhere), and every rank the same next_id() (the largest over the ranks is taken).
*/
template <class Scalar, class MemorySpace>
class DistributedProliferation
{
  public:
    using agents_type = mechanics::SphereAgents<Scalar, MemorySpace>;

    DistributedProliferation( const CartesianDecomposition<Scalar>& decomposition,
                              const mechanics::MechanicsParameters<Scalar>& mechanics,
                              const std::optional<mechanics::GrowthParameters<Scalar>>& growth )
        : m_mechanics( decomposition, mechanics, 1 )
    {
        if ( growth )
            m_growth.emplace( *growth );
    }

    /*!
      \brief One step (collective). The report's divisions are this rank's; all_divisions() and
      all_agents() give the totals over the ranks. With time_operations each phase is fenced and timed
      (division into times().division, the rest into mechanics().times()).
    */
    template <class ExecutionSpace>
    mechanics::StepReport step( const ExecutionSpace& exec, agents_type& agents, bool time_operations = false )
    {
        compat::ScopedRegion region( "morula::parallel::DistributedProliferation::step" );
        mechanics::StepReport report;
        if ( m_step == 0 )
            agree_on_next_id( agents );
        if ( m_growth )
        {
            if ( m_step > 0 )
                agents.resize( m_mechanics.num_owned() ); // the ghosts must neither grow nor divide
            if ( time_operations )
                exec.fence();
            const auto t0 = std::chrono::steady_clock::now();
            report.divisions = m_growth->step( exec, agents, static_cast<std::uint32_t>( m_step ),
                                               [&]( const auto& mine ) { return all_mothers( exec, mine ); } );
            if ( time_operations )
            {
                exec.fence();
                m_division_seconds += std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
            }
            m_mechanics.owned_agents_changed();
        }
        m_mechanics.step( exec, agents, time_operations );
        ++m_step;
        return report;
    }

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
    long long step_index() const { return m_step; }
    //! Seconds of growth and division (timed steps), the rest being in mechanics().times().
    double division_seconds() const { return m_division_seconds; }
    const DistributedSphereMechanics<Scalar, MemorySpace>& mechanics() const { return m_mechanics; }
    void reset_times()
    {
        m_division_seconds = 0;
        m_mechanics.reset_times();
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
    void agree_on_next_id( agents_type& agents ) const
    {
        long long mine = static_cast<long long>( agents.next_id() ), all = 0;
        MPI_Allreduce( &mine, &all, 1, MPI_LONG_LONG, MPI_MAX, m_mechanics.decomposition().comm() );
        agents.set_next_id( static_cast<std::int64_t>( all ) );
    }

    DistributedSphereMechanics<Scalar, MemorySpace> m_mechanics;
    std::optional<mechanics::GrowthDivision<Scalar, MemorySpace>> m_growth;
    long long m_step = 0;
    long long m_last_all_divisions = 0;
    double m_division_seconds = 0;
    Kokkos::View<std::int64_t*, MemorySpace> m_all_mothers; // the sorted mothers of all ranks
};

} // namespace morula::parallel

#endif
