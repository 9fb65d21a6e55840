#!/usr/bin/env python3
"""Tracer D/D0 against occupancy (lattice_crowding's JSON) next to two mean-field predictions.

A site holds at most K particles (K = 2, 4, 8); a move into a full site is rejected. Mean field treats
the sites as independent, each holding n particles with the equilibrium law of K-capped independent
particles (a Poisson law truncated at K, its mean the occupancy), and ignores the tracer's memory
(the correlation factor of lattice-gas theory, < 1), so both curves are upper estimates of D/D0:

- "target full": a move is rejected when its target holds K particles, D/D0 = 1 - P(K): the
  continuous-time lattice gas with capacity K.
- "split-pass rule": Morula's synchronous split pass. Along the pass axis the target's own particles
  that stay keep their slots, the particles arriving from both sides share what is left, and a coin
  decides which side comes first; the tracer is accepted if its rank among the arrivals fits.

    plot_crowding.py crowding.json [more.json ...] --out docs/lattice_crowding.png [--table]
"""
import argparse
import json
import math
import sys


def truncated_poisson(occupancy, capacity):
    """P(n), n = 0..capacity, of a Poisson law truncated at capacity whose mean is `occupancy`."""
    if occupancy <= 0:
        return [1.0] + [0.0] * capacity
    if occupancy >= capacity:
        return [0.0] * capacity + [1.0]

    def law(lam):
        w = [lam ** n / math.factorial(n) for n in range(capacity + 1)]
        s = sum(w)
        return [x / s for x in w]

    lo, hi = 1e-12, 1e6
    for _ in range(200):  # bisection on the mean
        mid = math.sqrt(lo * hi)
        if sum(n * p for n, p in enumerate(law(mid))) < occupancy:
            lo = mid
        else:
            hi = mid
    return law(math.sqrt(lo * hi))


def binomial(n, p):
    return [math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)]


def mean_field_target_full(occupancy, capacity):
    return 1.0 - truncated_poisson(occupancy, capacity)[capacity]


def mean_field_split_rule(occupancy, capacity, p=0.25):
    """Acceptance of a tracer's move in one split pass (moves with probability p each way)."""
    P = truncated_poisson(occupancy, capacity)
    mean = sum(n * q for n, q in enumerate(P))
    if mean <= 0:
        return 1.0
    source = [n * q / mean for n, q in enumerate(P)]  # the tracer's site: size-biased

    def mixture(weights, draws):  # law of a count drawn by draws(n) from a site of law `weights`
        out = [0.0] * (capacity + 1)
        for n, w in enumerate(weights):
            if w:
                for k, q in enumerate(draws(n)):
                    out[k] += w * q
        return out

    companions = mixture(source, lambda n: binomial(n - 1, p) if n else [])  # moving the same way
    stayers = mixture(P, lambda n: binomial(n, 1 - 2 * p))  # the target's own that stay
    arriving = mixture(P, lambda n: binomial(n, p))  # from the site beyond the target
    accept = 0.0
    for a, pa in enumerate(companions):
        ups = a + 1  # the tracer's rank among the up-movers is uniform
        for s, pst in enumerate(stayers):
            room = capacity - s
            for b, pb in enumerate(arriving):
                first = min(max(room, 0), ups) / ups  # up-movers first
                second = min(max(room - b, 0), ups) / ups  # the other side first
                accept += pa * pst * pb * 0.5 * (first + second)
    return accept


def load(paths):
    cases, machines = [], []
    for path in paths:
        with open(path) as f:
            j = json.load(f)
        cases += j["cases"]
        machines.append(j.get("machine", {}))
    return cases, machines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", help="PNG to write")
    ap.add_argument("--table", action="store_true", help="print a Markdown table")
    args = ap.parse_args()
    cases, _ = load(args.files)
    if args.table:
        print("| capacity | scheme | boundary | particles per site | D/D0 measured | x / y / z | mean field, split rule | mean field, target full | overflows per particle per step |")
        print("| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |")
        for c in sorted(cases, key=lambda c: (c["capacity"], c["scheme"], c["boundary"], c["fill"])):
            occ, k = c["occupancy_per_site"], c["capacity"]
            axes = " / ".join("%.3f" % a["d_over_d0"] for a in c["axes"])
            print("| %d | %s | %s | %.3g | %.4f +- %.4f | %s | %.4f | %.4f | %.2e |" % (
                k, c["scheme"], c["boundary"], occ, c["d_over_d0"], c["se"], axes,
                mean_field_split_rule(occ, k), mean_field_target_full(occ, k), c["overflows_per_particle_per_step"]))
    if args.out:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 5.2))
        colours = {2: "tab:blue", 4: "tab:orange", 8: "tab:green"}
        paper_max = {2: 0.0015, 4: 0.038, 8: 0.41}  # Roberts et al. (2009), Figure 3: < 0.01 overflows per step on 256^3
        for k in sorted({c["capacity"] for c in cases}):
            xs = [10 ** (e / 40) for e in range(-140, int(40 * math.log10(k * 0.95)) + 1)]
            ax.plot(xs, [mean_field_split_rule(x, k) for x in xs], "-", color=colours[k], lw=1,
                    label="mean field, split-pass rule, K=%d" % k)
            ax.plot(xs, [mean_field_target_full(x, k) for x in xs], ":", color=colours[k], lw=1)
            ax.axvline(paper_max[k], color=colours[k], lw=0.6, ls="--", alpha=0.6)
            for scheme, marker in (("split", "o"), ("fused", "s")):
                pts = sorted((c for c in cases if c["capacity"] == k and c["scheme"] == scheme),
                             key=lambda c: c["occupancy_per_site"])
                if pts:
                    ax.errorbar([c["occupancy_per_site"] for c in pts], [c["d_over_d0"] for c in pts],
                                yerr=[c["se"] for c in pts], fmt=marker, color=colours[k], ms=4,
                                mfc="none" if scheme == "fused" else colours[k],
                                label="measured, K=%d, %s" % (k, scheme))
        ax.set_xscale("log")
        ax.set_xlabel("occupancy (particles per site)")
        ax.set_ylabel("tracer D / D0")
        ax.set_ylim(0, 1.15)
        ax.axhline(1, color="grey", lw=0.5)
        ax.set_title("Crowded multiparticle lattice: tracer diffusion against occupancy\n"
                     "(dotted: mean field, target full; dashed verticals: the paper's recommended maxima)",
                     fontsize=9)
        ax.legend(fontsize=6.5, ncol=2, loc="lower left")
        fig.tight_layout()
        fig.savefig(args.out, dpi=130)
        print("wrote", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
