"""morula.Epidermis against `morula epidermis`: the same configuration gives the same run, bit for bit."""
import filecmp

import numpy as np
import pytest

import morula
from conftest import run_app

needs_hdf5 = pytest.mark.skipif(not morula.build_info()["hdf5"], reason="checkpoints need HDF5")


@needs_hdf5
@pytest.mark.parametrize("precision", ["double", "float"])
def test_same_run_as_the_command_bit_for_bit(app, data, tmp_path, precision):
    # epidermis_small: 9 cells that grow every 100 steps and divide at 22 elements, so the 300 steps
    # include growth, divisions and the re-sorting they cause (the dense end: cells pushed into layers).
    config = data / "epidermis_small.json"
    run_app(app, "epidermis", "--config", config, "--precision", precision, "--output", tmp_path / "cli",
            "--checkpoint", tmp_path / "cli.ckpt.h5", "--no-progress")
    model = morula.Epidermis(config, precision=precision)
    assert model.precision == precision
    report = model.advance(model.steps)
    assert model.steps_done == 300
    assert model.divisions > 0 and report["divisions"] == model.divisions
    # The command computes the cells' centres for its last frame, and the checkpoint holds them.
    model.update_geometry()
    model.checkpoint(str(tmp_path / "python.ckpt.h5"))
    assert filecmp.cmp(tmp_path / "cli.ckpt.h5", tmp_path / "python.ckpt.h5", shallow=False)

    # The command's final state, loaded into a fresh model: every array equal.
    loaded = morula.Epidermis(config, precision=precision)
    loaded.restart(str(tmp_path / "cli.ckpt.h5"))
    assert loaded.steps_done == 300 and loaded.cells == model.cells
    for name in ("positions", "element_cell", "element_type", "cell_offset", "cell_count", "species", "centres"):
        assert np.array_equal(getattr(model, name).to_host(), getattr(loaded, name).to_host()), name


def test_steps_one_at_a_time_equal_one_advance():
    config = dict(cells=4, boundary="none", steps=120, growth_interval=40, division_elements=22, model="full")
    a, b = morula.Epidermis(config), morula.Epidermis(config)
    a.advance(120)
    reports = [b.step() for _ in range(120)]
    assert [r["step"] for r in reports] == list(range(120))
    assert sum(r["divisions"] for r in reports) == a.divisions == b.divisions
    assert np.array_equal(a.positions.to_host(), b.positions.to_host())


def test_timed_steps_fill_the_phase_times():
    model = morula.Epidermis(cells=4, boundary="none", model="gene_network")
    model.step(timed=True)
    model.step(timed=True)
    times = model.times()
    assert times["steps"] == 2 and times["total"] > 0
    assert all(seconds >= 0 for seconds in times["phases"].values()) and len(times["phases"]) > 1
    model.reset_times()
    assert model.times()["steps"] == 0


def test_state_arrays_have_the_model_shapes():
    model = morula.Epidermis(cells=9, elements_per_cell=20)
    assert model.positions.shape == (180, 3) and model.cells == 9 and model.elements == 180
    cells = model.element_cell.to_host()
    assert np.array_equal(np.bincount(cells), np.full(9, 20))
    offsets, counts = model.cell_offset.to_host(), model.cell_count.to_host()
    assert np.array_equal(offsets, np.arange(9) * 20) and np.array_equal(counts, np.full(9, 20))
    assert model.species.shape == (9, 6)
    model.update_geometry()
    centres = model.centres.to_host()
    x = model.positions.to_host()
    for c in range(9):
        assert np.allclose(centres[c], x[cells == c].mean(axis=0), rtol=0, atol=1e-12)
    states = model.cell_states().to_host()
    assert states.shape == (9,) and set(np.unique(states)) <= {0, 1}


def test_advance_rejects_negative_counts():
    with pytest.raises(ValueError, match="n = -1"):
        morula.Epidermis(cells=1, boundary="none").advance(-1)
