#!/usr/bin/env python3
"""Tumour growth and angiogenesis (Worecki and Wcisło 2012), driven from Python.

    PYTHONPATH=build/release/python python3 examples/python/angiogenesis.py --hours 60 --out angiogenesis.png

A small tumour grows beside a vessel. After the angiogenic switch (20 h here) hypoxic cells' TAF makes
the vessel sprout towards them. The script records the cell states and the vessel length every few
hours and draws them, with a projection of the cells (coloured by oxygen) and the vessel tubes.
Snapshots for ParaView are one call away: ``model.snapshot("out/angio")`` writes the command's files.
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import morula  # noqa: E402

STATES = ("new", "mature", "hypoxic", "dead")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hours", type=float, default=60)
    p.add_argument("--every", type=int, default=50, help="steps between records")
    p.add_argument("--precision", default="double")
    p.add_argument("--out", default="angiogenesis.png")
    a = p.parse_args()

    model = morula.Angiogenesis(box=[150, 150, 150], tumour_centre=[90, 75, 75], tumour_radius=15,
                                vessels=[dict(points=[69, 45, 75, 69, 105, 75], radius=5)], oxygen_uptake=5,
                                sweeps=30, sprouting=True, angiogenic_switch=20, precision=a.precision)
    dt = 0.1  # hours, the model's default time step
    steps = int(round(a.hours / dt))
    hours, states, length = [], [], []

    def record():
        s = model.cell_state.to_host()  # host copies on any build
        ends = model.tube_end_b.to_host() - model.tube_end_a.to_host()
        hours.append(model.time)
        states.append([np.count_nonzero(s == k) for k in range(len(STATES))])
        length.append(np.linalg.norm(ends, axis=1).sum())

    record()
    while model.steps_done < steps:
        model.advance(min(a.every, steps - model.steps_done))
        record()
    print(f"{model.time:.1f} h: {model.cells} cells, {model.tubes} tubes, {model.divisions} divisions, "
          f"{model.sprouts} sprouts, {model.anastomoses} anastomoses")

    fig, (timeline, picture) = plt.subplots(1, 2, figsize=(12, 4.8))
    states = np.array(states)
    for k, name in enumerate(STATES):
        timeline.plot(hours, states[:, k], label=f"{name} cells")
    timeline.set_xlabel("time (h)")
    timeline.set_ylabel("cells")
    vessel = timeline.twinx()
    vessel.plot(hours, length, "k--", label="vessel length")
    vessel.set_ylabel("vessel length (um)")
    timeline.axvline(20, color="grey", lw=0.5)
    timeline.legend(loc="upper left", fontsize=8)
    x, o = model.cell_positions.to_host(), model.cell_oxygen.to_host()
    s = picture.scatter(x[:, 0], x[:, 1], c=o, s=10, cmap="viridis")
    fig.colorbar(s, ax=picture, label="oxygen")
    for p0, p1 in zip(model.tube_end_a.to_host(), model.tube_end_b.to_host()):
        picture.plot([p0[0], p1[0]], [p0[1], p1[1]], "r-", lw=2)
    picture.set_xlim(0, model.box[0])
    picture.set_ylim(0, model.box[1])
    picture.set_aspect("equal")
    picture.set_title(f"t = {model.time:.0f} h, projected on z (tubes red)")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120, bbox_inches="tight")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
