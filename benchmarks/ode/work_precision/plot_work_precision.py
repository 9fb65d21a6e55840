#!/usr/bin/env python3
"""Plots and the markdown table of the work-precision study from its results JSON
(run_work_precision.py writes it and calls this). Usage: plot_work_precision.py RESULTS.json"""
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
STYLE = {
    "Morula RKF45": ("tab:blue", "o", "-"), "Morula BDF": ("tab:orange", "s", "-"),
    "Morula automatic": ("tab:green", "^", "-"), "Morula Rodas5P": ("tab:red", "D", "-"),
    "Morula Rodas4": ("tab:purple", "v", "-"), "Morula Rosenbrock23": ("tab:brown", "P", "-"),
    "SciPy Radau": ("tab:gray", "o", "--"), "SciPy BDF": ("tab:olive", "s", "--"),
    "SciPy LSODA": ("tab:cyan", "^", "--"), "CVODE BDF": ("black", "x", ":"),
    "Morula Rodas5P (fixed LU)": ("tab:red", "D", "-"), "Morula Rodas4 (fixed LU)": ("tab:purple", "v", "-"),
    "Morula Rosenbrock23 (fixed LU)": ("tab:brown", "P", "-"),
    "Morula Rodas5P (old LU)": ("tab:red", "D", ":"), "Morula Rodas4 (old LU)": ("tab:purple", "v", ":"),
    "Morula Rosenbrock23 (old LU)": ("tab:brown", "P", ":"),
}
TITLES = {"robertson": "Robertson, t = 0..1e5 (3 species)",
          "network10": "10-species network, rates 1e-2..1e3, t = 0..1000",
          "network8": "8-species network (Rosenbrock-sized), t = 0..1000",
          "oregonator": "Oregonator (OREGO), t = 0..360",
          "brusselator": "Brusselator (A=1, B=3), t = 0..30"}


def series(problem):
    out = {}
    for r in problem["runs"]:
        out.setdefault(r["label"], []).append(r)
    return out


def loosest(runs, threshold):
    """The run at the loosest rtol whose error is <= threshold (what a user tuning rtol would pick)."""
    ok = [r for r in runs if r["status"] == "success" and r["error"] <= threshold]
    return max(ok, key=lambda r: r["rtol"]) if ok else None


def interpolated(runs, threshold):
    """Time at error = threshold on the log-log line between the two neighbouring runs (by rtol) that
    bracket it; None where no pair does."""
    ok = sorted([r for r in runs if r["status"] == "success"], key=lambda r: -r["rtol"])
    for a, b in zip(ok, ok[1:]):
        if a["error"] > threshold >= b["error"]:
            u = (math.log(threshold) - math.log(a["error"])) / (math.log(b["error"]) - math.log(a["error"]))
            return math.exp(math.log(a["seconds_per_system"]) * (1 - u) + math.log(b["seconds_per_system"]) * u)
        if a["error"] <= threshold and a is ok[0]:
            return None  # already below at the loosest tolerance
    return None


def table(results):
    lines = []
    for name, title, problem in panels(results):
        lines.append(f"**{title}** (time per system in microseconds of the loosest-rtol run whose "
                     "error reached the bound, that rtol in brackets; 'interp.': time at exactly that error on the "
                     "log-log line through the two runs around it)\n")
        lines.append("| method | error <= 1e-3 | interp. 1e-3 | error <= 1e-6 | interp. 1e-6 | error at rtol 1e-6 "
                     "| steps at rtol 1e-6 (rejected) |")
        lines.append("| --- | --- | --- | --- | --- | --- | --- |")
        for label, runs in series(problem).items():
            if all(r["status"] == "n/a" for r in runs):
                lines.append(f"| {label} | n/a | | n/a | | n/a (> 8 species) | |")
                continue
            cells = []
            for threshold in (1e-3, 1e-6):
                c = loosest(runs, threshold)
                cells.append(f"{c['seconds_per_system'] * 1e6:.3g} ({c['rtol']:.0e})" if c else "not reached")
                t = interpolated(runs, threshold)
                cells.append(f"{t * 1e6:.3g}" if t else "")
            at6 = [r for r in runs if abs(r["rtol"] - 1e-6) < 1e-12]
            if at6 and at6[0]["status"] == "success":
                r = at6[0]
                st = r.get("stats") or {k: r[k] for k in ("steps", "rejected") if k in r}
                steps = st.get("steps", r.get("steps", ""))
                text = f"{steps:.0f}" if steps != "" else ""
                if "rejected" in st:
                    text += f" ({st['rejected']:.0f})"
                cells += [f"{r['error']:.1e}", text]
            else:
                cells += ["failed" if at6 else "", ""]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def time_at(runs, level):
    """Time per system to reach error `level`: interpolated on the log-log curve through the runs ordered
    by rtol; the loosest run's time where even that one is below `level`; None where no run reaches it."""
    ok = sorted([r for r in runs if r["status"] == "success"], key=lambda r: -r["rtol"])
    if not ok:
        return None
    if ok[0]["error"] <= level:
        return ok[0]["seconds_per_system"]
    t = interpolated(runs, level)
    if t is not None:
        return t
    c = loosest(runs, level)
    return c["seconds_per_system"] if c else None


