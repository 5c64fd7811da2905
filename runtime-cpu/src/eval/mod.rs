//! The evaluator: one trampolined walk over decoded nodes with proper tail calls, frames on a
//! value stack, closures that copy what they capture, a step budget and a depth limit.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | the machine state and the main walk |
//! | `closures.rs` | making and calling closures, `letrec` |
//! | `control.rs` | truth, divergent branches, merging branch values, loops |
//! | `reclaim.rs` | forward-only loops giving back their dead slots |
//! | `numeric.rs` | payload arithmetic, comparisons and the tape records they make |
//! | `builtins.rs` | list, predicate and constructor primitives |
//! | `linalg.rs` | vector and matrix primitives |

mod builtins;
mod closures;
mod control;
mod linalg;
mod numeric;
mod reclaim;
mod region;

use crate::backward::Scratch;
use crate::code::{Code, Node, NodeId, NO_NODE};
use crate::error::Error;
use crate::heap::Heap;
use crate::mask::Masks;
use crate::payload::Payloads;
use crate::regions::Regions;
use crate::syntax::Span;
use crate::tape::Tape;
use crate::value::{MaskId, Slot, Value};
use shared_ir::Real;

pub(crate) use control::LoopState;

/// Where evaluation is: the frame base on the value stack and the running closure.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Ctx {
    pub fp: usize,
    pub clo: u32,
}

/// The closure index meaning "no closure" (the top level).
pub(crate) const NO_CLOSURE: u32 = u32::MAX;

/// The result of walking a tail position: a value, or a `recur` whose arguments are pending
/// in the innermost loop.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum Flow {
    Value(Value),
    Recurred,
}

/// Why a walk stopped early.
#[derive(Debug)]
pub(crate) enum Fault {
    /// The lanes of `mask` fail with `error` (every lane when `mask` is all lanes, or when the
    /// error is a resource limit).
    Error { error: Error, mask: MaskId },
    /// Branches returned structurally different values: the lanes of `mask` must continue
    /// apart from the others.
    Split { mask: MaskId },
    /// The device failed after it had computed numbers the walk still needs, and the session
    /// goes on without it: the walk runs again, on the CPU.
    Retry,
}

/// A walk stopped early; the reason is kept in the machine ([`Machine::take_fault`]). A
/// zero-sized error keeps every `EResult<Value>` one word wide, returned in a register.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stop;

pub(crate) type EResult<T> = Result<T, Stop>;

/// Limits of one run.
#[derive(Copy, Clone, Debug)]
pub struct Limits {
    /// Node visits allowed before the run fails with [`Error::StepBudget`].
    pub max_steps: u64,
    /// Nested evaluations allowed before [`Error::DepthLimit`].
    pub max_depth: u32,
    /// Payload memory allowed, in bytes, before [`Error::MemoryLimit`].
    pub max_memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 50_000_000,
            max_depth: 100_000,
            max_memory: 4 << 30,
        }
    }
}

/// The pools a run works in; kept by a session between runs so nothing is reallocated.
#[derive(Debug, Default)]
pub struct State<R> {
    pub(crate) pay: Payloads<R>,
    pub(crate) masks: Masks,
    pub(crate) heap: Heap,
    pub(crate) tape: Tape,
    pub(crate) stack: Vec<Value>,
    pub(crate) globals: Vec<Value>,
    pub(crate) loops: Vec<LoopState>,
    pub(crate) scratch: crate::ops::Scratch<R>,
    pub(crate) grad: Scratch<R>,
    /// Pack parts of the op being made.
    pub(crate) parts: Vec<Slot>,
    /// The executor of per-lane numeric ops, with the device it may hand regions to.
    pub(crate) regions: Regions<R>,
    /// Scratch of a loop giving back its dead slots: the slots and masks that survive.
    pub(crate) keep_slots: Vec<Slot>,
    pub(crate) keep_masks: Vec<MaskId>,
}

/// One run of one program over one batch of lanes.
pub(crate) struct Machine<'c, R> {
    pub code: &'c Code,
    pub s: &'c mut State<R>,
    /// Lanes active now.
    pub mask: MaskId,
    /// True when some input is differentiated, so active values record.
    pub taping: bool,
    /// Steps left in the current slice of the budget; at 0 the next slice is taken from
    /// `reserve` (and the cancel flag looked at) off the hot path.
    fuel: u64,
    /// Steps of the budget not yet in a slice.
    reserve: u64,
    /// A flag that stops the walk at the next slice (a deadline passed, a signal came).
    cancel: Option<&'c std::sync::atomic::AtomicBool>,
    depth: u32,
    limits: Limits,
    /// Why the walk stopped, once it has.
    fault: std::cell::Cell<Option<Box<Fault>>>,
}

