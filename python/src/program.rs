//! `ndvm.Program`: a program read and decoded once, evaluated on NumPy inputs with values and
//! exact gradients per lane.

use crate::convert::{self, Inputs};
use crate::errors::{to_pyerr, Stage};
use harness::device::{self, Attach};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use runtime_cpu::{DecodeOptions, Error, GradSpec, Limits, Outcome, RunOptions, Session};
use runtime_gpu::DeviceChoice;
use std::sync::Mutex;
use std::time::Instant;

/// The number type a program computes in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Precision {
    /// 64-bit floats.
    F64,
    /// 32-bit floats.
    F32,
}

impl Precision {
    /// From `"f64"` or `"f32"`.
    pub fn parse(s: &str) -> PyResult<Precision> {
        match s {
            "f64" | "float64" => Ok(Precision::F64),
            "f32" | "float32" => Ok(Precision::F32),
            other => Err(PyValueError::new_err(format!(
                "precision must be \"f64\" or \"f32\", not {other:?}"
            ))),
        }
    }

    /// `"f64"` or `"f32"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F64 => "f64",
            Precision::F32 => "f32",
        }
    }
}

/// The `device` argument: `"cpu"`, `"gpu"` (the GPU region path, f32 only) or `"auto"`.
pub fn check_device(device: &str) -> PyResult<DeviceChoice> {
    match device {
        "cpu" => Ok(DeviceChoice::Cpu),
        "gpu" => Ok(DeviceChoice::Gpu),
        "auto" => Ok(DeviceChoice::Auto),
        other => Err(PyValueError::new_err(format!(
            "device must be \"cpu\", \"gpu\" or \"auto\", not {other:?}"
        ))),
    }
}

/// What to do when some lanes fail and others succeed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LaneErrors {
    /// Raise the first failing lane's error.
    Raise,
    /// NaN on the failed lanes (value and gradient); raise only when every lane fails.
    Nan,
}

/// An interpreter per precision, reused across calls.
enum Engine {
    F64(Mutex<Session<f64>>),
    F32(Mutex<Session<f32>>),
}

impl Engine {
    /// An interpreter in `p` whose numeric regions run where `device` says; a device the
    /// machine or the precision cannot give is a `ValueError`.
    fn new(p: Precision, device: DeviceChoice) -> PyResult<Engine> {
        fn make<R: Attach>(device: DeviceChoice) -> PyResult<Session<R>> {
            let mut s = Session::new();
            R::attach(&mut s, device).map_err(PyValueError::new_err)?;
            Ok(s)
        }
        Ok(match p {
            Precision::F64 => Engine::F64(Mutex::new(make(device)?)),
            Precision::F32 => Engine::F32(Mutex::new(make(device)?)),
        })
    }
}

/// A program of the object language, read and decoded once.
///
/// Call it with its inputs as keywords (floats, NumPy arrays, `ndvm.uniform(...)`,
/// `ndvm.lanes(...)`) or as one mapping; `value_and_grad` also returns exact gradients.
#[pyclass(frozen, module = "ndvm")]
pub struct Program {
    pub(crate) program: runtime_cpu::Program,
    pub(crate) precision: Precision,
    pub(crate) limits: Limits,
    pub(crate) lane_errors: LaneErrors,
    pub(crate) protected_ops: bool,
    pub(crate) inputs: Vec<String>,
    pub(crate) device: DeviceChoice,
    engine: Engine,
}

impl Program {
    /// Parses `source`; a syntax error becomes `ProgramSyntaxError`.
    pub fn parse(
        py: Python<'_>,
        source: &str,
        protected_ops: bool,
    ) -> PyResult<runtime_cpu::Program> {
        runtime_cpu::Program::parse_with(source, DecodeOptions { protected_ops })
            .map_err(|e| to_pyerr(py, &e, Stage::Parse, source, &[], None))
    }

