/*!
  \file SphereAgents.hpp
  \brief Spherical agents (cells) in structure-of-arrays Views: position, diameter, adherence,
  density and a unique id.
*/
#ifndef MORULA_MECHANICS_SPHEREAGENTS_HPP
#define MORULA_MECHANICS_SPHEREAGENTS_HPP

#include <morula/core/SoA.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace morula::mechanics
{

/*!
  \brief Spherical agents of the BioDynaMo cell model (Hesam et al. 2021).

  Fields, each a LayoutLeft View of capacity() entries: position (x, y, z), diameter, adherence (the
  force a cell resists before it moves), density (mass = density x volume) and id. Ids are unique and
  survive every permutation, so results can be compared agent by agent whatever the memory order;
  division gives new agents the ids next_id(), next_id() + 1, ...

  The volume is not stored: it is pi d^3 / 6 of the diameter, so the two can never disagree.
*/
template <class Scalar, class MemorySpace>
class SphereAgents : public core::Particles<Scalar, MemorySpace, Scalar, Scalar, Scalar, std::int64_t>
{
    using base = core::Particles<Scalar, MemorySpace, Scalar, Scalar, Scalar, std::int64_t>;

  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using scalar_view = Kokkos::View<Scalar*, Kokkos::LayoutLeft, MemorySpace>;
    using id_view = Kokkos::View<std::int64_t*, Kokkos::LayoutLeft, MemorySpace>;

    SphereAgents() = default;
    explicit SphereAgents( std::string label, std::size_t size = 0, std::size_t capacity = 0 )
        : base( std::move( label ), size, capacity )
    {
    }

    const scalar_view& diameters() const { return this->template get<1>(); }
    const scalar_view& adherence() const { return this->template get<2>(); }
    const scalar_view& densities() const { return this->template get<3>(); }
    const id_view& ids() const { return this->template get<4>(); }

    //! The id the next new agent receives (one more than the largest id given out so far).
    std::int64_t next_id() const { return m_next_id; }
    void set_next_id( std::int64_t id ) { m_next_id = id; }

  private:
    std::int64_t m_next_id = 0;
};

//! Volume of a sphere of diameter d.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar sphere_volume( Scalar d )
{
    return Scalar( 0.52359877559829887307710723054658 ) * d * d * d; // pi / 6
}

} // namespace morula::mechanics

#endif