/// Steps of the budget a walk takes at a time: between two slices it looks at its cancel
/// flag, so a run stops within about this many steps of being cancelled.
const FUEL_SLICE: u64 = 1 << 16;

const RED_ZONE: usize = 256 * 1024;
const STACK_GROWTH: usize = 4 * 1024 * 1024;

impl<'c, R: Real> Machine<'c, R> {
    pub fn new(
        code: &'c Code,
        s: &'c mut State<R>,
        limits: Limits,
        taping: bool,
        cancel: Option<&'c std::sync::atomic::AtomicBool>,
    ) -> Self {
        let total = limits.max_steps.saturating_add(1);
        let fuel = total.min(FUEL_SLICE);
        Machine {
            code,
            s,
            mask: MaskId::ALL,
            taping,
            fuel,
            reserve: total - fuel,
            cancel,
            depth: 0,
            limits,
            fault: std::cell::Cell::new(None),
        }
    }

    /// Steps used so far.
    pub fn steps(&self) -> u64 {
        self.limits.max_steps.saturating_add(1) - self.fuel - self.reserve
    }

    /// Charges `work` steps at once: an op over many elements costs what it computes.
    #[inline]
    pub(crate) fn charge(&mut self, work: u64, node: NodeId) -> EResult<()> {
        if work < self.fuel {
            self.fuel -= work;
            Ok(())
        } else {
            self.charge_slow(work, node)
        }
    }

    #[cold]
    fn charge_slow(&mut self, work: u64, node: NodeId) -> EResult<()> {
        if work >= self.fuel + self.reserve {
            // More than the budget has left.
            self.fuel = 0;
            self.reserve = 0;
        } else {
            // The slice's fuel, then the reserve; the refuel below starts a new slice.
            self.reserve -= work - self.fuel;
            self.fuel = 0;
        }
        self.refuel(node)
    }

    /// The fuel of the slice ran out: the next slice from the reserve, or the error of a
    /// spent budget or of a cancelled run.
    #[cold]
    fn refuel(&mut self, node: NodeId) -> EResult<()> {
        if self
            .cancel
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        {
            self.fuel = 1;
            return Err(self.fail(Error::Cancelled {
                span: Some(self.span(node)),
            }));
        }
        if self.reserve == 0 {
            self.fuel = 1;
            return Err(self.fail(Error::StepBudget {
                limit: self.limits.max_steps,
                span: self.span(node),
            }));
        }
        let take = self.reserve.min(FUEL_SLICE);
        self.fuel = take;
        self.reserve -= take;
        Ok(())
    }

    /// Stops the walk for `error`, raised while the current lanes are active.
    #[cold]
    pub fn fail(&self, error: Error) -> Stop {
        let mask = if error.is_resource_limit() {
            MaskId::ALL
        } else {
            self.mask
        };
        self.stop(Fault::Error { error, mask })
    }

    /// Stops the walk for `fault`.
    #[cold]
    pub fn stop(&self, fault: Fault) -> Stop {
        self.fault.set(Some(Box::new(fault)));
        Stop
    }

    /// Why the walk stopped (after an `Err(Stop)`). A stop with no recorded reason is a bug of
    /// the runtime; it is reported as [`Error::Internal`] on every lane, never as a panic.
    pub fn take_fault(&mut self) -> Box<Fault> {
        self.fault.take().unwrap_or_else(|| {
            Box::new(Fault::Error {
                error: Error::Internal {
                    message: "a walk stopped without recording why".into(),
                },
                mask: MaskId::ALL,
            })
        })
    }

    pub fn span(&self, node: NodeId) -> Span {
        self.code.span(node)
    }

    /// Evaluates a non-tail subexpression to a value. Leaves are read here, inlined into the
    /// caller; everything else goes through [`Machine::eval_deep`].
    #[inline(always)]
    pub fn eval(&mut self, node: NodeId, ctx: Ctx) -> EResult<Value> {
        match self.code.node(node) {
            Node::Const(v) => Ok(v),
            Node::Local(s) => self.read(self.s.stack[ctx.fp + s as usize], node),
            Node::Capture(i) => self.read_capture(ctx.clo, i, node),
            Node::Global(g) => self.read(self.s.globals[g as usize], node),
            _ => self.eval_deep(node, ctx),
        }
    }

