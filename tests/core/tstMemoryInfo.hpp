#include <morula/core/MemoryInfo.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace morula_test_memoryinfo
{
using morula::core::available_memory_bytes;
using morula::core::host_memory_bytes;

// MemTotal of /proc/meminfo in bytes (0 where there is no such file): the kernel's own figure, which
// sysconf(_SC_PHYS_PAGES) x page size must give.
double proc_mem_total()
{
    std::ifstream in( "/proc/meminfo" );
    std::string line;
    while ( std::getline( in, line ) )
        if ( line.rfind( "MemTotal:", 0 ) == 0 )
        {
            std::istringstream fields( line.substr( 9 ) );
            double kib = 0;
            fields >> kib;
            return kib * 1024.0;
        }
    return 0.0;
}

TEST( TEST_CATEGORY, host_memory_is_the_kernels_mem_total )
{
    const double total = proc_mem_total();
    if ( total == 0.0 )
        GTEST_SKIP() << "no /proc/meminfo";
    EXPECT_EQ( host_memory_bytes(), total );
}

TEST( TEST_CATEGORY, available_memory_follows_the_memory_space )
{
    using space = TEST_MEMSPACE;
    const double before = available_memory_bytes<space>();
    ASSERT_GT( before, 0.0 );
    if constexpr ( Kokkos::SpaceAccessibility<Kokkos::HostSpace, space>::accessible )
        EXPECT_EQ( before, host_memory_bytes() ); // physical memory: the same figure whatever is allocated
    else
    {
        // The GPU's free memory: a 512 MiB View takes at least that much of it while it lives.
        constexpr double view_bytes = 512.0 * 1024 * 1024;
        Kokkos::View<char*, space> block( "block", std::size_t( view_bytes ) );
        Kokkos::fence();
        EXPECT_LE( available_memory_bytes<space>(), before - view_bytes );
    }
}

} // namespace morula_test_memoryinfo