    fn options(&self, grad: GradSpec) -> RunOptions {
        RunOptions {
            grad,
            limits: self.limits,
            lane_block: device::lane_block(self.device, self.precision == Precision::F32),
            ..Default::default()
        }
    }

    /// Runs on `inputs` with the GIL released.
    fn run(&self, py: Python<'_>, inputs: &Inputs, grad: GradSpec) -> PyResult<Outcome> {
        let options = self.options(grad);
        let r = py.detach(|| match &self.engine {
            Engine::F64(s) => lock(s)
                .run(&self.program, &inputs.bindings, &options)
                .cloned(),
            Engine::F32(s) => lock(s)
                .run(&self.program, &inputs.bindings, &options)
                .cloned(),
        });
        r.map_err(|e| self.error(py, &e, None))
    }

    fn error(&self, py: Python<'_>, e: &Error, lanes: Option<&[usize]>) -> PyErr {
        to_pyerr(
            py,
            e,
            Stage::Run,
            self.program.source(),
            &self.inputs,
            lanes,
        )
    }

    fn spec(&self) -> Spec<'_> {
        Spec {
            program: &self.program,
            inputs: &self.inputs,
            precision: self.precision,
            lane_errors: self.lane_errors,
        }
    }
}

/// What reading an outcome back needs to know of its program.
pub(crate) struct Spec<'a> {
    pub program: &'a runtime_cpu::Program,
    pub inputs: &'a [String],
    pub precision: Precision,
    pub lane_errors: LaneErrors,
}

impl Spec<'_> {
    /// The error to raise for failed lanes, if any (by the `lane_errors` policy).
    fn lane_failure(&self, py: Python<'_>, out: &Outcome, has_lanes: bool) -> Option<PyErr> {
        let failed: Vec<usize> = (0..out.lanes).filter(|&l| out.values[l].is_err()).collect();
        let first = out.values.get(*failed.first()?)?.as_ref().err()?;
        let fatal = self.lane_errors == LaneErrors::Raise
            || failed.len() == out.lanes
            || first.is_resource_limit();
        let lanes = has_lanes.then_some(failed.as_slice());
        fatal.then(|| {
            to_pyerr(
                py,
                first,
                Stage::Run,
                self.program.source(),
                self.inputs,
                lanes,
            )
        })
    }

    /// The value array and the outcome's gradients (per lane for every input when
    /// `all_per_lane`, else summed over the lanes for uniform inputs); raises for failed lanes.
    pub(crate) fn read<'py>(
        &self,
        py: Python<'py>,
        out: &Outcome,
        has_lanes: bool,
        all_per_lane: bool,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
        if let Some(e) = self.lane_failure(py, out, has_lanes) {
            return Err(e);
        }
        let narrow = self.precision == Precision::F32;
        let lanes: Vec<_> = out.values.iter().map(|v| v.as_ref().ok()).collect();
        let value = convert::values(py, &lanes, has_lanes, narrow)?;
        let d = PyDict::new(py);
        for g in &out.grads {
            let per_lane = all_per_lane || !g.uniform;
            d.set_item(
                &g.name,
                convert::gradient(py, g, out.lanes, per_lane, narrow)?,
            )?;
        }
        Ok((value, d))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `wrt` as a gradient request: `None` for every input, a name, or a sequence of names.
fn grad_spec(wrt: Option<&Bound<'_, PyAny>>) -> PyResult<GradSpec> {
    let Some(w) = wrt else {
        return Ok(GradSpec::All);
    };
    if let Ok(s) = w.extract::<String>() {
        return Ok(GradSpec::Some(vec![s]));
    }
    Ok(GradSpec::Some(w.extract::<Vec<String>>().map_err(
        |_| PyValueError::new_err("wrt must be an input name or a sequence of input names"),
    )?))
}

/// `ndvm.export.<name>(program)`.
fn export<'py>(program: &Bound<'py, Program>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = program.py();
    py.import("ndvm.export")?.getattr(name)?.call1((program,))
}

