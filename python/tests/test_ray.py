"""`ndvm.ray`: a search's islands as Ray actors on a local cluster of two nodes (a head node and
a second node process on this machine), the front equal to the search in one process, a worker
killed mid-search, and a population's evaluation over Ray tasks."""

import os
import signal
import threading
import warnings

import numpy as np
import pytest

import ndvm
from conftest import DATA

ray = pytest.importorskip("ray") if not os.environ.get("CI") else __import__("ray")
import ndvm.ray as nray  # noqa: E402


def rows():
    t = np.loadtxt(DATA / "sr" / "llm-sr" / "oscillator1" / "train.csv", delimiter=",",
                   skiprows=1)
    return t[:1000, :2], t[:1000, 2]


# Two islands, a migration every three generations: several migrations within 600 evaluations.
SETTINGS = dict(islands=2, max_evals=600, seed=3, population=30, migration_interval=3,
                names=["x", "v"])


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    c.add_node(num_cpus=1)
    ray.init(address=c.address)
    c.wait_for_nodes()
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def in_process():
    X, y = rows()
    return ndvm.search(X, y, threads=2, **SETTINGS)


def test_islands_on_two_nodes_find_the_front_of_one_process(cluster, in_process):
    X, y = rows()
    seen = []
    r = nray.search(X, y, progress=seen.append, **SETTINGS)
    assert r["ray"]["nodes"] == 2, r["ray"]
    assert r["ray"]["migrations"] >= 3
    assert r["ray"]["failures"] == []
    assert r["summary"]["evaluations"] == 600 and r["summary"]["stopped"] == "max-evals"
    assert r["front"] == in_process["front"]
    assert seen and seen[-1]["evaluations"] == 600
    assert {i["node"] for i in seen[-1]["islands"]} == {i["node"] for i in r["ray"]["islands"]}


def test_a_worker_killed_mid_search_restarts_from_its_checkpoint(cluster, in_process):
    X, y = rows()
    killed = []

    def kill(p):
        # At the second migration, island 1's worker process is killed while it runs.
        if p["migrations"] == 2 and not killed:
            pid = p["islands"][1]["pid"]
            killed.append(pid)
            threading.Timer(0.05, os.kill, (pid, signal.SIGKILL)).start()

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = nray.search(X, y, progress=kill, **SETTINGS)
    assert killed
    assert r["ray"]["islands"][1]["restarts"] == 1, r["ray"]
    assert r["ray"]["islands"][1]["pid"] != killed[0]
    assert any("island 1" in str(x.message) for x in w)
    assert r["summary"]["evaluations"] == 600
    assert r["front"] == in_process["front"], "nothing was lost"


def test_evaluate_population_over_tasks_gives_the_same_results(cluster):
    x = np.linspace(0.0, 1.0, 5)
    programs = [
        "(* a (exp (- 0 (* b x))))",
        ndvm.Program("(+ a (* b x))", max_steps=100),
        "(+ a",  # does not read
        ndvm.Program("(loop ((i 0)) (if (< i 0) i (recur (+ i 1))))", max_steps=1000),
        "(sin (* b x))",
    ] * 3
    bindings = {"a": 2.0, "b": 0.5, "x": ndvm.lanes(x)}
    here = ndvm.evaluate_population(programs, bindings, wrt=["a", "b"])
    there = nray.evaluate_population(programs, bindings, wrt=["a", "b"], chunk=4)
    assert len(there) == len(here)
    for h, t in zip(here, there):
        assert (h.error is None) == (t.error is None)
        if h.error is not None:
            assert type(t.error) is type(h.error) and str(t.error) == str(h.error)
            assert t.error.kind == h.error.kind
            continue
        assert np.array_equal(h.value, t.value)
        assert h.grads.keys() == t.grads.keys()
        for k in h.grads:
            assert np.array_equal(h.grads[k], t.grads[k])
    each = [{"a": float(i), "b": 1.0, "x": x} for i in range(len(programs))]
    here = ndvm.evaluate_population(programs, each)
    there = nray.evaluate_population(programs, each)
    for h, t in zip(here, there):
        assert (h.value is None and t.value is None) or np.array_equal(h.value, t.value)


def test_bad_arguments_are_errors_before_anything_runs(cluster):
    X, y = rows()
    with pytest.raises(ValueError, match="proposer"):
        nray.search(X, y, proposer=lambda r, f: [], max_evals=10)
    with pytest.raises(ValueError, match="islands"):
        nray.search(X, y, islands=0, max_evals=10)
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="column 'v'"):
        nray.search(bad, y, names=["x", "v"], max_evals=10)
    with pytest.raises(ValueError, match="seed_programs"):
        nray.search(X, y, seed_programs=[{"src": "(+ a"}], max_evals=10)
    with pytest.raises(ValueError, match="CPUs"):
        nray.search(X, y, islands=64, max_evals=10)
    with pytest.raises(ValueError, match="bindings"):
        nray.evaluate_population(["x"], [{"x": 1.0}, {"x": 2.0}])
