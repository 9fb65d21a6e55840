#!/usr/bin/env python3
"""Roofline chart and cross-backend table from one or more roofline suite files (issue #8).

    python3 benchmarks/roofline/plot_roofline.py h100_cuda.json openmp16.json serial.json \\
        --chart docs/roofline_h100 --table docs/roofline_h100_table.md

--chart P writes P.png and P.svg: on the left the roofline (GFLOP/s against arithmetic intensity, log-log)
with each run's measured roofs - copy bandwidth, cache bandwidth, FMA peak in float and double - and one
point per kernel that does floating-point work; on the right every kernel's achieved GB/s against each run's
copy bandwidth, which also places the kernels without floating-point work (sorts, scans, lattice passes).
--table T writes a Markdown table with one row per kernel and, per run, the median time, GB/s, GFLOP/s and
the fraction of the applicable roof (m: memory-bound, c: compute-bound).
"""
import argparse
import json
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
MARKERS = {"grid": "o", "mechanics": "s", "sem": "^", "ode": "D", "lattice": "v", "angio": "P"}


def load(paths):
    runs = []
    for path in paths:
        try:
            with open(path) as f:
                run = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            sys.exit(f"plot_roofline: {path}: {e}")
        if run.get("suite") != "roofline" or "roofs" not in run or "kernels" not in run:
            sys.exit(f"plot_roofline: {path}: not a roofline suite file (expected keys suite, roofs, kernels)")
        run["path"] = path
        runs.append(run)
    return runs


# Parameters that name a case (its size and variant). The others in a record's "parameters" are measured
# from the run (pair counts, census) and may differ in the last digits between backends; they stay in the
# files but do not split a kernel into separate rows.
CASE_PARAMETERS = ["case", "network", "n", "agents", "cells", "elements", "systems", "sites", "tubes", "slots",
                   "scheme", "boundary", "sweeps", "precision", "scalar"]


def kernel_key(k):
    p = k.get("parameters", {})
    case = ", ".join(f"{a}={p[a]}" for a in CASE_PARAMETERS if a in p and not isinstance(p[a], (dict, list)))
    return (k["family"], k["kernel"], k["precision"], case)


def chart(runs, prefix):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(15, 6.5), gridspec_kw={"width_ratios": [1.1, 1]})
    ai_all = [k["arithmetic_intensity"] for r in runs for k in r["kernels"] if k["flops"] > 0]
    lo = min([0.01] + [a / 3 for a in ai_all])
    hi = max([100.0] + [a * 3 for a in ai_all])
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    families_seen = set()
    for i, run in enumerate(runs):
        c = COLOURS[i % len(COLOURS)]
        r = run["roofs"]
        label = run.get("label", run["machine"]["backend"])
        copy, cache = r["dram_copy_gbytes_per_s"], r["cache_gbytes_per_s"]
        for precision, style in (("float", "-"), ("double", "--")):
            peak = r["fma_gflops_" + precision]
            ax.plot(xs, [min(peak, x * copy) for x in xs], style, color=c, lw=1.5,
                    label=f"{label}: copy {copy:.0f} GB/s, FMA {precision} {peak:.0f} GFLOP/s")
        peak = r["fma_gflops_float"]
        ax.plot(xs, [min(peak, x * cache) for x in xs], ":", color=c, lw=1,
                label=f"{label}: cache {cache:.0f} GB/s")
        for k in run["kernels"]:
            if k["flops"] <= 0:
                continue
            families_seen.add(k["family"])
            ax.plot(k["arithmetic_intensity"], k["gflops_per_s"], MARKERS.get(k["family"], "x"), color=c,
                    mfc="none" if k["precision"] == "double" else c, ms=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flop / byte, analytic counts)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title("Roofline: kernels with floating-point work (filled: float, open: double)")
    ax.grid(True, which="both", alpha=0.25)
    handles, labels = ax.get_legend_handles_labels()
    for fam in sorted(families_seen):
        handles.append(ax.plot([], [], MARKERS.get(fam, "x"), color="k")[0])
        labels.append(fam)
    ax.legend(handles, labels, fontsize=7, loc="lower right")

    # Right: achieved bandwidth of every kernel, per run, against that run's copy bandwidth.
    keys = sorted({kernel_key(k) for run in runs for k in run["kernels"]})
    index = {key: j for j, key in enumerate(keys)}
    height = 0.8 / max(1, len(runs))
    for i, run in enumerate(runs):
        c = COLOURS[i % len(COLOURS)]
        for k in run["kernels"]:
            y = index[kernel_key(k)] + i * height
            bx.barh(y, k["gbytes_per_s"], height=height, color=c, alpha=0.8)
        bx.axvline(run["roofs"]["dram_copy_gbytes_per_s"], color=c, ls="-", lw=1)
        bx.axvline(0.7 * run["roofs"]["dram_copy_gbytes_per_s"], color=c, ls=":", lw=1)
    bx.set_yticks([j + 0.4 - height / 2 for j in range(len(keys))])
    bx.set_yticklabels([f"{f}/{k} ({p[0] if p != 'none' else '-'}) {q}"[:70] for f, k, p, q in keys], fontsize=6)
    bx.invert_yaxis()
    bx.set_xscale("log")
    bx.set_xlabel("achieved GB/s (analytic bytes / median time); lines: copy bandwidth and 70% of it")
    bx.set_title("Bandwidth of every kernel")
    bx.grid(True, axis="x", which="both", alpha=0.25)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{prefix}.{ext}", dpi=130)
    print(f"wrote {prefix}.png and {prefix}.svg")


