#ifndef MORULA_LATTICE_DETAIL_ENGINEACCESS_HPP
#define MORULA_LATTICE_DETAIL_ENGINEACCESS_HPP
/*!
  \file EngineAccess.hpp
  \brief The engine underneath a lattice driver (SlabDiffusion: the overflow list, a pass over a range of
  planes), for tests that look inside a step. Internal, no stable interface: the drivers keep their engine
  private and name this struct a friend.
*/

namespace morula::lattice::detail
{
struct EngineAccess
{
    template <class Driver>
    static auto& engine( Driver& driver )
    {
        return driver.engine();
    }
};
} // namespace morula::lattice::detail

#endif
