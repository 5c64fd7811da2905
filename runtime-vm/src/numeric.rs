//! Payload arithmetic for the executor: each instruction allocates its result slot in the
//! shared payload arena, runs the shared lane kernel, and leaves the shared tape record.

use crate::error::Result;
use crate::exec::Machine;
use runtime_cpu::kernels::elementwise::{self, View};
use runtime_cpu::kernels::{broadcast, linalg};
use runtime_cpu::payload::SlotInfo;
use runtime_cpu::tape::{LinalgOp, Rec};
use runtime_cpu::{MaskId, Slot};
use shared_ir::{BinaryOp, Real, Shape, UnaryOp};

impl<R: Real> Machine<'_, R> {
    /// A new slot and its description, charged against the memory limit.
    #[inline]
    pub fn alloc(&mut self, shape: Shape, lanes: bool, active: bool) -> Result<(Slot, SlotInfo)> {
        let slot = self.s.pay.alloc_info(shape, lanes, active);
        let Some((s, info)) = slot else {
            return Err(self.memory_error());
        };
        let numbers = info.stored(self.s.pay.lanes());
        self.charge(std::mem::size_of::<SlotInfo>() + numbers * std::mem::size_of::<R>())?;
        Ok((s, info))
    }

    /// `op` of one value, element by element.
    pub fn unary(&mut self, op: UnaryOp, a: Slot) -> Result<Slot> {
        let ia = self.s.pay.info(a);
        let out = if ia.is_uniform_scalar() {
            let x = self.s.pay.data()[ia.offset];
            self.charge(std::mem::size_of::<SlotInfo>() + std::mem::size_of::<R>())?;
            match self.s.pay.push_scalar(op.apply(x), ia.active) {
                Some(s) => s,
                None => return Err(self.memory_error()),
            }
        } else {
            let (out, io) = self.alloc(ia.shape, ia.lanes, ia.active)?;
            let w = if io.lanes { self.s.pay.lanes() } else { 1 };
            let (before, o) = self.s.pay.split_info(&io);
            let va = View {
                data: &before[ia.offset..ia.offset + ia.stored(w)],
                lanes: io.lanes,
                scalar: false,
            };
            runtime_cpu::with_width!(w, lw => elementwise::unary(op, o, va, io.n(), lw));
            out
        };
        if ia.active && self.taping {
            self.record(Rec::Unary { op, out, a })?;
        }
        Ok(out)
    }

    /// `a op b`, element by element; a scalar broadcasts against a vector.
    pub fn binary(&mut self, op: BinaryOp, a: Slot, b: Slot) -> Result<Slot> {
        let (ia, ib) = (self.s.pay.info(a), self.s.pay.info(b));
        let active = ia.active || ib.active;
        let out = if ia.is_uniform_scalar() && ib.is_uniform_scalar() {
            let d = self.s.pay.data();
            let y = op.apply(d[ia.offset], d[ib.offset]);
            self.charge(std::mem::size_of::<SlotInfo>() + std::mem::size_of::<R>())?;
            match self.s.pay.push_scalar(y, active) {
                Some(s) => s,
                None => return Err(self.memory_error()),
            }
        } else {
            let shape = if ia.shape == ib.shape || ib.shape.is_scalar() {
                ia.shape
            } else if ia.shape.is_scalar() {
                ib.shape
            } else {
                let name = crate::op::Op::Binary(op).name();
                return Err(self.shape_error(
                    name,
                    format!(
                        "cannot combine {} with {} element by element",
                        ia.shape, ib.shape
                    ),
                ));
            };
            let (out, io) = self.alloc(shape, ia.lanes || ib.lanes, active)?;
            let w = if io.lanes { self.s.pay.lanes() } else { 1 };
            let (before, o) = self.s.pay.split_info(&io);
            let view = |i: &SlotInfo| View {
                data: &before[i.offset..i.offset + i.stored(w)],
                lanes: i.lanes && w > 1,
                scalar: i.shape.is_scalar(),
            };
            let (va, vb) = (view(&ia), view(&ib));
            runtime_cpu::with_width!(w, lw => elementwise::binary(op, o, va, vb, shape.len(), lw));
            out
        };
        if active && self.taping {
            self.record(Rec::Binary { op, out, a, b })?;
        }
        Ok(out)
    }

    /// The dot product of two vectors of one length.
    pub fn dot(&mut self, a: Slot, b: Slot) -> Result<Slot> {
        let (ia, ib) = (self.s.pay.info(a), self.s.pay.info(b));
        let n = match (ia.shape, ib.shape) {
            (Shape::Vector(n), Shape::Vector(m)) if n == m => n as usize,
            (x, y) => {
                return Err(self.shape_error(
                    "dot",
                    format!("needs two vectors of one length, got {x} and {y}"),
                ))
            }
        };
        let active = ia.active || ib.active;
        let (out, io) = self.alloc(Shape::Scalar, ia.lanes || ib.lanes, active)?;
        let l = if io.lanes { self.s.pay.lanes() } else { 1 };
        let st = &mut *self.s;
        let (before, o) = st.pay.split_info(&io);
        // A uniform operand of a per-lane product is broadcast to every lane.
        let av: &[R] = if ia.lanes || l == 1 {
            &before[ia.offset..ia.offset + ia.stored(l)]
        } else {
            broadcast(&mut st.buf_a, &before[ia.offset..ia.offset + n], l)
        };
        let bv: &[R] = if ib.lanes || l == 1 {
            &before[ib.offset..ib.offset + ib.stored(l)]
        } else {
            broadcast(&mut st.buf_b, &before[ib.offset..ib.offset + n], l)
        };
        runtime_cpu::with_width!(l, w => linalg::dot(o, av, bv, n, w));
        if active && self.taping {
            let op = LinalgOp::Dot;
            self.record(Rec::Linalg { op, out, a, b })?;
        }
        Ok(out)
    }

    /// Lane by lane, `a` where `cond` is set and `b` elsewhere (the merge after a divergent
    /// branch).
    pub fn select(&mut self, cond: MaskId, a: Slot, b: Slot) -> Result<Slot> {
        if a == b {
            return Ok(a);
        }
        let (ia, ib) = (self.s.pay.info(a), self.s.pay.info(b));
        if ia.shape != ib.shape {
            return Err(self.shape_error(
                "branch",
                format!(
                    "its blocks leave values of different shapes in one stack place ({} and {}), \
                     which lanes cannot merge",
                    ia.shape, ib.shape
                ),
            ));
        }
        let active = ia.active || ib.active;
        let (out, _) = self.alloc(ia.shape, true, active)?;
        let lanes = self.s.pay.lanes();
        let st = &mut *self.s;
        let c = st.masks.get(cond);
        let (inputs, o) = st.pay.split(out);
        for e in 0..ia.n() {
            let (ca, cb) = (inputs.col(a, e), inputs.col(b, e));
            for (l, y) in o[e * lanes..(e + 1) * lanes].iter_mut().enumerate() {
                *y = if c[l] { ca.at(l) } else { cb.at(l) };
            }
        }
        if active && self.taping {
            self.record(Rec::Select { out, cond, a, b })?;
        }
        Ok(out)
    }
}