#[pymethods]
impl Program {
    #[new]
    #[pyo3(signature = (source, *, precision = "f64", device = "cpu", protected_ops = false,
        max_steps = None, max_depth = None, max_memory_mb = None, lane_errors = "raise"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        source: &str,
        precision: &str,
        device: &str,
        protected_ops: bool,
        max_steps: Option<u64>,
        max_depth: Option<u32>,
        max_memory_mb: Option<usize>,
        lane_errors: &str,
    ) -> PyResult<Program> {
        let precision = Precision::parse(precision)?;
        let device = check_device(device)?;
        let lane_errors = match lane_errors {
            "raise" => LaneErrors::Raise,
            "nan" => LaneErrors::Nan,
            other => {
                return Err(PyValueError::new_err(format!(
                    "lane_errors must be \"raise\" or \"nan\", not {other:?}"
                )))
            }
        };
        let d = Limits::default();
        let limits = Limits {
            max_steps: max_steps.unwrap_or(d.max_steps),
            max_depth: max_depth.unwrap_or(d.max_depth),
            max_memory: max_memory_mb.map_or(d.max_memory, |m| m.saturating_mul(1 << 20)),
        };
        let program = Program::parse(py, source, protected_ops)?;
        let inputs = program.inputs().map(str::to_string).collect();
        Ok(Program {
            program,
            precision,
            limits,
            lane_errors,
            protected_ops,
            inputs,
            device,
            engine: Engine::new(precision, device)?,
        })
    }

    /// The free variables, in order of first use: the inputs a call must bind.
    #[getter]
    fn inputs(&self) -> Vec<String> {
        self.inputs.clone()
    }

    /// The source text.
    #[getter]
    fn source(&self) -> &str {
        self.program.source()
    }

    /// `"f64"` or `"f32"`.
    #[getter]
    fn precision(&self) -> &'static str {
        self.precision.name()
    }

    /// `"cpu"`, `"gpu"` or `"auto"`.
    #[getter]
    fn device(&self) -> &'static str {
        match self.device {
            DeviceChoice::Cpu => "cpu",
            DeviceChoice::Gpu => "gpu",
            DeviceChoice::Auto => "auto",
        }
    }

    /// True when `sqrt`, `log` and `normalize` clamp their argument to at least 1e-8.
    #[getter]
    fn protected_ops(&self) -> bool {
        self.protected_ops
    }

    /// Node visits allowed per call before `LimitError`.
    #[getter]
    fn max_steps(&self) -> u64 {
        self.limits.max_steps
    }

    /// The program as a NumPy function of its inputs (`ndvm.export.to_numpy`).
    fn to_numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        export(slf, "to_numpy")
    }

    /// The program as a JAX function (`ndvm.export.to_jax`).
    fn to_jax<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        export(slf, "to_jax")
    }

    /// The program as a PyTorch function (`ndvm.export.to_torch`).
    fn to_torch<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        export(slf, "to_torch")
    }

    /// The program as a sympy expression (`ndvm.export.to_sympy`).
    fn to_sympy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        export(slf, "to_sympy")
    }

    /// The program as LaTeX math (`ndvm.export.to_latex`).
    fn to_latex<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        export(slf, "to_latex")
    }

    /// The arguments that make this program again (pickling: a program sent to another
    /// process, a Ray task say, is read and decoded again there with the same settings).
    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        let kw = PyDict::new(py);
        kw.set_item("precision", self.precision.name())?;
        kw.set_item("device", self.device())?;
        kw.set_item("protected_ops", self.protected_ops)?;
        kw.set_item("max_steps", self.limits.max_steps)?;
        kw.set_item("max_depth", self.limits.max_depth)?;
        kw.set_item("max_memory_mb", self.limits.max_memory >> 20)?;
        let lane_errors = match self.lane_errors {
            LaneErrors::Raise => "raise",
            LaneErrors::Nan => "nan",
        };
        kw.set_item("lane_errors", lane_errors)?;
        Ok((PyTuple::new(py, [self.program.source()])?, kw))
    }

    fn __repr__(&self) -> String {
        let src: String = self
            .program
            .source()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let short = if src.chars().count() > 60 {
            format!("{}...", src.chars().take(57).collect::<String>())
        } else {
            src
        };
        format!(
            "ndvm.Program({short:?}, inputs={:?}, precision={:?})",
            self.inputs,
            self.precision.name()
        )
    }

    /// Evaluates the program: `program(a=1.0, x=np.array([...]))` or `program({"a": 1.0, ...})`.
    /// Returns an array with a leading lane axis when some input is bound per lane.
    #[pyo3(signature = (bindings = None, /, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        bindings: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inputs = convert::inputs(py, bindings, kwargs)?;
        let out = self.run(py, &inputs, GradSpec::None)?;
        Ok(self.spec().read(py, &out, inputs.has_lanes, false)?.0)
    }

    /// The value and the gradients with respect to `wrt` (default: every input), as
    /// `(value, {name: gradient})`. A gradient is per lane (`(B, *shape)`) for an input bound
    /// per lane, and summed over the lanes (the input's shape) for an input bound uniformly.
    #[pyo3(signature = (bindings = None, /, *, wrt = None, **kwargs))]
    fn value_and_grad<'py>(
        &self,
        py: Python<'py>,
        bindings: Option<&Bound<'py, PyAny>>,
        wrt: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let inputs = convert::inputs(py, bindings, kwargs)?;
        let out = self.run(py, &inputs, grad_spec(wrt)?)?;
        let (value, grads) = self.spec().read(py, &out, inputs.has_lanes, false)?;
        PyTuple::new(py, [value, grads.into_any()])
    }

    /// For `ndvm.torch`: the value and every asked gradient per lane (uniform inputs too).
    fn _lane_grads<'py>(
        &self,
        py: Python<'py>,
        bindings: &Bound<'py, PyAny>,
        wrt: Vec<String>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let inputs = convert::inputs(py, Some(bindings), None)?;
        let grad = if wrt.is_empty() {
            GradSpec::None
        } else {
            GradSpec::Some(wrt)
        };
        let out = self.run(py, &inputs, grad)?;
        let (value, grads) = self.spec().read(py, &out, inputs.has_lanes, true)?;
        PyTuple::new(py, [value, grads.into_any()])
    }

    /// For benchmarks: seconds per call of `repeats` calls made in Rust (no Python between
    /// them) on `bindings`, with gradients for `wrt`, after one warm-up call.
    fn _native_seconds(
        &self,
        py: Python<'_>,
        bindings: &Bound<'_, PyAny>,
        wrt: Vec<String>,
        repeats: usize,
    ) -> PyResult<f64> {
        let inputs = convert::inputs(py, Some(bindings), None)?;
        let grad = if wrt.is_empty() {
            GradSpec::None
        } else {
            GradSpec::Some(wrt)
        };
        let options = self.options(grad);
        let r = py.detach(|| {
            fn time<R: runtime_cpu::Real>(
                s: &mut Session<R>,
                p: &runtime_cpu::Program,
                b: &runtime_cpu::Bindings,
                o: &RunOptions,
                n: usize,
            ) -> Result<f64, Error> {
                s.run(p, b, o)?;
                let t = Instant::now();
                for _ in 0..n {
                    std::hint::black_box(s.run(p, b, o)?);
                }
                Ok(t.elapsed().as_secs_f64() / n.max(1) as f64)
            }
            match &self.engine {
                Engine::F64(s) => time(
                    &mut lock(s),
                    &self.program,
                    &inputs.bindings,
                    &options,
                    repeats,
                ),
                Engine::F32(s) => time(
                    &mut lock(s),
                    &self.program,
                    &inputs.bindings,
                    &options,
                    repeats,
                ),
            }
        });
        r.map_err(|e| self.error(py, &e, None))
    }
}
