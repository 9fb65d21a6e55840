#!/usr/bin/env python3
"""Checks a result file of distributed_mechanics_benchmark or distributed_lattice_benchmark (the ctest
smoke tests): it parses, names the execution space and the transport, and has every phase with
max/mean statistics over the ranks. Sizes are far too small to judge performance; nothing here does."""
import argparse
import json
import math
import sys

PHASES = ["migration", "halo_build", "halo_update", "sort", "grid", "forces", "move",
          "halo_and_migration", "compute", "total"]
LATTICE_PHASES = ["passes", "halo", "sync", "overflow", "communication", "total", "wall"]
TRANSPORTS = {"host memory", "GPU-aware", "staged through host", "NCCL", "RCCL", "CUDA IPC", "HIP IPC"}


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check_phases(c, phases, runs):
    for p in phases:
        for red in ("max_over_ranks", "mean_over_ranks"):
            s = c["phases"][p][red]
            if s["runs"] != runs:
                fail(f"{p}.{red}.runs")
            if not (0 <= s["min_s"] <= s["median_s"] <= s["max_s"]) or not math.isfinite(s["max_s"]):
                fail(f"{p}.{red} statistics {s}")
        if c["phases"][p]["mean_over_ranks"]["median_s"] > c["phases"][p]["max_over_ranks"]["median_s"] * (1 + 1e-12):
            fail(f"{p}: mean over ranks above the max")
    if c["phases"]["total"]["max_over_ranks"]["median_s"] <= 0:
        fail("total time not positive")


def check_lattice(a, c):
    if c["particles"] <= 0:
        fail("no particles")
    if a.ranks > 1 and c["halo_bytes_sent_per_rank_per_step_mean"] <= 0:
        fail("no ghost planes sent")
    share = c["communication_share"]["largest_rank_share_median"]
    if not 0 <= share <= 1:
        fail(f"share {share}")
    print(f"OK: lattice {a.scaling}, {c['ranks']} ranks on {a.file}, transport {c['transport']}, "
          f"phases {', '.join(LATTICE_PHASES)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--scaling", choices=["weak", "strong"], required=True)
    ap.add_argument("--model", choices=["mechanics", "lattice"], default="mechanics")
    a = ap.parse_args()
    with open(a.file) as f:
        j = json.load(f)
    if j.get("benchmark") != f"distributed_{a.model}_benchmark":
        fail("benchmark name")
    for key in ("backend", "device", "kokkos_version", "date"):
        if key not in j["machine"]:
            fail(f"machine.{key} missing")
    if not j.get("execution_space"):
        fail("execution_space missing")
    if j["mpi_ranks"] != a.ranks or len(j["device_id_per_rank"]) != a.ranks:
        fail("ranks")
    if len(j["cases"]) != 1:
        fail("one case expected")
    c = j["cases"][0]
    if c["scaling"] != a.scaling or c["ranks"] != a.ranks:
        fail("case scaling/ranks")
    if c["transport"] not in TRANSPORTS:
        fail(f"transport {c['transport']!r}")
    check_phases(c, LATTICE_PHASES if a.model == "lattice" else PHASES, j["settings"]["runs"])
    if a.model == "lattice":
        check_lattice(a, c)
        return
    if c["rebuild_every"] == 1 and c["phases"]["halo_update"]["max_over_ranks"]["max_s"] != 0:
        fail("halo_update timed although every step rebuilds")
    share = c["halo_and_migration_share"]["largest_rank_share_median"]
    if not 0 <= share <= 1:
        fail(f"share {share}")
    if c["ghosts_per_rank"]["mean"] <= 0 or c["bytes_sent_per_rank_per_step"]["mean"] <= 0:
        fail("no ghosts or nothing sent")
    if c["owned_per_rank_at_end"]["min"] <= 0:
        fail("a rank lost all its agents")
    print(f"OK: {a.scaling}, {c['ranks']} ranks on {j['execution_space']}, transport {c['transport']}, "
          f"phases {', '.join(PHASES)}")


if __name__ == "__main__":
    main()
