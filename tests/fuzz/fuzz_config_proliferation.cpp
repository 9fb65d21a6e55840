// Fuzz target: `morula proliferation --config FILE` (apps/morula/ProliferationCommand.cpp's read_config and checks).
#include <ProliferationCommand.hpp>

#define MORULA_FUZZ_CHECK morula::app::check_proliferation_config
#define MORULA_FUZZ_NAME "config_proliferation"
#include "ConfigTarget.hpp"
