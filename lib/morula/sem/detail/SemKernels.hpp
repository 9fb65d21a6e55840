/*!
  \file SemKernels.hpp
  \brief Device functors of the subcellular element method: cell centres and adhesion, the pair visit
  shared by velocities and energy, and the Runge-Kutta stages.
*/
#ifndef MORULA_SEM_DETAIL_SEMKERNELS_HPP
#define MORULA_SEM_DETAIL_SEMKERNELS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>

#include <Kokkos_Core.hpp>

#include <limits>

namespace morula::sem::detail
{

/*!
  \brief Where a kernel sits in a chunk of steps run without the host (Epidermis::advance), or nowhere
  (step < 0: a plain step, whose checks the host makes).

  A chunk's check that fails at its step j (a list that is due, a position that is not finite) writes j
  into `failed` (the smallest failing step wins); every kernel of step j and later then returns at once,
  so the state after the chunk is exactly the state after its step j - 1, and the host runs step j as a
  plain step, with today's checks, rebuilds and exceptions. No state needs saving or restoring.
*/
template <class MemorySpace>
struct StepGuard
{
    Kokkos::View<int, MemorySpace> failed;
    int step = -1;

    KOKKOS_INLINE_FUNCTION bool in_chunk() const { return step >= 0; }
    //! True when an earlier check of the chunk (this step's or an earlier step's) failed.
    KOKKOS_INLINE_FUNCTION bool skip() const { return step >= 0 && failed() <= step; }
    KOKKOS_INLINE_FUNCTION void fail() const { Kokkos::atomic_fetch_min( &failed(), step ); }
};

//! Position along a periodic axis wrapped into [lo, hi); other axes unchanged.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar wrap( const core::Box<Scalar>& box, int d, Scalar x )
{
    if ( !box.is_periodic( d ) )
        return x;
    const Scalar L = box.length( d );
    Scalar w = x - L * compat::floor( ( x - box.lo[d] ) / L );
    // Rounding can land exactly on hi.
    if ( w >= box.hi[d] )
        w -= L;
    return w;
}

/*!
  \brief One thread per cell: the centre (mean of the element positions, unwrapped through minimum
  images relative to the cell's first element, so a cell split across a periodic boundary gets its true
  centre, then wrapped into the box) and the membrane adhesion A = sum of |z| over type-1 elements.
  Correct while every cell is smaller than half the box, which the model checks at start.
*/
template <class Scalar, class MemorySpace>
struct CellGeometryFunctor
{
    using tissue_type = Tissue<Scalar, MemorySpace>;
    typename tissue_type::position_view x;
    typename tissue_type::int_view offset, count, type;
    typename tissue_type::position_view centre;
    typename tissue_type::scalar_view adhesion;
    core::Box<Scalar> box;
    //! In a chunk: the element list's displacement bound after the previous step, and its limit skin / 2.
    StepGuard<MemorySpace> guard;
    Kokkos::View<Scalar, MemorySpace> metric;
    Scalar half_skin = 0;

    KOKKOS_INLINE_FUNCTION void operator()( const int c ) const
    {
        if ( guard.in_chunk() )
        {
            if ( guard.skip() )
                return;
            // The host's test of SemMechanics::prepare: a list that is due, or a non-finite position
            // (the bound is then infinite), ends the chunk before this step changes anything.
            if ( !( metric() <= half_skin ) )
            {
                guard.fail();
                return;
            }
        }
        const int b = offset( c );
        const int n = count( c );
        const Scalar ref[3] = { x( b, 0 ), x( b, 1 ), x( b, 2 ) };
        Scalar sum[3] = { 0, 0, 0 };
        Scalar a = 0;
        for ( int k = b; k < b + n; ++k )
        {
            for ( int d = 0; d < 3; ++d )
                sum[d] += box.minimum_image( d, x( k, d ) - ref[d] );
            if ( type( k ) == element_membrane )
                a += compat::fabs( x( k, 2 ) );
        }
        for ( int d = 0; d < 3; ++d )
            centre( c, d ) = wrap( box, d, ref[d] + sum[d] / Scalar( n ) );
        adhesion( c ) = a;
    }
};

//! Which interaction a visited pair belongs to.
enum PairKind : int
{
    pair_intra = 0,
    pair_inter = 1,
    pair_membrane = 2
};

/*!
  \brief Visits every interaction of element i: the other elements of its cell (all of them), the
  elements of other cells within the intercellular cutoff (through the Verlet list, or every element
  when `brute_force` is set - for tests and small systems), and the membrane for type-1 elements.
  f(kind, r, d) receives the distance r and the displacement d = x_i - x_j (minimum image; for the
  membrane d = (0, 0, z_i)).
*/
template <class Scalar, class MemorySpace>
struct PairVisitor
{
    using tissue_type = Tissue<Scalar, MemorySpace>;
    typename tissue_type::position_view x;
    typename tissue_type::int_view cell, type, offset, count;
    grid::NeighborListView<MemorySpace> list;
    core::Box<Scalar> box;
    Scalar inter_cutoff2 = 0;
    int num_elements = 0;
    bool brute_force = false;
    bool skip_intra = false; //!< the intra-cell pairs are summed elsewhere (IntraCellFunctor)

