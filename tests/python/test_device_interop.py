"""On a GPU build: arrays go between morula and another GPU library (CuPy, PyTorch) through DLPack, in place.

Skipped where morula's memory is host memory (a Serial or OpenMP build) or where neither library is
installed with a GPU: it needs both a device build and a second GPU library to say anything.
"""
import numpy as np
import pytest

import morula

host = morula.build_info()["default_memory_space"] in ("Host", "HostSpace")
pytestmark = pytest.mark.skipif(host, reason="a device build only")


class Cupy:
    name = "cupy"

    def __init__(self):
        import cupy
        self.cp = cupy

    def from_dlpack(self, a):
        return self.cp.from_dlpack(a)

    def asarray(self, x, order="C"):
        return self.cp.asarray(x, order=order)

    def pointer(self, a):
        return a.data.ptr

    def to_numpy(self, a):
        return self.cp.asnumpy(a)

    def synchronize(self):
        self.cp.cuda.Device().synchronize()


class Torch:
    name = "torch"

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise ImportError("torch without CUDA")
        self.torch = torch

    def from_dlpack(self, a):
        return self.torch.from_dlpack(a)

    def asarray(self, x, order="C"):
        t = self.torch.as_tensor(np.ascontiguousarray(x), device="cuda")
        return t if order == "C" else t.t().contiguous().t()  # column-major: the transpose's storage

    def pointer(self, a):
        return a.data_ptr()

    def to_numpy(self, a):
        return a.cpu().numpy()

    def synchronize(self):
        self.torch.cuda.synchronize()


@pytest.fixture(params=[Cupy, Torch], ids=["cupy", "torch"])
def gpu(request):
    try:
        return request.param()
    except ImportError as e:
        pytest.skip(f"{request.param.__name__.lower()} not usable here: {e}")


def brute_force_counts(x, length, cutoff):
    d = x[:, None, :] - x[None, :, :]
    d -= length * np.round(d / length)
    r2 = (d ** 2).sum(axis=2)
    np.fill_diagonal(r2, np.inf)
    return (r2 <= cutoff * cutoff).sum(axis=1)


def test_a_models_array_is_read_in_place(gpu):
    model = morula.Epidermis(cells=9, elements_per_cell=20, model="movement")
    model.advance(5)
    x = model.positions
    y = gpu.from_dlpack(x)
    assert gpu.pointer(y) == x.pointer  # the same device memory, no copy
    assert tuple(y.shape) == x.shape
    assert np.array_equal(gpu.to_numpy(y), x.to_host())


@pytest.mark.parametrize("order", ["C", "F"])
def test_the_grid_reads_another_librarys_positions_in_place(gpu, order):
    # 27 neighbours per particle on average: full cells, the hard end for a cell list.
    n, length, cutoff = 3000, 10.0, 1.5
    x = np.random.default_rng(11).uniform(0, length, size=(n, 3))
    y = gpu.asarray(x, order=order)
    grid = morula.UniformGrid(morula.Box((0, 0, 0), (length, length, length), "periodic"), cutoff)
    grid.build(y)
    assert grid.positions_pointer == gpu.pointer(y)
    counts = grid.neighbor_counts()
    assert np.array_equal(gpu.to_numpy(gpu.from_dlpack(counts)), brute_force_counts(x, length, cutoff))
    offsets, indices = (a.to_host() for a in grid.neighbor_list())
    assert offsets[-1] == len(indices) == brute_force_counts(x, length, cutoff).sum()


def test_a_float_grid_takes_float32_and_refuses_float64(gpu):
    x = np.random.default_rng(5).uniform(0, 6, size=(800, 3)).astype(np.float32)
    grid = morula.UniformGrid(morula.Box((0, 0, 0), (6, 6, 6), "periodic"), 1.2, precision="float")
    grid.build(gpu.asarray(x))
    d = x[:, None, :] - x[None, :, :]
    d -= np.float32(6) * np.round(d / np.float32(6))
    r2 = (d * d).sum(axis=2, dtype=np.float32)
    np.fill_diagonal(r2, np.inf)
    assert np.array_equal(grid.neighbor_counts().to_host(), (r2 <= np.float32(1.2) * np.float32(1.2)).sum(axis=1))
    with pytest.raises(ValueError, match=r"holds float64 values; expected float32"):
        grid.build(gpu.asarray(x.astype(np.float64)))


def test_host_memory_is_refused_naming_the_device():
    grid = morula.UniformGrid(morula.Box((0, 0, 0), (4, 4, 4)), 1.0)
    with pytest.raises(ValueError, match=r"device"):
        grid.build(np.full((4, 3), 2.0))
