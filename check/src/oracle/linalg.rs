//! The oracle's vector and matrix primitives (reference section 5.5), written as the textbook
//! formulas: Gaussian elimination with partial pivoting for `det` (above 2x2), `inv` and `solve`.
//! Through [`Dual`](super::num::Dual) numbers these give exact forward-mode derivatives.

use super::eval::{fail, Interp, Res};
use super::num::Scalar;
use super::prims::type_err;
use super::syntax::Prim;
use super::value::{Shape, Tensor, Value};
use std::rc::Rc;

fn index<N: Scalar>(p: Prim, v: &Value<N>) -> Res<N, usize> {
    match v {
        Value::Num(x) => {
            let x = x.val();
            if x >= 0.0 && x.fract() == 0.0 && x < 4.0e9 {
                Ok(x as usize)
            } else {
                fail(format!(
                    "Domain: `{}`: {x} is not a non-negative integer",
                    p.name()
                ))
            }
        }
        other => type_err(p.name(), "an integer", other),
    }
}

fn tensor<N: Scalar>(p: Prim, v: &Value<N>) -> Res<N, Rc<Tensor<N>>> {
    match v {
        Value::Tensor(t) => Ok(t.clone()),
        other => type_err(p.name(), "a vector or matrix", other),
    }
}

fn vector<N: Scalar>(p: Prim, v: &Value<N>) -> Res<N, Rc<Tensor<N>>> {
    match v {
        Value::Tensor(t) if matches!(t.shape, Shape::Vector(_)) => Ok(t.clone()),
        other => type_err(p.name(), "a vector", other),
    }
}

fn matrix<N: Scalar>(p: Prim, v: &Value<N>) -> Res<N, (usize, usize, Rc<Tensor<N>>)> {
    match v {
        Value::Tensor(t) => match t.shape {
            Shape::Matrix(r, c) => Ok((r, c, t.clone())),
            _ => type_err(p.name(), "a matrix", v),
        },
        other => type_err(p.name(), "a matrix", other),
    }
}

fn square<N: Scalar>(p: Prim, v: &Value<N>) -> Res<N, (usize, Rc<Tensor<N>>)> {
    let (r, c, t) = matrix(p, v)?;
    if r != c {
        return fail(format!(
            "Shape: `{}` needs a square matrix, got {r}x{c}",
            p.name()
        ));
    }
    Ok((r, t))
}

fn shape_err<N, T>(p: Prim, a: Shape, b: Shape) -> Res<N, T> {
    fail(format!(
        "Shape: `{}`: {} does not fit {}",
        p.name(),
        a.describe(),
        b.describe()
    ))
}

fn sum<N: Scalar>(xs: impl Iterator<Item = N>) -> N {
    xs.fold(N::cst(0.0), |a, b| a + b)
}

/// Row-reduces `[a | b]` (a: n x n, b: n x k, row-major) with partial pivoting; returns the
/// solution (n x k) and the determinant of `a`.
fn eliminate<N: Scalar>(n: usize, a: &[N], k: usize, b: &[N]) -> (Vec<N>, N) {
    let mut m = a.to_vec();
    let mut x = b.to_vec();
    let mut det = N::cst(1.0);
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&i, &j| {
                m[i * n + col]
                    .val()
                    .abs()
                    .total_cmp(&m[j * n + col].val().abs())
            })
            .expect("a non-empty range");
        if piv != col {
            for j in 0..n {
                m.swap(col * n + j, piv * n + j);
            }
            for j in 0..k {
                x.swap(col * k + j, piv * k + j);
            }
            det = -det;
        }
        let p = m[col * n + col];
        det = det * p;
        for r in col + 1..n {
            let f = m[r * n + col] / p;
            for j in col..n {
                m[r * n + j] = m[r * n + j] - f * m[col * n + j];
            }
            for j in 0..k {
                x[r * k + j] = x[r * k + j] - f * x[col * k + j];
            }
        }
    }
    for col in (0..n).rev() {
        let p = m[col * n + col];
        for j in 0..k {
            let mut s = x[col * k + j];
            for c in col + 1..n {
                s = s - m[col * n + c] * x[c * k + j];
            }
            x[col * k + j] = s / p;
        }
    }
    (x, det)
}

