//! Primitives that build and take apart structure: arithmetic folds, comparisons chained over
//! many arguments, booleans, lists, predicates, vector and matrix constructors, and `ref`.

use super::{EResult, Machine};
use crate::builtin::Builtin;
use crate::code::NodeId;
use crate::error::Error;
use crate::regions::Step;
use crate::tape::Rec;
use crate::value::Value;
use shared_ir::{BinaryOp, Real, Shape, UnaryOp};

impl<R: Real> Machine<'_, R> {
    /// Calls a primitive used as a value: checks its arity first.
    pub(crate) fn apply_builtin_value(
        &mut self,
        b: Builtin,
        base: usize,
        nargs: usize,
        node: NodeId,
    ) -> EResult<Value> {
        let arity = b.arity();
        if !arity.accepts(nargs) {
            return Err(self.fail(Error::ArityMismatch {
                name: b.name().to_string(),
                expected: arity.describe(),
                got: nargs,
                span: self.span(node),
            }));
        }
        self.apply_builtin(b, base, nargs, node)
    }

    #[inline(always)]
    fn arg(&self, base: usize, i: usize) -> Value {
        self.s.stack[base + i]
    }

    /// Applies primitive `b` to the `nargs` values at `base` on the value stack.
    pub(crate) fn apply_builtin(
        &mut self,
        b: Builtin,
        base: usize,
        nargs: usize,
        node: NodeId,
    ) -> EResult<Value> {
        let a0 = if nargs > 0 {
            self.arg(base, 0)
        } else {
            Value::Nil
        };
        let a1 = if nargs > 1 {
            self.arg(base, 1)
        } else {
            Value::Nil
        };
        match b {
            Builtin::Add
            | Builtin::Mul
            | Builtin::Sub
            | Builtin::Div
            | Builtin::Min
            | Builtin::Max => self.fold(b, base, nargs, node),
            Builtin::Binary(op) => self.binary(op, a0, a1, node),
            Builtin::Unary(op) => self.unary(op, a0, node),
            Builtin::Compare(op) => {
                let mut acc = Value::Bool(true);
                for i in 0..nargs - 1 {
                    let (x, y) = (self.arg(base, i), self.arg(base, i + 1));
                    let c = self.compare(op, x, y, node)?;
                    acc = self.and_bool(acc, c);
                }
                Ok(acc)
            }
            Builtin::Not => Ok(match a0 {
                Value::Bool(x) => Value::Bool(!x),
                Value::LaneBool(m) => Value::LaneBool(self.s.masks.not(m)),
                _ => Value::Bool(false),
            }),
            Builtin::Cons => Ok(self.s.heap.cons(a0, a1)),
            Builtin::Car | Builtin::Cdr => match a0 {
                Value::Pair(p) => {
                    let (car, cdr) = self.s.heap.pairs[p as usize];
                    Ok(if b == Builtin::Car { car } else { cdr })
                }
                other => Err(self.type_error(b.name(), "a pair", other, node)),
            },
            Builtin::List => {
                let mut acc = Value::Nil;
                for i in (0..nargs).rev() {
                    let v = self.arg(base, i);
                    acc = self.s.heap.cons(v, acc);
                }
                Ok(acc)
            }
            Builtin::IsNull => Ok(Value::Bool(a0 == Value::Nil)),
            Builtin::IsPair => Ok(Value::Bool(matches!(a0, Value::Pair(_)))),
            Builtin::IsNumber => Ok(Value::Bool(
                matches!(a0, Value::Num(s) if self.s.pay.info(s).is_scalar()),
            )),
            Builtin::IsBoolean => Ok(Value::Bool(matches!(
                a0,
                Value::Bool(_) | Value::LaneBool(_)
            ))),
            Builtin::IsSymbol => Ok(Value::Bool(matches!(a0, Value::Sym(_)))),
            Builtin::IsProcedure => Ok(Value::Bool(matches!(
                a0,
                Value::Closure(_) | Value::Builtin(_)
            ))),
            Builtin::IsEq => self.is_eq(a0, a1, node),
            Builtin::Vec => self.pack_vector(base, nargs, node, "vec"),
            Builtin::Mat => self.pack_matrix(base, nargs, node, "mat"),
            Builtin::Bracket => {
                let all_vectors = nargs > 0
                    && (0..nargs).all(|i| {
                        matches!(self.arg(base, i), Value::Num(s) if matches!(self.s.pay.info(s).shape(), Shape::Vector(_)))
                    });
                if all_vectors {
                    self.pack_matrix(base, nargs, node, "[...]")
                } else {
                    self.pack_vector(base, nargs, node, "[...]")
                }
            }
            Builtin::Eye | Builtin::Zeros | Builtin::Ones | Builtin::Iota => {
                self.constant_tensor(b, base, nargs, node)
            }
            Builtin::Ref => {
                let j = (nargs == 3).then(|| self.arg(base, 2));
                self.reference(a0, a1, j, node)
            }
            _ => self.apply_linalg(b, a0, a1, node),
        }
    }

    /// Left fold of an arithmetic primitive over its arguments.
    fn fold(&mut self, b: Builtin, base: usize, nargs: usize, node: NodeId) -> EResult<Value> {
        let op = match b {
            Builtin::Add => BinaryOp::Add,
            Builtin::Sub => BinaryOp::Sub,
            Builtin::Mul => BinaryOp::Mul,
            Builtin::Div => BinaryOp::Div,
            Builtin::Min => BinaryOp::Min,
            _ => BinaryOp::Max,
        };
        match nargs {
            0 => {
                let x = if b == Builtin::Mul { R::ONE } else { R::ZERO };
                match self.s.pay.push_scalar(x, false) {
                    Some(s) => Ok(Value::Num(s)),
                    None => Err(self.memory_error(Some(node))),
                }
            }
            1 => {
                let v = self.arg(base, 0);
                match b {
                    Builtin::Sub => self.unary(UnaryOp::Neg, v, node),
                    Builtin::Div => self.unary(UnaryOp::Recip, v, node),
                    _ => {
                        self.num(v, b.name(), node)?;
                        Ok(v)
                    }
                }
            }
            _ => {
                let mut acc = self.arg(base, 0);
                for i in 1..nargs {
                    let y = self.arg(base, i);
                    acc = self.binary(op, acc, y, node)?;
                }
                Ok(acc)
            }
        }
    }

    /// Lane-wise `and` of two booleans.
    fn and_bool(&mut self, a: Value, b: Value) -> Value {
        match (a, b) {
            (Value::Bool(true), x) | (x, Value::Bool(true)) => x,
            (Value::Bool(false), _) | (_, Value::Bool(false)) => Value::Bool(false),
            (Value::LaneBool(x), Value::LaneBool(y)) => Value::LaneBool(self.s.masks.and(x, y)),
            _ => Value::Bool(false),
        }
    }

    /// `eq?`: identity for structure; numeric equality (per lane) for numbers.
    fn is_eq(&mut self, a: Value, b: Value, node: NodeId) -> EResult<Value> {
        match (a, b) {
            (Value::Num(x), Value::Num(y)) if x == y => Ok(Value::Bool(true)),
            (Value::Num(x), Value::Num(y))
                if self.s.pay.info(x).is_scalar() && self.s.pay.info(y).is_scalar() =>
            {
                self.compare(shared_ir::CompareOp::Eq, a, b, node)
            }
            (Value::Bool(_) | Value::LaneBool(_), Value::Bool(_) | Value::LaneBool(_)) => {
                Ok(match (a, b) {
                    (Value::Bool(x), Value::Bool(y)) => Value::Bool(x == y),
                    (Value::LaneBool(m), Value::Bool(y)) | (Value::Bool(y), Value::LaneBool(m)) => {
                        if y {
                            Value::LaneBool(m)
                        } else {
                            Value::LaneBool(self.s.masks.not(m))
                        }
                    }
                    (Value::LaneBool(m), Value::LaneBool(k)) => {
                        Value::LaneBool(self.s.masks.equal(m, k))
                    }
                    _ => unreachable!("booleans"),
                })
            }
            _ => Ok(Value::Bool(a == b)),
        }
    }

    /// Builds a vector from scalar arguments.
    fn pack_vector(&mut self, base: usize, nargs: usize, node: NodeId, op: &str) -> EResult<Value> {
        for i in 0..nargs {
            let v = self.arg(base, i);
            let s = self.num(v, op, node)?;
            if !self.s.pay.info(s).is_scalar() {
                return Err(self.type_error(op, "numbers", v, node));
            }
        }
        self.pack(base, nargs, Shape::Vector(nargs as u32), node)
    }

    /// Builds a matrix from row vectors of equal length.
    fn pack_matrix(&mut self, base: usize, nargs: usize, node: NodeId, op: &str) -> EResult<Value> {
        let mut cols = None;
        for i in 0..nargs {
            let v = self.arg(base, i);
            let s = self.num(v, op, node)?;
            let Shape::Vector(n) = self.s.pay.info(s).shape() else {
                return Err(self.type_error(op, "row vectors", v, node));
            };
            if *cols.get_or_insert(n) != n {
                return Err(self.fail(Error::Shape {
                    op: op.to_string(),
                    message: format!(
                        "rows must have equal length, but row {i} has {n} and row 0 has {}",
                        cols.unwrap_or(0)
                    ),
                    span: self.span(node),
                }));
            }
        }
        self.pack(
            base,
            nargs,
            Shape::Matrix(nargs as u32, cols.unwrap_or(0)),
            node,
        )
    }

    /// Concatenates the numeric arguments into one slot of `shape`.
    fn pack(&mut self, base: usize, nargs: usize, shape: Shape, node: NodeId) -> EResult<Value> {
        let mut lanes = false;
        let mut active = false;
        for i in 0..nargs {
            if let Value::Num(s) = self.arg(base, i) {
                let info = self.s.pay.info(s);
                lanes |= info.lanes();
                active |= info.active();
            }
        }
        let out = self.alloc_slot(shape, lanes, active, Some(node))?;
        let lanes_out = self.s.pay.info(out).lanes();
        let aux_start = self.s.tape.aux.len() as u32;
        let s = &mut *self.s;
        s.parts.clear();
        for i in 0..nargs {
            let Value::Num(p) = s.stack[base + i] else {
                unreachable!("checked")
            };
            s.parts.push(p);
        }
        if active && self.taping {
            s.tape.aux.extend_from_slice(&s.parts);
        }
        let rec = Rec::Pack {
            out,
            start: 0,
            count: nargs as u32,
        };
        self.exec(rec, lanes_out);
        let s = &mut *self.s;
        if active && self.taping {
            let rec = Rec::Pack {
                out,
                start: aux_start,
                count: nargs as u32,
            };
            s.tape.push(rec, self.mask);
        }
        Ok(Value::Num(out))
    }

    /// A structural integer argument (a size or an index): the same on every lane.
    pub(crate) fn index_arg(
        &mut self,
        v: Value,
        op: &str,
        what: &'static str,
        node: NodeId,
    ) -> EResult<usize> {
        let s = self.num(v, op, node)?;
        let info = self.s.pay.info(s);
        if !info.is_scalar() {
            return Err(self.type_error(op, "a number", v, node));
        }
        let x = match self.s.pay.scalar(s) {
            Some(x) => x,
            None => {
                self.flush_for(&[s])?;
                let data = self.s.pay.get(s);
                let active = self.s.masks.get(self.mask);
                let mut first = None;
                for (l, &x) in data.iter().enumerate() {
                    if !active[l] {
                        continue;
                    }
                    match first {
                        None => first = Some(x),
                        Some(f) if f.to_f64() != x.to_f64() => {
                            return Err(self.fail(Error::LaneVarying {
                                op: op.to_string(),
                                what,
                                span: self.span(node),
                            }))
                        }
                        _ => {}
                    }
                }
                first.unwrap_or(R::ZERO)
            }
        };
        let f = x.to_f64();
        let mask = self.mask;
        self.s.regions.trace.push(Step::Index { s, mask, x: f });
        if !(f >= 0.0 && f.fract() == 0.0 && f < u32::MAX as f64) {
            let message = if f >= u32::MAX as f64 && f.fract() == 0.0 {
                format!("{what} must be below {}, got {f}", u32::MAX)
            } else {
                format!("{what} must be a non-negative integer, got {f}")
            };
            return Err(self.fail(Error::Domain {
                op: op.to_string(),
                message,
                span: self.span(node),
            }));
        }
        Ok(f as usize)
    }

    /// `eye`, `zeros`, `ones`, `iota`: uniform constants, their sizes taken from the
    /// arguments.
    fn constant_tensor(
        &mut self,
        b: Builtin,
        base: usize,
        nargs: usize,
        node: NodeId,
    ) -> EResult<Value> {
        let name = b.name();
        let n = self.index_arg(self.arg(base, 0), name, "the size", node)? as u32;
        let shape = match (b, nargs) {
            (Builtin::Eye, _) => Shape::Matrix(n, n),
            (_, 1) => Shape::Vector(n),
            _ => Shape::Matrix(
                n,
                self.index_arg(self.arg(base, 1), name, "the size", node)? as u32,
            ),
        };
        if !crate::builtin::tensor_fits(shape) {
            return Err(self.fail(Error::Domain {
                op: name.to_string(),
                message: format!("{shape} is too large"),
                span: self.span(node),
            }));
        }
        // The step budget pays for every element made.
        self.charge((shape.len() as u64).saturating_sub(1), node)?;
        self.tensor(b, shape, node)
    }

    /// A fresh constant tensor of `shape` (which fits) made by `b`: `eye`, `zeros`, `ones`
    /// or `iota`.
    pub(crate) fn tensor(&mut self, b: Builtin, shape: Shape, node: NodeId) -> EResult<Value> {
        let out = self.alloc_slot(shape, false, false, Some(node))?;
        let data = self.s.pay.get_mut(out);
        match b {
            Builtin::Ones => data.fill(R::ONE),
            Builtin::Iota => {
                for (i, x) in data.iter_mut().enumerate() {
                    *x = R::from_f64(i as f64);
                }
            }
            Builtin::Eye => {
                let n = match shape {
                    Shape::Matrix(n, _) => n as usize,
                    _ => 0,
                };
                data.fill(R::ZERO);
                for i in 0..n {
                    data[i * n + i] = R::ONE;
                }
            }
            _ => data.fill(R::ZERO),
        }
        Ok(Value::Num(out))
    }

    /// `ref v i` (an element), `ref M i` (a row), `ref M i j` (an element: `j` is
    /// `Some`).
    pub(crate) fn reference(
        &mut self,
        v: Value,
        iv: Value,
        jv: Option<Value>,
        node: NodeId,
    ) -> EResult<Value> {
        let src = self.num(v, "ref", node)?;
        let info = self.s.pay.info(src);
        let i = self.index_arg(iv, "ref", "the index", node)?;
        let (first, shape, bound) = match (info.shape(), jv) {
            (Shape::Vector(n), None) => (i, Shape::Scalar, (i, n as usize)),
            (Shape::Matrix(r, c), None) => (i * c as usize, Shape::Vector(c), (i, r as usize)),
            (Shape::Matrix(r, c), Some(jv)) => {
                let j = self.index_arg(jv, "ref", "the index", node)?;
                if j >= c as usize {
                    return Err(self.out_of_range(j, c as usize, "column", node));
                }
                (i * c as usize + j, Shape::Scalar, (i, r as usize))
            }
            _ => {
                let expected = if jv.is_some() {
                    "a matrix"
                } else {
                    "a vector or a matrix"
                };
                return Err(self.type_error("ref", expected, v, node));
            }
        };
        if bound.0 >= bound.1 {
            let what = if matches!(info.shape(), Shape::Matrix(..)) {
                "row"
            } else {
                "element"
            };
            return Err(self.out_of_range(bound.0, bound.1, what, node));
        }
        let first = first as u32;
        let rec = |out| Rec::Extract { out, src, first };
        let out = self.emit(shape, info.lanes(), info.active(), node, rec)?;
        Ok(Value::Num(out))
    }

    #[cold]
    fn out_of_range(&self, i: usize, n: usize, what: &str, node: NodeId) -> super::Stop {
        self.fail(Error::Domain {
            op: "ref".to_string(),
            message: format!("{what} index {i} is out of range (there are {n})"),
            span: self.span(node),
        })
    }

    /// A value, in words, for error messages.
    pub(crate) fn describe(&self, v: Value) -> String {
        match v {
            Value::Num(s) => {
                let info = self.s.pay.info(s);
                match (info.shape(), self.s.pay.scalar(s)) {
                    (Shape::Scalar, Some(x)) => format!("the number {x}"),
                    (shape, _) => shape.to_string(),
                }
            }
            Value::Sym(s) => format!("the symbol `{}`", self.code.symbol_names[s.0 as usize]),
            Value::Bool(b) => format!("the boolean {}", if b { "#t" } else { "#f" }),
            Value::Builtin(b) => format!("the procedure `{}`", b.name()),
            other => other.kind().to_string(),
        }
    }
}
