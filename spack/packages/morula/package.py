# Spack recipe for Morula. Add this repository with `spack repo add <morula>/spack`, then e.g.
#   spack install morula +cuda cuda_arch=90        (Kokkos and Kokkos Kernels built for Hopper)
#   spack install morula +rocm amdgpu_target=gfx90a
#   spack install morula +openmp
# From a source checkout: `spack develop --path <morula> morula@main` inside an environment.

from spack.package import *


class Morula(CMakePackage, CudaPackage, ROCmPackage):
    """Portable Kokkos kernels for multicellular and biochemical simulation: sorted uniform grids and
    neighbour lists, subcellular-element and sphere mechanics, lattice diffusion and reaction-network
    ODE solvers, each written once and compiled for CUDA, HIP, OpenMP or Serial."""

    homepage = "https://github.com/morula-sim/morula"
    git = "https://github.com/morula-sim/morula.git"

    maintainers("morula-developers")

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("openmp", default=False, description="Require Kokkos with the OpenMP backend")
    variant("serial", default=True, description="Require Kokkos with the Serial backend")
    variant("hdf5", default=True, description="HDF5 snapshots with XDMF for ParaView")
    variant(
        "kernels",
        default=True,
        description="Kokkos Kernels (batched dense LU and solves for the BDF integrators)",
    )
    variant("mpi", default=False, description="Distributed runs over MPI (lib/morula/parallel)")
    variant(
        "nccl",
        default=False,
        description="NCCL (CUDA) or RCCL (ROCm) transport between GPUs for distributed runs",
    )
    variant("apps", default=True, description="Build and install the morula command-line program")
    variant("shared", default=True, description="Build shared libraries")

    depends_on("cxx", type="build")
    depends_on("cmake@3.21:", type="build")

    depends_on("kokkos@3.4:")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos+serial", when="+serial")
    depends_on("kokkos-kernels@3.4:", when="+kernels")
    depends_on("kokkos-kernels+openmp", when="+kernels+openmp")

    # The GPU architecture is chosen once, here, and handed to Kokkos and Kokkos Kernels, as
    # Cabana's and ArborX's recipes do.
    depends_on("kokkos+cuda+cuda_lambda", when="+cuda")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
        depends_on(
            f"kokkos-kernels+cuda cuda_arch={_arch}", when=f"+kernels+cuda cuda_arch={_arch}"
        )
    for _target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={_target}", when=f"+rocm amdgpu_target={_target}")
        depends_on(
            f"kokkos-kernels+rocm amdgpu_target={_target}",
            when=f"+kernels+rocm amdgpu_target={_target}",
        )

    depends_on("hdf5~mpi", when="+hdf5")
    depends_on("mpi", when="+mpi")
    depends_on("nccl", when="+nccl+cuda")
    depends_on("rccl", when="+nccl+rocm")
    depends_on("cli11@2:", type="build", when="+apps")
    depends_on("nlohmann-json@3.2:", type="build", when="+apps")
    depends_on("googletest@1.10:", type="test")

    conflicts("+cuda", when="+rocm", msg="Kokkos builds one GPU backend at a time")
    conflicts("+cuda", when="cuda_arch=none", msg="name the GPU: cuda_arch=90 for an H100")
    conflicts("+rocm", when="amdgpu_target=none", msg="name the GPU: amdgpu_target=gfx90a")
    conflicts("+nccl", when="~mpi", msg="MPI launches the ranks and makes the NCCL communicator")
    conflicts("+nccl", when="~cuda~rocm", msg="NCCL/RCCL move GPU memory: needs +cuda or +rocm")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            self.define_from_variant("Morula_ENABLE_APPS", "apps"),
            self.define("Morula_ENABLE_TESTS", self.run_tests),
            self.define("Morula_ENABLE_BENCHMARKS", False),
            self.define("Morula_ENABLE_HDF5", "ON" if spec.satisfies("+hdf5") else "OFF"),
            self.define("Morula_ENABLE_MPI", "ON" if spec.satisfies("+mpi") else "OFF"),
            self.define("Morula_ENABLE_NCCL", "ON" if spec.satisfies("+nccl") else "OFF"),
            self.define(
                "Morula_ENABLE_KOKKOSKERNELS", "ON" if spec.satisfies("+kernels") else "OFF"
            ),
        ]
        if spec.satisfies("+kernels"):
            args.append(self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix))
        if spec.satisfies("+hdf5"):
            args.append(self.define("HDF5_ROOT", spec["hdf5"].prefix))
        if spec.satisfies("+nccl+cuda"):
            args.append(self.define("NCCL_ROOT", spec["nccl"].prefix))
        if spec.satisfies("+nccl+rocm"):
            args.append(self.define("RCCL_ROOT", spec["rccl"].prefix))
        # Every translation unit that includes Kokkos must be compiled by the compiler Kokkos was
        # built for (nvcc_wrapper for CUDA, hipcc for HIP).
        if spec.satisfies("+cuda") or spec.satisfies("+rocm"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx))
        return args
