"""morula.ode: networks from files and text, the solver from numpy arrays, and equality with `morula ode run`."""
import csv

import numpy as np
import pytest

import morula
from conftest import run_app

ode = morula.ode


def read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], np.array([[float(v) for v in row] for row in rows[1:]])


@pytest.mark.parametrize("method", ["auto", "bdf", "rodas5p"])
def test_robertson_equals_the_command_bit_for_bit(app, data, tmp_path, method):
    # Robertson's problem, stiff from the first steps, to t = 1e5 (17 digits in the CSV: exact doubles).
    out = tmp_path / "cli.csv"
    run_app(app, "ode", "run", data / "ode_robertson.txt", "--t-end", "1e5", "--samples", "6", "--method", method,
            "--rtol", "1e-8", "--atol", "1e-12", "--out", out)
    header, rows = read_csv(out)
    assert header == ["time", "A", "B", "C"]
    network = ode.read_model(str(data / "ode_robertson.txt"))
    solution = ode.solve(network, times=list(rows[:, 0]), method=method, rtol=1e-8, atol=[1e-12])
    assert solution.status == ["success"]
    samples = solution.samples.to_host()
    assert samples.shape == (1, 6, 3)
    assert np.array_equal(samples[0], rows[:, 1:])
    # Mass is conserved (A + B + C = 1) at the stiff end.
    assert np.allclose(samples[0].sum(axis=1), 1.0, rtol=0, atol=1e-9)


def test_a_sweep_from_numpy_equals_one_system_at_a_time():
    # 64 copies of Robertson with every rate varied by up to +-50%, as a parameter sweep would.
    network = ode.parse_text("A -> B, k=0.04\n2 B -> B + C, k=3e7\nB + C -> A + C, k=1e4\ninit A = 1\n", "robertson")
    rng = np.random.default_rng(7)
    k = network.rate_constants * rng.uniform(0.5, 1.5, size=(64, 3))
    times = [1e-2, 1.0, 1e2, 1e4]
    batch = ode.solve(network, times=times, rate_constants=k, method="rodas5p", rtol=1e-8, atol=[1e-12])
    assert batch.status == ["success"] * 64
    samples = batch.samples.to_host()
    assert samples.shape == (64, 4, 3)
    for s in (0, 17, 63):
        one = ode.solve(network, times=times, rate_constants=k[s:s + 1], method="rodas5p", rtol=1e-8, atol=[1e-12])
        assert np.array_equal(one.samples.to_host()[0], samples[s])
    assert np.allclose(samples.sum(axis=2), 1.0, rtol=0, atol=1e-8)
    stats = batch.statistics.to_host()
    assert stats.shape == (64, len(ode.statistics_columns))
    assert (stats[:, ode.statistics_columns.index("steps")] > 0).all()


def test_auto_takes_rodas5p_for_a_small_stiff_network_unless_told_bdf():
    # Robertson under method="auto": RKF45 then Rodas5P in the register kernel (no Newton iteration);
    # stiff_method="bdf" keeps RKF45 <-> BDF. Both agree with each other to the tolerance.
    network = ode.parse_text("A -> B, k=0.04\n2 B -> B + C, k=3e7\nB + C -> A + C, k=1e4\ninit A = 1\n", "robertson")
    times = [0.4, 40.0, 1e5]
    column = ode.statistics_columns.index
    auto = ode.solve(network, times=times, rtol=1e-8, atol=[1e-14])
    bdf = ode.solve(network, times=times, rtol=1e-8, atol=[1e-14], stiff_method="bdf")
    assert auto.status == ["success"] and bdf.status == ["success"]
    a, b = auto.statistics.to_host()[0], bdf.statistics.to_host()[0]
    assert a[column("switches_to_bdf")] >= 1 and a[column("bdf_steps")] > 0
    assert a[column("newton_iterations")] == 0
    assert b[column("newton_iterations")] > 0
    assert np.allclose(auto.samples.to_host(), bdf.samples.to_host(), rtol=2e-6, atol=1e-12)
    with pytest.raises(ValueError, match=r"stiff_method = 'rk4' is not one of"):
        ode.solve(network, times=times, stiff_method="rk4")
    with pytest.raises(ValueError, match=r"stiff_method chooses what method='auto' uses"):
        ode.solve(network, times=times, method="rodas5p", stiff_method="bdf")


