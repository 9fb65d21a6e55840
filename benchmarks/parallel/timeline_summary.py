#!/usr/bin/env python3
"""Summarises the step timelines of the distributed benchmarks (--timeline PREFIX, StepTimeline.hpp).

    python3 timeline_summary.py PREFIX_rank0.json [PREFIX_rank1.json ...] [--events] [--gap-us 20]

For each rank: the main stream's busy time (kernels on the main execution space instance, from the
events recorded on its stream) against the step's length, the longest idle gaps on that stream with the
kernels around them and the host's activity meanwhile, and the host's longest waits (fences). With
--events, every record in order: host time, stream time where recorded, kind, name.
"""
import argparse
import json


def short(name):
    for prefix in ("morula::parallel::", "morula::mechanics::", "morula::lattice::", "morula::grid::",
                   "morula::core::", "Kokkos::"):
        name = name.replace(prefix, "")
    return name if len(name) <= 70 else name[:67] + "..."


def summarise(path, show_events, gap_us):
    with open(path) as f:
        data = json.load(f)
    recs = data["records"]
    print(f"== {path}: rank {data['rank']} of {data['ranks']}, transport {data.get('transport')}")
    t_end_host = recs[-1]["host_us"]
    t_end_gpu = recs[-1].get("gpu_us", float("nan"))
    # Main-stream kernels: begin/end pairs in order (kernels on one stream do not overlap).
    kernels = []
    open_k = {}
    for i, r in enumerate(recs):
        if not r["main_instance"] or "gpu_us" not in r:
            continue
        if r["kind"] == "kernel_begin":
            open_k.setdefault(r["name"], []).append((i, r))
        elif r["kind"] == "kernel_end" and open_k.get(r["name"]):
            bi, b = open_k[r["name"]].pop(0)
            kernels.append((b["gpu_us"], r["gpu_us"], r["name"], bi, i))
    kernels.sort()
    busy = sum(e - s for s, e, *_ in kernels)
    print(f"   step: host {t_end_host:9.1f} us, main stream {t_end_gpu:9.1f} us; main-stream kernels busy "
          f"{busy:9.1f} us ({100 * busy / t_end_gpu if t_end_gpu else 0:.0f}%), {len(kernels)} kernels")
    # Idle gaps on the main stream.
    gaps = []
    last_end, last_name = 0.0, "start"
    for s, e, name, bi, ei in kernels:
        if s - last_end > gap_us:
            gaps.append((s - last_end, last_end, s, last_name, name))
        last_end, last_name = max(last_end, e), name
    if t_end_gpu - last_end > gap_us:
        gaps.append((t_end_gpu - last_end, last_end, t_end_gpu, last_name, "end"))
    print(f"   idle gaps on the main stream longer than {gap_us} us: {len(gaps)}, "
          f"{sum(g[0] for g in gaps):.1f} us in all; the longest:")
    for g in sorted(gaps, reverse=True)[:8]:
        print(f"     {g[0]:8.1f} us  at {g[1]:9.1f}..{g[2]:9.1f}  after {short(g[3])}  before {short(g[4])}")
    # Host waits: fences.
    fences = []
    open_f = []
    for r in recs:
        if r["kind"] == "fence_begin":
            open_f.append(r)
        elif r["kind"] == "fence_end" and open_f:
            b = open_f.pop()
            fences.append((r["host_us"] - b["host_us"], b["host_us"], b["name"]))
    print(f"   host in fences: {sum(f[0] for f in fences):.1f} us over {len(fences)} fences; the longest:")
    for f in sorted(fences, reverse=True)[:8]:
        print(f"     {f[0]:8.1f} us  from host {f[1]:9.1f}  {short(f[2])}")
    # Regions: host time inside each (outermost occurrences summed by name).
    stack, spent = [], {}
    for r in recs:
        if r["kind"] == "push":
            stack.append(r)
        elif r["kind"] == "pop" and stack:
            b = stack.pop()
            spent[b["name"]] = spent.get(b["name"], 0.0) + r["host_us"] - b["host_us"]
    print("   host time per region (nested regions counted in their parents too):")
    for name, t in sorted(spent.items(), key=lambda kv: -kv[1])[:14]:
        print(f"     {t:9.1f} us  {short(name)}")
    if show_events:
        for r in recs:
            gpu = f"{r['gpu_us']:9.1f}" if "gpu_us" in r else "         "
            print(f"   {r['host_us']:9.1f} {gpu} {'M' if r['main_instance'] else ' '} {r['kind']:12s} {short(r['name'])}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--events", action="store_true", help="print every record")
    ap.add_argument("--gap-us", type=float, default=20.0, help="smallest idle gap listed")
    args = ap.parse_args()
    for f in args.files:
        summarise(f, args.events, args.gap_us)


if __name__ == "__main__":
    main()
