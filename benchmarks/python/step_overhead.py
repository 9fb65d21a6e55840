#!/usr/bin/env python3
"""What a step costs from Python over the same step in C++ (issue #47: at most 2% at the README main job's size).

Alternates runs of the C++ loop (epidermis_steps: model.step() in C++) and of the Python loop
(morula.Epidermis(...).step() in Python), a fresh model each run from the same configuration, the same
warm-up and the same timed steps, and reports the median of each and their ratio. Both sides step the
same states (the same configuration gives the same run), so the difference is the call's cost.

    PYTHONPATH=build/bench/python python3 benchmarks/python/step_overhead.py \
        --steps-program build/bench/benchmarks/epidermis_steps --config examples/epidermis.json \
        --out benchmarks/results/python_step_overhead_<machine>_<date>.json
"""
import argparse
import json
import statistics
import subprocess
import time

import morula


def python_run(config, warmup, steps):
    model = morula.Epidermis(config)
    for _ in range(warmup):
        model.step()
    morula.fence()
    t0 = time.perf_counter()
    for _ in range(steps):
        model.step()
    morula.fence()
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps-program", required=True, help="the epidermis_steps benchmark program")
    p.add_argument("--config", required=True)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", required=True)
    a = p.parse_args()

    cpp, python, machine = [], [], None
    for _ in range(a.runs):
        done = subprocess.run([a.steps_program, "--config", a.config, "--warmup", str(a.warmup), "--steps",
                               str(a.steps), "--runs", "1"], check=True, capture_output=True, text=True)
        record = json.loads(done.stdout.strip().splitlines()[-1])
        machine = record["machine"]
        cpp.append(record["seconds"][0])
        python.append(python_run(a.config, a.warmup, a.steps))
    cpp_median, python_median = statistics.median(cpp), statistics.median(python)
    result = {
        "benchmark": "python_step_overhead",
        "machine": machine,
        "module": morula.build_info(),
        "config": a.config,
        "warmup_steps": a.warmup,
        "timed_steps": a.steps,
        "runs": a.runs,
        "cpp_seconds": cpp,
        "python_seconds": python,
        "cpp_us_per_step_median": 1e6 * cpp_median / a.steps,
        "python_us_per_step_median": 1e6 * python_median / a.steps,
        "python_over_cpp": python_median / cpp_median,
    }
    with open(a.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"C++ {result['cpp_us_per_step_median']:.2f} us/step, Python {result['python_us_per_step_median']:.2f} "
          f"us/step: ratio {result['python_over_cpp']:.4f} (medians of {a.runs} runs, {machine['backend']})")


if __name__ == "__main__":
    main()
