// Fuzz target: `morula angiogenesis --config FILE` (apps/morula/AngioCommand.cpp's read_config and checks).
#include <AngioCommand.hpp>

#define MORULA_FUZZ_CHECK morula::app::check_angiogenesis_config
#define MORULA_FUZZ_NAME "config_angiogenesis"
#include "ConfigTarget.hpp"
