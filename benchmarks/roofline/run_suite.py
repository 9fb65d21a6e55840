#!/usr/bin/env python3
"""Morula's roofline suite (issue #8): one command for the current build.

Runs the roofline probe (the machine's measured roofs) and every kernel benchmark at its suite size, collects
the "kernels" records the benchmarks write (bytes and flops counted analytically, docs/roofline.md), adds each
kernel's applicable roof and the fraction of it reached, and writes one JSON file:

    python3 benchmarks/roofline/run_suite.py --bin build/bench/benchmarks [--quick]
                                             [--out roofline_<backend>_<date>.json]

The benchmarks run on the build's default execution space (CUDA, HIP, OpenMP or Serial): the same suite,
unchanged, measures each backend from its own build. OpenMP reads OMP_NUM_THREADS, OMP_PROC_BIND and
OMP_PLACES from the environment as usual. A program that fails is reported in the file's
"failures" and makes the suite exit with status 1, after the other programs have run.
"""
import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

# Each program's arguments at the suite size and at the smoke-test size (--quick). The suite sizes are
# representative of the papers' problems and take seconds to a minute on an H100, and a few minutes on one
# CPU core; the quick sizes only check that everything runs (a few seconds each on one slow core).
PROGRAMS = [
    {
        "name": "grid_benchmark",
        "suite": ["--roofline-suite"],
        "quick": ["--roofline-suite", "--sizes", "100000", "--cells", "32", "--runs", "2"],
    },
    {
        "name": "mechanics_benchmark",
        "suite": ["--roofline-suite"],
        "quick": ["--roofline-suite", "--agents", "50000", "--neighbors", "6", "--runs", "2", "--scalar", "float",
                  "--no-copy-roof"],
    },
    {
        "name": "epidermis_benchmark",
        "suite": ["--roofline-suite"],
        "quick": ["--roofline-suite", "--quick"],
    },
    {
        "name": "ode_benchmark",
        "suite": ["--roofline-suite"],
        "quick": ["--roofline-suite", "--quick"],
    },
    {
        "name": "lattice_benchmark",
        "suite": ["--roofline-suite"],
        "quick": ["--roofline-suite", "--sizes", "32x32x32", "--warmup", "0", "--runs", "1", "--no-copy-bandwidth"],
    },
    {
        "name": "angio_benchmark",
        "suite": ["--roofline-suite"],
        "quick": ["--roofline-suite", "--cells", "2000", "--tubes", "200", "--sweeps", "4", "--precision", "float",
                  "--warmup", "0", "--runs", "1"],
    },
]

FAMILIES = ["grid", "mechanics", "sem", "ode", "lattice", "angio"]


def applicable_roof(kernel, roofs):
    """The roof that bounds this kernel on this machine, and the fraction of it the kernel reached.

    Attainable GFLOP/s = min(peak[precision], AI x copy bandwidth) (Williams et al. 2009, with the measured
    copy bandwidth as the memory roof, as the issue's 70% target states). A kernel without floating-point
    work, or left of the ridge point, is memory-bound: its fraction is its GB/s over the copy bandwidth.
    Right of the ridge it is compute-bound: its GFLOP/s over the FMA peak of its precision.
    """
    copy = roofs["dram_copy_gbytes_per_s"]
    ai = kernel["arithmetic_intensity"]
    precision = kernel["precision"]
    out = {"memory_roof_gbytes_per_s": copy}
    if precision in ("float", "double") and kernel["flops"] > 0:
        peak = roofs["fma_gflops_" + precision]
        out["compute_roof_gflops_per_s"] = peak
        out["attainable_gflops_per_s"] = min(peak, ai * copy)
        if ai * copy < peak:
            out["bound"] = "memory"
            out["fraction_of_roof"] = kernel["gbytes_per_s"] / copy
        else:
            out["bound"] = "compute"
            out["fraction_of_roof"] = kernel["gflops_per_s"] / peak
    else:
        out["bound"] = "memory"
        out["fraction_of_roof"] = kernel["gbytes_per_s"] / copy
    out["fraction_of_cache_bandwidth"] = kernel["gbytes_per_s"] / roofs["cache_gbytes_per_s"]
    return out


