"""morula.Proliferation against `morula proliferation`: the same configuration gives the same run, bit for bit."""
import filecmp
import json

import numpy as np
import pytest

import morula
from conftest import run_app

needs_hdf5 = pytest.mark.skipif(not morula.build_info()["hdf5"], reason="checkpoints need HDF5")


@needs_hdf5
@pytest.mark.parametrize("precision", ["double", "float"])
def test_same_run_as_the_command_bit_for_bit(app, data, tmp_path, precision):
    # proliferation_small: 512 cells on a lattice, touching, that all divide within the 10 steps (the
    # dense end: each division puts two cells where one was), re-sorted every second step.
    config = data / "proliferation_small.json"
    run_app(app, "proliferation", "--config", config, "--precision", precision, "--output", tmp_path / "cli.json",
            "--checkpoint", tmp_path / "cli.ckpt.h5", "--no-progress")
    model = morula.Proliferation(config, precision=precision)
    assert model.precision == precision and model.agents == 512
    # Untimed steps here, timed ones in the command: one path per step, so the same reports.
    reports = [model.step() for _ in range(model.steps)]
    rows = json.loads((tmp_path / "cli.json").read_text())["steps"]
    assert [(r["divisions"], r["interacting_pairs"], r["sorted"]) for r in reports] == \
        [(r["divisions"], r["interacting_pairs"], r["sorted"]) for r in rows]
    assert model.agents == 1024 and model.divisions == 512
    model.checkpoint(str(tmp_path / "python.ckpt.h5"))
    assert filecmp.cmp(tmp_path / "cli.ckpt.h5", tmp_path / "python.ckpt.h5", shallow=False)

    # The command's final state, loaded into a fresh model: every array equal.
    loaded = morula.Proliferation(config, precision=precision)
    loaded.restart(str(tmp_path / "cli.ckpt.h5"))
    assert loaded.steps_done == 10 and loaded.agents == 1024
    for name in ("positions", "diameters", "ids"):
        assert np.array_equal(getattr(model, name).to_host(), getattr(loaded, name).to_host()), name


def test_static_agents_meet_the_asked_neighbour_count(app, data, tmp_path):
    # Benchmark B, float: 20000 agents locked at random positions with 27 neighbours on average.
    config = data / "proliferation_static_small.json"
    run_app(app, "proliferation", "--config", config, "--output", tmp_path / "cli.json", "--no-progress")
    model = morula.Proliferation(config)
    x0, ids0 = model.positions.to_host(), model.ids.to_host()
    reports = [model.step() for _ in range(model.steps)]
    rows = json.loads((tmp_path / "cli.json").read_text())["steps"]
    assert [r["interacting_pairs"] for r in reports] == [r["interacting_pairs"] for r in rows]
    assert 26.5 < reports[-1]["interacting_pairs"] / model.agents < 27.5
    # Locked (max_displacement 0): the same positions, in another order (the agents are re-sorted).
    x1, ids1 = model.positions.to_host(), model.ids.to_host()
    assert not np.array_equal(ids1, ids0)
    assert np.array_equal(x1[np.argsort(ids1)], x0[np.argsort(ids0)])
    assert model.divisions == 0


def test_steps_one_at_a_time_equal_one_advance():
    config = dict(scenario="division", cells_per_axis=4, growth_rate=200000, steps=12, sort_every=3)
    a, b = morula.Proliferation(config), morula.Proliferation(config)
    total = a.advance(12)
    reports = [b.step() for _ in range(12)]
    assert [r["step"] for r in reports] == list(range(12))
    assert sum(r["divisions"] for r in reports) == total["divisions"] == a.divisions == b.divisions > 0
    for name in ("positions", "diameters", "ids"):
        assert np.array_equal(getattr(a, name).to_host(), getattr(b, name).to_host()), name


def test_divisions_lose_no_cell_and_give_unique_ids():
    model = morula.Proliferation(scenario="division", cells_per_axis=6, growth_rate=200000, sort_every=1)
    model.advance(15)
    ids = model.ids.to_host()
    assert model.agents == 216 + model.divisions and model.divisions >= 216
    assert len(ids) == model.agents and len(np.unique(ids)) == len(ids)
    assert ids.min() == 0 and ids.max() == model.next_id - 1  # every id handed out is still there
    x = model.positions.to_host()
    assert x.shape == (model.agents, 3) and np.isfinite(x).all()
    d = model.diameters.to_host()
    assert d.shape == (model.agents,) and (d > 0).all()


def test_arrays_go_stale_and_timed_steps_fill_the_times():
    model = morula.Proliferation(scenario="division", cells_per_axis=3, growth_rate=200000)
    x = model.positions
    model.step(timed=True)
    with pytest.raises(morula.StaleArrayError):
        x.to_host()
    times = model.times()
    assert times["steps"] == 1 and times["total"] > 0 and len(times["phases"]) > 1
    model.reset_times()
    assert model.times()["steps"] == 0


def test_bad_configuration_names_the_key():
    with pytest.raises(ValueError, match=r"key 'scenario' = \"wrong\" is not one of"):
        morula.Proliferation(scenario="wrong")
    with pytest.raises(ValueError, match=r"cells_per_axis"):
        morula.Proliferation(cells_per_axis=0)
    with pytest.raises(ValueError, match=r"n = -1"):
        morula.Proliferation(cells_per_axis=2).advance(-1)
