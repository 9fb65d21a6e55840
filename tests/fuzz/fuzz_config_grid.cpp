// Fuzz target: `morula grid --config FILE` (apps/morula/GridCommand.cpp's read_config and checks).
#include <GridCommand.hpp>

#define MORULA_FUZZ_CHECK morula::app::check_grid_config
#define MORULA_FUZZ_NAME "config_grid"
#include "ConfigTarget.hpp"