def test_initial_states_per_system_against_the_analytic_decay():
    network = ode.parse_text("A -> B, k=0.5\n")
    x0 = np.array([[1.0, 0.0], [2.0, 1.0], [0.5, 0.25]])
    t = np.array([0.5, 1.0, 4.0])
    solution = ode.solve(network, times=list(t), initial_states=x0, rtol=1e-10, atol=[1e-14], method="bdf")
    samples = solution.samples.to_host()
    a = x0[:, :1] * np.exp(-0.5 * t)[None, :]
    assert np.allclose(samples[:, :, 0], a, rtol=1e-7, atol=0)
    assert np.allclose(samples[:, :, 0] + samples[:, :, 1], x0.sum(axis=1)[:, None], rtol=1e-12)
    assert solution.species == ["A", "B"] and solution.saved_species == [0, 1]


def test_per_system_times_equal_one_system_at_a_time(app, data, tmp_path):
    # Robertson with each system's own end time (1e-3 to 1e5 over 8 systems, 4 samples each): each row of
    # the batch equals that system run alone with its row as the times; the times come back per system.
    network = ode.parse_text("A -> B, k=0.04\n2 B -> B + C, k=3e7\nB + C -> A + C, k=1e4\ninit A = 1\n", "robertson")
    ends = np.logspace(-3, 5, 8)
    times = ends[:, None] * np.array([0.0, 0.25, 0.5, 1.0])[None, :]
    for method in ("rodas5p", "bdf"):
        batch = ode.solve(network, times=times, method=method, rtol=1e-8, atol=[1e-12])
        assert batch.status == ["success"] * 8
        assert np.array_equal(batch.times, times)
        samples = batch.samples.to_host()
        for s in (0, 3, 7):
            one = ode.solve(network, times=list(times[s]), method=method, rtol=1e-8, atol=[1e-12])
            assert np.array_equal(one.samples.to_host()[0], samples[s])
        assert np.allclose(samples.sum(axis=2), 1.0, rtol=0, atol=1e-9)
    # The same sweep from the command line: a t_end column stretches --t-end/--samples to each system's end.
    table = tmp_path / "ends.csv"
    table.write_text("t_end\n" + "\n".join(repr(float(e)) for e in ends) + "\n")
    out = tmp_path / "cli.csv"
    run_app(app, "ode", "run", data / "ode_robertson.txt", "--t-end", "1", "--samples", "5", "--method", "rodas5p",
            "--rtol", "1e-8", "--atol", "1e-12", "--sweep-table", table, "--out", out)
    header, rows = read_csv(out)
    assert header == ["system", "time", "A", "B", "C"]
    cli_times = rows[:, 1].reshape(8, 5)
    batch = ode.solve(network, times=cli_times, method="rodas5p", rtol=1e-8, atol=[1e-12])
    assert np.array_equal(cli_times[:, -1], ends)
    assert np.array_equal(batch.samples.to_host().reshape(40, 3), rows[:, 2:])
    with pytest.raises(ValueError, match=r"system 2: sample times must increase strictly"):
        bad = times.copy()
        bad[2, 2] = bad[2, 1]
        ode.solve(network, times=bad, method="rodas5p")
    with pytest.raises(ValueError, match=r"times has 8 rows and rate_constants 3"):
        ode.solve(network, times=times, rate_constants=np.ones((3, 3)))


def test_a_failing_system_is_reported_beside_the_others():
    network = ode.parse_text("A -> B, k=0.5\n")
    k = np.array([[0.5], [0.5]])
    solution = ode.solve(network, times=[1.0, 2.0], rate_constants=k, method="bdf", max_steps=1)
    assert solution.status == ["max_steps", "max_steps"]
    assert np.isnan(solution.samples.to_host()[:, -1]).all()


