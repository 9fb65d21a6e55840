# Spack recipe for Morula (Spack >= 1.0, package API v2: `from spack_repo.builtin...` imports).
#
# Add the repository with `spack repo add <morula>/spack/spack_repo/morula`, then e.g.
#   spack install morula +openmp
#   spack install morula +cuda cuda_arch=90             (Kokkos and Kokkos Kernels built for Hopper)
#   spack install morula +rocm amdgpu_target=gfx90a
#
# Morula has no public repository and no published release tarball, so the recipe names no `git` or
# download URL that does not exist. It is used in one of two ways (docs/building.md, "Spack"):
#   * from a source checkout, inside a Spack environment:
#       spack develop --path <morula checkout> morula@=0.9.0 && spack install
#     (how scripts/check-spack.sh verifies the recipe);
#   * from a tarball `git archive --prefix=morula-0.9.0/ -o morula-0.9.0.tar.gz v0.9.0`, put in the
#     directory `spack install` runs in or in a Spack mirror (morula/morula-0.9.0.tar.gz); no checksum
#     is recorded until a release tarball is published, so that needs `spack install --no-checksum`.
import os

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage

from spack.package import *


class Morula(CMakePackage, CudaPackage, ROCmPackage):
    """Portable Kokkos kernels for multicellular and biochemical simulation: sorted uniform grids and
    neighbour lists, subcellular-element and sphere mechanics, lattice diffusion and reaction-network
    ODE solvers, each written once and compiled for CUDA, HIP, OpenMP or Serial."""

    # No homepage, git URL or maintainers: there is no public site, repository or GitHub handle yet.
    manual_download = True
    url = f"file://{os.getcwd()}/morula-0.9.0.tar.gz"

    license("BSD-3-Clause")

    version("0.9.0")

    test_requires_compiler = True

    # Kokkos' backends, mirrored as variants (as ArborX's and Cabana's recipes do): +serial and
    # +openmp require them in Kokkos; +cuda and +rocm (CudaPackage, ROCmPackage) choose Kokkos' GPU
    # backend and architecture. Morula compiles for whatever backends its Kokkos has.
    kokkos_backends = {
        "serial": (True, "Require Kokkos' Serial backend"),
        "openmp": (False, "Require Kokkos' OpenMP backend"),
    }
    for _backend, (_default, _description) in kokkos_backends.items():
        variant(_backend, default=_default, description=_description)

    variant("shared", default=True, description="Build shared libraries")
    variant("apps", default=True, description="Build and install the morula command-line program")
    variant(
        "kernels",
        default=True,
        description="Kokkos Kernels (batched dense LU and solves for the BDF integrators)",
    )
    variant("hdf5", default=True, description="HDF5 snapshots with XDMF for ParaView, checkpoints")
    variant("sbml", default=True, description="Read SBML reaction-network models (libsbml)")
    variant("mpi", default=False, description="Distributed runs over MPI (lib/morula/parallel)")
    variant(
        "nccl",
        default=False,
        description="NCCL (CUDA) or RCCL (ROCm) transport between GPUs for distributed runs",
    )
    variant("cairo", default=False, description="PNG plots and pictures of the morula program")
    variant(
        "python",
        default=False,
        description="The Python module `morula` (pybind11, numpy; DLPack for device arrays)",
    )

    depends_on("cxx", type="build")
    depends_on("cmake@3.21:", type="build")

    # Morula is tested with Kokkos 3.4.01 (Debian 12) and 4.x; Kokkos 5 needs C++20 and is untested.
    depends_on("kokkos@3.4:4")
    for _backend in kokkos_backends:
        depends_on(f"kokkos+{_backend}", when=f"+{_backend}")
    depends_on("kokkos-kernels@3.4:4", when="+kernels")
    for _backend in kokkos_backends:
        depends_on(f"kokkos-kernels+{_backend}", when=f"+kernels+{_backend}")

    # The GPU architecture is chosen once, here, and handed down. Kokkos Kernels has CudaPackage's
    # cuda_arch but no ROCm variants: for HIP it takes everything from its Kokkos (and uses hipcc).
    depends_on("kokkos+cuda+cuda_lambda", when="+cuda")
    for _arch in CudaPackage.cuda_arch_values:
        _cuda = f"+cuda cuda_arch={_arch}"
        depends_on(f"kokkos {_cuda}", when=_cuda)
        depends_on(f"kokkos-kernels {_cuda}", when=f"+kernels {_cuda}")
        depends_on(f"nccl cuda_arch={_arch}", when=f"+nccl {_cuda}")
    for _target in ROCmPackage.amdgpu_targets:
        _rocm = f"+rocm amdgpu_target={_target}"
        depends_on(f"kokkos {_rocm}", when=_rocm)
        depends_on(f"rccl amdgpu_target={_target}", when=f"+nccl {_rocm}")

    # Kokkos' recipe stops at configure for +cuda without nvcc_wrapper unless clang or cce builds it
    # (or +cmake_lang): with GCC, Kokkos needs +wrapper, and Morula then compiles with it too
    # (kokkos_cxx).
    requires(
        "^kokkos+wrapper",
        "^kokkos+cmake_lang",
        "^kokkos %cxx=llvm",
        "^kokkos %cxx=cce",
        policy="any_of",
        when="+cuda",
        msg="+cuda with GCC needs nvcc_wrapper: add ^kokkos+wrapper (or build Kokkos with clang)",
    )

    # Only the HDF5 C library is used; a site's parallel HDF5 (hdf5+mpi) is accepted either way.
    depends_on("hdf5", when="+hdf5")
    depends_on("sbml", when="+sbml")
    depends_on("mpi", when="+mpi")
    depends_on("nccl", when="+nccl+cuda")
    depends_on("rccl", when="+nccl+rocm")
    depends_on("cli11@2:", type="build", when="+apps")
    depends_on("nlohmann-json@3.2:", type="build", when="+apps")
    depends_on("cairo+png", when="+cairo")
    extends("python", when="+python")
    depends_on("python@3.8:", type=("build", "link", "run"), when="+python")
    depends_on("py-pybind11@2.6:", type="build", when="+python")
    depends_on("py-numpy", type=("build", "run"), when="+python")
    depends_on("dlpack", type="build", when="+python")
    depends_on("googletest@1.10:", type="test")

    conflicts("+cuda", when="+rocm", msg="Kokkos has one GPU backend at a time: drop +cuda or +rocm")
    conflicts(
        "+cuda",
        when="cuda_arch=none",
        msg="+cuda needs the GPU architecture: add cuda_arch=90 (H100) or your GPU's",
    )
    conflicts(
        "+rocm",
        when="amdgpu_target=none",
        msg="+rocm needs the GPU architecture: add amdgpu_target=gfx90a (MI200) or your GPU's",
    )
    conflicts(
        "+nccl",
        when="~mpi",
        msg="+nccl needs +mpi (MPI starts the ranks and sets up the communicator): add +mpi",
    )
    conflicts(
        "+nccl",
        when="~cuda ~rocm",
        msg="+nccl moves GPU memory: add +cuda cuda_arch=<arch> or +rocm amdgpu_target=<gfx>, "
        "or drop +nccl",
    )
    conflicts("+cairo", when="~apps", msg="+cairo is for the morula program: add +apps or drop +cairo")
    conflicts(
        "+python",
        when="~apps",
        msg="+python builds models from the morula program's configurations: add +apps",
    )
    conflicts(
        "^kokkos~shared~pic",
        when="+python",
        msg="+python links Kokkos into a shared module: use ^kokkos+shared or ^kokkos+pic",
    )
    conflicts(
        "^kokkos cxxstd=14",
        msg="Morula is C++17: use ^kokkos cxxstd=17 (or 20)",
    )
    conflicts(
        "^kokkos~shared~pic",
        when="+shared",
        msg="a shared libmorula links Kokkos: use ^kokkos+shared or ^kokkos+pic, or morula~shared",
    )

    def cmake_args(self):
        spec = self.spec

        def on_off(name, variant):
            # Every optional dependency ON or OFF, never AUTO: what the spec says is what is built.
            return self.define(f"Morula_ENABLE_{name}", "ON" if spec.satisfies(f"+{variant}") else "OFF")

        args = [
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            on_off("APPS", "apps"),
            on_off("KOKKOSKERNELS", "kernels"),
            on_off("HDF5", "hdf5"),
            on_off("SBML", "sbml"),
            on_off("MPI", "mpi"),
            on_off("NCCL", "nccl"),
            on_off("PYTHON", "python"),
            # The unit tests are CI's job (`spack install --test=root` builds and runs them); the
            # benchmarks and fuzz targets are for developers.
            self.define("Morula_ENABLE_TESTS", self.run_tests),
            self.define("Morula_ENABLE_BENCHMARKS", False),
            self.define("Morula_ENABLE_FUZZ", False),
        ]
        if spec.satisfies("+kernels"):
            args.append(self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix))
        if spec.satisfies("+hdf5"):
            args.append(self.define("HDF5_ROOT", spec["hdf5"].prefix))
        if spec.satisfies("+sbml"):
            args.append(self.define("SBML_ROOT", spec["sbml"].prefix))
        if spec.satisfies("+nccl+cuda"):
            args.append(self.define("NCCL_ROOT", spec["nccl"].prefix))
        if spec.satisfies("+nccl+rocm"):
            args.append(self.define("RCCL_ROOT", spec["rccl"].prefix))
        if spec.satisfies("+python"):
            args.append(self.define("Python_EXECUTABLE", spec["python"].command.path))
            args.append(self.define("DLPACK_ROOT", spec["dlpack"].prefix))
            # The module goes where `extends("python")` looks: the prefix's site-packages.
            args.append(self.define("Morula_PYTHON_INSTALL_DIR", spec["python"].package.platlib))
        if spec.satisfies("+apps~cairo"):
            # cairo is looked up through pkg-config; keep a system cairo out of the build.
            args.append(self.define("CMAKE_DISABLE_FIND_PACKAGE_PkgConfig", True))
        # Every translation unit that includes Kokkos must be compiled by the compiler Kokkos was
        # built for: nvcc_wrapper (or clang) for CUDA, hipcc for HIP; a host build keeps Spack's.
        if spec.satisfies("+cuda") or spec.satisfies("+rocm"):
            args.append(self.define("CMAKE_CXX_COMPILER", self._kokkos_compiler()))
        return args

    def _kokkos_compiler(self):
        if self.spec.satisfies("+rocm"):
            return self.spec["hip"].hipcc
        if self.spec.satisfies("+cuda"):
            return self["kokkos"].kokkos_cxx
        return self["cxx"].cxx

    @property
    def download_instr(self):
        return (
            "Morula has no public download. Inside a Spack environment, build a checkout with "
            "`spack develop --path <morula> morula@=0.9.0`, or put morula-0.9.0.tar.gz "
            "(`git archive --prefix=morula-0.9.0/ -o morula-0.9.0.tar.gz v0.9.0`) in the current "
            "directory or a mirror and use `spack install --no-checksum`."
        )

    # --- stand-alone tests (`spack test run morula`) ---------------------------------------------

    downstream_src = join_path("tests", "install", "downstream")

    @run_after("install")
    def cache_test_sources(self):
        """Keep the downstream find_package(Morula) project for `spack test run`."""
        cache_extra_test_sources(self, [self.downstream_src])

    def test_version(self):
        """morula --version reports the package's version"""
        if not self.spec.satisfies("+apps"):
            raise SkipTest("the morula program is not built (~apps)")
        morula = which(self.prefix.bin.morula, required=True)
        out = morula("--version", output=str.split, error=str.split)
        assert str(self.spec.version) in out, f"morula --version printed {out!r}"

    def test_grid(self):
        """a tiny `morula grid` run, neighbour counts checked against brute force"""
        if not self.spec.satisfies("+apps"):
            raise SkipTest("the morula program is not built (~apps)")
        # Kokkos' default execution space: the host backend in a host build (a GPU build needs a GPU).
        os.environ["OMP_NUM_THREADS"] = "2"
        os.environ["OMP_PROC_BIND"] = "false"
        morula = which(self.prefix.bin.morula, required=True)
        out = morula(
            "grid", "--particles", "2000", "--check", "200", output=str.split, error=str.split
        )
        assert "all equal" in out, f"morula grid printed {out!r}"

    def test_python(self):
        """import morula from the installed module and run a tiny ODE solve"""
        if not self.spec.satisfies("+python"):
            raise SkipTest("the Python module is not built (~python)")
        os.environ["OMP_NUM_THREADS"] = "2"
        python = which(self.spec["python"].command.path, required=True)
        out = python(
            "-c",
            "import morula; n = morula.ode.parse_text('A -> B, k=0.5\\ninit A = 1\\n'); "
            "s = morula.ode.solve(n, times=[1.0]); print(morula.__version__, s.status[0])",
            output=str.split,
            error=str.split,
        )
        assert f"{self.spec.version} success" in out, f"python printed {out!r}"

    def test_find_package(self):
        """build a find_package(Morula) project against the install and run it"""
        src = join_path(self.test_suite.current_test_cache_dir, self.downstream_src)
        # Spack-built dependencies only: an external's prefix (/usr) would let CMake find other
        # system packages first (Debian's Kokkos Kernels 3.4); the rest is named by *_ROOT.
        prefixes = [self.prefix] + [
            dep.prefix
            for dep in self.spec.traverse(root=False, deptype=("link", "run"))
            if not dep.external
        ]
        roots = [self.define("Kokkos_ROOT", self.spec["kokkos"].prefix)]
        for variant, dep, root in (
            ("kernels", "kokkos-kernels", "KokkosKernels_ROOT"),
            ("hdf5", "hdf5", "HDF5_ROOT"),
            ("sbml", "sbml", "SBML_ROOT"),
        ):
            if self.spec.satisfies(f"+{variant}"):
                roots.append(self.define(root, self.spec[dep].prefix))
        cmake = which(self.spec["cmake"].prefix.bin.cmake, required=True)
        with working_dir("downstream-build", create=True):
            cmake(
                src,
                "-DCMAKE_BUILD_TYPE=Release",
                self.define("CMAKE_PREFIX_PATH", ";".join(str(p) for p in prefixes)),
                self.define("CMAKE_CXX_COMPILER", self._kokkos_compiler()),
                self.define("MORULA_EXPECTED_VERSION", str(self.spec.version)),
                *roots,
            )
            cmake("--build", ".")
            os.environ["OMP_NUM_THREADS"] = "2"
            downstream = which(join_path(os.getcwd(), "downstream"), required=True)
            out = downstream(output=str.split, error=str.split)
            assert "matches brute force" in out, f"downstream printed {out!r}"
