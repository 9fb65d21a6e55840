/*!
  \file Morula.hpp
  \brief The one header to include for embedding Morula: every public concept.
*/
#ifndef MORULA_MORULA_HPP
#define MORULA_MORULA_HPP

#include <morula/Config.hpp>

#include <morula/core/Box.hpp>
#include <morula/core/BuildInfo.hpp>
#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/MemoryInfo.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/core/PhaseTimer.hpp>
#include <morula/core/SoA.hpp>
#include <morula/core/StepGraph.hpp>

#include <morula/grid/GridGeometry.hpp>
#include <morula/grid/EllNeighborList.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/grid/NeighborQuery.hpp>
#include <morula/grid/NeighborReduction.hpp>
#include <morula/grid/NeighborSweep.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <morula/io/AgentSnapshots.hpp>
#include <morula/io/AngioSnapshots.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/io/LatticeSnapshots.hpp>
#include <morula/io/SnapshotFrame.hpp>
#include <morula/io/SnapshotReader.hpp>
#include <morula/io/SnapshotSeries.hpp>
#include <morula/io/TissueSnapshots.hpp>

#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/DisplacementIncrements.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/LatticeCheckpoint.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <morula/ode/EpidermisGeneNetwork.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/OdeIntegration.hpp>
#include <morula/ode/OdeResult.hpp>
#include <morula/ode/OdeSolver.hpp>
#include <morula/ode/ReactionNetwork.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/SyntheticNetwork.hpp>

#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/Initializers.hpp>
#include <morula/mechanics/Proliferation.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereForce.hpp>
#include <morula/mechanics/SphereMechanics.hpp>

#include <morula/angio/Angiogenesis.hpp>
#include <morula/sem/Epidermis.hpp>
#include <morula/sem/GeneCoupling.hpp>
#include <morula/sem/Initializers.hpp>
#include <morula/sem/SemMechanics.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>
#include <morula/sem/TissueGrowth.hpp>

#if MORULA_HAVE_MPI
#include <morula/Parallel.hpp>
#endif

#endif
