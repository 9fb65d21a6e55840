/*!
  \file GeneCoupling.hpp
  \brief The per-cell gene network of the epidermis model coupled to neighbouring cells (Notch/Delta)
  and to the environment (membrane adhesion, TGF-beta), integrated for all cells at once.
*/
#ifndef MORULA_SEM_GENECOUPLING_HPP
#define MORULA_SEM_GENECOUPLING_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/grid/UniformGrid.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/ode/EpidermisGeneNetwork.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>
#include <morula/sem/detail/SemKernels.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace morula::sem
{

/*!
  \brief How a cell's neighbours' Notch N, Delta D and bound complex B enter its equations.
  The paper's text says each cell distributes its N and D uniformly among its neighbours; its listed
  code averages the neighbours' values. Both are offered; `average` (the code) is the default.
*/
enum class NeighborCoupling : int
{
    average,   //!< <X>_i = (1 / n_i) sum_{j ~ i} X_j
    distribute //!< <X>_i = sum_{j ~ i} X_j / n_j: cell j hands 1 / n_j of its X to each neighbour
};

//! Parameters of the coupled gene network; Table 2 of Christley et al. (2010) as defaults.
struct GeneCouplingParameters
{
    ode::EpidermisGeneParameters genes;
    double tgf_beta = 0.4;        //!< G, constant in the environment (the paper's value)
    double neighbor_cutoff = 0.75; //!< centre distance of neighbouring cells (1.5 relaxed 20-element cell diameters)
    NeighborCoupling coupling = NeighborCoupling::average;
    /*!
      Skin of the cell-centre Verlet list, as a multiple of neighbor_cutoff: the list holds the cells
      within (1 + skin) neighbor_cutoff and is rebuilt once a centre has moved more than half the skin.
      Centres move slowly (they average 20 elements), so a rebuild is rare; the skin changes no input.
    */
    double neighbor_skin = 0.5;

    void validate( const std::string& where ) const
    {
        if ( !std::isfinite( tgf_beta ) || !( tgf_beta >= 0 ) )
            throw core::InputError( core::detail::concat( where, ": tgf_beta = ", tgf_beta,
                                                          " (expected a finite value >= 0)" ) );
        if ( !std::isfinite( neighbor_cutoff ) || !( neighbor_cutoff > 0 ) )
            throw core::InputError( core::detail::concat( where, ": neighbor_cutoff = ",
                                                          neighbor_cutoff,
                                                          " (expected a finite value > 0)" ) );
        if ( !std::isfinite( neighbor_skin ) || !( neighbor_skin >= 0 ) )
            throw core::InputError( core::detail::concat( where, ": neighbor_skin = ", neighbor_skin,
                                                          " (expected a finite value >= 0)" ) );
    }
};

namespace detail
{
//! One explicit stage of the gene network for every cell: out = max(0, base + coeff f(eval; inputs)).
template <class MemorySpace>
struct GeneStageFunctor
{
    using species_view = Kokkos::View<double* [gene_species], Kokkos::LayoutLeft, MemorySpace>;
    using input_view = Kokkos::View<double* [ode::input_count], Kokkos::LayoutLeft, MemorySpace>;
    ode::EpidermisGeneNetwork<MemorySpace> model;
    species_view base, eval, out;
    input_view inputs;
    double coeff = 0;
    StepGuard<MemorySpace> guard; //!< inside a chunk: nothing to do once a check of the chunk failed

    KOKKOS_INLINE_FUNCTION void operator()( const int c ) const
    {
        if ( guard.skip() )
            return;
        const ode::detail::Strided<const double> in{ &inputs( c, 0 ),
                                                     static_cast<std::ptrdiff_t>( inputs.stride_1() ) };
        const ode::detail::Strided<const double> x{ &eval( c, 0 ),
                                                    static_cast<std::ptrdiff_t>( eval.stride_1() ) };
        double f[gene_species];
        model.evaluate( in, x, f, nullptr );
        // The paper's scheme clamps negative concentrations to zero after each stage.
        for ( int s = 0; s < gene_species; ++s )
        {
            const double v = base( c, s ) + coeff * f[s];
            out( c, s ) = v > 0.0 ? v : 0.0;
        }
    }
};

/*!
  \brief The neighbour inputs of cell c from the cell-centre Verlet list: <N>, <D>, <B> over the cells
  within the cutoff (minimum image), the adhesion A and TGF-beta G; with `count_only`, just the number of
  such neighbours (the `distribute` coupling needs every cell's count before any sum). In a chunk
  (Epidermis::advance) a cell that moved more than half the skin since the list was built ends the chunk.
*/
template <class Scalar, class MemorySpace>
struct CellInputsFunctor
{
    using position_view = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace>;
    using species_view = Kokkos::View<double* [gene_species], Kokkos::LayoutLeft, MemorySpace>;
    using input_view = Kokkos::View<double* [ode::input_count], Kokkos::LayoutLeft, MemorySpace>;
    grid::NeighborListView<MemorySpace> list;
    position_view centre, reference;
    species_view species;
    Kokkos::View<Scalar*, MemorySpace> adhesion;
    Kokkos::View<int*, MemorySpace> count;
    input_view inputs;
    core::Box<Scalar> box;
    Scalar cutoff2 = 0;
    Scalar half_skin2 = 0;
    double tgf_beta = 0;
    bool distribute = false;
    bool count_only = false;
    StepGuard<MemorySpace> guard;

    KOKKOS_INLINE_FUNCTION Scalar distance2( const int c, const int j ) const
    {
        Scalar r2 = 0;
        for ( int d = 0; d < 3; ++d )
        {
            const Scalar v = box.minimum_image( d, centre( c, d ) - centre( j, d ) );
            r2 += v * v;
        }
        return r2;
    }

    //! False (after marking the chunk failed) when cell c left the list's validity in a chunk.
    KOKKOS_INLINE_FUNCTION bool check( const int c ) const
    {
        if ( !guard.in_chunk() )
            return true;
        if ( guard.skip() )
            return false;
        Scalar r2 = 0;
        for ( int d = 0; d < 3; ++d )
        {
            const Scalar v = box.minimum_image( d, centre( c, d ) - reference( c, d ) );
            r2 += v * v;
        }
        if ( !( r2 <= half_skin2 ) )
        {
            guard.fail();
            return false;
        }
        return true;
    }

    KOKKOS_INLINE_FUNCTION void compute( const int c ) const
    {
        const auto end = list.end( c );
        if ( count_only )
        {
            int n = 0;
            for ( auto k = list.begin( c ); k < end; ++k )
                n += distance2( c, list.neighbor( k ) ) <= cutoff2 ? 1 : 0;
            count( c ) = n;
            return;
        }
        double sum[3] = { 0.0, 0.0, 0.0 };
        int n = 0;
        for ( auto k = list.begin( c ); k < end; ++k )
        {
            const int j = list.neighbor( k );
            if ( !( distance2( c, j ) <= cutoff2 ) )
                continue;
            ++n;
            const double w = distribute ? 1.0 / count( j ) : 1.0;
            sum[0] += w * species( j, ode::gene_N );
            sum[1] += w * species( j, ode::gene_D );
            sum[2] += w * species( j, ode::gene_B );
        }
        if ( !distribute )
            count( c ) = n;
        const double scale = distribute || n == 0 ? 1.0 : 1.0 / n;
        for ( int s = 0; s < 3; ++s )
            inputs( c, s ) = sum[s] * scale;
        inputs( c, ode::input_adhesion ) = static_cast<double>( adhesion( c ) );
        inputs( c, ode::input_tgf_beta ) = tgf_beta;
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int c ) const
    {
        if ( check( c ) )
            compute( c );
    }
};

//! Whether any cell moved more than half the skin (minimum image) since the list was built.
template <class Scalar, class MemorySpace>
struct CellMovedFunctor
{
    Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace> centre, reference;
    core::Box<Scalar> box;
    Scalar half_skin2 = 0;

    KOKKOS_INLINE_FUNCTION void operator()( const int c, int& moved ) const
    {
        Scalar r2 = 0;
        for ( int d = 0; d < 3; ++d )
        {
            const Scalar v = box.minimum_image( d, centre( c, d ) - reference( c, d ) );
            r2 += v * v;
        }
        if ( !( r2 <= half_skin2 ) )
            moved = 1;
    }
};

//! Extent of the centres along axis d.
template <class Scalar, class MemorySpace>
struct CentreExtentFunctor
{
    Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace> centre;
    int d = 0;
    KOKKOS_INLINE_FUNCTION void operator()( const int c, Kokkos::MinMaxScalar<Scalar>& m ) const
    {
        const Scalar w = centre( c, d );
        if ( w < m.min_val )
            m.min_val = w;
        if ( w > m.max_val )
            m.max_val = w;
    }
};

//! Copies the centres into the list's reference.
template <class Scalar, class MemorySpace>
struct CopyCentresFunctor
{
    Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace> from, to;
    KOKKOS_INLINE_FUNCTION void operator()( const int c ) const
    {
        for ( int d = 0; d < 3; ++d )
            to( c, d ) = from( c, d );
    }
};
} // namespace detail

/*!
  \brief Neighbour inputs and explicit time stepping of the gene network of every cell.
  Neighbours are cells whose centres lie within neighbor_cutoff (minimum image along periodic axes), read
  from a Verlet list over the cell centres with radius (1 + neighbor_skin) neighbor_cutoff. The list is
  built through a sorted uniform grid over a box of its own (the model's periodic axes, the centres'
  extent along open axes) and rebuilt only when a centre has moved more than half the skin: a step
  costs one check and the inputs kernel, not a grid build. Species are SoA (cells contiguous per
  species), so a warp of cells reads each species coalesced.
*/
template <class Scalar, class MemorySpace>
class GeneCoupling
{
  public:
    using tissue_type = Tissue<Scalar, MemorySpace>;
    using species_view = typename tissue_type::species_view;
    using position_view = typename tissue_type::position_view;
    using input_view = Kokkos::View<double* [ode::input_count], Kokkos::LayoutLeft, MemorySpace>;

    GeneCoupling( const core::Box<Scalar>& box, const GeneCouplingParameters& params )
        : m_box( box )
        , m_params( params )
        , m_model( params.genes, { 0.0, 0.0, 0.0, 0.0, params.tgf_beta } )
    {
        params.validate( "GeneCoupling" );
        double skin = params.neighbor_skin * params.neighbor_cutoff;
        for ( int d = 0; d < 2; ++d )
            if ( box.is_periodic( d ) )
            {
                if ( !( box.length( d ) >= 2 * params.neighbor_cutoff ) )
                    throw core::InputError( core::detail::concat(
                        "GeneCoupling: the periodic box is ", box.length( d ), " long along ", "xy"[d],
                        ", less than twice the neighbour cutoff ", params.neighbor_cutoff ) );
                // A list radius beyond half the box would meet a cell's own images.
                const double room = 0.5 * box.length( d ) - params.neighbor_cutoff;
                skin = skin < room ? skin : room;
            }
        m_cutoff = static_cast<Scalar>( params.neighbor_cutoff );
        m_skin = static_cast<Scalar>( skin );
    }

    const GeneCouplingParameters& parameters() const { return m_params; }
    //! Per cell: <N>, <D>, <B>, adhesion A, TGF-beta G (valid after compute_inputs).
    const input_view& inputs() const { return m_inputs; }
    //! Per cell: number of neighbouring cells (valid after compute_inputs).
    const Kokkos::View<int*, MemorySpace>& neighbor_counts() const { return m_count; }
    //! Builds of the cell-centre list so far.
    long long list_builds() const { return m_list_builds; }
    //! The cell-centre list (valid after compute_inputs or prepare): cells within cutoff + skin.
    grid::NeighborListView<MemorySpace> neighbor_list() const { return m_list.view(); }
    Scalar list_radius() const { return m_cutoff + m_skin; }
    bool distribute() const { return m_params.coupling == NeighborCoupling::distribute; }

    //! Forces a list rebuild before the next inputs (cells were added or renumbered).
    void invalidate_list() { m_list_valid = false; }

    /*!
      \brief Neighbour averages, adhesion and TGF-beta of every cell, from the current centres and
      adhesion (SemMechanics::compute_cell_geometry) and species. `grid_box` is not needed any more (the
      list lays its own grid over the centres); it stays for callers of the earlier interface.
    */
    template <class ExecutionSpace>
    void compute_inputs( const ExecutionSpace& exec, const tissue_type& t, const core::Box<Scalar>& grid_box )
    {
        (void)grid_box;
        prepare( exec, t );
        const int m = t.num_cells();
        if ( distribute() )
            Kokkos::parallel_for( "morula::sem::count_cell_neighbors",
                                  core::LaunchRange<ExecutionSpace>( exec, 0, m ), inputs_functor( t, true ) );
        Kokkos::parallel_for( "morula::sem::neighbor_inputs", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
                              inputs_functor( t, false ) );
    }

    /*!
      \brief Sizes the per-cell arrays and rebuilds the centre list when it is invalid or a centre moved
      more than half the skin (one reduction read by the host). Centres must be current.
    */
    template <class ExecutionSpace>
    void prepare( const ExecutionSpace& exec, const tissue_type& t )
    {
        const int m = t.num_cells();
        if ( static_cast<int>( m_inputs.extent( 0 ) ) < t.cell_capacity() )
        {
            m_inputs = input_view( "morula::sem::gene_inputs", t.cell_capacity() );
            m_count = Kokkos::View<int*, MemorySpace>( "morula::sem::neighbor_count", t.cell_capacity() );
        }
        if ( static_cast<int>( m_half.extent( 0 ) ) < t.cell_capacity() )
            m_half = species_view( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                                       std::string( "morula::sem::species_half" ) ),
                                   t.cell_capacity() );
        bool rebuild = !m_list_valid || m_list.num_particles() != m;
        if ( !rebuild )
        {
            int moved = 0;
            Kokkos::parallel_reduce( "morula::sem::cell_list_check", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
                                     detail::CellMovedFunctor<Scalar, MemorySpace>{ t.centres(), m_reference, m_box,
                                                                                    half_skin2() },
                                     Kokkos::Max<int>( moved ) );
            rebuild = moved > 0; // the Max identity is INT_MIN
        }
        if ( rebuild )
            build_list( exec, t );
    }

    //! Builds the centre list now (public only because CUDA lambdas cannot live in private members).
    template <class ExecutionSpace>
    void build_list( const ExecutionSpace& exec, const tissue_type& t )
    {
        build_list_over( exec, t.centres(), t.num_cells(), t.cell_capacity() );
    }

    //! Builds the list over the first m rows of `centres`, which become its reference.
    template <class ExecutionSpace>
    void build_list_over( const ExecutionSpace& exec, const position_view& centres, int m, int capacity )
    {
        compat::ScopedRegion region( "morula::sem::GeneCoupling::build_list" );
        const Scalar radius = m_cutoff + m_skin;
        // Periodic axes: the model's box; open axes: the centres' extent with a margin of one radius
        // (a tight box keeps the grid's buckets small: a monolayer fills one layer of a 3D grid).
        core::Box<Scalar> gbox = m_box;
        for ( int d = 0; d < 3; ++d )
        {
            if ( m_box.is_periodic( d ) )
                continue;
            Kokkos::MinMaxScalar<Scalar> e;
            Kokkos::parallel_reduce( "morula::sem::centre_extent", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
                                     detail::CentreExtentFunctor<Scalar, MemorySpace>{ centres, d },
                                     Kokkos::MinMax<Scalar>( e ) );
            if ( !std::isfinite( static_cast<double>( e.min_val ) ) ||
                 !std::isfinite( static_cast<double>( e.max_val ) ) )
                throw core::InputError( core::detail::concat( "GeneCoupling: a cell centre is not finite (", "xyz"[d],
                                                              " extent ", e.min_val, " to ", e.max_val, ")" ) );
            gbox.lo[d] = m > 0 ? e.min_val - radius : Scalar( 0 );
            gbox.hi[d] = m > 0 ? e.max_val + radius : radius;
            gbox.boundary[d] = core::Boundary::open;
        }
        m_grid.emplace( gbox, radius );
        m_grid->build( exec, centres, m );
        m_list.build( exec, m_grid->query( centres ), radius, Scalar( 0 ) );
        if ( static_cast<int>( m_reference.extent( 0 ) ) < m )
            m_reference = position_view( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                                              std::string( "morula::sem::cell_list_reference" ) ),
                                         capacity );
        if ( centres.data() != m_reference.data() )
            Kokkos::parallel_for( "morula::sem::cell_list_reference", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
                                  detail::CopyCentresFunctor<Scalar, MemorySpace>{ centres, m_reference } );
        m_list_valid = true;
        ++m_list_builds;
    }

    //! The inputs kernel (or, with count_only, the neighbour count of the `distribute` coupling).
    detail::CellInputsFunctor<Scalar, MemorySpace> inputs_functor( const tissue_type& t, bool count_only ) const
    {
        detail::CellInputsFunctor<Scalar, MemorySpace> f;
        f.list = m_list.view();
        f.centre = t.centres();
        f.reference = m_reference;
        f.species = t.species();
        f.adhesion = t.adhesion();
        f.count = m_count;
        f.inputs = m_inputs;
        f.box = m_box;
        f.cutoff2 = m_cutoff * m_cutoff;
        f.half_skin2 = half_skin2();
        f.tgf_beta = m_params.tgf_beta;
        f.distribute = distribute();
        f.count_only = count_only;
        return f;
    }

    //! The gene stages of one step: first (RK2's half step into the spare species) and last (in place).
    struct Stages
    {
        detail::GeneStageFunctor<MemorySpace> first, last;
    };
    Stages stage_functors( const tissue_type& t, double dt, TimeScheme integrator ) const
    {
        auto species = t.species();
        Stages s{ { m_model, species, species, m_half, m_inputs, dt / 2 },
                  { m_model, species, species, species, m_inputs, dt } };
        // each cell reads only its own base entries: the last stage in place is safe
        if ( integrator == TimeScheme::runge_kutta2 )
            s.last.eval = m_half;
        return s;
    }

    //! One time step of every cell's network with the current inputs (RK2 midpoint or Euler).
    template <class ExecutionSpace>
    void step( const ExecutionSpace& exec, tissue_type& t, double dt, TimeScheme integrator )
    {
        const int m = t.num_cells();
        if ( static_cast<int>( m_half.extent( 0 ) ) < t.cell_capacity() )
            m_half = species_view( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                                       std::string( "morula::sem::species_half" ) ),
                                   t.cell_capacity() );
        const auto stages = stage_functors( t, dt, integrator );
        if ( integrator == TimeScheme::runge_kutta2 )
            Kokkos::parallel_for( "morula::sem::gene_half_step", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
                                  stages.first );
        Kokkos::parallel_for( "morula::sem::gene_step", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
                              stages.last );
    }

    //! Whether a chunk may start: the list is current for these cells and every array is sized.
    bool ready_for_chunk( const tissue_type& t ) const
    {
        return m_list_valid && m_list.num_particles() == t.num_cells() &&
               static_cast<int>( m_inputs.extent( 0 ) ) >= t.cell_capacity() &&
               static_cast<int>( m_half.extent( 0 ) ) >= t.cell_capacity();
    }

    //! Pointers a chunk's kernels freeze (see SemMechanics::chunk_signature).
    void chunk_signature( const tissue_type& t, std::vector<std::uintptr_t>& sig ) const
    {
        auto p = []( const void* q ) { return reinterpret_cast<std::uintptr_t>( q ); };
        sig.insert( sig.end(), { p( m_list.offsets().data() ), p( m_list.indices().data() ), p( m_reference.data() ),
                                 p( m_inputs.data() ), p( m_count.data() ), p( m_half.data() ),
                                 p( t.species().data() ) } );
    }

    /*!
      \brief Writes the centre list's state under `prefix` ("genes/"): valid, builds and, for a valid
      list, the centres it was built from (restart() rebuilds the same list from them). The inputs and
      the half-step species are recomputed by every step before they are read, so they are not written.
    */
    void checkpoint( io::CheckpointWriter& out, const std::string& prefix ) const
    {
        out.put_scalar( prefix + "list_valid", static_cast<std::uint8_t>( m_list_valid ) );
        out.put_scalar( prefix + "list_builds", m_list_builds );
        if ( m_list_valid )
            out.put_field( prefix + "list_reference", m_reference, m_list.num_particles() );
    }

    /*!
      \brief Restores what checkpoint() wrote for the tissue `t` (already restored).
      \throws core::InputError naming the checkpoint file if the list's size differs from the tissue's
    */
    template <class ExecutionSpace>
    void restart( const ExecutionSpace& exec, const io::CheckpointReader& in, const tissue_type& t,
                  const std::string& prefix )
    {
        const bool valid = in.scalar<std::uint8_t>( prefix + "list_valid" ) != 0;
        const long long builds = in.scalar<long long>( prefix + "list_builds" );
        const int m = t.num_cells();
        if ( valid && in.rows( prefix + "list_reference" ) != static_cast<std::size_t>( m ) )
            in.fail( core::detail::concat( "'", prefix, "list_reference' holds ", in.rows( prefix + "list_reference" ),
                                           " cells, the tissue ", m ) );
        m_list_valid = false;
        if ( valid )
        {
            if ( static_cast<int>( m_reference.extent( 0 ) ) < m )
                m_reference = position_view( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                                                  std::string( "morula::sem::cell_list_reference" ) ),
                                             t.cell_capacity() );
            in.get_field( prefix + "list_reference", m_reference, m );
            build_list_over( exec, m_reference, m, t.cell_capacity() );
        }
        m_list_builds = builds;
        exec.fence();
    }

  private:
    Scalar half_skin2() const { return ( m_skin / 2 ) * ( m_skin / 2 ); }

    core::Box<Scalar> m_box;
    GeneCouplingParameters m_params;
    ode::EpidermisGeneNetwork<MemorySpace> m_model;
    Scalar m_cutoff = 0;
    Scalar m_skin = 0;
    std::optional<grid::UniformGrid<Scalar, MemorySpace>> m_grid;
    grid::NeighborList<Scalar, MemorySpace> m_list;
    position_view m_reference;
    input_view m_inputs;
    Kokkos::View<int*, MemorySpace> m_count;
    species_view m_half;
    bool m_list_valid = false;
    long long m_list_builds = 0;
};

} // namespace morula::sem

#endif
