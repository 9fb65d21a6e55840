#!/usr/bin/env python3
"""Cross-check of analytic byte counts against DRAM traffic measured by Nsight Compute (issue #8).

    python3 benchmarks/roofline/ncu_crosscheck.py --bin build-cuda/benchmarks --out ncu_crosscheck.json

For each case it runs the benchmark once normally (its JSON gives the analytic bytes of the kernel), then once
under `ncu --profile-from-start off` with MORULA_PROFILE_KERNEL set, so that the benchmark repeats exactly one
run of that kernel between cudaProfilerStart/Stop (morula::bench::profile_once) and Nsight Compute measures
dram__bytes_read.sum + dram__bytes_write.sum over every CUDA kernel of that run (a phase such as the grid
build is several kernels). Needs a CUDA build and permission to read the GPU's performance counters.
"""
import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

# (program, arguments that make it run one case, kernel name of the record, parameters to match). Three kinds
# of traffic: a streaming integer sort (several kernels), a neighbour gather whose byte count assumes every
# neighbour comes from cache, and the lattice's bit-packed passes (three passes and the overflow launches).
CASES = [
    ("grid_benchmark", ["--sizes", "4000000", "--scalar", "float", "--runs", "3", "--warmup", "1"],
     "grid_build", {"n": 4000000}),
    ("mechanics_benchmark", ["--roofline-suite", "--scalar", "float", "--no-copy-roof"],
     "mechanics_compute_displacements", {}),
    ("lattice_benchmark", ["--roofline-suite", "--schemes", "split", "--no-copy-bandwidth"], "step_split", {}),
]

METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum"]


def analytic(result_file, kernel, match):
    records = json.load(open(result_file)).get("kernels", [])
    found = [r for r in records
             if r["kernel"] == kernel and all(r.get("parameters", {}).get(k) == v for k, v in match.items())]
    if len(found) != 1:
        sys.exit(f"ncu_crosscheck: {result_file}: expected one '{kernel}' record matching {match}, found {len(found)}")
    return found[0]


def measured(ncu, program, args, kernel, work):
    env = dict(os.environ, MORULA_PROFILE_KERNEL=kernel)
    command = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", ",".join(METRICS), "--csv",
               "--print-units", "base", program] + args + ["--out", os.path.join(work, "under_ncu.json")]
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        return None, command, proc.stdout[-3000:]
    # The CSV starts at the first line beginning with "ID" (the program's own output comes first).
    text = proc.stdout
    start = text.find('"ID"')
    if start < 0:
        return None, command, "no Nsight Compute CSV in the output:\n" + text[-3000:]
    totals = {m: 0.0 for m in METRICS}
    launches = set()
    for row in csv.DictReader(io.StringIO(text[start:])):
        name = row.get("Metric Name")
        if name in totals:
            totals[name] += float(row["Metric Value"].replace(",", ""))
            launches.add(row.get("ID"))
    totals["kernel_launches"] = len(launches)
    return totals, command, None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="folder with the CUDA build's benchmark programs")
    parser.add_argument("--out", default="ncu_crosscheck.json")
    parser.add_argument("--ncu", default=shutil.which("ncu") or "ncu", help="the Nsight Compute CLI")
    args = parser.parse_args()
    if not (os.path.isfile(args.ncu) or shutil.which(args.ncu)):
        sys.exit(f"ncu_crosscheck: Nsight Compute CLI '{args.ncu}' not found (give --ncu PATH)")
    results = []
    for program, prog_args, kernel, match in CASES:
        work = tempfile.mkdtemp(prefix="morula-ncu-")
        path = os.path.join(args.bin, program)
        result_file = os.path.join(work, "plain.json")
        proc = subprocess.run([path] + prog_args + ["--out", result_file], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            results.append({"program": program, "kernel": kernel, "error": proc.stdout[-3000:]})
            continue
        record = analytic(result_file, kernel, match)
        totals, command, error = measured(args.ncu, path, prog_args, kernel, work)
        entry = {"program": program, "kernel": kernel, "parameters": record.get("parameters", {}),
                 "analytic_bytes": record["bytes"], "ncu_command": command}
        if error:
            entry["error"] = error
        else:
            dram = totals["dram__bytes_read.sum"] + totals["dram__bytes_write.sum"]
            entry.update({"ncu": totals, "measured_dram_bytes": dram,
                          "measured_over_analytic": dram / record["bytes"],
                          "l2_bytes_over_analytic": totals["lts__t_bytes.sum"] / record["bytes"]})
            print(f"{program} {kernel}: analytic {record['bytes'] / 1e6:.1f} MB, DRAM {dram / 1e6:.1f} MB "
                  f"({dram / record['bytes']:.2f}x), L2 {totals['lts__t_bytes.sum'] / 1e6:.1f} MB, "
                  f"{totals['kernel_launches']} launches")
        results.append(entry)
    with open(args.out, "w") as f:
        json.dump({"crosscheck": "ncu", "cases": results}, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out}")
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
