"""Minimal reader of Morula's mass-action text format (docs/models/ode-formats.md, section 1) for the
work-precision study: enough for the models in models/ (reactions, init, sample_times as a list or
linspace). Gives the right-hand side and the analytic Jacobian for SciPy, and writes a LASSIE folder for
morula_cvode_benchmark (which reads only that format)."""
import os
import re

import numpy as np

_TERM = re.compile(r"^\s*(\d*)\s*([A-Za-z_][A-Za-z0-9_]*)\s*$")


class Model:
    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.species = []
        self.reactions = []  # (reactants {i: a}, products {i: b}, k)
        init = {}
        self.sample_times = None
        for raw in open(path):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("init "):
                name, value = line[5:].split("=")
                init[name.strip()] = float(value)
            elif line.startswith("sample_times"):
                value = line.split("=", 1)[1].strip()
                m = re.match(r"linspace\(([^,]+),([^,]+),([^)]+)\)", value)
                if m:
                    a, b, n = float(m.group(1)), float(m.group(2)), int(m.group(3))
                    t = [a + (b - a) * i / (n - 1) for i in range(n)]
                    t[-1] = b
                    self.sample_times = np.array(t)
                else:
                    self.sample_times = np.array([float(x) for x in value.split(",")])
            elif "->" in line:
                body, k = line.rsplit(",", 1)
                k = float(k.split("=")[1])
                if ":" in body:
                    body = body.split(":", 1)[1]
                left, right = body.split("->")
                self.reactions.append((self._side(left), self._side(right), k))
            else:
                raise ValueError(f"{path}: cannot read {raw!r}")
        self.y0 = np.array([init.get(s, 0.0) for s in self.species])
        n, m = len(self.species), len(self.reactions)
        self.order = np.zeros((m, n))
        self.change = np.zeros((n, m))
        self.k = np.array([r[2] for r in self.reactions])
        for r, (a, b, _) in enumerate(self.reactions):
            for i, c in a.items():
                self.order[r, i] = c
                self.change[i, r] -= c
            for i, c in b.items():
                self.change[i, r] += c

    def _side(self, text):
        out = {}
        text = text.strip()
        if not text:
            return out
        for term in text.split("+"):
            m = _TERM.match(term)
            coefficient = int(m.group(1)) if m.group(1) else 1
            name = m.group(2)
            if name not in self.species:
                self.species.append(name)
            out[self.species.index(name)] = coefficient
        return out

    def rates(self, y):
        return self.k * np.prod(np.power(y[None, :], self.order), axis=1)

    def rhs(self, t, y):
        return self.change @ self.rates(y)

    def jac(self, t, y):
        # d rate_r / d y_q = k_r a_rq y_q^(a_rq - 1) prod_{p != q} y_p^a_rp, one column per species
        powers = np.power(y[None, :], self.order)  # m x n
        d = np.zeros_like(self.order)
        for q in range(len(self.species)):
            a = self.order[:, q]
            if not a.any():
                continue
            others = np.prod(np.delete(powers, q, axis=1), axis=1)
            own = np.where(a > 0, a * np.power(y[q], np.maximum(a - 1, 0)), 0.0)
            d[:, q] = self.k * own * others
        return self.change @ d

    def write_lassie_folder(self, directory):
        os.makedirs(directory, exist_ok=True)
        n = len(self.species)

        def write(name, text):
            with open(os.path.join(directory, name), "w") as f:
                f.write(text)

        rows_l, rows_r = [], []
        for a, b, _ in self.reactions:
            rows_l.append("\t".join(str(a.get(i, 0)) for i in range(n)))
            rows_r.append("\t".join(str(b.get(i, 0)) for i in range(n)))
        write("left_side", "\n".join(rows_l) + "\n")
        write("right_side", "\n".join(rows_r) + "\n")
        write("c_vector", "\n".join(repr(float(k)) for k in self.k) + "\n")
        write("M_0", "\t".join(repr(float(v)) for v in self.y0) + "\n")
        write("alphabet", "\t".join(self.species) + "\n")
        write("t_vector", "\n".join(repr(float(t)) for t in self.sample_times) + "\n")
