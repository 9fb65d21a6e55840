#include <morula/core/Error.hpp>
#include <morula/io/detail/XdmfIndex.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <sstream>
#include <utility>

namespace morula::io::detail
{
namespace
{
const char* const footer = "  </Grid>\n </Domain>\n</Xdmf>\n";
// How a frame's grid starts: a child of the temporal collection (nested grids are indented further).
const char* const frame_start = "   <Grid ";
} // namespace

std::vector<std::string> XdmfIndex::frames() const
{
    std::vector<std::string> grids;
    std::size_t line = 0;
    while ( line < m_grids.size() )
    {
        const auto end = m_grids.find( '\n', line );
        const std::size_t next = end == std::string::npos ? m_grids.size() : end + 1;
        if ( grids.empty() || m_grids.compare( line, std::char_traits<char>::length( frame_start ), frame_start ) == 0 )
            grids.emplace_back();
        grids.back() += m_grids.substr( line, next - line );
        line = next;
    }
    return grids;
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
    // Written whole under a temporary name, then renamed over the index: a kill leaves the old index
    // or the new one, never a truncated file.
    const std::string temporary = m_path + ".tmp";
    {
        std::ofstream out( temporary, std::ios::trunc );
        if ( !out )
            throw core::IoError( "cannot write the XDMF index '" + temporary + "'" );
        out << header() << m_grids << footer;
        if ( !out.flush() )
        {
            std::remove( temporary.c_str() );
            throw core::IoError( "cannot write the XDMF index '" + temporary + "'" );
        }
    }
    if ( std::rename( temporary.c_str(), m_path.c_str() ) != 0 )
    {
        std::remove( temporary.c_str() );
        throw core::IoError( "cannot rename '" + temporary + "' to the XDMF index '" + m_path + "'" );
    }
}

} // namespace morula::io::detail
