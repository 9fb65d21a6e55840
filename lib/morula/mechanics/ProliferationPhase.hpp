/*!
  \file ProliferationPhase.hpp
  \brief The phases, counts and report of a sphere-mechanics step, on one rank or many: one table for
  Proliferation and parallel::DistributedSphereMechanics, so that a step over the ranks times into the
  driver's own timer and a report reads the same indices whatever the rank count.
*/
#ifndef MORULA_MECHANICS_PROLIFERATIONPHASE_HPP
#define MORULA_MECHANICS_PROLIFERATIONPHASE_HPP

#include <morula/core/Driver.hpp>
#include <morula/core/PhaseTimer.hpp>

namespace morula::mechanics
{

/*!
  \brief The phases of Proliferation::step(), in the order of the names in its times().

  On one rank a step is division, grid, sort (when due), forces, move; migration and the halo phases
  stay at 0. Over several ranks (parallel::DistributedSphereMechanics) each phase is fenced and timed
  between barriers over the ranks: its time is the slowest rank's, without waits for ranks still in an
  earlier phase. Halo exchange and migration are the communication.
*/
struct ProliferationPhase
{
    enum : int
    {
        migration,   //!< migrate(): owners, sort by destination, counts, fields (several ranks)
        sort,        //!< cell-order (Z-order) sort of the agents, every sort_every steps
        halo_build,  //!< halo-width check (MPI_Allreduce) and new Halo: plan, counts, all fields (several ranks)
        halo_update, //!< Halo::update() of the ghost positions between rebuilds (several ranks)
        grid,        //!< binning the agents (and the ghosts)
        forces,      //!< each agent's force and bounded displacement (owned, then ghost neighbours)
        move,        //!< moving the agents by the displacements of `forces`
        division,    //!< growth and division
        grid_build = grid,  //!< the name of `grid` before one table served one rank and many
        displacement = move //!< the name of `move` before one table served one rank and many
    };
    static constexpr const char* scope = "morula::mechanics::Proliferation";
    static constexpr const char* names[] = { "migration", "sort", "halo_build", "halo_update",
                                             "grid",      "forces", "move",     "division" };
    static constexpr const char* counts[] = { "rebuilds",        "updates",          "migrated_sent", "migrated_received",
                                              "halo_build_rows", "halo_update_rows", "ghosts" };
    //! Seconds of halo exchange and migration in `times` (0 on one rank).
    static double communication( const core::PhaseTimer& times )
    {
        return times.sum( { migration, halo_build, halo_update } );
    }
};

//! What the communication of the timed steps moved: the counts of ProliferationPhase (0 on one rank).
struct ProliferationCount
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

//! What one step did (on several ranks: this rank's divisions and interactions).
struct ProliferationReport : core::StepReport
{
    int divisions = 0;
    bool sorted = false;
    long long interactions = 0; //!< overlapping (agent, neighbour) pairs, when counted

    //! Sums an advance()'s steps: divisions and interactions added, sorted if any step sorted.
    void merge( const ProliferationReport& other )
    {
        divisions += other.divisions;
        sorted = sorted || other.sorted;
        interactions += other.interactions;
    }
};

} // namespace morula::mechanics

#endif
