// Reading a subcommand's JSON configuration file: every key checked against the keys the subcommand
// knows, every value against its expected type and range, errors naming the file, key and value.
#ifndef MORULA_APPS_CONFIGFILE_HPP
#define MORULA_APPS_CONFIGFILE_HPP

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace morula::app
{

class ConfigFile
{
  public:
    //! Parses `path` (a JSON object); throws core::InputError naming the file and the problem.
    static ConfigFile from_file( const std::string& path, const std::set<std::string>& known_keys );
    //! Parses the JSON text `json` the same way; errors name it as `path` (e.g. "<dict>" for a Python dict).
    static ConfigFile from_text( const std::string& json, const std::string& path,
                                 const std::set<std::string>& known_keys );

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

/*!
  \brief A subcommand's configuration keys, each declared once: the key, the field its value goes to and
  what the value must be. The table is both the list of keys the file may hold and the reader: read()
  refuses any other key, then reads each key the file holds, in the table's order (so the first bad value
  reported is the first in that order), into its field; absent keys keep their fields' defaults.
*/
class ConfigTable
{
  public:
    static constexpr double huge = 1e300; //!< "no upper bound" for number()

    ConfigTable& number( std::string key, double& field, double min, double max = huge )
    {
        return add( std::move( key ), [&field, min, max]( const ConfigFile& c, const std::string& k ) {
            field = c.number( k, min, max );
        } );
    }
    //! A number into an optional field (unset: the library chooses).
    ConfigTable& number( std::string key, std::optional<double>& field, double min, double max = huge )
    {
        return add( std::move( key ), [&field, min, max]( const ConfigFile& c, const std::string& k ) {
            field = c.number( k, min, max );
        } );
    }
    //! An integer into an int or long field.
    template <class Integer>
    ConfigTable& integer( std::string key, Integer& field, long min, long max )
    {
        return add( std::move( key ), [&field, min, max]( const ConfigFile& c, const std::string& k ) {
            field = static_cast<Integer>( c.integer( k, min, max ) );
        } );
    }
    ConfigTable& flag( std::string key, bool& field )
    {
        return add( std::move( key ), [&field]( const ConfigFile& c, const std::string& k ) { field = c.flag( k ); } );
    }
    ConfigTable& text( std::string key, std::string& field )
    {
        return add( std::move( key ), [&field]( const ConfigFile& c, const std::string& k ) { field = c.text( k ); } );
    }
    ConfigTable& choice( std::string key, std::string& field, std::set<std::string> allowed )
    {
        return add( std::move( key ), [&field, allowed = std::move( allowed )]( const ConfigFile& c, const std::string& k ) {
            field = c.choice( k, allowed );
        } );
    }
    //! Exactly `count` numbers, each in [min, max], into field[0 .. count).
    ConfigTable& numbers( std::string key, double* field, std::size_t count, double min, double max = huge )
    {
        return add( std::move( key ), [field, count, min, max]( const ConfigFile& c, const std::string& k ) {
            const auto v = c.numbers( k, count, min, max );
            for ( std::size_t i = 0; i < count; ++i )
                field[i] = v[i];
        } );
    }
    //! Exactly `count` numbers (any number when count is 0), each in [min, max], into a vector.
    ConfigTable& numbers( std::string key, std::vector<double>& field, std::size_t count, double min, double max = huge )
    {
        return add( std::move( key ), [&field, count, min, max]( const ConfigFile& c, const std::string& k ) {
            field = c.numbers( k, count, min, max );
        } );
    }
    //! A key whose value needs more than one typed getter (arrays of objects, values checked together).
    ConfigTable& custom( std::string key, std::function<void( const ConfigFile&, const std::string& )> read )
    {
        return add( std::move( key ), std::move( read ) );
    }

    std::set<std::string> keys() const
    {
        std::set<std::string> k;
        for ( const auto& e : m_entries )
            k.insert( e.key );
        return k;
    }

    //! Parses `path` (ConfigFile::from_file with keys()) and reads every key it holds; returns the file.
    ConfigFile read( const std::string& path ) const
    {
        return read( path, []( const std::string& ) { return true; } );
    }
    //! The same for the keys `wanted` accepts (the others, e.g. set on the command line, are not read).
    ConfigFile read( const std::string& path, const std::function<bool( const std::string& )>& wanted ) const
    {
        return read_keys( ConfigFile::from_file( path, keys() ), wanted );
    }
    //! The same for JSON text given in memory, named `name` in errors (the Python module's dicts).
    ConfigFile read_text( const std::string& json, const std::string& name ) const
    {
        return read_keys( ConfigFile::from_text( json, name, keys() ), []( const std::string& ) { return true; } );
    }

  private:
    ConfigFile read_keys( ConfigFile c, const std::function<bool( const std::string& )>& wanted ) const
    {
        for ( const auto& e : m_entries )
            if ( c.has( e.key ) && wanted( e.key ) )
                e.read( c, e.key );
        return c;
    }
    struct Entry
    {
        std::string key;
        std::function<void( const ConfigFile&, const std::string& )> read;
    };
    ConfigTable& add( std::string key, std::function<void( const ConfigFile&, const std::string& )> read )
    {
        m_entries.push_back( { std::move( key ), std::move( read ) } );
        return *this;
    }
    std::vector<Entry> m_entries;
};

} // namespace morula::app

#endif
