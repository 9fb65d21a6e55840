// Command-line options that override a command's config file: each option is declared once, with the
// settings field it sets, instead of once as an option and again as an `if ( cmd->count( ... ) )` line.
#ifndef MORULA_APP_CLIOVERRIDES_HPP
#define MORULA_APP_CLIOVERRIDES_HPP

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace morula::app
{

/*!
  \brief The options of a command that override fields of its Settings (the struct its config file is
  read into): `option( "--steps", &Settings::steps, "..." )` binds the option to that field, `flag(
  "--no-progress", &Settings::progress, false, "..." )` sets a field when given, and `apply( settings )`,
  after the file is read, copies the given ones over it: the command line wins over the file, and an
  option not given leaves the file's value (or the default) alone.

  CLI11 writes the parsed values into this object, which must therefore stay where it is from the
  declarations to apply(): make it with make_cli_overrides() and capture the pointer in the command's
  callback.
*/
template <class Settings>
class CliOverrides
{
  public:
    explicit CliOverrides( CLI::App& command )
        : m_command( &command )
    {
    }
    CliOverrides( const CliOverrides& ) = delete;
    CliOverrides& operator=( const CliOverrides& ) = delete;

    //! An option bound to `field`; returns CLI11's option for checks and transformers.
    template <class T>
    CLI::Option* option( const std::string& name, T Settings::*field, const std::string& help )
    {
        CLI::Option* opt = m_command->add_option( name, m_given.*field, help );
        m_apply.push_back( [opt, field]( const Settings& given, Settings& s ) {
            if ( opt->count() > 0 )
                s.*field = given.*field;
        } );
        return opt;
    }

    //! A flag that sets `field` to `value` when given (`--no-progress`: progress = false).
    template <class T>
    CLI::Option* flag( const std::string& name, T Settings::*field, T value, const std::string& help )
    {
        CLI::Option* opt = m_command->add_flag( name, help );
        m_apply.push_back( [opt, field, value]( const Settings&, Settings& s ) {
            if ( opt->count() > 0 )
                s.*field = value;
        } );
        return opt;
    }

    //! Copies the options given on the command line over `settings`, in the order they were declared.
    void apply( Settings& settings ) const
    {
        for ( const auto& set : m_apply )
            set( m_given, settings );
    }

  private:
    CLI::App* m_command;
    Settings m_given; // what CLI11 parsed; only the fields of given options are read
    std::vector<std::function<void( const Settings&, Settings& )>> m_apply;
};

//! A CliOverrides for `command` at a stable address (CLI11 keeps pointers into it).
template <class Settings>
std::shared_ptr<CliOverrides<Settings>> make_cli_overrides( CLI::App& command )
{
    return std::make_shared<CliOverrides<Settings>>( command );
}

} // namespace morula::app

#endif
