/*!
  \file DisplacementIncrements.hpp
  \brief Statistics of tracer displacements over windows of time: per-axis drift and mean square
  displacement with their standard errors.

  The MSD of a few tracers from t = 0 has a large statistical error; the increments of every tracer
  over consecutive windows of tau steps are (nearly) independent samples of the same law, so a long run
  of few tracers measures D(tau) and any drift as well as many tracers would. A drift shows in the
  mean increment, whose standard error shrinks with the total time followed, whatever tau.
*/
#ifndef MORULA_LATTICE_DISPLACEMENTINCREMENTS_HPP
#define MORULA_LATTICE_DISPLACEMENTINCREMENTS_HPP

#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/lattice/CodeMap.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace morula::lattice
{

class DisplacementIncrements
{
  public:
    struct Axis
    {
        double mean = 0;     //!< mean increment (lattice units): zero without drift
        double se_mean = 0;  //!< its standard error
        double msd = 0;      //!< mean squared increment (lattice units squared)
        double se_msd = 0;   //!< its standard error
    };

    //! Follows the tracers of `species` (or of every species when species < 0) of `codes`.
    explicit DisplacementIncrements( const CodeMap& codes, int species = -1 )
        : m_codes( codes )
        , m_species( species )
    {
    }

    /*!
      Takes the current displacements (LatticeDiffusion::displacements(), any memory space): the first
      call starts the first window, every later one closes a window and adds one sample per followed
      tracer and axis, the displacement now minus that at the previous call.
    */
    template <class DisplacementView>
    void sample( const DisplacementView& displacements )
    {
        // the mirror may be the View itself on a host backend: keep a copy of the values
        const auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), displacements );
        const std::size_t first = m_codes.first_tracer_code();
        std::vector<int> now( 3 * m_codes.species_of_tracer.size() );
        for ( std::size_t t = 0; t < m_codes.species_of_tracer.size(); ++t )
            for ( int a = 0; a < 3; ++a )
                now[3 * t + std::size_t( a )] = h( first + t, a );
        if ( !m_last.empty() )
            for ( std::size_t t = 0; t < m_codes.species_of_tracer.size(); ++t )
            {
                if ( m_species >= 0 && m_codes.species_of_tracer[t] != m_species )
                    continue;
                ++m_samples;
                for ( int a = 0; a < 3; ++a )
                {
                    const double d = double( now[3 * t + std::size_t( a )] ) - double( m_last[3 * t + std::size_t( a )] );
                    m_sum[a][0] += d;
                    m_sum[a][1] += d * d;
                    m_sum[a][2] += d * d * d * d;
                }
            }
        m_last = std::move( now );
    }

    //! Forgets the previous call: the next sample() starts a new window (e.g. another lattice).
    void restart() { m_last.clear(); }

    std::size_t samples() const { return m_samples; }

    Axis axis( int a ) const
    {
        Axis r;
        if ( m_samples == 0 )
            return r;
        const double n = double( m_samples );
        r.mean = m_sum[a][0] / n;
        r.msd = m_sum[a][1] / n;
        const double m4 = m_sum[a][2] / n;
        r.se_mean = std::sqrt( std::max( 0.0, r.msd - r.mean * r.mean ) / n );
        r.se_msd = std::sqrt( std::max( 0.0, m4 - r.msd * r.msd ) / n );
        return r;
    }

    //! Mean squared increment summed over the axes, and its standard error.
    Axis total() const
    {
        Axis r;
        for ( int a = 0; a < 3; ++a )
        {
            const Axis x = axis( a );
            r.msd += x.msd;
            r.se_msd += x.se_msd * x.se_msd; // the axes are independent enough for an error estimate
        }
        r.se_msd = std::sqrt( r.se_msd );
        return r;
    }

    /*!
      \brief Writes the sampler's state under `prefix` (e.g. "increments/"): the samples, the sums and the
      displacements at the last sample(), next to the lattice's own checkpoint, so that a resumed run's
      sampler goes on as if the run had not stopped (the same results bit for bit).
    */
    void checkpoint( io::CheckpointWriter& out, const std::string& prefix ) const
    {
        out.put_scalar( prefix + "species", std::int32_t( m_species ) );
        out.put_scalar( prefix + "tracers", std::uint64_t( m_codes.species_of_tracer.size() ) );
        out.put_scalar( prefix + "samples", std::uint64_t( m_samples ) );
        std::vector<double> sums;
        for ( const auto& axis : m_sum )
            sums.insert( sums.end(), axis.begin(), axis.end() );
        out.put( prefix + "sums", sums, { 3, 3 } );
        out.put( prefix + "last", m_last );
    }

    /*!
      \brief Takes the state checkpoint() wrote under `prefix`.
      \throws core::InputError naming the checkpoint if it follows another species or number of tracers
    */
    void restart( const io::CheckpointReader& in, const std::string& prefix )
    {
        const int species = in.scalar<std::int32_t>( prefix + "species" );
        if ( species != m_species )
            in.fail( core::detail::concat( "'", prefix, "species' = ", species, ": this sampler follows species ",
                                           m_species, " (-1: all)" ) );
        const auto tracers = in.scalar<std::uint64_t>( prefix + "tracers" );
        if ( tracers != m_codes.species_of_tracer.size() )
            in.fail( core::detail::concat( "'", prefix, "tracers' = ", tracers, ": this sampler follows ",
                                           m_codes.species_of_tracer.size(), " tracers" ) );
        const auto sums = in.get<double>( prefix + "sums" );
        auto last = in.get<int>( prefix + "last" );
        if ( sums.size() != 9 || ( !last.empty() && last.size() != 3 * tracers ) )
            in.fail( core::detail::concat( "'", prefix, "sums' or '", prefix, "last' has the wrong size" ) );
        m_samples = std::size_t( in.scalar<std::uint64_t>( prefix + "samples" ) );
        for ( std::size_t i = 0; i < 9; ++i )
            m_sum[i / 3][i % 3] = sums[i];
        m_last = std::move( last );
    }

  private:
    CodeMap m_codes;
    int m_species;
    std::size_t m_samples = 0;
    std::array<std::array<double, 3>, 3> m_sum{};
    std::vector<int> m_last;
};

} // namespace morula::lattice

#endif
