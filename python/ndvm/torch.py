"""PyTorch: a program as a differentiable tensor op (the paper's autograd boundary).

>>> import torch, ndvm
>>> op = ndvm.torch.program_op("(* a (exp (- 0 (* b x))))")
>>> a = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
>>> b = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
>>> x = torch.linspace(0, 1, 5, dtype=torch.float64)
>>> loss = op(a=a, b=b, x=x).mean()
>>> loss.backward()
>>> a.grad is not None
True

Inputs follow the NumPy rules of :class:`ndvm.Program`: a 0-d tensor or a number is the same
on every lane, a 1-D tensor is a lane column, and ``ndvm.uniform(t)`` / ``ndvm.lanes(t)``
mark vectors and matrices. One walk of the program computes the value and the per-lane
gradients of every input that requires grad; ``backward`` only combines them with the
incoming gradient, so an optimiser step costs one walk. The program's value must be one number
per lane to be differentiated. Higher derivatives are not available (``once_differentiable``).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

try:
    import torch
    from torch.autograd.function import once_differentiable
except ImportError as e:  # PyTorch is optional for the rest of the package
    raise ImportError("ndvm.torch needs PyTorch: pip install torch") from e

from ._ndvm import Lanes, Program, Uniform

__all__ = ["ProgramFunction", "ProgramOp", "program_op"]


def _bindings(
    names: Sequence[str], marks: Sequence[str], constants: Mapping[str, Any], tensors: Sequence[torch.Tensor]
) -> Dict[str, Any]:
    bindings: Dict[str, Any] = dict(constants)
    for name, mark, t in zip(names, marks, tensors):
        a = t.detach().cpu().numpy()
        bindings[name] = Uniform(a) if mark == "uniform" else Lanes(a) if mark == "lanes" else a
    return bindings


def _result(program: Program, value: np.ndarray, tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """The value as a tensor of the inputs' promoted float type, on the first input's device."""
    if value.dtype == object:
        raise TypeError(
            "ndvm.torch: the program's value is not numbers of one shape, so it cannot be a tensor"
        )
    floats = [t.dtype for t in tensors if t.is_floating_point()]
    dtype = floats[0] if floats else (torch.float64 if program.precision == "f64" else torch.float32)
    for d in floats[1:]:
        dtype = torch.promote_types(dtype, d)
    device = tensors[0].device if tensors else _CPU
    return _tensor(value, dtype, device, None)


_CPU = torch.device("cpu")


def _tensor(a: Any, dtype: torch.dtype, device: torch.device, shape: Optional[torch.Size]) -> torch.Tensor:
    """`a` (an array or a NumPy scalar) as a tensor, converting only what differs (each torch
    call costs microseconds, which add up at one lane)."""
    t = torch.from_numpy(np.asarray(a))
    if t.dtype != dtype or device != _CPU:
        t = t.to(dtype=dtype, device=device)
    if shape is not None and t.shape != shape:
        t = t.reshape(shape)
    return t


def _kind(t: torch.Tensor, mark: str) -> str:
    if mark != "auto":
        return mark
    return "uniform" if t.dim() == 0 else "lanes"


class ProgramFunction(torch.autograd.Function):
    """``ProgramFunction.apply(program, names, marks, constants, *tensors)``: the value of
    ``program`` with ``tensors[i]`` bound to ``names[i]`` (``marks[i]``: ``"auto"``,
    ``"uniform"`` or ``"lanes"``) and every other input bound by ``constants``. Prefer
    :func:`program_op`, which builds these arguments from keywords."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        program: Program,
        names: Tuple[str, ...],
        marks: Tuple[str, ...],
        constants: Mapping[str, Any],
        *tensors: torch.Tensor,
    ) -> torch.Tensor:
        bindings = _bindings(names, marks, constants, tensors)
        wrt = [n for n, need in zip(names, ctx.needs_input_grad[4:]) if need]
        value, grads = program._lane_grads(bindings, wrt)
        ctx.specs = [
            (n, t.shape, t.dtype, t.device, _kind(t, m)) for n, m, t in zip(names, marks, tensors)
        ]
        ctx.grads = grads
        return _result(program, value, tensors)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_out: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        # Combined in NumPy, in float64: each small op costs far less there than in torch.
        g = grad_out.detach().cpu().numpy().astype(np.float64, copy=False).reshape(-1)
        out: List[Optional[torch.Tensor]] = []
        for name, shape, dtype, device, kind in ctx.specs:
            per_lane = ctx.grads.get(name)
            if per_lane is None:
                out.append(None)
                continue
            lanes = per_lane.shape[0]
            if g.size not in (1, lanes):
                raise RuntimeError(f"ndvm.torch: {g.size} output gradients for {lanes} lanes")
            per_lane = per_lane.astype(np.float64, copy=False)
            if g.size == 1:
                grad = g[0] * (per_lane if kind == "lanes" else per_lane.sum(axis=0))
            elif kind == "lanes":
                grad = g.reshape((lanes,) + (1,) * (per_lane.ndim - 1)) * per_lane
            else:
                grad = g @ per_lane.reshape(lanes, -1)
            out.append(_tensor(grad, dtype, device, shape))
        return (None, None, None, None, *out)


class ProgramOp:
    """A program as a callable PyTorch op: ``op(a=a, b=b, x=x)`` returns a tensor whose
    backward fills the ``.grad`` of the tensor inputs that require grad."""

    def __init__(self, program: Union[Program, str], **program_options: Any) -> None:
        self.program = program if isinstance(program, Program) else Program(program, **program_options)

    @property
    def inputs(self) -> List[str]:
        """The program's inputs."""
        return self.program.inputs

    def __call__(self, bindings: Optional[Mapping[str, Any]] = None, /, **kwargs: Any) -> torch.Tensor:
        given: Dict[str, Any] = dict(bindings or {})
        for k, v in kwargs.items():
            if k in given:
                raise TypeError(f"input {k!r} is bound twice (in the mapping and as a keyword)")
            given[k] = v
        names: List[str] = []
        marks: List[str] = []
        tensors: List[torch.Tensor] = []
        constants: Dict[str, Any] = {}
        for name, v in given.items():
            mark, inner = "auto", v
            if isinstance(v, Uniform):
                mark, inner = "uniform", v.value
            elif isinstance(v, Lanes):
                mark, inner = "lanes", v.value
            if isinstance(inner, torch.Tensor):
                names.append(name)
                marks.append(mark)
                tensors.append(inner)
            else:
                constants[name] = v
        if not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            # Nothing to differentiate: the value alone, outside autograd.
            value = self.program(_bindings(names, marks, constants, tensors))
            return _result(self.program, value, tensors)
        return ProgramFunction.apply(self.program, tuple(names), tuple(marks), constants, *tensors)

    def __repr__(self) -> str:
        return f"ndvm.torch.program_op({self.program!r})"


def program_op(program: Union[Program, str], **program_options: Any) -> ProgramOp:
    """A PyTorch op evaluating ``program`` (an :class:`ndvm.Program`, or source text read with
    ``program_options`` such as ``precision="f32"``)."""
    return ProgramOp(program, **program_options)
