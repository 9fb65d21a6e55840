/*!
  \file VesselTubes.hpp
  \brief Vessel tubes in structure-of-arrays Views: two end points and two radii each, linked into
  vessels through their parent tube, with the flow they carry and the oxygen they deliver.
*/
#ifndef MORULA_ANGIO_VESSELTUBES_HPP
#define MORULA_ANGIO_VESSELTUBES_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/SoA.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace morula::angio
{

//! Bits of a tube's flags.
enum TubeFlag : std::int32_t
{
    tube_tip = 1,        //!< the growing end of a sprout
    tube_sprouted = 2,   //!< grown by angiogenesis (not part of the initial vessels)
    tube_anastomosed = 4 //!< a tip that met another vessel and stopped
};

/*!
  \brief Tubes on the host. A vessel is a chain: each tube's end_a sits at `attach` (0 = end_a,
  1 = end_b) along its parent tube; an inlet tube has parent -1. Parents come before their children
  (parent < index), so chains cannot loop.
*/
struct HostTubes
{
    std::vector<double> end_a, end_b; // 3 per tube
    std::vector<double> radius_a, radius_b, attach, flow, blood_oxygen, delivered, taf, last_sprout;
    std::vector<std::int32_t> parent, flags;
    std::vector<std::int64_t> id;

    std::size_t size() const { return radius_a.size(); }

    //! Appends one tube.
    void add( const double a[3], const double b[3], double ra, double rb, std::int32_t parent_tube,
              double attach_at, std::int32_t tube_flags )
    {
        for ( int d = 0; d < 3; ++d )
        {
            end_a.push_back( a[d] );
            end_b.push_back( b[d] );
        }
        radius_a.push_back( ra );
        radius_b.push_back( rb );
        attach.push_back( attach_at );
        flow.push_back( 0 );
        blood_oxygen.push_back( 0 );
        delivered.push_back( 0 );
        taf.push_back( 0 );
        last_sprout.push_back( -1e30 );
        parent.push_back( parent_tube );
        flags.push_back( tube_flags );
        id.push_back( static_cast<std::int64_t>( id.size() ) );
    }

    /*!
      \brief Appends a vessel along a polyline of `points` (x, y, z each; at least two points) of constant
      radius, each segment cut into equal tubes no longer than max_tube_length. Its first tube is an inlet.
      \throws core::InputError naming `where` for fewer than two points, coincident points or a bad radius
    */
    void add_vessel( const std::vector<double>& points, double radius, double max_tube_length,
                     const std::string& where )
    {
        if ( points.size() % 3 != 0 || points.size() < 6 )
            throw core::InputError( core::detail::concat( where, ": a vessel needs at least two points of "
                                                          "three coordinates; got ", points.size(), " numbers" ) );
        if ( !( radius > 0 ) || !std::isfinite( radius ) )
            throw core::InputError( core::detail::concat( where, ": vessel radius = ", radius,
                                                          " (expected a finite value > 0)" ) );
        std::int32_t prev = -1;
        for ( std::size_t k = 0; k + 5 < points.size(); k += 3 )
        {
            const double* p = &points[k];
            const double* q = &points[k + 3];
            const double len = std::sqrt( ( q[0] - p[0] ) * ( q[0] - p[0] ) + ( q[1] - p[1] ) * ( q[1] - p[1] ) +
                                          ( q[2] - p[2] ) * ( q[2] - p[2] ) );
            if ( !( len > 0 ) )
                throw core::InputError( core::detail::concat( where, ": vessel points ", k / 3, " and ",
                                                              k / 3 + 1, " coincide" ) );
            // Tube indices are 32-bit (parent): a segment needing more tubes than that, or of no finite
            // length, is bad input, not a number to convert (the conversion would be undefined).
            const double tubes = std::ceil( len / max_tube_length );
            if ( !( tubes <= double( std::numeric_limits<std::int32_t>::max() ) - double( size() ) ) )
                throw core::InputError( core::detail::concat(
                    where, ": vessel points ", k / 3, " and ", k / 3 + 1, " are ", len, " apart, ", tubes,
                    " tubes of at most max_tube_length = ", max_tube_length, "; expected at most ",
                    std::numeric_limits<std::int32_t>::max(), " tubes in all" ) );
            const int pieces = static_cast<int>( tubes );
            for ( int s = 0; s < pieces; ++s )
            {
                double a[3], b[3];
                for ( int d = 0; d < 3; ++d )
                {
                    a[d] = p[d] + ( q[d] - p[d] ) * double( s ) / pieces;
                    b[d] = p[d] + ( q[d] - p[d] ) * double( s + 1 ) / pieces;
                }
                add( a, b, radius, radius, prev, 1.0, 0 );
                prev = static_cast<std::int32_t>( size() - 1 );
            }
        }
    }

    //! Throws core::InputError naming `where`, the tube and the field when sizes or values are wrong.
    void validate( const std::string& where ) const
    {
        const std::size_t m = size();
        auto sized = [&]( std::size_t got, std::size_t want, const char* field ) {
            if ( got != want )
                throw core::InputError( core::detail::concat( where, ": tubes.", field, " has ", got,
                                                              " entries, expected ", want ) );
        };
        sized( end_a.size(), 3 * m, "end_a" );
        sized( end_b.size(), 3 * m, "end_b" );
        sized( radius_b.size(), m, "radius_b" );
        sized( attach.size(), m, "attach" );
        sized( flow.size(), m, "flow" );
        sized( blood_oxygen.size(), m, "blood_oxygen" );
        sized( delivered.size(), m, "delivered" );
        sized( taf.size(), m, "taf" );
        sized( last_sprout.size(), m, "last_sprout" );
        sized( parent.size(), m, "parent" );
        sized( flags.size(), m, "flags" );
        sized( id.size(), m, "id" );
        for ( std::size_t i = 0; i < m; ++i )
        {
            for ( int d = 0; d < 3; ++d )
                if ( !std::isfinite( end_a[3 * i + d] ) || !std::isfinite( end_b[3 * i + d] ) )
                    throw core::InputError( core::detail::concat( where, ": tube ", i, " has a non-finite end" ) );
            if ( !( radius_a[i] > 0 ) || !( radius_b[i] > 0 ) || !std::isfinite( radius_a[i] ) ||
                 !std::isfinite( radius_b[i] ) )
                throw core::InputError( core::detail::concat( where, ": tube ", i, " has radii ", radius_a[i], ", ",
                                                              radius_b[i], " (expected finite values > 0)" ) );
            if ( parent[i] < -1 || parent[i] >= static_cast<std::int32_t>( i ) )
                throw core::InputError( core::detail::concat( where, ": tube ", i, " has parent ", parent[i],
                                                              " (expected -1 for an inlet or an earlier tube)" ) );
            if ( !( attach[i] >= 0 && attach[i] <= 1 ) )
                throw core::InputError( core::detail::concat( where, ": tube ", i, " has attach ", attach[i],
                                                              " (expected a value in [0, 1])" ) );
        }
    }
};

/*!
  \brief Vessel tubes: fields 0 end_a, 1 end_b (Scalar[3]), 2 radius_a, 3 radius_b, 4 parent, 5 flags,
  6 attach, 7 flow, 8 blood_oxygen, 9 delivered (oxygen per second into cells, last step), 10 TAF sensed,
  11 TAF gradient (Scalar[3]), 12 force from cells and tubes (Scalar[3]), 13 time of the last sprout,
  14 sum of the children's r^3 (Murray's law), 15 tube-tube contacts, 16 id.
*/
template <class Scalar, class MemorySpace>
class VesselTubes
    : public core::SoA<MemorySpace, Scalar[3], Scalar[3], Scalar, Scalar, std::int32_t, std::int32_t, Scalar,
                       Scalar, Scalar, Scalar, Scalar, Scalar[3], Scalar[3], Scalar, Scalar, std::int32_t,
                       std::int64_t>
{
    using base = core::SoA<MemorySpace, Scalar[3], Scalar[3], Scalar, Scalar, std::int32_t, std::int32_t, Scalar,
                           Scalar, Scalar, Scalar, Scalar, Scalar[3], Scalar[3], Scalar, Scalar, std::int32_t,
                           std::int64_t>;

  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using vector_view = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace>;
    using scalar_view = Kokkos::View<Scalar*, Kokkos::LayoutLeft, MemorySpace>;
    using int_view = Kokkos::View<std::int32_t*, Kokkos::LayoutLeft, MemorySpace>;
    using id_view = Kokkos::View<std::int64_t*, Kokkos::LayoutLeft, MemorySpace>;

    VesselTubes() = default;
    explicit VesselTubes( std::string label, std::size_t size = 0, std::size_t capacity = 0 )
        : base( std::move( label ), size, capacity )
    {
    }

    //! Device copy of host tubes (validated).
    explicit VesselTubes( const HostTubes& h )
        : base( "morula::angio::tubes", h.size() )
    {
        h.validate( "VesselTubes" );
        assign( h );
    }

    const vector_view& end_a() const { return this->template get<0>(); }
    const vector_view& end_b() const { return this->template get<1>(); }
    const scalar_view& radius_a() const { return this->template get<2>(); }
    const scalar_view& radius_b() const { return this->template get<3>(); }
    const int_view& parents() const { return this->template get<4>(); }
    const int_view& flags() const { return this->template get<5>(); }
    const scalar_view& attach() const { return this->template get<6>(); }
    const scalar_view& flow() const { return this->template get<7>(); }
    const scalar_view& blood_oxygen() const { return this->template get<8>(); }
    const scalar_view& delivered() const { return this->template get<9>(); }
    const scalar_view& taf() const { return this->template get<10>(); }
    const vector_view& taf_gradient() const { return this->template get<11>(); }
    const vector_view& forces() const { return this->template get<12>(); }
    const scalar_view& last_sprout() const { return this->template get<13>(); }
    const scalar_view& children_r3() const { return this->template get<14>(); }
    const int_view& contacts() const { return this->template get<15>(); }
    const id_view& ids() const { return this->template get<16>(); }

    std::int64_t next_id() const { return m_next_id; }
    void set_next_id( std::int64_t id ) { m_next_id = id; }

    //! Copies the first size() tubes to the host.
    HostTubes to_host() const
    {
        HostTubes h;
        const std::size_t m = this->size();
        core::copy_to_host( end_a(), m, h.end_a );
        core::copy_to_host( end_b(), m, h.end_b );
        core::copy_to_host( radius_a(), m, h.radius_a );
        core::copy_to_host( radius_b(), m, h.radius_b );
        core::copy_to_host( attach(), m, h.attach );
        core::copy_to_host( flow(), m, h.flow );
        core::copy_to_host( blood_oxygen(), m, h.blood_oxygen );
        core::copy_to_host( delivered(), m, h.delivered );
        core::copy_to_host( taf(), m, h.taf );
        core::copy_to_host( last_sprout(), m, h.last_sprout );
        core::copy_to_host( parents(), m, h.parent );
        core::copy_to_host( flags(), m, h.flags );
        core::copy_to_host( ids(), m, h.id );
        return h;
    }

  private:
    void assign( const HostTubes& h )
    {
        const std::size_t m = h.size();
        core::copy_from_host( h.end_a, m, end_a() );
        core::copy_from_host( h.end_b, m, end_b() );
        core::copy_from_host( h.radius_a, m, radius_a() );
        core::copy_from_host( h.radius_b, m, radius_b() );
        core::copy_from_host( h.attach, m, attach() );
        core::copy_from_host( h.flow, m, flow() );
        core::copy_from_host( h.blood_oxygen, m, blood_oxygen() );
        core::copy_from_host( h.delivered, m, delivered() );
        core::copy_from_host( h.taf, m, taf() );
        core::copy_from_host( h.last_sprout, m, last_sprout() );
        core::copy_from_host( h.parent, m, parents() );
        core::copy_from_host( h.flags, m, flags() );
        core::copy_from_host( h.id, m, ids() );
        m_next_id = core::next_free_id( h.id );
    }

    std::int64_t m_next_id = 0;
};

} // namespace morula::angio

#endif
