/*!
  \file StepGraph.hpp
  \brief Capture a sequence of kernel launches once and replay it: the time loop's launches without the
  host in between.
*/
#ifndef MORULA_CORE_STEPGRAPH_HPP
#define MORULA_CORE_STEPGRAPH_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <functional>
#include <memory>
#include <utility>

namespace morula::core
{

/*!
  \brief Work recorded once and replayed many times on one execution space instance.

  `record(exec, op)` runs nothing: it keeps `op`, which enqueues kernels on the instance it is given.
  `replay(exec)` then enqueues all of op's work again. Where the backend has device graphs
  (compat::has_device_graph: Kokkos >= 4.7's Graph with its CUDA stream-capture node) the first replay
  captures op's launches into one CUDA graph and every replay submits that graph: one submission instead
  of one launch per kernel, and the GPU runs the kernels back to back with the host free. Elsewhere
  (host backends, Kokkos 3.4, HIP) every replay calls op again: the same kernels, launched one by one.
  Both paths run the same kernels on the same data, so they give the same results bit for bit.

  What op may do, so that both paths are the same: enqueue kernels and device-to-device copies on the
  instance it is given, with light-weight launches (core::LaunchRange, core::LaunchTeam) or small
  functors, and reductions into device Views only. It must not wait for the device, allocate, copy to or
  from the host, read a device value, or throw: a captured graph freezes the kernels' arguments (View
  pointers, sizes, host scalars) as they were at capture. Whatever changes them (a capacity that grows, a
  cell count that changes) must call invalidate() before the next replay; the caller keeps the host-side
  state that op's work changes (step counters, which of two buffers is current) in step by itself.

  A kernel that has never run before its capture may allocate its reduction scratch during the capture,
  which a CUDA graph forbids: run op once outside the graph first (the drivers' first, plain step does).
*/
template <class ExecutionSpace>
class StepGraph
{
  public:
    using operation = std::function<void( const ExecutionSpace& )>;

    StepGraph() = default;

    //! Keeps `op` for replay; drops any earlier recording and its graph.
    void record( operation op )
    {
        m_op = std::move( op );
        invalidate();
    }

    //! Forgets the captured graph (the next replay captures op again); op itself is kept.
    void invalidate() { m_graph.reset(); }

    //! Whether record() was called.
    bool recorded() const { return static_cast<bool>( m_op ); }
    //! Whether a device graph is held now (false before the first replay and on host backends).
    bool captured() const { return m_graph != nullptr; }
    //! Whether the next replay on exec submits the graph held now (false: it captures first).
    bool current( const ExecutionSpace& exec ) const
    {
        if constexpr ( uses_device_graph() )
            return m_graph && m_graph->runs_on( exec );
        else
            return false;
    }
    //! Whether replays go through a device graph on this backend.
    static constexpr bool uses_device_graph() { return compat::has_device_graph<ExecutionSpace>; }
    //! Number of captures so far (each costs about one plain run of op plus the graph's instantiation).
    long long captures() const { return m_captures; }

    /*!
      Enqueues the recorded work on `exec`. A graph captured on another instance, or before Kokkos
      reallocated the instance's reduction or team scratch buffers (a later, larger kernel does that), is
      captured again first: its kernels would point at the old buffers.
    */
    void replay( const ExecutionSpace& exec )
    {
        if ( !m_op )
            throw InputError( "StepGraph::replay: nothing was recorded" );
        if constexpr ( uses_device_graph() )
        {
            if ( !m_graph || !m_graph->runs_on( exec ) )
            {
                m_graph = std::make_unique<compat::DeviceGraph<ExecutionSpace>>( exec, m_op );
                ++m_captures;
            }
            m_graph->submit( exec );
        }
        else
            m_op( exec );
    }

  private:
    operation m_op;
    std::unique_ptr<compat::DeviceGraph<ExecutionSpace>> m_graph;
    long long m_captures = 0;
};

} // namespace morula::core

#endif // MORULA_CORE_STEPGRAPH_HPP