LEVELS = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9]


def crossover_table(results):
    """Per problem and error level: time of each Morula method and the fastest, and the fastest peer."""
    lines = ["| problem | error | " + " | ".join(["RKF45", "BDF", "automatic", "Rodas5P", "Rodas4", "Rosenbrock23"])
             + " | fastest Morula | fastest peer |", "|" + " --- |" * 10]
    for name, _, problem in panels(results):
        s = series(problem)
        for key in list(s):
            if key.endswith(" (fixed LU)"):
                s[key[:-len(" (fixed LU)")]] = s[key]
        for level in LEVELS:
            cells, best, peer = [], None, None
            for label in ["Morula RKF45", "Morula BDF", "Morula automatic", "Morula Rodas5P", "Morula Rodas4",
                          "Morula Rosenbrock23"]:
                runs = s.get(label, [])
                if runs and all(r["status"] == "n/a" for r in runs):
                    cells.append("n/a")
                    continue
                t = time_at(runs, level)
                cells.append(f"{t * 1e6:.3g}" if t else "-")
                if t and (best is None or t < best[1]):
                    best = (label.replace("Morula ", ""), t)
            for label in ["SciPy Radau", "SciPy BDF", "SciPy LSODA", "CVODE BDF"]:
                t = time_at(s.get(label, []), level)
                if t and (peer is None or t < peer[1]):
                    peer = (label, t)
            lines.append(f"| {name} | {level:.0e} | " + " | ".join(cells) + " | "
                         + (f"{best[0]} ({best[1] * 1e6:.3g})" if best else "-") + " | "
                         + (f"{peer[0]} ({peer[1] * 1e6:.3g})" if peer else "-") + " |")
    return "\n".join(lines)


def panels(results):
    """(key, title, problem-like dict) for every panel: each problem, and each problem's LU-fix supplement."""
    out = []
    for name, problem in results["problems"].items():
        out.append((name, TITLES.get(name, name), problem))
    for name, problem in results["problems"].items():
        if "lu_fix_runs" in problem:
            out.append((name + "_lu_fix", TITLES.get(name, name).split(",")[0]
                        + ": Rosenbrock with the small-LU fix (rosenbrock_check)", problem["lu_fix_runs"]))
    return out


def plot(results, path):
    items = panels(results)
    names = [k for k, _, _ in items]
    cols = 2 if len(names) > 1 else 1
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(7 * cols, 5.2 * rows), squeeze=False)
    for ax, (name, title, problem) in zip(axes.flat, items):
        for label, runs in series(problem).items():
            ok = [r for r in runs if r["status"] == "success"]
            if not ok:
                continue
            color, marker, line = STYLE.get(label, ("k", ".", "-"))
            ax.loglog([r["error"] for r in ok], [r["seconds_per_system"] for r in ok], line, color=color,
                      marker=marker, label=label, ms=5)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("max relative error vs reference")
        ax.set_ylabel("time per system [s]")
        ax.grid(True, which="major", alpha=0.3)
        ax.axvline(1e-6, color="k", lw=0.5, alpha=0.4)
        ax.axvline(1e-3, color="k", lw=0.5, alpha=0.4)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8)
    m = results.get("machine", {})
    fig.suptitle(f"Work-precision, one CPU core ({m.get('cpu', '')}; Morula Serial, batched, per system), "
                 "rtol 1e-3..1e-10, atol = 1e-6 rtol", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 0.97))
    fig.savefig(path, dpi=110)
    print("wrote", path)


def main(path):
    results = json.load(open(path))
    plot(results, os.path.join(REPO, "docs", "ode_work_precision_cpu.png"))
    text = (table(results) + "\n**Time per system (us) to reach each error level** (interpolated; '-': not "
            "reached in the sweep)\n\n" + crossover_table(results))
    with open(os.path.join(HERE, "table.md"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main(sys.argv[1])
