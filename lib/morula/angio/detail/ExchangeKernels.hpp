/*!
  \file ExchangeKernels.hpp
  \brief Exchange of oxygen and TAF between cells in contact and from the tubes (Worecki and Wcisło 2012, section 2.1):
  the pseudo-time steps and one explicit sweep.
*/
#ifndef MORULA_ANGIO_DETAIL_EXCHANGEKERNELS_HPP
#define MORULA_ANGIO_DETAIL_EXCHANGEKERNELS_HPP

#include <morula/angio/Interactions.hpp>
#include <morula/angio/detail/KernelData.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::angio::detail
{

//! Exchange rate of cell i (1/s): (D sum_j g_ij + D B_i) / V_i + uptake for oxygen, D_T sum_j g_ij / V_i +
//! decay for TAF; 0 for cells that do not exchange.
template <class Scalar, class MemorySpace>
KOKKOS_INLINE_FUNCTION Scalar exchange_rate_of( const CellViews<Scalar, MemorySpace>& cells,
                                                const Workspace<Scalar, MemorySpace>& w, const Constants<Scalar>& c,
                                                int i, bool oxygen )
{
    if ( !is_alive( cells.state( i ) ) )
        return Scalar( 0 );
    Scalar g = 0;
    const int k = w.contact_count( i ) < c.max_contacts ? w.contact_count( i ) : c.max_contacts;
    for ( int q = 0; q < k; ++q )
        g += w.conductance( i, q );
    const Scalar volume = sphere_volume_of_radius( cells.radius( i ) );
    return oxygen ? ( c.oxygen_diffusion * ( g + w.supply_rate( i ) ) ) / volume + c.oxygen_uptake
                  : c.taf_diffusion * g / volume + c.taf_decay;
}

//! Cells per team of exchange_steps(): one team reduction per block of cells, then one atomic per team.
constexpr int exchange_rate_block = 256;

/*!
  \brief The pseudo-time steps of the exchange, kept on the device: tau = sweep_fraction / max_i(rate_i)
  with rate_i = (D sum_j g_ij + D B_i) / V_i + uptake (oxygen) or D_T sum_j g_ij / V_i + decay (TAF), the
  largest explicit step that keeps every concentration non-negative. One uniform step for all cells, so
  each pair exchanges exactly opposite amounts.

  Both maxima in one kernel: each team reduces a block of cells, then raises w.exchange_rate(0) and (1)
  with an atomic max (begin_step() zeroed them; rates are >= 0). A maximum does not depend on the order
  of its operands, so the result is the same bit for bit on every backend and in every schedule. The
  kernel covers `capacity` cells and reads the cell count from w.num_cells, so one launch (and one captured
  graph) serves every cell count up to the capacity.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void exchange_steps( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int capacity,
                     const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w )
{
    using policy_type = core::LaunchTeam<ExecutionSpace>;
    using member_type = typename policy_type::member_type;
    const auto out = w.exchange_rate;
    const auto count = w.num_cells;
    const int league = ( capacity + exchange_rate_block - 1 ) / exchange_rate_block;
    Kokkos::parallel_for(
        "morula::angio::exchange_rates", policy_type( exec, league > 0 ? league : 1, Kokkos::AUTO ),
        KOKKOS_LAMBDA( const member_type& team ) {
            const int n = count();
            const int first = team.league_rank() * exchange_rate_block;
            if ( first >= n )
                return;
            const int block = n - first < exchange_rate_block ? n - first : exchange_rate_block;
            Scalar ro = 0, rt = 0;
            Kokkos::parallel_reduce(
                Kokkos::TeamThreadRange( team, block ),
                [&]( const int k, Scalar& r ) {
                    const Scalar v = exchange_rate_of( cells, w, c, first + k, true );
                    r = v > r ? v : r;
                },
                Kokkos::Max<Scalar>( ro ) );
            Kokkos::parallel_reduce(
                Kokkos::TeamThreadRange( team, block ),
                [&]( const int k, Scalar& r ) {
                    const Scalar v = exchange_rate_of( cells, w, c, first + k, false );
                    r = v > r ? v : r;
                },
                Kokkos::Max<Scalar>( rt ) );
            Kokkos::single( Kokkos::PerTeam( team ), [&]() {
                Kokkos::atomic_fetch_max( &out( 0 ), ro );
                Kokkos::atomic_fetch_max( &out( 1 ), rt );
            } );
        } );
}

//! Contacts whose loads a sweep issues together (see exchange_sweep()).
constexpr int exchange_sweep_group = 8;

/*!
  \brief One explicit exchange sweep from (o_in, t_in) to (o_out, t_out): diffusion between contacts,
  vessel supply, uptake by live cells (halved when hypoxic), TAF production by hypoxic cells and decay.
  Dead cells keep their values. With sources and sinks off, sum_i V_i c_i is conserved to rounding.
  Launched over `capacity` cells, the first w.num_cells of them working (see exchange_steps()).
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class In, class Out>
void exchange_sweep( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int capacity,
                     const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w, const In& o_in,
                     const In& t_in, const Out& o_out, const Out& t_out )
{
    const auto contact = w.contact;
    const auto conductance = w.conductance;
    const auto count = w.contact_count;
    const auto level = w.supply_level;
    const auto rate = w.supply_rate;
    const auto steps = w.exchange_rate;
    const auto counters = w.counters;
    const auto num_cells = w.num_cells;
    Kokkos::parallel_for(
        "morula::angio::exchange_sweep", core::LaunchRange<ExecutionSpace>( exec, 0, capacity ),
        KOKKOS_LAMBDA( const int i ) {
            if ( i >= num_cells() )
                return;
            const Scalar oi = o_in( i ), ti = t_in( i );
            const std::int32_t s = cells.state( i );
            if ( !is_alive( s ) )
            {
                o_out( i ) = oi;
                t_out( i ) = ti;
                return;
            }
            Scalar so = 0, st = 0;
            const int k = count( i ) < c.max_contacts ? count( i ) : c.max_contacts;
            // Contacts in groups of exchange_sweep_group: the group's neighbour indices, then their
            // concentrations, are loaded together, so that a thread waits for one round trip per group
            // instead of two per contact (a sweep over a small tumour is bound by these waits, not by
            // bandwidth). The sums take the contacts in their order, as one at a time would.
            for ( int q = 0; q < k; q += exchange_sweep_group )
            {
                const int in_group = k - q < exchange_sweep_group ? k - q : exchange_sweep_group;
                int j[exchange_sweep_group] = {};
                Scalar g[exchange_sweep_group] = {}, oj[exchange_sweep_group] = {}, tj[exchange_sweep_group] = {};
                MORULA_UNROLL
                for ( int u = 0; u < exchange_sweep_group; ++u )
                    if ( u < in_group )
                    {
                        j[u] = contact( i, q + u );
                        g[u] = conductance( i, q + u );
                    }
                MORULA_UNROLL
                for ( int u = 0; u < exchange_sweep_group; ++u )
                    if ( u < in_group )
                    {
                        oj[u] = o_in( j[u] );
                        tj[u] = t_in( j[u] );
                    }
                MORULA_UNROLL
                for ( int u = 0; u < exchange_sweep_group; ++u )
                    if ( u < in_group )
                    {
                        so += g[u] * ( oj[u] - oi );
                        st += g[u] * ( tj[u] - ti );
                    }
            }
            const Scalar volume = sphere_volume_of_radius( cells.radius( i ) );
            const Scalar tau_o = c.sweep_fraction / steps( 0 );
            const Scalar tau_t = c.sweep_fraction / steps( 1 );
            const bool hypoxic = s == cell_hypoxic;
            const Scalar uptake = hypoxic ? c.hypoxic_uptake : c.oxygen_uptake;
            const Scalar o = oi + tau_o * ( c.oxygen_diffusion * ( so + level( i ) - rate( i ) * oi ) / volume - uptake * oi );
            const Scalar tn = ti + tau_t * ( c.taf_diffusion * st / volume - c.taf_decay * ti +
                                             ( hypoxic ? c.taf_production : Scalar( 0 ) ) );
            if ( !( o >= Scalar( 0 ) ) || !( tn >= Scalar( 0 ) ) || !compat::isfinite( o ) || !compat::isfinite( tn ) )
                Kokkos::atomic_add( &counters( counter_negative ), 1LL );
            o_out( i ) = o;
            t_out( i ) = tn;
        } );
}

//! Copies the first w.num_cells entries of (o_in, t_in) to (o_out, t_out): the last sweep's result back
//! into the cells after an odd number of sweeps (a kernel, not a deep_copy of a host-sized subview, so
//! that it can sit in a captured graph whatever the cell count).
template <class ExecutionSpace, class Scalar, class MemorySpace, class In, class Out>
void copy_concentrations( const ExecutionSpace& exec, int capacity, const Workspace<Scalar, MemorySpace>& w,
                          const In& o_in, const In& t_in, const Out& o_out, const Out& t_out )
{
    const auto num_cells = w.num_cells;
    Kokkos::parallel_for(
        "morula::angio::exchange_copy", core::LaunchRange<ExecutionSpace>( exec, 0, capacity ),
        KOKKOS_LAMBDA( const int i ) {
            if ( i >= num_cells() )
                return;
            o_out( i ) = o_in( i );
            t_out( i ) = t_in( i );
        } );
}

/*!
  \brief The whole exchange of a step: the pseudo-time steps, then `sweeps` sweeps alternating between the
  cells' concentrations and the second buffer, then (after an odd number) a copy back into the cells. Every
  kernel covers `capacity` cells and reads the cell count from w.num_cells: the launches depend only on the
  arrays, the capacity and the sweep count, so a captured graph of them stays valid while those do.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void exchange_all( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int capacity, int sweeps,
                   const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w )
{
    exchange_steps( exec, cells, capacity, c, w );
    for ( int s = 0; s < sweeps; ++s )
    {
        if ( s % 2 == 0 )
            exchange_sweep( exec, cells, capacity, c, w, cells.oxygen, cells.taf, w.oxygen_next, w.taf_next );
        else
            exchange_sweep( exec, cells, capacity, c, w, w.oxygen_next, w.taf_next, cells.oxygen, cells.taf );
    }
    if ( sweeps % 2 == 1 )
        copy_concentrations( exec, capacity, w, w.oxygen_next, w.taf_next, cells.oxygen, cells.taf );
}

/*!
  \brief Starts a step on the device: zeroes the step counters and the exchange's rate maxima, and stores
  the cell count where the exchange kernels read it. One small launch.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void begin_step( const ExecutionSpace& exec, int n, const Workspace<Scalar, MemorySpace>& w )
{
    const auto counters = w.counters;
    const auto rates = w.exchange_rate;
    const auto num_cells = w.num_cells;
    Kokkos::parallel_for(
        "morula::angio::begin_step", core::LaunchRange<ExecutionSpace>( exec, 0, num_counters ),
        KOKKOS_LAMBDA( const int k ) {
            counters( k ) = 0;
            if ( k < 2 )
                rates( k ) = 0;
            if ( k == 0 )
                num_cells() = n;
        } );
}

} // namespace morula::angio::detail

#endif
