/*!
  \file MassActionSystem.hpp
  \brief A reaction network compiled into the sparse structures the integrators read on the device.

  dX/dt = (B - A)^T [K o X^A] is evaluated in two gathers, each free of atomics:
   1. per reaction r: rate_r = k_r prod_p x_{s_p}^{a_p} over r's reactant factors (CSR by reaction:
      reactant_offsets, reactant_species, reactant_order - the role of LASSIE's O_A/V_A);
   2. per species i: f_i = sum_t nu_t rate_{r_t} over the reactions that change i (CSR by species:
      species_term_offsets, species_term_reaction, species_term_coefficient - LASSIE's O_H/V_H).
  The analytic Jacobian comes from the same structure: its sparsity pattern (CSR by row, diagonal always
  stored because BDF factors I - cJ) and, per nonzero (i, q), the list of (reaction r, reactant factor p,
  nu_ir) whose sum nu_ir d rate_r / d x_q gives J_iq, again a gather with no atomics.
*/
#ifndef MORULA_ODE_MASSACTIONSYSTEM_HPP
#define MORULA_ODE_MASSACTIONSYSTEM_HPP

#include <morula/ode/ReactionNetwork.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

namespace morula::ode
{

//! The compiled structure on the host (plain vectors); MassActionSystem copies it to a memory space.
struct MassActionStructure
{
    int species = 0;
    int reactions = 0;
    int max_order = 0; // largest total reactant order of any reaction
    std::vector<int> reactant_offsets, reactant_species, reactant_order;
    std::vector<double> rate_constants;
    std::vector<int> species_term_offsets, species_term_reaction;
    std::vector<double> species_term_coefficient;
    std::vector<int> reaction_term_offsets, reaction_term_species; // net stoichiometry by reaction
    std::vector<double> reaction_term_coefficient;
    std::vector<int> jacobian_row_offsets, jacobian_columns, jacobian_diagonal;
    std::vector<int> jacobian_contribution_offsets, contribution_reaction, contribution_factor;
    std::vector<double> contribution_coefficient;
    std::vector<double> initial_state;
};

//! Builds the structure; validates the network first (core::InputError on malformed input).
MassActionStructure compile_mass_action( const ReactionNetwork& network );

/*!
  \brief The device form of a MassActionStructure. Cheap to copy (Views); safe to capture in kernels.
*/
template <class MemorySpace>
struct MassActionSystem
{
    using memory_space = MemorySpace;
    template <class T>
    using view = Kokkos::View<T*, MemorySpace>;

    int species = 0;
    int reactions = 0;
    int max_order = 0;
    int jacobian_nonzeros_count = 0;
    view<int> reactant_offsets, reactant_species, reactant_order;
    view<double> rate_constants;
    view<int> species_term_offsets, species_term_reaction;
    view<double> species_term_coefficient;
    view<int> jacobian_row_offsets, jacobian_columns, jacobian_diagonal;
    view<int> jacobian_contribution_offsets, contribution_reaction, contribution_factor;
    view<double> contribution_coefficient;
    view<double> initial_state;

    MassActionSystem() = default;
    explicit MassActionSystem( const MassActionStructure& s )
        : species( s.species )
        , reactions( s.reactions )
        , max_order( s.max_order )
        , jacobian_nonzeros_count( static_cast<int>( s.jacobian_columns.size() ) )
    {
        reactant_offsets = copy( "reactant_offsets", s.reactant_offsets );
        reactant_species = copy( "reactant_species", s.reactant_species );
        reactant_order = copy( "reactant_order", s.reactant_order );
        rate_constants = copy( "rate_constants", s.rate_constants );
        species_term_offsets = copy( "species_term_offsets", s.species_term_offsets );
        species_term_reaction = copy( "species_term_reaction", s.species_term_reaction );
        species_term_coefficient = copy( "species_term_coefficient", s.species_term_coefficient );
        jacobian_row_offsets = copy( "jacobian_row_offsets", s.jacobian_row_offsets );
        jacobian_columns = copy( "jacobian_columns", s.jacobian_columns );
        jacobian_diagonal = copy( "jacobian_diagonal", s.jacobian_diagonal );
        jacobian_contribution_offsets = copy( "jacobian_contribution_offsets", s.jacobian_contribution_offsets );
        contribution_reaction = copy( "contribution_reaction", s.contribution_reaction );
        contribution_factor = copy( "contribution_factor", s.contribution_factor );
        contribution_coefficient = copy( "contribution_coefficient", s.contribution_coefficient );
        initial_state = copy( "initial_state", s.initial_state );
    }
    explicit MassActionSystem( const ReactionNetwork& network )
        : MassActionSystem( compile_mass_action( network ) )
    {
    }

  private:
    template <class T>
    static view<T> copy( const char* label, const std::vector<T>& v )
    {
        // Zero-length views still get a label; a reaction-free network is legal (nothing changes).
        view<T> d( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( "morula::ode::" ) + label ),
                   v.size() );
        Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h( v.data(), v.size() );
        Kokkos::deep_copy( d, h );
        return d;
    }
};

} // namespace morula::ode

#endif
