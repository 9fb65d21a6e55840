/*!
  \file GrowthDivision.hpp
  \brief Growth and division of spherical agents on the device (BioDynaMo's GrowthDivision behaviour).
*/
#ifndef MORULA_MECHANICS_GROWTHDIVISION_HPP
#define MORULA_MECHANICS_GROWTHDIVISION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/mechanics/SphereAgents.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace morula::mechanics
{

/*!
  \brief Parameters of growth and division, with the values of BioDynaMo's cell-division benchmark
  (GrowthDivision(30.05, 5000), diameter 30): a cell no larger than division_diameter grows its volume
  by growth_rate x time_step; a larger one divides.
*/
template <class Scalar>
struct GrowthParameters
{
    Scalar division_diameter = Scalar( 30.05 );
    Scalar growth_rate = Scalar( 5000 ); //!< volume per unit time
    Scalar time_step = Scalar( 0.01 );
    std::uint64_t seed = 1; //!< of the hashed RNG that draws volume ratios and division axes

    void validate( const std::string& where ) const
    {
        auto finite = []( Scalar v ) { return std::isfinite( static_cast<double>( v ) ); };
        if ( !finite( division_diameter ) || !( division_diameter > 0 ) )
            throw core::InputError( core::detail::concat( where, ": division_diameter = ",
                                                          division_diameter,
                                                          " (expected a finite value > 0)" ) );
        if ( !finite( growth_rate ) || !( growth_rate >= 0 ) )
            throw core::InputError( core::detail::concat(
                where, ": growth_rate = ", growth_rate, " (expected a finite value >= 0)" ) );
        if ( !finite( time_step ) || !( time_step > 0 ) )
            throw core::InputError( core::detail::concat(
                where, ": time_step = ", time_step, " (expected a finite value > 0)" ) );
    }
};

/*!
  \brief The division of one cell: the mother keeps a share of the volume and moves back along the
  axis, the daughter takes the rest and moves forward, so that volume and centre of mass are kept.

  As BioDynaMo's Cell::Divide: volume_ratio = V_daughter / V_mother is uniform in [0.9, 1.1]; the
  centres move apart by a quarter of the mother's radius along the axis, each inversely to its volume.
  The axis is uniform on the sphere (BioDynaMo draws its two angles uniformly, which is not).
*/
template <class Scalar>
struct Division
{
    Scalar mother_diameter;
    Scalar daughter_diameter;
    Scalar mother_shift[3];   //!< added to the mother's position
    Scalar daughter_shift[3]; //!< daughter position = mother's old position + this

    KOKKOS_INLINE_FUNCTION static Division make( Scalar diameter, Scalar volume_ratio,
                                                 const Scalar axis[3] )
    {
        Division v{};
        const Scalar radius = Scalar( 0.5 ) * diameter;
        // r^3 = r1^3 + r2^3 and r2^3 / r1^3 = volume_ratio.
        const Scalar r1 = radius / compat::cbrt( Scalar( 1 ) + volume_ratio );
        const Scalar r2 = radius / compat::cbrt( Scalar( 1 ) + Scalar( 1 ) / volume_ratio );
        const Scalar separation = Scalar( 0.25 ) * radius;
        const Scalar d_daughter = separation / ( volume_ratio + Scalar( 1 ) );
        const Scalar d_mother = separation - d_daughter;
        v.mother_diameter = Scalar( 2 ) * r1;
        v.daughter_diameter = Scalar( 2 ) * r2;
        for ( int d = 0; d < 3; ++d )
        {
            v.mother_shift[d] = -d_mother * axis[d];
            v.daughter_shift[d] = d_daughter * axis[d];
        }
        return v;
    }
};

/*!
  \brief Grows and divides agents on the device; new agents are appended through a prefix sum.

  Deterministic whatever the order of agents in memory: the random numbers of a division are keyed by
  the mother's id and the step, and the daughters are appended (and given ids next_id(), ...) in the
  order of their mothers' ids.
*/
template <class Scalar, class MemorySpace>
class GrowthDivision
{
  public:
    using agents_type = SphereAgents<Scalar, MemorySpace>;

    explicit GrowthDivision( const GrowthParameters<Scalar>& params )
        : m_params( params )
    {
        params.validate( "GrowthDivision" );
    }

    const GrowthParameters<Scalar>& parameters() const { return m_params; }

    /*!
      \brief One step: every agent no larger than the division diameter grows, every larger one
      divides. The agents' capacity grows as needed, keeping every entry.
      \return the number of divisions (= agents added)
    */
    template <class ExecutionSpace>
    int step( const ExecutionSpace& exec, agents_type& agents, std::uint32_t step_index )
    {
        return step( exec, agents, step_index, []( const auto& local_sorted_ids ) { return local_sorted_ids; } );
    }

    /*!
      \brief The same step for agents spread over several ranks (Proliferation over a decomposition).
      `all_mothers(local)` gets this rank's dividing mothers' ids, sorted, in a View of MemorySpace,
      and returns the sorted ids of the mothers of every rank (collective); a daughter's id is
      next_id() + the rank of its mother's id in that list, so ids are those of a single rank. Every
      rank must hold the same next_id(); it advances by the number of all divisions.
      \return the number of divisions on this rank
    */
    template <class ExecutionSpace, class AllMothers>
    int step( const ExecutionSpace& exec, agents_type& agents, std::uint32_t step_index, AllMothers&& all_mothers );

  private:
    GrowthParameters<Scalar> m_params;
    Kokkos::View<std::int64_t*, MemorySpace> m_mother_ids;
    Kokkos::View<int*, MemorySpace> m_mother_slots;
    Kokkos::View<std::int64_t*, MemorySpace> m_sorted_ids;
};

namespace detail
{
// Number of agents larger than the division diameter.
template <class ExecutionSpace, class Scalar, class MemorySpace>
int count_dividers( const ExecutionSpace& exec, const SphereAgents<Scalar, MemorySpace>& a,
                    const GrowthParameters<Scalar>& p )
{
    const auto diameter = a.diameters();
    const Scalar threshold = p.division_diameter;
    int count = 0;
    Kokkos::parallel_reduce(
        "morula::mechanics::count_dividers",
        core::LaunchRange<ExecutionSpace>( exec, 0, static_cast<int>( a.size() ) ),
        KOKKOS_LAMBDA( const int i, int& c ) { c += diameter( i ) > threshold ? 1 : 0; }, count );
    return count;
}

// Lists the agents that divide (slot and id, in memory order) and grows the others.
template <class ExecutionSpace, class Scalar, class MemorySpace, class IdView, class SlotView>
void grow_and_list_dividers( const ExecutionSpace& exec, const SphereAgents<Scalar, MemorySpace>& a,
                             const GrowthParameters<Scalar>& p, const IdView& mother_ids,
                             const SlotView& mother_slots )
{
    const auto diameter = a.diameters();
    const auto id = a.ids();
    const Scalar threshold = p.division_diameter;
    const Scalar dv = p.growth_rate * p.time_step;
    Kokkos::parallel_scan(
        "morula::mechanics::grow_and_list_dividers",
        core::LaunchRange<ExecutionSpace>( exec, 0, static_cast<int>( a.size() ) ),
        KOKKOS_LAMBDA( const int i, int& offset, const bool final_pass ) {
            const Scalar d = diameter( i );
            const bool divides = d > threshold;
            if ( final_pass )
            {
                if ( divides )
                {
                    mother_ids( offset ) = id( i );
                    mother_slots( offset ) = i;
                }
                else if ( dv > Scalar( 0 ) ) // d = cbrt(6 V / pi)
                    diameter( i ) = compat::cbrt( ( sphere_volume( d ) + dv ) *
                                                  Scalar( 1.9098593171027440292266051604702 ) );
            }
            offset += divides ? 1 : 0;
        } );
}

// Rank of `id` in the sorted, unique ids[0, n), which hold it: binary search.
template <class SortedView>
KOKKOS_INLINE_FUNCTION int rank_in_sorted( const SortedView& ids, int n, std::int64_t id )
{
    int lo = 0, hi = n;
    while ( hi - lo > 1 )
    {
        const int mid = ( lo + hi ) / 2;
        if ( ids( mid ) <= id ) lo = mid;
        else hi = mid;
    }
    return lo;
}

// Appends the daughters: mother k of the id-sorted list gets daughter slot n + k and id next_id + the
// rank of its id among all mothers (all_sorted_ids: on one rank, the same list).
template <class ExecutionSpace, class Scalar, class MemorySpace, class SortedView, class AllSortedView,
          class IdView, class SlotView>
void divide( const ExecutionSpace& exec, const SphereAgents<Scalar, MemorySpace>& a, int n,
             int count, const GrowthParameters<Scalar>& p, std::uint32_t step,
             const SortedView& sorted_ids, const AllSortedView& all_sorted_ids, const IdView& mother_ids,
             const SlotView& mother_slots )
{
    const int all_count = static_cast<int>( all_sorted_ids.extent( 0 ) );
    const auto x = a.positions();
    const auto diameter = a.diameters();
    const auto adherence = a.adherence();
    const auto density = a.densities();
    const auto id = a.ids();
    const std::int64_t next_id = a.next_id();
    const core::HashedRng rng( p.seed );
    Kokkos::parallel_for(
        "morula::mechanics::divide", core::LaunchRange<ExecutionSpace>( exec, 0, count ),
        KOKKOS_LAMBDA( const int k ) {
            const std::int64_t mother = mother_ids( k );
            const int i = mother_slots( k );
            const int slot = n + rank_in_sorted( sorted_ids, count, mother );
            const std::uint64_t key = static_cast<std::uint64_t>( mother );
            const Scalar volume_ratio = Scalar( 0.9 ) + Scalar( 0.2 ) * rng.uniform<Scalar>( key, 0, step );
            const Scalar z = Scalar( 2 ) * rng.uniform<Scalar>( key, 1, step ) - Scalar( 1 );
            const Scalar phi = Scalar( 6.283185307179586476925286766559 ) * rng.uniform<Scalar>( key, 2, step );
            const Scalar s = compat::sqrt( compat::fmax( Scalar( 0 ), Scalar( 1 ) - z * z ) );
            const Scalar axis[3] = { s * compat::cos( phi ), s * compat::sin( phi ), z };
            const Division<Scalar> v = Division<Scalar>::make( diameter( i ), volume_ratio, axis );
            for ( int d = 0; d < 3; ++d )
            {
                const Scalar c = x( i, d );
                x( slot, d ) = c + v.daughter_shift[d];
                x( i, d ) = c + v.mother_shift[d];
            }
            diameter( i ) = v.mother_diameter;
            diameter( slot ) = v.daughter_diameter;
            adherence( slot ) = adherence( i );
            density( slot ) = density( i );
            id( slot ) = next_id + rank_in_sorted( all_sorted_ids, all_count, mother );
        } );
}
} // namespace detail

template <class Scalar, class MemorySpace>
template <class ExecutionSpace, class AllMothers>
int GrowthDivision<Scalar, MemorySpace>::step( const ExecutionSpace& exec, agents_type& agents,
                                               std::uint32_t step_index, AllMothers&& all_mothers )
{
    compat::ScopedRegion region( "morula::mechanics::GrowthDivision::step" );
    const int n = static_cast<int>( agents.size() );
    const int count = detail::count_dividers( exec, agents, m_params );
    if ( m_mother_ids.extent( 0 ) < static_cast<std::size_t>( count ) )
    {
        const std::size_t cap = count + count / 2;
        m_mother_ids = decltype( m_mother_ids )(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::mechanics::mother_ids" ), cap );
        m_mother_slots = decltype( m_mother_slots )(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::mechanics::mother_slots" ), cap );
    }
    detail::grow_and_list_dividers( exec, agents, m_params, m_mother_ids, m_mother_slots );
    if ( m_sorted_ids.extent( 0 ) < static_cast<std::size_t>( count ) )
        m_sorted_ids = decltype( m_sorted_ids )(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::mechanics::sorted_mother_ids" ),
            count + count / 2 );
    const auto sorted = Kokkos::subview( m_sorted_ids, std::make_pair( 0, count ) );
    Kokkos::deep_copy( exec, sorted, Kokkos::subview( m_mother_ids, std::make_pair( 0, count ) ) );
    if ( count > 0 )
        compat::sort( exec, sorted );
    // Collective on several ranks: every rank calls it, with or without mothers of its own.
    const auto all_sorted = all_mothers( Kokkos::View<const std::int64_t*, MemorySpace>( sorted ) );
    const std::int64_t all_count = static_cast<std::int64_t>( all_sorted.extent( 0 ) );
    if ( count > 0 )
    {
        agents.resize( static_cast<std::size_t>( n ) + count ); // grows the capacity, keeps every entry
        detail::divide( exec, agents, n, count, m_params, step_index, sorted, all_sorted, m_mother_ids,
                        m_mother_slots );
    }
    agents.set_next_id( agents.next_id() + all_count );
    return count;
}

} // namespace morula::mechanics

#endif
