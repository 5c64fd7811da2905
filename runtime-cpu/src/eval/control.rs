//! Control over lanes: the truth of a test, divergent branches under lane masks, merging the
//! values of two branches lane by lane, and loops whose lanes leave at different iterations.

use super::{Ctx, EResult, Fault, Flow, Machine};
use crate::code::NodeId;
use crate::heap::Closure;
use crate::value::{MaskId, Value};
use shared_ir::Real;

/// How a test splits the active lanes.
pub(crate) enum Truth {
    /// True on every active lane.
    True,
    /// False on every active lane.
    False,
    /// True on the lanes of the first mask, false on the second's.
    Split(MaskId, MaskId),
}

/// What a walk does after a divergent `if`.
pub(crate) enum Next {
    /// The `if` produced the walk's result.
    Done(Flow),
    /// Continue with the loop body (the remaining lanes iterate).
    Jump(NodeId),
}

/// A loop running in some walk.
#[derive(Debug)]
pub(crate) struct LoopState {
    /// The loop body, where `recur` jumps.
    pub body: NodeId,
    /// Lanes active when the loop started.
    entry_mask: MaskId,
    /// Values of the lanes that have already left the loop.
    pub exit: Option<Value>,
    /// Where its iterations' dead slots start, when they are given back.
    pub mark: Option<super::reclaim::Mark>,
    /// Arguments of `recur`s made in branches, merged lane by lane.
    pending: Vec<Value>,
    /// Frame slot of the first loop variable (for pending arguments).
    pending_slot: usize,
    /// Lanes that made those `recur`s.
    pending_mask: Option<MaskId>,
}

impl LoopState {
    pub fn new(body: NodeId, entry_mask: MaskId, mark: Option<super::reclaim::Mark>) -> Self {
        LoopState {
            body,
            entry_mask,
            exit: None,
            mark,
            pending: Vec::new(),
            pending_slot: 0,
            pending_mask: None,
        }
    }
}

