"""``ndvm.ray``: a search's islands as Ray actors across a cluster, and a population of programs
evaluated over Ray tasks.

Ray is optional (``pip install "./python[ray]"``) and imported only when a function here is
called; each connects to the cluster ``ray.init()`` connected to (or starts a local one).

:func:`search` takes the arguments of :func:`ndvm.search` and runs each island of the search in
its own Ray actor. Between two migrations the islands share nothing; at each migration every
island sends its state (population, hall of fame, counters) to the driver, which computes what
each island receives and sends it back with the next epoch. With a fixed ``seed``, island count,
``migration_interval`` and ``max_evals`` (split evenly over the islands), the front is the one
:func:`ndvm.search` finds in one process, wherever the islands run.

Faults: each epoch an island also returns its checkpoint (everything to continue from: its
population, hall of fame, skeleton cache and counters), kept by the driver. When an island's
worker dies (its process killed, its node lost), the island starts again from its checkpoint in
a new actor, wherever Ray places it, and runs the lost epoch again; the search finishes with the
front it would have had. What is lost is the time of the lost epoch; a search whose driver dies
is lost (the driver holds the checkpoints).
"""

from __future__ import annotations

import json
import math
import os
import time
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._ndvm import _Island, _Islands
from .search import _tables, settings_of


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError(
            "ndvm.ray needs Ray: pip install 'ndvm[ray]' (or pip install ray)"
        ) from None
    if not ray.is_initialized():
        ray.init()
    return ray


