"""The module itself: version, build information, the Kokkos session, errors as Python exceptions."""
import subprocess
import sys

import pytest

import morula
from conftest import run_app


def test_version_is_the_programs(app):
    assert morula.__version__ == run_app(app, "--version").strip().split()[0]


def test_build_info_names_backends_and_packages():
    info = morula.build_info()
    assert info["version"] == morula.__version__
    assert info["backends"], "at least one Kokkos backend"
    assert info["default_execution_space"] in info["backends"]
    for key in ("hdf5", "sbml", "mpi", "kokkos_kernels"):
        assert isinstance(info[key], bool)
    assert morula.__version__ in info["summary"]


def test_initialize_twice_is_harmless():
    morula.initialize()
    morula.initialize()
    assert morula.is_initialized() and not morula.is_finalized()


def test_bad_config_is_value_error_naming_key_and_value():
    with pytest.raises(ValueError, match=r"<dict>.*'cells' = -3"):
        morula.Epidermis({"cells": -3})
    with pytest.raises(ValueError, match=r"unknown key 'cels'"):
        morula.Epidermis(cels=4)
    with pytest.raises(ValueError, match=r"'precision' = \"half\" is not one of"):
        morula.Epidermis(precision="half")


def test_missing_config_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        morula.Epidermis(tmp_path / "no_such_config.json")


def test_broken_json_names_the_file_and_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "cells": 4,\n  "steps": \n}\n')
    with pytest.raises(ValueError, match=r"broken.json': not valid JSON.*line 4"):
        morula.Epidermis(path)


def test_io_failure_is_os_error(tmp_path):
    if not morula.build_info()["hdf5"]:
        pytest.skip("checkpoints need HDF5")
    model = morula.Epidermis(cells=1, elements_per_cell=4, adhesive_elements=1, model="movement", boundary="none")
    with pytest.raises(OSError):
        model.checkpoint(str(tmp_path / "no_such_folder" / "x.h5"))


LIFECYCLE = r"""
import numpy as np, morula
m = morula.Epidermis(cells=1, elements_per_cell=4, adhesive_elements=1, model="movement", boundary="none")
x = m.positions
host = morula.build_info()["default_memory_space"] in ("Host", "HostSpace")
read = np.asarray if host else (lambda a: a.to_host())
held = read(x)                # on a CPU build a numpy array into the model's memory, referenced after finalize
morula.finalize()
morula.finalize()             # twice: harmless
for what, call in [("model", lambda: m.advance(1)), ("array", lambda: read(x)),
                   ("init", lambda: morula.initialize()), ("new model", lambda: morula.Epidermis(cells=1))]:
    try:
        call()
    except RuntimeError as e:
        assert "finalized" in str(e), (what, str(e))
        print("raised", what)
    else:
        raise SystemExit(what + " did not raise")
print(float(held.sum()) == float(held.sum()))  # the leaked allocation is still readable
"""


def test_finalize_once_then_everything_raises():
    done = subprocess.run([sys.executable, "-c", LIFECYCLE], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["raised", "model", "raised", "array", "raised", "init", "raised", "new", "model",
                                   "True"]
