#include "Session.hpp"

#include <Kokkos_Core.hpp>

#include <stdexcept>

namespace morula::python
{
Session& Session::get()
{
    static Session session;
    return session;
}

void Session::initialize( const std::vector<std::string>& args )
{
    if ( m_state == State::finalized )
        throw std::runtime_error( "morula: Kokkos was finalized (morula.finalize() or interpreter exit) and cannot "
                                  "be initialized again in this process" );
    if ( m_state == State::running )
        return;
    if ( !Kokkos::is_initialized() )
    {
        // Kokkos::initialize takes argc/argv and may remove the arguments it understood.
        std::vector<std::string> storage{ "morula" };
        storage.insert( storage.end(), args.begin(), args.end() );
        std::vector<char*> argv;
        for ( auto& a : storage )
            argv.push_back( a.data() );
        int argc = static_cast<int>( argv.size() );
        Kokkos::initialize( argc, argv.data() );
        m_owns_kokkos = true;
    }
    m_state = State::running;
}

void Session::finalize()
{
    if ( m_state != State::running )
    {
        m_state = State::finalized;
        return;
    }
    // Release in reverse order of registration: arrays before the drivers they came from.
    while ( !m_releases.empty() )
    {
        auto last = std::prev( m_releases.end() );
        auto release = std::move( last->second );
        m_releases.erase( last );
        release();
    }
    if ( m_owns_kokkos && Kokkos::is_initialized() )
        Kokkos::finalize();
    m_state = State::finalized;
}

void Session::require( const char* what )
{
    if ( m_state == State::fresh )
        initialize( {} );
    if ( m_state == State::finalized )
        throw std::runtime_error( std::string( "morula: " ) + what +
                                  " cannot be used: Kokkos was finalized (morula.finalize() or interpreter exit)" );
}

std::size_t Session::remember( std::function<void()> release )
{
    const std::size_t key = ++m_next;
    m_releases.emplace( key, std::move( release ) );
    return key;
}

void Session::forget( std::size_t key ) { m_releases.erase( key ); }
} // namespace morula::python
