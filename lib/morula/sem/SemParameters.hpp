/*!
  \file SemParameters.hpp
  \brief Parameters of the subcellular element method (SEM) of Christley et al. (2010, Table 1):
  the Morse potentials between elements of one cell, between elements of different cells and between
  adhesive elements and the basement membrane, and the time stepping.
*/
#ifndef MORULA_SEM_SEMPARAMETERS_HPP
#define MORULA_SEM_SEMPARAMETERS_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <optional>
#include <string>

namespace morula::sem
{

/*!
  \brief Morse potential V(r) = U0 exp(-r / xi1) - W0 exp(-r / xi2): repulsive at short range (U0, xi1),
  attractive at longer range (W0, xi2).
*/
struct MorsePotential
{
    double U0 = 0.3;
    double xi1 = 0.1;
    double W0 = 0.12;
    double xi2 = 0.36;

    template <class Scalar>
    KOKKOS_INLINE_FUNCTION Scalar value( Scalar r ) const
    {
        return Scalar( U0 ) * compat::exp( -r / Scalar( xi1 ) ) -
               Scalar( W0 ) * compat::exp( -r / Scalar( xi2 ) );
    }

    //! dV/dr.
    template <class Scalar>
    KOKKOS_INLINE_FUNCTION Scalar derivative( Scalar r ) const
    {
        return -Scalar( U0 / xi1 ) * compat::exp( -r / Scalar( xi1 ) ) +
               Scalar( W0 / xi2 ) * compat::exp( -r / Scalar( xi2 ) );
    }

    /*!
      \brief The distance where V changes sign (V >= 0 closer in), or infinity when V never becomes
      negative. The positive Morse potential PV = max(V, 0) of the paper vanishes beyond it.
    */
    double zero_crossing() const
    {
        if ( !( W0 > 0 ) )
            return HUGE_VAL;
        if ( !( U0 > 0 ) )
            return 0.0;
        // U0 e^{-r/xi1} = W0 e^{-r/xi2}  <=>  r (1/xi1 - 1/xi2) = ln(U0 / W0)
        const double rate = 1.0 / xi1 - 1.0 / xi2;
        const double log_ratio = std::log( U0 / W0 );
        if ( rate > 0 )
            return log_ratio > 0 ? log_ratio / rate : 0.0;
        if ( rate < 0 ) // the attraction decays faster: V < 0 only at short range when U0 < W0
            return log_ratio >= 0 ? HUGE_VAL : 0.0;
        return log_ratio >= 0 ? HUGE_VAL : 0.0;
    }

    //! Distance of the minimum of V (dV/dr = 0), or 0 when V has none at r > 0.
    double minimum() const
    {
        // U0/xi1 e^{-r/xi1} = W0/xi2 e^{-r/xi2}
        const double rate = 1.0 / xi1 - 1.0 / xi2;
        const double log_ratio = std::log( ( U0 / xi1 ) / ( W0 / xi2 ) );
        if ( !( rate > 0 ) || !( log_ratio > 0 ) )
            return 0.0;
        return log_ratio / rate;
    }

    //! Largest |d^2V/dr^2| over r >= 0 (at r = 0 for the repulsive core): the stiffness of a pair.
    double max_curvature() const { return std::fabs( U0 / ( xi1 * xi1 ) - W0 / ( xi2 * xi2 ) ); }

