/*!
  \file DistributedMechanicsOptions.hpp
  \brief The vocabulary of DistributedSphereMechanics: the phases and counts of its times(), and the
  order in which a step overlaps the ghost exchange with the forces.
*/
#ifndef MORULA_PARALLEL_DISTRIBUTEDMECHANICSOPTIONS_HPP
#define MORULA_PARALLEL_DISTRIBUTEDMECHANICSOPTIONS_HPP

#include <morula/core/PhaseTimer.hpp>

namespace morula::parallel
{

/*!
  \brief The phases of DistributedSphereMechanics::step(), in the order of the names in its times().

  Each phase is fenced and timed between barriers over the ranks: the ranks run it together, and its
  time is the slowest rank's, without waits for ranks still in an earlier phase (and, with ranks
  sharing a GPU, with all their work on it). Halo exchange and migration are the communication.
*/
struct DistributedMechanicsPhase
{
    enum : int
    {
        migration,   //!< migrate(): owners, sort by destination, counts, fields
        sort,        //!< cell-order sort of the owned agents (every sort_every steps, see step())
        halo_build,  //!< halo-width check (MPI_Allreduce) and new Halo: plan, counts, all fields
        halo_update, //!< Halo::update() of the ghost positions between rebuilds
        grid,        //!< local grids of the owned agents and of the ghosts
        forces,      //!< forces and displacements of the owned agents (owned, then ghost neighbours)
        move,        //!< moving the owned agents
        division     //!< growth and division, when DistributedProliferation drives these mechanics
    };
    static constexpr const char* scope = "morula::parallel::DistributedSphereMechanics";
    static constexpr const char* names[] = { "migration", "sort", "halo_build", "halo_update",
                                             "grid",      "forces", "move",     "division" };
    static constexpr const char* counts[] = { "rebuilds",        "updates",          "migrated_sent", "migrated_received",
                                              "halo_build_rows", "halo_update_rows", "ghosts" };
    //! Seconds of halo exchange and migration in `times`.
    static double communication( const core::PhaseTimer& times )
    {
        return times.sum( { migration, halo_build, halo_update } );
    }
};

//! What the communication of the timed steps moved: the counts of DistributedSphereMechanics::times().
struct DistributedMechanicsCount
{
    enum : int
    {
        rebuilds,          //!< timed steps that migrated and built a new halo
        updates,           //!< timed steps that updated the ghost positions only
        migrated_sent,     //!< agents this rank sent in migrate()
        migrated_received, //!< agents this rank received in migrate()
        halo_build_rows,   //!< rows sent by Halo construction (all fields each)
        halo_update_rows,  //!< rows sent by Halo::update() (positions only)
        ghosts             //!< ghosts received, summed over the timed steps
    };
};

/*!
  \brief The order in which a step of DistributedSphereMechanics starts the ghost exchange and the
  owned agents' forces. Results are the same either way.

  Building a halo holds the host: it reads back the export counts and exchanges them with the
  neighbours, waiting for the slowest of them. Started first, the GPU idles meanwhile. With forces_first
  the halo's export lists are found on the main stream (two short scans over the positions), the forces
  are launched, and the count exchange, the pack and the messages follow beside them on the
  high-priority stream: the wait hides under the forces. Between rebuilds the host's part (the pack's
  and NCCL's launches) then also runs while the forces do. With ranks sharing a GPU (MPS) that order is
  slower: the other rank's work fills the GPU anyway
  (docs/performance.md, "Multi-GPU path without the host in the way (issue #23)" and
  "Design choices measured (moved from source comments, issue #46)").
*/
enum class OverlapOrder : int
{
    automatic,      //!< forces_first where the exchange travels on the GPU's stream between ranks that
                    //!< each drive a GPU of their own (NCCL/RCCL), else exchange_first
    exchange_first, //!< plan and start the exchange, then launch the owned agents' grid and forces
    forces_first    //!< launch the owned agents' grid and forces, then plan and start the exchange
};

} // namespace morula::parallel

#endif
