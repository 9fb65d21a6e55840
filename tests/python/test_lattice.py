"""morula.Lattice against `morula lattice`: the same configuration gives the same lattice, bit for bit."""
import csv
import json

import numpy as np
import pytest

import morula
from conftest import run_app

needs_hdf5 = pytest.mark.skipif(not morula.build_info()["hdf5"], reason="checkpoints need HDF5")

# The crowded end: 80% of the slots taken (capacity 2 and 4), so moves are refused and the overflow
# list is used every step; capacity 8 with species codes (its 3-bit slots hold no tracer ids).
CROWDED = {
    "capacity 2, 80% full": {"size": [12, 12, 12], "capacity": 2, "steps": 40, "sample_every": 10,
                             "species": [{"name": "A", "count": 2000, "diffusion_nm2_per_us": 150},
                                         {"name": "B", "count": 765, "diffusion_nm2_per_us": 20}]},
    "capacity 4, 80% full, reflecting": {"size": [10, 12, 9], "capacity": 4, "steps": 30, "sample_every": 10,
                                         "boundary": ["reflecting", "periodic", "reflecting"],
                                         "species": [{"name": "A", "count": 3456, "tracers": 120,
                                                      "diffusion_nm2_per_us": 150}]},
    "capacity 8, fused": {"size": [8, 8, 8], "capacity": 8, "scheme": "fused", "steps": 30, "sample_every": 10,
                          "tracers": False,
                          "species": [{"name": "A", "count": 3000, "diffusion_nm2_per_us": 150}]},
}


def config_file(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@needs_hdf5
@pytest.mark.parametrize("case", ["small, obstacles", *CROWDED])
def test_same_run_as_the_command_bit_for_bit(app, data, tmp_path, case):
    if case in CROWDED:
        config = config_file(tmp_path, "config.json", dict(CROWDED[case], progress=False))
    else:
        config = data / "lattice_small.json"  # 16^3, 20% obstacles, 300 tracers
    run_app(app, "lattice", "--config", config, "--output", tmp_path / "cli", "--checkpoint", tmp_path / "cli.h5",
            cwd=tmp_path)
    model = morula.Lattice(config)
    model.advance(model.steps)
    # The command's final state, loaded into a fresh model: the same sites and displacements.
    loaded = morula.Lattice(config)
    loaded.restart(str(tmp_path / "cli.h5"))
    assert loaded.steps_done == model.steps_done == model.steps
    assert np.array_equal(model.sites(), loaded.sites())
    if model.tracking:
        assert np.array_equal(model.displacements(), loaded.displacements())
    assert model.overflows == loaded.overflows
    counts = model.code_counts()
    assert counts == loaded.code_counts() and sum(counts) == model.particles  # no particle lost
    if model.tracking:
        # The command's last MSD rows (printed to 6 digits) against the model's.
        rows = list(csv.DictReader(open(tmp_path / "cli_msd.csv")))
        last = {r["species"]: float(r["msd_nm2"]) for r in rows[-len(model.species):]}
        for i, name in enumerate(model.species):
            m = model.msd(i)
            if m["tracers"]:
                assert m["total"] * model.spacing_nm ** 2 == pytest.approx(last[name], rel=1e-5)


def test_steps_one_at_a_time_equal_one_advance():
    config = dict(CROWDED["capacity 2, 80% full"], steps=12)
    a, b = morula.Lattice(config), morula.Lattice(config)
    total = a.advance(12)
    reports = [b.step() for _ in range(12)]
    assert [r["step"] for r in reports] == list(range(12))
    assert sum(r["overflow_entries"] for r in reports) == total["overflow_entries"]
    assert np.array_equal(a.sites(), b.sites())
    assert np.array_equal(a.displacements(), b.displacements())


@pytest.mark.parametrize("case", list(CROWDED))
def test_crowded_lattices_keep_every_particle(case):
    model = morula.Lattice(CROWDED[case])
    n = model.particles
    model.advance(25)
    occupancy = model.occupancy()
    assert occupancy.shape == tuple(reversed(model.shape))
    assert occupancy.sum() == n == sum(model.code_counts())
    assert occupancy.max() <= model.capacity
    assert model.overflows > 0  # crowded: moves into full sites went through the overflow list


def test_free_diffusion_msd_matches_the_coefficient():
    # The command's default run: two species of tracers, 100 and 10 nm^2/us, 4000 particles on 64^3 sites.
    model = morula.Lattice(steps=400)
    assert model.tracking and model.species == ["fast", "slow"]
    model.advance(400)
    t_us = 400 * model.time_step_ns * 1e-3
    for i, d0 in enumerate([100.0, 10.0]):
        m = model.msd(i)
        assert m["tracers"] == 2000
        d = m["total"] * model.spacing_nm ** 2 / (6 * t_us)
        assert d == pytest.approx(d0, rel=0.08)  # 2000 tracers: the estimate's spread is about 3%
        x, y, z = m["per_axis"]
        assert max(x, y, z) / min(x, y, z) < 1.25  # isotropic


def test_a_checkpoint_from_python_resumes_the_same_run(tmp_path):
    if not morula.build_info()["hdf5"]:
        pytest.skip("checkpoints need HDF5")
    config = dict(CROWDED["capacity 4, 80% full, reflecting"])
    a = morula.Lattice(config)
    a.advance(10)
    a.checkpoint(str(tmp_path / "a.h5"))
    a.advance(10)
    b = morula.Lattice(config)
    b.restart(str(tmp_path / "a.h5"))
    b.advance(10)
    assert np.array_equal(a.sites(), b.sites()) and np.array_equal(a.displacements(), b.displacements())


def test_bad_configuration_names_the_key():
    with pytest.raises(ValueError, match=r"key 'capacity' = 3 must be 2, 4 or 8"):
        morula.Lattice(capacity=3)
    with pytest.raises(ValueError, match=r"diffusion_nm2_per_us.*larger than the lattice allows"):
        morula.Lattice(species=[{"name": "A", "count": 10, "diffusion_nm2_per_us": 1e6}])
    with pytest.raises(ValueError, match=r"species = 2; expected 0 to 1"):
        two = [{"name": n, "count": 10, "diffusion_nm2_per_us": 10} for n in "AB"]
        morula.Lattice(size=[8, 8, 8], steps=1, species=two).msd(2)
    with pytest.raises(ValueError, match=r"4000 particles but only 1024 free slots"):
        morula.Lattice(size=[8, 8, 8])  # the default species on too small a lattice
    # 4096^3 sites need 893 GB: refused with the figures before anything is allocated
    with pytest.raises(ValueError, match=r"key 'size' = \[4096, 4096, 4096\]: 68719476736 sites .* need at least "
                                         r"893 GB .*; use a smaller lattice"):
        morula.Lattice(size=[4096, 4096, 4096])
