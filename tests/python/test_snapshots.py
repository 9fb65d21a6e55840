"""Snapshots from Python are the command's files: every model's frames (HDF5) and index (XDMF) byte for byte."""
import filecmp
import json

import pytest

import morula
from conftest import run_app

pytestmark = pytest.mark.skipif(not morula.build_info()["hdf5"], reason="snapshots need HDF5")


def assert_same_series(cli, python, steps, index=True):
    """The frames <prefix>_<step>.h5 of both series (same prefix name, two folders) and their XDMF index."""
    for folder in (cli, python):
        assert sorted(p.name for p in folder.glob("run_*.h5")) == [f"run_{s:06d}.h5" for s in steps], folder
    for s in steps:
        name = f"run_{s:06d}.h5"
        assert filecmp.cmp(cli / name, python / name, shallow=False), name
    if index:
        assert filecmp.cmp(cli / "run.xmf", python / "run.xmf", shallow=False)


def folders(tmp_path):
    cli, python = tmp_path / "cli", tmp_path / "python"
    cli.mkdir()
    python.mkdir()
    return cli, python


def snapshot_every(model, folder, every, frames):
    """Python's series: a frame now, then one after each of `frames` advances of `every` steps."""
    model.snapshot(str(folder / "run"))
    for _ in range(frames):
        model.advance(every)
        model.snapshot(str(folder / "run"))
    return model


def write_config(path, base, **keys):
    config = json.loads(base.read_text())
    config.update(keys)
    path.write_text(json.dumps(config))
    return path


def test_epidermis(app, data, tmp_path):
    # 9 cells growing and dividing over 300 steps, a frame every 100 (the centres are updated per frame).
    cli, python = folders(tmp_path)
    run_app(app, "epidermis", "--config", data / "epidermis_small.json", "--output", cli / "run", "--no-progress")
    model = snapshot_every(morula.Epidermis(data / "epidermis_small.json"), python, 100, 3)
    assert model.divisions > 0
    assert_same_series(cli, python, [0, 100, 200, 300])


@pytest.mark.parametrize("precision", ["double", "float"])
def test_proliferation(app, data, tmp_path, precision):
    # 512 touching cells that all divide within 10 steps, a frame every 5.
    cli, python = folders(tmp_path)
    config = write_config(tmp_path / "config.json", data / "proliferation_small.json", snapshots=str(cli / "run"),
                          snapshot_every=5, precision=precision, output=str(tmp_path / "cli.json"))
    run_app(app, "proliferation", "--config", config, "--no-progress")
    model = snapshot_every(morula.Proliferation(config), python, 5, 2)
    assert model.divisions == 512
    assert_same_series(cli, python, [0, 5, 10])


def test_lattice(app, data, tmp_path):
    # Obstacles and 300 tracers on 16^3 sites, a frame every 20 of the 60 steps (no XDMF: one dataset).
    cli, python = folders(tmp_path)
    config = write_config(tmp_path / "config.json", data / "lattice_small.json", snapshots=str(cli / "run"),
                          snapshot_every=20, output=str(tmp_path / "cli"))
    run_app(app, "lattice", "--config", config)
    snapshot_every(morula.Lattice(config), python, 20, 3)
    assert_same_series(cli, python, [0, 20, 40, 60], index=False)


def test_angiogenesis(app, data, tmp_path):
    # A tumour beside a vessel, the angiogenic switch at 20 h (step 200), a frame every 200 of 600 steps.
    cli, python = folders(tmp_path)
    run_app(app, "angiogenesis", "--config", data / "angio_small.json", "--output", cli / "run", "--no-progress")
    model = snapshot_every(morula.Angiogenesis(data / "angio_small.json"), python, 200, 3)
    assert model.sprouts > 0
    assert_same_series(cli, python, [0, 200, 400, 600])


def test_a_new_series_replaces_an_old_one_and_a_step_is_written_once(tmp_path):
    model = morula.Proliferation(scenario="division", cells_per_axis=3)
    prefix = str(tmp_path / "run")
    model.snapshot(prefix)
    model.advance(2)
    model.snapshot(prefix)
    assert sorted(p.name for p in tmp_path.glob("run_*.h5")) == ["run_000000.h5", "run_000002.h5"]
    with pytest.raises(ValueError, match="2"):
        model.snapshot(prefix)  # step 2 again
    # Another model starting the series of the same prefix removes the old frames.
    other = morula.Proliferation(scenario="division", cells_per_axis=3)
    other.snapshot(prefix)
    assert sorted(p.name for p in tmp_path.glob("run_*.h5")) == ["run_000000.h5"]
    with pytest.raises(ValueError, match="prefix is empty"):
        other.snapshot("")
    with pytest.raises(OSError):
        other.snapshot(str(tmp_path / "no" / "such" / "folder" / "run"))
