/*!
  \file SampleTimes.hpp
  \brief The sample times a batch kernel integrates through: one list for every system, or a row per
         system (per-system end times, issue #45).

  Kernels read a system's i-th sample time as `times( s, i )` whichever form it is: the branch is the same
  for every thread of a launch. A row per system is stored LayoutLeft (systems, samples), so the threads of
  a warp reading their systems' i-th times read consecutive addresses.
*/
#ifndef MORULA_ODE_DETAIL_SAMPLETIMES_HPP
#define MORULA_ODE_DETAIL_SAMPLETIMES_HPP

#include <morula/core/Error.hpp>
#include <morula/core/LaunchPolicy.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace morula::ode::detail
{

template <class MemorySpace>
struct SampleTimes
{
    Kokkos::View<const double*, MemorySpace> shared;                           //!< (samples), or empty
    Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace> per_system; //!< (systems, samples), or empty
    int samples = 0;
    bool own = false; //!< per_system holds the times

    KOKKOS_INLINE_FUNCTION int count() const { return samples; }
    KOKKOS_INLINE_FUNCTION double operator()( long s, int i ) const { return own ? per_system( s, i ) : shared( i ); }
    //! System s's last sample time (t_start when there is none).
    KOKKOS_INLINE_FUNCTION double last( long s, double t_start ) const { return samples > 0 ? ( *this )( s, samples - 1 ) : t_start; }
};

//! The times of every system, from a host list.
template <class MemorySpace>
SampleTimes<MemorySpace> shared_sample_times( const std::vector<double>& times )
{
    SampleTimes<MemorySpace> t;
    Kokkos::View<double*, MemorySpace> v( Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::sample_times" ), times.size() );
    Kokkos::deep_copy( v, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>( times.data(), times.size() ) );
    t.shared = v;
    t.samples = static_cast<int>( times.size() );
    return t;
}

//! A row of times per system (the caller's View, not copied).
template <class MemorySpace>
SampleTimes<MemorySpace> per_system_sample_times( const Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>& times )
{
    SampleTimes<MemorySpace> t;
    t.per_system = times;
    t.samples = static_cast<int>( times.extent( 1 ) );
    t.own = true;
    return t;
}

//! Row s of a (systems, samples) LayoutLeft View, on the host. The row is strided in memory: it goes
//! through a contiguous copy in its own space first (a strided View cannot be copied between a GPU and
//! the host directly).
template <class MemorySpace>
std::vector<double> host_row( const Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>& times, long s )
{
    Kokkos::View<double*, MemorySpace> row( "morula::ode::sample_time_row", times.extent( 1 ) );
    Kokkos::deep_copy( row, Kokkos::subview( times, s, Kokkos::ALL ) );
    const auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), row );
    return std::vector<double>( host.data(), host.data() + host.extent( 0 ) );
}

/*!
  Checks a row of times per system on the device: every time finite, >= t_start and strictly increasing
  along its row. \throws core::InputError naming the first bad system (lowest index), its sample and
  value, and what was expected.
*/
template <class ExecutionSpace, class MemorySpace>
void check_per_system_sample_times( const ExecutionSpace& exec,
                                    const Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>& times, long systems,
                                    double t_start, const char* who )
{
    using core::detail::concat;
    if ( static_cast<long>( times.extent( 0 ) ) != systems )
        throw core::InputError( concat( who, ": the sample times are ", times.extent( 0 ), " x ", times.extent( 1 ),
                                        "; expected a row per system (", systems, " rows)" ) );
    const int samples = static_cast<int>( times.extent( 1 ) );
    long first_bad = systems;
    // The lowest system with a bad row (Min over the systems that have one).
    Kokkos::parallel_reduce(
        "morula::ode::check_sample_times", core::LaunchRange<ExecutionSpace>( exec, 0, systems ),
        KOKKOS_LAMBDA( const long s, long& bad ) {
            bool ok = true;
            for ( int i = 0; i < samples; ++i )
            {
                const double t = times( s, i );
                // Written so that NaN fails: every comparison with NaN is false.
                ok = ok && ( t - t == 0.0 ) && t >= t_start && ( i == 0 || t > times( s, i - 1 ) );
            }
            if ( !ok && s < bad )
                bad = s;
        },
        Kokkos::Min<long>( first_bad ) );
    if ( first_bad >= systems )
        return;
    const std::vector<double> row = host_row( times, first_bad );
    for ( int i = 0; i < samples; ++i )
    {
        const double t = row[std::size_t( i )];
        if ( !std::isfinite( t ) || t < t_start )
            throw core::InputError( concat( who, ": system ", first_bad, ": sample time ", i, " = ", t,
                                            "; expected a finite time >= t_start (", t_start, ")" ) );
        if ( i > 0 && !( t > row[std::size_t( i - 1 )] ) )
            throw core::InputError( concat( who, ": system ", first_bad, ": sample times must increase strictly; time ", i,
                                            " = ", t, " follows ", row[std::size_t( i - 1 )] ) );
    }
}

} // namespace morula::ode::detail

#endif
