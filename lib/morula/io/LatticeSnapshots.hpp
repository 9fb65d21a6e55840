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
  \brief Writes each snapshot into its own HDF5 file, `<prefix>_<step, 6 digits>.h5`: dataset `/sites` of
  unsigned 32-bit words, dimensions (nz, ny, nx) (x fastest, as in memory), with attributes nx, ny, nz,
  spacing_nm, step, time_s, slots_per_site and bits_per_slot. A word packs the site type in bits 28-31
  and the particle codes in slots of bits_per_slot bits from bit 0 (docs/models/lattice.md). A file is
  written under `.tmp` and renamed when complete, so a run killed at any moment leaves complete
  snapshots only; a new series removes the snapshot files of an earlier one with the same prefix.
  \throws core::InputError if HDF5 is not available or a step is written twice; core::IoError if a file
  cannot be written (the message names it)
*/
class LatticeSnapshotWriter
{
  public:
    //! `prefix`: the files' prefix; a trailing ".h5" is dropped ("run.h5" writes run_000000.h5, ...).
    //! `resume_after` >= 0: a restarted run's series, which keeps the frames up to that step (the
    //! checkpoint's), drops later ones and appends after them; -1: a new series.
    LatticeSnapshotWriter( std::string prefix, int nx, int ny, int nz, double spacing_nm, int slots_per_site,
                           long long resume_after = -1 );

    void write( long long step, double time_s, const std::vector<std::uint32_t>& words );

    //! Copies a View of site words to the host and writes it.
    template <class View>
    void write_view( long long step, double time_s, const View& sites )
    {
        auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sites );
        write( step, time_s, std::vector<std::uint32_t>( h.data(), h.data() + h.extent( 0 ) ) );
    }

    //! The files' prefix ("run" for "run.h5").
    const std::string& prefix() const { return m_series.layout().hdf5; }
    //! The file of snapshot `step`: `<prefix>_<step, 6 digits>.h5`.
    std::string file( long long step ) const { return m_series.file_of( step ); }

  private:
    SnapshotSeries m_series;
    int m_n[3];
    double m_spacing;
    int m_slots;
};

} // namespace morula::io

#endif