def run_program(path, args, result_file, log):
    command = [path] + args + ["--out", result_file]
    log.write("$ " + " ".join(shlex.quote(c) for c in command) + "\n")
    log.flush()
    t0 = time.monotonic()
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - t0
    log.write(proc.stdout)
    log.flush()
    return command, proc.returncode, seconds, proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="folder with the benchmark programs (BUILD/benchmarks)")
    parser.add_argument("--out", help="result file (default roofline_<backend>[_<threads>t]_<date>.json)")
    parser.add_argument("--quick", action="store_true", help="smoke-test sizes: checks that it all runs")
    parser.add_argument("--only", help="comma-separated program names to run (default: all)")
    parser.add_argument("--label", help="a name for this run in plots and tables (default: backend, threads)")
    parser.add_argument("--work-dir", help="keep each program's own result file and log here")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the result files an earlier, interrupted run left in --work-dir (the probe's "
                             "and each program's) instead of running those programs again")
    args = parser.parse_args()

    if not os.path.isdir(args.bin):
        sys.exit(f"run_suite: --bin {args.bin}: no such folder (expected BUILD/benchmarks)")
    if args.resume and not args.work_dir:
        sys.exit("run_suite: --resume needs the --work-dir of the interrupted run")
    work = args.work_dir or tempfile.mkdtemp(prefix="morula-roofline-")
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(work, "suite.log"), "a" if args.resume else "w")

    def reusable(result_file):
        """A complete result file of an earlier run (--resume): it parses and has the records we need."""
        if not (args.resume and os.path.isfile(result_file)):
            return None
        try:
            data = json.load(open(result_file))
        except (OSError, ValueError):
            return None
        return data if ("roofs" in data or data.get("kernels")) else None

    def program_path(name):
        path = os.path.join(args.bin, name)
        if not os.access(path, os.X_OK):
            sys.exit(f"run_suite: {path}: program not found or not executable (build the benchmarks: "
                     "-DMorula_ENABLE_BENCHMARKS=ON)")
        return path

    # 1. The roofs.
    probe_file = os.path.join(work, "roofline_probe.json")
    probe_args = ["--quick"] if args.quick else []
    probe = reusable(probe_file)
    if probe is not None:
        print("roofline_probe: reusing " + probe_file, flush=True)
        runs = [{"program": "roofline_probe", "reused": probe_file, "status": 0}]
    else:
        print("roofline_probe ...", flush=True)
        command, rc, seconds, output = run_program(program_path("roofline_probe"), probe_args, probe_file, log)
        if rc != 0:
            sys.exit(f"run_suite: the roofline probe failed (status {rc}):\n{output}")
        probe = json.load(open(probe_file))
        runs = [{"program": "roofline_probe", "command": command, "seconds": seconds, "status": rc}]
    roofs = probe["roofs"]
    machine = probe["machine"]

    # 2. The kernels.
    only = set(args.only.split(",")) if args.only else None
    kernels, failures = [], []
    for program in PROGRAMS:
        if only is not None and program["name"] not in only:
            continue
        result_file = os.path.join(work, program["name"] + ".json")
        print(f"{program['name']} ...", end="", flush=True)
        earlier = reusable(result_file)
        if earlier is not None:
            seconds = 0.0
            runs.append({"program": program["name"], "reused": result_file, "status": 0})
            records = earlier.get("kernels", [])
            print(" reused", end="")
        else:
            extra = program["quick"] if args.quick else program["suite"]
            command, rc, seconds, output = run_program(program_path(program["name"]), extra, result_file, log)
            runs.append({"program": program["name"], "command": command, "seconds": seconds, "status": rc})
            if rc != 0:
                print(f" failed (status {rc})")
                failures.append({"program": program["name"], "status": rc, "output_tail": output[-4000:]})
                continue
            records = json.load(open(result_file)).get("kernels", [])
        if not records:
            print(" no kernel records")
            failures.append({"program": program["name"], "status": rc, "error": "no \"kernels\" records"})
            continue
        for record in records:
            record["program"] = program["name"]
            record.update(applicable_roof(record, roofs))
            kernels.append(record)
        print(f" {len(records)} kernels in {seconds:.1f} s")

    backend = machine["backend"]
    threads = os.environ.get("OMP_NUM_THREADS")
    label = args.label or (backend + (f" {threads} threads" if backend == "OpenMP" and threads else ""))
    today = datetime.date.today().isoformat()
    out = args.out or f"roofline_{backend.lower()}{'_' + threads + 't' if backend == 'OpenMP' and threads else ''}_{today}.json"
    result = {
        "suite": "roofline",
        "label": label,
        "quick": args.quick,
        "machine": machine,
        "environment": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES",
                                                   "CUDA_VISIBLE_DEVICES") if k in os.environ},
        "roofs": roofs,
        "probe": {k: probe[k] for k in ("stream", "bandwidth_sweep", "fma")},
        "kernels": kernels,
        "runs": runs,
        "failures": failures,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    memory_bound = [k for k in kernels if k["bound"] == "memory"]
    below = [k for k in memory_bound if k["fraction_of_roof"] < 0.7]
    print(f"wrote {out}: {len(kernels)} kernels; copy {roofs['dram_copy_gbytes_per_s']:.1f} GB/s; "
          f"{len(memory_bound) - len(below)} of {len(memory_bound)} memory-bound kernels at >= 70% of it")
    if failures:
        print("failed: " + ", ".join(f["program"] for f in failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
