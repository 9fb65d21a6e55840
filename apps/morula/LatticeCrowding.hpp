// `morula lattice` with a crowding sweep ("sweep_slot_fraction" or "sweep_obstacle_fraction"): the same
// lattice run at each point, the tracers' effective diffusion coefficient D_eff against the free one D0
// per species, as a CSV and a plot: the crowding study of the lattice's paper in one command, on one
// device or under mpirun.
#ifndef MORULA_APPS_LATTICECROWDING_HPP
#define MORULA_APPS_LATTICECROWDING_HPP

#include "LatticeConfig.hpp"

#include <string>
#include <vector>

namespace morula::app
{
//! One point of a sweep: the settings of its run (the species' counts, or obstacles[0]'s fraction, set).
//! \throws core::InputError, before anything is allocated, for particles that cannot fit the slots left
//! by the obstacles, a sweep without tracers, or an obstacle sweep without exactly one obstacle class.
std::vector<LatticeSettings> crowding_points( const LatticeSettings& s );

//! D = sum(msd t) / (6 sum(t^2)): the least-squares slope of MSD = 6 D t through the origin; NaN without samples.
double diffusion_from_msd( const std::vector<std::pair<double, double>>& t_msd );

//! Runs every point and writes <output>_crowding.csv and <output>_crowding.png.
void run_crowding_sweep( const LatticeSettings& s );
} // namespace morula::app

#endif
