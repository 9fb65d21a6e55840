#include <morula/core/LaunchPolicy.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <type_traits>

namespace morula_test_launch_policy
{
using morula::core::LaunchMDRange;
using morula::core::LaunchRange;
using morula::core::LaunchTeam;

// The policy must carry the light-weight hint: without it Kokkos' CUDA backend launches the models'
// large functors through constant memory and serialises consecutive launches (docs/performance.md).
static_assert( std::is_same_v<typename LaunchRange<TEST_EXECSPACE>::work_item_property,
                              Kokkos::Experimental::WorkItemProperty::HintLightWeight_t>,
               "LaunchRange must carry Kokkos' light-weight work-item property" );
static_assert( std::is_same_v<typename LaunchTeam<TEST_EXECSPACE>::work_item_property,
                              Kokkos::Experimental::WorkItemProperty::HintLightWeight_t>,
               "LaunchTeam must carry Kokkos' light-weight work-item property" );
static_assert( std::is_same_v<typename LaunchMDRange<TEST_EXECSPACE, Kokkos::Rank<2>>::work_item_property,
                              Kokkos::Experimental::WorkItemProperty::HintLightWeight_t>,
               "LaunchMDRange must carry Kokkos' light-weight work-item property" );

// A functor larger than CUDA's 512-byte constant-memory threshold (and under the 4 KB argument limit)
// gives the same result through LaunchRange as through a plain range, in parallel_for and parallel_reduce.
struct LargeFunctor
{
    Kokkos::View<double*, TEST_MEMSPACE> out;
    double coefficients[96]; // 768 bytes

    KOKKOS_FUNCTION void operator()( const int i ) const { out( i ) = coefficients[i % 96] * i; }
};

struct LargeSum
{
    double coefficients[96];

    KOKKOS_FUNCTION void operator()( const int i, double& sum ) const { sum += coefficients[i % 96] * i; }
};

TEST( TEST_CATEGORY, launch_range_runs_large_functors )
{
    const int n = 1000;
    LargeFunctor f;
    LargeSum g;
    f.out = Kokkos::View<double*, TEST_MEMSPACE>( "out", n );
    for ( int k = 0; k < 96; ++k )
        f.coefficients[k] = g.coefficients[k] = 0.5 + k;
    static_assert( sizeof( LargeFunctor ) > 512 && sizeof( LargeSum ) > 512,
                   "the functors must exceed the constant-memory threshold" );
    TEST_EXECSPACE exec;
    Kokkos::parallel_for( "test_launch_range", LaunchRange<TEST_EXECSPACE>( exec, 0, n ), f );
    double light = 0, plain = 0;
    Kokkos::parallel_reduce( "test_launch_range_sum", LaunchRange<TEST_EXECSPACE>( exec, 0, n ), g, light );
    Kokkos::parallel_reduce( "test_plain_range_sum", Kokkos::RangePolicy<TEST_EXECSPACE>( exec, 0, n ), g, plain );
    const auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), f.out );
    double expected = 0;
    for ( int i = 0; i < n; ++i )
    {
        EXPECT_EQ( host( i ), f.coefficients[i % 96] * i ) << i;
        expected += f.coefficients[i % 96] * i;
    }
    EXPECT_DOUBLE_EQ( light, expected );
    EXPECT_DOUBLE_EQ( light, plain );
}

} // namespace morula_test_launch_policy
