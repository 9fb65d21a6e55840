/*!
  \file DistributedMechanicsOptions.hpp
  \brief The vocabulary of DistributedSphereMechanics: the phases and counts of its times(), and the
  order in which a step overlaps the ghost exchange with the forces.
*/
#ifndef MORULA_PARALLEL_DISTRIBUTEDMECHANICSOPTIONS_HPP
#define MORULA_PARALLEL_DISTRIBUTEDMECHANICSOPTIONS_HPP

#include <morula/mechanics/ProliferationPhase.hpp>

namespace morula::parallel
{

/*!
  \brief The phases of DistributedSphereMechanics::step(): mechanics::ProliferationPhase's table (the
  driver's, whose timer a step of mechanics::Proliferation over several ranks fills), with profiling
  regions of its own when the mechanics are stepped alone.
*/
struct DistributedMechanicsPhase : mechanics::ProliferationPhase
{
    static constexpr const char* scope = "morula::parallel::DistributedSphereMechanics";
};

//! What the communication of the timed steps moved: the counts of DistributedSphereMechanics::times().
using DistributedMechanicsCount = mechanics::ProliferationCount;

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
