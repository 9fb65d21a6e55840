#!/usr/bin/env python3
"""Replay of Morula's batched Rosenbrock integrator in Python, to check its step counts (issue #45 work-precision
study). Same tableau (parsed from lib/morula/ode/detail/RosenbrockTableau.hpp), same transformed stages,
mixed RMS norm, first step, sample handling and step controller as RosenbrockBatch.hpp ('morula'), or Hairer's
RODAS predictive (Gustafsson) controller ('gustafsson'). Prints accepted and rejected steps.

Usage: rosenbrock_replay.py [MODEL ...]   (default: robertson network8 oregonator, rtol 1e-6 and 1e-3)
"""
import os, re, sys
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import textmodel
src = open(os.path.join(HERE, "..", "..", "..", "lib", "morula", "ode", "detail", "RosenbrockTableau.hpp")).read()
def tableau(name):
    body = src[src.index('struct ' + name):]
    body = body[:body.index('};')]
    S = int(re.search(r'stages = (\d+)', body).group(1)); q = int(re.search(r'error_order = (\d+)', body).group(1))
    g = float(re.search(r'gamma = ([0-9.eE+-]+)', body).group(1))
    def mat(fn):
        part = body[body.index('double ' + fn + '('):]
        part = part[:part.index('default')]
        M = np.zeros((S, S))
        for c, v in re.findall(r'case (\d+): return ([-0-9.eE+]+);', part):
            M[int(c) // S, int(c) % S] = float(v)
        return M
    return S, q, g, mat('a'), mat('c')

def run(model, name, rtol, atol, ctrl):
    S, q, g, A, C = tableau(name)
    x = model.y0.copy(); t = 0.0; n = len(x)
    fx = model.rhs(0, x)
    sc = atol + rtol * np.abs(x)
    d0 = np.sqrt(np.mean((x / sc) ** 2)); d1 = np.sqrt(np.mean((fx / sc) ** 2))
    h = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    acc = rej = 0; after = False; hacc = None; erracc = None
    for target in model.sample_times[1:]:
        while t < target:
            J = model.jac(0, x)
            end = t + h >= target; step = target - t if end else h
            W = np.eye(n) / (step * g) - J
            K = np.zeros((S, n))
            for i in range(S):
                u = x + A[i, :i] @ K[:i]
                b = (fx if i == 0 else model.rhs(0, u)) + (C[i, :i] @ K[:i]) / step
                K[i] = np.linalg.solve(W, b)
            xnew = u + K[S - 1]; err = K[S - 1]
            scale = atol + rtol * np.maximum(np.abs(x), np.abs(xnew))
            e = np.sqrt(np.mean((err / scale) ** 2))
            if not np.isfinite(e): e = np.inf
            if e <= 1:
                acc += 1; t = target if end else t + step; x = xnew; fx = model.rhs(0, x)
                if ctrl == 'morula':
                    f = min(5, max(0.2, 0.9 * max(e, 1e-10) ** (-1 / (q + 1))))
                    if after and f > 1: f = 1
                    prop = step * f
                else:  # Hairer RODAS: FAC1=5 FAC2=1/6 SAFE=0.9, Gustafsson prediction
                    fac = max(1 / 6, min(5, max(e, 1e-10) ** (1 / (q + 1)) / 0.9))
                    if hacc is not None:
                        facgus = (hacc / step) * (max(e, 1e-10) ** 2 / erracc) ** (1 / (q + 1)) / 0.9
                        facgus = max(1 / 6, min(5, facgus)); fac = max(fac, facgus)
                    hacc = step; erracc = max(1e-2, e)
                    prop = step / fac
                    if after: prop = min(prop, step)
                h = max(h, prop) if end else prop
                after = False
            else:
                rej += 1
                if ctrl == 'morula':
                    h = step * (max(0.2, 0.9 * e ** (-1 / (q + 1))) if np.isfinite(e) else 0.25)
                else:
                    h = step / (min(5, e ** (1 / (q + 1)) / 0.9) if np.isfinite(e) else 4)
                after = True
    return acc, rej

if __name__ == "__main__":
    names = sys.argv[1:] or ["robertson", "network8", "oregonator"]
    for name in names:
        m = textmodel.Model(os.path.join(HERE, "models", name + ".txt"))
        for tab in ["Rodas5PTableau", "Rodas4Tableau"]:
            for rtol in [1e-3, 1e-6]:
                for ctrl in ["morula", "gustafsson"]:
                    acc, rej = run(m, tab, rtol, rtol * 1e-6, ctrl)
                    print(f"{name:12s} {tab[:-7]:8s} rtol {rtol:.0e} {ctrl:10s} accepted {acc:6d} rejected {rej:6d}",
                          flush=True)
