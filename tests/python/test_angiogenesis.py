"""morula.Angiogenesis against `morula angiogenesis`: the same configuration gives the same run, bit for bit."""
import csv
import filecmp

import numpy as np
import pytest

import morula
from conftest import run_app

needs_hdf5 = pytest.mark.skipif(not morula.build_info()["hdf5"], reason="checkpoints need HDF5")

CELL_ARRAYS = ("cell_positions", "cell_radius", "cell_age", "cell_oxygen", "cell_taf", "cell_pressure", "cell_state",
               "cell_id")
TUBE_ARRAYS = ("tube_end_a", "tube_end_b", "tube_radius_a", "tube_radius_b", "tube_flow", "tube_blood_oxygen",
               "tube_taf", "tube_parent", "tube_flags", "tube_id")


@needs_hdf5
@pytest.mark.parametrize("precision,stepping", [("double", "advance"), ("float", "step")])
def test_same_run_as_the_command_bit_for_bit(app, data, tmp_path, precision, stepping):
    # angio_small: a tumour beside a vessel; the angiogenic switch at 20 h (step 200 of 600) starts
    # sprouting, the tumour grows and divides. advance() crosses the switch step by step, step() each time.
    config = data / "angio_small.json"
    run_app(app, "angiogenesis", "--config", config, "--precision", precision, "--output", tmp_path / "cli",
            "--checkpoint", tmp_path / "cli.ckpt.h5", "--no-progress")
    model = morula.Angiogenesis(config, precision=precision)
    assert model.precision == precision and not model.sprouting and model.steps == 600
    if stepping == "advance":
        total = model.advance(model.steps)
        assert total["step"] == 599
    else:
        reports = [model.step() for _ in range(model.steps)]
        assert [r["step"] for r in reports] == list(range(600))
        total = {key: sum(r[key] for r in reports) for key in ("divisions", "sprouts", "anastomoses")}
    assert model.sprouting and model.steps_done == 600 and model.time == pytest.approx(60)
    assert total["divisions"] == model.divisions > 0 and total["sprouts"] == model.sprouts > 0
    rows = list(csv.DictReader(open(tmp_path / "cli.csv")))
    last = rows[-1]
    assert int(last["step"]) == 600
    assert (int(last["cells"]), int(last["tubes"]), int(last["sprouts"]), int(last["anastomoses"])) == \
        (model.cells, model.tubes, model.sprouts, model.anastomoses)
    model.checkpoint(str(tmp_path / "python.ckpt.h5"))
    assert filecmp.cmp(tmp_path / "cli.ckpt.h5", tmp_path / "python.ckpt.h5", shallow=False)

    # The command's final state, loaded into a fresh model: every array equal, and the switch already on.
    loaded = morula.Angiogenesis(config, precision=precision)
    loaded.restart(str(tmp_path / "cli.ckpt.h5"))
    assert loaded.steps_done == 600 and loaded.sprouting and loaded.cells == model.cells
    for name in CELL_ARRAYS + TUBE_ARRAYS:
        assert np.array_equal(getattr(model, name).to_host(), getattr(loaded, name).to_host()), name


def test_restart_before_the_switch_continues_as_the_uninterrupted_run(tmp_path):
    if not morula.build_info()["hdf5"]:
        pytest.skip("checkpoints need HDF5")
    config = dict(box=[120, 120, 120], tumour_centre=[70, 60, 60], tumour_radius=12,
                  vessels=[dict(points=[50, 30, 60, 50, 90, 60])], sprouting=True, angiogenic_switch=3, steps=60)
    whole = morula.Angiogenesis(config)
    whole.advance(60)
    first = morula.Angiogenesis(config)
    first.advance(20)  # 2 h: before the switch
    first.checkpoint(str(tmp_path / "ckpt.h5"))
    second = morula.Angiogenesis(config)
    second.restart(str(tmp_path / "ckpt.h5"))
    assert not second.sprouting
    second.advance(40)
    assert second.sprouting
    for name in CELL_ARRAYS + TUBE_ARRAYS:
        assert np.array_equal(whole.__getattribute__(name).to_host(), second.__getattribute__(name).to_host()), name


def test_state_arrays_have_the_model_shapes_and_go_stale():
    model = morula.Angiogenesis(tumour_radius=15, sprouting=False)
    n, m = model.cells, model.tubes
    assert n > 0 and m == 0  # no vessels in the default configuration
    x = model.cell_positions
    assert x.shape == (n, 3) and x.to_host().dtype == np.float64
    assert model.cell_state.to_host().dtype == np.int32 and model.cell_id.to_host().dtype == np.int64
    assert model.tube_end_a.shape == (0, 3)
    inside = x.to_host()
    assert ((inside >= 0) & (inside <= np.array(model.box))).all()
    assert len(np.unique(model.cell_id.to_host())) == n
    model.step()
    with pytest.raises(morula.StaleArrayError):
        x.to_host()


def test_dead_cells_are_removed_and_no_cell_is_lost():
    # Hypoxic from the start (no vessel, uptake far above supply) and short-lived: cells die and lyse.
    model = morula.Angiogenesis(tumour_radius=20, oxygen_uptake=50, hypoxic_survival=0.5, lysis_rate=500,
                                sprouting=False)
    start = model.cells
    removed = divisions = 0
    for _ in range(10):
        r = model.advance(20)
        removed += r["removed"]
        divisions += r["divisions"]
    assert model.cells == start + divisions - removed
    assert removed > 0
    assert len(np.unique(model.cell_id.to_host())) == model.cells


def test_bad_configuration_names_the_key():
    with pytest.raises(ValueError, match="hypoxia_threshold = 1.5"):
        morula.Angiogenesis(hypoxia_threshold=1.5)
    with pytest.raises(ValueError, match="unknown key 'vessel'"):
        morula.Angiogenesis(vessel=[])
    with pytest.raises(ValueError, match=r"vessels\[0\]: a vessel needs at least two points"):
        morula.Angiogenesis(vessels=[dict(points=[1, 2, 3])])
    with pytest.raises(ValueError, match="reaches outside the box"):
        morula.Angiogenesis(tumour_radius=500)
    with pytest.raises(ValueError, match="n = -1"):
        morula.Angiogenesis(tumour_radius=5).advance(-1)
