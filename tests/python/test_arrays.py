"""Arrays out without copies, and stale arrays that raise instead of reading moved data."""
import numpy as np
import pytest

import morula

host = morula.build_info()["default_memory_space"] != "Cuda" and \
    morula.build_info()["default_memory_space"] not in ("CudaUVM", "HIP")


def small_model():
    return morula.Epidermis(cells=4, elements_per_cell=20, boundary="none", model="full", growth_interval=5,
                           division_elements=22)


@pytest.mark.skipif(not host, reason="numpy reads host memory only")
def test_numpy_reads_the_models_memory_without_a_copy():
    model = small_model()
    x = model.positions
    array = np.asarray(x)
    assert array.__array_interface__["data"][0] == x.pointer
    assert array.shape == (80, 3) and array.dtype == np.float64
    # LayoutLeft with a capacity: the first column's neighbours are one element apart, the columns capacity apart.
    assert array.strides[0] == 8 and array.strides[1] == 8 * x.strides[1]
    # A write through numpy is a write into the model (no copy in between).
    array[0, 2] += 0.5
    assert np.asarray(model.positions)[0, 2] == array[0, 2]


@pytest.mark.skipif(not host, reason="numpy's from_dlpack reads host memory only")
def test_dlpack_capsule_points_at_the_view():
    model = small_model()
    x = model.positions
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU
    via_dlpack = np.from_dlpack(x)
    assert via_dlpack.__array_interface__["data"][0] == x.pointer
    assert np.array_equal(via_dlpack, np.asarray(x))
    # The capsule keeps the allocation alive after the model lets go of it.
    del model
    assert np.isfinite(via_dlpack).all()


def test_a_step_makes_earlier_arrays_stale():
    model = small_model()
    x = model.positions
    copy = x.to_host()
    model.advance(10)  # growth at steps 5 and 10: elements added, arrays reallocated and re-sorted
    assert x.stale
    with pytest.raises(morula.StaleArrayError, match="positions is stale"):
        np.asarray(x)
    with pytest.raises(morula.StaleArrayError):
        x.__dlpack__()
    with pytest.raises(morula.StaleArrayError):
        x[0]
    fresh = model.positions
    assert not fresh.stale and fresh.shape[0] > copy.shape[0]


def test_restart_makes_arrays_stale(tmp_path):
    if not morula.build_info()["hdf5"]:
        pytest.skip("checkpoints need HDF5")
    model = small_model()
    model.checkpoint(str(tmp_path / "a.h5"))
    x = model.species
    model.restart(str(tmp_path / "a.h5"))
    with pytest.raises(morula.StaleArrayError):
        x.numpy()


def test_to_host_is_a_compact_copy():
    model = small_model()
    x = model.positions
    copy = x.to_host()
    assert copy.flags["C_CONTIGUOUS"] and copy.shape == (80, 3)
    assert copy.__array_interface__["data"][0] != x.pointer
    if host:
        assert np.array_equal(copy, np.asarray(x))


@pytest.mark.skipif(host, reason="device memory only")
def test_device_memory_refuses_numpy_and_names_dlpack():
    x = small_model().positions
    with pytest.raises(TypeError, match="device memory.*DLPack"):
        np.asarray(x)
    assert x.__dlpack_device__()[0] in (2, 10)  # kDLCUDA, kDLROCM
