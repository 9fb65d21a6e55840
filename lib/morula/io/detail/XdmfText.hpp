/*!
  \file detail/XdmfText.hpp
  \brief Pieces of XDMF text that snapshot writers share: data items, scalar attributes, exact times.
*/
#ifndef MORULA_IO_DETAIL_XDMFTEXT_HPP
#define MORULA_IO_DETAIL_XDMFTEXT_HPP

#include <string>

namespace morula::io::detail
{

//! The shortest of 15 or 17 significant digits that reads back as the same double, so the XDMF times
//! are exact without printing 0.1 as 0.10000000000000001.
std::string exact_decimal( double v );

//! A line `<DataItem Dimensions=... Format="HDF">reference</DataItem>`, `indent` spaces in.
std::string xdmf_data_item( int indent, const std::string& dims, const char* number_type, int precision,
                            const std::string& reference );

//! A scalar `<Attribute>` of `name`, `indent` spaces in, its data item one space deeper.
std::string xdmf_attribute( int indent, const std::string& name, const char* center, const std::string& dims,
                            const char* number_type, int precision, const std::string& reference );

} // namespace morula::io::detail

#endif
