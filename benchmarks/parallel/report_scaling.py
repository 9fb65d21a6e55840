#!/usr/bin/env python3
"""Issue #24's report: weak and strong scaling of the distributed benchmarks on 1 and 2 GPUs of one
host, measured in one device call, against the plain single-GPU step and against the targets.

    report_scaling.py DIR --machine h200x2 [--png docs/scaling_h200x2.png] [--combined out.json] [--note TEXT]

DIR holds the files of one call (as benchmarks/parallel written by the device script):
    {base,prev,new}_mech_<M>_np<P>_r<R>[_<variant>].json   distributed_mechanics_benchmark
        (variant 'strong': --agents-total; 'exchfirst': --order exchange-first)
    new_lat_<M>_np<P>.json                              distributed_lattice_benchmark
    new_pingpong_<M>.json                               mpi_pingpong_benchmark
('base' is main before the issue, 'new' the issue's code, 'prev' an intermediate build of it.) Prints markdown tables for
docs/performance.md, checks the issue's targets, and draws weak and strong scaling.
"""
import argparse
import glob
import json
import os
import re


def load(directory, machine):
    runs = {}
    pattern = re.compile(r"(base|prev|new)_(mech|lat|pingpong)_" + re.escape(machine) +
                         r"(?:_np(\d+))?(?:_r(\d+))?(?:_([a-z]+))?\.json$")
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        m = pattern.match(os.path.basename(path))
        if m:
            with open(path) as f:
                runs[m.groups()] = json.load(f)
    return runs


def run_name(key):
    code, kind, np, r, variant = key
    return code + "_" + kind + (f"_np{np}" if np else "") + (f"_r{r}" if r else "") + (f"_{variant}" if variant else "")


def case(run):
    return run["cases"][0]


def phase(c, name):
    return c["phases"][name]["max_over_ranks"]["median_s"]


def mech(runs, code, np, r, variant=None):
    run = runs.get((code, "mech", np, r, variant))
    return case(run) if run else None


