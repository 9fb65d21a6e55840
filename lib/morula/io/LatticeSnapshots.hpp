/*!
  \file LatticeSnapshots.hpp
  \brief HDF5 snapshots of a packed lattice: one dataset of 32-bit site words per snapshot.
*/
#ifndef MORULA_IO_LATTICESNAPSHOTS_HPP
#define MORULA_IO_LATTICESNAPSHOTS_HPP

#include <morula/io/SnapshotSeries.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace morula::io
{

/*!
  \brief Writes snapshots into one HDF5 file: dataset `/snapshots/step_<10 digits>` of unsigned 32-bit
  words, dimensions (nz, ny, nx) (x fastest, as in memory), with attributes nx, ny, nz, spacing_nm,
  step, time_s, slots_per_site and bits_per_slot. A word packs the site type in bits 28-31 and the
  particle codes in slots of bits_per_slot bits from bit 0 (docs/models/lattice.md). The file is
  created (truncated) by the constructor and reopened for every snapshot, so it is complete after
  each write.
  \throws core::InputError if HDF5 is not available; core::IoError if the file cannot be written (the
  message names it)
*/
class LatticeSnapshotWriter
{
  public:
    //! `resume_after` >= 0: a restarted run's series, which keeps the frames up to that step (the
    //! checkpoint's), drops later ones and appends after them; -1: a new series.
    LatticeSnapshotWriter( std::string path, int nx, int ny, int nz, double spacing_nm, int slots_per_site,
                           long long resume_after = -1 );

    void write( long long step, double time_s, const std::vector<std::uint32_t>& words );

    //! Copies a View of site words to the host and writes it.
    template <class View>
    void write_view( long long step, double time_s, const View& sites )
    {
        auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sites );
        write( step, time_s, std::vector<std::uint32_t>( h.data(), h.data() + h.extent( 0 ) ) );
    }

    const std::string& path() const { return m_series.layout().hdf5; }

  private:
    SnapshotSeries m_series;
    int m_n[3];
    double m_spacing;
    int m_slots;
};

} // namespace morula::io

#endif
