#!/usr/bin/env python3
"""Tests of the roofline suite's scripts, and of a suite result file (ctest runs both).

    python3 test_suite.py                       # the roof arithmetic and the table, on made-up runs
    python3 test_suite.py --suite-file F.json   # also: F has every kernel family, and consistent figures
"""
import argparse
import json
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_roofline  # noqa: E402
import run_suite  # noqa: E402

ROOFS = {"dram_copy_gbytes_per_s": 100.0, "cache_gbytes_per_s": 400.0,
         "fma_gflops_float": 1000.0, "fma_gflops_double": 500.0}


def record(flops, bytes_, seconds, precision="double", kernel="k"):
    return {"family": "grid", "kernel": kernel, "precision": precision, "bytes": bytes_, "flops": flops,
            "arithmetic_intensity": flops / bytes_, "gbytes_per_s": bytes_ / seconds / 1e9,
            "gflops_per_s": flops / seconds / 1e9, "time": {"median_s": seconds}, "parameters": {"n": 1}}


class ApplicableRoof(unittest.TestCase):
    def test_kernel_without_flops_is_memory_bound_against_copy(self):
        k = record(0, 8e9, 0.2, precision="none")  # 40 GB/s of 100
        r = run_suite.applicable_roof(k, ROOFS)
        self.assertEqual(r["bound"], "memory")
        self.assertAlmostEqual(r["fraction_of_roof"], 0.4)
        self.assertAlmostEqual(r["fraction_of_cache_bandwidth"], 0.1)
        self.assertNotIn("compute_roof_gflops_per_s", r)

    def test_left_of_the_ridge_is_memory_bound(self):
        # AI 2 flop/B: attainable min(500, 200) = 200 GFLOP/s; at 70 GB/s it reaches 140 GFLOP/s = 70%.
        k = record(2 * 7e9, 7e9, 0.1)
        r = run_suite.applicable_roof(k, ROOFS)
        self.assertEqual(r["bound"], "memory")
        self.assertAlmostEqual(r["attainable_gflops_per_s"], 200.0)
        self.assertAlmostEqual(r["fraction_of_roof"], 0.7)
        self.assertAlmostEqual(r["fraction_of_roof"], k["gflops_per_s"] / r["attainable_gflops_per_s"])

    def test_right_of_the_ridge_is_compute_bound_per_precision(self):
        # AI 20: double ridge at 5, float ridge at 10; 1 TFLOP of work in 4 s = 250 GFLOP/s.
        k = record(1e12, 5e10, 4.0)
        r = run_suite.applicable_roof(k, ROOFS)
        self.assertEqual(r["bound"], "compute")
        self.assertAlmostEqual(r["fraction_of_roof"], 0.5)
        k = record(1e12, 5e10, 4.0, precision="float")
        self.assertAlmostEqual(run_suite.applicable_roof(k, ROOFS)["fraction_of_roof"], 0.25)

    def test_same_intensity_changes_bound_with_precision(self):
        # AI 7: beyond the double ridge (5), before the float ridge (10).
        self.assertEqual(run_suite.applicable_roof(record(7e9, 1e9, 1, "double"), ROOFS)["bound"], "compute")
        self.assertEqual(run_suite.applicable_roof(record(7e9, 1e9, 1, "float"), ROOFS)["bound"], "memory")


class Table(unittest.TestCase):
    def test_rows_match_kernels_across_runs(self):
        runs = []
        for label, seconds in (("GPU", 0.01), ("CPU", 0.1)):
            ks = [record(0, 1e9, seconds, "none", "sort"), record(1e9, 1e9, seconds, "double", "force")]
            for k in ks:
                k.update(run_suite.applicable_roof(k, ROOFS))
            runs.append({"suite": "roofline", "label": label, "roofs": dict(ROOFS, dram_triad_gbytes_per_s=90.0),
                         "machine": {"backend": label}, "kernels": ks})
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.md")
            plot_roofline.table(runs, path)
            text = open(path).read()
        rows = [l for l in text.splitlines() if l.startswith("| grid/")]
        self.assertEqual(len(rows), 2)
        sort = next(r for r in rows if "grid/sort" in r)
        # 1 GB in 10 ms = 100 GB/s = 100% of copy on the GPU; 10 GB/s = 10% on the CPU.
        self.assertIn("10 / 100 / 0 / 100% m", sort)
        self.assertIn("100 / 10 / 0 / 10% m", sort)


