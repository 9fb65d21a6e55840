#include <morula/io/detail/XdmfText.hpp>

#include <cstdio>
#include <cstdlib>

namespace morula::io::detail
{

std::string exact_decimal( double v )
{
    char text[32];
    std::snprintf( text, sizeof text, "%.15g", v );
    if ( std::strtod( text, nullptr ) != v )
        std::snprintf( text, sizeof text, "%.17g", v );
    return text;
}

std::string xdmf_data_item( int indent, const std::string& dims, const char* number_type, int precision,
                            const std::string& reference )
{
    return std::string( std::size_t( indent ), ' ' ) + "<DataItem Dimensions=\"" + dims + "\" NumberType=\"" +
           number_type + "\" Precision=\"" + std::to_string( precision ) + "\" Format=\"HDF\">" + reference +
           "</DataItem>\n";
}

std::string xdmf_attribute( int indent, const std::string& name, const char* center, const std::string& dims,
                            const char* number_type, int precision, const std::string& reference )
{
    const std::string pad( std::size_t( indent ), ' ' );
    return pad + "<Attribute Name=\"" + name + "\" AttributeType=\"Scalar\" Center=\"" + center + "\">\n" +
           xdmf_data_item( indent + 1, dims, number_type, precision, reference ) + pad + "</Attribute>\n";
}

} // namespace morula::io::detail
