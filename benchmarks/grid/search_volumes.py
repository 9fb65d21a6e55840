#!/usr/bin/env python3
"""How many candidates a neighbour search tests per particle, on paper (issue #25, sixth pass).

Uniform points at the density of benchmark B and grid_vs_cabana's case (a): 27 neighbours within the
cutoff rc, cells of edge rc (about 6.4 points per cell). Standard library only.

  search_volumes.py walks      candidate volume (in cell volumes) per particle of four walks:
                               the 27-cell walk with its pruning (Morula's), x-subdivided cells,
                               half-width cells, and rows cut exactly to the sphere's chord
  search_volumes.py clusters   pair slots per particle and the fraction of them within rc for cluster
                               pairs (clusters of M consecutive points of a cell, bounding-box test), as
                               GROMACS' pair lists use
"""
import itertools
import math
import random
import sys


def walks(samples=100000, seed=1):
    rng = random.Random(seed)

    def side(o, u):
        return u if o < 0 else (1 - u if o > 0 else 0.0)

    today, chord = 0.0, 0.0
    sub = {2: 0.0, 4: 0.0}
    for _ in range(samples):
        x, y, z = rng.random(), rng.random(), rng.random()
        for oz in (-1, 0, 1):
            for oy in (-1, 0, 1):
                dy, dz = side(oy, y), side(oz, z)
                rd = dy * dy + dz * dz
                if rd > 1:
                    continue
                today += 1 + (x * x + rd <= 1) + ((1 - x) ** 2 + rd <= 1)
                ext = math.sqrt(1 - rd)
                chord += 2 * ext
                for s in sub:
                    sub[s] += (math.floor((x + ext) * s) - math.floor((x - ext) * s) + 1) / s

    # half-width cells in every axis: 5 x 5 rows, each cut to the chord at half-cell granularity
    half, rows = 0.0, 0
    for _ in range(samples // 4):
        x, y, z = rng.random(), rng.random(), rng.random()
        cy, cz = math.floor(y * 2), math.floor(z * 2)
        for oz in range(-2, 3):
            lo, hi = (cz + oz) / 2, (cz + oz + 1) / 2
            dz = 0 if lo <= z < hi else (lo - z if z < lo else z - hi)
            for oy in range(-2, 3):
                lo, hi = (cy + oy) / 2, (cy + oy + 1) / 2
                dy = 0 if lo <= y < hi else (lo - y if y < lo else y - hi)
                rd = dy * dy + dz * dz
                if rd > 1:
                    continue
                ext = math.sqrt(1 - rd)
                half += (math.floor((x + ext) * 2) - math.floor((x - ext) * 2) + 1) / 8
                rows += 1
    print("candidate volume per particle, in cell volumes (the sphere is %.2f):" % (4 / 3 * math.pi))
    print("  27-cell walk, rows and side cells pruned (Morula): %.2f" % (today / samples))
    for s, v in sub.items():
        print("  cells split %d ways along x, rows cut at that granularity: %.2f" % (s, v / samples))
    print("  half-width cells, 5 x 5 rows: %.2f in %.1f runs" % (half / (samples // 4), rows / (samples // 4)))
    print("  rows cut exactly to the chord (points sorted along x in each cell): %.2f" % (chord / samples))


def clusters(edge=16, seed=3):
    rng = random.Random(seed)
    rc = 1.0
    n = int(27 / (4 / 3 * math.pi) * edge ** 3)
    pts = [(rng.random() * edge, rng.random() * edge, rng.random() * edge) for _ in range(n)]
    cells = {}
    for i, p in enumerate(pts):
        cells.setdefault((int(p[0]), int(p[1]), int(p[2])), []).append(i)

    def wrap(d):
        return d - edge * round(d / edge)

    def d2(a, b):
        return sum(wrap(a[k] - b[k]) ** 2 for k in range(3))

    def box(idx):
        return ([min(pts[i][k] for i in idx) for k in range(3)], [max(pts[i][k] for i in idx) for k in range(3)])

    def box_d2(a, b):
        s = 0.0
        for k in range(3):
            s += min(max(0.0, b[0][k] + sh - a[1][k], a[0][k] - b[1][k] - sh) for sh in (-edge, 0, edge)) ** 2
        return s

    print("cluster pairs, %d points, 27 neighbours on average:" % n)
    for m in (4, 8):
        for name, key in (("index order in the cell", None), ("sorted along z in the cell", lambda i: pts[i][2])):
            groups = {c: [sorted(v, key=key)[k:k + m] if key else v[k:k + m] for k in range(0, len(v), m)]
                      for c, v in cells.items()}
            boxes = {(c, k): box(g) for c, gs in groups.items() for k, g in enumerate(gs)}
            slots = useful = 0
            for c, gs in groups.items():
                for k, g in enumerate(gs):
                    for o in itertools.product((-1, 0, 1), repeat=3):
                        nc = tuple((c[d] + o[d]) % edge for d in range(3))
                        for kk, h in enumerate(groups.get(nc, [])):
                            if box_d2(boxes[(c, k)], boxes[(nc, kk)]) > rc * rc:
                                continue
                            slots += m * m
                            useful += sum(1 for i in g for j in h if i != j and d2(pts[i], pts[j]) <= rc * rc)
            print("  M = %d, %s: %.0f pair slots per point, %.1f within rc (%.0f%%)"
                  % (m, name, slots / n, useful / n, 100.0 * useful / slots))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "walks"
    {"walks": walks, "clusters": clusters}[what]()
