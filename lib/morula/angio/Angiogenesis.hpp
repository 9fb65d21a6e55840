/*!
  \file Angiogenesis.hpp
  \brief Everything of the tumour growth and angiogenesis family (lib/morula/angio; Worecki and Wcisło 2012).
*/
#ifndef MORULA_ANGIO_ANGIOGENESIS_HPP
#define MORULA_ANGIO_ANGIOGENESIS_HPP

#include <morula/angio/AngioParameters.hpp>
#include <morula/angio/Initializers.hpp>
#include <morula/angio/Interactions.hpp>
#include <morula/angio/TumourAngiogenesis.hpp>
#include <morula/angio/TumourCells.hpp>
#include <morula/angio/VesselTubes.hpp>

#endif