    /// Evaluates a non-leaf subexpression, counting its depth. Numeric nodes are computed
    /// here without entering the trampoline; control nodes go through [`Machine::walk`].
    #[inline(never)]
    fn eval_deep(&mut self, node: NodeId, ctx: Ctx) -> EResult<Value> {
        self.enter(node)?;
        let r = if self.depth % 32 == 0 {
            stacker::maybe_grow(RED_ZONE, STACK_GROWTH, || self.eval_node(node, ctx))
        } else {
            self.eval_node(node, ctx)
        };
        self.depth -= 1;
        r
    }

    /// Counts one more nested evaluation and the step it takes.
    #[inline(always)]
    fn enter(&mut self, node: NodeId) -> EResult<()> {
        self.depth += 1;
        self.fuel -= 1;
        if self.depth > self.limits.max_depth || self.fuel == 0 {
            return self.limit_error(node);
        }
        Ok(())
    }

    #[cold]
    fn limit_error(&mut self, node: NodeId) -> EResult<()> {
        if self.fuel == 0 {
            if let Err(stop) = self.refuel(node) {
                self.depth -= 1;
                return Err(stop);
            }
        }
        if self.depth > self.limits.max_depth {
            self.depth -= 1;
            return Err(self.fail(Error::DepthLimit {
                limit: self.limits.max_depth,
                span: self.span(node),
            }));
        }
        Ok(())
    }

    /// Numeric nodes directly; control nodes through the trampoline.
    #[inline(always)]
    fn eval_node(&mut self, node: NodeId, ctx: Ctx) -> EResult<Value> {
        match self.code.node(node) {
            Node::Unary(op, a) => {
                let v = self.eval(a, ctx)?;
                self.unary(op, v, node)
            }
            Node::Binary(op, a, b) => {
                let x = self.eval(a, ctx)?;
                let y = self.eval(b, ctx)?;
                self.binary(op, x, y, node)
            }
            Node::Compare(op, a, b) => {
                let x = self.eval(a, ctx)?;
                let y = self.eval(b, ctx)?;
                self.compare(op, x, y, node)
            }
            Node::Linalg(op, a, b) => {
                let x = self.eval(a, ctx)?;
                let y = if op.binary() { self.eval(b, ctx)? } else { x };
                self.linalg(op, x, y, node)
            }
            Node::Tensor(b, shape) => self.tensor(b, shape, node),
            Node::Scale(a, b) => {
                let x = self.eval(a, ctx)?;
                let y = self.eval(b, ctx)?;
                self.scale(x, y, node)
            }
            Node::Ref(a, i, j) => {
                let x = self.eval(a, ctx)?;
                let iv = self.eval(i, ctx)?;
                let jv = if j == NO_NODE {
                    None
                } else {
                    Some(self.eval(j, ctx)?)
                };
                self.reference(x, iv, jv, node)
            }
            Node::Prim(b, args) => {
                let base = self.push_args(args, ctx)?;
                let r = self.apply_builtin(b, base, args.len as usize, node);
                self.s.stack.truncate(base);
                r
            }
            _ => self.eval_control(node, ctx),
        }
    }

    /// A control node in a non-tail position: a nested walk.
    #[inline(never)]
    fn eval_control(&mut self, node: NodeId, ctx: Ctx) -> EResult<Value> {
        match self.walk(node, ctx)? {
            Flow::Value(v) => Ok(v),
            Flow::Recurred => Err(self.fail(Error::RecurNotInTail {
                span: self.span(node),
            })),
        }
    }

    /// Evaluates an expression in tail position of a loop body (a branch of a divergent `if`).
    pub fn eval_flow(&mut self, node: NodeId, ctx: Ctx) -> EResult<Flow> {
        self.enter(node)?;
        let r = if self.depth % 32 == 0 {
            stacker::maybe_grow(RED_ZONE, STACK_GROWTH, || self.walk(node, ctx))
        } else {
            self.walk(node, ctx)
        };
        self.depth -= 1;
        r
    }

    /// Reads a variable slot, rejecting a `letrec` variable not yet initialised.
    #[inline(always)]
    fn read(&self, v: Value, node: NodeId) -> EResult<Value> {
        if v == Value::Unassigned {
            return Err(self.unassigned(node));
        }
        Ok(v)
    }

