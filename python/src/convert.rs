//! Between Python and the runtime: keyword arguments to [`Bindings`], and per-lane values and
//! gradients to NumPy arrays.
//!
//! A float (or a 0-d array) binds the same number on every lane; a 1-D array binds one number
//! per lane (a lane column). Vectors and matrices are marked: `ndvm.uniform(x)` binds `x` (0-D,
//! 1-D vector, 2-D matrix) on every lane, `ndvm.lanes(x)` binds one value per entry of `x`'s
//! first axis. Every per-lane binding must have the same number of lanes.

use crate::errors::binding_error;
use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList};
use runtime_cpu::{Binding, Bindings, Gradient, LaneValue, Shape, Tensor};

/// A value bound the same on every lane: `ndvm.uniform(x)`.
#[pyclass(frozen, module = "ndvm")]
pub struct Uniform {
    /// The value (a number or an array-like of up to 2 dimensions).
    #[pyo3(get)]
    pub value: Py<PyAny>,
}

/// One value per lane, along the first axis: `ndvm.lanes(x)`.
#[pyclass(frozen, module = "ndvm")]
pub struct Lanes {
    /// The values (an array-like whose first axis is the lanes).
    #[pyo3(get)]
    pub value: Py<PyAny>,
}

#[pymethods]
impl Uniform {
    #[new]
    fn new(value: Py<PyAny>) -> Self {
        Uniform { value }
    }

    /// The argument that makes it again (for pickling: bindings sent to a Ray task).
    fn __getnewargs__(&self, py: Python<'_>) -> (Py<PyAny>,) {
        (self.value.clone_ref(py),)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("ndvm.uniform({})", self.value.bind(py).repr()?))
    }
}

#[pymethods]
impl Lanes {
    #[new]
    fn new(value: Py<PyAny>) -> Self {
        Lanes { value }
    }

    /// The argument that makes it again (for pickling: bindings sent to a Ray task).
    fn __getnewargs__(&self, py: Python<'_>) -> (Py<PyAny>,) {
        (self.value.clone_ref(py),)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("ndvm.lanes({})", self.value.bind(py).repr()?))
    }
}

/// How a binding is laid over the lanes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// Decided by the value: a number on every lane, or a 1-D array as a lane column.
    Auto,
    Uniform,
    Lanes,
}

/// The runtime's bindings and whether any of them is per lane.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The bindings.
    pub bindings: Bindings,
    /// True when some input is bound per lane (the result then has a lane axis).
    pub has_lanes: bool,
}

/// `numpy.asarray(value, dtype=float64, order="C")` (which, unlike `ascontiguousarray`, keeps
/// a 0-d array 0-d).
fn as_float_array<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static F: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = F.get_or_try_init(py, || {
        py.import("numpy")?.getattr("asarray").map(Bound::unbind)
    })?;
    static KW: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let kw = KW.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        d.set_item("dtype", py.import("numpy")?.getattr("float64")?)?;
        d.set_item("order", "C")?;
        Ok(d.unbind())
    })?;
    f.bind(py).call((value,), Some(kw.bind(py)))
}