    template <class F>
    KOKKOS_INLINE_FUNCTION void visit( const int i, const F& f ) const
    {
        const Scalar xi[3] = { x( i, 0 ), x( i, 1 ), x( i, 2 ) };
        const int c = cell( i );
        const int b = offset( c );
        const int e = b + count( c );
        auto pair = [&]( const int j, const PairKind kind ) {
            Scalar d[3];
            Scalar r2 = 0;
            for ( int k = 0; k < 3; ++k )
            {
                d[k] = box.minimum_image( k, xi[k] - x( j, k ) );
                r2 += d[k] * d[k];
            }
            if ( kind == pair_inter && !( r2 < inter_cutoff2 ) )
                return;
            f( kind, compat::sqrt( r2 ), d );
        };
        if ( !skip_intra )
            for ( int j = b; j < e; ++j )
                if ( j != i )
                    pair( j, pair_intra );
        if ( brute_force )
        {
            for ( int j = 0; j < num_elements; ++j )
                if ( j < b || j >= e )
                    pair( j, pair_inter );
        }
        else
        {
            const auto end = list.end( i );
            for ( auto k = list.begin( i ); k < end; ++k )
            {
                const int j = list.neighbor( k );
                if ( cell( j ) != c )
                    pair( j, pair_inter );
            }
        }
        if ( type( i ) == element_membrane )
        {
            const Scalar d[3] = { 0, 0, xi[2] };
            f( pair_membrane, compat::fabs( xi[2] ), d );
        }
    }
};

/*!
  \brief dX_i/dt = -grad_i (potential): for each pair, -V'(r) d / r. The positive Morse potential acts
  only where V_inter >= 0. Coincident points (r = 0) exert no force: the direction is undefined.
*/
template <class Scalar, class MemorySpace>
struct VelocityEvaluator
{
    PairVisitor<Scalar, MemorySpace> pairs;
    MorsePotential intra, inter, membrane;
    //! With pairs.skip_intra: every element's intra-cell sum, which the other pairs are added to.
    typename Tissue<Scalar, MemorySpace>::position_view intra_sums;

    KOKKOS_INLINE_FUNCTION void operator()( const int i, Scalar v[3] ) const
    {
        for ( int k = 0; k < 3; ++k )
            v[k] = pairs.skip_intra ? intra_sums( i, k ) : Scalar( 0 );
        pairs.visit( i, [&]( const PairKind kind, const Scalar r, const Scalar* d ) {
            if ( !( r > Scalar( 0 ) ) )
                return;
            Scalar dvdr;
            if ( kind == pair_inter )
            {
                const Scalar e1 = compat::exp( -r / Scalar( inter.xi1 ) );
                const Scalar e2 = compat::exp( -r / Scalar( inter.xi2 ) );
                if ( !( Scalar( inter.U0 ) * e1 >= Scalar( inter.W0 ) * e2 ) )
                    return; // PV = 0 here
                dvdr = -Scalar( inter.U0 / inter.xi1 ) * e1 + Scalar( inter.W0 / inter.xi2 ) * e2;
            }
            else
                dvdr = ( kind == pair_intra ? intra : membrane ).derivative( r );
            const Scalar s = -dvdr / r;
            for ( int k = 0; k < 3; ++k )
                v[k] += s * d[k];
        } );
    }
};

/*!
  \brief The intra-cell sums of one cell's elements with each pair evaluated once and added to both
  (host backends, where one work item may own a whole cell: half the Morse evaluations of the gather,
  which GPUs keep because a thread per element needs no atomics). Element i receives its pairs in the
  order j = b, ..., e - 1 in which VelocityEvaluator sums them, and a pair's displacement and force
  change sign exactly from one side to the other (the minimum image and the products are odd in d), so
  every sum equals the gather's bit for bit; the other pairs are then added to it in the gather's order.
*/
template <class Scalar, class MemorySpace>
struct IntraCellFunctor
{
    using position_view = typename Tissue<Scalar, MemorySpace>::position_view;
    position_view x, sums;
    typename Tissue<Scalar, MemorySpace>::int_view offset, count;
    core::Box<Scalar> box;
    MorsePotential intra;
    StepGuard<MemorySpace> guard; //!< inside a chunk: nothing to do once a check of the chunk failed

