"""Type stubs of the extension module ``ndvm._ndvm`` (re-exported by ``ndvm``)."""

from os import PathLike
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union, final

import numpy as np

__version__: str

__all__ = ["Program", "Uniform", "Lanes", "uniform", "lanes", "_evaluate_population", "calibrate", "cosearch", "_search", "_ode_search", "_ode_simulate", "_Island", "_Islands", "_export", "_latex", "__version__"]

_Precision = Literal["f64", "f32"]
_Device = Literal["cpu", "gpu", "auto"]
_Path = Union[str, PathLike]

@final
class Uniform:
    """A value bound the same on every lane (a number, a 1-D vector or a 2-D matrix)."""

    value: Any
    def __new__(cls, value: Any) -> "Uniform": ...
    def __getnewargs__(self) -> Tuple[Any]: ...

@final
class Lanes:
    """One value per lane along the first axis (numbers, vectors or matrices)."""

    value: Any
    def __new__(cls, value: Any) -> "Lanes": ...
    def __getnewargs__(self) -> Tuple[Any]: ...

def uniform(value: Any) -> Uniform:
    """Marks ``value`` as bound the same on every lane."""

def lanes(value: Any) -> Lanes:
    """Marks ``value`` as one value per lane along its first axis."""

@final
class Program:
    """A program read and decoded once.

    ``precision``: ``"f64"`` or ``"f32"``. ``device``: ``"cpu"``; ``"gpu"`` (the numeric
    regions on the GPU region interpreter; ``f32`` only, and ``ValueError`` when there is no
    usable adapter); ``"auto"`` (the GPU for the regions the measured cost model expects to run
    faster there, else the CPU; always the CPU in ``f64``). ``protected_ops``: ``sqrt``,
    ``log`` and ``normalize`` clamp their argument to at least 1e-8 like the paper's artifact.
    ``max_steps``, ``max_depth``, ``max_memory_mb``: limits of one call (``LimitError`` past
    them). ``lane_errors``: ``"raise"`` (a failing lane raises) or ``"nan"`` (failed lanes are
    NaN; raises only when every lane fails or a limit is hit).

    Raises ``ProgramSyntaxError`` when the source does not read or decode.
    """

    def __new__(
        cls,
        source: str,
        *,
        precision: _Precision = "f64",
        device: _Device = "cpu",
        protected_ops: bool = False,
        max_steps: Optional[int] = None,
        max_depth: Optional[int] = None,
        max_memory_mb: Optional[int] = None,
        lane_errors: Literal["raise", "nan"] = "raise",
    ) -> "Program": ...
    @property
    def inputs(self) -> List[str]:
        """The free variables, in order of first use."""
    @property
    def source(self) -> str: ...
    @property
    def precision(self) -> _Precision: ...
    @property
    def device(self) -> _Device: ...
    @property
    def protected_ops(self) -> bool: ...
    @property
    def max_steps(self) -> int: ...
    def to_numpy(self) -> Any:
        """The program as a NumPy function of its inputs (``ndvm.export.to_numpy``)."""
    def to_jax(self) -> Any:
        """The program as a JAX function (``ndvm.export.to_jax``)."""
    def to_torch(self) -> Any:
        """The program as a PyTorch function (``ndvm.export.to_torch``)."""
    def to_sympy(self) -> Any:
        """The program as a sympy expression (``ndvm.export.to_sympy``)."""
    def to_latex(self) -> Any:
        """The program as LaTeX math (``ndvm.export.to_latex``)."""
    def __getnewargs_ex__(self) -> Tuple[Tuple[str], Dict[str, Any]]:
        """The arguments that make this program again (for pickling)."""
    def __call__(self, bindings: Optional[Mapping[str, Any]] = None, /, **kwargs: Any) -> np.ndarray:
        """The value on every lane: shape ``(B, *value_shape)`` when some input is bound per
        lane, else the value's own shape. Float64 (float32 for ``precision="f32"``); an object
        array for values that are not numbers."""
    def value_and_grad(
        self,
        bindings: Optional[Mapping[str, Any]] = None,
        /,
        *,
        wrt: Union[str, Sequence[str], None] = None,
        **kwargs: Any,
    ) -> Tuple[np.ndarray, Dict[str, np.ndarray]]:
        """The value and the gradients with respect to ``wrt`` (default: every input): per
        lane ``(B, *shape)`` for an input bound per lane, summed over lanes for a uniform one."""
    def _lane_grads(
        self, bindings: Mapping[str, Any], wrt: List[str]
    ) -> Tuple[np.ndarray, Dict[str, np.ndarray]]: ...
    def _native_seconds(self, bindings: Mapping[str, Any], wrt: List[str], repeats: int) -> float: ...

