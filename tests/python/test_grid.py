"""morula.UniformGrid on another code's particles: positions read in place, counts and lists against brute force."""
import numpy as np
import pytest

import morula

host = morula.build_info()["default_memory_space"] in ("Host", "HostSpace")


def brute_force_pairs(x, box_length, cutoff, periodic):
    d = x[:, None, :] - x[None, :, :]
    if periodic:
        d -= box_length * np.round(d / box_length)
    r2 = (d ** 2).sum(axis=2)
    np.fill_diagonal(r2, np.inf)
    return r2 <= cutoff * cutoff


def random_positions(n, length, seed, dtype=np.float64, order="C"):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.uniform(0, length, size=(n, 3)), dtype=dtype, order=order)


@pytest.mark.skipif(not host, reason="numpy arrays are host memory")
@pytest.mark.parametrize("boundary", ["periodic", "closed"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_counts_and_list_equal_brute_force(boundary, order):
    # A dense case: 27 neighbours per particle on average (the hard end for a cell list: full cells).
    n, length, cutoff = 2000, 10.0, 1.5
    x = random_positions(n, length, 3, order=order)
    grid = morula.UniformGrid(morula.Box((0, 0, 0), (length, length, length), boundary), cutoff)
    grid.build(x)
    assert grid.positions_pointer == x.__array_interface__["data"][0]  # read in place, no copy
    assert grid.num_particles == n and grid.cells_per_axis == (6, 6, 6)
    pairs = brute_force_pairs(x, length, cutoff, boundary == "periodic")
    counts = np.asarray(grid.neighbor_counts())
    assert np.array_equal(counts, pairs.sum(axis=1))
    offsets, indices = (np.asarray(a) for a in grid.neighbor_list())
    assert offsets[0] == 0 and offsets[-1] == len(indices) == pairs.sum()
    for i in range(0, n, 97):
        assert sorted(indices[offsets[i]:offsets[i + 1]]) == list(np.flatnonzero(pairs[i]))
    # A smaller radius through the same grid.
    assert np.array_equal(np.asarray(grid.neighbor_counts(radius=0.7)),
                          brute_force_pairs(x, length, 0.7, boundary == "periodic").sum(axis=1))


@pytest.mark.skipif(not host, reason="numpy arrays are host memory")
def test_float_grid_and_the_buffer_protocol():
    x = random_positions(500, 6.0, 5, dtype=np.float32)
    grid = morula.UniformGrid(morula.Box((0, 0, 0), (6, 6, 6), "periodic"), 1.2, precision="float")
    grid.build(memoryview(x))  # the buffer protocol, no __dlpack__
    assert grid.positions_pointer == x.__array_interface__["data"][0]
    d = x[:, None, :].astype(np.float32) - x[None, :, :]
    d -= np.float32(6) * np.round(d / np.float32(6))
    r2 = (d * d).sum(axis=2, dtype=np.float32)
    np.fill_diagonal(r2, np.inf)
    expected = (r2 <= np.float32(1.2) * np.float32(1.2)).sum(axis=1)
    assert np.array_equal(np.asarray(grid.neighbor_counts()), expected)


def test_a_models_array_goes_in_without_a_copy():
    model = morula.Epidermis(cells=9, elements_per_cell=20, model="movement")
    x = model.positions  # a morula.Array: DLPack in the build's memory space
    lx, ly, lz = model.box
    grid = morula.UniformGrid(morula.Box((0, 0, -10), (lx, ly, 10), ["periodic", "periodic", "open"]), 0.75)
    grid.build(x)
    assert grid.positions_pointer == x.pointer
    counts = grid.neighbor_counts().to_host()
    assert counts.shape == (180,) and counts.min() >= 1


@pytest.mark.skipif(not host, reason="numpy arrays are host memory")
def test_bad_arrays_name_what_was_expected():
    grid = morula.UniformGrid(morula.Box((0, 0, 0), (4, 4, 4)), 1.0)
    with pytest.raises(ValueError, match=r"build\(positions\) first"):
        grid.neighbor_counts()
    with pytest.raises(ValueError, match=r"holds float32 values; expected float64"):
        grid.build(np.zeros((10, 3), dtype=np.float32))
    with pytest.raises(ValueError, match=r"expected shape \(n, 3\)"):
        grid.build(np.zeros((10, 2)))
    with pytest.raises(ValueError, match=r"__dlpack__ or the buffer protocol"):
        grid.build([[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match=r"particle 1.*outside"):
        grid.build(np.array([[1.0, 1.0, 1.0], [5.0, 1.0, 1.0]]))  # closed box, x = 5 > 4
    grid.build(np.full((4, 3), 2.0))
    with pytest.raises(ValueError, match=r"radius = 1.5; expected 0 < radius <= the grid's cutoff 1"):
        grid.neighbor_counts(radius=1.5)
    with pytest.raises(ValueError, match=r"boundary 'wrap' is not one of"):
        morula.Box((0, 0, 0), (1, 1, 1), "wrap")
    with pytest.raises(ValueError, match=r"lo < hi"):
        morula.Box((0, 0, 0), (1, -1, 1))


@pytest.mark.skipif(not host, reason="numpy arrays are host memory")
def test_a_rebuild_makes_earlier_arrays_stale():
    grid = morula.UniformGrid(morula.Box((0, 0, 0), (4, 4, 4), "periodic"), 1.0)
    grid.build(random_positions(100, 4.0, 1))
    counts = grid.neighbor_counts()
    perm = grid.permutation
    grid.build(random_positions(120, 4.0, 2))
    for a in (counts, perm):
        with pytest.raises(morula.StaleArrayError):
            np.asarray(a)
    assert grid.permutation.shape == (120,)
