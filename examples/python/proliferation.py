#!/usr/bin/env python3
"""Sphere cells that grow, divide and push each other (BioDynaMo's benchmark A), driven from Python.

    PYTHONPATH=build/release/python python3 examples/python/proliferation.py --cells-per-axis 8 --out proliferation.png

A cube of touching cells grows until each one passes the division diameter and splits; the daughters
push each other apart, and the colony expands. The picture shows the number of cells and of touching
pairs per step, and a slice through the colony coloured by diameter.
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import morula  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells-per-axis", type=int, default=8)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--precision", default="double")
    p.add_argument("--out", default="proliferation.png")
    a = p.parse_args()

    model = morula.Proliferation(scenario="division", cells_per_axis=a.cells_per_axis, growth_rate=200000,
                                 sort_every=4, precision=a.precision)
    agents, pairs = [model.agents], []
    for _ in range(a.steps):
        report = model.step()
        agents.append(model.agents)
        pairs.append(report["interacting_pairs"])
    print(f"{model.agents} cells after {model.steps_done} steps ({model.divisions} divisions)")

    x = model.positions.to_host()  # a host copy on any build
    d = model.diameters.to_host()
    fig, (counts, slab) = plt.subplots(1, 2, figsize=(11, 4.5))
    counts.plot(agents, label="cells")
    counts.plot(range(1, len(pairs) + 1), np.array(pairs) / 2, label="touching pairs (each counted once)")
    counts.set_xlabel("step")
    counts.set_yscale("log")
    counts.legend()
    mid = np.median(x[:, 2])
    near = np.abs(x[:, 2] - mid) < 10
    s = slab.scatter(x[near, 0], x[near, 1], c=d[near], s=8, cmap="viridis")
    fig.colorbar(s, ax=slab, label="diameter")
    slab.set_aspect("equal")
    slab.set_title(f"a slice |z - {mid:.0f}| < 10")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120, bbox_inches="tight")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
