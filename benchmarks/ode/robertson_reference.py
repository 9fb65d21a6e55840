#!/usr/bin/env python3
"""Checks the Robertson systems an ode_benchmark run wrote (--check-systems) against SciPy's Radau.

  ode_benchmark --case robertson --check-systems 1000 --out run.json
  python3 benchmarks/ode/robertson_reference.py run.json [more.json ...] [--rtol 1e-12] [--cache refs.json] [--jobs 16]

For every result that carries a "check" block it integrates each listed system (its own rates) with
solve_ivp(method="Radau", analytic Jacobian, rtol 1e-12, atol 1e-20 for A and C and 1e-26 for B) from
t = 0 through the same sample times, and reports per method the largest error in the solver's own norm,
|x - ref| / (atol + rtol |ref|) (at most about 1 is within tolerance; a few is the usual global growth),
the largest relative error of each species and the largest |A + B + C - 1|. Prints one JSON line per
result and, with --out, writes them all. References are computed once per set of rates (runs of one
sweep share them), with --jobs in that many processes (one Radau solve at rtol 1e-12 takes about a
second), and, with --cache, kept in a file between calls.
"""
import argparse
import json
import multiprocessing
import sys

import numpy as np
from scipy.integrate import solve_ivp


def robertson(k):
    k1, k2, k3 = k

    def f(_t, y):
        a, b, c = y
        return [-k1 * a + k3 * b * c, k1 * a - k3 * b * c - k2 * b * b, k2 * b * b]

    def jac(_t, y):
        _a, b, c = y
        return [[-k1, k3 * c, k3 * b], [k1, -k3 * c - 2 * k2 * b, -k3 * b], [0.0, 2 * k2 * b, 0.0]]

    return f, jac


def reference(k, times, rtol):
    f, jac = robertson(k)
    sol = solve_ivp(f, (0.0, times[-1]), [1.0, 0.0, 0.0], method="Radau", jac=jac, t_eval=times,
                    rtol=rtol, atol=[1e-20, 1e-26, 1e-20])
    if not sol.success:
        raise RuntimeError(f"Radau failed for k = {k}: {sol.message}")
    return sol.y.T


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+")
    p.add_argument("--rtol", type=float, default=1e-12)
    p.add_argument("--out")
    p.add_argument("--cache", help="JSON file of references by rates and times, read and updated")
    p.add_argument("--jobs", type=int, default=1, help="processes computing the missing references")
    a = p.parse_args()
    runs = []
    for path in a.results:
        with open(path) as fh:
            runs.append(json.load(fh))
    cache = {}
    if a.cache:
        try:
            with open(a.cache) as fh:
                for entry in json.load(fh):
                    cache[tuple(entry["key"])] = np.array(entry["reference"])
        except FileNotFoundError:
            pass
    # The missing references first, in parallel: each is an independent stiff solve.
    missing = {}
    for r in (r for run in runs for r in run.get("results", [])):
        for row in r.get("check", []):
            key = tuple(row["k"]) + (a.rtol,) + tuple(r["times"])
            if key not in cache:
                missing[key] = (row["k"], np.array(r["times"]), a.rtol)
    if missing:
        keys = list(missing)
        if a.jobs > 1:
            with multiprocessing.Pool(a.jobs) as pool:
                solved = pool.starmap(reference, [missing[k] for k in keys])
        else:
            solved = [reference(*missing[k]) for k in keys]
        cache.update(zip(keys, solved))
    summaries = []
    for r in (r for run in runs for r in run.get("results", [])):
        if "check" not in r:
            continue
        times = np.array(r["times"])
        worst_norm, worst_rel, worst_mass = 0.0, [0.0, 0.0, 0.0], 0.0
        for row in r["check"]:
            key = tuple(row["k"]) + (a.rtol,) + tuple(times)
            if key not in cache:
                cache[key] = reference(row["k"], times, a.rtol)
            ref = cache[key]
            x = np.array(row["samples"], dtype=float)
            scale = r["atol"] + r["rtol"] * np.abs(ref)
            worst_norm = max(worst_norm, float(np.nanmax(np.abs(x - ref) / scale)) if np.isfinite(x).all() else float("inf"))
            for i in range(3):
                nz = np.abs(ref[:, i]) > 0
                if nz.any():
                    worst_rel[i] = max(worst_rel[i], float(np.max(np.abs(x[nz, i] - ref[nz, i]) / np.abs(ref[nz, i]))))
            worst_mass = max(worst_mass, float(np.max(np.abs(x.sum(axis=1) - 1.0))))
        s = {"method": r["method"], "sweep": r.get("sweep"), "precision": r.get("precision"), "systems": r["systems"],
             "rtol": r["rtol"], "atol": r["atol"], "checked": len(r["check"]), "reference": f"scipy Radau rtol {a.rtol}",
             "max_error_in_tolerances": worst_norm, "max_relative_error": worst_rel, "max_mass_error": worst_mass}
        print(json.dumps(s))
        summaries.append(s)
    if a.cache:
        with open(a.cache, "w") as fh:
            json.dump([{"key": list(k), "reference": v.tolist()} for k, v in cache.items()], fh)
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(summaries, fh, indent=1)
    return 0 if summaries else 1


if __name__ == "__main__":
    sys.exit(main())
