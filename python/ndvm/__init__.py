"""ndvm: differentiate the evaluator, not the program.

A program of a small Scheme-like language is read and decoded once and walked by one compiled
evaluator over a batch of lanes, returning its value and exact reverse-mode gradients on every
lane. Nothing is compiled per program, so a new candidate costs nothing before its first
gradient.

>>> import numpy as np, ndvm
>>> p = ndvm.Program("(* a (exp (- 0 (* b x))))")
>>> p.inputs
['a', 'b', 'x']
>>> value, grads = p.value_and_grad(wrt=["a", "b"], a=2.0, b=0.5, x=np.array([0.0, 1.0]))
>>> value.shape, grads["a"].shape
((2,), ())

``ndvm.torch`` (imported on first use; needs PyTorch) makes a program a differentiable
PyTorch op; ``ndvm.ray`` (needs Ray) runs a search's islands and a population's evaluation
over a Ray cluster.
"""

from __future__ import annotations

import importlib
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import errors
from ._ndvm import Lanes, Program, Uniform, __version__, calibrate, cosearch, lanes, uniform
from ._ndvm import _evaluate_population
from .errors import (BindingError, Error, EvaluationError, ExportError, HostError, LimitError,
                     ProgramSyntaxError)
from .search import search


class Evaluation(NamedTuple):
    """One program's result in :func:`evaluate_population`: its value (``None`` when it
    failed), its gradients (``None`` when none were asked or it failed) and its error (an
    :class:`ndvm.Error` instance, not raised, or ``None``)."""

    value: Optional[np.ndarray]
    grads: Optional[Dict[str, np.ndarray]]
    error: Optional[Error]


def evaluate_population(
    programs: Sequence[Union[Program, str]],
    bindings: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]],
    threads: Optional[int] = None,
    wrt: Optional[Sequence[str]] = None,
) -> List[Evaluation]:
    """Evaluates many programs across cores with the GIL released.

    ``programs`` are :class:`Program` objects or source strings (parsed in the workers with
    the default settings). ``bindings`` is one mapping shared by every program (each takes
    the inputs it has) or a sequence of one mapping per program. ``threads`` defaults to every
    core. ``wrt`` names inputs to differentiate (in each program that has them); ``None``
    computes values only. Returns one :class:`Evaluation` per program, in order: a program's
    error is recorded in its entry and never stops the others. Results do not depend on
    ``threads``.
    """
    return [Evaluation(*t) for t in _evaluate_population(programs, bindings, threads, wrt)]


def __getattr__(name: str) -> Any:
    # `ndvm.torch` and `ndvm.ray` are imported on first use: PyTorch and Ray stay optional.
    if name in ("torch", "ray", "export"):
        return importlib.import_module("." + name, __name__)
    # The estimator needs scikit-learn, imported only when it is asked for.
    if name == "SymbolicRegressor":
        return importlib.import_module(".sklearn", __name__).SymbolicRegressor
    if name == "SymbolicODE":
        return importlib.import_module(".ode", __name__).SymbolicODE
    raise AttributeError(f"module 'ndvm' has no attribute {name!r}")


__all__ = [
    "Program",
    "Uniform",
    "Lanes",
    "uniform",
    "lanes",
    "evaluate_population",
    "Evaluation",
    "calibrate",
    "cosearch",
    "search",
    "SymbolicRegressor",
    "SymbolicODE",
    "errors",
    "Error",
    "ProgramSyntaxError",
    "BindingError",
    "EvaluationError",
    "LimitError",
    "HostError",
    "ExportError",
    "__version__",
]
