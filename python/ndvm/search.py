"""``ndvm.search``: the search of ``ndvm search`` on NumPy arrays or a pandas DataFrame.

The search is the command's own (the same engine, settings and seed give the same front); the
result is the dict that ``ndvm search --format json`` prints: ``{"summary": {...}, "front":
[{"complexity", "train_loss", "tests", "src", "params", "infix"}, ...]}``.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ._ndvm import Program, _search

_METHODS = {"lm": "Lm", "lbfgs": "Lbfgs", "adam": "Adam"}
_ITERATE = {"auto": "Auto", "on": "On", "off": "Off"}


def _names_of(
    X: Any, names: Optional[Sequence[str]], min_rows: int = 2
) -> Tuple[List[str], np.ndarray]:
    """The input names and X as a 2-D float64 array, or ValueError naming the column."""
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise TypeError(
            "Sparse data was passed, but dense data is required (sparse input is not "
            "supported): give X.toarray()"
        )
    columns = _string_columns(X)
    if columns is not None and names is None:
        names = [str(c) for c in columns]
        cols = [_numeric(np.asarray(X[name]), name) for name in names]
        arr = np.column_stack(cols) if cols else np.empty((len(X), 0))
    else:
        arr = np.asarray(X)
        if arr.ndim == 1:
            raise ValueError(
                "X is 1-D: Reshape your data to a 2-D array of rows by inputs "
                "(X.reshape(-1, 1) for one input)"
            )
        if arr.ndim != 2:
            raise ValueError(f"X has {arr.ndim} dimensions: give a 2-D array of rows by inputs")
        if names is None:
            names = [f"x{j}" for j in range(arr.shape[1])]
        names = [str(n) for n in names]
        if len(names) != arr.shape[1]:
            raise ValueError(f"{len(names)} names for the {arr.shape[1]} columns of X")
        arr = np.column_stack([_numeric(arr[:, j], names[j]) for j in range(arr.shape[1])]) \
            if arr.shape[1] else arr.astype(np.float64)
    if arr.shape[1] == 0:
        raise ValueError(
            f"X has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required: a "
            "search needs at least one input"
        )
    if arr.shape[0] < min_rows:
        raise ValueError(
            f"X has {arr.shape[0]} row(s) (n_samples = {arr.shape[0]}); at least {min_rows} "
            "are needed"
        )
    for n in names:
        _check_name(n)
    if len(set(names)) != len(names):
        raise ValueError(f"X: a column name appears twice: {names}")
    return names, arr


def _string_columns(X: Any) -> Optional[List[str]]:
    """A DataFrame's column names when they are all strings (as scikit-learn takes them as
    feature names), else None: the columns are then named x0, x1, ..."""
    columns = getattr(X, "columns", None)
    if columns is None or not all(isinstance(c, str) for c in columns):
        return None
    return list(columns)


def _numeric(col: np.ndarray, name: str, what: str = "X") -> np.ndarray:
    """One column as float64: an error naming it when it is not numbers or not finite."""
    if col.dtype.kind == "c":
        raise ValueError(f"{what}: column {name!r}: Complex data not supported")
    if col.dtype.kind not in "biuf":
        try:
            col = col.astype(np.float64)
        except ValueError as e:
            raise ValueError(f"{what}: column {name!r} is not numeric ({col.dtype}): {e}") from None
        except TypeError as e:
            raise TypeError(f"{what}: column {name!r} is not numeric ({col.dtype}): {e}") from None
    col = np.ascontiguousarray(col, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(col))
    if bad.size:
        raise ValueError(
            f"{what}: column {name!r} contains NaN or infinity ({col[bad[0]]} at row {bad[0]}): "
            "every number must be finite"
        )
    return col


def _check_name(name: str) -> None:
    try:
        ok = Program(name).inputs == [name]
    except Exception:  # noqa: BLE001 - any failure to read it means it is not a variable
        ok = False
    if not ok:
        raise ValueError(
            f"X: column {name!r} cannot be an input's name: a program would not read it as a "
            "variable (it is a keyword or primitive of the language, or not a plain name); "
            "rename it"
        )


def _target(y: Any, rows: int, what: str = "y") -> np.ndarray:
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None")
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D (one target per row), not of shape {arr.shape}")
    if arr.shape[0] != rows:
        raise ValueError(f"{what} has {arr.shape[0]} rows where X has {rows}")
    return _numeric(arr, "y" if what == "y" else what, what)


def settings_of(
    ops: Union[None, str, Sequence[str]] = None,
    max_complexity: Optional[int] = None,
    seed: Optional[int] = None,
    islands: Optional[int] = None,
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
    migration_interval: Optional[int] = None,
) -> List[str]:
    """The keywords as ``--set`` assignments, as ``ndvm search``'s flags set them."""
    out: Dict[str, Any] = {}
    if ops is not None:
        out["ops"] = [o.strip() for o in ops.split(",")] if isinstance(ops, str) else list(ops)
    if max_complexity is not None:
        out["max_complexity"] = int(max_complexity)
    if seed is not None:
        out["seed"] = int(seed)
    if islands is not None:
        out["islands"] = int(islands)
    if migration_interval is not None:
        out["migration_interval"] = int(migration_interval)
    if population is not None:
        out["population"] = int(population)
        out["offspring"] = max(int(population) // 2, 1)
    if parsimony is not None:
        out["parsimony"] = float(parsimony)
    if optimizer is not None:
        if optimizer not in _METHODS:
            raise ValueError(f"optimizer={optimizer!r}: expected one of {sorted(_METHODS)}")
        out["fit.method"] = _METHODS[optimizer]
    if iterations is not None:
        out["fit.iterations"] = int(iterations)
    if restarts is not None:
        out["fit.restarts"] = int(restarts)
        out["fit.loop_restarts"] = max(int(restarts), 3)
    if fit_rows is not None:
        out["fit_rows"] = int(fit_rows)
    if iterate is not None:
        if iterate not in _ITERATE:
            raise ValueError(f"iterate={iterate!r}: expected one of {sorted(_ITERATE)}")
        out["iterate"] = _ITERATE[iterate]
    if share is not None:
        out["share"] = bool(share)
    if max_steps is not None:
        out["fit.max_steps"] = int(max_steps)
    if max_memory_mb is not None:
        out["fit.max_memory_mb"] = int(max_memory_mb)
    for k, v in (settings or {}).items():
        out[k] = v
    return [f"{k}={json.dumps(v)}" for k, v in out.items()]


Table = Tuple[List[str], List[np.ndarray], List[Tuple[str, List[np.ndarray]]]]


def _tables(
    X: Any, y: Any, names: Optional[Sequence[str]], tests: Optional[Mapping[str, Tuple[Any, Any]]]
) -> Table:
    """The columns' names (inputs then target), the training columns and the test sets'
    columns of a search, checked: a ValueError names the offending column or row."""
    input_names, arr = _names_of(X, names)
    target = "y" if "y" not in input_names else "target"
    yy = _target(y, arr.shape[0])
    all_names = input_names + [target]
    columns = [arr[:, j].copy() for j in range(arr.shape[1])] + [yy]
    test_sets = []
    for name, pair in (tests or {}).items():
        try:
            tx, ty = pair
        except (TypeError, ValueError):
            raise ValueError(f"tests[{name!r}] must be a pair (X, y)") from None
        named = _string_columns(tx) is not None
        t_names, t_arr = _names_of(tx, None if named else input_names)
        if named:
            missing = [n for n in input_names if n not in t_names]
            if missing:
                raise ValueError(f"tests[{name!r}]: no column {missing[0]!r}")
            t_arr = np.column_stack([t_arr[:, t_names.index(n)] for n in input_names])
        elif t_arr.shape[1] != len(input_names):
            raise ValueError(
                f"tests[{name!r}]: X has {t_arr.shape[1]} columns where the training X has "
                f"{len(input_names)}"
            )
        t_y = _target(ty, t_arr.shape[0], f"tests[{name!r}] y")
        test_sets.append(
            (str(name), [t_arr[:, j].copy() for j in range(t_arr.shape[1])] + [t_y])
        )
    return all_names, columns, test_sets


def search(
    X: Any,
    y: Any,
    *,
    names: Optional[Sequence[str]] = None,
    tests: Optional[Mapping[str, Tuple[Any, Any]]] = None,
    budget: Optional[float] = None,
    max_evals: Optional[int] = None,
    threads: Optional[int] = None,
    proposer: Optional[Any] = None,
    proposer_only: bool = False,
    on_proposer_error: str = "continue",
    seed_programs: Optional[Sequence[Mapping[str, Any]]] = None,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    ops: Union[None, str, Sequence[str]] = None,
    max_complexity: Optional[int] = None,
    seed: int = 1,
    islands: Optional[int] = None,
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
    select: str = "best",
    early_stop: Optional[str] = None,
    sample_weight: Any = None,
    loss: str = "l2",
    max_depth: Optional[int] = None,
    complexity_of: Optional[str] = None,
    constraints: Optional[str] = None,
    nested: Optional[str] = None,
    units: Optional[str] = None,
    dimensional_penalty: Optional[float] = None,
) -> Dict[str, Any]:
    """Searches for programs that model ``y`` from the columns of ``X``, like ``ndvm search``.

    ``X`` is a 2-D array of rows by inputs (inputs named ``x0, x1, ...`` or by ``names``) or a
    pandas DataFrame (inputs named by its columns); ``y`` has one value per row. ``tests`` maps
    a name to ``(X, y)`` of a held-out set, scored by NMSE and R^2 for every front member.
    ``budget`` is in seconds (60 when neither it nor ``max_evals`` is given); with ``seed`` and
    ``max_evals`` the front does not depend on ``threads``, nor on whether the ``islands``
    run here or apart (:func:`ndvm.ray.search`): ``max_evals`` is split evenly over the
    islands, which migrate every ``migration_interval`` generations. The other keywords are those of
    ``ndvm search`` (``docs/search.md``; ``optimizer`` is ``--fit``); ``settings`` sets any
    other by name, as ``--set``.

    ``proposer`` is a callable ``propose(results, front) -> candidates`` (or an object with
    that ``propose`` method): called first with two empty lists, then each generation with the
    answers to its last candidates and the front, it returns ``{"src", "init", "id"}`` dicts,
    the lines of the ``--proposer`` protocol. An exception in it is reported as a
    ``RuntimeWarning`` with its traceback and in ``summary.proposer.ended``; the search goes
    on with the built-in proposer, or stops with ``on_proposer_error="stop"`` (or under
    ``proposer_only``, which ends the search when the proposer returns no candidates).

    ``sample_weight`` (one non-negative weight per row) weighs each row's loss, and ``loss``
    is ``--loss``: ``"l2"``, ``"l1"``, ``"huber:DELTA"``, ``"logcosh"`` or ``"relative"``; the
    members' ``train_loss`` is then that loss (test sets keep their NMSE and R^2).

    ``max_depth``, ``complexity_of`` (``"exp=3,sin=2"``), ``constraints`` (``"pow=(-1,1)"``)
    and ``nested`` (``"sin=sin:0,cos:0"``) are ``--max-depth``, ``--complexity-of``,
    ``--constraints`` and ``--nested``: built-in candidates that break them are never fitted.
    ``units`` (``"x=m,t=s,y=m/s^2"``) and ``dimensional_penalty`` are ``--units`` and
    ``--dimensional-penalty``: each member then has ``units_ok``.

    ``select`` chooses the model from the front as ``--select`` (``"best"``, ``"accuracy"``,
    ``"score"``): the result's ``selected`` is ``{"criterion", "complexity"}`` and the chosen
    member has ``"selected": True``. ``early_stop`` (``"1e-10@20"``, as ``--early-stop``) ends
    the search once a member at most that complex reaches that loss.

    ``progress`` is called after each generation with ``{"evaluations", "seconds", "budget",
    "best_loss", "front"}``. Ctrl-C stops the search and returns the front found so far
    (``summary.stopped`` is ``"interrupted"``).
    """
    if on_proposer_error not in ("continue", "stop"):
        raise ValueError(f"on_proposer_error={on_proposer_error!r}: expected 'continue' or 'stop'")
    all_names, columns, test_sets = _tables(X, y, names, tests)
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
        settings=dict(settings or {}, **{k: v for k, v in (
            ("max_depth", None if max_depth is None else int(max_depth)),
            ("units", units),
            ("dimensional_penalty", None if dimensional_penalty is None else float(dimensional_penalty)),
        ) if v is not None}),
    )
    return _search(
        all_names,
        columns,
        test_sets,
        settings=assignments,
        budget=budget,
        max_evals=max_evals,
        threads=threads,
        proposer=proposer,
        proposer_only=proposer_only,
        stop_on_proposer_error=on_proposer_error == "stop",
        seed_programs=list(seed_programs) if seed_programs is not None else None,
        progress=progress,
        select=select,
        early_stop=early_stop,
        weights=None if sample_weight is None else np.ascontiguousarray(sample_weight, dtype=np.float64).ravel(),
        loss=loss,
        complexity_of=complexity_of,
        constraints=constraints,
        nested=nested,
    )