/// The numbers of `value` and their dimensions.
fn numbers(
    py: Python<'_>,
    name: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<(Vec<f64>, Vec<usize>)> {
    if value.is_instance_of::<PyBool>() {
        return Err(binding_error(
            py,
            format!("input `{name}`: a boolean is not a number"),
        ));
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        return Ok((vec![f.value()], vec![]));
    }
    if value.is_instance_of::<PyInt>() {
        return Ok((vec![value.extract::<f64>()?], vec![]));
    }
    let array = as_float_array(py, value).map_err(|e| {
        binding_error(
            py,
            format!("input `{name}`: cannot read it as numbers ({e})"),
        )
    })?;
    let array = array.cast::<PyArrayDyn<f64>>()?;
    let dims = array.shape().to_vec();
    let data = array
        .to_vec()
        .map_err(|e| binding_error(py, format!("input `{name}`: cannot read its numbers ({e})")))?;
    Ok((data, dims))
}

fn shape_of(py: Python<'_>, name: &str, dims: &[usize], what: &str) -> PyResult<Shape> {
    let n = |d: usize| {
        u32::try_from(d).map_err(|_| binding_error(py, format!("input `{name}`: too large")))
    };
    match dims {
        [] => Ok(Shape::Scalar),
        [n0] => Ok(Shape::Vector(n(*n0)?)),
        [r, c] => Ok(Shape::Matrix(n(*r)?, n(*c)?)),
        _ => Err(binding_error(
            py,
            format!(
                "input `{name}`: {what} has {} dimensions; a value is a number, a vector or a matrix",
                dims.len()
            ),
        )),
    }
}

/// Binds `name` to `value` (a number, an array, `ndvm.uniform(...)` or `ndvm.lanes(...)`).
pub fn bind(
    py: Python<'_>,
    inputs: &mut Inputs,
    name: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let (kind, inner) = if let Ok(u) = value.cast::<Uniform>() {
        (Kind::Uniform, u.get().value.bind(py).clone())
    } else if let Ok(l) = value.cast::<Lanes>() {
        (Kind::Lanes, l.get().value.bind(py).clone())
    } else {
        (Kind::Auto, value.clone())
    };
    let (data, dims) = numbers(py, name, &inner)?;
    let kind = match (kind, dims.len()) {
        (Kind::Auto, 0) => Kind::Uniform,
        (Kind::Auto, 1) => Kind::Lanes,
        (Kind::Auto, d) => {
            return Err(binding_error(
                py,
                format!(
                    "input `{name}`: a {d}-D array is ambiguous; wrap it as ndvm.uniform(x) \
                     (the same vector or matrix on every lane) or ndvm.lanes(x) (one value per \
                     entry of the first axis)"
                ),
            ))
        }
        (k, _) => k,
    };
    let b = std::mem::take(&mut inputs.bindings);
    inputs.bindings = if kind == Kind::Uniform {
        let shape = shape_of(py, name, &dims, "ndvm.uniform(x)")?;
        b.uniform(name, Tensor { shape, data })
    } else {
        let Some((&lanes, rest)) = dims.split_first() else {
            return Err(binding_error(
                py,
                format!(
                    "input `{name}`: ndvm.lanes(x) needs an array with a lane axis, not a number"
                ),
            ));
        };
        let shape = shape_of(py, name, rest, "one lane of ndvm.lanes(x)")?;
        if lanes == 0 {
            return Err(binding_error(
                py,
                format!("input `{name}`: no lanes (an empty array)"),
            ));
        }
        inputs.has_lanes = true;
        b.set(name, Binding::Lanes { shape, data })
            .map_err(|e| binding_error(py, e.to_string()))?
    };
    Ok(())
}

/// Binds `name` to `value` on every lane (a number, a vector or a matrix).
pub fn bind_uniform(
    py: Python<'_>,
    b: Bindings,
    name: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<Bindings> {
    let (data, dims) = numbers(py, name, value)?;
    let shape = shape_of(py, name, &dims, "the value")?;
    Ok(b.uniform(name, Tensor { shape, data }))
}

/// A 1-D column of numbers.
pub fn column(py: Python<'_>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let (data, dims) = numbers(py, name, value)?;
    if dims.len() != 1 {
        return Err(binding_error(
            py,
            format!(
                "column `{name}`: expected a 1-D array, got {} dimensions",
                dims.len()
            ),
        ));
    }
    Ok(data)
}

/// Bindings from a mapping (positional) and keyword arguments; a name in both is an error.
pub fn inputs(
    py: Python<'_>,
    mapping: Option<&Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Inputs> {
    let mut out = Inputs::default();
    if let Some(m) = mapping {
        let items = m.call_method0("items").map_err(|_| {
            binding_error(
                py,
                "bindings must be a mapping of input names to values".into(),
            )
        })?;
        for item in items.try_iter()? {
            let (k, v): (String, Bound<'_, PyAny>) = item?.extract()?;
            bind(py, &mut out, &k, &v)?;
        }
    }
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            let k: String = k.extract()?;
            if out.bindings.get(&k).is_some() {
                return Err(binding_error(
                    py,
                    format!("input `{k}` is bound twice (in the mapping and as a keyword)"),
                ));
            }
            bind(py, &mut out, &k, &v)?;
        }
    }
    Ok(out)
}

fn dims(shape: Shape) -> Vec<usize> {
    match shape {
        Shape::Scalar => vec![],
        Shape::Vector(n) => vec![n as usize],
        Shape::Matrix(r, c) => vec![r as usize, c as usize],
    }
}

/// A float array of `dims` from `data` (float32 when `narrow`).
pub fn array<'py>(
    py: Python<'py>,
    data: Vec<f64>,
    dims: &[usize],
    narrow: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if narrow {
        let v: Vec<f32> = data.into_iter().map(|x| x as f32).collect();
        Ok(PyArray1::from_vec(py, v).reshape(dims)?.into_any())
    } else {
        Ok(PyArray1::from_vec(py, data).reshape(dims)?.into_any())
    }
}

/// One lane's value as a Python object.
fn lane_object<'py>(py: Python<'py>, v: &LaneValue, narrow: bool) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        LaneValue::Number(x) => PyFloat::new(py, *x).into_any(),
        LaneValue::Tensor(shape, data) => array(py, data.clone(), &dims(*shape), narrow)?,
        LaneValue::Datum(s) if s == "#t" => PyBool::new(py, true).to_owned().into_any(),
        LaneValue::Datum(s) if s == "#f" => PyBool::new(py, false).to_owned().into_any(),
        LaneValue::Datum(s) => s.into_pyobject(py)?.into_any(),
    })
}