def ms(s):
    return f"{1e3 * s:.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory")
    ap.add_argument("--machine", required=True)
    ap.add_argument("--png")
    ap.add_argument("--combined")
    ap.add_argument("--note", default="", help="stored in the combined file")
    args = ap.parse_args()
    runs = load(args.directory, args.machine)
    if not runs:
        raise SystemExit(f"no result files for machine {args.machine} in {args.directory}")
    any_run = next(iter(runs.values()))
    machine = any_run["machine"]
    print(f"Device: {machine['device']}, Kokkos {machine['kokkos_version']}, {machine['compiler']}, "
          f"{machine['date']}\n")
    targets = []
    summary = {"machine": machine, "targets": targets}

    # Mechanics, weak scaling: 4M agents per GPU.
    print("| mechanics, 4M agents per GPU, double | code | 1 GPU step (ms) | plain 1-GPU step (ms) | "
          "2 GPUs step (ms) | weak efficiency | throughput / one plain GPU | halo + migration share |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    weak = {}
    for r in ("1", "4"):
        one = mech(runs, "new", "1", r)
        for code, variant in (("base", None), ("prev", None), ("new", "exchfirst"), ("new", None)):
            two = mech(runs, code, "2", r, variant)
            if not two or not one:
                continue
            plain = one["plain_single_gpu_step"]["seconds_median"]
            step1, step2 = one["step_wall_seconds_median"], two["step_wall_seconds_median"]
            share = two["halo_and_migration_share"]["largest_rank_share_median"]
            label = ("main before #24" if code == "base" else
                     "#24, ghost grid beside the forces (intermediate)" if code == "prev" else
                     "#24, exchange first" if variant == "exchfirst" else "#24 (automatic: forces first)")
            print(f"| rebuild every {r} | {label} | {ms(step1)} | {ms(plain)} | {ms(step2)} | "
                  f"{step1 / step2:.1%} | {2 * plain / step2:.2f}x | {share:.1%} |")
            weak[(code, variant, r)] = {"step_1gpu_s": step1, "plain_step_s": plain, "step_2gpu_s": step2,
                                        "weak_efficiency": step1 / step2,
                                        "throughput_vs_plain": 2 * plain / step2, "halo_migration_share": share}
    summary["mechanics_weak"] = {f"{c}_{v or 'auto'}_r{r}": x for (c, v, r), x in weak.items()}
    best = max((x for (c, v, r), x in weak.items() if c == "new" and v is None),
               key=lambda x: x["throughput_vs_plain"], default=None)
    if best:
        targets.append(("mechanics 2-GPU throughput >= 1.85x the plain single-GPU step",
                        best["throughput_vs_plain"], best["throughput_vs_plain"] >= 1.85))
        targets.append(("halo + migration <= 8% of the step (best rebuild interval)",
                        min(x["halo_migration_share"] for (c, v, r), x in weak.items() if c == "new" and v is None),
                        min(x["halo_migration_share"] for (c, v, r), x in weak.items()
                            if c == "new" and v is None) <= 0.08))
    if ("new", None, "1") in weak and ("new", None, "4") in weak:
        a, b = weak[("new", None, "1")]["step_2gpu_s"], weak[("new", None, "4")]["step_2gpu_s"]
        targets.append(("--rebuild-every 4 faster than every step (2 GPUs)", a / b, b < a))

    # Mechanics, strong scaling: 8M agents.
    print("\n| mechanics, 8M agents in all, double | 1 GPU step (ms) | plain 1-GPU step (ms) | 2 GPUs step (ms) | "
          "speed-up over the 1-GPU step | over the plain step | halo + migration share |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    strong = {}
    for r in ("1", "4"):
        one, two = mech(runs, "new", "1", r, "strong"), mech(runs, "new", "2", r, "strong")
        if not one or not two:
            continue
        plain = one["plain_single_gpu_step"]["seconds_median"]
        step1, step2 = one["step_wall_seconds_median"], two["step_wall_seconds_median"]
        share = two["halo_and_migration_share"]["largest_rank_share_median"]
        print(f"| rebuild every {r} | {ms(step1)} | {ms(plain)} | {ms(step2)} | {step1 / step2:.2f}x | "
              f"{plain / step2:.2f}x | {share:.1%} |")
        strong[r] = {"step_1gpu_s": step1, "plain_step_s": plain, "step_2gpu_s": step2,
                     "speedup": step1 / step2, "speedup_vs_plain": plain / step2}
    summary["mechanics_strong"] = strong
    if strong:
        s = max(x["speedup"] for x in strong.values())
        targets.append(("strong scaling of 8M agents >= 1.8x (2 GPUs over 1)", s, s >= 1.8))

    # Lattice, weak scaling.
    l1, l2 = runs.get(("new", "lat", "1", None, None)), runs.get(("new", "lat", "2", None, None))
    if l1 and l2:
        c1, c2 = case(l1), case(l2)
        print("\n| lattice 512^3 per GPU, 2 slots | step (ms, wall) | passes | halo | sync (Allgather) | "
              "overflow | overflow events per step |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for n, c in (("1 GPU", c1), ("2 GPUs", c2)):
            print(f"| {n} | {ms(phase(c, 'wall'))} | {ms(phase(c, 'passes'))} | {ms(phase(c, 'halo'))} | "
                  f"{ms(phase(c, 'sync'))} | {ms(phase(c, 'overflow'))} | {c['overflow_events_per_step']:.2f} |")
        eff = phase(c1, "wall") / phase(c2, "wall")
        print(f"\nweak-scaling efficiency {eff:.1%}; transport {c2['transport']}")
        summary["lattice_weak"] = {"step_1gpu_s": phase(c1, "wall"), "step_2gpu_s": phase(c2, "wall"),
                                   "efficiency": eff}
        targets.append(("lattice weak-scaling efficiency >= 95%", eff, eff >= 0.95))

    pp = runs.get(("new", "pingpong", None, None, None))
    if pp:
        at = [s for s in pp["sizes"] if s["bytes"] == 32 << 20]
        if at:
            bw = (32 << 20) / at[0]["device_buffers"]["median_s"]
            print(f"\npingpong, device buffers, {pp['transport_device_buffers']}: {bw / 1e9:.0f} GB/s at 32 MiB, "
                  f"latency {1e6 * pp['latency_s']['device_buffers']:.1f} us")
            summary["pingpong"] = {"bandwidth_32MiB_Bps": bw, "latency_s": pp["latency_s"]["device_buffers"],
                                   "transport": pp["transport_device_buffers"]}
            targets.append(("pingpong >= 150 GB/s at 32 MiB", bw / 1e9, bw >= 150e9))

    print("\n| target | measured | met |")
    print("| --- | ---: | --- |")
    for name, value, ok in targets:
        print(f"| {name} | {value:.3g} | {'yes' if ok else 'no'} |")
    summary["targets"] = [{"target": n, "measured": v, "met": ok} for n, v, ok in targets]
    if args.combined:
        with open(args.combined, "w") as f:
            json.dump({"note": args.note, "summary": summary,
                       "runs": {run_name(k): v for k, v in runs.items()}}, f, indent=1, sort_keys=True)
    if args.png:
        plot(weak, strong, summary.get("lattice_weak"), machine["device"], args.png)


def plot(weak, strong, lattice, device, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), gridspec_kw={"width_ratios": [2.2, 1, 1]})
    ax = axes[0]
    labels, values, colours = [], [], []
    for r in ("1", "4"):
        w = weak.get(("new", None, r))
        if not w:
            continue
        labels += [f"plain, 1 GPU (r{r})", f"1 GPU (r{r})", f"2 GPUs (r{r})"]
        values += [w["plain_step_s"] * 1e3, w["step_1gpu_s"] * 1e3, w["step_2gpu_s"] * 1e3]
        colours += ["0.6", "C0", "C1"]
        b = weak.get(("base", None, r))
        if b:
            labels.append(f"2 GPUs, before (r{r})")
            values.append(b["step_2gpu_s"] * 1e3)
            colours.append("C3")
    ax.bar(range(len(values)), values, color=colours)
    ax.set_xticks(range(len(values)), labels, fontsize=8, rotation=25, ha="right")
    target = [w["plain_step_s"] * 2e3 / 1.85 for (c, v, r), w in weak.items() if c == "new" and v is None]
    if target:
        ax.axhline(min(target), color="k", ls="--", lw=0.8, label="2 GPUs at 1.85x one plain GPU (target)")
        ax.legend(fontsize=8, loc="lower right")
    ax.set_ylabel("ms per step")
    ax.set_title("mechanics, weak: 4M agents per GPU")
    ax = axes[1]
    for r, marker in (("1", "o"), ("4", "s")):
        s = strong.get(r)
        if s:
            ax.plot([1, 2], [1, s["speedup"]], marker=marker, label=f"rebuild every {r}")
    ax.plot([1, 2], [1, 2], "k--", lw=0.8, label="ideal")
    ax.set_xticks([1, 2])
    ax.set_xlabel("GPUs")
    ax.set_ylabel("speed-up")
    ax.set_title("mechanics, strong: 8M agents")
    ax.legend(fontsize=8)
    ax = axes[2]
    if lattice:
        ax.bar([0, 1], [lattice["step_1gpu_s"] * 1e3, lattice["step_2gpu_s"] * 1e3], color=["C0", "C1"])
        ax.set_xticks([0, 1], ["1 GPU", "2 GPUs"])
        ax.set_title(f"lattice, weak: 512^3 per GPU ({lattice['efficiency']:.0%})")
        ax.set_ylabel("ms per step")
    fig.suptitle(f"Issue #24: {device}, one rank per GPU, NCCL over NVLink", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
