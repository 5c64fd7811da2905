"""``ndvm.export``: a settled program in the user's own code, at full speed.

``to_numpy``, ``to_jax`` and ``to_torch`` return a Python function of the program's inputs (as
keyword arguments) computing one lane's value (a scalar input may be an array of lanes where the
program is elementwise; ``jax.vmap`` batches any program), with its code as ``.source`` and its
inputs as ``.inputs``; ``to_sympy`` returns a sympy expression and ``to_latex`` a string. A
program is an :class:`ndvm.Program`, a source string, or a member of a search's front (a dict
with ``"src"`` and ``"params"``: its fitted constants are bound, so the function takes the data
inputs only). The translation is the one of ``ndvm export``; a form the target cannot express
raises :class:`ndvm.ExportError` naming it and its line. NumPy is always there; JAX, PyTorch and
sympy are imported when asked for (``pip install "./python[export]"`` brings JAX and sympy).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Mapping, Tuple, Union

from ._ndvm import Program, _export, _latex
from .errors import ExportError

ProgramLike = Union[Program, str, Mapping[str, Any]]

_PACKAGES = {"numpy": "numpy", "jax": "jax", "torch": "torch", "sympy": "sympy"}


def _source(program: ProgramLike) -> Tuple[str, bool, Dict[str, float]]:
    """The source, whether its ops are protected, and the constants a front member binds."""
    if isinstance(program, Program):
        return program.source, program.protected_ops, {}
    if isinstance(program, str):
        return program, False, {}
    if isinstance(program, Mapping) and "src" in program:
        return str(program["src"]), False, {str(k): float(v) for k, v in
                                             dict(program.get("params") or {}).items()}
    raise TypeError(
        f"expected an ndvm.Program, a source string or a front member dict, not "
        f"{type(program).__name__}"
    )


def _need(target: str) -> None:
    try:
        importlib.import_module(_PACKAGES[target])
    except ImportError:
        raise ImportError(
            f"exporting to {target} needs {_PACKAGES[target]}: pip install {_PACKAGES[target]} "
            "(or pip install 'ndvm[export]')"
        ) from None


def _function(program: ProgramLike, target: str) -> Callable[..., Any]:
    source, protected, bound = _source(program)
    _need(target)
    code, inputs = _export(source, target, protected)
    namespace: Dict[str, Any] = {}
    exec(compile(code, f"<ndvm export to {target}>", "exec"), namespace)  # noqa: S102
    raw = namespace["program"]
    names = [n for n, _ in inputs]
    free = [n for n in names if n not in bound]

    def program_fn(**kwargs: Any) -> Any:
        given = {**bound, **kwargs}
        missing = [n for n in names if n not in given]
        if missing:
            raise TypeError(f"program() missing input(s): {', '.join(missing)}")
        extra = [k for k in kwargs if k not in names]
        if extra:
            raise TypeError(f"program() got input(s) it does not have: {', '.join(extra)}")
        return raw(**given)

    program_fn.source = code  # type: ignore[attr-defined]
    program_fn.inputs = free  # type: ignore[attr-defined]
    program_fn.__doc__ = f"The program exported to {target}; inputs: {', '.join(free)}."
    return program_fn


def to_numpy(program: ProgramLike) -> Callable[..., Any]:
    """The program as a NumPy function of its inputs."""
    return _function(program, "numpy")


def to_jax(program: ProgramLike) -> Callable[..., Any]:
    """The program as a JAX function (``jax.jit``, ``jax.grad`` and ``jax.vmap`` apply; a loop
    of constant trip count is a ``fori_loop``, reverse-differentiable, another a
    ``while_loop``). It computes in JAX's precision: float64 needs
    ``jax.config.update("jax_enable_x64", True)``."""
    return _function(program, "jax")


def to_torch(program: ProgramLike) -> Callable[..., Any]:
    """The program as a PyTorch function (autograd applies; numbers become float64 tensors)."""
    return _function(program, "torch")


def to_sympy(program: ProgramLike) -> Any:
    """The program as a sympy expression of symbols named by its inputs (a vector or matrix
    program gives a sympy Matrix)."""
    import sympy

    fn = _function(program, "sympy")
    symbols = {n: sympy.Symbol(n) for n in fn.inputs}  # type: ignore[attr-defined]
    try:
        return fn(**symbols)
    except TypeError as e:
        if "truth value" in str(e) or "Relational" in str(e):
            raise ExportError(
                "a loop whose end depends on the inputs cannot be a sympy expression (export "
                "it to NumPy, JAX or PyTorch)"
            ) from None
        raise


def to_latex(program: ProgramLike) -> str:
    """The program as LaTeX math (loop-free programs of numbers); a front member's constants
    appear as their fitted values."""
    source, _, bound = _source(program)
    if not bound:
        return _latex(source)
    import sympy

    expr = to_sympy(program)
    return str(sympy.latex(expr))


__all__ = ["to_numpy", "to_jax", "to_torch", "to_sympy", "to_latex", "ExportError"]
