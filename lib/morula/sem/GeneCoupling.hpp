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
#include <morula/grid/UniformGrid.hpp>
#include <morula/ode/EpidermisGeneNetwork.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <optional>
#include <string>

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

    void validate( const std::string& where ) const
    {
        if ( !std::isfinite( tgf_beta ) || !( tgf_beta >= 0 ) )
            throw core::InputError( core::detail::concat( where, ": tgf_beta = ", tgf_beta,
                                                          " (expected a finite value >= 0)" ) );
        if ( !std::isfinite( neighbor_cutoff ) || !( neighbor_cutoff > 0 ) )
            throw core::InputError( core::detail::concat( where, ": neighbor_cutoff = ",
                                                          neighbor_cutoff,
                                                          " (expected a finite value > 0)" ) );
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

    KOKKOS_INLINE_FUNCTION void operator()( const int c ) const
    {
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
} // namespace detail

/*!
  \brief Neighbour inputs and explicit time stepping of the gene network of every cell.
  Neighbours are cells whose centres lie within neighbor_cutoff, found through a sorted uniform grid
  over the cell centres (periodic in x and y like the tissue). Species are SoA (cells contiguous per
  species), so a warp of cells reads each species coalesced.
*/
template <class Scalar, class MemorySpace>
class GeneCoupling
{
  public:
    using tissue_type = Tissue<Scalar, MemorySpace>;
    using species_view = typename tissue_type::species_view;
    using input_view = Kokkos::View<double* [ode::input_count], Kokkos::LayoutLeft, MemorySpace>;

    GeneCoupling( const core::Box<Scalar>& box, const GeneCouplingParameters& params )
        : m_box( box )
        , m_params( params )
        , m_model( params.genes, { 0.0, 0.0, 0.0, 0.0, params.tgf_beta } )
    {
        params.validate( "GeneCoupling" );
        for ( int d = 0; d < 2; ++d )
            if ( box.is_periodic( d ) && !( box.length( d ) >= 2 * params.neighbor_cutoff ) )
                throw core::InputError( core::detail::concat(
                    "GeneCoupling: the periodic box is ", box.length( d ), " long along ", "xy"[d],
                    ", less than twice the neighbour cutoff ", params.neighbor_cutoff ) );
    }

    const GeneCouplingParameters& parameters() const { return m_params; }
    //! Per cell: <N>, <D>, <B>, adhesion A, TGF-beta G (valid after compute_inputs).
    const input_view& inputs() const { return m_inputs; }
    //! Per cell: number of neighbouring cells (valid after compute_inputs).
    const Kokkos::View<int*, MemorySpace>& neighbor_counts() const { return m_count; }

    /*!
      \brief Neighbour averages, adhesion and TGF-beta of every cell, from the current centres and
      adhesion (SemMechanics::compute_cell_geometry) and species. `grid_box` covers every centre
      (SemMechanics::grid_box()).
    */
    template <class ExecutionSpace>
    void compute_inputs( const ExecutionSpace& exec, const tissue_type& t,
                         const core::Box<Scalar>& grid_box )
    {
        const int m = t.num_cells();
        if ( static_cast<int>( m_inputs.extent( 0 ) ) < t.cell_capacity() )
        {
            m_inputs = input_view( "morula::sem::gene_inputs", t.cell_capacity() );
            m_count = Kokkos::View<int*, MemorySpace>( "morula::sem::neighbor_count", t.cell_capacity() );
        }
        bool same_box = m_grid.has_value();
        for ( int d = 0; d < 3 && same_box; ++d )
            same_box = m_grid->geometry().box.lo[d] == grid_box.lo[d] &&
                       m_grid->geometry().box.hi[d] == grid_box.hi[d];
        if ( !same_box )
            m_grid.emplace( grid_box, static_cast<Scalar>( m_params.neighbor_cutoff ) );
        auto centres = t.centres();
        m_grid->build( exec, centres, m );
        const auto query = m_grid->query( centres );
        const Scalar radius = static_cast<Scalar>( m_params.neighbor_cutoff );
        auto count = m_count;
        Kokkos::parallel_for(
            "morula::sem::count_cell_neighbors", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
            KOKKOS_LAMBDA( const int c ) { count( c ) = query.count_neighbors( c, radius ); } );
        auto inputs = m_inputs;
        auto species = t.species();
        auto adhesion = t.adhesion();
        const double G = m_params.tgf_beta;
        const bool distribute = m_params.coupling == NeighborCoupling::distribute;
        Kokkos::parallel_for(
            "morula::sem::neighbor_inputs", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
            KOKKOS_LAMBDA( const int c ) {
                double sum[3] = { 0.0, 0.0, 0.0 };
                query.for_each_neighbor( c, radius, [&]( const int j, Scalar, Scalar, Scalar, Scalar ) {
                    const double w = distribute ? 1.0 / count( j ) : 1.0;
                    sum[0] += w * species( j, ode::gene_N );
                    sum[1] += w * species( j, ode::gene_D );
                    sum[2] += w * species( j, ode::gene_B );
                } );
                const int n = count( c );
                const double scale = distribute || n == 0 ? 1.0 : 1.0 / n;
                for ( int s = 0; s < 3; ++s )
                    inputs( c, s ) = sum[s] * scale;
                inputs( c, ode::input_adhesion ) = static_cast<double>( adhesion( c ) );
                inputs( c, ode::input_tgf_beta ) = G;
            } );
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
        auto species = t.species();
        detail::GeneStageFunctor<MemorySpace> stage{ m_model, species, species, species, m_inputs, dt };
        if ( integrator == TimeScheme::runge_kutta2 )
        {
            stage.out = m_half;
            stage.coeff = dt / 2;
            Kokkos::parallel_for( "morula::sem::gene_half_step",
                                  core::LaunchRange<ExecutionSpace>( exec, 0, m ), stage );
            stage.eval = m_half;
            stage.out = species; // each cell reads only its own base entries: in place is safe
            stage.coeff = dt;
        }
        Kokkos::parallel_for( "morula::sem::gene_step", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
                              stage );
    }

  private:
    core::Box<Scalar> m_box;
    GeneCouplingParameters m_params;
    ode::EpidermisGeneNetwork<MemorySpace> m_model;
    std::optional<grid::UniformGrid<Scalar, MemorySpace>> m_grid;
    input_view m_inputs;
    Kokkos::View<int*, MemorySpace> m_count;
    species_view m_half;
};

} // namespace morula::sem

#endif