    #[cold]
    /// Reads capture `i` of closure `clo`.
    #[inline(always)]
    fn read_capture(&mut self, clo: u32, i: u32, node: NodeId) -> EResult<Value> {
        let v = self.s.heap.capture(clo, i);
        if v == Value::Unassigned {
            return self.late_capture(clo, i, node);
        }
        Ok(v)
    }

    /// A closure made while a `letrec`'s inits ran copied a binding that was still unassigned.
    /// Until the `letrec` completes it (see [`Machine::letrec`]), the binding lives in the
    /// closure's home frame, which is live while those inits run: read it there (so an init may
    /// call a procedure that uses a later binding, as `letrec*` allows).
    #[cold]
    fn late_capture(&mut self, clo: u32, i: u32, node: NodeId) -> EResult<Value> {
        let c = self.s.heap.closure(clo);
        let from = self.code.lambdas[c.lambda as usize].captures[i as usize];
        if let (true, crate::code::CaptureFrom::Local(s)) = (c.home != u32::MAX, from) {
            if let Some(&v) = self.s.stack.get(c.home as usize + s as usize) {
                if v != Value::Unassigned {
                    self.s.heap.captured[(c.start + i) as usize] = v;
                    return Ok(v);
                }
            }
        }
        Err(self.unassigned(node))
    }

    #[cold]
    fn unassigned(&self, node: NodeId) -> Stop {
        let span = self.span(node);
        self.fail(Error::UsedBeforeDefinition {
            name: self.code.var_name(node).unwrap_or("?").to_string(),
            span,
        })
    }

    /// Evaluates the list `args` onto the top of the value stack; returns its base.
    #[inline]
    fn push_args(&mut self, args: crate::code::List, ctx: Ctx) -> EResult<usize> {
        let base = self.s.stack.len();
        for &a in self.code.list(args) {
            let v = self.eval(a, ctx)?;
            self.s.stack.push(v);
        }
        Ok(base)
    }

