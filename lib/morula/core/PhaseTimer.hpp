/*!
  \file PhaseTimer.hpp
  \brief Seconds per named phase of a driver's step, and named counts of what the phases moved: the one
  timer every model driver uses (docs/architecture.md, "The driver shape").
*/
#ifndef MORULA_CORE_PHASETIMER_HPP
#define MORULA_CORE_PHASETIMER_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace morula::core
{

/*!
  \brief Seconds per phase of a step, summed over the timed steps, plus counts summed alongside.

  A driver names its phases (and counts) once, as an unscoped enum inside a struct for the indices and
  the names in the same order, and runs each phase of step() through run(). Every phase opens a Kokkos
  profiling region named "<scope>::<phase>" whether timed or not (one check when no tool is loaded), so
  Nsight and Kokkos Tools show the same names as times(). Timed phases are fenced before and after:
  the fences cost a few microseconds each and serialise the streams, so production runs leave timing off.

  A distributed driver passes its own synchronisation (fences of both streams and a barrier over the
  ranks), so a phase's time is the slowest rank's.
*/
class PhaseTimer
{
  public:
    PhaseTimer() = default;

    //! \param scope prefix of the profiling regions ("morula::mechanics::Proliferation")
    PhaseTimer( std::string scope, std::initializer_list<const char*> phases,
                std::initializer_list<const char*> counts = {} )
        : m_scope( std::move( scope ) )
        , m_phases( phases.begin(), phases.end() )
        , m_counts( counts.begin(), counts.end() )
        , m_seconds( phases.size(), 0.0 )
        , m_values( counts.size(), 0 )
    {
        for ( const auto& name : m_phases )
            m_regions.push_back( m_scope + "::" + name );
    }

    //! From name lists held elsewhere (a model's phase declaration, core::ModelDriver).
    template <class PhaseNames, class CountNames>
    PhaseTimer( std::string scope, const PhaseNames& phases, const CountNames& counts )
        : m_scope( std::move( scope ) )
        , m_phases( std::begin( phases ), std::end( phases ) )
        , m_counts( std::begin( counts ), std::end( counts ) )
        , m_seconds( m_phases.size(), 0.0 )
        , m_values( m_counts.size(), 0 )
    {
        for ( const auto& name : m_phases )
            m_regions.push_back( m_scope + "::" + name );
    }

    /*!
      \brief Runs `op` as phase `phase`; when `timed`, calls `sync()` before and after and adds the
      seconds between the two. Returns what `op` returns.
    */
    template <class Sync, class Op>
    auto run_synced( bool timed, int phase, Sync&& sync, Op&& op )
    {
        compat::ScopedRegion region( m_regions[check( phase )] );
        if ( !timed )
            return op();
        sync();
        const auto t0 = std::chrono::steady_clock::now();
        const auto stop = [&] {
            sync();
            m_seconds[phase] += std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        };
        if constexpr ( std::is_void_v<decltype( op() )> )
        {
            op();
            stop();
        }
        else
        {
            auto result = op();
            stop();
            return result;
        }
    }

    //! run_synced() with `exec.fence()` as the synchronisation.
    template <class ExecutionSpace, class Op>
    auto run( bool timed, int phase, const ExecutionSpace& exec, Op&& op )
    {
        return run_synced( timed, phase, [&exec] { exec.fence(); }, std::forward<Op>( op ) );
    }

    //! Adds `n` to count `index` (drivers add their counts on timed steps only, as they add seconds).
    void add( int index, long long n ) { m_values[check_count( index )] += n; }
    //! Counts a timed step.
    void count_step() { ++m_steps; }
    //! Forgets every time and count (after warm-up steps, say); the names stay.
    void reset()
    {
        m_seconds.assign( m_seconds.size(), 0.0 );
        m_values.assign( m_values.size(), 0 );
        m_steps = 0;
    }

    const std::string& scope() const { return m_scope; }
    int num_phases() const { return static_cast<int>( m_phases.size() ); }
    const std::string& phase_name( int phase ) const { return m_phases[check( phase )]; }
    double seconds( int phase ) const { return m_seconds[check( phase )]; }
    //! Seconds of the phase called `name`. \throws core::InputError if no phase has that name
    double seconds( std::string_view name ) const { return m_seconds[find( m_phases, name, "phase" )]; }
    //! Sum over every phase.
    double total() const
    {
        double sum = 0;
        for ( double s : m_seconds )
            sum += s;
        return sum;
    }
    //! Sum over the phases listed.
    double sum( std::initializer_list<int> phases ) const
    {
        double s = 0;
        for ( int p : phases )
            s += seconds( p );
        return s;
    }
    //! Timed steps since construction or reset().
    long long steps() const { return m_steps; }

    int num_counts() const { return static_cast<int>( m_counts.size() ); }
    const std::string& count_name( int index ) const { return m_counts[check_count( index )]; }
    long long count( int index ) const { return m_values[check_count( index )]; }
    //! \throws core::InputError if no count has that name
    long long count( std::string_view name ) const { return m_values[find( m_counts, name, "count" )]; }

  private:
    int check( int phase ) const
    {
        if ( phase < 0 || phase >= num_phases() )
            throw InputError( detail::concat( m_scope, ": no phase ", phase, " (", num_phases(), " phases)" ) );
        return phase;
    }
    int check_count( int index ) const
    {
        if ( index < 0 || index >= num_counts() )
            throw InputError( detail::concat( m_scope, ": no count ", index, " (", num_counts(), " counts)" ) );
        return index;
    }
    std::size_t find( const std::vector<std::string>& names, std::string_view name, const char* what ) const
    {
        for ( std::size_t i = 0; i < names.size(); ++i )
            if ( names[i] == name )
                return i;
        std::string known;
        for ( const auto& n : names )
            known += ( known.empty() ? "" : ", " ) + n;
        throw InputError( detail::concat( m_scope, ": no ", what, " called '", name, "' (expected one of: ", known, ")" ) );
    }

    std::string m_scope;
    std::vector<std::string> m_phases, m_counts, m_regions;
    std::vector<double> m_seconds;
    std::vector<long long> m_values;
    long long m_steps = 0;
};

} // namespace morula::core

#endif
