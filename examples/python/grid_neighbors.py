#!/usr/bin/env python3
"""Morula's uniform grid on another code's particles: neighbour counts and the neighbour list, no copy.

    PYTHONPATH=build/release/python python3 examples/python/grid_neighbors.py --particles 100000 --out grid.png

The particles here are numpy's (on a GPU build, copied once into CuPy or PyTorch: any array with
__dlpack__ in the grid's memory works): a clustered cloud in a periodic box. The grid reads them in
place, counts every particle's neighbours within the cutoff and lists them (CSR); the picture compares
the counts with what a uniform cloud of the same density would give (a Poisson distribution), and
shows the local density of a slice.
"""
import argparse
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import morula  # noqa: E402


def where_the_grid_reads(x):
    """The particles in the memory this build's grid reads: numpy's on a CPU build, CuPy's or PyTorch's on a GPU."""
    if morula.build_info()["default_memory_space"] in ("Host", "HostSpace"):
        return x
    try:
        import cupy
        return cupy.asarray(x)
    except ImportError:
        pass
    try:
        import torch
        return torch.as_tensor(x, device="cuda")
    except ImportError:
        raise SystemExit("this Morula's grid reads GPU memory: install CuPy or PyTorch to put the particles there")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--particles", type=int, default=100000)
    p.add_argument("--box", type=float, default=40.0)
    p.add_argument("--cutoff", type=float, default=1.5)
    p.add_argument("--out", default="grid_neighbors.png")
    a = p.parse_args()

    rng = np.random.default_rng(1)
    # Half the particles uniform, half in Gaussian clusters: the crowded cells are the hard part of a cell list.
    uniform = rng.uniform(0, a.box, size=(a.particles // 2, 3))
    centres = rng.uniform(0, a.box, size=(20, 3))
    clustered = centres[rng.integers(0, 20, a.particles - a.particles // 2)] + rng.normal(0, 2.0, (a.particles - a.particles // 2, 3))
    x = np.mod(np.vstack([uniform, clustered]), a.box)

    grid = morula.UniformGrid(morula.Box((0, 0, 0), (a.box,) * 3, "periodic"), a.cutoff)
    grid.build(where_the_grid_reads(x))  # read in place, no copy
    counts = grid.neighbor_counts().to_host()
    offsets, indices = (arr.to_host() for arr in grid.neighbor_list())
    mean = 4 / 3 * math.pi * a.cutoff ** 3 * a.particles / a.box ** 3
    print(f"{a.particles} particles, {grid.num_cells} cells {grid.cells_per_axis}: {offsets[-1]} listed pairs, "
          f"{counts.mean():.2f} neighbours per particle (uniform at this density: {mean:.2f}), at most {counts.max()}")

    fig, (hist, slab) = plt.subplots(1, 2, figsize=(11, 4))
    k = np.arange(counts.max() + 1)
    hist.hist(counts, bins=k - 0.5, density=True, label="this cloud")
    poisson = np.exp(-mean + k * np.log(mean) - np.array([math.lgamma(i + 1) for i in k]))
    hist.plot(k, poisson, "k-", label=f"uniform (Poisson, mean {mean:.1f})")
    hist.set_xlabel("neighbours within the cutoff")
    hist.set_yscale("log")
    hist.set_ylim(0.5 / a.particles, 1)
    hist.legend()
    near = np.abs(x[:, 2] - a.box / 2) < 1.0
    s = slab.scatter(x[near, 0], x[near, 1], c=counts[near], s=2, cmap="viridis")
    fig.colorbar(s, ax=slab, label="neighbours")
    slab.set_aspect("equal")
    slab.set_title("a slice |z - L/2| < 1")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
