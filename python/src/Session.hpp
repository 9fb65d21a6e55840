// The Python module's Kokkos session: Kokkos is initialised once (on import, or by morula.initialize()
// with arguments) and finalised once (morula.finalize(), or at interpreter exit). Everything the module
// hands out that holds Kokkos memory registers here, so that finalisation first releases it (a View that
// outlives Kokkos::finalize aborts the program), and so that using it afterwards raises instead of touching
// freed memory.
#ifndef MORULA_PYTHON_SESSION_HPP
#define MORULA_PYTHON_SESSION_HPP

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace morula::python
{
class Session
{
  public:
    //! The interpreter's one session (the module is the program here; the library keeps no global state).
    static Session& get();

    //! Initialises Kokkos with command-line style arguments (e.g. "--kokkos-num-threads=4"); a no-op
    //! with the same arguments when already initialised. Throws RuntimeError after finalize().
    void initialize( const std::vector<std::string>& args );
    //! Releases everything registered, then finalises Kokkos (if this module initialised it).
    void finalize();
    bool initialized() const { return m_state == State::running; }
    bool finalized() const { return m_state == State::finalized; }

    //! Throws RuntimeError naming `what` unless Kokkos is running (initialising it if it never was).
    void require( const char* what );

    //! Registers `release` to run at finalize(); returns the key for forget().
    std::size_t remember( std::function<void()> release );
    void forget( std::size_t key );

  private:
    enum class State
    {
        fresh,
        running,
        finalized
    };
    State m_state = State::fresh;
    bool m_owns_kokkos = false;
    std::size_t m_next = 0;
    std::map<std::size_t, std::function<void()>> m_releases;
};

/*!
  A driver or solver owned by Python: the object itself, released at finalize(); `get()` raises after
  that. `generation()` counts the changes that may move or resize the object's arrays (steps, restarts),
  so that the arrays handed out before a change can tell they are stale (python/morula/_arrays.py).
*/
template <class T>
class Owned
{
  public:
    template <class... Args>
    explicit Owned( const char* what, Args&&... args )
        : m_what( what )
    {
        Session::get().require( what );
        m_object = std::make_unique<T>( std::forward<Args>( args )... );
        m_key = Session::get().remember( [this] { m_object.reset(); } );
    }
    Owned( const Owned& ) = delete;
    Owned& operator=( const Owned& ) = delete;
    ~Owned() { Session::get().forget( m_key ); }

    T& get()
    {
        if ( !m_object )
            Session::get().require( m_what );
        return *m_object;
    }
    const T& get() const { return const_cast<Owned*>( this )->get(); }

    //! The generation of the object's state; the arrays taken from it keep a reference to compare.
    std::shared_ptr<const long long> generation() const { return m_generation; }
    void changed() { ++*m_generation; }

  private:
    const char* m_what;
    std::unique_ptr<T> m_object;
    std::size_t m_key = 0;
    std::shared_ptr<long long> m_generation = std::make_shared<long long>( 0 );
};
} // namespace morula::python

#endif
