// Fuzz target: `morula lattice --config FILE` (apps/morula/LatticeCommand.cpp's read_config and checks).
#include <LatticeCommand.hpp>

#define MORULA_FUZZ_CHECK morula::app::check_lattice_config
#define MORULA_FUZZ_NAME "config_lattice"
#include "ConfigTarget.hpp"
