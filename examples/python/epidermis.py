#!/usr/bin/env python3
"""The 3D epidermis model from Python: run it, look at it, write a picture.

    PYTHONPATH=build/release/python python3 examples/python/epidermis.py --steps 6000 --out epidermis.png

The configuration is the one `morula epidermis --config examples/epidermis.json` runs (16 cells that grow,
divide and stratify); keyword arguments override its keys. Elements are drawn from the side (x, z),
coloured by their cell's state: basal cells on the membrane, suprabasal cells pushed up into layers.
"""
import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import morula  # noqa: E402

here = pathlib.Path(__file__).resolve().parent


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default=str(here.parent / "epidermis.json"))
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--chunk", type=int, default=1000, help="steps between progress lines")
    p.add_argument("--out", default="epidermis.png")
    a = p.parse_args()

    model = morula.Epidermis(a.config)
    print(f"{model.cells} cells, {model.elements} elements, box {model.box[0]:.2f} x {model.box[1]:.2f}, "
          f"{model.precision}")
    cells = [model.cells]
    while model.steps_done < a.steps:
        model.advance(min(a.chunk, a.steps - model.steps_done))
        cells.append(model.cells)
        print(f"step {model.steps_done}: {model.cells} cells, {model.divisions} divisions")

    # Host copies (to_host() works on any build; on a CPU build np.asarray(model.positions) reads the
    # model's memory without a copy, valid until the next step).
    x = model.positions.to_host()
    owner = model.element_cell.to_host()
    state = model.cell_states().to_host()
    fig, (side, growth) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 1]})
    colours = np.where(state[owner] == 0, "tab:blue", "tab:orange")
    side.scatter(x[:, 0], x[:, 2], s=4, c=colours)
    side.set_xlabel("x")
    side.set_ylabel("height z")
    side.set_aspect("equal")
    side.set_title(f"step {model.steps_done}: {model.cells} cells (blue basal, orange suprabasal)")
    growth.plot(np.arange(len(cells)) * a.chunk, cells, marker="o")
    growth.set_xlabel("step")
    growth.set_ylabel("cells")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
