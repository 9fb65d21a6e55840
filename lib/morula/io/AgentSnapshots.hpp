/*!
  \file AgentSnapshots.hpp
  \brief HDF5 snapshots of agents (positions, diameters, ids) with an XDMF index for ParaView.
*/
#ifndef MORULA_IO_AGENTSNAPSHOTS_HPP
#define MORULA_IO_AGENTSNAPSHOTS_HPP

#include <morula/core/HostCopy.hpp>
#include <morula/io/SnapshotSeries.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace morula::io
{

/*!
  \brief Writes one HDF5 file per snapshot (`<prefix>_<step>.h5`: /positions n x 3, /diameter, /id,
  all double or int64) and keeps `<prefix>.xmf`, an XDMF temporal collection of them that ParaView
  opens as a point cloud with the diameter and id as point data (render with a sphere glyph scaled by
  the diameter). The XDMF file is rewritten after every snapshot, so an interrupted run stays readable.
  \throws core::InputError if HDF5 is not available; core::IoError if a file cannot be written (the message
  names it)
*/
class AgentSnapshotWriter
{
  public:
    //! `resume_after` >= 0: a restarted run's series, which keeps the frames up to that step (the
    //! checkpoint's), drops later ones and appends after them; -1: a new series.
    explicit AgentSnapshotWriter( std::string prefix, long long resume_after = -1 );

    //! Writes a snapshot from host arrays: xyz holds x, y, z of agent 0, then of agent 1, ...
    void write( long long step, double time, const std::vector<double>& xyz,
                const std::vector<double>& diameter, const std::vector<std::int64_t>& id );

    //! Copies the first n agents of device Views to the host and writes them.
    template <class PositionView, class ScalarView, class IdView>
    void write_views( long long step, double time, const PositionView& x, const ScalarView& d,
                      const IdView& ids, std::size_t n )
    {
        std::vector<double> xyz, dia;
        std::vector<std::int64_t> id;
        core::copy_to_host( x, n, xyz );
        core::copy_to_host( d, n, dia );
        core::copy_to_host( ids, n, id );
        write( step, time, xyz, dia, id );
    }

    const std::string& xdmf_path() const { return m_series.xdmf_path(); }

  private:
    SnapshotSeries m_series;
};

} // namespace morula::io

#endif