def test_on_chip_layout_equals_interleaved_on_a_host_backend():
    # A 12-species chain over 11 decades of rates, 8 systems with their own rates, BDF on the general path:
    # layout="on-chip" (a system's workspace in team scratch memory) against "interleaved". On a host backend
    # the on-chip layout has one lane: the same arithmetic in the same order, so the same numbers bit for bit.
    lines = [f"A{i} -> A{i + 1}, k={10.0 ** (5 - 11 * i / 10):.6g}" for i in range(11)] + ["init A0 = 1"]
    network = ode.parse_text("\n".join(lines) + "\n", "chain")
    rng = np.random.default_rng(3)
    k = network.rate_constants * rng.uniform(0.8, 1.2, size=(8, 11))
    times = [1e-4, 1e-2, 1.0, 1e2, 1e4]
    runs = {layout: ode.solve(network, times=times, rate_constants=k, method="bdf", mode="batched", rtol=1e-8,
                              atol=[1e-16], layout=layout) for layout in ("interleaved", "on-chip", "auto")}
    for run in runs.values():
        assert run.status == ["success"] * 8
    on_chip, interleaved = runs["on-chip"].samples.to_host(), runs["interleaved"].samples.to_host()
    assert np.allclose(on_chip.sum(axis=2), 1.0, rtol=0, atol=1e-12)
    if morula.build_info()["default_execution_space"] in ("Serial", "OpenMP", "Threads"):
        assert np.array_equal(on_chip, interleaved)
    else:
        assert np.allclose(on_chip, interleaved, rtol=1e-5, atol=1e-13)
    with pytest.raises(ValueError, match=r"layout = 'shared' is not one of"):
        ode.solve(network, times=times, layout="shared")
    with pytest.raises(ValueError, match=r"on_chip is a layout of the batched mode"):
        ode.solve(network, times=times, mode="fine", layout="on-chip")


def test_dense_output_passes_samples_without_extra_steps():
    # Robertson sampled 200 times in log t through its transient: Rodas5P's dense output fills
    # samples inside steps, and takes exactly the steps of a run sampled only at its end; sample_output="steps"
    # ends a step on every sample. Mass is conserved at every interpolated sample; both agree within tolerance.
    network = ode.parse_text("A -> B, k=0.04\n2 B -> B + C, k=3e7\nB + C -> A + C, k=1e4\ninit A = 1\n", "robertson")
    times = np.concatenate(([0.0], np.logspace(-6, 3, 200)))
    dense = ode.solve(network, times=times, method="rodas5p", mode="batched", rtol=1e-7, atol=[1e-14],
                      sample_output="dense")
    steps = ode.solve(network, times=times, method="rodas5p", mode="batched", rtol=1e-7, atol=[1e-14],
                      sample_output="steps")
    end_only = ode.solve(network, times=[0.0, 1e3], method="rodas5p", mode="batched", rtol=1e-7, atol=[1e-14],
                         sample_output="dense")
    column = ode.statistics_columns.index("steps")
    dense_steps = dense.statistics.to_host()[0, column]
    assert dense_steps == end_only.statistics.to_host()[0, column]
    assert steps.statistics.to_host()[0, column] >= dense_steps + 100
    x, y = dense.samples.to_host()[0], steps.samples.to_host()[0]
    assert np.allclose(x.sum(axis=1), 1.0, rtol=0, atol=1e-13)
    assert np.allclose(x, y, rtol=1e-4, atol=1e-11)
    assert np.array_equal(x[-1], end_only.samples.to_host()[0, -1])
    with pytest.raises(ValueError, match=r"sample_output = 'linear' is not one of"):
        ode.solve(network, times=times, sample_output="linear")


def test_bad_input_names_the_argument():
    network = ode.parse_text("A -> B, k=0.5\n")
    with pytest.raises(ValueError, match=r"rate_constants has shape \(3, 2\); expected \(3, 1\)"):
        ode.solve(network, times=[1.0], rate_constants=np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"initial_states has 2 rows and rate_constants 3"):
        ode.solve(network, times=[1.0], initial_states=np.ones((2, 2)), rate_constants=np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"method = 'rk4' is not one of .*'rodas5p'"):
        ode.solve(network, times=[1.0], method="rk4")
    with pytest.raises(ValueError, match=r"sample times must increase"):
        ode.solve(network, times=[2.0, 1.0])
    with pytest.raises(ValueError, match=r"no sample times"):
        ode.solve(network)
    with pytest.raises(ValueError, match=r"model.txt:1: missing rate constant"):
        ode.parse_text("A -> B\n", "model.txt")
    with pytest.raises(ValueError):
        ode.read_model("no_such_model.txt")
