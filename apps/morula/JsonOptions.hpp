// A subcommand's options read from a JSON file: the file's keys are the subcommand's options, given to
// CLI11's own options, so that a file and the command line are one set of options (the same names,
// conversions and checks), the command line wins where both give a value, and `count()` tells which
// options were given either way.
#ifndef MORULA_APPS_JSONOPTIONS_HPP
#define MORULA_APPS_JSONOPTIONS_HPP

#include <CLI/CLI.hpp>

#include <set>
#include <string>

namespace morula::app
{

/*!
  \brief Sets the options of `cmd` that the command line did not give from the JSON object in `path`.

  Keys are the options' names without their dashes, with '_' or '-' between words ("t_end" or "t-end"
  for --t-end; "model" for the positional model). Values: a string, number or boolean, or an array of
  them for a repeatable option. Every value goes through the option's own conversion and checks. The
  options named in `input_files` (e.g. "model") name files to read: a relative path there is relative to
  the folder of `path`, so a config file and its model move together; other paths (outputs) are
  relative to the working directory, as on the command line.
  \throws core::InputError naming the file (and the key): not JSON, not an object, a key that is no
  option of `cmd` (or is "config"), a nested object or null, or a value the option refuses
*/
void apply_json_options( CLI::App& cmd, const std::string& path, const std::set<std::string>& input_files = {} );

} // namespace morula::app

#endif
