"""Shared fixtures: the `morula` program and the apps' test data, which the comparisons with the command line use."""
import os
import pathlib
import subprocess

import pytest


@pytest.fixture(scope="session")
def app():
    path = os.environ.get("MORULA_APP")
    if not path or not os.path.exists(path):
        pytest.skip("MORULA_APP does not name the morula program")
    return path


@pytest.fixture(scope="session")
def data():
    return pathlib.Path(os.environ.get("MORULA_TEST_DATA", pathlib.Path(__file__).parents[1] / "apps" / "data"))


def run_app(app, *args, cwd=None):
    """Runs `morula args...`; returns its standard output, failing the test on a nonzero exit."""
    done = subprocess.run([app, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"morula {' '.join(map(str, args))}: exit {done.returncode}\n{done.stdout}{done.stderr}"
    return done.stdout
