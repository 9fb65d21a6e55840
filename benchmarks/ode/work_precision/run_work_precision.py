#!/usr/bin/env python3
"""Issue #45, item 5: work-precision study of Morula's ODE methods against SciPy and CVODE (CPU).

For each problem in models/ and each rtol in 1e-3 .. 1e-10 (atol = rtol * 1e-6) this runs

  - Morula `morula ode run` with --method rkf45, bdf, auto, rodas5p, rodas4, rosenbrock23 (the Rosenbrock
    methods in the register kernel up to 8 species and 16 reactions, on the general path beyond);
  - SciPy solve_ivp with Radau, BDF, LSODA (analytic Jacobian);
  - CVODE (SUNDIALS BDF, Newton, dense LU, analytic Jacobian) through morula_cvode_benchmark, which reads
    the model as a LASSIE folder written from the text model;

and measures the error against a reference solution and the time per system.

Error: max over the sample times t > 0 and the species i of |y_i(t) - ref_i(t)| / max(|ref_i(t)|, floor_i),
floor_i = FLOOR * max_t |ref_i(t)| (relative error, with values below 1e-6 of a species' peak measured
against that floor). Reference: SciPy Radau at rtol 1e-13, atol 1e-20 (checked against CVODE at rtol 1e-12
and the tightest Morula runs; the agreement is stored in the results).

Time per system:
  - Morula: one process integrates a batch of N identical copies (`--batch N`, batched mode: one system per
    thread; Serial backend: one after another); the time is the one the CLI's summary line prints (wall
    time of the integration: solver call and copies to the host, not reading the model, startup or
    writing the CSV), divided by N. N is chosen from a 2-system probe so that a run takes about
    TARGET_S seconds (at most 1000 systems); the median of REPEATS runs. The error is that of system 0
    of the first timed run.
  - SciPy: one solve_ivp call per system (Python overhead included, as a user pays it); median of up to 5
    calls (fewer when a call is slow).
  - CVODE: morula_cvode_benchmark's median of its timed runs (each run creates and frees the CVODE solver,
    as one call of an integrator per system does; one untimed warm-up run before them).

Usage: run_work_precision.py [--problems robertson,network10,...] [--out results.json] [--plot-only]
"""
import argparse
import hashlib
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    from scipy.integrate import solve_ivp
except ImportError:  # run_automatic_rule.py uses the Morula part of this file on machines without SciPy
    solve_ivp = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import textmodel  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BUILD = os.environ.get("MORULA_BUILD", "/work/main/build/release")
MORULA = os.path.join(BUILD, "apps", "morula")
CVODE = os.path.join(BUILD, "benchmarks", "ode", "morula_cvode_benchmark")

PROBLEMS = ["robertson", "network10", "network8", "oregonator", "brusselator"]
RTOLS = [10.0 ** -e for e in range(3, 11)]
ATOL_FACTOR = 1e-6
FLOOR = 1e-6
TARGET_S = 0.15
REPEATS = 5
MAX_STEPS = 1000000
MORULA_METHODS = ["rkf45", "bdf", "auto", "rodas5p", "rodas4", "rosenbrock23"]
SCIPY_METHODS = ["Radau", "BDF", "LSODA"]
NICE = ["nice", "-n", "15"]


def label(family, method):
    names = {"rkf45": "RKF45", "bdf": "BDF", "auto": "automatic", "rodas5p": "Rodas5P", "rodas4": "Rodas4",
             "rosenbrock23": "Rosenbrock23"}
    if family == "morula":
        return "Morula " + names[method]
    if family == "scipy":
        return "SciPy " + method
    return "CVODE BDF"


def error_of(times, y, ref):
    """y, ref: samples x species. Max relative error over t > 0 with a floor per species."""
    if y is None or not np.all(np.isfinite(y)):
        return float("nan")
    floor = FLOOR * np.max(np.abs(ref), axis=0)
    floor[floor == 0] = 1e-300
    scale = np.maximum(np.abs(ref), floor[None, :])
    mask = times > 0
    return float(np.max(np.abs(y[mask] - ref[mask]) / scale[mask]))