def check_suite_file(path):
    """The figures of a suite file are complete and consistent; returns a list of problems."""
    run = json.load(open(path))
    problems = []
    if run.get("failures"):
        problems.append(f"programs failed: {[f['program'] for f in run['failures']]}")
    families = {k["family"] for k in run["kernels"]}
    for family in run_suite.FAMILIES:
        if family not in families:
            problems.append(f"no kernel of family {family}")
    keys = [plot_roofline.kernel_key(k) for k in run["kernels"]]
    for key in sorted(set(keys)):
        if keys.count(key) > 1:
            problems.append(f"{keys.count(key)} records share the row {key}: add the parameter that tells them apart")
    for k in run["kernels"]:
        name = f"{k['family']}/{k['kernel']}"
        t = k["time"]["median_s"]
        if not (k["bytes"] > 0 and t > 0 and k["flops"] >= 0):
            problems.append(f"{name}: bytes {k['bytes']}, flops {k['flops']}, time {t}")
            continue
        for key, expect in (("arithmetic_intensity", k["flops"] / k["bytes"]),
                            ("gbytes_per_s", k["bytes"] / t / 1e9), ("gflops_per_s", k["flops"] / t / 1e9)):
            if not math.isclose(k[key], expect, rel_tol=1e-9, abs_tol=1e-30):
                problems.append(f"{name}: {key} {k[key]} != {expect}")
        if k["flops"] > 0 and k["precision"] not in ("float", "double"):
            problems.append(f"{name}: floating-point work without a precision")
        if not (k["fraction_of_roof"] > 0 and math.isfinite(k["fraction_of_roof"])):
            problems.append(f"{name}: fraction of roof {k['fraction_of_roof']}")
        if not k.get("count_basis"):
            problems.append(f"{name}: no count_basis")
    return problems


def check_resumed(path, original_path):
    """A suite file made by --resume from a finished run's work folder reuses every program's result and
    gives the same kernel records as the original; returns a list of problems."""
    resumed, original = json.load(open(path)), json.load(open(original_path))
    problems = [f"{r['program']} was run again instead of reused" for r in resumed["runs"] if "reused" not in r]
    key = lambda k: (k["program"], k["kernel"], json.dumps(k.get("parameters", {}), sort_keys=True))
    if sorted(map(key, resumed["kernels"])) != sorted(map(key, original["kernels"])):
        problems.append("the kernel records differ from the original run's")
    if resumed["roofs"] != original["roofs"]:
        problems.append("the roofs differ from the original run's")
    return problems


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite-file")
    parser.add_argument("--resumed-file", help="with --suite-file: a --resume run from its work folder")
    args, rest = parser.parse_known_args()
    if args.resumed_file:
        problems = check_resumed(args.resumed_file, args.suite_file)
        for p in problems:
            print(f"{args.resumed_file}: {p}", file=sys.stderr)
        if problems:
            sys.exit(1)
        print(f"{args.resumed_file}: every program reused, same roofs and kernels")
        sys.exit(0)
    if args.suite_file:
        problems = check_suite_file(args.suite_file)
        for p in problems:
            print(f"{args.suite_file}: {p}", file=sys.stderr)
        if problems:
            sys.exit(1)
        print(f"{args.suite_file}: every family present, figures consistent")
    unittest.main(argv=[sys.argv[0]] + rest)
