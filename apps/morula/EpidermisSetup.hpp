// What `morula epidermis` builds before it steps: its settings (every key of the configuration file, the
// paper's values as defaults), read from a file or from JSON text, and the model's parameters and initial
// monolayer made from them. The command and the Python module (python/) both start a run from here, so
// that the same configuration gives the same model in both.
#ifndef MORULA_APPS_EPIDERMISSETUP_HPP
#define MORULA_APPS_EPIDERMISSETUP_HPP

#include <morula/core/HostCopy.hpp>
#include <morula/io/TissueSnapshots.hpp>
#include <morula/sem/Epidermis.hpp>
#include <morula/sem/Initializers.hpp>

#include <optional>
#include <string>
#include <vector>

namespace morula::app
{
// Every key of the configuration file (docs/models/epidermis.md), with the paper's values as defaults.
struct EpidermisSettings
{
    std::string model = "full";
    std::string precision = "double";
    long cells = 100;
    long elements_per_cell = 20;
    long adhesive_elements = 5;
    std::string boundary = "periodic";
    double box_x = 0, box_y = 0;
    long steps = 40000;
    double dt = 0.01;
    std::string integrator = "rk2";
    long output_every = 2000;
    long seed = 1;
    std::string output = "epidermis";
    double neighbor_cutoff = 0.75;
    std::string coupling = "average";
    double tgf_beta = 0.4;
    long growth_interval = 2000;
    long division_elements = 40;
    std::string growth_rule = "basal_state";
    double delta_threshold = 20;
    std::vector<double> intra{ 0.3, 0.1, 0.12, 0.36 };
    std::vector<double> inter{ 0.3, 0.05, 0.12, 0.24 };
    std::vector<double> membrane{ 0.3, 0.1, 0.12, 0.36 };
    double inter_cutoff = 0;
    std::optional<double> skin_factor; //!< unset: the backend's default (sem::default_skin_factor)
    bool progress = true;
};

//! Reads the keys the configuration file `path` holds into `s` (the others keep their values); throws
//! core::InputError naming the file, key and value.
void read_epidermis_config( const std::string& path, EpidermisSettings& s );
//! The same for JSON text in memory, named `name` in errors.
void read_epidermis_config_text( const std::string& json, const std::string& name, EpidermisSettings& s );

//! The model's parameters from the settings, with every check a run makes before it allocates anything.
sem::EpidermisParameters epidermis_parameters( const EpidermisSettings& s );

//! The initial monolayer's description (cells, elements, boundary, box, seed).
sem::MonolayerSpec monolayer_spec( const EpidermisSettings& s );

//! The model's state as one snapshot frame (io::TissueSnapshotWriter): elements, cells, their states
//! and gene species. Updates the model's geometry (centres, adhesion) first, as every frame does.
template <class Model, class ExecutionSpace>
io::TissueFrame epidermis_frame( Model& model, const ExecutionSpace& space )
{
    model.update_geometry( space );
    const auto state = model.cell_states( space );
    const auto host = model.tissue().to_host();
    const int m = static_cast<int>( host.cells() );
    std::vector<int> hs;
    std::vector<double> hc; // centres: x, y, z per cell
    core::copy_to_host( state, m, hs );
    core::copy_to_host( model.tissue().centres(), m, hc );
    io::TissueFrame f;
    f.step = model.steps_done();
    f.time = model.time();
    f.positions = host.positions;
    f.type.assign( host.type.begin(), host.type.end() );
    for ( int c = 0; c < m; ++c )
    {
        for ( int k = 0; k < host.cell_elements[c]; ++k )
        {
            f.cell.push_back( c );
            f.state.push_back( hs[c] );
        }
        for ( int d = 0; d < 3; ++d )
            f.cell_centres.push_back( hc[3 * c + d] );
        f.cell_elements.push_back( host.cell_elements[c] );
        f.cell_state.push_back( hs[c] );
    }
    f.species = host.species;
    f.species_count = sem::gene_species;
    f.species_names = { "Notch", "Delta", "bound_Notch_Delta", "Ovol2", "Ovol1", "c-Myc" };
    return f;
}
} // namespace morula::app

#endif
