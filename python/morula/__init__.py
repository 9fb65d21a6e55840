"""Morula from Python: the models and kernels of the C++ library, driven from scripts and notebooks.

Kokkos starts on first use (or call ``morula.initialize(["--kokkos-num-threads=8"])`` first) and stops
at interpreter exit (or ``morula.finalize()``); nothing of the module works after that.

Arrays come out without copies as :class:`morula.Array`: numpy reads host memory through it
(``np.asarray(model.positions)``), DLPack consumers read host or device memory (``torch.from_dlpack``,
``cupy.from_dlpack``). An Array raises :class:`morula.StaleArrayError` once its model has stepped or
restarted since it was taken, because the data may have moved. docs/python.md has the whole story.
"""
import atexit as _atexit
import json as _json
import os as _os

from . import _morula
from ._morula import (Array, Box, StaleArrayError, build_info, fence, finalize, initialize, is_finalized,
                      is_initialized, ode)

__version__ = _morula.__version__

__all__ = ["Angiogenesis", "Array", "Box", "StaleArrayError", "Epidermis", "Lattice", "Proliferation", "UniformGrid", "build_info", "fence", "finalize", "initialize",
           "is_finalized", "is_initialized", "ode", "__version__"]

# Kokkos must be finalised before the interpreter tears down the objects that hold its memory.
_atexit.register(_morula.finalize)


def _config_text(config, overrides, what):
    """(JSON text, name for messages) from a configuration file path, a dict, or None, plus keyword overrides."""
    if config is None:
        data, name = {}, "<keywords>"
    elif isinstance(config, dict):
        data, name = dict(config), "<dict>"
    elif isinstance(config, (str, _os.PathLike)):
        path = _os.fspath(config)
        with open(path, encoding="utf-8") as f:  # a missing file raises FileNotFoundError, naming it
            text = f.read()
        if not overrides:
            return text, path  # the library parses it: its errors name the file and line
        try:
            data = _json.loads(text)
        except ValueError:
            return text, path  # let the library report where the JSON is broken
        name = f"{path} (with keyword overrides)"
    else:
        raise TypeError(f"{what}: config must be a path, a dict or None, not {type(config).__name__}")
    if not isinstance(data, dict):
        return _json.dumps(data), name
    data.update(overrides)
    return _json.dumps(data), name


def Epidermis(config=None, **parameters):
    """The 3D epidermis model (subcellular elements, gene network, growth and division).

    ``config`` is the JSON file ``morula epidermis --config`` takes, or a dict of its keys; keyword
    arguments override keys (``Epidermis("epidermis.json", cells=16, precision="float")``). The same
    configuration gives the same run as the command, bit for bit. Keys: docs/models/epidermis.md.
    """
    text, name = _config_text(config, parameters, "morula.Epidermis")
    return _morula._make_epidermis(text, name)


def Proliferation(config=None, **parameters):
    """Sphere cells that grow, divide and push each other (BioDynaMo's benchmarks A and B), on one rank.

    ``config`` is the JSON file ``morula proliferation --config`` takes, or a dict of its keys; keyword
    arguments override keys (``Proliferation(scenario="division", cells_per_axis=16)``). The same
    configuration gives the same run as the command, bit for bit. Keys: docs/models/proliferation.md.
    """
    text, name = _config_text(config, parameters, "morula.Proliferation")
    return _morula._make_proliferation(text, name)


def Lattice(config=None, **parameters):
    """Multiparticle lattice diffusion (Roberts et al. 2009: packed 32-bit sites, overflow list), on one rank.

    ``config`` is the JSON file ``morula lattice --config`` takes, or a dict of its keys; keyword arguments
    override keys (``Lattice(size=[32, 32, 32], capacity=4)``); without either, the command's default run
    (two tracer species). The same configuration gives the same run as the command, bit for bit.
    Keys: docs/models/lattice.md.
    """
    text, name = _config_text(config, parameters, "morula.Lattice")
    return _morula._make_lattice(text, name)


def Angiogenesis(config=None, **parameters):
    """Tumour growth and angiogenesis (Worecki and Wcisło 2012): cells, vessel tubes, oxygen and TAF, on one rank.

    ``config`` is the JSON file ``morula angiogenesis --config`` takes, or a dict of its keys; keyword
    arguments override keys (``Angiogenesis(tumour_radius=30, sprouting=True)``). ``step()`` and
    ``advance(n)`` apply the angiogenic switch before every step, as the command does, so the same
    configuration gives the same run as the command, bit for bit. Keys: docs/models/angiogenesis.md.
    """
    text, name = _config_text(config, parameters, "morula.Angiogenesis")
    return _morula._make_angiogenesis(text, name)


def UniformGrid(box, cutoff, precision="double", ordering="row_major"):
    """The sorted uniform grid (cell lists) over ``box`` (a :class:`morula.Box`) for neighbours within ``cutoff``.

    ``grid.build(positions)`` bins an (n, 3) array read in place (DLPack: numpy, CuPy, PyTorch, a
    morula.Array; or the buffer protocol), of the grid's precision and in the build's memory space;
    ``grid.neighbor_counts()`` and ``grid.neighbor_list()`` (CSR offsets and indices) come back as arrays.
    ``ordering`` is the cell numbering: ``row_major``, ``morton`` or ``morton_rows``.
    """
    return _morula._make_grid(box, float(cutoff), precision, ordering)
