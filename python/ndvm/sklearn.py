"""``ndvm.SymbolicRegressor``: the search as a scikit-learn estimator (needs scikit-learn).

>>> import numpy as np, ndvm
>>> X = np.random.default_rng(0).uniform(-2, 2, size=(200, 2))
>>> y = 2.5 * X[:, 0] * np.sin(X[:, 1]) + 0.5
>>> model = ndvm.SymbolicRegressor(max_evals=4000, progress=False).fit(X, y)
>>> model.best_["infix"]                                        # doctest: +SKIP
'0.5 + 2.5*sin(x1)*x0'
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_is_fitted

from ._ndvm import Program, lanes
from .search import _names_of, _string_columns, search


class SymbolicRegressor(RegressorMixin, BaseEstimator):
    """Finds programs (formulas, recurrences) with fitted constants that model ``y`` from ``X``.

    Every keyword is an option of ``ndvm search`` (``docs/search.md``): ``budget`` (seconds;
    60 when neither it nor ``max_evals`` is given), ``max_evals``, ``ops``, ``max_complexity``,
    ``seed``, ``threads``, ``islands``, ``population``, ``parsimony``, ``optimizer`` (``--fit``:
    ``"lm"``, ``"lbfgs"``, ``"adam"``), ``iterations``, ``restarts``, ``fit_rows``, ``iterate``
    (``"auto"``, ``"on"``, ``"off"``), ``share``, ``max_steps``, ``max_memory_mb``,
    ``settings`` (any other setting by name), ``proposer``, ``proposer_only``,
    ``on_proposer_error``, ``seed_programs``, ``max_depth``, ``complexity_of``, ``constraints``, ``nested`` (as ``--complexity-of``,
    ``--constraints``, ``--nested``), ``units``, ``dimensional_penalty``, ``loss`` (``"l2"``, ``"l1"``, ``"huber:DELTA"``, ``"logcosh"``, ``"relative"``, as
    ``--loss``), ``select`` (the model chosen from the front:
    ``"best"``, ``"accuracy"`` or ``"score"``, as ``--select``), ``early_stop`` (``"1e-10@20"``). ``progress``: a progress bar (tqdm when it is
    installed; nothing otherwise).

    After ``fit``: ``equations_``, the Pareto front of complexity against training error (a
    pandas DataFrame when pandas is installed, else a list of dicts, sorted by complexity, with
    ``complexity``, ``train_loss``, ``src``, ``params``, ``infix`` and a column of NMSE per
    test set); ``best_``, the member ``select`` chooses (by default the highest score among
    the members within 1.5 times the lowest training error), which ``predict`` evaluates;
    ``result_``, the whole result of :func:`ndvm.search`.
    """

    def __init__(
        self,
        *,
        budget: Optional[float] = None,
        max_evals: Optional[int] = None,
        ops: Union[None, str, Sequence[str]] = None,
        max_complexity: Optional[int] = None,
        seed: int = 1,
        threads: Optional[int] = None,
        islands: Optional[int] = None,
        population: Optional[int] = None,
        parsimony: Optional[float] = None,
        optimizer: str = "lm",
        iterations: Optional[int] = None,
        restarts: Optional[int] = None,
        fit_rows: Optional[int] = None,
        iterate: Optional[str] = None,
        share: Optional[bool] = None,
        max_steps: Optional[int] = None,
        max_memory_mb: Optional[int] = None,
        settings: Optional[Mapping[str, Any]] = None,
        proposer: Optional[Any] = None,
        proposer_only: bool = False,
        on_proposer_error: str = "continue",
        seed_programs: Optional[Sequence[Mapping[str, Any]]] = None,
        select: str = "best",
        early_stop: Optional[str] = None,
        loss: str = "l2",
        max_depth: Optional[int] = None,
        complexity_of: Optional[str] = None,
        constraints: Optional[str] = None,
        nested: Optional[str] = None,
        units: Optional[str] = None,
        dimensional_penalty: Optional[float] = None,
        progress: bool = True,
    ):
        self.budget = budget
        self.max_evals = max_evals
        self.ops = ops
        self.max_complexity = max_complexity
        self.seed = seed
        self.threads = threads
        self.islands = islands
        self.population = population
        self.parsimony = parsimony
        self.optimizer = optimizer
        self.iterations = iterations
        self.restarts = restarts
        self.fit_rows = fit_rows
        self.iterate = iterate
        self.share = share
        self.max_steps = max_steps
        self.max_memory_mb = max_memory_mb
        self.settings = settings
        self.proposer = proposer
        self.proposer_only = proposer_only
        self.on_proposer_error = on_proposer_error
        self.seed_programs = seed_programs
        self.select = select
        self.early_stop = early_stop
        self.loss = loss
        self.max_depth = max_depth
        self.complexity_of = complexity_of
        self.constraints = constraints
        self.nested = nested
        self.units = units
        self.dimensional_penalty = dimensional_penalty
        self.progress = progress

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "SymbolicRegressor":
        """Runs the search on ``X`` (2-D array or DataFrame) and ``y``, each row's loss
        weighted by ``sample_weight`` when given; returns self."""
        names, arr = _names_of(X, None)
        y = np.asarray(y) if y is not None else y
        if y is not None and y.ndim == 2 and y.shape[1] == 1:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; it is read as "
                "y.ravel()",
                DataConversionWarning,
                stacklevel=2,
            )
            y = np.ravel(y)
        if _string_columns(X) is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if y is not None and y.ndim == 2 and y.shape[1] > 1:
            # Several targets: a search and a front for each, the budget shared.
            k = y.shape[1]
            budget = self.budget / k if self.budget is not None else (
                None if self.max_evals is not None else 60.0 / k)
            results = [self._search(arr, y[:, j], names, sample_weight, budget) for j in range(k)]
            self.result_: Dict[str, Any] = {
                "summary": {"targets": k, "per_target": [r["summary"] for r in results]},
                "fronts": [r["front"] for r in results],
                "selected": [r["selected"] for r in results],
            }
            self.best_: Any = [self._chosen(r) for r in results]
            self.equations_ = [_table(r["front"]) for r in results]
            self.n_features_in_ = arr.shape[1]
            self._input_names = names
            return self
        result = self._search(arr, y, names, sample_weight, self.budget)
        self.n_features_in_ = arr.shape[1]
        self._input_names = names
        self.result_ = result
        self.best_ = self._chosen(result)
        self.equations_ = _table(result["front"])
        return self

    def _search(self, arr: np.ndarray, y: Any, names: List[str], sample_weight: Any,
                budget: Optional[float]) -> Dict[str, Any]:
        bar = _Progress(budget, self.max_evals) if self.progress else None
        try:
            result = search(
                arr,
                y,
                names=names,
                budget=budget,
                max_evals=self.max_evals,
                threads=self.threads,
                proposer=self.proposer,
                proposer_only=self.proposer_only,
                on_proposer_error=self.on_proposer_error,
                seed_programs=self.seed_programs,
                progress=bar.update if bar else None,
                ops=self.ops,
                max_complexity=self.max_complexity,
                seed=self.seed,
                islands=self.islands,
                population=self.population,
                parsimony=self.parsimony,
                optimizer=self.optimizer,
                iterations=self.iterations,
                restarts=self.restarts,
                fit_rows=self.fit_rows,
                iterate=self.iterate,
                share=self.share,
                max_steps=self.max_steps,
                max_memory_mb=self.max_memory_mb,
                settings=self.settings,
                select=self.select,
                early_stop=self.early_stop,
                sample_weight=sample_weight,
                loss=self.loss,
                max_depth=self.max_depth,
                complexity_of=self.complexity_of,
                constraints=self.constraints,
                nested=self.nested,
                units=self.units,
                dimensional_penalty=self.dimensional_penalty,
            )
        finally:
            if bar:
                bar.close()
        if result.get("interrupted"):
            warnings.warn(
                "the search was interrupted (Ctrl-C); the front found so far is kept",
                RuntimeWarning,
                stacklevel=2,
            )
        if not result["front"]:
            raise RuntimeError(
                "the search found no program that fits (every candidate failed); "
                f"summary: {result['summary']}"
            )
        return result

    @staticmethod
    def _chosen(result: Mapping[str, Any]) -> Dict[str, Any]:
        front = result["front"]
        return next((m for m in front if m.get("selected")), None) or min(
            front, key=lambda m: m["train_loss"]
        )

    def predict(self, X: Any) -> np.ndarray:
        """The chosen program's value on each row of ``X`` (NaN where it is not finite); with
        several targets, a column per target."""
        check_is_fitted(self, "best_")
        if isinstance(self.best_, list):
            return np.column_stack([self._evaluate(m, X) for m in self.best_])
        return self._evaluate(self.best_, X)

    def _evaluate(self, member: Mapping[str, Any], X: Any) -> np.ndarray:
        if _string_columns(X) is not None and hasattr(self, "feature_names_in_"):
            names, arr = _names_of(X, None, min_rows=1)
            missing = [n for n in self._input_names if n not in names]
            if missing:
                raise ValueError(f"X has no column {missing[0]!r}")
            arr = np.column_stack([arr[:, names.index(n)] for n in self._input_names])
        else:
            X = np.asarray(X)
            if X.ndim == 2 and X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input"
                )
            _, arr = _names_of(X, self._input_names if X.ndim == 2 else None, min_rows=1)
        program = Program(member["src"], lane_errors="nan")
        bind: Dict[str, Any] = dict(member["params"])
        for j, n in enumerate(self._input_names):
            if n in program.inputs:
                bind[n] = lanes(arr[:, j])
        value = np.asarray(program(bind), dtype=np.float64)
        if value.ndim == 0:
            value = np.full(arr.shape[0], float(value))
        return value

    def sympy(self, index: Optional[int] = None) -> Any:
        """A front member (the best by default, else ``equations_`` row ``index``) as a sympy
        expression with its fitted constants (needs sympy; a program with a loop has none)."""
        check_is_fitted(self, "best_")
        if isinstance(self.best_, list):
            if index is not None:
                raise ValueError("several targets: index a member of result_['fronts'][j]")
            return [to_sympy(m["src"], m["params"]) for m in self.best_]
        member = self.best_ if index is None else self.result_["front"][index]
        return to_sympy(member["src"], member["params"])

    def latex(self, index: Optional[int] = None) -> Union[str, List[str]]:
        """The member of :meth:`sympy` as LaTeX (a list with several targets)."""
        import sympy

        e = self.sympy(index)
        return [sympy.latex(x) for x in e] if isinstance(e, list) else sympy.latex(e)

    def _member(self, index: Optional[int]) -> Dict[str, Any]:
        check_is_fitted(self, "best_")
        if isinstance(self.best_, list):
            raise ValueError("several targets: export a member of result_['fronts'][j] by its src")
        return self.best_ if index is None else self.result_["front"][index]

    def numpy(self, index: Optional[int] = None) -> Any:
        """A front member (the best by default) as a NumPy function of the inputs, its fitted
        constants bound (``ndvm.export.to_numpy``)."""
        from .export import to_numpy

        return to_numpy(self._member(index))

    def jax(self, index: Optional[int] = None) -> Any:
        """A front member as a JAX function of the inputs (``ndvm.export.to_jax``)."""
        from .export import to_jax

        return to_jax(self._member(index))

    def pytorch(self, index: Optional[int] = None) -> Any:
        """A front member as a PyTorch function of the inputs (``ndvm.export.to_torch``)."""
        from .export import to_torch

        return to_torch(self._member(index))

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


def _table(front: List[Dict[str, Any]]) -> Any:
    rows = []
    for m in front:
        row = {k: m[k] for k in ("complexity", "train_loss", "infix", "src", "params")}
        for name, t in m.get("tests", {}).items():
            row[f"{name}_nmse"] = t.get("nmse")
        rows.append(row)
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


class _Progress:
    """A tqdm bar over the budget (or the evaluations); nothing when tqdm is missing."""

    def __init__(self, budget: Optional[float], max_evals: Optional[int]):
        try:
            from tqdm.auto import tqdm
        except ImportError:
            self.bar = None
            return
        self.by_time = max_evals is None or budget is not None
        total = (budget if budget is not None else 60.0) if self.by_time else max_evals
        unit = "s" if self.by_time else " evals"
        self.bar = tqdm(total=total, unit=unit, leave=False)
        self.done = 0.0

    def update(self, p: Dict[str, Any]) -> None:
        if self.bar is None:
            return
        now = p["seconds"] if self.by_time else p["evaluations"]
        self.bar.update(max(now - self.done, 0))
        self.done = max(now, self.done)
        best = p.get("best_loss")
        self.bar.set_postfix(best=f"{best:.3e}" if best is not None else "-", front=p["front"])

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


_SYMPY_UNARY = {
    "sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log", "sqrt": "sqrt",
    "abs": "Abs", "tanh": "tanh",
}


def to_sympy(src: str, params: Mapping[str, float]) -> Any:
    """A program of the object language without loops as a sympy expression, its parameters
    replaced by their values."""
    import sympy

    tokens = src.replace("(", " ( ").replace(")", " ) ").split()
    pos = 0

    def read() -> Any:
        nonlocal pos
        t = tokens[pos]
        pos += 1
        if t != "(":
            return t
        out = []
        while tokens[pos] != ")":
            out.append(read())
        pos += 1
        return out

    tree = read()

    def conv(e: Any, env: Dict[str, Any]) -> Any:
        if isinstance(e, str):
            if e in env:
                return env[e]
            if e.lstrip("-").isdigit():
                return sympy.Integer(int(e))
            try:
                return sympy.Float(float(e))
            except ValueError:
                pass
            if e in params:
                return sympy.Float(params[e])
            return sympy.Symbol(e)
        head, args = e[0], e[1:]
        if head in ("let", "let*"):
            inner = dict(env)
            for name, value in args[0]:
                inner[name] = conv(value, inner if head == "let*" else env)
            return conv(args[1], inner)
        if head in ("loop", "recur", "if"):
            raise ValueError("a program with a loop or a branch has no closed form for sympy")
        a = [conv(x, env) for x in args]
        if head == "+":
            return sympy.Add(*a)
        if head == "*":
            return sympy.Mul(*a)
        if head == "-":
            return -a[0] if len(a) == 1 else a[0] - sympy.Add(*a[1:])
        if head == "/":
            return 1 / a[0] if len(a) == 1 else a[0] / sympy.Mul(*a[1:])
        if head in ("pow", "expt"):
            return a[0] ** a[1]
        if head == "square":
            return a[0] ** 2
        if head == "cube":
            return a[0] ** 3
        if head == "neg":
            return -a[0]
        if head == "inv":
            return 1 / a[0]
        if head == "min":
            return sympy.Min(*a)
        if head == "max":
            return sympy.Max(*a)
        if head in _SYMPY_UNARY:
            return getattr(sympy, _SYMPY_UNARY[head])(*a)
        raise ValueError(f"`{head}` has no sympy form")

    return conv(tree, {})
