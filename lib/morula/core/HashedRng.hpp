/*!
  \file HashedRng.hpp
  \brief Counter-based random numbers: a pure hash of (index, sub-index, step, seed).

  Seed 002 (Roberts et al. 2009) draws each particle's move from a hash of site, particle, time step and
  seed, so that a value can be recomputed anywhere (apron sites, another thread, another backend) and
  always comes out the same. The hash is the one the paper cites (Press et al., Numerical Recipes 3rd
  ed., section 7.1.4): a 64-bit linear congruential step, a 64-bit xorshift, a multiplicative linear
  congruential step and a closing xorshift. The 128-bit key is folded into it in two rounds.

  Guarantees:
  - bits() and the uniform variates use integer arithmetic and exact conversions only, so they are the
    same bits on every backend, thread count and launch configuration.
  - normal() goes through log, sqrt and cos, which are not correctly rounded on every backend; host and
    device values agree to a few ulp, not always bit for bit.
*/
#ifndef MORULA_CORE_HASHEDRNG_HPP
#define MORULA_CORE_HASHEDRNG_HPP

#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::core
{
namespace detail
{
//! The 64-bit to 64-bit mixing function: LCG, xorshift, MLCG, xorshift. A bijection.
KOKKOS_FORCEINLINE_FUNCTION std::uint64_t ranhash64( std::uint64_t u )
{
    std::uint64_t v = u * 3935559000370003845ULL + 2691343689449507681ULL;
    v ^= v >> 21;
    v ^= v << 37;
    v ^= v >> 4;
    v *= 4768777513237032717ULL;
    v ^= v << 20;
    v ^= v >> 41;
    v ^= v << 5;
    return v;
}
} // namespace detail

/*!
  \brief Stateless random number source keyed by a 64-bit seed.

  A value is a pure function of (index, sub, step, seed): index is typically a particle, site or cell,
  sub distinguishes several draws for the same index and step (an axis, a slot, a species), and step is
  the time step. Trivially copyable; pass it to kernels by value.
*/
class HashedRng
{
  public:
    HashedRng() = default;

    KOKKOS_INLINE_FUNCTION explicit HashedRng( std::uint64_t seed )
        : m_seed( seed )
        , m_key( detail::ranhash64( seed ^ 0x9E3779B97F4A7C15ULL ) )
    {
    }

    KOKKOS_INLINE_FUNCTION std::uint64_t seed() const { return m_seed; }

    //! 64 random bits for (index, sub, step).
    KOKKOS_INLINE_FUNCTION std::uint64_t bits( std::uint64_t index, std::uint32_t sub,
                                               std::uint32_t step ) const
    {
        const std::uint64_t h = detail::ranhash64( index + m_key );
        return detail::ranhash64( h ^ ( ( std::uint64_t( step ) << 32 ) | sub ) );
    }

    //! Uniform variate in [0, 1) with the full mantissa of Scalar (24 or 53 random bits).
    template <class Scalar>
    KOKKOS_INLINE_FUNCTION Scalar uniform( std::uint64_t index, std::uint32_t sub,
                                           std::uint32_t step ) const
    {
        return to_uniform<Scalar>( bits( index, sub, step ) );
    }

    //! Standard normal variate by the Box-Muller transform (one of the pair).
    template <class Scalar>
    KOKKOS_INLINE_FUNCTION Scalar normal( std::uint64_t index, std::uint32_t sub,
                                          std::uint32_t step ) const
    {
        const std::uint64_t b1 = bits( index, sub, step );
        // Double needs 2 x 53 bits: a second, independent word from one more mixing round.
        const std::uint64_t b2 = detail::ranhash64( b1 ^ 0xD1B54A32D192ED03ULL );
        const Scalar u1 = to_uniform_open<Scalar>( b1 ); // (0, 1]: log stays finite
        const Scalar u2 = to_uniform<Scalar>( b2 );
        const Scalar two_pi = Scalar( 6.283185307179586476925286766559 );
        return compat::sqrt( Scalar( -2 ) * compat::log( u1 ) ) * compat::cos( two_pi * u2 );
    }

    //! Maps 64 random bits to [0, 1): exact, the same on every backend.
    template <class Scalar>
    KOKKOS_INLINE_FUNCTION static Scalar to_uniform( std::uint64_t b )
    {
        if constexpr ( sizeof( Scalar ) == 4 )
            return Scalar( b >> 40 ) * Scalar( 5.9604644775390625e-08 ); // 2^-24
        else
            return Scalar( b >> 11 ) * Scalar( 1.1102230246251565404e-16 ); // 2^-53
    }

    //! Maps 64 random bits to (0, 1]: exact, the same on every backend.
    template <class Scalar>
    KOKKOS_INLINE_FUNCTION static Scalar to_uniform_open( std::uint64_t b )
    {
        if constexpr ( sizeof( Scalar ) == 4 )
            return Scalar( ( b >> 40 ) + 1 ) * Scalar( 5.9604644775390625e-08 );
        else
            return Scalar( ( b >> 11 ) + 1 ) * Scalar( 1.1102230246251565404e-16 );
    }

  private:
    std::uint64_t m_seed = 0;
    std::uint64_t m_key = 0;
};

} // namespace morula::core

#endif
