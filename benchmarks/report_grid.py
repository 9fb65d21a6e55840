#!/usr/bin/env python3
"""Markdown tables and a PNG plot from the grid benchmarks' JSON results.

    report_grid.py grid      RESULT.json [...]          table of grid_benchmark results
    report_grid.py cabana    RESULT.json [...]          table of grid_vs_cabana results
    report_grid.py plot      OUT.png RESULT.json [...]  time against N, Morula and Cabana, per phase
    report_grid.py targets   OUT.json CUDA.json OPENMP.json  issue #10's targets: met or missed, by how much
    report_grid.py compare   BEFORE.json AFTER.json [BEFORE2.json AFTER2.json ...]
                             grid_benchmark phases before and after a change (pairs from one call),
                             median of each pair's medians

Only the standard library is needed for tables; the plot needs matplotlib.
"""
import json
import sys

from report_common import load, machine_line, ms

PHASES = [
    ("build", "build (random input)"),
    ("build_sorted_input", "build (sorted input)"),
    ("permute", "permute (random input)"),
    ("permute_sorted_input", "permute (sorted input)"),
    ("sweep", "sweep through the grid"),
    ("sweep_neighbor_reduction", "sweep through the grid, NeighborReduction"),
    ("list_build", "neighbour-list build"),
    ("list_sweep", "sweep over the list"),
]