impl<R: Real> Machine<'_, R> {
    /// Decides a branch on `v` over the active lanes: only `#f` is false.
    pub(crate) fn truth(&mut self, v: Value) -> Truth {
        match v {
            Value::Bool(false) => Truth::False,
            Value::LaneBool(m) => {
                let (any_t, any_f) = self.s.masks.split_counts(self.mask, m);
                if !any_f {
                    Truth::True
                } else if !any_t {
                    Truth::False
                } else {
                    let tm = self.s.masks.and(self.mask, m);
                    let em = self.s.masks.and_not(self.mask, m);
                    Truth::Split(tm, em)
                }
            }
            _ => Truth::True,
        }
    }

    /// Runs both branches of an `if` whose test differs across lanes, each under its lanes,
    /// and combines what they did.
    pub(crate) fn divergent_if(
        &mut self,
        tm: MaskId,
        em: MaskId,
        then: NodeId,
        other: NodeId,
        ctx: Ctx,
        loops_base: usize,
    ) -> EResult<Next> {
        let saved = self.mask;
        self.mask = tm;
        let tf = self.eval_flow(then, ctx);
        self.mask = em;
        let ef = match tf {
            Ok(_) => self.eval_flow(other, ctx),
            Err(_) => Ok(Flow::Recurred),
        };
        self.mask = saved;
        let (tf, ef) = (tf?, ef?);
        match (tf, ef) {
            (Flow::Value(a), Flow::Value(b)) => Ok(Next::Done(Flow::Value(self.merge(tm, a, b)?))),
            (Flow::Recurred, Flow::Recurred) => Ok(self.after_recur(loops_base, ctx)),
            (Flow::Value(a), Flow::Recurred) => {
                self.record_exit(a, tm)?;
                Ok(self.after_recur(loops_base, ctx))
            }
            (Flow::Recurred, Flow::Value(b)) => {
                self.record_exit(b, em)?;
                Ok(self.after_recur(loops_base, ctx))
            }
        }
    }

    /// After branches left `recur` arguments pending: iterate here if the loop is this walk's,
    /// else pass the `recur` up to the walk that runs the loop.
    fn after_recur(&mut self, loops_base: usize, ctx: Ctx) -> Next {
        if self.s.loops.len() <= loops_base {
            return Next::Done(Flow::Recurred);
        }
        let st = self.s.loops.last_mut().expect("checked");
        let dst = ctx.fp + st.pending_slot;
        let n = st.pending.len();
        self.s.stack[dst..dst + n].copy_from_slice(&st.pending);
        st.pending.clear();
        self.mask = st.pending_mask.take().expect("a recur left its lanes");
        let body = st.body;
        self.reclaim(super::reclaim::Roots { start: dst, len: n });
        Next::Jump(body)
    }

    /// Records a `recur` made under the current lanes, merging with `recur`s made by sibling
    /// branches.
    pub(crate) fn pend_recur(&mut self, base: usize, n: usize, slot: usize) -> EResult<()> {
        let st = self.s.loops.last_mut().expect("recur is inside a loop");
        st.pending_slot = slot;
        match st.pending_mask {
            None => {
                st.pending.clear();
                st.pending.extend_from_slice(&self.s.stack[base..base + n]);
                st.pending_mask = Some(self.mask);
            }
            Some(pm) => {
                let mut old = std::mem::take(&mut st.pending);
                for (i, o) in old.iter_mut().enumerate() {
                    let new = self.s.stack[base + i];
                    *o = self.merge(self.mask, new, *o)?;
                }
                let union = self.s.masks.or(pm, self.mask);
                let st = self.s.loops.last_mut().expect("still there");
                st.pending = old;
                st.pending_mask = Some(union);
            }
        }
        Ok(())
    }

    /// Keeps `v` as the loop's value for the lanes of `m`, which leave the loop now.
    fn record_exit(&mut self, v: Value, m: MaskId) -> EResult<()> {
        let st = self.s.loops.last_mut().expect("inside a loop");
        let merged = match st.exit.take() {
            None => v,
            Some(acc) => self.merge(m, v, acc)?,
        };
        self.s.loops.last_mut().expect("still there").exit = Some(merged);
        Ok(())
    }

    /// Ends the loops a walk started: lanes still active take `v`, lanes that left earlier keep
    /// their exit values.
    pub(crate) fn finish_loops(&mut self, loops_base: usize, mut v: Value) -> EResult<Value> {
        while self.s.loops.len() > loops_base {
            let st = self.s.loops.pop().expect("checked");
            if let Some(acc) = st.exit {
                v = self.merge(self.mask, v, acc)?;
            }
            self.mask = st.entry_mask;
        }
        Ok(v)
    }

    /// Whether a call can replace this walk: true unless lanes already left one of its loops
    /// (then the loops are finished here first).
    pub(crate) fn loops_allow_tail_call(&mut self, loops_base: usize) -> bool {
        if self.s.loops[loops_base..]
            .iter()
            .any(|st| st.exit.is_some())
        {
            return false;
        }
        if let Some(st) = self.s.loops.get(loops_base) {
            self.mask = st.entry_mask;
        }
        self.s.loops.truncate(loops_base);
        true
    }

    /// Lane-wise `cond ? a : b` of two values of the same structure; a structural difference
    /// splits the batch.
    pub(crate) fn merge(&mut self, cond: MaskId, a: Value, b: Value) -> EResult<Value> {
        if a == b {
            return Ok(a);
        }
        match (a, b) {
            (Value::Num(x), Value::Num(y)) => {
                let (ix, iy) = (self.s.pay.info(x), self.s.pay.info(y));
                if ix.shape() != iy.shape() {
                    return Err(self.split(cond));
                }
                // Taped under every lane: `cond` already holds which lanes take which side.
                match self.numbers_under(MaskId::ALL).select(cond, x, y) {
                    Ok(out) => Ok(Value::Num(out)),
                    Err(_) => Err(self.memory_error(None)),
                }
            }
            (Value::Bool(_) | Value::LaneBool(_), Value::Bool(_) | Value::LaneBool(_)) => {
                let ma = self.as_mask(a);
                let mb = self.as_mask(b);
                Ok(Value::LaneBool(self.s.masks.select(cond, ma, mb)))
            }
            (Value::Pair(p), Value::Pair(q)) => {
                let (pa, qa) = (self.s.heap.pairs[p as usize], self.s.heap.pairs[q as usize]);
                let car =
                    stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.merge(cond, pa.0, qa.0))?;
                let cdr =
                    stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.merge(cond, pa.1, qa.1))?;
                Ok(self.s.heap.cons(car, cdr))
            }
            (Value::Closure(c1), Value::Closure(c2)) => {
                let (k1, k2) = (self.s.heap.closure(c1), self.s.heap.closure(c2));
                if k1.lambda != k2.lambda {
                    return Err(self.split(cond));
                }
                let start = self.s.heap.captured.len() as u32;
                for i in 0..k1.len {
                    let (x, y) = (self.s.heap.capture(c1, i), self.s.heap.capture(c2, i));
                    let m = self.merge(cond, x, y)?;
                    self.s.heap.captured.push(m);
                }
                self.s.heap.closures.push(Closure {
                    lambda: k1.lambda,
                    start,
                    len: k1.len,
                    home: u32::MAX,
                });
                Ok(Value::Closure((self.s.heap.closures.len() - 1) as u32))
            }
            _ => Err(self.split(cond)),
        }
    }

    fn as_mask(&mut self, v: Value) -> MaskId {
        match v {
            Value::LaneBool(m) => m,
            Value::Bool(b) => self.s.masks.push_with(|_| b),
            _ => unreachable!("only booleans"),
        }
    }

    #[cold]
    fn split(&self, cond: MaskId) -> super::Stop {
        self.stop(Fault::Split { mask: cond })
    }
}
