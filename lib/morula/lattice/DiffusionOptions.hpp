/*!
  \file DiffusionOptions.hpp
  \brief How LatticeDiffusion runs a time step: the pass scheme, the kernels, the seed.
*/
#ifndef MORULA_LATTICE_DIFFUSIONOPTIONS_HPP
#define MORULA_LATTICE_DIFFUSIONOPTIONS_HPP

#include <cstdint>

namespace morula::lattice
{

//! How a time step is split into kernels.
enum class PassScheme
{
    split, //!< three passes, x then y then z (the paper's operator split)
    fused  //!< one pass over all three axes (same statistics, a different random stream)
};

inline const char* to_string( PassScheme s ) { return s == PassScheme::split ? "split" : "fused"; }

//! Which kernels run the passes. All give bit for bit the same lattice, overflow entries and
//! displacements (the gather defines the model); they differ in speed only (docs/performance.md).
enum class PassKernels
{
    automatic, //!< the fastest measured: compacted split passes where they fit (tiled with 8 slots on a host
               //!< backend); the compacted fused pass on sparse lattices, else the tiled one (the gather
               //!< on a slab)
    compacted, //!< quiet sites copied 4 at a time, busy ones compacted per team and gathered
               //!< (detail/CompactedKernels.hpp; needs nx a multiple of 4, else the split passes run the
               //!< gather and the fused pass runs tiled)
    tiled,     //!< each word loaded and each particle hashed once per pass and tile (detail/TiledSplitPasses.hpp,
               //!< detail/TiledFusedPass.hpp; the whole lattice only)
    gather     //!< each destination recomputes its neighbours' moves (detail/SplitPass.hpp, detail/FusedPass.hpp)
};

inline const char* to_string( PassKernels k )
{
    switch ( k )
    {
    case PassKernels::automatic:
        return "automatic";
    case PassKernels::compacted:
        return "compacted";
    case PassKernels::tiled:
        return "tiled";
    default:
        return "gather";
    }
}

/*!
  \brief How the particles of a pass's overflow list are placed. Both give bit for bit the same lattice,
  displacements and placement log (the sequential order defines the model); they differ in speed only
  (docs/performance.md, "Overflow placement in parallel (issue #48)").
*/
enum class OverflowPlacement
{
    automatic,  //!< parallel on a device backend and on host backends with at least 4 threads, else sequential
    sequential, //!< one work item sorts the list and places the entries in key order (detail/PlaceOverflow.hpp)
    parallel    //!< a sort on the device, then the sequential placement found as the fixed point of
                //!< parallel sweeps over the list (detail/OverflowSweeps.hpp)
};

inline const char* to_string( OverflowPlacement p )
{
    return p == OverflowPlacement::automatic ? "automatic" : ( p == OverflowPlacement::sequential ? "sequential" : "parallel" );
}

/*!
  \brief How the slabs of a distributed lattice place a pass's overflow lists, in the single rank's key
  order, which runs through the slabs one after the other (LatticeDiffusion). Both give the single
  rank's lattice bit for bit; they differ in how long ranks wait for each other on crowded lattices.
*/
enum class SlabTurns
{
    automatic, //!< together
    in_turn,   //!< the slabs with entries one after the other, every rank replaying each one's band
    together   //!< every slab sweeps its own list at once (the parallel placement, nothing written),
               //!< then, in slab order, takes its predecessor's placements near the shared face, sweeps
               //!< again from where it was (only what they displace) and places; a slab whose entry
               //!< needs the scan over all slabs hands the rest of the pass to the turns
};

inline const char* to_string( SlabTurns t )
{
    return t == SlabTurns::automatic ? "automatic" : ( t == SlabTurns::in_turn ? "in_turn" : "together" );
}

//! The choices of a LatticeDiffusion (on one rank or on slabs) that leave the model's statistics alone.
struct DiffusionOptions
{
    PassScheme scheme = PassScheme::split;
    std::uint64_t seed = 1;
    //! A choice that cannot run on this lattice falls back: compacted to the gather where nx is not a
    //! multiple of 4, tiled to the gather on a slab of a distributed lattice; split_kernels() and
    //! fused_kernels() tell what runs.
    PassKernels kernels = PassKernels::automatic;
    OverflowPlacement placement = OverflowPlacement::automatic;
    SlabTurns slab_turns = SlabTurns::automatic; //!< slabs of a distributed lattice only
};

} // namespace morula::lattice

#endif