fn det<N: Scalar>(n: usize, a: &[N]) -> N {
    match n {
        0 => N::cst(1.0),
        1 => a[0],
        2 => a[0] * a[3] - a[1] * a[2],
        _ => eliminate(n, a, 0, &[]).1,
    }
}

fn identity<N: Scalar>(n: usize) -> Vec<N> {
    (0..n * n)
        .map(|i| N::cst(if i / n == i % n { 1.0 } else { 0.0 }))
        .collect()
}

impl<N: Scalar> Interp<'_, N> {
    /// The vector and matrix primitives.
    pub fn tensor_prim(&self, p: Prim, args: Vec<Value<N>>) -> Res<N> {
        use Prim::*;
        match p {
            Vec => {
                let mut data = std::vec::Vec::with_capacity(args.len());
                for a in &args {
                    match a {
                        Value::Num(x) => data.push(*x),
                        other => return type_err(p.name(), "numbers", other),
                    }
                }
                Ok(Value::tensor(Shape::Vector(data.len()), data))
            }
            Mat => self.rows(p, &args),
            Brackets => {
                if !args.is_empty()
                    && args.iter().all(
                        |a| matches!(a, Value::Tensor(t) if matches!(t.shape, Shape::Vector(_))),
                    )
                {
                    self.rows(p, &args)
                } else {
                    self.tensor_prim(Vec, args)
                }
            }
            Iota => {
                let n = index(p, &args[0])?;
                if n > 1 << 28 {
                    return fail(format!("Domain: `{}`: too large", p.name()));
                }
                let data = (0..n).map(|i| N::cst(i as f64)).collect();
                Ok(Value::tensor(Shape::Vector(n), data))
            }
            Eye | Zeros | Ones => {
                let r = index(p, &args[0])?;
                let (shape, fill) = match (p, args.get(1)) {
                    (Eye, _) => (Shape::Matrix(r, r), None),
                    (_, Some(c)) => (Shape::Matrix(r, index(p, c)?), Some(p == Ones)),
                    (_, None) => (Shape::Vector(r), Some(p == Ones)),
                };
                if shape.len() > 1 << 28 {
                    return fail(format!("Domain: `{}`: too large", p.name()));
                }
                let data = match fill {
                    None => identity(r),
                    Some(one) => vec![N::cst(if one { 1.0 } else { 0.0 }); shape.len()],
                };
                Ok(Value::tensor(shape, data))
            }
            Ref => {
                let t = tensor(p, &args[0])?;
                let i = index(p, &args[1])?;
                match (t.shape, args.get(2)) {
                    (Shape::Vector(n), None) if i < n => Ok(Value::Num(t.data[i])),
                    (Shape::Matrix(r, c), None) if i < r => Ok(Value::tensor(
                        Shape::Vector(c),
                        t.data[i * c..(i + 1) * c].to_vec(),
                    )),
                    (Shape::Matrix(r, c), Some(j)) => {
                        let j = index(p, j)?;
                        if i < r && j < c {
                            Ok(Value::Num(t.data[i * c + j]))
                        } else {
                            fail("Domain: `ref`: index out of range")
                        }
                    }
                    (Shape::Vector(_), Some(_)) => type_err(p.name(), "a matrix", &args[0]),
                    _ => fail(format!("Domain: `ref`: index {i} is out of range")),
                }
            }
            Dot => {
                let (a, b) = (vector(p, &args[0])?, vector(p, &args[1])?);
                if a.shape != b.shape {
                    return shape_err(p, a.shape, b.shape);
                }
                Ok(Value::Num(sum(a
                    .data
                    .iter()
                    .zip(&b.data)
                    .map(|(&x, &y)| x * y))))
            }
            Vsum => Ok(Value::Num(sum(tensor(p, &args[0])?.data.iter().copied()))),
            Vlen => {
                let n = match tensor(p, &args[0])?.shape {
                    Shape::Vector(n) => n,
                    Shape::Matrix(r, _) => r,
                };
                Ok(Value::Num(N::cst(n as f64)))
            }
            Norm => {
                let t = tensor(p, &args[0])?;
                Ok(Value::Num(sum(t.data.iter().map(|&x| x * x)).sqrt()))
            }
            Normalize => {
                let t = tensor(p, &args[0])?;
                let mut norm = sum(t.data.iter().map(|&x| x * x)).sqrt();
                if self.prog.protected {
                    norm = super::prims::clamp_low(norm);
                }
                Ok(Value::tensor(
                    t.shape,
                    t.data.iter().map(|&x| x / norm).collect(),
                ))
            }
            Cross => {
                let (a, b) = (vector(p, &args[0])?, vector(p, &args[1])?);
                if a.shape != Shape::Vector(3) || b.shape != Shape::Vector(3) {
                    return shape_err(p, a.shape, b.shape);
                }
                let (a, b) = (&a.data, &b.data);
                let data = vec![
                    a[1] * b[2] - a[2] * b[1],
                    a[2] * b[0] - a[0] * b[2],
                    a[0] * b[1] - a[1] * b[0],
                ];
                Ok(Value::tensor(Shape::Vector(3), data))
            }
            Matvec => {
                let (m, k, a) = matrix(p, &args[0])?;
                let v = vector(p, &args[1])?;
                if v.shape != Shape::Vector(k) {
                    return shape_err(p, a.shape, v.shape);
                }
                let data = (0..m)
                    .map(|i| sum((0..k).map(|j| a.data[i * k + j] * v.data[j])))
                    .collect();
                Ok(Value::tensor(Shape::Vector(m), data))
            }
            Matmul => {
                let (m, k, a) = matrix(p, &args[0])?;
                let (k2, n, b) = matrix(p, &args[1])?;
                if k != k2 {
                    return shape_err(p, a.shape, b.shape);
                }
                let mut data = std::vec::Vec::with_capacity(m * n);
                for i in 0..m {
                    for j in 0..n {
                        data.push(sum((0..k).map(|t| a.data[i * k + t] * b.data[t * n + j])));
                    }
                }
                Ok(Value::tensor(Shape::Matrix(m, n), data))
            }
            Transpose => {
                let (r, c, a) = matrix(p, &args[0])?;
                let data = (0..c * r).map(|i| a.data[(i % r) * c + i / r]).collect();
                Ok(Value::tensor(Shape::Matrix(c, r), data))
            }
            Trace => {
                let (r, c, a) = matrix(p, &args[0])?;
                Ok(Value::Num(sum((0..r.min(c)).map(|i| a.data[i * c + i]))))
            }
            Outer => {
                let (a, b) = (vector(p, &args[0])?, vector(p, &args[1])?);
                let data = a
                    .data
                    .iter()
                    .flat_map(|&x| b.data.iter().map(move |&y| x * y))
                    .collect();
                Ok(Value::tensor(
                    Shape::Matrix(a.data.len(), b.data.len()),
                    data,
                ))
            }
            Scale => match &args[0] {
                Value::Num(_) => self.zip(p, &args[0], &args[1], |s, x| s * x),
                other => type_err(p.name(), "a number to scale by", other),
            },
            Det => {
                let (n, a) = square(p, &args[0])?;
                Ok(Value::Num(det(n, &a.data)))
            }
            Logdet => {
                let (n, a) = square(p, &args[0])?;
                let d = det(n, &a.data);
                self.note(d, N::cst(0.0));
                Ok(Value::Num(d.abs().ln()))
            }
            Inv => {
                let (n, a) = square(p, &args[0])?;
                let (x, _) = eliminate(n, &a.data, n, &identity(n));
                Ok(Value::tensor(Shape::Matrix(n, n), x))
            }
            Solve => {
                let (n, a) = square(p, &args[0])?;
                let b = tensor(p, &args[1])?;
                let k = match b.shape {
                    Shape::Vector(m) if m == n => 1,
                    Shape::Matrix(m, k) if m == n => k,
                    other => return shape_err(p, a.shape, other),
                };
                let (x, _) = eliminate(n, &a.data, k, &b.data);
                Ok(Value::tensor(b.shape, x))
            }
            _ => unreachable!("every primitive is handled in prims.rs or here"),
        }
    }

    fn rows(&self, p: Prim, args: &[Value<N>]) -> Res<N> {
        let mut data = std::vec::Vec::new();
        let mut cols = None;
        for a in args {
            let v = vector(p, a)?;
            let n = v.data.len();
            if cols.is_some_and(|c| c != n) {
                return fail(format!("Shape: `{}`: rows differ in length", p.name()));
            }
            cols = Some(n);
            data.extend_from_slice(&v.data);
        }
        Ok(Value::tensor(
            Shape::Matrix(args.len(), cols.unwrap_or(0)),
            data,
        ))
    }
}
