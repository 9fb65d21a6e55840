#include "RunLoop.hpp"
#include "MpiSession.hpp"

#include <algorithm>

namespace morula::app
{

RunLoop::RunLoop( const CheckpointSchedule& schedule, long long total, bool progress )
    : m_schedule( schedule )
    , m_total( total )
    , m_progress( progress && MpiSession::rank() == 0 )
{
    stop_every( schedule.every() );
}

RunLoop& RunLoop::stop_every( long long period )
{
    if ( period > 0 )
        m_periods.push_back( period );
    return *this;
}

long long RunLoop::next_stop( long long done ) const
{
    long long stop = m_total;
    for ( const long long p : m_periods )
        stop = std::min( stop, ( done / p + 1 ) * p );
    return std::max( stop, done + 1 );
}

std::pair<bool, bool> RunLoop::agree( long long done ) const
{
    int due[2] = { m_schedule.due( done, m_total ) ? 1 : 0, CheckpointSchedule::stop_requested() ? 1 : 0 };
#if MORULA_HAVE_MPI
    if ( MpiSession::size() > 1 )
        MPI_Allreduce( MPI_IN_PLACE, due, 2, MPI_INT, MPI_LOR, MpiSession::comm() );
#endif
    return { due[0] != 0 || due[1] != 0, due[1] != 0 };
}

} // namespace morula::app
