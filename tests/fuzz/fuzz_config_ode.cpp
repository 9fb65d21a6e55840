// Fuzz target: `morula ode run --config FILE` (apps/morula/JsonOptions.cpp through the command's options).
#include <OdeCommand.hpp>

#define MORULA_FUZZ_CHECK morula::app::check_ode_run_config
#define MORULA_FUZZ_NAME "config_ode"
#include "ConfigTarget.hpp"