    /// The main walk. Tail positions continue the loop instead of recursing.
    fn walk(&mut self, mut node: NodeId, mut ctx: Ctx) -> EResult<Flow> {
        let code = self.code;
        let entry_sp = self.s.stack.len();
        let loops_base = self.s.loops.len();
        let mut owner = false;
        let result: EResult<Flow> = loop {
            self.fuel -= 1;
            if self.fuel == 0 {
                if let Err(stop) = self.refuel(node) {
                    break Err(stop);
                }
            }
            match code.node(node) {
                Node::Const(v) => break Ok(Flow::Value(v)),
                Node::Local(s) => {
                    break self
                        .read(self.s.stack[ctx.fp + s as usize], node)
                        .map(Flow::Value)
                }
                Node::Capture(i) => break self.read_capture(ctx.clo, i, node).map(Flow::Value),
                Node::Global(g) => {
                    break self.read(self.s.globals[g as usize], node).map(Flow::Value)
                }
                Node::Unary(..)
                | Node::Binary(..)
                | Node::Compare(..)
                | Node::Linalg(..)
                | Node::Tensor(..)
                | Node::Scale(..)
                | Node::Ref(..)
                | Node::Prim(..) => break self.eval_node(node, ctx).map(Flow::Value),
                Node::If { test, then, other } => {
                    let t = match self.eval(test, ctx) {
                        Ok(v) => v,
                        Err(e) => break Err(e),
                    };
                    match self.truth(t) {
                        control::Truth::True => node = then,
                        control::Truth::False => node = other,
                        control::Truth::Split(tm, em) => {
                            match self.divergent_if(tm, em, then, other, ctx, loops_base) {
                                Ok(control::Next::Done(flow)) => break Ok(flow),
                                Ok(control::Next::Jump(body)) => node = body,
                                Err(e) => break Err(e),
                            }
                        }
                    }
                }
                Node::Seq(list) => {
                    let items = code.list(list);
                    let (&last, init) = items.split_last().expect("non-empty sequence");
                    for &x in init {
                        if let Err(e) = self.eval(x, ctx) {
                            return self.unwind(Err(e), entry_sp, loops_base);
                        }
                    }
                    node = last;
                }
                Node::Bind { slot, init, body } => {
                    let v = match self.eval(init, ctx) {
                        Ok(v) => v,
                        Err(e) => break Err(e),
                    };
                    self.s.stack[ctx.fp + slot as usize] = v;
                    node = body;
                }
                Node::Let { slot, inits, body } => {
                    let base = match self.push_args(inits, ctx) {
                        Ok(b) => b,
                        Err(e) => break Err(e),
                    };
                    let dst = ctx.fp + slot as usize;
                    self.s
                        .stack
                        .copy_within(base..base + inits.len as usize, dst);
                    self.s.stack.truncate(base);
                    node = body;
                }
                Node::Letrec { slot, inits, body } => {
                    if let Err(e) = self.letrec(slot, inits, ctx) {
                        break Err(e);
                    }
                    node = body;
                }
                Node::Lambda(id) => break Ok(Flow::Value(self.make_closure(id, ctx))),
                Node::Define { global, init } => {
                    let v = match self.eval(init, ctx) {
                        Ok(v) => v,
                        Err(e) => break Err(e),
                    };
                    self.s.globals[global as usize] = v;
                    let name = code.globals[global as usize].name;
                    break Ok(Flow::Value(Value::Sym(name)));
                }
                Node::Call { f, args } => {
                    let fv = match self.eval(f, ctx) {
                        Ok(v) => v,
                        Err(e) => break Err(e),
                    };
                    let base = match self.push_args(args, ctx) {
                        Ok(b) => b,
                        Err(e) => break Err(e),
                    };
                    let nargs = args.len as usize;
                    match fv {
                        Value::Closure(c) => {
                            let clo = self.s.heap.closure(c);
                            let lam = &code.lambdas[clo.lambda as usize];
                            if lam.params as usize != nargs {
                                break Err(self.arity_error(clo, nargs, node));
                            }
                            if !self.loops_allow_tail_call(loops_base) {
                                // Lanes already left a loop here: the call's value must be
                                // merged with theirs, so it cannot replace this walk.
                                let r = self.call_nested(clo, c, base, nargs);
                                break r.map(Flow::Value);
                            }
                            let frame = lam.frame as usize;
                            if owner {
                                self.s.stack.copy_within(base..base + nargs, ctx.fp);
                                self.s.stack.truncate(ctx.fp + nargs);
                                self.s.stack.resize(ctx.fp + frame, Value::Unassigned);
                            } else {
                                self.s.stack.resize(base + frame, Value::Unassigned);
                                ctx.fp = base;
                                owner = true;
                            }
                            ctx.clo = c;
                            node = lam.body;
                        }
                        Value::Builtin(b) => {
                            let r = self.apply_builtin_value(b, base, nargs, node);
                            self.s.stack.truncate(base);
                            break r.map(Flow::Value);
                        }
                        other => {
                            break Err(self.fail(Error::NotCallable {
                                got: self.describe(other),
                                span: self.span(node),
                            }))
                        }
                    }
                }
                Node::Loop { slot, inits, body } => {
                    let base = match self.push_args(inits, ctx) {
                        Ok(b) => b,
                        Err(e) => break Err(e),
                    };
                    let n = inits.len as usize;
                    self.s
                        .stack
                        .copy_within(base..base + n, ctx.fp + slot as usize);
                    self.s.stack.truncate(base);
                    let mark = self.loop_mark();
                    self.s.loops.push(LoopState::new(body, self.mask, mark));
                    node = body;
                }
                Node::Recur { slot, args } => {
                    let base = match self.push_args(args, ctx) {
                        Ok(b) => b,
                        Err(e) => break Err(e),
                    };
                    let n = args.len as usize;
                    if self.s.loops.len() > loops_base {
                        // The loop belongs to this walk: rebind and jump.
                        self.reclaim(reclaim::Roots {
                            start: base,
                            len: n,
                        });
                        self.s
                            .stack
                            .copy_within(base..base + n, ctx.fp + slot as usize);
                        self.s.stack.truncate(base);
                        node = self.s.loops.last().expect("checked").body;
                    } else {
                        // A branch of a divergent `if`: leave the arguments pending.
                        let r = self.pend_recur(base, n, slot as usize);
                        self.s.stack.truncate(base);
                        break r.map(|()| Flow::Recurred);
                    }
                }
            }
        };
        self.unwind(result, entry_sp, loops_base)
    }

    /// Leaves a walk: finishes its loops (merging lanes that left them early) and pops its
    /// frames.
    #[inline]
    fn unwind(
        &mut self,
        result: EResult<Flow>,
        entry_sp: usize,
        loops_base: usize,
    ) -> EResult<Flow> {
        if self.s.loops.len() > loops_base {
            let result = match result {
                Ok(Flow::Value(v)) => self.finish_loops(loops_base, v).map(Flow::Value),
                r => r,
            };
            self.s.loops.truncate(loops_base);
            self.s.stack.truncate(entry_sp);
            return result;
        }
        self.s.stack.truncate(entry_sp);
        result
    }
}
