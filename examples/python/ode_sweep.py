#!/usr/bin/env python3
"""A parameter sweep of a stiff network from numpy: Robertson's problem with k3 swept over four decades.

    PYTHONPATH=build/release/python python3 examples/python/ode_sweep.py --systems 4096 --out ode_sweep.png

Every system is one copy of the network with its own rate constants (a row of the array); the batch is
one solve (Rodas5P, one system per thread), and the samples come back as an array without a copy.
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import morula  # noqa: E402

ROBERTSON = """
A -> B, k=0.04
2 B -> B + C, k=3e7
B + C -> A + C, k=1e4
init A = 1
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--systems", type=int, default=4096)
    p.add_argument("--method", default="rodas5p")
    p.add_argument("--out", default="ode_sweep.png")
    a = p.parse_args()

    network = morula.ode.parse_text(ROBERTSON, "robertson")
    k = np.tile(network.rate_constants, (a.systems, 1))
    k[:, 2] = np.logspace(2, 6, a.systems)  # k3 from 1e2 to 1e6
    times = np.logspace(-4, 5, 37)
    solution = morula.ode.solve(network, times=list(times), rate_constants=k, method=a.method, rtol=1e-8, atol=[1e-12])
    failed = [i for i, s in enumerate(solution.status) if s != "success"]
    samples = solution.samples.to_host()  # (systems, times, species), a host copy on any build
    print(f"{a.systems} systems, {len(failed)} failed; A + B + C = 1 to "
          f"{np.nanmax(np.abs(samples.sum(axis=2) - 1)):.1e}")

    fig, (curves, sweep) = plt.subplots(1, 2, figsize=(11, 4))
    for i in np.linspace(0, a.systems - 1, 5).astype(int):
        curves.semilogx(times, samples[i, :, 1] * 1e4, label=f"k3 = {k[i, 2]:.0e}")
    curves.set_xlabel("t")
    curves.set_ylabel("B x 1e4")
    curves.legend(fontsize=8)
    sweep.loglog(k[:, 2], samples[:, -1, 0], label="A(t = 1e5)")
    sweep.loglog(k[:, 2], samples[:, -1, 1], label="B(t = 1e5)")
    sweep.set_xlabel("k3")
    sweep.legend()
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