    KOKKOS_INLINE_FUNCTION void operator()( const int c ) const
    {
        if ( guard.skip() )
            return;
        const int b = offset( c );
        const int e = b + count( c );
        for ( int i = b; i < e; ++i )
            for ( int k = 0; k < 3; ++k )
                sums( i, k ) = 0;
        for ( int i = b; i < e; ++i )
        {
            const Scalar xi[3] = { x( i, 0 ), x( i, 1 ), x( i, 2 ) };
            for ( int j = i + 1; j < e; ++j )
            {
                Scalar d[3];
                Scalar r2 = 0;
                for ( int k = 0; k < 3; ++k )
                {
                    d[k] = box.minimum_image( k, xi[k] - x( j, k ) );
                    r2 += d[k] * d[k];
                }
                const Scalar r = compat::sqrt( r2 );
                if ( !( r > Scalar( 0 ) ) )
                    continue;
                const Scalar s = -intra.derivative( r ) / r;
                for ( int k = 0; k < 3; ++k )
                {
                    sums( i, k ) += s * d[k];
                    sums( j, k ) -= s * d[k];
                }
            }
        }
    }
};

//! Potential energy of element i's interactions; pairs are shared by two elements, so they count half.
template <class Scalar, class MemorySpace>
struct EnergyEvaluator
{
    PairVisitor<Scalar, MemorySpace> pairs;
    MorsePotential intra, inter, membrane;

    KOKKOS_INLINE_FUNCTION void operator()( const int i, double& energy ) const
    {
        pairs.visit( i, [&]( const PairKind kind, const Scalar r, const Scalar* ) {
            const double rr = static_cast<double>( r );
            if ( kind == pair_intra )
                energy += 0.5 * intra.value( rr );
            else if ( kind == pair_inter )
            {
                const double v = inter.value( rr );
                if ( v > 0 )
                    energy += 0.5 * v;
            }
            else
                energy += membrane.value( rr );
        } );
    }
};

/*!
  \brief One Runge-Kutta stage: out_i = base_i + coeff * v(eval)_i. The final stage also reduces the
  quantity that decides the next Verlet-list rebuild: max over i of max(|eval_i - ref_i|,
  |out_i - ref_i| + 1.5 |out_i - base_i|) (the displacement since the list was built, plus room for the
  next step's motion), which is infinite when a position is not finite.
*/
template <class Scalar, class MemorySpace>
struct StageFunctor
{
    using position_view = typename Tissue<Scalar, MemorySpace>::position_view;
    VelocityEvaluator<Scalar, MemorySpace> velocity;
    position_view base, out, reference;
    Scalar coeff = 0;
    Scalar largest = std::numeric_limits<Scalar>::max();
    Scalar infinite = std::numeric_limits<Scalar>::infinity();
    StepGuard<MemorySpace> guard; //!< inside a chunk: nothing to do once a check of the chunk failed

    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const
    {
        if ( guard.skip() )
            return;
        Scalar v[3];
        velocity( i, v );
        for ( int d = 0; d < 3; ++d )
            out( i, d ) = base( i, d ) + coeff * v[d];
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int i, Scalar& metric ) const
    {
        if ( guard.skip() )
            return;
        Scalar v[3];
        velocity( i, v );
        const auto& eval = velocity.pairs.x;
        const auto& box = velocity.pairs.box;
        Scalar from_ref2 = 0, step2 = 0, eval_ref2 = 0;
        for ( int d = 0; d < 3; ++d )
        {
            const Scalar o = base( i, d ) + coeff * v[d];
            out( i, d ) = o;
            const Scalar a = box.minimum_image( d, o - reference( i, d ) );
            const Scalar s = o - base( i, d );
            const Scalar h = box.minimum_image( d, eval( i, d ) - reference( i, d ) );
            from_ref2 += a * a;
            step2 += s * s;
            eval_ref2 += h * h;
        }
        Scalar m = compat::sqrt( from_ref2 ) + Scalar( 1.5 ) * compat::sqrt( step2 );
        const Scalar h = compat::sqrt( eval_ref2 );
        m = h > m ? h : m;
        if ( !( m <= largest ) )
            m = infinite;
        metric = m > metric ? m : metric;
    }
};

//! Resets a chunk's failure flag (the first kernel of every chunk).
template <class MemorySpace>
struct ResetGuardFunctor
{
    Kokkos::View<int, MemorySpace> failed;
    KOKKOS_INLINE_FUNCTION void operator()( const int ) const { failed() = 2147483647; }
};

} // namespace morula::sem::detail

#endif
