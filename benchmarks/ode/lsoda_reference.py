#!/usr/bin/env python3
"""LSODA baseline for mass-action models in the LASSIE/cupSODA folder format.

The LASSIE paper (Tangherloni et al., BMC Bioinformatics 2017) compared its GPU simulator with the
LSODA of SciPy (scipy.integrate.odeint) at rtol 1e-6, atol 1e-12 and at most 1e4 internal steps; this
script reproduces that baseline for Morula's ODE benchmarks, and can generate the paper's synthetic
models. It needs only numpy and scipy (Python >= 3.11, SciPy >= 1.10).

Model folder (whitespace-separated numbers; blank lines ignored):
  left_side, right_side   M rows of N non-negative integers: reactant (A) and product (B) stoichiometry
  c_vector                M rate constants
  M_0 or MX_0             N initial values (one line or several)
  t_vector                sampling times, non-decreasing, >= 0 (integration starts at t = 0)
  alphabet                optional: N species names
Other files of the format (cs_vector, M_feed, atol_vector, ...) are ignored.

Kinetics: dX/dt = (B - A)^T [k o X^A], the rate of reaction r being k_r prod_j X_j^a_rj.

Usage:
  lsoda_reference.py MODEL_DIR [--repeats 5] [--method odeint|LSODA] [--csv trajectory.csv]
  lsoda_reference.py MODEL_DIR --generate 64 [--reactions 64] [--seed 1] [--samples 10] [--t-max 50]
      writes a random paper-style model into MODEL_DIR (created), then benchmarks it
      (add --generate-only to stop after writing).
Prints one JSON line: {"model", "species", "reactions", "samples", "method", "jacobian", "rtol",
"atol", "mxstep", "median_s", "runs", ...}.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp
from scipy.integrate import odeint, solve_ivp


# ---------------------------------------------------------------------------------------------------
# Reading and writing model folders
# ---------------------------------------------------------------------------------------------------
class ModelError(ValueError):
    pass


def _rows(path):
    try:
        with open(path) as f:
            rows = []
            for number, line in enumerate(f, start=1):
                words = line.split()
                if words:
                    rows.append((number, words))
            return rows
    except OSError as e:
        raise ModelError(f"cannot read {path}: {e.strerror}") from None


def _number(word, path, line):
    try:
        value = float(word)
    except ValueError:
        raise ModelError(f"{path} line {line}: '{word}' is not a number") from None
    if not np.isfinite(value):
        raise ModelError(f"{path} line {line}: '{word}' is not finite")
    return value


def _matrix(path):
    rows = []
    for line, words in _rows(path):
        row = []
        for w in words:
            v = _number(w, path, line)
            # Stoichiometries are integers; "1.0" is accepted since some generators write floats.
            if v < 0 or v != int(v):
                raise ModelError(f"{path} line {line}: '{w}' is not a non-negative integer")
            row.append(int(v))
        if rows and len(row) != len(rows[0]):
            raise ModelError(f"{path} line {line}: {len(row)} columns, the first row has {len(rows[0])}")
        rows.append(row)
    if not rows:
        raise ModelError(f"{path} is empty")
    return np.array(rows, dtype=np.int64)


def _vector(path):
    return np.array([_number(w, path, line) for line, words in _rows(path) for w in words], dtype=float)


class Model:
    def __init__(self, name, species, A, B, k, x0, times):
        self.name, self.species = name, species
        self.A, self.B, self.k, self.x0, self.times = A, B, k, x0, times


def read_model(directory):
    A = _matrix(os.path.join(directory, "left_side"))
    B = _matrix(os.path.join(directory, "right_side"))
    k = _vector(os.path.join(directory, "c_vector"))
    # LASSIE calls the initial state M_0, cupSODA MX_0; Morula's writer uses LASSIE's name.
    initial = "M_0" if os.path.exists(os.path.join(directory, "M_0")) else "MX_0"
    x0 = _vector(os.path.join(directory, initial))
    times = _vector(os.path.join(directory, "t_vector"))
    m, n = A.shape
    if B.shape != A.shape:
        raise ModelError(f"right_side is {B.shape[0]} x {B.shape[1]}, left_side {m} x {n}")
    if k.size != m:
        raise ModelError(f"c_vector has {k.size} values for {m} reactions")
    if np.any(k < 0):
        raise ModelError("c_vector has negative rate constants")
    if x0.size != n:
        raise ModelError(f"MX_0 has {x0.size} values for {n} species")
    if np.any(x0 < 0):
        raise ModelError("MX_0 has negative values")
    if times.size == 0 or np.any(times < 0) or np.any(np.diff(times) < 0):
        raise ModelError("t_vector must be non-empty, >= 0 and non-decreasing")
    alphabet = os.path.join(directory, "alphabet")
    if os.path.exists(alphabet):
        species = [w for _, words in _rows(alphabet) for w in words]
        if len(species) != n:
            raise ModelError(f"alphabet has {len(species)} names for {n} species")
    else:
        species = [f"S{j}" for j in range(n)]
    name = os.path.basename(os.path.normpath(directory))
    return Model(name, species, A, B, k, x0, times)


def generate_model(directory, species, reactions, seed, samples, t_max):
    """The paper's synthetic models: reactions of order 1 or 2 (two reactants drawn with replacement,
    so 2A occurs) with 0 to 2 products, x0 uniform in [0, 1), k log-uniform in [1e-8, 1)."""
    rng = np.random.default_rng(seed)
    A = np.zeros((reactions, species), dtype=np.int64)
    B = np.zeros((reactions, species), dtype=np.int64)
    for r in range(reactions):
        for j in rng.integers(0, species, size=rng.integers(1, 3)):
            A[r, j] += 1
        for j in rng.integers(0, species, size=rng.integers(0, 3)):
            B[r, j] += 1
    k = 10.0 ** rng.uniform(-8.0, 0.0, size=reactions)
    x0 = rng.uniform(0.0, 1.0, size=species)
    times = np.linspace(t_max / samples, t_max, samples)
    os.makedirs(directory, exist_ok=True)
    np.savetxt(os.path.join(directory, "left_side"), A, fmt="%d", delimiter="\t")
    np.savetxt(os.path.join(directory, "right_side"), B, fmt="%d", delimiter="\t")
    np.savetxt(os.path.join(directory, "c_vector"), k, fmt="%.17g")
    np.savetxt(os.path.join(directory, "MX_0"), x0[None, :], fmt="%.17g", delimiter="\t")
    np.savetxt(os.path.join(directory, "t_vector"), times, fmt="%.17g")
    with open(os.path.join(directory, "alphabet"), "w") as f:
        f.write("\t".join(f"S{j}" for j in range(species)) + "\n")


# ---------------------------------------------------------------------------------------------------
# Mass-action right-hand side and analytic Jacobian, vectorised
# ---------------------------------------------------------------------------------------------------
class MassAction:
    def __init__(self, model):
        A, B, k = model.A, model.B, model.k
        m, n = A.shape
        self.n = n
        self.k = k
        # Reactants padded to P slots per reaction; empty slots point at an extra state entry fixed
        # to 1 with exponent 0, so that rates = k * prod_p x[R[:, p]] ** E[:, p] needs no masking.
        counts = (A > 0).sum(axis=1)
        P = max(1, int(counts.max()) if m else 1)
        R = np.full((m, P), n, dtype=np.int64)
        E = np.zeros((m, P), dtype=np.int64)
        for r in range(m):
            cols = np.nonzero(A[r])[0]
            R[r, : cols.size] = cols
            E[r, : cols.size] = A[r, cols]
        self.R, self.E, self.P = R, E, P
        self.Ef = E.astype(float)
        S = sp.csr_matrix(B - A)  # net stoichiometry, M x N
        self.ST = S.T.tocsr()     # dX = S^T rates
        self._x = np.ones(n + 1)

        # J = S^T D with D[r, R[r, p]] = d rate_r / d x_R[r,p]. J's pattern is fixed, so build once a
        # sparse map from the M*P partials to J's stored entries: J.data = Map @ partials.
        real = R < n
        d_rows = np.repeat(np.arange(m), P)[real.ravel()]
        d_cols = R.ravel()[real.ravel()]
        slots = np.flatnonzero(real.ravel())
        D_pattern = sp.csr_matrix((np.ones(slots.size), (d_rows, d_cols)), shape=(m, n))
        J_pattern = (abs(self.ST) @ D_pattern).tocsc()
        J_pattern.sort_indices()
        self.J = J_pattern.copy()
        # Position of (i, j) in J's CSC data.
        lookup = {}
        for j in range(n):
            for q in range(J_pattern.indptr[j], J_pattern.indptr[j + 1]):
                lookup[(J_pattern.indices[q], j)] = q
        map_rows, map_cols, map_vals = [], [], []
        Scsr = S.tocsr()
        for slot, r, j in zip(slots, d_rows, d_cols):
            for q in range(Scsr.indptr[r], Scsr.indptr[r + 1]):
                i = Scsr.indices[q]
                map_rows.append(lookup[(i, j)])
                map_cols.append(slot)
                map_vals.append(Scsr.data[q])
        self.Map = sp.csr_matrix((map_vals, (map_rows, map_cols)), shape=(J_pattern.nnz, m * P))

    def rates(self, x):
        xe = self._x
        xe[: self.n] = x
        return self.k * np.prod(xe[self.R] ** self.E, axis=1)

    def rhs(self, x):
        return self.ST @ self.rates(x)

    def jacobian_sparse(self, x):
        xe = self._x
        xe[: self.n] = x
        vals = xe[self.R] ** self.E                                  # M x P factors
        dvals = self.Ef * xe[self.R] ** np.maximum(self.E - 1, 0)    # d factor / dx
        partials = np.empty_like(vals)
        for p in range(self.P):
            others = np.prod(np.delete(vals, p, axis=1), axis=1) if self.P > 1 else 1.0
            partials[:, p] = self.k * dvals[:, p] * others
        self.J.data = self.Map @ partials.ravel()
        return self.J

    def jacobian_dense(self, x):
        return self.jacobian_sparse(x).toarray()


def check_jacobian(system, x, h=1e-4):
    """Largest deviation of the analytic Jacobian from central differences, relative to the largest
    Jacobian entry (self-test). Mass action of order <= 2 is quadratic, so central differences are
    exact up to rounding (~1e-12 here); an indexing mistake shows up as O(1)."""
    J = system.jacobian_dense(x)
    worst = 0.0
    for j in range(system.n):
        e = np.zeros(system.n)
        e[j] = h
        fd = (system.rhs(x + e) - system.rhs(x - e)) / (2 * h)
        worst = max(worst, float(np.max(np.abs(J[:, j] - fd))))
    return worst / max(float(np.max(np.abs(J))), 1e-300)


# ---------------------------------------------------------------------------------------------------
# Integration and timing
# ---------------------------------------------------------------------------------------------------
def integrate(system, model, method, rtol, atol, mxstep, jacobian):
    # Both integrators need the initial time as their first output time; a t_vector that does not start
    # at 0 gets it prepended and the extra row dropped.
    prepend = model.times[0] > 0.0
    t = np.concatenate(([0.0], model.times)) if prepend else model.times
    if method == "odeint":
        y, info = odeint(lambda x, _t: system.rhs(x), model.x0, t,
                         Dfun=(lambda x, _t: system.jacobian_dense(x)) if jacobian else None,
                         rtol=rtol, atol=atol, mxstep=mxstep, full_output=True)
        if info["message"] != "Integration successful.":
            raise RuntimeError(f"odeint failed: {info['message']}")
        nsteps = int(info["nst"][-1])
    else:
        # solve_ivp's LSODA takes one step per call, so no mxstep applies here.
        sol = solve_ivp(lambda _t, x: system.rhs(x), (0.0, float(t[-1])), model.x0, method="LSODA",
                        t_eval=t, rtol=rtol, atol=atol,
                        jac=(lambda _t, x: system.jacobian_dense(x)) if jacobian else None)
        if not sol.success:
            raise RuntimeError(f"solve_ivp(LSODA) failed: {sol.message}")
        y = sol.y.T
        nsteps = int(sol.nfev)  # solve_ivp does not report steps; report evaluations instead
    return (y[1:] if prepend else y), nsteps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="model folder (LASSIE/cupSODA format)")
    parser.add_argument("--method", choices=["odeint", "LSODA"], default="odeint",
                        help="odeint (default, as in the paper) or solve_ivp(method='LSODA')")
    parser.add_argument("--rtol", type=float, default=1e-6)
    parser.add_argument("--atol", type=float, default=1e-12)
    parser.add_argument("--mxstep", type=int, default=10000, help="odeint's maximum internal steps per output")
    parser.add_argument("--no-jacobian", action="store_true",
                        help="let LSODA form its Jacobian by finite differences instead of the analytic one")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs after one untimed warm-up")
    parser.add_argument("--csv", help="write the trajectory: time, then one column per species")
    parser.add_argument("--check-jacobian", action="store_true",
                        help="compare the analytic Jacobian with central differences at x0 and report it")
    gen = parser.add_argument_group("synthetic models (the paper's method)")
    gen.add_argument("--generate", type=int, metavar="N", help="write a random model with N species first")
    gen.add_argument("--reactions", type=int, help="number of reactions (default: N)")
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--samples", type=int, default=10, help="sampling times, evenly spaced up to --t-max")
    gen.add_argument("--t-max", type=float, default=50.0)
    gen.add_argument("--generate-only", action="store_true")
    args = parser.parse_args(argv)

    if args.generate:
        generate_model(args.model, args.generate, args.reactions or args.generate, args.seed,
                       args.samples, args.t_max)
        if args.generate_only:
            return 0
    try:
        model = read_model(args.model)
    except ModelError as e:
        print(f"lsoda_reference: {args.model}: {e}", file=sys.stderr)
        return 2
    system = MassAction(model)
    jacobian = not args.no_jacobian

    y, nsteps = integrate(system, model, args.method, args.rtol, args.atol, args.mxstep, jacobian)  # warm-up
    runs = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        y, nsteps = integrate(system, model, args.method, args.rtol, args.atol, args.mxstep, jacobian)
        runs.append(time.perf_counter() - start)

    if args.csv:
        with open(args.csv, "w") as f:
            f.write(",".join(["time"] + model.species) + "\n")
            for t, row in zip(model.times, y):
                f.write(",".join(f"{v:.17g}" for v in (t, *row)) + "\n")

    result = {
        "model": model.name,
        "species": int(model.A.shape[1]),
        "reactions": int(model.A.shape[0]),
        "samples": int(model.times.size),
        "method": "scipy.integrate.odeint (LSODA)" if args.method == "odeint" else "solve_ivp(LSODA)",
        "jacobian": "analytic" if jacobian else "finite differences",
        "rtol": args.rtol,
        "atol": args.atol,
        "mxstep": args.mxstep if args.method == "odeint" else None,
        "steps" if args.method == "odeint" else "rhs_evaluations": nsteps,
        "median_s": statistics.median(runs) if runs else None,
        "runs": runs,
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
    }
    if args.check_jacobian:
        result["jacobian_max_rel_error"] = check_jacobian(system, model.x0 + 0.1)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
