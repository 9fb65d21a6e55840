/*!
  \file Parallel.hpp
  \brief Distributed runs over MPI: Cartesian domain decomposition, ghost (halo) particles, migration,
  the distributed sphere mechanics, and the drivers that take a decomposition or a communicator
  (mechanics::Proliferation, lattice::LatticeDiffusion). Only available when Morula was built with MPI
  (MORULA_HAVE_MPI).
*/
#ifndef MORULA_PARALLEL_HPP
#define MORULA_PARALLEL_HPP

#include <morula/Config.hpp>

#if !MORULA_HAVE_MPI
#error "morula/Parallel.hpp: this Morula was built without MPI (Morula_ENABLE_MPI=OFF or MPI not found)"
#endif

#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/mechanics/Proliferation.hpp>
#include <morula/parallel/DistributedSphereMechanics.hpp>
#include <morula/parallel/Halo.hpp>
#include <morula/parallel/Migration.hpp>
#include <morula/parallel/Transport.hpp>

#endif
