/*!
  \file NeighborReduction.hpp
  \brief NeighborReduction: a per-particle sum over neighbours, with several particles of a cell per
  thread where that is faster (GPUs, sorted data).
*/
#ifndef MORULA_GRID_NEIGHBORREDUCTION_HPP
#define MORULA_GRID_NEIGHBORREDUCTION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborQuery.hpp>
#include <morula/grid/NeighborSweep.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace morula::grid
{

/*!
  \brief When NeighborReduction calls the kernel's pair(): inside the loop over candidates, or after a
  run of up to 32 candidates has been tested into a bit mask.
*/
enum class PairBatching
{
    //! pair() for each neighbour as the candidate loop finds it: best for light pair work (counts, sums).
    inline_pairs,
    /*!
      Each run of up to 32 candidates is tested first, the neighbours noted in a bit mask, then pair()
      is called for the neighbours in order (their offsets recomputed with the same arithmetic: same
      sums bit for bit). On a GPU the pair work of a warp's threads then runs together instead of
      once per candidate tested, with the one lane in five whose candidate is a neighbour active:
      for heavy pair work (forces). Data in cell order or read through the grid's permutation; with the
      per-pair minimum image (fewer than 3 cells along a periodic axis) pairs are inline.
    */
    batched
};

namespace detail
{
template <StencilOrder Order, class LaunchBounds, class ExecutionSpace, class Query, class Kernel>
void reduce_per_particle( const ExecutionSpace& exec, const Query& query, const Kernel& kernel,
                          typename Query::scalar_type radius, int num_targets, bool batched, const std::string& label );
template <int K, class LaunchBounds, class ExecutionSpace, class Query, class Kernel, class MemorySpace>
void reduce_in_groups( const ExecutionSpace& exec, const Query& query, const Kernel& kernel,
                       typename Query::scalar_type radius, int num_targets, bool batched, const std::string& label,
                       const Kokkos::View<int*, MemorySpace>& group_first,
                       const Kokkos::View<int, MemorySpace>& group_count );
} // namespace detail

/*!
  \brief Runs, for every particle i of a query, a reduction over its neighbours described by a kernel:

  \code
  struct Kernel {
    using accumulator_type = Acc; // trivially copyable; value-initialised (Acc{}) for each particle
    KOKKOS_FUNCTION void init( int i, Acc& a ) const;   // per-particle constants (radius, ...)
    KOKKOS_FUNCTION void pair( int i, int j, Scalar dx, Scalar dy, Scalar dz, Scalar r2, Acc& a ) const;
    template <class Neighbors>
    KOKKOS_FUNCTION void finish( int i, Acc& a, const Neighbors& nb ) const; // writes the result
  };
  \endcode

  pair() is called for every neighbour j of i (d = x_i - x_j, r2 = |d|^2 <= radius^2), in the order
  and with the arithmetic of NeighborQuery::for_each_neighbor, so both paths below give the same sums.
  finish() gets i's neighbours as a ParticleNeighbors (for a rare second walk) and writes the result;
  only particles i < num_targets are reduced.

  Two paths:
  - one particle per thread: for_each_particle() with init, pair and finish around the walk;
  - K particles of one cell per thread (K = 2..4; data in cell order, no per-pair minimum image): the
    thread walks the stencil once for its K particles, pruned by their smallest face distances, and
    tests each candidate it loads against all K, so a candidate's loads and the loop's overhead are paid
    once per K pair tests. That pays where cells hold several particles, not at about one particle per
    cell (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): third pass"). Threads map to
    (cell, group of K) through a scan over the cells, kept in the object between calls; no value is
    read back to the host, so the work can be captured in a device graph.

  particles_per_thread(): 0 (the default) picks 1 on host backends and with batched pairs, and otherwise,
  on GPUs, from the mean number of particles per cell (see automatic_particles_per_thread()); 1..4 forces
  a path (the tests run every path on every backend). pair_batching() (PairBatching) says whether pair()
  runs inside the candidate loop or after each run of candidates has been tested: batched is for heavy
  pair work such as forces, whose lanes then run their pair work together (docs/performance.md,
  "Neighbour kernels at the hardware limit (issue #25): third pass").

  On GPUs each path is compiled once per cell ordering (and batched pairs once for sorted and once for
  unsorted data), and run() launches the one that fits the query: a GPU kernel's register count is the
  largest over every path it contains (detail::with_stencil_order). Host backends compile one kernel for
  all orderings, which reads the ordering at run time.
*/
template <class MemorySpace>
class NeighborReduction
{
  public:
    using memory_space = MemorySpace;
    static constexpr int max_particles_per_thread = 4;

    explicit NeighborReduction( int particles_per_thread = 0, PairBatching batching = PairBatching::inline_pairs )
        : m_batching( batching )
    {
        set_particles_per_thread( particles_per_thread );
    }

    void set_pair_batching( PairBatching b ) { m_batching = b; }
    PairBatching pair_batching() const { return m_batching; }

    //! 0: automatic; 1..max_particles_per_thread: that many particles of a cell per thread.
    void set_particles_per_thread( int k )
    {
        if ( k < 0 || k > max_particles_per_thread )
            throw core::InputError( core::detail::concat( "NeighborReduction: particles_per_thread = ", k,
                                                          " (expected 0 for automatic, or 1 to ",
                                                          max_particles_per_thread, ")" ) );
        m_particles_per_thread = k;
    }
    int particles_per_thread() const { return m_particles_per_thread; }

    /*!
      \brief The K a GPU run picks for `mean_occupancy` particles per occupied cell: one per thread below
      2.5 (too many threads would hold a single particle), 2 below 12, else 4.
    */
    static int automatic_particles_per_thread( double mean_occupancy )
    {
        return mean_occupancy < 2.5 ? 1 : ( mean_occupancy < 12 ? 2 : 4 );
    }

    //! The K that run() uses for this query on this execution space (1: one particle per thread).
    template <class ExecutionSpace, class Query>
    int resolved_particles_per_thread( const ExecutionSpace&, const Query& q ) const
    {
        if ( !q.data_sorted() || q.per_pair_minimum_image() )
            return 1;
        if ( m_particles_per_thread > 0 )
            return m_particles_per_thread;
        // Host backends, and heavy pair work (batched): one particle per thread. With batched pairs the
        // pair work, not the candidate loads, dominates, and K accumulators cost registers: K = 2 and 4
        // were slower than K = 1 for the sphere forces (docs/performance.md,
        // "Design choices measured (moved from source comments, issue #46)").
        if ( Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecutionSpace::memory_space>::accessible ||
             m_batching == PairBatching::batched )
            return 1;
        // Cells the particles can reach: the grid's box may be wider than the particles' extent (open
        // axes keep slack), so the mean over all cells would understate the occupancy.
        const double cells = static_cast<double>( q.geometry().num_cells() );
        const double mean = cells > 0 ? q.num_particles() / cells : 0;
        return automatic_particles_per_thread( m_occupied_fraction > 0 ? mean / m_occupied_fraction : mean );
    }

    /*!
      \brief The fraction of the grid's cells the particles occupy, if the caller knows it (0: unknown,
      the mean over all cells is used), for the automatic choice.
    */
    void set_occupied_fraction( double f ) { m_occupied_fraction = f; }

    /*!
      \brief Runs the kernel for particles [0, num_targets) (default: all) over their neighbours within
      radius (default: the grid's cutoff).
      \tparam LaunchBounds Kokkos::LaunchBounds for the kernel (as for for_each_particle)
      \tparam MaxParticlesPerThread the largest K compiled for this kernel (1 to 4): a caller that only ever
      runs K = 1 passes 1 and compiles one kernel instead of four; a larger K is then run as K = 1.
    */
    template <class LaunchBounds = Kokkos::LaunchBounds<>, int MaxParticlesPerThread = max_particles_per_thread,
              class ExecutionSpace, class Query, class Kernel>
    void run( const ExecutionSpace& exec, const Query& query, const Kernel& kernel,
              typename Query::scalar_type radius = -1, int num_targets = -1,
              const std::string& label = "morula::grid::NeighborReduction" )
    {
        static_assert( std::is_trivially_copyable<typename Kernel::accumulator_type>::value,
                       "NeighborReduction: the kernel's accumulator_type must be trivially copyable" );
        if ( radius < 0 )
            radius = query.cutoff();
        if ( !( radius <= query.cutoff() ) )
            throw core::InputError( core::detail::concat( "NeighborReduction: radius ", radius,
                                                          " exceeds the grid's cutoff ", query.cutoff() ) );
        const int n = query.num_particles();
        if ( num_targets < 0 || num_targets > n )
            num_targets = n;
        static_assert( MaxParticlesPerThread >= 1 && MaxParticlesPerThread <= max_particles_per_thread,
                       "NeighborReduction::run: MaxParticlesPerThread must be 1 to 4" );
        const int k = resolved_particles_per_thread( exec, query );
        if constexpr ( MaxParticlesPerThread >= 2 )
            if ( k == 2 )
                return run_groups<2, LaunchBounds>( exec, query, kernel, radius, num_targets, label );
        if constexpr ( MaxParticlesPerThread >= 3 )
            if ( k == 3 )
                return run_groups<3, LaunchBounds>( exec, query, kernel, radius, num_targets, label );
        if constexpr ( MaxParticlesPerThread >= 4 )
            if ( k == 4 )
                return run_groups<4, LaunchBounds>( exec, query, kernel, radius, num_targets, label );
        const bool batch = batched( query );
        detail::with_stencil_order( exec, query, [&]( auto order ) {
            detail::reduce_per_particle<decltype( order )::value, LaunchBounds>( exec, query, kernel, radius,
                                                                                num_targets, batch, label );
        } );
    }

  private:
    template <class Query>
    bool batched( const Query& q ) const
    {
        return m_batching == PairBatching::batched && !q.per_pair_minimum_image();
    }

    template <int K, class LaunchBounds, class ExecutionSpace, class Query, class Kernel>
    void run_groups( const ExecutionSpace& exec, const Query& query, const Kernel& kernel,
                     typename Query::scalar_type radius, int num_targets, const std::string& label );

    int m_particles_per_thread = 0;
    PairBatching m_batching = PairBatching::inline_pairs;
    double m_occupied_fraction = 0;
    Kokkos::View<int*, MemorySpace> m_group_first; // first sorted slot of every group, then n
    Kokkos::View<int, MemorySpace> m_group_count;
};

namespace detail
{

/*!
  A visit_stencil source (no per-pair minimum image) that tests each run of up to 32 candidates into a
  bit mask and then calls f for the neighbours found, in order (PairBatching::batched). Sorted: the data
  are in cell order; otherwise slot k holds particle q.particle(k).
*/
template <class Query, bool Sorted>
struct BatchedSource
{
    using Scalar = typename Query::scalar_type;
    const Query& q;

    template <class F>
    KOKKOS_INLINE_FUNCTION void scan( int, int begin, int end, int self, Scalar xi, Scalar yi, Scalar zi, Scalar sx,
                                      Scalar sy, Scalar sz, Scalar r2max, F& f ) const
    {
        if ( sx == Scalar( 0 ) && sy == Scalar( 0 ) && sz == Scalar( 0 ) )
            run<false>( begin, end, self, xi, yi, zi, sx, sy, sz, r2max, f );
        else
            run<true>( begin, end, self, xi, yi, zi, sx, sy, sz, r2max, f );
    }

    template <bool Shifted, class F>
    KOKKOS_INLINE_FUNCTION void run( int begin, int end, int self, Scalar xi, Scalar yi, Scalar zi, Scalar sx,
                                     Scalar sy, Scalar sz, Scalar r2max, F& f ) const
    {
        for ( int base = begin; base < end; base += 32 )
        {
            const int stop = end - base < 32 ? end : base + 32;
            std::uint32_t hits = 0;
            for ( int k = base; k < stop; ++k )
            {
                const int j = Sorted ? k : q.particle( k );
                Scalar dx, dy, dz;
                const Scalar r2 = pair_offset<Shifted>( xi, yi, zi, q.position( j, 0 ), q.position( j, 1 ),
                                                        q.position( j, 2 ), sx, sy, sz, dx, dy, dz );
                if ( r2 <= r2max && j != self )
                    hits |= std::uint32_t( 1 ) << ( k - base );
            }
            while ( hits != 0 )
            {
                const int k = base + compat::lowest_set_bit( hits );
                const int j = Sorted ? k : q.particle( k );
                hits &= hits - 1;
                Scalar dx, dy, dz;
                const Scalar r2 = pair_offset<Shifted>( xi, yi, zi, q.position( j, 0 ), q.position( j, 1 ),
                                                        q.position( j, 2 ), sx, sy, sz, dx, dy, dz );
                f( j, dx, dy, dz, r2 );
            }
        }
    }
};

/*!
  The thread of one group of K particles of a cell (slots first .. first + members - 1): the stencil of
  the cell pruned by the group's smallest face distances, each candidate tested against every member.
*/
template <int K, StencilOrder Order, class Query, class Kernel, class ExecutionSpace>
struct GroupReduction
{
    using Scalar = typename Query::scalar_type;
    using Acc = typename Kernel::accumulator_type;
    Query q;
    Kernel kernel;
    Kokkos::View<const int*, typename Query::memory_space> group_first;
    Kokkos::View<const int, typename Query::memory_space> group_count;
    Scalar radius;
    int num_targets;
    bool batched;

    template <bool Shifted>
    KOKKOS_INLINE_FUNCTION void scan( int begin, int end, int first, int members, const Scalar ( &x )[K][3],
                                      Scalar sx, Scalar sy, Scalar sz, Scalar r2max, Acc ( &acc )[K] ) const
    {
        for ( int j = begin; j < end; ++j )
        {
            const Scalar xj = q.position( j, 0 );
            const Scalar yj = q.position( j, 1 );
            const Scalar zj = q.position( j, 2 );
            for ( int k = 0; k < K; ++k )
            {
                Scalar dx, dy, dz;
                const Scalar r2 = pair_offset<Shifted>( x[k][0], x[k][1], x[k][2], xj, yj, zj, sx, sy, sz, dx, dy, dz );
                if ( k < members && j != first + k && r2 <= r2max )
                    kernel.pair( first + k, j, dx, dy, dz, r2, acc[k] );
            }
        }
    }

    // PairBatching::batched: up to 32 candidates tested against the K members into K bit masks, then the
    // pairs of each member in order.
    template <bool Shifted>
    KOKKOS_INLINE_FUNCTION void scan_batched( int begin, int end, int first, int members, const Scalar ( &x )[K][3],
                                              Scalar sx, Scalar sy, Scalar sz, Scalar r2max, Acc ( &acc )[K] ) const
    {
        for ( int base = begin; base < end; base += 32 )
        {
            const int stop = end - base < 32 ? end : base + 32;
            std::uint32_t hits[K];
            for ( int k = 0; k < K; ++k )
                hits[k] = 0;
            for ( int j = base; j < stop; ++j )
            {
                const Scalar xj = q.position( j, 0 );
                const Scalar yj = q.position( j, 1 );
                const Scalar zj = q.position( j, 2 );
                for ( int k = 0; k < K; ++k )
                {
                    Scalar dx, dy, dz;
                    const Scalar r2 =
                        pair_offset<Shifted>( x[k][0], x[k][1], x[k][2], xj, yj, zj, sx, sy, sz, dx, dy, dz );
                    if ( k < members && j != first + k && r2 <= r2max )
                        hits[k] |= std::uint32_t( 1 ) << ( j - base );
                }
            }
            for ( int k = 0; k < K; ++k )
                while ( hits[k] != 0 )
                {
                    const int j = base + compat::lowest_set_bit( hits[k] );
                    hits[k] &= hits[k] - 1;
                    Scalar dx, dy, dz;
                    const Scalar r2 = pair_offset<Shifted>( x[k][0], x[k][1], x[k][2], q.position( j, 0 ),
                                                            q.position( j, 1 ), q.position( j, 2 ), sx, sy, sz, dx,
                                                            dy, dz );
                    kernel.pair( first + k, j, dx, dy, dz, r2, acc[k] );
                }
        }
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int g ) const
    {
        if ( g >= group_count() )
            return;
        const int first = group_first( g );
        const int end = group_first( g + 1 );
        if ( first >= num_targets )
            return;
        // Members past the targets (a distributed run's ghosts) are neighbours only.
        const int members = ( end < num_targets ? end : num_targets ) - first;
        const auto& geom = q.geometry();
        const int ix = geom.cell_coordinate( 0, q.position( first, 0 ) );
        const int iy = geom.cell_coordinate( 1, q.position( first, 1 ) );
        const int iz = geom.cell_coordinate( 2, q.position( first, 2 ) );
        const int cell[3] = { ix, iy, iz };
        Scalar x[K][3];
        Acc acc[K];
        Scalar below[3], above[3];
        for ( int d = 0; d < 3; ++d )
            below[d] = above[d] = Scalar( 1e30 ); // above any face distance
        for ( int k = 0; k < K; ++k )
        {
            // Missing members repeat the first particle, whose pair calls are masked off.
            const int s = first + ( k < members ? k : 0 );
            acc[k] = Acc{};
            if ( k < members )
                kernel.init( s, acc[k] );
            for ( int d = 0; d < 3; ++d )
            {
                x[k][d] = q.position( s, d );
                Scalar lo, hi;
                QueryAccess::face_distances( q, d, cell[d], x[k][d], lo, hi );
                below[d] = lo < below[d] ? lo : below[d];
                above[d] = hi < above[d] ? hi : above[d];
            }
        }
        const Scalar r2max = radius * radius;
        const Scalar zero = 0;
        QueryAccess::visit_cell_stencil<Order>( q, ix, iy, iz, below, above, r2max,
                              [&]( int, int begin, int run_end, Scalar sx, Scalar sy, Scalar sz ) {
                                  const bool shifted = sx != zero || sy != zero || sz != zero;
                                  if ( batched )
                                  {
                                      if ( shifted )
                                          scan_batched<true>( begin, run_end, first, members, x, sx, sy, sz, r2max, acc );
                                      else
                                          scan_batched<false>( begin, run_end, first, members, x, sx, sy, sz, r2max, acc );
                                  }
                                  else if ( shifted )
                                      scan<true>( begin, run_end, first, members, x, sx, sy, sz, r2max, acc );
                                  else
                                      scan<false>( begin, run_end, first, members, x, sx, sy, sz, r2max, acc );
                              } );
        for ( int k = 0; k < K; ++k )
            if ( k < members )
            {
                const BasicParticleNeighbors<Query, ExecutionSpace> nb( q, first + k, radius );
                kernel.finish( first + k, acc[k], nb );
            }
    }
};

} // namespace detail

template <class MemorySpace>
template <int K, class LaunchBounds, class ExecutionSpace, class Query, class Kernel>
void NeighborReduction<MemorySpace>::run_groups( const ExecutionSpace& exec, const Query& query,
                                                 const Kernel& kernel, typename Query::scalar_type radius,
                                                 int num_targets, const std::string& label )
{
    // At most one group per particle, and the end of the last.
    const int n = query.num_particles();
    if ( m_group_first.extent( 0 ) < std::size_t( n ) + 1 )
        m_group_first = Kokkos::View<int*, MemorySpace>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::grid::NeighborReduction::group_first" ),
            n + n / 8 + 1 );
    if ( m_group_count.data() == nullptr )
        m_group_count = Kokkos::View<int, MemorySpace>( "morula::grid::NeighborReduction::group_count" );
    detail::reduce_in_groups<K, LaunchBounds>( exec, query, kernel, radius, num_targets, batched( query ), label,
                                               m_group_first, m_group_count );
}

