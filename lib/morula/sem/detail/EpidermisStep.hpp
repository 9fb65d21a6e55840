#ifndef MORULA_SEM_DETAIL_EPIDERMISSTEP_HPP
#define MORULA_SEM_DETAIL_EPIDERMISSTEP_HPP
/*!
  \file EpidermisStep.hpp
  \brief The kernels of one Epidermis step and their launches, shared by a plain step
  (Epidermis::step_phases) and a chunk's recorded steps (Epidermis::advance), so that both launch the same
  kernels in the same order. Internal: users step the model through its driver.
*/

#include <morula/core/LaunchPolicy.hpp>
#include <morula/sem/SemMechanics.hpp>
#include <morula/sem/detail/SemKernels.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace morula
{
namespace sem
{
namespace detail
{
//! The kernels of one step from positions x into out (guarded by step j >= 0 inside a chunk).
template <class Scalar, class MemorySpace>
struct EpidermisStepKernels
{
    CellGeometryFunctor<Scalar, MemorySpace> geometry;
    CellInputsFunctor<Scalar, MemorySpace> counts, inputs;
    typename SemMechanics<Scalar, MemorySpace>::Stages stages;
    // Optional: a default-constructed GeneStageFunctor builds an EpidermisGeneNetwork, whose constructor
    // allocates and fills five device Views, allocations and synchronous copies that every plain step
    // paid before this was optional (docs/performance.md, "The host out of the time loop (issue #26)"
    // and "Design choices measured (moved from source comments, issue #46)").
    std::optional<GeneStageFunctor<MemorySpace>> gene_first, gene_last;
    int cells = 0;
    bool genes = false;
    bool distribute = false;
    bool rk2 = true;
};

//! @{ One step's kernels after the geometry, in step order: neighbour inputs, element stages, gene stages.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void launch_inputs( const ExecutionSpace& exec, const EpidermisStepKernels<Scalar, MemorySpace>& k )
{
    using policy = core::LaunchRange<ExecutionSpace>;
    if ( !k.genes )
        return;
    if ( k.distribute )
        Kokkos::parallel_for( "morula::sem::count_cell_neighbors", policy( exec, 0, k.cells ), k.counts );
    Kokkos::parallel_for( "morula::sem::neighbor_inputs", policy( exec, 0, k.cells ), k.inputs );
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
void launch_mechanics( const ExecutionSpace& exec, const EpidermisStepKernels<Scalar, MemorySpace>& k,
                       const Kokkos::View<Scalar, MemorySpace>& metric_out )
{
    using Mechanics = SemMechanics<Scalar, MemorySpace>;
    if ( k.rk2 )
        Mechanics::launch_stage( exec, k.stages, false, metric_out );
    Mechanics::launch_stage( exec, k.stages, true, metric_out );
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
void launch_genes( const ExecutionSpace& exec, const EpidermisStepKernels<Scalar, MemorySpace>& k )
{
    using policy = core::LaunchRange<ExecutionSpace>;
    if ( !k.genes )
        return;
    if ( k.rk2 )
        Kokkos::parallel_for( "morula::sem::gene_half_step", policy( exec, 0, k.cells ), *k.gene_first );
    Kokkos::parallel_for( "morula::sem::gene_step", policy( exec, 0, k.cells ), *k.gene_last );
}
//! @}

//! A chunk's step: its guarded geometry, then the kernels above.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void launch_step( const ExecutionSpace& exec, const EpidermisStepKernels<Scalar, MemorySpace>& k,
                  const Kokkos::View<Scalar, MemorySpace>& metric_out )
{
    Kokkos::parallel_for( "morula::sem::cell_geometry", core::LaunchRange<ExecutionSpace>( exec, 0, k.cells ),
                          k.geometry );
    launch_inputs( exec, k );
    launch_mechanics( exec, k, metric_out );
    launch_genes( exec, k );
}

//! The recorded work of a chunk: the guard reset, then every step's kernels.
template <class ExecutionSpace, class Scalar, class MemorySpace>
struct EpidermisChunkOperation
{
    std::vector<EpidermisStepKernels<Scalar, MemorySpace>> steps;
    std::vector<Kokkos::View<Scalar, MemorySpace>> metrics;
    Kokkos::View<int, MemorySpace> failed;

    void operator()( const ExecutionSpace& e ) const
    {
        Kokkos::parallel_for( "morula::sem::chunk_reset", core::LaunchRange<ExecutionSpace>( e, 0, 1 ),
                              ResetGuardFunctor<MemorySpace>{ failed } );
        for ( std::size_t j = 0; j < steps.size(); ++j )
            launch_step( e, steps[j], metrics[j] );
    }
};

} // namespace detail
} // namespace sem
} // namespace morula

#endif
