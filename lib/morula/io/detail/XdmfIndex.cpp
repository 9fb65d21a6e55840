#include <morula/core/Error.hpp>
#include <morula/io/detail/XdmfIndex.hpp>

#include <fstream>
#include <sstream>
#include <utility>

namespace morula::io::detail
{
namespace
{
const char* const footer = "  </Grid>\n </Domain>\n</Xdmf>\n";
}

XdmfIndex::XdmfIndex( std::string path, std::string collection, bool doctype )
    : m_path( std::move( path ) )
    , m_collection( std::move( collection ) )
    , m_doctype( doctype )
{
}

std::string XdmfIndex::header() const
{
    return std::string( "<?xml version=\"1.0\" ?>\n" ) +
           ( m_doctype ? "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n" : "" ) + "<Xdmf Version=\"3.0\">\n <Domain>\n" +
           "  <Grid Name=\"" + m_collection + "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
}

void XdmfIndex::create()
{
    m_grids.clear();
    write();
}

void XdmfIndex::reopen()
{
    std::ifstream in( m_path );
    std::stringstream text;
    if ( !in || !( text << in.rdbuf() ) )
        throw core::IoError( "cannot read the XDMF index '" + m_path + "'" );
    // Only what this class wrote can be continued: the frames sit between its header and footer.
    const std::string all = text.str(), head = header(), tail = footer;
    if ( all.size() < head.size() + tail.size() || all.compare( 0, head.size(), head ) != 0 ||
         all.compare( all.size() - tail.size(), tail.size(), tail ) != 0 )
        throw core::InputError( "the XDMF index '" + m_path + "' is not the index of a '" + m_collection +
                                "' snapshot series; it cannot be continued" );
    m_grids = all.substr( head.size(), all.size() - head.size() - tail.size() );
}

void XdmfIndex::add( const std::string& grid )
{
    m_grids += grid;
    write();
}

void XdmfIndex::write() const
{
    std::ofstream out( m_path, std::ios::trunc );
    if ( !out )
        throw core::IoError( "cannot write the XDMF index '" + m_path + "'" );
    out << header() << m_grids << footer;
    if ( !out.flush() )
        throw core::IoError( "cannot write the XDMF index '" + m_path + "'" );
}

} // namespace morula::io::detail
