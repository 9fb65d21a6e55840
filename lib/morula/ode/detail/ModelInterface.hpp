/*!
  \file ModelInterface.hpp
  \brief How the integrator talks to a model: its right-hand side and analytic Jacobian, dense or on
         the CSR pattern, through one set of overloads for every kind of model.

  A model has `species`, `reactions` (the length of its per-system parameter vector, also the length of
  its scratch vector), `jacobian_nonzeros_count`, the Views `jacobian_row_offsets`, `jacobian_columns`,
  `jacobian_diagonal` (CSR pattern, diagonal stored), `rate_constants` (default parameters) and
  `initial_state`, and either member functions `rhs(ops, params, x, scratch, f)`,
  `jacobian_values(ops, params, x, values)` and `dense_jacobian(ops, params, x, J)` (a general model,
  e.g. EpidermisGeneNetwork), or the overloads below (MassActionSystem, whose kernels live in
  MassActionKernels.hpp).
*/
#ifndef MORULA_ODE_DETAIL_MODELINTERFACE_HPP
#define MORULA_ODE_DETAIL_MODELINTERFACE_HPP

#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/detail/MassActionKernels.hpp>
#include <morula/ode/detail/VectorOps.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

template <class Ops, class Model>
KOKKOS_INLINE_FUNCTION void model_rhs( const Ops& ops, const Model& model, const Strided<const double>& params,
                                       const Strided<const double>& x, const Strided<double>& scratch,
                                       const Strided<double>& f )
{
    model.rhs( ops, params, x, scratch, f );
}
template <class Ops, class MemorySpace>
KOKKOS_INLINE_FUNCTION void model_rhs( const Ops& ops, const MassActionSystem<MemorySpace>& model,
                                       const Strided<const double>& params, const Strided<const double>& x,
                                       const Strided<double>& scratch, const Strided<double>& f )
{
    evaluate_rhs( ops, model, params, x, scratch, f );
}
template <class Ops, class Model>
KOKKOS_INLINE_FUNCTION void model_jacobian_values( const Ops& ops, const Model& model, const Strided<const double>& params,
                                                   const Strided<const double>& x, const Strided<double>& values )
{
    model.jacobian_values( ops, params, x, values );
}
template <class Ops, class MemorySpace>
KOKKOS_INLINE_FUNCTION void model_jacobian_values( const Ops& ops, const MassActionSystem<MemorySpace>& model,
                                                   const Strided<const double>& params, const Strided<const double>& x,
                                                   const Strided<double>& values )
{
    evaluate_jacobian_values( ops, model, params, x, values );
}
template <class Ops, class Model>
KOKKOS_INLINE_FUNCTION void model_dense_jacobian( const Ops& ops, const Model& model, const Strided<const double>& params,
                                                  const Strided<const double>& x, const Strided<double>& J )
{
    model.dense_jacobian( ops, params, x, J );
}
template <class Ops, class MemorySpace>
KOKKOS_INLINE_FUNCTION void model_dense_jacobian( const Ops& ops, const MassActionSystem<MemorySpace>& model,
                                                  const Strided<const double>& params, const Strided<const double>& x,
                                                  const Strided<double>& J )
{
    evaluate_dense_jacobian( ops, model, params, x, J );
}

} // namespace morula::ode::detail

#endif
