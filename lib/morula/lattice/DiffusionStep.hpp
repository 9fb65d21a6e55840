/*!
  \file DiffusionStep.hpp
  \brief What a step of lattice::LatticeDiffusion is made of and what it reports: its phases (the names of
  its times()), its counts and its report, the same on one rank and on slabs over MPI ranks.
*/
#ifndef MORULA_LATTICE_DIFFUSIONSTEP_HPP
#define MORULA_LATTICE_DIFFUSIONSTEP_HPP

#include <morula/core/Driver.hpp>

namespace morula::lattice
{

/*!
  \brief The phases of LatticeDiffusion::step(), in the order of the names of its times(). On one rank
  only `passes` and `overflow` take time; `halo` and `sync` are what slabs over several ranks add.
*/
struct LatticeDiffusionPhase
{
    enum : int
    {
        passes,   //!< the three split passes or the fused pass (kernels only)
        overflow, //!< placing the overflowed particles after each pass (on slabs: ghost bands, turns, replays)
        halo,     //!< slabs: the one-plane ghost exchanges before each z or fused pass
        sync      //!< slabs: the MPI_Allgather of the overflow counts after every pass: where a rank waits
                  //!< for slower ones (their passes), so mostly imbalance
    };
    static constexpr const char* scope = "morula::lattice::LatticeDiffusion";
    static constexpr const char* names[] = { "passes", "overflow", "halo", "sync" };
    static constexpr const char* counts[] = { "halo_bytes", "overflow_events", "overflow_entries", "overflow_scans" };
};

//! The counts of LatticeDiffusion's times(), in the order of their names; all stay 0 on one rank.
struct LatticeDiffusionCount
{
    enum : int
    {
        halo_bytes,       //!< bytes this rank sent in ghost-plane exchanges (all depths)
        overflow_events,  //!< passes after which some rank had overflowed particles
        overflow_entries, //!< particles placed from overflow lists, over all ranks
        overflow_scans    //!< of those, placed by the index-order scan over all slabs
    };
};

/*!
  \brief What LatticeDiffusion::step() did: the step's index and, on slabs over several ranks, what it
  communicated (LatticeDiffusionCount says what each is), all known on the host. On one rank the
  figures stay 0: the placement there needs no count on the host (overflows() reads the device's total).
*/
struct LatticeDiffusionReport : core::StepReport
{
    long long halo_bytes = 0;
    long long overflow_events = 0;
    long long overflow_entries = 0;
    long long overflow_scans = 0;

    //! Sums an advance()'s steps.
    void merge( const LatticeDiffusionReport& other )
    {
        halo_bytes += other.halo_bytes;
        overflow_events += other.overflow_events;
        overflow_entries += other.overflow_entries;
        overflow_scans += other.overflow_scans;
    }
};

} // namespace morula::lattice

#endif
