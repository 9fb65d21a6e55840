#!/usr/bin/env python3
"""Issue #45 work-precision study, supplement: the Oregonator (and a control problem) through rosenbrock_check
(OdeSolver in batched mode, timed around solve(), see rosenbrock_check.cpp) built twice: with the small-LU fix
of SmallMassAction.hpp ('fixed') and with the header as on main ('old'). Adds the runs to the results JSON
under problems.<name>.lu_fix_runs and redraws the plots.

Usage: run_fixed_lu.py FIXED_BINARY OLD_BINARY [--problems oregonator,robertson] [--out RESULTS.json]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_work_precision as w  # noqa: E402
import textmodel  # noqa: E402

METHODS = ["bdf", "auto", "rodas5p", "rodas4", "rosenbrock23"]
NAMES = {"bdf": "BDF", "auto": "automatic", "rodas5p": "Rodas5P", "rodas4": "Rodas4", "rosenbrock23": "Rosenbrock23"}


def once(binary, path, method, rtol, atol, batch, repeats, csv=None):
    cmd = w.NICE + [binary, path, method, repr(rtol), repr(atol), str(batch), str(repeats)] + ([csv] if csv else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    return (json.loads(lines[-1]) if lines else None), p.returncode, p.stderr.strip()[-300:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixed")
    ap.add_argument("old")
    ap.add_argument("--problems", default="oregonator,robertson")
    ap.add_argument("--out", default=os.path.join(w.REPO, "benchmarks", "results", "ode_work_precision_cpu_2026-11-29.json"))
    args = ap.parse_args()
    results = json.load(open(args.out))
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.problems.split(","):
            path = os.path.join(HERE, "models", name + ".txt")
            model = textmodel.Model(path)
            ref, _ = w.reference(model)
            runs = []
            for rtol in w.RTOLS:
                atol = rtol * w.ATOL_FACTOR
                for build, binary in (("fixed", args.fixed), ("old", args.old)):
                    for method in METHODS:
                        if build == "old" and not method.startswith("ro"):
                            continue  # BDF and automatic do not use the small LU
                        probe, rc, err = once(binary, path, method, rtol, atol, 2, 1)
                        if probe is None or rc != 0:
                            runs.append({"build": build, "method": method, "rtol": rtol, "atol": atol,
                                         "status": "failed", "reason": err})
                            continue
                        batch = int(min(1000, max(2, w.TARGET_S / max(probe["min_s"], 1e-9))))
                        csv = os.path.join(tmp, "y.csv")
                        r, rc, err = once(binary, path, method, rtol, atol, batch, 5, csv)
                        y = np.genfromtxt(csv, delimiter=",")
                        runs.append({"build": build, "method": method,
                                     "label": f"Morula {NAMES[method]} ({build} LU)" if method.startswith("ro")
                                     else f"Morula {NAMES[method]}",
                                     "rtol": rtol, "atol": atol, "status": "success" if rc == 0 else "failed",
                                     "error": w.error_of(y[:, 0], y[:, 1:], ref), "seconds_per_system": r["min_s"],
                                     "median_seconds_per_system": r["median_s"], "batch": batch,
                                     "steps": r["steps"], "rejected": r["rejected"]})
                        x = runs[-1]
                        print(f"  {name} {x['label']:32s} rtol {rtol:.0e}: err {x['error']:.2e} "
                              f"{x['seconds_per_system'] * 1e6:9.1f} us  steps {x['steps']} ({x['rejected']})", flush=True)
            results["problems"][name]["lu_fix_runs"] = {
                "how": "rosenbrock_check (benchmarks/ode/work_precision/rosenbrock_check.cpp) built with g++ 12.2 -O3 "
                       "against the worktree's headers (fixed) or with SmallMassAction.hpp's old row swap (old), linked "
                       "with the release build's libmorula.a; time: minimum of 5 timed solve() calls of a batch of N "
                       "identical systems (plus the copy of the samples to the host), divided by N",
                "runs": runs}
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1)
    import plot_work_precision
    plot_work_precision.main(args.out)


if __name__ == "__main__":
    main()
