/*!
  \file Epidermis.hpp
  \brief The 3D epidermis model of seed 000 (Christley et al. 2010) as one driver: SEM mechanics, the
  per-cell gene network coupled through Notch signalling and membrane adhesion, growth and division.
*/
#ifndef MORULA_SEM_EPIDERMIS_HPP
#define MORULA_SEM_EPIDERMIS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/sem/GeneCoupling.hpp>
#include <morula/sem/SemMechanics.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>
#include <morula/sem/TissueGrowth.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <string>
#include <utility>

namespace morula::sem
{

//! The paper's three models.
enum class EpidermisModel : int
{
    movement,     //!< SEM mechanics only
    gene_network, //!< mechanics + the coupled gene network
    full          //!< mechanics + gene network + growth and division
};

inline const char* to_string( EpidermisModel m )
{
    return m == EpidermisModel::movement ? "movement"
           : m == EpidermisModel::gene_network ? "gene_network" : "full";
}

struct EpidermisParameters
{
    EpidermisModel model = EpidermisModel::full;
    SemParameters mechanics;
    GeneCouplingParameters genes;
    TissueGrowthParameters growth;

    void validate( const std::string& where ) const
    {
        mechanics.validate( where );
        genes.validate( where );
        growth.validate( where );
    }
};

//! Seconds per operation, summed over timed steps.
struct EpidermisTimes
{
    double geometry = 0;  //!< cell centres and adhesion
    double mechanics = 0; //!< list upkeep and the Runge-Kutta stages of the elements
    double genes = 0;     //!< neighbour inputs and the gene network stages
    double growth = 0;    //!< growth and division events
    double total() const { return geometry + mechanics + genes + growth; }
};

/*!
  \brief One time step is, as in the paper: cell centres and adhesion; the element stages (RK2 or
  Euler); the neighbour inputs and gene-network stages (with the centres and species of the start of
  the step); and, every `growth.interval` steps of the full model, growth and division.
*/
template <class Scalar, class MemorySpace>
class Epidermis
{
  public:
    using tissue_type = Tissue<Scalar, MemorySpace>;

    Epidermis( tissue_type tissue, const core::Box<Scalar>& box, const EpidermisParameters& params )
        : m_tissue( std::move( tissue ) )
        , m_params( params )
        , m_mechanics( box, params.mechanics )
        , m_genes( box, params.genes )
        , m_growth( params.growth )
    {
        params.validate( "Epidermis" );
    }

    const tissue_type& tissue() const { return m_tissue; }
    tissue_type& tissue() { return m_tissue; }
    const EpidermisParameters& parameters() const { return m_params; }
    const SemMechanics<Scalar, MemorySpace>& mechanics() const { return m_mechanics; }
    SemMechanics<Scalar, MemorySpace>& mechanics() { return m_mechanics; }
    const GeneCoupling<Scalar, MemorySpace>& genes() const { return m_genes; }
    long long step_index() const { return m_step; }
    double time() const { return m_step * m_params.mechanics.time_step; }
    const EpidermisTimes& times() const { return m_times; }
    long long divisions() const { return m_divisions; }
    bool gene_network() const { return m_params.model != EpidermisModel::movement; }

    //! One step; with `timed`, each operation is fenced and timed (a few microseconds each).
    template <class ExecutionSpace>
    GrowthReport step( const ExecutionSpace& exec, bool timed = false )
    {
        auto run = [&]( double& slot, auto&& op ) {
            if ( !timed )
                return op();
            exec.fence();
            const auto t0 = std::chrono::steady_clock::now();
            op();
            exec.fence();
            slot += std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        };
        const bool genes = gene_network();
        run( m_times.geometry, [&] {
            m_mechanics.compute_cell_geometry( exec, m_tissue );
            m_mechanics.prepare( exec, m_tissue );
        } );
        if ( genes )
            run( m_times.genes, [&] { m_genes.compute_inputs( exec, m_tissue, m_mechanics.grid_box() ); } );
        run( m_times.mechanics, [&] { m_mechanics.step( exec, m_tissue ); } );
        if ( genes )
            run( m_times.genes, [&] {
                m_genes.step( exec, m_tissue, m_params.mechanics.time_step, m_params.mechanics.integrator );
            } );
        ++m_step;
        GrowthReport report;
        if ( m_params.model == EpidermisModel::full && m_growth.due( m_step ) )
            run( m_times.growth, [&] {
                m_mechanics.compute_cell_geometry( exec, m_tissue );
                report = m_growth.apply( exec, m_tissue, genes );
                if ( report.grown > 0 || report.divisions > 0 )
                    m_mechanics.invalidate_list();
                m_divisions += report.divisions;
            } );
        return report;
    }

    //! Centres and adhesion of the current positions (for output between steps).
    template <class ExecutionSpace>
    void update_geometry( const ExecutionSpace& exec )
    {
        m_mechanics.compute_cell_geometry( exec, m_tissue );
    }

    //! Per cell: 0 basal, 1 suprabasal (see is_basal); call update_geometry() first.
    template <class ExecutionSpace>
    Kokkos::View<int*, MemorySpace> cell_states( const ExecutionSpace& exec ) const
    {
        Kokkos::View<int*, MemorySpace> state( "morula::sem::cell_state", m_tissue.num_cells() );
        auto species = m_tissue.species();
        auto adhesion = m_tissue.adhesion();
        const bool genes = gene_network();
        Kokkos::parallel_for(
            "morula::sem::cell_states", core::LaunchRange<ExecutionSpace>( exec, 0, m_tissue.num_cells() ),
            KOKKOS_LAMBDA( const int c ) { state( c ) = is_basal( species, adhesion, c, genes ) ? 0 : 1; } );
        return state;
    }

  private:
    tissue_type m_tissue;
    EpidermisParameters m_params;
    SemMechanics<Scalar, MemorySpace> m_mechanics;
    GeneCoupling<Scalar, MemorySpace> m_genes;
    TissueGrowth<Scalar, MemorySpace> m_growth;
    EpidermisTimes m_times;
    long long m_step = 0;
    long long m_divisions = 0;
};

} // namespace morula::sem

#endif