def table(runs, path):
    keys = sorted({kernel_key(k) for run in runs for k in run["kernels"]})
    by_run = [{kernel_key(k): k for k in run["kernels"]} for run in runs]
    labels = [run.get("label", run["machine"]["backend"]) for run in runs]
    lines = []
    lines.append("| kernel | precision | case | AI (flop/B) | " +
                 " | ".join(f"{l}: ms / GB/s / GFLOP/s / roof" for l in labels) + " |")
    lines.append("| --- | --- | --- | ---: | " + " | ".join("---:" for _ in labels) + " |")
    for key in keys:
        family, kernel, precision, params = key
        first = next(b[key] for b in by_run if key in b)
        cells = []
        for b in by_run:
            k = b.get(key)
            if k is None:
                cells.append("-")
                continue
            cells.append(f"{1e3 * k['time']['median_s']:.3g} / {k['gbytes_per_s']:.3g} / "
                         f"{k['gflops_per_s']:.3g} / {100 * k['fraction_of_roof']:.0f}% {k['bound'][0]}")
        lines.append(f"| {family}/{kernel} | {precision} | {params} | {first['arithmetic_intensity']:.3g} | " +
                     " | ".join(cells) + " |")
    lines.append("")
    lines.append("| roofs | " + " | ".join(labels) + " |")
    lines.append("| --- | " + " | ".join("---:" for _ in labels) + " |")
    for name, key, unit in (("copy", "dram_copy_gbytes_per_s", "GB/s"), ("triad", "dram_triad_gbytes_per_s", "GB/s"),
                            ("cache", "cache_gbytes_per_s", "GB/s"), ("FMA float", "fma_gflops_float", "GFLOP/s"),
                            ("FMA double", "fma_gflops_double", "GFLOP/s")):
        lines.append(f"| {name} ({unit}) | " + " | ".join(f"{run['roofs'][key]:.4g}" for run in runs) + " |")
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="roofline suite result files (run_suite.py)")
    parser.add_argument("--chart", help="prefix of the PNG and SVG chart")
    parser.add_argument("--table", help="Markdown table file")
    args = parser.parse_args()
    if not args.chart and not args.table:
        parser.error("nothing to do: give --chart and/or --table")
    runs = load(args.files)
    if args.chart:
        chart(runs, args.chart)
    if args.table:
        table(runs, args.table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
