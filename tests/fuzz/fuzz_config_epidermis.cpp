// Fuzz target: `morula epidermis --config FILE` (apps/morula/EpidermisCommand.cpp's read_config and checks).
#include <EpidermisCommand.hpp>

#define MORULA_FUZZ_CHECK morula::app::check_epidermis_config
#define MORULA_FUZZ_NAME "config_epidermis"
#include "ConfigTarget.hpp"