    void validate( const std::string& where ) const
    {
        auto finite_positive = []( double v ) { return std::isfinite( v ) && v > 0; };
        if ( !finite_positive( xi1 ) || !finite_positive( xi2 ) )
            throw core::InputError( core::detail::concat( where, ": the Morse lengths xi1 = ", xi1,
                                                          " and xi2 = ", xi2,
                                                          " must be finite and > 0" ) );
        if ( !std::isfinite( U0 ) || !( U0 >= 0 ) || !std::isfinite( W0 ) || !( W0 >= 0 ) )
            throw core::InputError( core::detail::concat( where, ": the Morse strengths U0 = ", U0,
                                                          " and W0 = ", W0,
                                                          " must be finite and >= 0" ) );
    }
};

//! Time stepping of the equations of motion (and of the gene network).
enum class TimeScheme : int
{
    runge_kutta2, //!< the paper's 2nd-order Runge-Kutta (midpoint): X + dt f(X + dt/2 f(X))
    euler         //!< forward Euler, as Newman (2005)
};

inline const char* to_string( TimeScheme i ) { return i == TimeScheme::euler ? "euler" : "rk2"; }

/*!
  \brief Mechanics of the subcellular element method, with Table 1 of Christley et al. (2010) as defaults.

  The equation of motion of element i of cell a is overdamped:
    dX_i/dt = - grad_i sum_{j in a, j != i} V_intra(|X_i - X_j|)
              - grad_i sum_{b != a} sum_{j in b, |X_i - X_j| < inter_cutoff} PV_inter(|X_i - X_j|)
              - [type(i) == 1] grad_i V_membrane(|z_i|)
  with PV = max(V, 0), the repulsive-only ("positive") Morse potential. The membrane potential uses the
  intracellular parameters on the z distance, as in the paper's code.
*/
struct SemParameters
{
    MorsePotential intra{ 0.3, 0.1, 0.12, 0.36 };  //!< Table 1, between elements of one cell
    MorsePotential inter{ 0.3, 0.05, 0.12, 0.24 }; //!< Table 1, between elements of different cells
    MorsePotential membrane{ 0.3, 0.1, 0.12, 0.36 }; //!< type-1 elements and the plane z = 0
    //! Inter-cell pairs further apart are skipped; <= 0 means the zero crossing of V_inter, beyond
    //! which PV_inter vanishes anyway (0.0579 for Table 1), so the default changes no force.
    double inter_cutoff = 0;
    double time_step = 0.01; //!< see docs/models/epidermis.md for its stability
    TimeScheme integrator = TimeScheme::runge_kutta2;
    /*!
      Verlet skin of the inter-cell neighbour list, as a multiple of the inter-cell cutoff. Unset by
      default: SemMechanics then takes default_skin_factor() of its backend, because the best value
      differs. On a GPU a list rebuild ends a recorded chunk of steps and costs a host round trip, so a
      long-lived list (3 cutoffs) wins although every step sums more candidate pairs; on CPU cores a
      rebuild is just more work in the same loop and the extra candidates dominate (1 cutoff).
      docs/performance.md ("Defaults per backend") has the measurements. The list is longer with a
      larger skin, but the forces are the same (pairs beyond the cutoff are skipped); the sum order is not.
    */
    std::optional<double> skin_factor;

    double effective_inter_cutoff() const
    {
        return inter_cutoff > 0 ? inter_cutoff : inter.zero_crossing();
    }

    void validate( const std::string& where ) const
    {
        intra.validate( where + " (intracellular potential)" );
        inter.validate( where + " (intercellular potential)" );
        membrane.validate( where + " (membrane potential)" );
        const double rc = effective_inter_cutoff();
        if ( !std::isfinite( rc ) || !( rc > 0 ) )
            throw core::InputError( core::detail::concat(
                where, ": the intercellular cutoff is ", rc,
                " (the positive Morse potential has no finite range with these parameters); set "
                "inter_cutoff > 0" ) );
        if ( !std::isfinite( time_step ) || !( time_step > 0 ) )
            throw core::InputError( core::detail::concat( where, ": time_step = ", time_step,
                                                          " (expected a finite value > 0)" ) );
        if ( skin_factor && ( !std::isfinite( *skin_factor ) || !( *skin_factor > 0 ) ) )
            throw core::InputError( core::detail::concat( where, ": skin_factor = ", *skin_factor,
                                                          " (expected a finite value > 0)" ) );
    }
};

/*!
  \brief The inter-cell list's skin (in cutoffs) when SemParameters::skin_factor is unset: 3 where
  ExecutionSpace is a GPU, 1 where it runs on the host (Serial, OpenMP, Threads). See
  SemParameters::skin_factor for why they differ.
*/
template <class ExecutionSpace>
constexpr double default_skin_factor()
{
    return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecutionSpace::memory_space>::accessible ? 1.0
                                                                                                           : 3.0;
}

//! `p` with every backend-dependent default filled in for the backend of MemorySpace.
template <class MemorySpace>
SemParameters resolved_for( SemParameters p )
{
    if ( !p.skin_factor )
        p.skin_factor = default_skin_factor<typename MemorySpace::execution_space>();
    return p;
}

} // namespace morula::sem

#endif
