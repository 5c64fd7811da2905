"""``ndvm.SymbolicODE``: ODE discovery from trajectories (``ndvm search --time``), in the style of
PySINDy: ``fit(X, t)``, ``predict`` (derivatives), ``simulate(x0, t)``, ``score`` (R^2 of the
integrated trajectory), ``equations_``, ``print()``, ``sympy()``.

>>> import numpy as np, ndvm
>>> t = np.linspace(0, 8, 200)
>>> x = 5 / (1 + 4 * np.exp(-0.8 * t))                     # logistic growth
>>> model = ndvm.SymbolicODE(max_evals=3000).fit(x, t=t)
>>> model.print()                                             # doctest: +SKIP
dx0/dt = 0.8*x0 - 0.16*x0**2
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ._ndvm import Program, _ode_search, _ode_simulate, lanes


def _trajectories(X: Any, t: Any, trajectory: Any, u: Any) -> List[Tuple[str, np.ndarray, np.ndarray, Optional[np.ndarray]]]:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"X must be 1-D or 2-D (rows by states), not {X.ndim}-D")
    if t is None:
        raise ValueError("t (the times of the rows of X) is required")
    t = np.asarray(t, dtype=np.float64)
    if t.ndim != 1 or len(t) != len(X):
        raise ValueError(f"t must be 1-D with one time per row of X ({len(X)} rows), not {t.shape}")
    U = None
    if u is not None:
        U = np.asarray(u, dtype=np.float64)
        if U.ndim == 1:
            U = U[:, None]
        if U.ndim != 2 or len(U) != len(X):
            raise ValueError(f"u must have one row per row of X ({len(X)} rows), not {U.shape}")
    if trajectory is None:
        return [("0", t, np.ascontiguousarray(X), None if U is None else np.ascontiguousarray(U))]
    labels = np.asarray(trajectory)
    if labels.shape != (len(X),):
        raise ValueError(f"trajectory must give one label per row of X ({len(X)} rows)")
    out = []
    seen: List[Any] = []
    for label in labels:
        if not any(label == s for s in seen):
            seen.append(label)
    for label in seen:
        rows = labels == label
        out.append((str(label), t[rows], np.ascontiguousarray(X[rows]),
                    None if U is None else np.ascontiguousarray(U[rows])))
    return out


class SymbolicODE:
    """Discovers ``d state / dt = f(states, inputs, t)`` from trajectories, every candidate
    integrated inside the runtime and fitted through the integrator (docs/ode.md).

    Keywords: ``budget`` (seconds; 60 when neither it nor ``max_evals`` is given), ``max_evals``
    (first-stage candidates), ``threads``, ``seed``, ``ops``, ``max_complexity``, ``autonomous``
    (right-hand sides that do not read the time), ``segment`` (observations per shooting
    segment), ``max_step`` (the largest Runge-Kutta step; default the median gap),
    ``fixed_initial``, ``feature_names`` (the states' names, ``x0, x1, ...`` by default),
    ``input_names``, ``settings`` (any setting of the search by name), ``select`` (the model
    chosen from the front, as ``--select``: ``"best"``, ``"accuracy"`` or ``"score"``).

    After ``fit``: ``front_``, the Pareto front (dicts as ``ndvm search --format json`` gives
    them, by complexity); ``best_``, the member ``select`` chooses (by default the highest
    score among the members within 1.5 times the lowest training loss), which ``predict``,
    ``simulate`` and ``score`` use; ``equations_``, its right-hand sides as infix text;
    ``result_``, the whole result.
    """

    def __init__(
        self,
        *,
        budget: Optional[float] = None,
        max_evals: Optional[int] = None,
        threads: Optional[int] = None,
        seed: int = 1,
        ops: Optional[Sequence[str]] = None,
        max_complexity: Optional[int] = None,
        autonomous: bool = False,
        segment: int = 8,
        max_step: Optional[float] = None,
        fixed_initial: bool = False,
        feature_names: Optional[Sequence[str]] = None,
        input_names: Optional[Sequence[str]] = None,
        settings: Optional[Mapping[str, Any]] = None,
        select: str = "best",
    ):
        self.budget = budget
        self.max_evals = max_evals
        self.threads = threads
        self.seed = seed
        self.ops = ops
        self.max_complexity = max_complexity
        self.autonomous = autonomous
        self.segment = segment
        self.max_step = max_step
        self.fixed_initial = fixed_initial
        self.feature_names = feature_names
        self.input_names = input_names
        self.settings = settings
        self.select = select

    def _settings(self) -> List[str]:
        import json

        out = [f"seed={int(self.seed)}"]
        if self.ops is not None:
            ops = self.ops.split(",") if isinstance(self.ops, str) else list(self.ops)
            out.append("ops=" + json.dumps(ops))
        if self.max_complexity is not None:
            out.append(f"max_complexity={int(self.max_complexity)}")
        for k, v in (self.settings or {}).items():
            out.append(f"{k}={json.dumps(v)}")
        return out

    def fit(self, X: Any, t: Any = None, trajectory: Any = None, u: Any = None,
            tests: Optional[Mapping[str, Tuple[Any, ...]]] = None) -> "SymbolicODE":
        """Fits on the rows of ``X`` (rows by states) observed at times ``t``; ``trajectory``
        labels each row's trajectory (one trajectory when ``None``); ``u`` holds measured
        inputs (rows by inputs). ``tests``: named held-out sets ``(X, t[, trajectory[, u]])``,
        each scored from its trajectories' first rows."""
        train = _trajectories(X, t, trajectory, u)
        d = train[0][2].shape[1]
        states = list(self.feature_names) if self.feature_names is not None else [f"x{i}" for i in range(d)]
        if len(states) != d:
            raise ValueError(f"feature_names has {len(states)} names for {d} states")
        m = 0 if train[0][3] is None else train[0][3].shape[1]
        inputs = list(self.input_names) if self.input_names is not None else [f"u{j}" for j in range(m)]
        if len(inputs) != m:
            raise ValueError(f"input_names has {len(inputs)} names for {m} inputs")
        test_sets = []
        for name, parts in (tests or {}).items():
            parts = tuple(parts) + (None,) * (4 - len(parts))
            test_sets.append((name, _trajectories(parts[0], parts[1], parts[2], parts[3])))
        self.result_ = _ode_search(
            "t", states, inputs, train, test_sets, settings=self._settings(), budget=self.budget,
            max_evals=self.max_evals, threads=self.threads, autonomous=self.autonomous,
            segment=self.segment, max_step=self.max_step, fixed_initial=self.fixed_initial,
            select=self.select)
        self.front_ = self.result_["front"]
        if not self.front_:
            raise RuntimeError("the search found no system that could be integrated")
        self.best_ = next((f for f in self.front_ if f.get("selected")), None) or min(
            self.front_, key=lambda f: f["train_loss"] if f["train_loss"] is not None else np.inf
        )
        self.states_ = states
        self.inputs_ = inputs
        self.equations_ = [self.best_["equations"][s]["infix"] for s in states]
        return self

    def _check(self) -> None:
        if not hasattr(self, "best_"):
            raise RuntimeError("this SymbolicODE is not fitted yet: call fit first")

    def _params(self, member: Optional[Mapping[str, Any]] = None) -> List[Tuple[str, float]]:
        m = member or self.best_
        return [(k, float(v)) for k, v in m["params"].items()]

    def predict(self, X: Any, u: Any = None, t: Any = None) -> np.ndarray:
        """The derivatives ``d state / dt`` at each row of ``X`` (rows by states)."""
        self._check()
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[:, None]
        bind_base: Dict[str, Any] = dict(self.best_["params"])
        for i, s in enumerate(self.states_):
            bind_base[s] = lanes(np.ascontiguousarray(X[:, i]))
        if u is not None:
            U = np.asarray(u, dtype=np.float64).reshape(len(X), -1)
            for j, n in enumerate(self.inputs_):
                bind_base[n] = lanes(np.ascontiguousarray(U[:, j]))
        if t is not None:
            bind_base["t"] = lanes(np.asarray(t, dtype=np.float64))
        out = np.empty_like(X)
        for i, s in enumerate(self.states_):
            program = Program(self.best_["equations"][s]["src"], lane_errors="nan")
            bind = {k: v for k, v in bind_base.items() if k in program.inputs}
            value = np.asarray(program(bind), dtype=np.float64)
            out[:, i] = np.broadcast_to(value, (len(X),))
        return out

    def simulate(self, x0: Any, t: Any, u: Any = None) -> np.ndarray:
        """The best system integrated from ``x0`` across the times ``t`` (rows by states), by
        the runtime's RK4 integration program."""
        self._check()
        x0 = [float(v) for v in np.atleast_1d(np.asarray(x0, dtype=np.float64))]
        t = np.asarray(t, dtype=np.float64)
        U = None if u is None else np.ascontiguousarray(np.asarray(u, dtype=np.float64).reshape(len(t), -1))
        rhs = [self.best_["equations"][s]["src"] for s in self.states_]
        path = _ode_simulate("t", self.states_, self.inputs_, rhs, self._params(), x0, t, U,
                             self.max_step)
        return np.asarray(path, dtype=np.float64)

    def score(self, X: Any, t: Any = None, trajectory: Any = None, u: Any = None) -> float:
        """R^2 of the system integrated from each trajectory's first row against ``X``, pooled
        over the states (scikit-learn's ``variance_weighted``)."""
        self._check()
        ssr = 0.0
        parts = _trajectories(X, t, trajectory, u)
        allx = np.concatenate([p[2] for p in parts])
        mean = allx.mean(axis=0)
        sst = float(np.sum((allx - mean) ** 2))
        for _, tt, xx, uu in parts:
            sim = self.simulate(xx[0], tt, uu)
            ssr += float(np.sum((sim - xx) ** 2))
        return 1.0 - ssr / sst if sst > 0 else float("nan")

    def print(self) -> None:
        """The best system, one line per state."""
        self._check()
        for s, e in zip(self.states_, self.equations_):
            print(f"d{s}/dt = {e}")

    def export(self, to: str = "numpy", member: Optional[Mapping[str, Any]] = None) -> List[Any]:
        """Each state's right-hand side through :mod:`ndvm.export` (``"numpy"``, ``"jax"``,
        ``"torch"``, ``"sympy"`` or ``"latex"``), with the fitted constants bound: a function
        of the states (and inputs, time) per state, or an expression."""
        from . import export

        self._check()
        m = member or self.best_
        convert = {"numpy": export.to_numpy, "jax": export.to_jax, "torch": export.to_torch,
                   "sympy": export.to_sympy, "latex": export.to_latex}
        if to not in convert:
            raise ValueError(f"to must be one of {', '.join(convert)}, not {to!r}")
        out = []
        for s in self.states_:
            src = m["equations"][s]["src"]
            reads = set(Program(src).inputs)
            params = {k: v for k, v in m["params"].items() if k in reads}
            out.append(convert[to]({"src": src, "params": params}))
        return out

    def sympy(self) -> List[Any]:
        """The best system's right-hand sides as sympy expressions (needs sympy)."""
        import sympy

        self._check()
        names = {n: sympy.Symbol(n) for n in [*self.states_, *self.inputs_, "t"]}
        return [sympy.sympify(e, locals=names) for e in self.equations_]
