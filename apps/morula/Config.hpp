// Reading a subcommand's JSON configuration file: every key checked against the keys the subcommand
// knows, every value against its expected type and range, errors naming the file, key and value.
#ifndef MORULA_APPS_CONFIG_HPP
#define MORULA_APPS_CONFIG_HPP

#include <nlohmann/json.hpp>

#include <set>
#include <string>

namespace morula::app
{

class Config
{
  public:
    //! Parses `path` (a JSON object); throws core::InputError naming the file and the problem.
    static Config from_file( const std::string& path, const std::set<std::string>& known_keys );

    bool has( const std::string& key ) const { return m_json.contains( key ); }

    double number( const std::string& key, double min, double max ) const;
    long integer( const std::string& key, long min, long max ) const;
    std::string choice( const std::string& key, const std::set<std::string>& allowed ) const;
    std::string text( const std::string& key ) const;

  private:
    std::string where( const std::string& key ) const;
    std::string m_path;
    nlohmann::json m_json;
};

} // namespace morula::app

#endif
