/*!
  \file FastDivisor.hpp
  \brief Division of 32-bit values by a divisor fixed at launch, as two multiplications.

  A GPU has no integer divider: a 64-bit division by a runtime value is a subroutine of several dozen
  instructions, a 32-bit one about twenty. Kernels that turn a flat index into coordinates divide by the
  same extents at every site, so the quotient is computed instead from a 64-bit constant c = ceil(2^64 / d)
  prepared on the host: n / d = floor(c n / 2^64) for every n, d < 2^32 (Lemire, Kaser and Kurz, "Faster
  remainder by direct computation", Software: Practice and Experience 49, 2019, theorem 1 with N = 32),
  the high half of a 96-bit product in two 32 x 64-bit multiplications.
*/
#ifndef MORULA_CORE_FASTDIVISOR_HPP
#define MORULA_CORE_FASTDIVISOR_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::core
{

//! n / d and n % d for n < 2^32 with d fixed at construction (1 <= d < 2^32).
class FastDivisor
{
  public:
    FastDivisor() = default;
    explicit FastDivisor( std::uint32_t d )
        : m_divisor( d )
        , m_magic( d > 1 ? ~std::uint64_t( 0 ) / d + 1 : 0 )
    {
    }

    KOKKOS_FORCEINLINE_FUNCTION std::uint32_t divisor() const { return m_divisor; }

    KOKKOS_FORCEINLINE_FUNCTION std::uint32_t quotient( std::uint32_t n ) const
    {
        if ( m_divisor == 1 ) // c = 2^64 does not fit
            return n;
        // high 64 bits of m_magic x n, n < 2^32: (hi n + (lo n >> 32)) >> 32 cannot overflow
        const std::uint64_t hi = ( m_magic >> 32 ) * n;
        const std::uint64_t lo = ( m_magic & 0xFFFFFFFFu ) * n;
        return std::uint32_t( ( hi + ( lo >> 32 ) ) >> 32 );
    }
    KOKKOS_FORCEINLINE_FUNCTION std::uint32_t remainder( std::uint32_t n, std::uint32_t q ) const { return n - q * m_divisor; }

  private:
    std::uint32_t m_divisor = 1;
    std::uint64_t m_magic = 0;
};

} // namespace morula::core

#endif
