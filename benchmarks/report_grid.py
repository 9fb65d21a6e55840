#!/usr/bin/env python3
"""Markdown tables and a PNG plot from the grid benchmarks' JSON results.

    report_grid.py grid      RESULT.json [...]          table of grid_benchmark results
    report_grid.py cabana    RESULT.json [...]          table of grid_vs_cabana results
    report_grid.py plot      OUT.png RESULT.json [...]  time against N, Morula and Cabana, per phase

Only the standard library is needed for tables; the plot needs matplotlib.
"""
import json
import sys

PHASES = [
    ("build", "build (random input)"),
    ("build_sorted_input", "build (sorted input)"),
    ("permute", "permute (random input)"),
    ("permute_sorted_input", "permute (sorted input)"),
    ("sweep", "sweep through the grid"),
    ("list_build", "neighbour-list build"),
    ("list_sweep", "sweep over the list"),
]


def load(paths):
    return [json.load(open(p)) for p in paths]


def ms(x):
    return f"{1e3 * x:.3f}"


def machine_line(r):
    m = r["machine"]
    return (f"{m['device']}, backend {m['backend']} (concurrency {m['concurrency']}), "
            f"Kokkos {m['kokkos_version']}, {m['compiler']}, {m['date']}")


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
    fig, axes = plt.subplots(2, 4, figsize=(16, 7.5), sharex=True)
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
    else:
        sys.exit(f"unknown report '{what}': expected grid, cabana or plot\n{__doc__}")


if __name__ == "__main__":
    main(sys.argv)
