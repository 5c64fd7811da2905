"""The exceptions ndvm raises.

Every error the runtime reports about a program or its inputs is an :class:`Error`; each
carries ``kind`` (the runtime's name for it, e.g. ``"StepBudget"``), ``line`` and ``column``
(1-based, ``None`` when it points at no form) and ``span`` (byte offsets into the source).
"""

from __future__ import annotations

from typing import List, Optional, Tuple


class Error(Exception):
    """Base class of ndvm's errors."""

    kind: str = "Error"
    line: Optional[int] = None
    column: Optional[int] = None
    span: Optional[Tuple[int, int]] = None


class ProgramSyntaxError(Error, SyntaxError):
    """The source does not read or decode: unbalanced brackets, a malformed special form, an
    unknown operator, a wrong argument count. ``lineno``, ``offset`` and ``text`` (the
    offending line) are set as for Python's own ``SyntaxError``."""


class BindingError(Error, ValueError):
    """The inputs do not fit the program: a missing or unknown input, lane counts that
    disagree, a value that is not numbers."""


class EvaluationError(Error, RuntimeError):
    """The program failed while running (a type, shape or domain error, a value that cannot be
    differentiated). ``lanes`` lists the lanes that failed (``None`` without a lane axis)."""

    lanes: Optional[List[int]] = None


class LimitError(EvaluationError):
    """A run exceeded its step budget (a program that loops forever), its recursion depth or
    its payload memory; raise the limit with ``Program(..., max_steps=...)``, ``max_depth``
    or ``max_memory_mb``."""


class HostError(Error, RuntimeError):
    """The machine running the program failed, not the program: the GPU device was lost or
    refused a buffer, or the runtime broke one of its own invariants (a bug to report). The
    program and its inputs may be fine; run again on the CPU, or report the message."""

    lanes: Optional[List[int]] = None


class ExportError(Error, ValueError):
    """A program has a form the export target cannot express (recursion, symbols, lists in
    sympy, an ``if`` without an else branch, a loop on symbols for sympy). ``form`` is its
    text, ``line`` and ``column`` where it is."""

    kind = "Export"
    form: Optional[str] = None


__all__ = ["Error", "ProgramSyntaxError", "BindingError", "EvaluationError", "LimitError",
           "HostError", "ExportError"]