def _evaluate_population(
    programs: Sequence[Union[Program, str]],
    bindings: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]],
    threads: Optional[int] = None,
    wrt: Optional[Sequence[str]] = None,
) -> List[Tuple[Any, Any, Any]]: ...
def calibrate(
    model: Union[Program, str],
    *,
    data: Union[_Path, Mapping[str, Any], None] = None,
    target: Optional[str] = None,
    params: Optional[Sequence[str]] = None,
    init: Optional[Mapping[str, float]] = None,
    bind: Optional[Mapping[str, Any]] = None,
    optimizer: Literal["adam", "lbfgs", "lm"] = "adam",
    steps: int = 100,
    lr: float = 0.05,
    restarts: int = 1,
    clamp: Optional[Mapping[str, Tuple[Optional[float], Optional[float]]]] = None,
    seed: int = 0,
    precision: Optional[_Precision] = None,
    protected_ops: Optional[bool] = None,
    max_steps: Optional[int] = None,
    device: Optional[_Device] = None,
    threads: Optional[int] = None,
) -> Dict[str, Any]:
    """Fits parameters like ``ndvm calibrate``; returns its ``--format json`` result.

    ``threads`` (default: every core) spreads the restarts over worker threads; the
    result is the same for any number.

    ``precision``, ``protected_ops``, ``max_steps`` and ``device`` default to the
    ``Program``'s (to ``"f64"``, off, the default budget and ``"cpu"`` for source text).
    """

def cosearch(
    stream: Union[_Path, Sequence[Mapping[str, Any]]],
    data: _Path,
    *,
    inits: Optional[_Path] = None,
    budget: Optional[float] = None,
    max_fits: Optional[int] = None,
    steps: int = 50,
    lr: float = 0.05,
    threads: Optional[int] = None,
    reference: Optional[_Path] = None,
    precision: _Precision = "f64",
    protected_ops: bool = False,
    max_steps: int = 2000000,
) -> Dict[str, Any]:
    """Replays a candidate stream like ``ndvm cosearch``; returns ``summary``, ``agreement``,
    ``fits`` and ``finished_at``."""

def _search(
    names: Sequence[str],
    columns: Sequence[np.ndarray],
    tests: Sequence[Tuple[str, Sequence[np.ndarray]]],
    *,
    settings: Sequence[str],
    budget: Optional[float] = None,
    max_evals: Optional[int] = None,
    threads: Optional[int] = None,
    proposer: Optional[Any] = None,
    proposer_only: bool = False,
    stop_on_proposer_error: bool = False,
    seed_programs: Optional[Any] = None,
    progress: Optional[Any] = None,
    select: str = "best",
    early_stop: Optional[str] = None,
    weights: Optional[np.ndarray] = None,
    loss: str = "l2",
    complexity_of: Optional[str] = None,
    constraints: Optional[str] = None,
    nested: Optional[str] = None,
) -> Dict[str, Any]:
    """The engine of ``ndvm.search``: the columns of the inputs then the target, named by
    ``names``; ``settings`` as ``--set`` assignments."""

@final
class _Island:
    """One island of a search run alone (``ndvm.ray.search``), an epoch at a time."""

    def __new__(
        cls,
        names: Sequence[str],
        columns: Sequence[np.ndarray],
        tests: Sequence[Tuple[str, Sequence[np.ndarray]]],
        *,
        settings: Sequence[str],
        island: int,
        threads: int = 1,
        seed_programs: Optional[Any] = None,
        checkpoint: Optional[str] = None,
    ) -> "_Island": ...
    def epoch(
        self, arrivals: str, *, remaining: Optional[float] = None, max_evals: Optional[int] = None
    ) -> Tuple[str, str, str]:
        """Takes in a migration's arrivals, runs generations until the next migration; returns
        ``(report, state, checkpoint)`` as JSON."""

@final
class _Islands:
    """The driver's view of a search's islands run apart."""

    def __new__(
        cls,
        names: Sequence[str],
        columns: Sequence[np.ndarray],
        tests: Sequence[Tuple[str, Sequence[np.ndarray]]],
        *,
        settings: Sequence[str],
        threads: int = 1,
    ) -> "_Islands": ...
    @property
    def migration_interval(self) -> int: ...
    @property
    def islands(self) -> int: ...
    def absorb(self, states: Sequence[str]) -> None: ...
    def migrate(self) -> List[str]: ...
    def progress(self) -> Dict[str, Any]: ...
    def finish(
        self,
        *,
        max_evals: Optional[int] = None,
        remaining: Optional[float] = None,
        interrupted: bool = False,
        select: str = "best",
    ) -> Dict[str, Any]: ...

_Trajectory = Tuple[str, np.ndarray, np.ndarray, Optional[np.ndarray]]

def _ode_search(
    time: str,
    states: Sequence[str],
    inputs: Sequence[str],
    train: Sequence[_Trajectory],
    tests: Sequence[Tuple[str, Sequence[_Trajectory]]],
    *,
    settings: Sequence[str],
    budget: Optional[float] = None,
    max_evals: Optional[int] = None,
    threads: Optional[int] = None,
    autonomous: bool = False,
    segment: int = 8,
    max_step: Optional[float] = None,
    fixed_initial: bool = False,
    select: str = "best",
) -> Dict[str, Any]:
    """ODE discovery (``ndvm search --time``) on trajectories ``(name, t, X, U)``: the dict of
    its ``--format json`` output."""

def _ode_simulate(
    time: str,
    states: Sequence[str],
    inputs: Sequence[str],
    rhs: Sequence[str],
    params: Sequence[Tuple[str, float]],
    x0: Sequence[float],
    t: np.ndarray,
    u: Optional[np.ndarray] = None,
    max_step: Optional[float] = None,
) -> List[List[float]]:
    """The system ``rhs`` with constants ``params`` integrated from ``x0`` across ``t``."""

def _export(
    source: str, target: str, protected_ops: bool = False
) -> Tuple[str, List[Tuple[str, str]]]:
    """The Python code of the program for ``target``, and its inputs' names in the code."""

def _latex(source: str) -> str:
    """The program as LaTeX math."""
