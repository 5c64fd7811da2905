//! Tensor shapes: a scalar, a vector or a matrix. A shape is structural: it is the same on
//! every lane of a payload.

use std::fmt;

/// The shape of one lane of a payload.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// One number.
    Scalar,
    /// A vector of `n` numbers.
    Vector(u32),
    /// A `rows x cols` matrix, row-major.
    Matrix(u32, u32),
}

impl Shape {
    /// Number of elements per lane.
    #[inline]
    pub fn len(self) -> usize {
        match self {
            Shape::Scalar => 1,
            Shape::Vector(n) => n as usize,
            Shape::Matrix(r, c) => r as usize * c as usize,
        }
    }

    /// True for a zero-length vector or an empty matrix.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// True for [`Shape::Scalar`].
    #[inline]
    pub fn is_scalar(self) -> bool {
        matches!(self, Shape::Scalar)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Scalar => write!(f, "a number"),
            Shape::Vector(n) => write!(f, "a vector of {n}"),
            Shape::Matrix(r, c) => write!(f, "a {r}x{c} matrix"),
        }
    }
}
