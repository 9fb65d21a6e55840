// What `morula epidermis` builds before it steps: its settings (every key of the configuration file, the
// paper's values as defaults), read from a file or from JSON text, and the model's parameters and initial
// monolayer made from them. The command and the Python module (python/) both start a run from here, so
// that the same configuration gives the same model in both.
#ifndef MORULA_APPS_EPIDERMISSETUP_HPP
#define MORULA_APPS_EPIDERMISSETUP_HPP

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
} // namespace morula::app

#endif
