/*!
  \file Workspace.hpp
  \brief Where one system's vectors and matrices live inside the integrator's shared workspace: the
         layout (WorkspaceMap), the vector slots RKF45, BDF and BiCGStab share (Slot), and the addressing
         of system s's slice (SystemWorkspace), interleaved across systems or contiguous per system.
*/
#ifndef MORULA_ODE_DETAIL_WORKSPACE_HPP
#define MORULA_ODE_DETAIL_WORKSPACE_HPP

#include <morula/ode/detail/VectorOps.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace morula::ode::detail
{

//! Where each per-system array starts inside one system's slice of the workspace (in elements).
struct WorkspaceMap
{
    int n = 0, m = 0;
    int vectors = 0;          // number of length-n vectors
    long matrix_length = 0;   // n*n (dense) or nonzeros (sparse)
    long rates = 0, constants = 0, jacobian = 0, newton_matrix = 0, per_system = 0;

    WorkspaceMap() = default;
    WorkspaceMap( int species, int reactions, bool sparse, long nonzeros )
        : n( species ), m( reactions )
    {
        vectors = sparse ? 25 : 15;
        matrix_length = sparse ? nonzeros : long( n ) * n;
        rates = long( vectors ) * n;
        constants = rates + m;
        jacobian = constants + m;
        newton_matrix = jacobian + matrix_length;
        per_system = newton_matrix + matrix_length;
    }
};

// Vector slots. RKF45 and BDF share them: the current state is slot 0 in both (BDF's D_0).
enum Slot : int
{
    slot_x = 0,          // state (RKF45) = D_0 (BDF)
    slot_stage_k1 = 1,   // RKF45 stages k1..k6 in 1..6 (BDF's D_1..D_6 while in BDF)
    slot_stage_input = 7,
    slot_new_state = 8,
    slot_bdf_y = 8,      // BDF: Newton iterate (RKF45's new state is not live in BDF)
    slot_bdf_d = 9,
    slot_bdf_f = 10,     // BDF: f, then the Newton right-hand side, then dy
    slot_bdf_scale = 11,
    slot_bdf_psi = 12,
    slot_bdf_predict = 13,
    slot_tmp = 14,
    slot_krylov = 15     // BiCGStab: 15..23 and the inverse diagonal in 24
};

/*!
  The workspace of every system and how system s finds its part of it. In batched mode (interleaved)
  element e of system s is at workspace[e * systems + s], so a warp's threads - neighbouring systems -
  read neighbouring addresses; in team mode (not interleaved) system s owns one contiguous slice,
  s - first_system from the start: the batched on-chip layout points a copy of the integrator at one
  system's slice of team scratch memory with first_system = s.
*/
template <class MemorySpace>
struct SystemWorkspace
{
    WorkspaceMap map;
    Kokkos::View<double*, MemorySpace> workspace;
    Kokkos::View<int*, MemorySpace> pivots;
    long systems = 1;
    long first_system = 0;
    bool interleaved = true;

    KOKKOS_INLINE_FUNCTION Strided<double> at( long s, long offset ) const
    {
        if ( interleaved )
            return { workspace.data() + offset * systems + s, static_cast<std::ptrdiff_t>( systems ) };
        return { workspace.data() + ( s - first_system ) * map.per_system + offset, 1 };
    }
    KOKKOS_INLINE_FUNCTION Strided<double> vec( long s, int slot ) const { return at( s, long( slot ) * map.n ); }
    KOKKOS_INLINE_FUNCTION Strided<int> pivot_vec( long s ) const
    {
        if ( interleaved )
            return { pivots.data() + s, static_cast<std::ptrdiff_t>( systems ) };
        return { pivots.data() + ( s - first_system ) * map.n, 1 };
    }
    KOKKOS_INLINE_FUNCTION static Strided<const double> cv( const Strided<double>& v ) { return { v.data, v.stride }; }
};

} // namespace morula::ode::detail

#endif