/// The values of every lane as one array: shape `(B, *value_shape)` with a lane axis, or the
/// value's own shape without one. Failed lanes (`None`) are NaN. Values that are not numbers of
/// one shape come back as a bool array when every lane is a boolean, else as an object array
/// (booleans as `bool`, other data in Scheme syntax).
pub fn values<'py>(
    py: Python<'py>,
    lanes: &[Option<&LaneValue>],
    has_lanes: bool,
    narrow: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let common = lanes.iter().flatten().try_fold(None, |s, v| {
        let this = match v {
            LaneValue::Number(_) => Shape::Scalar,
            LaneValue::Tensor(shape, _) => *shape,
            LaneValue::Datum(_) => return Err(()),
        };
        match s {
            Some(s) if s != this => Err(()),
            _ => Ok(Some(this)),
        }
    });
    let lead: Vec<usize> = if has_lanes { vec![lanes.len()] } else { vec![] };
    match common {
        Ok(shape) => {
            let shape = shape.unwrap_or(Shape::Scalar);
            let mut data = Vec::with_capacity(lanes.len() * shape.len());
            for v in lanes {
                match v {
                    Some(LaneValue::Number(x)) => data.push(*x),
                    Some(LaneValue::Tensor(_, d)) => data.extend_from_slice(d),
                    _ => data.extend(std::iter::repeat_n(f64::NAN, shape.len())),
                }
            }
            let mut all = lead;
            all.extend(dims(shape));
            array(py, data, &all, narrow)
        }
        Err(())
            if lanes
                .iter()
                .all(|v| matches!(v, Some(LaneValue::Datum(d)) if d == "#t" || d == "#f")) =>
        {
            let flags: Vec<bool> = lanes
                .iter()
                .map(|v| matches!(v, Some(LaneValue::Datum(d)) if d == "#t"))
                .collect();
            let a = PyArray1::from_vec(py, flags);
            if has_lanes {
                Ok(a.into_any())
            } else {
                Ok(a.reshape(Vec::<usize>::new())?.into_any())
            }
        }
        Err(()) => {
            let items = PyList::empty(py);
            for v in lanes {
                match v {
                    Some(v) => items.append(lane_object(py, v, narrow)?)?,
                    None => items.append(py.None())?,
                }
            }
            let np = py.import("numpy")?;
            let out = np.call_method1("empty", (lead.clone(), "object"))?;
            if has_lanes {
                for (i, item) in items.iter().enumerate() {
                    out.set_item(i, item)?;
                }
            } else {
                out.set_item((), items.get_item(0)?)?;
            }
            Ok(out)
        }
    }
}

/// A gradient as an array: per lane `(B, *input_shape)`, or summed over lanes (the input's shape).
pub fn gradient<'py>(
    py: Python<'py>,
    g: &Gradient,
    lanes: usize,
    per_lane: bool,
    narrow: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let shape = dims(g.shape);
    if per_lane {
        let mut all = vec![lanes];
        all.extend(shape);
        array(py, g.per_lane.clone(), &all, narrow)
    } else {
        array(py, g.sum.clone(), &shape, narrow)
    }
}
