/*!
  \file ModelReaders.hpp
  \brief Readers (and one writer) that turn model files into a ReactionNetwork: Morula's compact text
         format, the input folder of LASSIE / cupSODA, and mass-action SBML (Level 2 and 3, through libsbml
         when Morula was built with it). docs/models/ode-formats.md describes every format exactly.

  Every reader validates what it returns (validate()) and throws core::InputError naming the file, the
  line (and column, or the SBML reaction id) and what was expected; nothing is clamped or reinterpreted.
*/
#ifndef MORULA_ODE_MODELREADERS_HPP
#define MORULA_ODE_MODELREADERS_HPP

#include <morula/ode/ReactionNetwork.hpp>

#include <string>

namespace morula::ode
{

//! Parses the text format ("A + B -> C, k=0.3", "init A = 1", "sample_times = 0, 1, 2", ...); `source`
//! names the text in messages ("model.txt" gives "model.txt:3: ...").
ReactionNetwork parse_text_model( const std::string& text, const std::string& source );

//! Reads a text-format model file; the path is the source named in messages.
ReactionNetwork read_text_model( const std::string& path );

//! Reads a LASSIE / cupSODA input folder (left_side, right_side, c_vector, M_0 or MX_0, and the optional
//! files the documentation lists). A stochastic model (modelkind "stochastic" + volume) is converted to
//! concentrations and deterministic rate constants; a non-zero M_feed is rejected.
ReactionNetwork read_folder_model( const std::string& dir );

//! Writes `network` as a deterministic LASSIE / cupSODA folder (creating `dir` if needed, overwriting the
//! model files in it); read_folder_model reads it back exactly (rate constants and values with
//! max_digits10 digits; reaction names in the extra file reaction_names, which LASSIE and cupSODA ignore).
void write_folder_model( const ReactionNetwork& network, const std::string& dir );

//! Reads a mass-action SBML Level 2 or 3 model. Throws core::InputError when Morula was built without
//! libsbml, when the model uses rules, events, initial assignments, non-constant parameters or compartments,
//! boundary or constant species, and (in one message listing them all) for each reaction whose kinetic law
//! is not a mass-action product.
ReactionNetwork read_sbml_model( const std::string& path );

//! Chooses the reader by the path: a directory is a LASSIE / cupSODA folder, a file ending in .xml or .sbml
//! (any case) is SBML, anything else is the text format.
ReactionNetwork read_model( const std::string& path );

} // namespace morula::ode

#endif
