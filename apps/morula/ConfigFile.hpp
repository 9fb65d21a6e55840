// Reading a subcommand's JSON configuration file: every key checked against the keys the subcommand
// knows, every value against its expected type and range, errors naming the file, key and value.
#ifndef MORULA_APPS_CONFIGFILE_HPP
#define MORULA_APPS_CONFIGFILE_HPP

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

namespace morula::app
{

class ConfigFile
{
  public:
    //! Parses `path` (a JSON object); throws core::InputError naming the file and the problem.
    static ConfigFile from_file( const std::string& path, const std::set<std::string>& known_keys );

    bool has( const std::string& key ) const { return m_json.contains( key ); }

    double number( const std::string& key, double min, double max ) const;
    long integer( const std::string& key, long min, long max ) const;
    std::string choice( const std::string& key, const std::set<std::string>& allowed ) const;
    std::string text( const std::string& key ) const;
    bool flag( const std::string& key ) const;
    //! An array of exactly `count` numbers (any length when count is 0), each in [min, max].
    std::vector<double> numbers( const std::string& key, std::size_t count, double min, double max ) const;
    //! An array of `count` integers, each in [min, max].
    std::vector<long> integers( const std::string& key, std::size_t count, long min, long max ) const;
    //! A string, or an array of `count` strings, each one of `allowed` (a string applies to all).
    std::vector<std::string> choices( const std::string& key, std::size_t count,
                                      const std::set<std::string>& allowed ) const;
    //! An array of objects, each checked against `known_keys`; errors name e.g. 'species[1].count'.
    std::vector<ConfigFile> objects( const std::string& key, const std::set<std::string>& known_keys,
                                 bool allow_empty = false ) const;

  private:
    std::string where( const std::string& key ) const;
    //! The value of `key`; a missing key is an InputError naming it (every typed getter reads through this).
    const nlohmann::json& value( const std::string& key ) const;
    static void check_keys( const nlohmann::json& j, const std::set<std::string>& known_keys,
                            const std::string& path, const std::string& prefix );
    std::string m_path;
    std::string m_prefix; // "species[1]." for an object inside an array
    nlohmann::json m_json;
};

} // namespace morula::app

#endif
