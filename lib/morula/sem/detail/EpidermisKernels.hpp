/*!
  \file EpidermisKernels.hpp
  \brief The fused kernels of an epidermis step: each element's Runge-Kutta stage and each cell's
  neighbour inputs and gene-network stage in one launch, with the chunk guard of Epidermis::advance.
*/
#ifndef MORULA_SEM_DETAIL_EPIDERMISKERNELS_HPP
#define MORULA_SEM_DETAIL_EPIDERMISKERNELS_HPP

#include <morula/sem/GeneCoupling.hpp>
#include <morula/sem/detail/SemKernels.hpp>

#include <Kokkos_Core.hpp>

namespace morula::sem::detail
{

/*!
  \brief Thread i runs element i's stage (i < num_elements) and cell i's work (i < num_cells): in the
  first stage the cell's neighbour inputs (when `with_inputs`) and its first gene stage, in the last its
  last gene stage. The element and cell parts touch disjoint data and are each the code of the separate
  kernels (SemMechanics::step, GeneCoupling::compute_inputs and step), so a fused step equals a separate
  one bit for bit; it saves the launches, which bound the model at Table 3's sizes.
*/
template <class Scalar, class MemorySpace>
struct FusedStageFunctor
{
    StageFunctor<Scalar, MemorySpace> elements;
    GeneStageFunctor<MemorySpace> genes;
    CellInputsFunctor<Scalar, MemorySpace> inputs;
    StepGuard<MemorySpace> guard;
    int num_elements = 0;
    int num_cells = 0; // 0 without the gene network
    bool with_inputs = false;

    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const
    {
        if ( guard.skip() )
            return;
        if ( i < num_elements )
            elements( i );
        if ( i < num_cells )
        {
            if ( with_inputs )
            {
                if ( !inputs.check( i ) )
                    return;
                inputs.compute( i );
            }
            genes( i );
        }
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int i, Scalar& metric ) const
    {
        if ( guard.skip() )
            return;
        if ( i < num_elements )
            elements( i, metric );
        if ( i < num_cells )
        {
            if ( with_inputs )
            {
                if ( !inputs.check( i ) )
                    return;
                inputs.compute( i );
            }
            genes( i );
        }
    }
};

} // namespace morula::sem::detail

#endif
