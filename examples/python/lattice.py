#!/usr/bin/env python3
"""Crowded lattice diffusion (Roberts et al. 2009) from Python: how crowding slows tracers down.

    PYTHONPATH=build/release/python python3 examples/python/lattice.py --steps 400 --out lattice.png

Two runs on the same lattice, one nearly empty and one with crowders filling 60% of the slots: the
tracers' MSD/6t (the apparent diffusion coefficient) over time for each, against the free value D0, and
how many particles the crowded sites hold.
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import morula  # noqa: E402


def run(size, crowders, steps, every):
    species = [{"name": "tracer", "count": 400, "tracers": 400, "diffusion_nm2_per_us": 100}]
    if crowders:
        species.append({"name": "crowder", "count": crowders, "tracers": 0, "diffusion_nm2_per_us": 5})
    model = morula.Lattice(size=[size] * 3, capacity=2, species=species, steps=steps)
    times, d = [], []
    while model.steps_done < steps:
        model.advance(every)
        t_us = model.steps_done * model.time_step_ns * 1e-3
        times.append(t_us)
        d.append(model.msd(0)["total"] * model.spacing_nm ** 2 / (6 * t_us))
    return model, np.array(times), np.array(d)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--every", type=int, default=20)
    p.add_argument("--out", default="lattice.png")
    a = p.parse_args()

    crowders = int(0.6 * 2 * a.size ** 3) - 400  # capacity 2: 14-bit codes, room for 400 tracer ids
    fig, (msd, occ) = plt.subplots(1, 2, figsize=(11, 4))
    for label, n in [("free", 0), ("60% of the slots taken", crowders)]:
        model, t, d = run(a.size, n, a.steps, a.every)
        msd.plot(t, d, label=f"{label}: {model.overflows} overflows")
        print(f"{label}: MSD/6t at the end {d[-1]:.1f} nm^2/us (D0 = 100), {model.overflows} overflows")
        if n:
            counts = np.bincount(model.occupancy().ravel(), minlength=model.capacity + 1)
            occ.bar(range(model.capacity + 1), counts / counts.sum())
    msd.axhline(100, color="k", lw=0.8, ls="--", label="D0")
    msd.set_xlabel("t (us)")
    msd.set_ylabel("MSD / 6t (nm^2/us)")
    msd.legend(fontsize=8)
    occ.set_xlabel("particles in a site (crowded run)")
    occ.set_ylabel("fraction of sites")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120, bbox_inches="tight")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
