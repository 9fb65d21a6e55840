#include "MsdSeries.hpp"
#include "Checkpointing.hpp"
#include "MpiSession.hpp"

#include <morula/core/Error.hpp>

#include <cstdio>
#include <utility>

namespace morula::app
{
namespace
{
const char* const msd_header = "time_s,species,msd_nm2,msd_x_nm2,msd_y_nm2,msd_z_nm2,msd_over_6t_nm2_per_us";
std::string points_key( std::size_t species ) { return core::detail::concat( "app/msd_plot/", species ); }
} // namespace

MsdSeries::MsdSeries( const std::string& output, std::vector<PlotSeries> species, std::size_t rows_per_sample,
                      double spacing_nm, bool tracking )
    : m_series( std::move( species ) )
    , m_output( output )
    , m_csv_path( output + "_msd.csv" )
    , m_rows_per_sample( rows_per_sample )
    , m_lambda2( spacing_nm * spacing_nm )
    , m_tracking( tracking )
{
}

void MsdSeries::resume( std::size_t samples, const io::CheckpointReader& checkpoint )
{
    m_resumed = true;
    // Rank 0 owns the file; a missing or short one is bad input on every rank.
    if ( m_tracking )
        MpiSession::check_on_root( [&] {
            if ( !keep_first_csv_rows( m_csv_path, samples * m_rows_per_sample, "--restart", msd_header ) )
                throw core::InputError( core::detail::concat(
                    "--restart: cannot read the MSD series '", m_csv_path,
                    "' of the run to resume (run in the folder of its outputs, with its --output)" ) );
        } );
    for ( std::size_t i = 0; i < m_series.size(); ++i )
        if ( checkpoint.has( points_key( i ) ) )
        {
            const auto v = checkpoint.get<double>( points_key( i ) );
            for ( std::size_t k = 0; k + 1 < v.size() && k / 2 < samples; k += 2 )
                m_series[i].points.emplace_back( v[k], v[k + 1] );
        }
}

void MsdSeries::open()
{
    if ( !m_tracking || MpiSession::rank() != 0 )
        return;
    m_csv.open( m_csv_path, m_resumed ? std::ios::app : std::ios::trunc );
    if ( !m_csv )
        throw core::IoError( "config: key 'output': cannot write '" + m_csv_path + "'" );
    if ( !m_resumed )
        m_csv << msd_header << "\n";
}

void MsdSeries::add( int species, double t_s, const lattice::MsdSample& m )
{
    const double d = m.total() * m_lambda2 / ( 6 * t_s * 1e6 );
    if ( m_csv.is_open() )
        m_csv << t_s << "," << m_series[species].name << "," << m.total() * m_lambda2 << "," << m.per_axis[0] * m_lambda2
              << "," << m.per_axis[1] * m_lambda2 << "," << m.per_axis[2] * m_lambda2 << "," << d << "\n";
    m_series[species].points.emplace_back( t_s, d );
}

void MsdSeries::checkpoint( io::CheckpointWriter& out )
{
    if ( m_csv.is_open() )
        m_csv.flush(); // the rows up to the checkpoint are on the disk before it
    for ( std::size_t i = 0; i < m_series.size(); ++i )
    {
        std::vector<double> v;
        for ( const auto& p : m_series[i].points )
        {
            v.push_back( p.first );
            v.push_back( p.second );
        }
        out.put( points_key( i ), v, { v.size() / 2, 2 } );
    }
}

void MsdSeries::finish( const std::string& title ) const
{
    if ( !m_tracking )
        return;
    for ( const auto& s : m_series )
        if ( !s.points.empty() )
            std::printf( "species '%s': MSD/6t at the end %.4g nm^2/us = %.4f D0\n", s.name.c_str(),
                         s.points.back().second, s.points.back().second / s.reference );
    std::printf( "MSD time series: %s\n", m_csv_path.c_str() );
    if ( MpiSession::rank() != 0 ) // the one that writes files
        return;
    const std::string png = m_output + "_msd.png";
    if ( write_msd_plot( png, title, m_series ) )
        std::printf( "plot of MSD/6t: %s\n", png.c_str() );
    else
        std::printf( "plot skipped: this morula was built without cairo (the CSV has the data)\n" );
}

} // namespace morula::app
