#!/usr/bin/env python3
"""Issue #11's report: reads result files of distributed_mechanics_benchmark, distributed_lattice_benchmark
and mpi_pingpong_benchmark, prints the markdown tables of docs/performance.md, and draws the scaling plot
(time per step split into compute and communication, per rank count).

    report_distributed.py RESULTS... [--png docs/distributed_h100.png] [--label-shared-gpu]

Each file is one run; runs are told apart by benchmark, scaling (weak/strong), ranks, scalar or scheme,
rebuild interval, and a tag in the file name after the last '_' before '.json' (e.g. 'nomps')."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from report_common import machine_line  # noqa: E402


def med(c, phase):
    return c["phases"][phase]["max_over_ranks"]["median_s"]


def tag_of(path):
    base = os.path.basename(path)[:-5]
    return base


def mechanics_rows(runs):
    rows = []
    for path, j in runs:
        c = j["cases"][0]
        comm = med(c, "halo_and_migration")
        total = med(c, "total")
        rows.append({
            "file": tag_of(path), "scaling": c["scaling"], "ranks": c["ranks"], "scalar": c["scalar"],
            "agents": c["agents_total"], "rebuild_every": c["rebuild_every"], "total": total,
            "migration": med(c, "migration"), "halo": med(c, "halo_build") + med(c, "halo_update"),
            "compute": med(c, "compute"), "forces": med(c, "forces"), "comm": comm,
            "share": c["halo_and_migration_share"]["largest_rank_share_median"],
            "ghosts": c["ghosts_per_rank"]["mean"], "bytes": c["bytes_sent_per_rank_per_step"]["mean"],
            "transport": c["transport"]})
    return rows


def lattice_rows(runs):
    rows = []
    for path, j in runs:
        c = j["cases"][0]
        rows.append({
            "file": tag_of(path), "scaling": c["scaling"], "ranks": c["ranks"], "scheme": c["scheme"],
            "lattice": "x".join(str(v) for v in c["lattice"]), "sites": c["sites"], "total": med(c, "total"),
            "passes": med(c, "passes"), "halo": med(c, "halo"), "sync": med(c, "sync"),
            "overflow": med(c, "overflow"), "share": c["communication_share"]["largest_rank_share_median"],
            "rate": c["site_updates_per_s"], "bytes": c["halo_bytes_sent_per_rank_per_step_mean"],
            "transport": c["transport"]})
    return rows


def print_tables(mech, lat, ping):
    if mech:
        print("| run | ranks | agents | scalar | rebuild every | step (ms) | compute | migration | halo | "
              "halo + migration share | ghosts/rank | MB sent/rank/step |")
        print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in mech:
            print(f"| {r['file']} | {r['ranks']} | {r['agents'] / 1e6:g}M | {r['scalar']} | {r['rebuild_every']} | "
                  f"{1e3 * r['total']:.2f} | {1e3 * r['compute']:.2f} | {1e3 * r['migration']:.2f} | "
                  f"{1e3 * r['halo']:.2f} | {100 * r['share']:.0f}% | {r['ghosts']:.0f} | {r['bytes'] / 1e6:.1f} |")
        print()
    if lat:
        print("| run | ranks | lattice | scheme | step (ms) | passes | halo | sync | overflow | communication share "
              "| site updates/s | MB sent/rank/step |")
        print("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in lat:
            print(f"| {r['file']} | {r['ranks']} | {r['lattice']} | {r['scheme']} | {1e3 * r['total']:.2f} | "
                  f"{1e3 * r['passes']:.2f} | {1e3 * r['halo']:.2f} | {1e3 * r['sync']:.2f} | "
                  f"{1e3 * r['overflow']:.2f} | {100 * r['share']:.0f}% | {r['rate']:.3g} | {r['bytes'] / 1e6:.1f} |")
        print()
    for path, j in ping:
        print(f"{tag_of(path)}: latency {1e6 * j['latency_s']['device_buffers']:.1f} us (device buffers), "
              f"{1e6 * j['latency_s']['host_buffers']:.2f} us (host); bandwidth "
              f"{1e-9 * j['bandwidth_bytes_per_s']['device_buffers']:.2f} GB/s (device buffers, "
              f"{j['transport_device_buffers']}), {1e-9 * j['bandwidth_bytes_per_s']['host_buffers']:.2f} GB/s (host)")


def plot(mech, lat, png, note):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    for ax, rows, parts, title in (
            (axes[0], mech, [("compute", "compute (sort, grid, forces, move)", "#4c72b0"),
                             ("migration", "migration", "#dd8452"), ("halo", "halo build + update", "#c44e52")],
             "Sphere mechanics (double)"),
            (axes[1], lat, [("passes", "passes", "#4c72b0"), ("halo", "ghost planes", "#c44e52"),
                            ("sync", "count sync (wait for the other rank)", "#8c8c8c"),
                            ("overflow", "overflow placement", "#dd8452")],
             "Lattice (2 slots per site)")):
        labels, bottoms = [], []
        for i, r in enumerate(rows):
            what = (f"{r['agents'] / 1e6:g}M agents" if "agents" in r else f"{r['lattice']}\n{r['scheme']}")
            extra = f", rebuild/{r['rebuild_every']}" if r.get("rebuild_every", 1) > 1 else ""
            labels.append(f"{r['scaling']}\n{r['ranks']} rank{'s' if r['ranks'] > 1 else ''}\n{what}{extra}")
            b = 0.0
            for k, (key, name, color) in enumerate(parts):
                v = 1e3 * r[key]
                ax.bar(i, v, bottom=b, color=color, label=name if i == 0 else None)
                b += v
            # the step's own median (phases are medians of per-rank maxima: they need not add up to it)
            ax.text(i, b * 1.01, f"{1e3 * r['total']:.1f} ms\n{100 * r['share']:.0f}% comm", ha="center",
                    va="bottom", fontsize=8)
            bottoms.append(b)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("ms per step (slowest rank)")
        ax.set_title(title)
        ax.set_ylim(0, 1.5 * max(bottoms) if bottoms else 1)
        ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(note, fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--png")
    ap.add_argument("--plot-mechanics", nargs="*", default=None,
                    help="file tags (names without .json) to plot, in order; default all")
    ap.add_argument("--plot-lattice", nargs="*", default=None)
    ap.add_argument("--note", default="")
    ap.add_argument("--combined", help="write every run into one JSON file")
    a = ap.parse_args()
    runs = [(p, json.load(open(p))) for p in a.files]
    mech = [(p, j) for p, j in runs if j["benchmark"] == "distributed_mechanics_benchmark"]
    lat = [(p, j) for p, j in runs if j["benchmark"] == "distributed_lattice_benchmark"]
    ping = [(p, j) for p, j in runs if j["benchmark"] == "mpi_pingpong_benchmark"]
    if runs:
        print("Machine:", machine_line(runs[0][1]))
        print()
    mrows, lrows = mechanics_rows(mech), lattice_rows(lat)
    print_tables(mrows, lrows, ping)
    if a.png:
        pick = lambda rows, tags: rows if tags is None else [next(r for r in rows if r["file"] == t) for t in tags]
        plot(pick(mrows, a.plot_mechanics), pick(lrows, a.plot_lattice), a.png, a.note)
    if a.combined:
        with open(a.combined, "w") as f:
            json.dump({"report": "issue 11: distributed runs", "note": a.note,
                       "runs": {tag_of(p): j for p, j in runs}}, f, indent=1)
        print(f"wrote {a.combined}")


if __name__ == "__main__":
    main()
