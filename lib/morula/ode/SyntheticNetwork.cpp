#include <morula/core/Error.hpp>
#include <morula/ode/SyntheticNetwork.hpp>

#include <random>

namespace morula::ode
{

namespace
{
//! std::uniform_*_distribution may differ between standard libraries; std::mt19937_64's output does not.
class Draw
{
  public:
    explicit Draw( std::uint64_t seed )
        : m_engine( seed )
    {
    }

    //! [0, 1) with 53 random bits: the top 53 bits of one output times 2^-53 (exact).
    double unit()
    {
        return static_cast<double>( m_engine() >> 11 ) * 0x1.0p-53;
    }

    //! Uniform in [0, n) by rejection: outputs at or above the largest multiple of n are drawn again.
    int below( int n )
    {
        const std::uint64_t range = static_cast<std::uint64_t>( n );
        const std::uint64_t limit = ( ~std::uint64_t( 0 ) / range ) * range;
        std::uint64_t x = m_engine();
        while ( x >= limit )
            x = m_engine();
        return static_cast<int>( x % range );
    }

  private:
    std::mt19937_64 m_engine;
};

//! 10^f for f in [0, 1) by a fixed sequence of IEEE operations, so the result does not depend on the
//! platform's libm (std::pow and std::exp are not correctly rounded everywhere). volatile keeps the compiler
//! from fusing a multiply and an add into an FMA, which would round differently.
double pow10_fraction( double f )
{
    // exp(y), y = f ln 10 in [0, 2.31): exp(y / 16) by its Taylor series to degree 12 (truncation < 1e-22),
    // then squared four times.
    volatile double y = f * 2.302585092994045684 / 16.0;
    volatile double sum = 1.0;
    volatile double term = 1.0;
    for ( int i = 1; i <= 12; ++i )
    {
        term = term * y;
        term = term / i;
        sum = sum + term;
    }
    volatile double result = sum;
    for ( int i = 0; i < 4; ++i )
        result = result * result;
    return result;
}

//! Log-uniform in [1e-8, 1): 10^(-8 + 8u); a draw that rounds onto the boundary is drawn again.
double rate_constant( Draw& draw )
{
    constexpr double powers[8] = { 1.0, 10.0, 100.0, 1.0e3, 1.0e4, 1.0e5, 1.0e6, 1.0e7 };
    while ( true )
    {
        const double t = 8.0 * draw.unit(); // exact: a power-of-two scaling
        const int whole = static_cast<int>( t );
        const double k = pow10_fraction( t - whole ) * powers[whole] / 1.0e8;
        if ( k >= 1.0e-8 && k < 1.0 )
            return k;
    }
}
} // namespace

ReactionNetwork generate_synthetic_network( int species, int reactions, std::uint64_t seed )
{
    if ( species < 1 || reactions < 0 )
        throw core::InputError( core::detail::concat( "generate_synthetic_network: ", species, " species and ",
                                                      reactions, " reactions; expected species >= 1, reactions >= 0" ) );
    ReactionNetwork net;
    net.source = core::detail::concat( "synthetic(species=", species, ", reactions=", reactions, ", seed=", seed, ")" );
    for ( int s = 0; s < species; ++s )
        net.species_names.push_back( core::detail::concat( "S", s ) );
    Draw draw( seed );
    // Draws in a fixed order: all initial values, then reaction by reaction (reactants, products, k).
    for ( int s = 0; s < species; ++s )
        net.initial_state.push_back( draw.unit() );
    for ( int r = 0; r < reactions; ++r )
    {
        Reaction reaction;
        const int a = draw.below( species );
        if ( draw.below( 2 ) == 0 )
            reaction.reactants.push_back( { a, 1 } ); // A ->
        else if ( species == 1 || draw.below( 2 ) == 0 )
            reaction.reactants.push_back( { a, 2 } ); // 2A ->
        else
        {
            int b = draw.below( species - 1 ); // A + B ->, B uniform among the other species
            if ( b >= a )
                ++b;
            reaction.reactants.push_back( { a, 1 } );
            reaction.reactants.push_back( { b, 1 } );
        }
        const int molecules = draw.below( 3 );
        if ( molecules >= 1 )
        {
            const int c = draw.below( species );
            if ( molecules == 1 )
                reaction.products.push_back( { c, 1 } );
            else
            {
                const int d = draw.below( species );
                if ( d == c )
                    reaction.products.push_back( { c, 2 } );
                else
                {
                    reaction.products.push_back( { c, 1 } );
                    reaction.products.push_back( { d, 1 } );
                }
            }
        }
        reaction.rate_constant = rate_constant( draw );
        net.reactions.push_back( std::move( reaction ) );
    }
    validate( net );
    return net;
}

} // namespace morula::ode
