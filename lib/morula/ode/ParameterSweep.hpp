/*!
  \file ParameterSweep.hpp
  \brief Parameter sweeps over one reaction network: per-system rate constants and initial values, from
         a table (CSV) or from ranges (linear, logarithmic, random with a seed).

  A sweep is a set of columns, each naming one quantity of the network (a species' initial value, or a
  reaction's rate constant) or the system's end time (`t_end`), and one row of values per system. Quantities no column names keep the
  model's values. Everything is checked when the sweep is built, before any work starts: unknown or
  repeated names, rows with the wrong number of values, values that are not numbers, negative, NaN or
  infinite values, and sweeps with no system; the message names the file, line and column, or the range.

  The sweep is host data; `fill_systems` writes a slice of its systems into host Views that the caller
  copies to the device, so a sweep split over ranks gives each rank the same values one rank would use.
*/
#ifndef MORULA_ODE_PARAMETERSWEEP_HPP
#define MORULA_ODE_PARAMETERSWEEP_HPP

#include <morula/ode/ReactionNetwork.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace morula::ode
{

//! The network quantity one sweep column sets.
struct SweepColumn
{
    enum class Kind
    {
        initial_value, //!< of species `index`
        rate_constant, //!< of reaction `index`
        end_time       //!< the system's last sample time (column `t_end`; its samples scale with it)
    };
    Kind kind = Kind::rate_constant;
    int index = 0;
    std::string name; //!< as the user wrote it (the CSV header, the range's name)
};

//! The column name of a system's end time.
inline constexpr const char* end_time_column_name = "t_end";

/*!
  Which quantity `name` names in `network`: a species name is that species' initial value; a reaction
  name (SBML id, text-model label, LASSIE name) or `R<i>` (0-based reaction index, as Morula's messages
  name reactions) is that reaction's rate constant; `t_end` is the system's end time. \throws
  core::InputError naming `where` and listing what the network has, for an unknown or ambiguous name
  (`t_end` where the model has a species or reaction of that name too).
*/
SweepColumn resolve_sweep_column( const ReactionNetwork& network, const std::string& name, const std::string& where );

//! How one range spreads its values over the systems.
enum class SweepSpacing
{
    linear,     //!< `points` values evenly spaced from low to high, both included
    log,        //!< `points` values evenly spaced in log10 from low to high (both > 0)
    uniform,    //!< one value per system, uniform in [low, high)
    log_uniform //!< one value per system, log10 uniform in [low, high) (both > 0)
};

//! One range of a sweep, e.g. `R2=log:1e-2:1e4:13` or `A=uniform:0.5:1.5`.
struct SweepRange
{
    std::string name;
    SweepSpacing spacing = SweepSpacing::linear;
    double low = 0, high = 0;
    long points = 0; //!< grid points (linear and log); 0 for the random spacings
    std::string text; //!< as given, for messages
};

/*!
  Parses `NAME=SPACING:LOW:HIGH[:POINTS]`; SPACING is linear, log, uniform or log-uniform. Grid spacings
  (linear, log) need POINTS >= 1 (1 only with LOW == HIGH); the random ones take none. \throws
  core::InputError naming `option` and the text, for anything else (bounds not finite, LOW > HIGH,
  a bound <= 0 on a log spacing).
*/
SweepRange parse_sweep_range( const std::string& text, const std::string& option = "--sweep" );

//! One value per (system, column): the systems of a sweep.
struct ParameterSweep
{
    std::vector<SweepColumn> columns;
    std::vector<double> values; //!< row-major (system, column)
    long systems = 0;
    std::string source;         //!< the table's path or "--sweep" for ranges, for messages
    std::vector<long> lines;    //!< a table's line of each system (1-based), for messages; empty for ranges

    double value( long system, std::size_t column ) const
    {
        return values[std::size_t( system ) * columns.size() + column];
    }
    //! The column of the systems' end times, or -1 when the sweep does not set them.
    int end_time_column() const
    {
        for ( std::size_t c = 0; c < columns.size(); ++c )
            if ( columns[c].kind == SweepColumn::Kind::end_time )
                return static_cast<int>( c );
        return -1;
    }
    //! Where system s's values come from, for messages: "FILE:LINE" for a table, "--sweep, system s" for ranges.
    std::string where( long system ) const;
};

/*!
  A sweep from a CSV table: a header of column names (see resolve_sweep_column), then one row of numbers
  per system; blank lines and lines starting with '#' are skipped; fields may be quoted ("A") and are
  trimmed. \throws core::IoError when the file cannot be read; core::InputError naming the file, line and
  column for a bad header, a row with the wrong number of values, a value that is not a number or not
  allowed (negative, NaN or infinite), or a table without rows.
*/
ParameterSweep read_sweep_table( const std::string& path, const ReactionNetwork& network );

/*!
  A sweep from ranges. The grid ranges (linear, log) combine as a Cartesian product, the first range
  varying slowest; the random ranges then draw one value per system of that grid, or of `random_systems`
  systems when there is no grid range (then `random_systems` >= 1 is required; with a grid it must be 0
  or the grid's size). Random draws: std::mt19937_64(seed), the top 53 bits of one draw per (system,
  random range), systems outer; the same seed gives the same sweep with every standard library.
  \throws core::InputError for a name used twice or unknown, or a sweep of no or too many systems
  (more than `max_systems`).
*/
ParameterSweep make_range_sweep( const ReactionNetwork& network, const std::vector<SweepRange>& ranges,
                                 long random_systems, std::uint64_t seed, long max_systems );

/*!
  The rate constants and initial values of systems [first, first + count) of `sweep`: row-major
  (count, reaction_count) and (count, species_count), the model's values where no column sets one.
  Host vectors, so the caller decides where they go. The end times (a `t_end` column) are not among them:
  `ParameterSweep::end_time_column()` gives their column.
*/
void fill_systems( const ParameterSweep& sweep, const ReactionNetwork& network, long first, long count,
                   std::vector<double>& rate_constants, std::vector<double>& initial_states );

} // namespace morula::ode

#endif
