/*!
  \file detail/DistributedLatticeCheckpoint.hpp
  \brief DistributedLatticeDiffusion's checkpoint(), write_checkpoint() and restart(): the slabs gathered
  to rank 0 in the single-rank layout (lattice/LatticeCheckpoint.hpp), and every rank taking its slab of a
  checkpoint written at any rank count. Included at the end of DistributedLatticeDiffusion.hpp.
*/
#ifndef MORULA_PARALLEL_DETAIL_DISTRIBUTEDLATTICECHECKPOINT_HPP
#define MORULA_PARALLEL_DETAIL_DISTRIBUTEDLATTICECHECKPOINT_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/lattice/LatticeCheckpoint.hpp>
#include <morula/parallel/DistributedLatticeDiffusion.hpp>
#include <morula/parallel/detail/AgreeOnError.hpp>
#include <morula/parallel/detail/GatherToRoot.hpp>

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <string>
#include <vector>

namespace morula::parallel
{

template <int Slots, class ExecutionSpace>
void DistributedLatticeDiffusion<Slots, ExecutionSpace>::checkpoint( io::CheckpointWriter& out ) const
{
    ExecutionSpace().fence();
    lattice::detail::LatticeCheckpointState state;
    std::vector<lattice::site_word> mine;
    core::copy_to_host( owned_sites(), m_plane * std::size_t( m_slab.size() ), mine );
    // The slabs are in rank order: rank 0 gets the whole lattice in the single-rank layout.
    state.sites = detail::gather_to_root( m_comm, mine );
    unsigned long long local = m_engine->overflows();
    MPI_Reduce( &local, &state.overflows, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, m_comm );
    if ( m_tracking )
    {
        std::vector<int> d;
        core::copy_to_host( m_engine->displacements(), m_engine->displacements().extent( 0 ), d );
        state.displacement.resize( m_rank == 0 ? d.size() : 0 );
        MPI_Reduce( d.data(), state.displacement.data(), int( d.size() ), MPI_INT, MPI_SUM, 0, m_comm );
    }
    if ( m_rank != 0 )
        return;
    state.step = m_engine->steps_done();
    lattice::detail::put_lattice_parameters( out, Slots, m_whole, m_engine->options(), m_engine->rules(),
                                             m_engine->codes() );
    lattice::detail::put_lattice_state( out, state );
}

template <int Slots, class ExecutionSpace>
void DistributedLatticeDiffusion<Slots, ExecutionSpace>::write_checkpoint( const std::string& path ) const
{
    io::CheckpointWriter out( checkpoint_model );
    checkpoint( out );
    detail::agree_on_error( m_comm, [&] {
        if ( m_rank == 0 )
            out.write( path );
    } );
}

template <int Slots, class ExecutionSpace>
void DistributedLatticeDiffusion<Slots, ExecutionSpace>::restart( const io::CheckpointReader& in )
{
    const ExecutionSpace exec;
    const auto max_code = std::uint32_t( m_engine->codes().max_code() );
    lattice::detail::LatticeCheckpointState state;
    const std::size_t first = m_plane * std::size_t( m_slab.begin );
    detail::agree_on_error( m_comm, [&] {
        lattice::detail::check_lattice_parameters( in, Slots, m_whole, m_engine->options(), m_engine->rules(),
                                                   m_engine->codes() );
        state = lattice::detail::read_lattice_state<Slots>( in, m_whole, max_code, m_engine->rules().blocked_types,
                                                            m_tracking );
        std::vector<lattice::site_word> here;
        core::copy_to_host( owned_sites(), m_plane * std::size_t( m_slab.size() ), here );
        lattice::detail::check_site_types<Slots>( in, state.sites, here.data(), first, here.size(), m_whole );
    } );
    const auto here_counts = code_counts( exec ); // collective
    detail::agree_on_error( m_comm, [&] {
        lattice::detail::check_code_counts(
            in, lattice::detail::count_codes<Slots>( state.sites.data(), state.sites.size(), max_code ),
            here_counts );
    } );
    m_engine->restore_sites( exec, state.sites.data() + first, m_window.owned_begin, m_slab.size() );
    if ( m_size > 1 ) // the ghost planes, as the constructor takes them
        m_planes.exchange( exec, sites(), ghost_planes, true, true );
    exec.fence();
    if ( m_rank != 0 )
    {
        state.overflows = 0;
        state.displacement.clear();
    }
    m_engine->restore_state( exec, state.step, state.overflows, state.displacement );
    this->set_steps_done( static_cast<long long>( state.step ) ); // the step that keys the random moves
}

} // namespace morula::parallel

#endif
