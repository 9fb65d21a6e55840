#include <Kokkos_Core.hpp>

extern "C" int morula_kokkos_pic_check()
{
    Kokkos::View<double*, Kokkos::HostSpace> v( "v", 4 );
    return static_cast<int>( v.extent( 0 ) );
}