def reference(model):
    start = time.perf_counter()
    sol = solve_ivp(model.rhs, (0.0, model.sample_times[-1]), model.y0, method="Radau",
                    t_eval=model.sample_times, rtol=1e-13, atol=1e-20, jac=model.jac)
    seconds = time.perf_counter() - start
    if sol.status != 0:
        raise RuntimeError(f"reference failed on {model.name}: {sol.message}")
    return sol.y.T.copy(), {"method": "SciPy Radau", "rtol": 1e-13, "atol": 1e-20,
                            "nfev": int(sol.nfev), "njev": int(sol.njev), "nlu": int(sol.nlu), "seconds": seconds}


def second_reference(model, ref):
    """An independent check of the reference: LSODA (DOP853 for the non-stiff Brusselator) at rtol 1e-13,
    atol 1e-20; returns its error against the reference in the study's measure."""
    method = "DOP853" if model.name == "brusselator" else "LSODA"
    extra = {} if method == "DOP853" else {"jac": model.jac}
    sol = solve_ivp(model.rhs, (0.0, model.sample_times[-1]), model.y0, method=method, t_eval=model.sample_times,
                    rtol=1e-13, atol=1e-20, **extra)
    return {"method": f"SciPy {method}, rtol 1e-13, atol 1e-20", "status": int(sol.status),
            "error_vs_reference": error_of(model.sample_times, sol.y.T, ref) if sol.status == 0 else None}


# ---------------------------------------------------------------- Morula
SUMMARY = re.compile(r"^ode: .*?, ([0-9.eE+-]+) s\s*$", re.M)