def grid_table(results):
    out = []
    for r in results:
        out.append(f"*{machine_line(r)}*\n")
        out.append("| N | scalar | cells | build ms (min / median) | GB/s | BinSort ms | "
                   "speed-up | permute ms | sweep ms | neighbours | candidate pairs/s |")
        out.append("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c in r["cases"]:
            b, bs, p, s = c["build"], c["kokkos_binsort_create_permute_vector"], c["permute"], c["sweep"]
            out.append(
                f"| {c['n']:,} | {c['scalar']} | {c['cells_per_axis']}^3 | {ms(b['min_s'])} / {ms(b['median_s'])} | "
                f"{b['gbytes_per_s_median']:.0f} | {ms(bs['median_s'])} | {c['build_speedup_vs_binsort']:.2f}x | "
                f"{ms(p['median_s'])} | {ms(s['median_s'])} | {s['neighbors_per_particle']:.1f} | "
                f"{s['candidate_pairs_per_s_median']:.3g} |")
        out.append("")
    return "\n".join(out)


def cabana_table(results):
    out = []
    for r in results:
        out.append(f"*{machine_line(r)}*\n")
        out.append("| case | N | Morula / Cabana scalar | phase | Morula ms (min / median) | "
                   "Cabana ms (min / median) | speed-up (median) |")
        out.append("| --- | ---: | --- | --- | ---: | ---: | ---: |")
        for c in r["cases"]:
            for key, label in PHASES:
                if key not in c:
                    continue
                ph = c[key]
                m = ph["morula"]
                if isinstance(ph.get("cabana"), dict):
                    cb = ph["cabana"]
                    cab = f"{ms(cb['min_s'])} / {ms(cb['median_s'])}"
                    sp = f"{ph['speedup_median']:.2f}x"
                else:
                    cab, sp = "n/a", "n/a"
                out.append(f"| {c['case']} | {c['n']:,} | {c['morula_scalar']} / {c['cabana_scalar']} | "
                           f"{label} | {ms(m['min_s'])} / {ms(m['median_s'])} | {cab} | {sp} |")
        out.append("")
    return "\n".join(out)


def plot(png, results):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k, _ in PHASES]
    labels = dict(PHASES)
    fig, axes = plt.subplots(3, 3, figsize=(13, 10.5), sharex=True)
    for ax, key in zip(axes.flat, keys):
        for r in results:
            space = r["machine"]["backend"]
            cases = [c for c in r["cases"] if c["case"] == "a" and key in c]
            if not cases:
                continue
            cases.sort(key=lambda c: c["n"])
            n = [c["n"] for c in cases]
            ax.loglog(n, [1e3 * c[key]["morula"]["median_s"] for c in cases], "o-",
                      label=f"Morula ({space})")
            if isinstance(cases[0][key].get("cabana"), dict):
                ax.loglog(n, [1e3 * c[key]["cabana"]["median_s"] for c in cases], "s--",
                          label=f"Cabana ({space})")
        ax.set_title(labels[key], fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("particles N")
        ax.set_ylabel("median time [ms]")
    axes.flat[-1].axis("off")
    handles, names = axes.flat[0].get_legend_handles_labels()
    axes.flat[-1].legend(handles, names, loc="center")
    fig.suptitle("Case (a): N uniform points, box edge 1.3 N^(1/3), cutoff 2.5, double")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


# Issue #10's targets for case (a), double. Ratios are Cabana's median over Morula's; a target is met
# when the measured ratio (or time) reaches it. The reasons and remedies are the analysis of
# docs/performance.md (Nsight Compute figures there).
CUDA_TARGETS = [
    ("build", 16_000_000, 1.8, 0.35e-3,
     "random input: met; sorted input (what Cabana's 0.63 ms anchor measures): four passes (count, "
     "scan, scatter, bucket sort) read and write ~52 B per particle plus a host read of the status",
     "a one-sweep radix pass with decoupled look-back, or skipping the scatter when the input is "
     "already in cell order"),
    ("build_sorted_input", 16_000_000, 1.8, 0.35e-3, None, None),
    ("sweep", 16_000_000, 2.5, 2.0e-3,
     "L1-wavefront bound: ~3 cache lines per warp load (lanes start at different slots), ~20 of 32 "
     "lanes active, 64 registers (50% occupancy)",
     "warp-per-cell candidate broadcast with shuffles, or cells of half the cutoff"),
    ("list_build", 16_000_000, 10.0, 6.0e-3,
     "count and fill each repeat the full sweep (2 x 4.7 ms) plus the scan",
     "a single pass into per-warp chunks sized from the cell counts, or a half stencil"),
    ("list_sweep", 16_000_000, 1.0, None,
     "CSR rows are read with a stride of ~30 entries between lanes; Cabana's 2D layout is coalesced",
     "an ELL / sliced-ELL layout option for list iteration"),
]


def find_case(result, case, n):
    for c in result["cases"]:
        if c["case"] == case and c["n"] == n:
            return c
    return None


def assess(phase, c, ratio_target, time_target):
    ph = c[phase]
    m = ph["morula"]["median_s"]
    cb = ph["cabana"]["median_s"] if isinstance(ph.get("cabana"), dict) else None
    ratio = cb / m if cb else None
    met = ratio is not None and ratio >= ratio_target
    entry = {"phase": phase, "n": c["n"], "morula_median_ms": 1e3 * m,
             "cabana_median_ms": 1e3 * cb if cb else None, "speedup": ratio,
             "target_speedup": ratio_target, "met": met}
    if ratio is not None and not met:
        entry["missed_by_factor"] = ratio_target / ratio
    if time_target is not None:
        entry["target_ms"] = 1e3 * time_target
        entry["time_target_met"] = m <= time_target
    return entry


def targets(out, cuda, openmp):
    rows = []
    for phase, n, ratio, t, why, fix in CUDA_TARGETS:
        c = find_case(cuda, "a", n)
        e = assess(phase, c, ratio, t)
        e["backend"] = "Cuda"
        if not e["met"] or not e.get("time_target_met", True):
            e["why"] = why or CUDA_TARGETS[0][4]
            e["what_would_close_it"] = fix or CUDA_TARGETS[0][5]
        rows.append(e)
    c = find_case(openmp, "a", 1_000_000)
    for key, _ in PHASES:
        if key in c and isinstance(c[key].get("cabana"), dict):
            e = assess(key, c, 1.0, None)
            e["backend"] = "OpenMP"
            rows.append(e)
    json.dump({"issue": 10, "cuda_machine": cuda["machine"], "openmp_machine": openmp["machine"],
               "targets": rows}, open(out, "w"), indent=1)
    lines = ["| backend | phase | N | Morula ms | Cabana ms | speed-up | target | met |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for e in rows:
        tgt = f">= {e['target_speedup']}x" + (f", <= {e['target_ms']:.2f} ms" if "target_ms" in e else "")
        met = "yes" if e["met"] and e.get("time_target_met", True) else (
            "ratio only" if e["met"] else f"no ({e.get('missed_by_factor', 0):.2f}x short)")
        lines.append(f"| {e['backend']} | {dict(PHASES)[e['phase']]} | {e['n']:,} | "
                     f"{e['morula_median_ms']:.3f} | {e['cabana_median_ms']:.3f} | {e['speedup']:.2f}x | "
                     f"{tgt} | {met} |")
    return "\n".join(lines)


COMPARE_PHASES = [
    ("build", "build, random input"),
    ("build_sorted_input", "build, sorted input"),
    ("build_nearly_sorted_input", "build, nearly sorted input"),
    ("permute", "permute, random input"),
    ("permute_sorted_input", "permute, sorted input"),
    ("sweep", "sweep through the grid"),
    ("density_sweep", "density sweep"),
]


def compare_table(paths):
    """Before/after table of grid_benchmark results; several pairs (alternated runs of one call) give
    the median over the runs of each phase's median."""
    import statistics
    runs = load(paths)
    befores, afters = runs[0::2], runs[1::2]
    out = [f"*{machine_line(afters[0])}*; {len(afters)} before/after pair(s)\n",
           "| N | scalar | phase | before ms | after ms | speed-up |",
           "| ---: | --- | --- | ---: | ---: | ---: |"]
    for ci, c in enumerate(afters[0]["cases"]):
        for key, label in COMPARE_PHASES:
            if key not in c or key not in befores[0]["cases"][ci]:
                continue
            b = statistics.median(r["cases"][ci][key]["median_s"] for r in befores)
            a = statistics.median(r["cases"][ci][key]["median_s"] for r in afters)
            out.append(f"| {c['n']:,} | {c['scalar']} | {label} | {ms(b)} | {ms(a)} | {b / a:.2f}x |")
    return "\n".join(out)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    what = argv[1]
    if what == "grid":
        print(grid_table(load(argv[2:])))
    elif what == "cabana":
        print(cabana_table(load(argv[2:])))
    elif what == "plot":
        plot(argv[2], load(argv[3:]))
    elif what == "targets":
        cuda, openmp = load(argv[3:5])
        print(targets(argv[2], cuda, openmp))
    elif what == "compare":
        print(compare_table(argv[2:]))
    else:
        sys.exit(f"unknown report '{what}': expected grid, cabana, plot, targets or compare\n{__doc__}")


if __name__ == "__main__":
    main(sys.argv)
