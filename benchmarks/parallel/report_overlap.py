#!/usr/bin/env python3
"""Issue #23's report: before/after tables of the distributed benchmarks, measured in one call.

    report_overlap.py DIR[:LABEL] ... [--png docs/distributed_overlap_h100.png] [--combined out.json]
                      [--title TEXT]

Each DIR holds the result files of one device call (LABEL names the call in the plot), named
    {base,new}_mech_<machine>_np<P>_r<R>.json   distributed_mechanics_benchmark, P ranks, rebuild every R
    {base,new}_lat_<machine>_np<P>.json         distributed_lattice_benchmark
    {base,new}_pingpong_<machine>.json          mpi_pingpong_benchmark
('base' is main before the issue, 'new' the issue's code). Prints the markdown tables of
docs/performance.md and draws the step times before and after, with the plain single-GPU step.
"""
import argparse
import glob
import json
import os
import re


def med(c, phase):
    return c["phases"][phase]["max_over_ranks"]["median_s"]


def load(directory):
    runs = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        m = re.match(r"(base|new)_(mech|lat|pingpong)_([a-z0-9]+)(?:_np(\d+))?(?:_r(\d+))?(?:_([a-z]+))?\.json$",
                     os.path.basename(path))
        if not m:
            continue
        with open(path) as f:
            runs[m.groups()] = (path, json.load(f))
    return runs


def mech_step(c):
    # The new benchmark times unfenced steps; the old one only fenced phases.
    return c.get("step_wall_seconds_median", med(c, "total"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directories", nargs="+", help="DIR or DIR:LABEL")
    ap.add_argument("--png")
    ap.add_argument("--combined")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    combined = {"report": "issue 23: multi-GPU path, before and after", "calls": {}}
    bars = []
    for spec in args.directories:
        directory, _, label = spec.partition(":")
        print(f"## {label or directory}\n")
        bars += report_call(load(directory), label)
        combined["calls"][label or directory] = {os.path.basename(p)[:-5]: j for p, j in load(directory).values()}
    if args.combined:
        with open(args.combined, "w") as f:
            json.dump(combined, f, indent=1, sort_keys=True)
    if args.png and bars:
        plot( bars, args.png, args.title )


def report_call(runs, label):
    bars = []
    machines = sorted({k[2] for k in runs})
    for machine in machines:
        print(f"### {machine}\n")
        print("| run | before: step (ms) | after: step, unfenced (ms) | after / before | plain step (ms) | "
              "after: plain / step | after, serialised phases: halo + migration share | transport after |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for key in sorted(k for k in runs if k[1] == "mech" and k[2] == machine and k[0] == "new"):
            _, _, _, np_, r, tag = key
            new = runs[key][1]["cases"][0]
            base_key = ("base", "mech", machine, np_, r, tag)
            base = runs[base_key][1]["cases"][0] if base_key in runs else None
            after = mech_step(new)
            before = med(base, "total") if base else float("nan")
            plain = new["plain_single_gpu_step"]["seconds_median"]
            share = new["halo_and_migration_share"]["largest_rank_share_median"]
            name = (f"mechanics, {int(new['agents_per_rank']) / 1e6:g}M agents per rank, {np_} rank{'s' if np_ != '1' else ''}, "
                    f"rebuild every {new['rebuild_every']}" + (f" ({tag})" if tag else ""))
            print(f"| {name} | {1e3 * before:.2f} | **{1e3 * after:.2f}** | {after / before:.2f} | {1e3 * plain:.2f} | "
                  f"{100 * plain / after:.1f}% | {100 * share:.1f}% | {new['transport']} |")
            bars.append((label, name, before, after, plain))
        print()
        print("| run | before: step (ms) | after: step (ms) | after / before | site updates/s after | transport after |")
        print("| --- | ---: | ---: | ---: | ---: | --- |")
        lat = {}
        for key in sorted(k for k in runs if k[1] == "lat" and k[2] == machine):
            lat[key] = runs[key][1]["cases"][0]
        for key in sorted(k for k in lat if k[0] == "new"):
            np_ = key[3]
            new = lat[key]
            base = lat.get(("base",) + key[1:])
            after, before = med(new, "wall"), med(base, "wall") if base else float("nan")
            per_rank = list(new["lattice"])
            per_rank[2] //= int(np_)
            name = (f"lattice {'x'.join(str(v) for v in per_rank)} per rank, {np_} rank{'s' if np_ != '1' else ''}"
                    + ( f" ({key[5]})" if key[5] else ""))
            print(f"| {name} | {1e3 * before:.3f} | **{1e3 * after:.3f}** | {after / before:.2f} | "
                  f"{new['site_updates_per_s']:.3g} | {new['transport']} |")
            bars.append((label, name, before, after, None))
        for v in ("base", "new"):
            one, two = lat.get((v, "lat", machine, "1", None, None)), lat.get((v, "lat", machine, "2", None, None))
            if one and two:
                ratio = med(one, "wall") / med(two, "wall")
                print(f"\n{v}: one-rank step / two-rank step = {100 * ratio:.1f}% (weak scaling efficiency, ranks "
                      f"on GPUs of their own); twice that = {200 * ratio:.1f}% (ranks sharing one GPU: the share of "
                      f"two one-rank steps' throughput)")
        print()
        for v in ("base", "new"):
            key = (v, "pingpong", machine, None, None, None)
            if key in runs:
                j = runs[key][1]
                sizes = {s["bytes"]: s for s in j["sizes"]}
                s32 = sizes.get(32 << 20)
                bw = 32 * 2 ** 20 / s32["device_buffers"]["median_s"] / 1e9 if s32 else float("nan")
                print(f"{v} pingpong ({j['transport_device_buffers']}): {1e6 * j['latency_s']['device_buffers']:.1f} us, "
                      f"{bw:.2f} GB/s at 32 MiB")
        print()
    return bars


def plot(bars, png, title):
    import math

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(bars) + 1.6))
    y = list(range(len(bars)))
    ax.barh([i + 0.2 for i in y], [1e3 * b[2] if not math.isnan(b[2]) else 0 for b in bars], height=0.4,
            label="before (main at 2ee985b), same call", color="#bbbbbb")
    ax.barh([i - 0.2 for i in y], [1e3 * b[3] for b in bars], height=0.4, label="after (issue #23)", color="#3b6fb6")
    first = True
    for i, b in enumerate(bars):
        if b[4]:
            ax.plot([1e3 * b[4]] * 2, [i - 0.45, i + 0.45], color="#d62728", lw=2,
                    label="plain single-GPU step, same agents per rank, same call" if first else None)
            first = False
        ax.text(1e3 * b[3], i - 0.2, f" {1e3 * b[3]:.2f}", va="center", fontsize=7)
        if not math.isnan(b[2]):
            ax.text(1e3 * b[2], i + 0.2, f" {1e3 * b[2]:.2f}", va="center", fontsize=7, color="#555555")
    ax.set_yticks(y)
    ax.set_yticklabels([f"{b[0]}: {b[1]}" if b[0] else b[1] for b in bars], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time per step (ms)")
    ax.set_title(title or "distributed steps before and after", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
