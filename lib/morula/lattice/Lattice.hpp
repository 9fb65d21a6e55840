/*!
  \file Lattice.hpp
  \brief A cubic lattice of packed sites (SiteWord.hpp) in one View, and its shape and boundaries.
*/
#ifndef MORULA_LATTICE_LATTICE_HPP
#define MORULA_LATTICE_LATTICE_HPP

#include <morula/core/Error.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace morula::lattice
{

//! What a particle meets at the lattice's faces along one axis.
enum class LatticeBoundary
{
    periodic,  //!< leaves on one face, enters on the opposite one
    reflecting //!< a move out of the lattice is refused: the particle stays where it is
};

inline const char* to_string( LatticeBoundary b )
{
    return b == LatticeBoundary::periodic ? "periodic" : "reflecting";
}

/*!
  \brief Extents and boundaries. Sites are numbered x fastest: index = x + nx (y + ny z) (the paper's
  layout), so consecutive threads along x read consecutive words.
*/
struct LatticeShape
{
    int nx = 0, ny = 0, nz = 0;
    std::array<LatticeBoundary, 3> boundary{ LatticeBoundary::periodic, LatticeBoundary::periodic,
                                             LatticeBoundary::periodic };

    LatticeShape() = default;
    LatticeShape( int x, int y, int z, LatticeBoundary b = LatticeBoundary::periodic )
        : nx( x ), ny( y ), nz( z ), boundary{ b, b, b }
    {
        validate();
    }

    std::size_t sites() const { return std::size_t( nx ) * std::size_t( ny ) * std::size_t( nz ); }
    int extent( int axis ) const { return axis == 0 ? nx : axis == 1 ? ny : nz; }
    std::size_t index( int x, int y, int z ) const
    {
        return std::size_t( x ) + std::size_t( nx ) * ( std::size_t( y ) + std::size_t( ny ) * std::size_t( z ) );
    }

    //! \throws core::InputError unless every extent is in [1, 2^20] and the sites fit 2^37 (the
    //! overflow list keys sites in 56 bits; 2^37 words are 512 GiB)
    void validate() const
    {
        for ( int a = 0; a < 3; ++a )
            if ( extent( a ) < 1 || extent( a ) > ( 1 << 20 ) )
                throw core::InputError( core::detail::concat( "lattice: extent along ", "xyz"[a], " = ",
                                                              extent( a ), " is outside [1, 1048576]" ) );
        if ( sites() > ( std::size_t( 1 ) << 37 ) )
            throw core::InputError( core::detail::concat( "lattice: ", nx, " x ", ny, " x ", nz,
                                                          " sites exceed 2^37" ) );
    }
};

/*!
  \brief The sites of a lattice with `Slots` particles per site in memory space `MemorySpace`.

  A plain value type around one View; copies share the View (like Kokkos::View). Initially every site
  is empty and of type 0.
*/
template <int Slots, class MemorySpace>
class Lattice
{
  public:
    using layout = SiteLayout<Slots>;
    using memory_space = MemorySpace;
    using view_type = Kokkos::View<site_word*, MemorySpace>;

    Lattice() = default;
    explicit Lattice( const LatticeShape& shape, const std::string& label = "lattice_sites" )
        : m_shape( shape )
        , m_sites( label, shape.sites() )
    {
        shape.validate();
    }
    Lattice( const LatticeShape& shape, view_type sites )
        : m_shape( shape )
        , m_sites( std::move( sites ) )
    {
        shape.validate();
        if ( m_sites.extent( 0 ) != shape.sites() )
            throw core::InputError( core::detail::concat( "Lattice: the View has ", m_sites.extent( 0 ),
                                                          " sites, the shape ", shape.sites() ) );
    }

    const LatticeShape& shape() const { return m_shape; }
    std::size_t size() const { return m_shape.sites(); }
    const view_type& sites() const { return m_sites; }

  private:
    LatticeShape m_shape;
    view_type m_sites;
};

} // namespace morula::lattice

#endif