namespace detail
{

//! One particle per thread with PairBatching::batched (Sorted: the data are in cell order).
template <StencilOrder Order, bool Sorted, class Query, class Kernel, class ExecutionSpace>
struct BatchedReduction
{
    using Scalar = typename Query::scalar_type;
    Query query;
    Kernel kernel;
    Scalar radius;

    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const
    {
        typename Kernel::accumulator_type acc{};
        kernel.init( i, acc );
        auto pair = [&]( const int j, const Scalar dx, const Scalar dy, const Scalar dz, const Scalar r2 ) {
            kernel.pair( i, j, dx, dy, dz, r2, acc );
        };
        const Scalar xi = query.position( i, 0 ), yi = query.position( i, 1 ), zi = query.position( i, 2 );
        QueryAccess::visit_stencil<false, Order>( query, i, xi, yi, zi, radius * radius,
                                                  BatchedSource<Query, Sorted>{ query }, pair );
        kernel.finish( i, acc, BasicParticleNeighbors<Query, ExecutionSpace>( query, i, radius ) );
    }
};

template <StencilOrder Order, class LaunchBounds, class ExecutionSpace, class Query, class Kernel>
void reduce_per_particle( const ExecutionSpace& exec, const Query& query, const Kernel& kernel,
                          typename Query::scalar_type radius, int num_targets, bool batched, const std::string& label )
{
    using Scalar = typename Query::scalar_type;
    using Acc = typename Kernel::accumulator_type;
    using neighbors_type = ParticleNeighbors<Query, ExecutionSpace>;
    if ( batched )
    {
        // Sorted and unsorted data in kernels of their own, for the same reason as the orderings.
        if ( query.data_sorted() )
            Kokkos::parallel_for( label, core::LaunchRange<ExecutionSpace, LaunchBounds>( exec, 0, num_targets ),
                                  BatchedReduction<Order, true, Query, Kernel, ExecutionSpace>{ query, kernel, radius } );
        else
            Kokkos::parallel_for( label, core::LaunchRange<ExecutionSpace, LaunchBounds>( exec, 0, num_targets ),
                                  BatchedReduction<Order, false, Query, Kernel, ExecutionSpace>{ query, kernel, radius } );
        return;
    }
    // One particle per thread with pairs inline: for_each_particle's kernel, with the walk of one ordering.
    Kokkos::parallel_for(
        label, core::LaunchRange<ExecutionSpace, LaunchBounds>( exec, 0, num_targets ), KOKKOS_LAMBDA( const int i ) {
            Acc acc{};
            kernel.init( i, acc );
            query.template for_each_neighbor<Order>(
                i, radius, [&]( const int j, const Scalar dx, const Scalar dy, const Scalar dz, const Scalar r2 ) {
                    kernel.pair( i, j, dx, dy, dz, r2, acc );
                } );
            kernel.finish( i, acc, neighbors_type( query, i, radius ) );
        } );
}

template <int K, class LaunchBounds, class ExecutionSpace, class Query, class Kernel, class MemorySpace>
void reduce_in_groups( const ExecutionSpace& exec, const Query& query, const Kernel& kernel,
                       typename Query::scalar_type radius, int num_targets, bool batched, const std::string& label,
                       const Kokkos::View<int*, MemorySpace>& group_first,
                       const Kokkos::View<int, MemorySpace>& group_count )
{
    const int n = query.num_particles();
    const int ncells = query.geometry().num_cells();
    const auto offsets = query.cell_offsets();
    Kokkos::parallel_scan(
        label + "::groups", core::LaunchRange<ExecutionSpace>( exec, 0, ncells + 1 ),
        KOKKOS_LAMBDA( const int c, int& update, const bool final_pass ) {
            const int begin = c < ncells ? offsets( c ) : n;
            const int groups = c < ncells ? ( offsets( c + 1 ) - begin + K - 1 ) / K : 1;
            if ( final_pass )
            {
                // Groups are consecutive in slot order, so group g ends where group g + 1 begins.
                for ( int t = 0; t < groups; ++t )
                    group_first( update + t ) = begin + K * t;
                if ( c == ncells )
                    group_count() = update;
            }
            update += groups;
        } );
    if ( n == 0 )
        return;
    // n threads, at least one per group: no group count is read back to the host.
    with_stencil_order( exec, query, [&]( auto order ) {
        using reduction = GroupReduction<K, decltype( order )::value, Query, Kernel, ExecutionSpace>;
        Kokkos::parallel_for( label, core::LaunchRange<ExecutionSpace, LaunchBounds>( exec, 0, n ),
                              reduction{ query, kernel, group_first, group_count, radius, num_targets, batched } );
    } );
}

} // namespace detail

} // namespace morula::grid

#endif
