#!/usr/bin/env python3
"""Markdown tables from mechanics_benchmark's JSON results (issue #6).

    report_mechanics.py tables  RESULT.json [...]            benchmark A and B tables per result file
    report_mechanics.py targets OUT.json CUDA.json OPENMP.json issue #6's targets: met or missed

Only the standard library is needed.
"""
import json
import sys

from report_common import load, machine_line, ms



def tables(results):
    out = []
    for r in results:
        out.append(f"*{machine_line(r)}*\n")
        out.append("Benchmark A (64^3 cells grow and divide for 10 steps; ms summed over the 10 steps, "
                   "median of the simulations):\n")
        out.append("| scalar | agent order | division | grid build | sort | forces | displacement | total | agents at the end |")
        out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c in r["cases"]:
            if c["benchmark"] != "A":
                continue
            out.append(f"| {c['scalar']} | {c['agent_order']} | {ms(c['division']['median_s'])} | "
                       f"{ms(c['grid_build']['median_s'])} | {ms(c['sort']['median_s'])} | "
                       f"{ms(c['forces']['median_s'])} | {ms(c['displacement']['median_s'])} | "
                       f"{ms(c['total']['median_s'])} | {c['final_agents']:,} |")
        out.append("\nBenchmark B (static agents; the mechanical operation per iteration):\n")
        out.append("| agents | scalar | neighbours | agent order | forces ms (min / median) | interactions/s | "
                   "GB/s (bytes that must move) | % of copy roof | grid build ms | sort ms (random order) |")
        out.append("| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c in r["cases"]:
            if c["benchmark"] != "B":
                continue
            f = c["forces"]
            out.append(f"| {c['agents']:,} | {c['scalar']} | {c['neighbors_measured']:.1f} | {c['agent_order']} | "
                       f"{ms(f['min_s'])} / {ms(f['median_s'])} | {c['interactions_per_s_median']:.3g} | "
                       f"{c['gbytes_per_s_median']:.0f} | {100 * c['fraction_of_copy_roof']:.1f} | "
                       f"{ms(c['grid_build']['median_s'])} | {ms(c['sort_random_order']['median_s'])} |")
        out.append("")
    return "\n".join(out)


def find_b(result, scalar, neighbors, order):
    for c in result["cases"]:
        if (c["benchmark"] == "B" and c["scalar"] == scalar and c["agent_order"] == order
                and abs(c["neighbors_target"] - neighbors) < 1e-9):
            return c
    return None


def targets(out, cuda, openmp):
    rows = []
    for scalar in ("float", "double"):
        for order in ("z-order", "row-major"):
            g = find_b(cuda, scalar, 27, order)
            h = find_b(openmp, scalar, 27, order)
            if g is None:
                continue
            t = g["forces"]["median_s"]
            row = {"scalar": scalar, "agent_order": order, "neighbors": g["neighbors_measured"],
                   "gpu_ms": 1e3 * t, "target_ms": 2.0, "time_met": t <= 2e-3,
                   "fraction_of_copy_roof": g["fraction_of_copy_roof"],
                   "roof_target_fraction": 0.5, "roof_met": g["fraction_of_copy_roof"] >= 0.5}
            if h is not None:
                row["cpu16_ms"] = 1e3 * h["forces"]["median_s"]
                row["gpu_speedup_over_cpu16"] = h["forces"]["median_s"] / t
                row["speedup_target"] = 50.0
                row["speedup_met"] = row["gpu_speedup_over_cpu16"] >= 50.0
            rows.append(row)
    json.dump({"issue": 6, "cuda_machine": cuda["machine"], "openmp_machine": openmp["machine"],
               "benchmark": "B, 2M agents, 27 neighbours", "targets": rows}, open(out, "w"), indent=1)
    lines = ["| scalar | agent order | H100 ms (<= 2) | 16 cores ms | speed-up (>= 50x) | "
             "% of copy roof (>= 50%) |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        yes = lambda b: "met" if b else "missed"
        cpu = f"{r['cpu16_ms']:.1f}" if "cpu16_ms" in r else "n/a"
        sp = (f"{r['gpu_speedup_over_cpu16']:.0f}x ({yes(r['speedup_met'])})"
              if "cpu16_ms" in r else "n/a")
        lines.append(f"| {r['scalar']} | {r['agent_order']} | {r['gpu_ms']:.3f} ({yes(r['time_met'])}) | "
                     f"{cpu} | {sp} | {100 * r['fraction_of_copy_roof']:.1f} ({yes(r['roof_met'])}) |")
    return "\n".join(lines)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    if argv[1] == "tables":
        print(tables(load(argv[2:])))
    elif argv[1] == "targets":
        cuda, openmp = load(argv[3:5])
        print(targets(argv[2], cuda, openmp))
    else:
        sys.exit(f"unknown report '{argv[1]}': expected tables or targets\n{__doc__}")


if __name__ == "__main__":
    main(sys.argv)
