#!/usr/bin/env python3
"""Method automatic after issue #45's register kernel: its time and error on the study's problems beside
Rodas5P alone, automatic with --stiff-method bdf (RKF45 <-> BDF, the automatic of the study) and RKF45.

Same protocol as run_work_precision.py (batched runs of `morula ode run`, error of system 0 in the
study's measure against SciPy Radau at rtol 1e-13, minimum time per system over 5 runs, the methods
interleaved per tolerance). Without SciPy the reference is Morula's Rodas5P at rtol 1e-12, atol 1e-18
(the study measured Rodas5P at rtol 1e-10 within 6.6e-11 of Radau on Robertson, 1.2e-11 on the 8-species
network, 2.3e-10 on the Oregonator and 9e-9 on the Brusselator); the JSON says which was used.

  MORULA_BUILD=build/release /usr/bin/python3 benchmarks/ode/work_precision/run_automatic_rule.py --out results.json
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_work_precision as wp  # noqa: E402
import textmodel  # noqa: E402

PROBLEMS = ["robertson", "network8", "oregonator", "brusselator"]
RTOLS = [1e-3, 1e-4, 1e-6, 1e-8]
METHODS = ["auto", "auto-bdf", "rodas5p", "rkf45"]


def run(model, path, method, rtol, ref, tmp):
    """run_work_precision.run_morula with 'auto-bdf' as --method auto --stiff-method bdf."""
    if method != "auto-bdf":
        return wp.run_morula(model, path, method, rtol, rtol * wp.ATOL_FACTOR, ref, tmp)
    saved = wp.MORULA
    wrapper = os.path.join(tmp, "morula-stiff-bdf")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nexec "%s" "$@" --stiff-method bdf\n' % saved)
    os.chmod(wrapper, 0o755)
    wp.MORULA = wrapper
    try:
        return wp.run_morula(model, path, "auto", rtol, rtol * wp.ATOL_FACTOR, ref, tmp)
    finally:
        wp.MORULA = saved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import subprocess
    cpu = [l.split(":", 1)[1].strip() for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
           if l.startswith("Model name")]
    commit = subprocess.run(["git", "-C", wp.REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    results = {"protocol": __doc__.strip(), "reference": "Morula Rodas5P, rtol 1e-12, atol 1e-18",
               "machine": {"cpu": cpu[0] if cpu else "unknown", "cores_used": 1, "backend": "Serial", "kokkos": "3.4.01",
                           "build": wp.BUILD, "commit": commit}, "problems": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.problems.split(","):
            path = os.path.join(HERE, "models", name + ".txt")
            model = textmodel.Model(path)
            n = len(model.species)
            if wp.solve_ivp is not None:
                ref, _ = wp.reference(model)
                results["reference"] = "SciPy Radau, rtol 1e-13, atol 1e-20, analytic Jacobian"
            else:
                csv = os.path.join(tmp, "ref.csv")
                rc, _, out, err = wp.morula_once(path, "rodas5p", 1e-12, 1e-18, 1, csv)
                if rc != 0:
                    raise RuntimeError(f"reference failed on {name}: {err or out}")
                _, ref = wp.read_morula_csv(csv, n)
            runs = []
            for rtol in RTOLS:
                for method in METHODS:
                    if method == "rkf45" and name != "brusselator":
                        continue  # RKF45 fails or takes 1e5 stability-limited steps on the stiff problems
                    r = run(model, path, method, rtol, ref, tmp)
                    r.update({"method": method, "rtol": rtol})
                    runs.append(r)
                    print(name, method, rtol, r.get("status"), "error %.2e" % r.get("error", float("nan")),
                          "us %.1f" % (1e6 * r.get("seconds_per_system", float("nan"))),
                          "steps", r.get("stats", {}).get("steps"), flush=True)
            results["problems"][name] = {"species": n, "reactions": len(model.reactions), "runs": runs}
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