class _IslandWorker:
    """One island of a search, in a Ray actor."""

    def __init__(
        self,
        table: Any,
        settings: List[str],
        seeds: Optional[List[Mapping[str, Any]]],
        island: int,
        threads: int,
        checkpoint: Optional[str],
    ) -> None:
        names, columns, tests = table
        self.island = _Island(
            names,
            columns,
            tests,
            settings=settings,
            island=island,
            threads=threads,
            seed_programs=seeds,
            checkpoint=checkpoint,
        )

    def where(self) -> Dict[str, Any]:
        import ray

        return {"node": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    def epoch(
        self, arrivals: str, remaining: Optional[float], max_evals: Optional[int]
    ) -> Tuple[str, str, str, float]:
        t = time.perf_counter()
        report, state, checkpoint = self.island.epoch(
            arrivals, remaining=remaining, max_evals=max_evals
        )
        return report, state, checkpoint, time.perf_counter() - t


def search(
    X: Any,
    y: Any,
    *,
    islands: int = 4,
    cpus_per_island: int = 1,
    max_failures: int = 3,
    threads: Optional[int] = None,
    names: Optional[Sequence[str]] = None,
    tests: Optional[Mapping[str, Tuple[Any, Any]]] = None,
    budget: Optional[float] = None,
    max_evals: Optional[int] = None,
    seed_programs: Optional[Sequence[Mapping[str, Any]]] = None,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    ops: Union[None, str, Sequence[str]] = None,
    max_complexity: Optional[int] = None,
    seed: int = 1,
    migration_interval: Optional[int] = None,
    population: Optional[int] = None,
    parsimony: Optional[float] = None,
    optimizer: Optional[str] = None,
    iterations: Optional[int] = None,
    restarts: Optional[int] = None,
    fit_rows: Optional[int] = None,
    iterate: Optional[str] = None,
    share: Optional[bool] = None,
    max_steps: Optional[int] = None,
    max_memory_mb: Optional[int] = None,
    settings: Optional[Mapping[str, Any]] = None,
    proposer: Optional[Any] = None,
    select: str = "best",
) -> Dict[str, Any]:
    """:func:`ndvm.search` with each of its ``islands`` in a Ray actor of ``cpus_per_island``
    CPUs (its fitting threads), spread over the cluster's nodes.

    Returns what :func:`ndvm.search` returns, plus ``"ray"``: the islands' nodes and worker
    restarts, the migrations, and the seconds per migration the driver and Ray spent beyond
    the islands' own work. ``threads`` is the driver's, for the final refit of the front. An
    island whose worker dies starts again from its last checkpoint, up to ``max_failures``
    times. ``progress`` is called after each migration with ``{"evaluations", "seconds",
    "budget", "best_loss", "front", "migrations", "islands"}`` (``islands``: each island's
    ``node``, ``pid`` and ``restarts``). The built-in proposer only: a ``proposer`` runs in
    one process, with :func:`ndvm.search`. ``select`` chooses the model from the front as in
    :func:`ndvm.search`.
    """
    if proposer is not None:
        raise ValueError(
            "ndvm.ray.search runs the built-in proposer on its islands; a proposer= runs with "
            "ndvm.search, in one process"
        )
    for what, v, low in (("islands", islands, 1), ("cpus_per_island", cpus_per_island, 1),
                         ("max_failures", max_failures, 0)):
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            raise ValueError(f"{what} must be an integer of at least {low}, not {v!r}")
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise ValueError("budget must be a number of seconds above 0")
    table = _tables(X, y, names, tests)
    assignments = settings_of(
        ops=ops,
        max_complexity=max_complexity,
        seed=seed,
        islands=islands,
        migration_interval=migration_interval,
        population=population,
        parsimony=parsimony,
        optimizer=optimizer,
        iterations=iterations,
        restarts=restarts,
        fit_rows=fit_rows,
        iterate=iterate,
        share=share,
        max_steps=max_steps,
        max_memory_mb=max_memory_mb,
        settings=settings,
    )
    seeds = list(seed_programs) if seed_programs is not None else None
    # Bad data, settings or seed programs are the caller's error, raised here, not in a worker.
    driver = _Islands(*table, settings=assignments, threads=threads or os.cpu_count() or 1)
    _Island(*table, settings=assignments, island=0, seed_programs=seeds)
    if budget is None and max_evals is None:
        budget = 60.0
    ray = _ray()
    cpus = ray.cluster_resources().get("CPU", 0)
    if cpus < islands * cpus_per_island:
        raise ValueError(
            f"the Ray cluster has {cpus:g} CPUs, and {islands} islands of {cpus_per_island} "
            f"CPUs each need {islands * cpus_per_island} at once: fewer islands, fewer "
            "cpus_per_island, or a larger cluster (ray.init(num_cpus=...) sets a local one's)"
        )
    if select not in ("best", "accuracy", "score"):
        raise ValueError(f"select={select!r}: expected 'best', 'accuracy' or 'score'")
    return _Driver(ray, driver, table, assignments, seeds, cpus_per_island, max_failures).run(
        budget, max_evals, progress, select
    )


class _Driver:
    """The epochs of a search spread over Ray actors, the migrations between them, and the
    workers started again from their checkpoints."""

    def __init__(
        self,
        ray: Any,
        islands: Any,
        table: Any,
        settings: List[str],
        seeds: Optional[List[Mapping[str, Any]]],
        cpus: int,
        max_failures: int,
    ) -> None:
        self.ray = ray
        self.islands = islands
        self.k = islands.islands
        self.settings = settings
        self.seeds = seeds
        self.cpus = cpus
        self.max_failures = max_failures
        self.table = ray.put(table)
        self.worker = ray.remote(_IslandWorker)
        self.checkpoints: List[Optional[str]] = [None] * self.k
        self.restarts = [0] * self.k
        self.failures: List[str] = []
        self.actors = [self._start(i) for i in range(self.k)]
        self.where = ray.get([a.where.remote() for a in self.actors])

    def _start(self, i: int) -> Any:
        return self.worker.options(
            num_cpus=self.cpus, scheduling_strategy="SPREAD", max_restarts=0
        ).remote(self.table, self.settings, self.seeds, i, self.cpus, self.checkpoints[i])

    def _epoch(self, arrivals: List[str], remaining: Callable[[], Optional[float]],
               max_evals: Optional[int]) -> List[Tuple[str, str, str, float]]:
        """Every island's epoch; an island whose worker dies runs it again in a new one,
        from its checkpoint."""
        ray = self.ray
        pending = {
            a.epoch.remote(arrivals[i], remaining(), max_evals): i
            for i, a in enumerate(self.actors)
        }
        out: List[Any] = [None] * self.k
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            i = pending.pop(done[0])
            try:
                out[i] = ray.get(done[0])
            except ray.exceptions.RayActorError as e:
                self.restarts[i] += 1
                why = f"island {i}: its worker died ({type(e).__name__}); started again"
                self.failures.append(why)
                if self.restarts[i] > self.max_failures:
                    raise RuntimeError(
                        f"island {i}: its worker died {self.restarts[i]} times "
                        f"(max_failures={self.max_failures}); the search stops"
                    ) from e
                warnings.warn(why + " from its last checkpoint", RuntimeWarning, stacklevel=3)
                self.actors[i] = self._start(i)
                self.where[i] = ray.get(self.actors[i].where.remote())
                pending[self.actors[i].epoch.remote(arrivals[i], remaining(), max_evals)] = i
        return out

    def run(self, budget: Optional[float], max_evals: Optional[int],
            progress: Optional[Callable[[Dict[str, Any]], None]],
            select: str = "best") -> Dict[str, Any]:
        started = time.monotonic()
        deadline = None if budget is None else started + 0.95 * budget

        def remaining() -> Optional[float]:
            return None if deadline is None else max(deadline - time.monotonic(), 0.0)

        interval = self.islands.migration_interval
        arrivals = ["[]"] * self.k
        overhead: List[float] = []
        interrupted = False
        try:
            while True:
                t = time.perf_counter()
                results = self._epoch(arrivals, remaining, max_evals)
                self.checkpoints = [r[2] for r in results]
                self.islands.absorb([r[1] for r in results])
                reports = [json.loads(r[0]) for r in results]
                if interval > 0 and any(r["steps"] == interval for r in reports):
                    arrivals = self.islands.migrate()
                    overhead.append(time.perf_counter() - t - max(r[3] for r in results))
                else:
                    arrivals = ["[]"] * self.k
                if progress is not None:
                    p = self.islands.progress()
                    p["budget"] = budget
                    p["islands"] = self._islands()
                    try:
                        progress(p)
                    except Exception as e:  # noqa: BLE001 - a failing callback does not stop it
                        warnings.warn(f"the progress callback failed (the search went on): "
                                      f"{type(e).__name__}: {e}", RuntimeWarning, stacklevel=2)
                        progress = None
                if not any(r["live"] for r in reports):
                    break
        except KeyboardInterrupt:
            interrupted = True
        finally:
            for a in self.actors:
                self.ray.kill(a)
        left = None if budget is None else max(started + budget - time.monotonic(), 0.0)
        out: Dict[str, Any] = self.islands.finish(
            max_evals=max_evals, remaining=left, interrupted=interrupted, select=select
        )
        out["summary"]["threads"] = self.k * self.cpus
        out["interrupted"] = interrupted
        out["ray"] = {
            "islands": self._islands(),
            "nodes": len({w["node"] for w in self.where}),
            "migrations": len(overhead),
            "overhead_per_migration": sum(overhead) / len(overhead) if overhead else None,
            "failures": self.failures,
        }
        return out

    def _islands(self) -> List[Dict[str, Any]]:
        return [
            {"island": i, "node": w["node"], "pid": w["pid"], "restarts": self.restarts[i]}
            for i, w in enumerate(self.where)
        ]


def _evaluate_chunk(programs: List[Any], bindings: Any, threads: int,
                    wrt: Optional[Sequence[str]]) -> List[Any]:
    from . import evaluate_population

    return evaluate_population(programs, bindings, threads=threads, wrt=wrt)


def evaluate_population(
    programs: Sequence[Any],
    bindings: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]],
    threads: Optional[int] = None,
    wrt: Optional[Sequence[str]] = None,
    *,
    chunk: Optional[int] = None,
    cpus_per_task: int = 1,
) -> List[Any]:
    """:func:`ndvm.evaluate_population` over Ray tasks: the programs in chunks of ``chunk``
    (by default, two chunks per CPU of the cluster), each chunk a task of ``cpus_per_task``
    CPUs evaluating on ``threads`` threads (``cpus_per_task`` by default). Returns the same
    :class:`ndvm.Evaluation` list, in program order; a program's error is recorded in its entry
    and never stops the others."""
    programs = list(programs)
    shared = hasattr(bindings, "items")
    each: List[Any] = []
    if not shared:
        each = list(bindings)  # type: ignore[arg-type]
        if len(each) != len(programs):
            raise ValueError(
                f"bindings: one mapping for every program, or one list of {len(programs)} "
                f"mappings (got {len(each)})"
            )
    if not isinstance(cpus_per_task, int) or cpus_per_task < 1:
        raise ValueError(f"cpus_per_task must be an integer of at least 1, not {cpus_per_task!r}")
    if chunk is not None and (not isinstance(chunk, int) or chunk < 1):
        raise ValueError(f"chunk must be an integer of at least 1, not {chunk!r}")
    if not programs:
        return []
    ray = _ray()
    if chunk is None:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        chunk = max(1, math.ceil(len(programs) / (2 * max(cpus // cpus_per_task, 1))))
    task = ray.remote(_evaluate_chunk).options(num_cpus=cpus_per_task)
    together = ray.put(bindings) if shared else None
    refs = []
    for a in range(0, len(programs), chunk):
        b = min(a + chunk, len(programs))
        given = together if shared else each[a:b]
        refs.append(task.remote(programs[a:b], given, threads or cpus_per_task, wrt))
    out: List[Any] = []
    for part in ray.get(refs):
        out.extend(part)
    return out


__all__ = ["search", "evaluate_population"]
