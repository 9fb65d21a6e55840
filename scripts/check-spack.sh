#!/usr/bin/env bash
# Checks Morula's Spack recipe (spack/spack_repo/morula) with Spack itself, offline, in a Spack
# configuration of its own under WORK (nothing in ~/.spack or the Spack checkout is touched):
#
#   1. spack audit packages morula                      (must report nothing)
#   2. spack spec morula+openmp, morula+cuda cuda_arch=90, morula+rocm amdgpu_target=gfx90a
#   3. spack install morula+openmp                      (Debian's packages as externals; Kokkos and
#                                                        Kokkos Kernels built by Spack from local
#                                                        source copies; Morula from this checkout)
#   4. spack test run morula                            (the recipe's stand-alone tests)
#
# Usage (every path may also come from the environment variable of the same name):
#   scripts/check-spack.sh --spack DIR --spack-packages DIR --kokkos DIR --kokkos-kernels DIR \
#       --compiler-wrapper GITDIR [--clingo-pythonpath DIR] [--work DIR] [--morula DIR] [--kokkos-version V] [--jobs N]
#
#   SPACK              a Spack >= 1.0 checkout (its bin/spack is run)
#   SPACK_PACKAGES     a spack-packages checkout (repos/spack_repo/builtin is used as `builtin`)
#   KOKKOS             Kokkos sources of release KOKKOS_VERSION (e.g. `git archive 4.6.01` of kokkos)
#   KOKKOS_KERNELS     Kokkos Kernels sources of the same release
#   KOKKOS_VERSION     the release both source trees are (default 4.6.01); they are built with
#                      `spack develop kokkos@=V` and `kokkos-kernels@=V`, so Spack knows the version
#   COMPILER_WRAPPER   a git clone (bare is fine) of github.com/spack/compiler-wrapper: Spack >= 1.0
#                      builds its compiler wrapper from that project's release tarball, which is
#                      `git archive --prefix=compiler-wrapper-V/ vV | gzip -n`; the tarballs are put
#                      in a local source mirror and Spack checks them against the recipe's sha256
#   CLINGO_PYTHONPATH  where `import clingo` works for the Python that runs Spack (SPACK_PYTHON,
#                      default /usr/bin/python3); empty when clingo is already importable
#   WORK               scratch folder for the configuration, install tree, stages and log
#                      (default /work/spack-work/check); re-running reuses what is installed there
#   MORULA             the Morula source tree (default: this checkout); its tracked and untracked,
#                      not ignored files are copied to WORK/src/morula, built as morula@=VERSION
#                      (VERSION from its top-level CMakeLists.txt)
#   JOBS               build jobs (default 2)
#   STEPS              which of "audit spec install" to run (default all three; install includes the
#                      test run)
#
# The log is WORK/check-spack.log (or LOG). Exit status 0 only if all four steps pass. Not run by CI.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${SPACK:=}" "${SPACK_PACKAGES:=}" "${KOKKOS:=}" "${KOKKOS_KERNELS:=}" "${CLINGO_PYTHONPATH:=}"
: "${COMPILER_WRAPPER:=}"
: "${WORK:=/work/spack-work/check}" "${MORULA:=$here}" "${KOKKOS_VERSION:=4.6.01}" "${JOBS:=2}"
: "${SPACK_PYTHON:=/usr/bin/python3}" "${STEPS:=audit spec install}"
while [ $# -gt 0 ]; do
  case "$1" in
    --spack) SPACK="$2"; shift 2 ;;
    --spack-packages) SPACK_PACKAGES="$2"; shift 2 ;;
    --kokkos) KOKKOS="$2"; shift 2 ;;
    --kokkos-kernels) KOKKOS_KERNELS="$2"; shift 2 ;;
    --kokkos-version) KOKKOS_VERSION="$2"; shift 2 ;;
    --compiler-wrapper) COMPILER_WRAPPER="$2"; shift 2 ;;
    --clingo-pythonpath) CLINGO_PYTHONPATH="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --morula) MORULA="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "check-spack.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in SPACK SPACK_PACKAGES KOKKOS KOKKOS_KERNELS COMPILER_WRAPPER; do
  if [ -z "${!v}" ] || [ ! -d "${!v}" ]; then
    echo "check-spack.sh: $v (--$(echo "$v" | tr 'A-Z_' 'a-z-')) must name a folder; got '${!v}'" >&2
    exit 2
  fi