def morula_once(model_path, method, rtol, atol, batch, out_csv=None, stats=False):
    cmd = NICE + [MORULA, "ode", "run", model_path, "--method", method, "--rtol", repr(rtol), "--atol", repr(atol),
                  "--max-steps", str(MAX_STEPS), "--batch", str(batch), "--no-progress"]
    if out_csv:
        cmd += ["--out", out_csv]
    if stats:
        cmd += ["--stats"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = SUMMARY.search(p.stdout)
    seconds = float(m.group(1)) if m else None
    return p.returncode, seconds, p.stdout, p.stderr


def read_morula_csv(path, n_species):
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    data = data[data[:, 0] == 0]  # system 0
    return data[:, 1], data[:, 2:2 + n_species]


def stats_of(stdout):
    """Medians of the --stats table (columns min, median, max)."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"^\s+([A-Za-z][A-Za-z0-9 ]*?)\s+([0-9.eE+-]+)\s+([0-9.eE+-]+)\s+([0-9.eE+-]+)\s*$", line)
        if m:
            out[m.group(1)] = float(m.group(3))
    if "steps" not in out:  # one system: the summary line says 'N steps (M rejected)'
        m = re.search(r"([0-9]+) steps \(([0-9]+) rejected\)", stdout)
        if m:
            out["steps"], out["rejected"] = float(m.group(1)), float(m.group(2))
    return out


def run_morula(model, model_path, method, rtol, atol, ref, tmp):
    n = len(model.species)
    # Rosenbrock methods beyond 8 species / 16 reactions run on the general path (one system per thread,
    # its vectors in the workspace) since issue #45's general-path change; before, they were "n/a" here.
    rc, probe, out, err = morula_once(model_path, method, rtol, atol, 2)
    if rc != 0 or probe is None:
        return {"status": "failed", "reason": (err.strip() or out.strip()).splitlines()[-1][:300],
                "probe_seconds_2_systems": probe}
    batch = int(min(1000, max(1, TARGET_S / max(probe / 2, 1e-9))))
    csv = os.path.join(tmp, "morula.csv")
    runs = []
    stats = {}
    for r in range(REPEATS):
        rc, seconds, out, err = morula_once(model_path, method, rtol, atol, batch, csv if r == 0 else None, r == 0)
        if rc != 0 or seconds is None:
            return {"status": "failed", "reason": (err.strip() or out.strip()).splitlines()[-1][:300]}
        if r == 0:
            times, y = read_morula_csv(csv, n)
            error = error_of(times, y, ref)
            stats = stats_of(out)
            summary = out.strip().splitlines()[0]
        runs.append(seconds / batch)
    return {"status": "success", "error": error, "seconds_per_system": min(runs),
            "median_seconds_per_system": statistics.median(runs), "runs_seconds_per_system": runs, "batch": batch, "summary": summary, "stats": stats}


# ---------------------------------------------------------------- SciPy
def run_scipy(model, method, rtol, atol, ref):
    cpu = []

    def once():
        start, start_cpu = time.perf_counter(), time.process_time()
        sol = solve_ivp(model.rhs, (0.0, model.sample_times[-1]), model.y0, method=method,
                        t_eval=model.sample_times, rtol=rtol, atol=atol, jac=model.jac)
        cpu.append(time.process_time() - start_cpu)
        return time.perf_counter() - start, sol

    seconds, sol = once()
    if sol.status != 0:
        return {"status": "failed", "reason": str(sol.message)}
    error = error_of(model.sample_times, sol.y.T, ref)
    runs = [seconds]
    reps = 5 if seconds < 0.05 else (3 if seconds < 0.5 else 2)
    for _ in range(reps - 1):
        runs.append(once()[0])
    return {"status": "success", "error": error, "seconds_per_system": min(runs),
            "median_seconds_per_system": statistics.median(runs), "runs_seconds_per_system": runs,
            "cpu_seconds_per_system": cpu, "nfev": int(sol.nfev),
            "njev": int(sol.njev), "nlu": int(sol.nlu)}


# ---------------------------------------------------------------- CVODE
def run_cvode(model, folder, rtol, atol, ref, tmp):
    csv = os.path.join(tmp, "cvode.csv")
    cmd = NICE + [CVODE, folder, "--repeats", str(REPEATS), "--rtol", repr(rtol), "--atol", repr(atol),
                  "--max-steps", str(MAX_STEPS), "--linear-solver", "dense", "--csv", csv]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"status": "failed", "reason": (p.stderr.strip() or p.stdout.strip())[-300:]}
    info = json.loads(p.stdout.strip().splitlines()[-1])
    data = np.genfromtxt(csv, delimiter=",", skip_header=1)
    error = error_of(data[:, 0], data[:, 1:], ref)
    return {"status": "success", "error": error, "seconds_per_system": min(info["runs"]),
            "median_seconds_per_system": info["median_s"], "runs_seconds_per_system": info["runs"], "steps": info["steps"],
            "linear_setups": info["linear_setups"], "rhs_evaluations": info["rhs_evaluations"],
            "sundials": info["sundials"]}


def machine():
    model = "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    compiler = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    import scipy
    return {"cpu": model, "cores_used": 1, "backend": "Serial", "kokkos": "3.4.01", "compiler": compiler,
            "build": BUILD + " (CMAKE_BUILD_TYPE=Release)", "commit": commit,
            "python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "note": "shared 2-core machine, everything run under nice -n 15, one process at a time"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results",
                                                  "ode_work_precision_cpu_2026-11-29.json"))
    ap.add_argument("--rtols", default=None, help="comma-separated (default 1e-3 .. 1e-10)")
    ap.add_argument("--families", default="morula,scipy,cvode",
                    help="re-run only these (morula, scipy, cvode); the other families' runs are kept from --out")
    ap.add_argument("--plot-only", action="store_true")
    args = ap.parse_args()
    if not args.plot_only:
        rtols = [float(x) for x in args.rtols.split(",")] if args.rtols else RTOLS
        results = json.load(open(args.out)) if os.path.exists(args.out) else {}
        results["machine"] = machine()
        results["protocol"] = {
            "rtols": RTOLS, "atol": f"rtol * {ATOL_FACTOR}", "error": "max over sample times t > 0 and species of "
            "|y - ref| / max(|ref|, floor), floor = %g * max_t |ref| per species" % FLOOR,
            "reference": "SciPy Radau, rtol 1e-13, atol 1e-20, analytic Jacobian",
            "morula_time": "CLI summary time (integration wall time) of --batch N identical systems / N, minimum of "
            f"{REPEATS} runs (median kept too), N chosen for about {TARGET_S} s per run (<= 1000)",
            "scipy_time": "one solve_ivp call (analytic Jacobian), minimum of 5 calls (2 or 3 when a call takes "
            "more than 0.05 / 0.5 s; median kept too)",
            "cvode_time": f"morula_cvode_benchmark: minimum of {REPEATS} timed runs (median kept too), one system, "
            "setup included, after one untimed run",
            "why_minimum": "the machine is shared with other work (load average 2-4 on 2 cores during the runs); "
            "the minimum of repeated runs is the least disturbed measurement",
            "max_steps": MAX_STEPS, "driver": os.path.relpath(__file__, REPO)}
        results.setdefault("problems", {})
        with tempfile.TemporaryDirectory() as tmp:
            # Private copies of the binaries: a shared build tree may be relinked while the study runs.
            global MORULA, CVODE
            for var in ("MORULA", "CVODE"):
                src = globals()[var]
                dst = os.path.join(tmp, os.path.basename(src))
                shutil.copy2(src, dst)
                with open(dst, "rb") as f:
                    results["machine"][var.lower() + "_sha256"] = hashlib.sha256(f.read()).hexdigest()
                globals()[var] = dst
            for name in args.problems.split(","):
                path = os.path.join(HERE, "models", name + ".txt")
                model = textmodel.Model(path)
                print(f"== {name}: {len(model.species)} species, {len(model.reactions)} reactions", flush=True)
                ref, ref_info = reference(model)
                folder = os.path.join(tmp, name)
                model.write_lassie_folder(folder)
                check = run_cvode(model, folder, 1e-12, 1e-20, ref, tmp)
                ref_info["cvode_1e-12_vs_reference"] = check.get("error")
                ref_info["second_reference"] = second_reference(model, ref)
                problem = {"model": os.path.relpath(path, REPO), "species": len(model.species),
                           "reactions": len(model.reactions), "t_end": float(model.sample_times[-1]),
                           "samples": int(model.sample_times.size), "reference": ref_info,
                           "load_average_at_start": os.getloadavg(), "runs": []}
                families = args.families.split(",")
                old = results["problems"].get(name, {}).get("runs", [])
                problem["runs"] = [r for r in old if r["family"] not in families and r["rtol"] in rtols]
                for rtol in rtols:
                    atol = rtol * ATOL_FACTOR
                    jobs = [("morula", m) for m in MORULA_METHODS] + [("scipy", m) for m in SCIPY_METHODS] + \
                           [("cvode", "BDF")]
                    for family, method in [j for j in jobs if j[0] in families]:
                        if family == "morula":
                            r = run_morula(model, path, method, rtol, atol, ref, tmp)
                        elif family == "scipy":
                            r = run_scipy(model, method, rtol, atol, ref)
                        else:
                            r = run_cvode(model, folder, rtol, atol, ref, tmp)
                        r.update({"family": family, "method": method, "label": label(family, method),
                                  "rtol": rtol, "atol": atol})
                        problem["runs"].append(r)
                        print(f"  {r['label']:22s} rtol {rtol:.0e}: {r['status']:8s} "
                              + (f"err {r['error']:.2e}  {r['seconds_per_system'] * 1e6:10.1f} us/system"
                                 if r["status"] == "success" else r.get("reason", "")), flush=True)
                order = {(f, m): i for i, (f, m) in enumerate(jobs)}
                problem["runs"].sort(key=lambda r: (-r["rtol"], order[(r["family"], r["method"])]))
                tight = [r for r in problem["runs"] if r["status"] == "success" and r["rtol"] == min(rtols)]
                problem["reference"]["tightest_runs_error"] = {r["label"]: r["error"] for r in tight}
                results["problems"][name] = problem
                with open(args.out, "w") as f:
                    json.dump(results, f, indent=1)
    import plot_work_precision
    plot_work_precision.main(args.out)


if __name__ == "__main__":
    main()
