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

/*!
  \brief The pseudo-time steps of the exchange, kept on the device: tau = sweep_fraction / max_i(rate_i)
  with rate_i = (D sum_j g_ij + D B_i) / V_i + uptake (oxygen) or D_T sum_j g_ij / V_i + decay (TAF), the
  largest explicit step that keeps every concentration non-negative. One uniform step for all cells, so
  each pair exchanges exactly opposite amounts.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void exchange_steps( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int n,
                     const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w )
{
    const auto out = w.exchange_rate;
    Kokkos::View<Scalar, MemorySpace> oxygen_rate( out.data() );
    Kokkos::View<Scalar, MemorySpace> taf_rate( out.data() + 1 );
    Kokkos::parallel_reduce(
        "morula::angio::oxygen_rate", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, Scalar& r ) {
            const Scalar v = exchange_rate_of( cells, w, c, i, true );
            r = v > r ? v : r;
        },
        Kokkos::Max<Scalar, MemorySpace>( oxygen_rate ) );
    Kokkos::parallel_reduce(
        "morula::angio::taf_rate", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, Scalar& r ) {
            const Scalar v = exchange_rate_of( cells, w, c, i, false );
            r = v > r ? v : r;
        },
        Kokkos::Max<Scalar, MemorySpace>( taf_rate ) );
}

/*!
  \brief One explicit exchange sweep from (o_in, t_in) to (o_out, t_out): diffusion between contacts,
  vessel supply, uptake by live cells (halved when hypoxic), TAF production by hypoxic cells and decay.
  Dead cells keep their values. With sources and sinks off, sum_i V_i c_i is conserved to rounding.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class In, class Out>
void exchange_sweep( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int n,
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
    Kokkos::parallel_for(
        "morula::angio::exchange_sweep", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
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
            for ( int q = 0; q < k; ++q )
            {
                const int j = contact( i, q );
                const Scalar g = conductance( i, q );
                so += g * ( o_in( j ) - oi );
                st += g * ( t_in( j ) - ti );
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

} // namespace morula::angio::detail

#endif