done
SPACK="$(cd "$SPACK" && pwd)"; SPACK_PACKAGES="$(cd "$SPACK_PACKAGES" && pwd)"
KOKKOS="$(cd "$KOKKOS" && pwd)"; KOKKOS_KERNELS="$(cd "$KOKKOS_KERNELS" && pwd)"
MORULA="$(cd "$MORULA" && pwd)"
mkdir -p "$WORK"; WORK="$(cd "$WORK" && pwd)"
log="${LOG:-$WORK/check-spack.log}"
: > "$log"

# --- an isolated Spack: own configuration, caches, install tree; the recipe's repository ----------
export SPACK_PYTHON
export SPACK_USER_CONFIG_PATH="$WORK/user-config"
export SPACK_USER_CACHE_PATH="$WORK/cache"
export SPACK_SYSTEM_CONFIG_PATH="$WORK/system-config"  # empty: /etc/spack is not read
[ -n "$CLINGO_PYTHONPATH" ] && export PYTHONPATH="$CLINGO_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}"
unset SPACK_ENV
spack="$SPACK/bin/spack"
cfg="$SPACK_USER_CONFIG_PATH"
mkdir -p "$cfg" "$SPACK_SYSTEM_CONFIG_PATH" "$WORK/src"

note() { printf '\n===== %s\n' "$*" | tee -a "$log"; }
run() { # run CMD...: echo it into the log, run it with its output in the log and on the terminal
  printf '$ %s\n' "$*" | tee -a "$log"
  "$@" 2>&1 | tee -a "$log"
  return "${PIPESTATUS[0]}"
}

cat > "$cfg/config.yaml" <<EOF
config:
  install_tree:
    root: $WORK/opt
  build_stage: [$WORK/stage]
  test_stage: $WORK/test-stage
  source_cache: $WORK/source-cache
  misc_cache: $WORK/cache/misc
  build_jobs: $JOBS
EOF
# Spack >= 1.0 clones spack-packages into ~/.spack unless `builtin` names a local checkout.
cat > "$cfg/repos.yaml" <<EOF
repos::
  morula: $MORULA/spack/spack_repo/morula
  builtin: $SPACK_PACKAGES/repos/spack_repo/builtin
EOF
# Offline: clingo comes from CLINGO_PYTHONPATH (or the interpreter), nothing is bootstrapped or fetched.
cat > "$cfg/bootstrap.yaml" <<EOF
bootstrap:
  enable: false
EOF
# The only source mirror: compiler-wrapper's release tarballs, rebuilt from its git tags.
mirror="$WORK/mirror"
mkdir -p "$mirror/compiler-wrapper"
for tag in $(git -C "$COMPILER_WRAPPER" tag -l 'v*'); do
  v="${tag#v}"
  tarball="$mirror/compiler-wrapper/compiler-wrapper-$v.tar.gz"
  git -C "$COMPILER_WRAPPER" archive --format=tar --prefix="compiler-wrapper-$v/" "$tag" | gzip -n > "$tarball"
  sha="$(sha256sum "$tarball" | cut -d' ' -f1)"  # Spack looks a checksummed file up by its sha256
  mkdir -p "$mirror/_source-cache/archive/${sha:0:2}"
  cp "$tarball" "$mirror/_source-cache/archive/${sha:0:2}/$sha.tar.gz"
done
cat > "$cfg/mirrors.yaml" <<EOF
mirrors::
  local-sources:
    url: file://$mirror
    source: true
    binary: false
EOF

# Externals: Debian 12's packages (what scripts/setup-debian.sh installs), never rebuilt. CUDA and
# ROCm are the toolkits found on this machine; they only serve `spack spec` here.
cuda_prefix=""; cuda_version=""
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc_bin="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  cuda_prefix="$(cd "$(dirname "$(readlink -f "$nvcc_bin")")/.." && pwd)"
  cuda_version="$("$nvcc_bin" --version | sed -n 's/.*release [0-9.]*, V\([0-9.]*\).*/\1/p')"
