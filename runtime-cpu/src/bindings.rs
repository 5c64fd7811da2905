//! Values bound to a program's inputs: uniform across lanes, or one per lane.

use crate::error::{Error, Result};
use shared_ir::Shape;

/// A number, vector or matrix (row-major).
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Its shape.
    pub shape: Shape,
    /// Its numbers, row-major.
    pub data: Vec<f64>,
}

impl Tensor {
    /// A scalar.
    pub fn scalar(x: f64) -> Tensor {
        Tensor {
            shape: Shape::Scalar,
            data: vec![x],
        }
    }

    /// A vector.
    pub fn vector(data: Vec<f64>) -> Tensor {
        Tensor {
            shape: Shape::Vector(data.len() as u32),
            data,
        }
    }

    /// A matrix from row-major data; errors when the sizes disagree.
    pub fn matrix(rows: usize, cols: usize, data: Vec<f64>) -> Result<Tensor> {
        if rows * cols != data.len() {
            return Err(Error::Binding {
                name: "matrix".into(),
                message: format!(
                    "a {rows}x{cols} matrix needs {} numbers, got {}",
                    rows * cols,
                    data.len()
                ),
            });
        }
        Ok(Tensor {
            shape: Shape::Matrix(rows as u32, cols as u32),
            data,
        })
    }
}

/// What an input is bound to.
#[derive(Clone, Debug, PartialEq)]
pub enum Binding {
    /// The same value on every lane.
    Uniform(Tensor),
    /// One value of `shape` per lane; lane `l`'s numbers are `data[l*n..(l+1)*n]`.
    Lanes {
        /// Shape of one lane's value.
        shape: Shape,
        /// Every lane's numbers, lane after lane.
        data: Vec<f64>,
    },
}

/// The bindings of one run and its lane count.
#[derive(Clone, Debug, Default)]
pub struct Bindings {
    lanes: Option<usize>,
    /// Sorted by name, each name once (a run finds its inputs by binary search, and then by
    /// index).
    entries: Vec<(String, Binding)>,
    /// Which names are bound where: new whenever a name is bound, so two bindings (a clone,
    /// or the same bindings run after run) with the same `names` have the same names at the
    /// same places, and a session that resolved its inputs in one need not look again.
    names: u64,
}

impl PartialEq for Bindings {
    fn eq(&self, other: &Bindings) -> bool {
        (self.lanes, &self.entries) == (other.lanes, &other.entries)
    }
}

/// The last [`Bindings::names`] given out (0: nothing bound).
static NAMES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Bindings {
    /// No bindings yet; the lane count comes from the first per-lane binding (1 if none).
    pub fn new() -> Bindings {
        Bindings::default()
    }

    /// Binds `name` to a number on every lane.
    pub fn scalar(mut self, name: &str, x: f64) -> Bindings {
        self.insert(name, Binding::Uniform(Tensor::scalar(x)));
        self
    }

    /// Binds `name` to a tensor on every lane.
    pub fn uniform(mut self, name: &str, t: Tensor) -> Bindings {
        self.insert(name, Binding::Uniform(t));
        self
    }

    /// Binds `name` to one number per lane.
    pub fn lanes(self, name: &str, values: Vec<f64>) -> Result<Bindings> {
        self.lane_tensors(name, Shape::Scalar, values)
    }

    /// Binds `name` to one tensor of `shape` per lane (`data` holds lane after lane).
    pub fn lane_tensors(mut self, name: &str, shape: Shape, data: Vec<f64>) -> Result<Bindings> {
        let n = shape.len();
        if n == 0 {
            return Err(Error::Binding {
                name: name.to_string(),
                message: format!("cannot bind {shape} per lane: it holds no numbers"),
            });
        }
        if data.len() % n != 0 || data.is_empty() {
            return Err(Error::Binding {
                name: name.to_string(),
                message: format!("{} numbers do not make whole lanes of {shape}", data.len()),
            });
        }
        let lanes = data.len() / n;
        if let Some(b) = self.lanes {
            if b != lanes {
                return Err(Error::Binding {
                    name: name.to_string(),
                    message: format!("has {lanes} lanes but other inputs have {b}"),
                });
            }
        }
        self.lanes = Some(lanes);
        self.insert(name, Binding::Lanes { shape, data });
        Ok(self)
    }

    /// Adds or replaces a binding of either kind.
    pub fn set(self, name: &str, b: Binding) -> Result<Bindings> {
        match b {
            Binding::Uniform(t) => Ok(self.uniform(name, t)),
            Binding::Lanes { shape, data } => self.lane_tensors(name, shape, data),
        }
    }

    /// Number of lanes.
    pub fn lane_count(&self) -> usize {
        self.lanes.unwrap_or(1)
    }

    /// The binding of `name`.
    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.index_of(name).map(|i| &self.entries[i].1)
    }

    /// Every binding, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Binding)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of bindings.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The numbers bound to `name`, to rewrite in place for another run of the same layout
    /// (an optimiser's next step): the binding's index among the bindings, whether it is per
    /// lane, its shape on one lane, and its numbers (lane after lane when per lane). The
    /// shape and the lane count stay as bound.
    pub fn numbers_mut(&mut self, name: &str) -> Option<(usize, bool, Shape, &mut [f64])> {
        self.numbers_mut_near(usize::MAX, name)
    }

    /// [`Bindings::numbers_mut`], looking first at index `hint` (where an earlier call found
    /// `name`): one comparison instead of a search when it is still there.
    pub fn numbers_mut_near(
        &mut self,
        hint: usize,
        name: &str,
    ) -> Option<(usize, bool, Shape, &mut [f64])> {
        let i = match self.entries.get(hint) {
            Some((k, _)) if k == name => hint,
            _ => self.index_of(name)?,
        };
        Some(match &mut self.entries[i].1 {
            Binding::Uniform(t) => (i, false, t.shape, t.data.as_mut_slice()),
            Binding::Lanes { shape, data } => (i, true, *shape, data.as_mut_slice()),
        })
    }

    /// Where `name` is bound, for [`Bindings::at`].
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.search(name).ok()
    }

    /// Where `name` is bound, or where it would go to keep the names sorted.
    fn search(&self, name: &str) -> std::result::Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.as_str().cmp(name))
    }

    /// The name bound at `i`, if there is an `i`-th binding.
    pub(crate) fn name_at(&self, i: usize) -> Option<&str> {
        self.entries.get(i).map(|(k, _)| k.as_str())
    }

    /// The binding at `i` (from [`Bindings::index_of`]).
    pub(crate) fn at(&self, i: usize) -> &Binding {
        &self.entries[i].1
    }

    /// Which names are bound where: equal for two bindings only when their names and
    /// places are.
    pub(crate) fn names(&self) -> u64 {
        self.names
    }

    fn insert(&mut self, name: &str, b: Binding) {
        self.names = NAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        match self.search(name) {
            Ok(i) => self.entries[i].1 = b,
            Err(i) => self.entries.insert(i, (name.to_string(), b)),
        }
    }
}