fi
deb() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null | sed 's/^[0-9]*://; s/[-+~].*//'; }
hip_version="$(deb hipcc)"  # Debian 12's ROCm 5.2.3 (hipcc, libamdhip64-dev), when installed
{
  echo "packages:"
  ext() { # ext NAME SPEC PREFIX (skipped when the Debian package is missing: no version)
    case "$2" in *@|*@[!0-9]*) return 0 ;; esac
    printf '  %s:\n    buildable: false\n    externals:\n    - spec: %s\n      prefix: %s\n' "$1" "$2" "$3"
  }
  ext cmake "cmake@$(cmake --version | sed -n 's/cmake version //p')" /usr
  ext gmake "gmake@$(deb make)" /usr
  ext hdf5 "hdf5@$(deb libhdf5-dev)~mpi+shared" /usr
  ext sbml "sbml@$(deb libsbml5-dev)" /usr
  ext cli11 "cli11@$(deb libcli11-dev)" /usr
  ext nlohmann-json "nlohmann-json@$(deb nlohmann-json3-dev)" /usr
  ext googletest "googletest@$(deb libgtest-dev)" /usr
  ext openmpi "openmpi@$(deb libopenmpi-dev)" /usr
  ext cairo "cairo@$(deb libcairo2-dev)+png" /usr
  ext pkgconf "pkgconf@$(deb pkgconf)" /usr
  if [ -n "$cuda_prefix" ]; then ext cuda "cuda@$cuda_version" "$cuda_prefix"; fi
  if [ -n "$hip_version" ]; then
    ext hip "hip@$hip_version" /usr
    ext hsa-rocr-dev "hsa-rocr-dev@$hip_version" /usr
    ext llvm-amdgpu "llvm-amdgpu@$hip_version" /usr
  fi
  printf '  mpi:\n    require: [openmpi]\n'
} > "$cfg/packages.yaml"

note "Spack $("$spack" --version 2>&1) ($SPACK); builtin: $SPACK_PACKAGES ($(git -C "$SPACK_PACKAGES" log -1 --format=%h 2>/dev/null || echo 'no git'))"
run "$SPACK_PYTHON" -c "import clingo, sys; print('clingo', clingo.__version__, 'from', clingo.__file__, 'for Python', sys.version.split()[0])" || exit 1
run "$spack" compiler find || exit 1
run cat "$cfg/packages.yaml"

status=0

step() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if step audit; then
note "1. spack audit packages morula"
run "$spack" audit packages morula || status=1
fi

if step spec; then
note "2. spack spec (concretization only; nothing is built)"
for spec in "morula+openmp" "morula+cuda cuda_arch=90" "morula+rocm amdgpu_target=gfx90a"; do
  # shellcheck disable=SC2086
  run "$spack" spec -l -I $spec || status=1
done
fi

if step install; then
note "3. spack install morula+openmp (Kokkos $KOKKOS_VERSION from $KOKKOS, Morula from $MORULA)"
# Morula: a copy of the checkout as it is (tracked and untracked, not ignored files), so that Spack's
# in-source build folders stay out of the working tree.
morula_version="$(sed -n '/^project(Morula/,/)/s/.*VERSION \([0-9][0-9.]*\).*/\1/p' "$MORULA/CMakeLists.txt" | head -1)"
rm -rf "$WORK/src/morula" && mkdir -p "$WORK/src/morula"
(cd "$MORULA" && git ls-files -co --exclude-standard -z |
   tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$WORK/src/morula")
echo "Morula $morula_version: $(git -C "$MORULA" log -1 --format='%h %s' | cut -c1-80)$(git -C "$MORULA" diff --quiet HEAD || echo ' + uncommitted changes') -> $WORK/src/morula" | tee -a "$log"
env_dir="$WORK/env"
mkdir -p "$env_dir"
cat > "$env_dir/spack.yaml" <<EOF
spack:
  specs:
  - morula@=$morula_version +openmp
  view: false
  concretizer:
    unify: true
  develop:
    morula:
      spec: morula@=$morula_version
      path: $WORK/src/morula
    kokkos:
      spec: kokkos@=$KOKKOS_VERSION
      path: $KOKKOS
    kokkos-kernels:
      spec: kokkos-kernels@=$KOKKOS_VERSION
      path: $KOKKOS_KERNELS
EOF
run cat "$env_dir/spack.yaml"
if run "$spack" -e "$env_dir" concretize -f && run "$spack" -e "$env_dir" find -c -l -v && \
   run nice -n 5 "$spack" -e "$env_dir" install --fail-fast -j "$JOBS"; then
  note "4. spack test run morula"
  "$spack" -e "$env_dir" test remove -y morula-check >/dev/null 2>&1  # a re-run replaces the suite
  run "$spack" -e "$env_dir" test run --alias morula-check morula || status=1
  run "$spack" -e "$env_dir" test results -l morula-check || status=1
else
  status=1
fi
fi

note "check-spack.sh: $([ $status -eq 0 ] && echo 'all steps passed' || echo 'FAILED'); log: $log"
exit $status
