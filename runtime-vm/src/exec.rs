//! The executor: one loop over the instruction stream with one `match`, an operand stack of
//! payload slots, and a control stack for loops and branches. Branches whose selector differs
//! across the active lanes run both blocks, each under its lanes' mask, and merge the values
//! they leave lane by lane.

use crate::error::{Error, Pos, Result};
use crate::op::{Op, Program};
use runtime_cpu::{Arena, MaskId, Slot};
use shared_ir::Real;

/// Step and memory limits of a run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Instructions one walk (one block of lanes) may execute before the run fails.
    pub max_steps: u64,
    /// Bytes of payloads, tape and masks one lane block may use.
    pub max_memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 10_000_000,
            max_memory: 1 << 30,
        }
    }
}

/// An open loop or branch.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Frame {
    /// A loop with `left` trips to go, this one included.
    Loop { left: u32 },
    /// A branch whose selector agreed on every active lane: one block runs.
    Uniform,
    /// A branch whose selector differed: both blocks run, each under its lanes.
    Divergent {
        /// Lanes of the first block.
        then: MaskId,
        /// Lanes of the second block.
        other: MaskId,
        /// The mask before the branch.
        outer: MaskId,
        /// Stack index from which the blocks may change values.
        base: usize,
        /// Where the values from `base` at entry are kept in [`State::saved`] (the first
        /// block's results follow them).
        saved: usize,
        /// Values below the entry depth the blocks may consume.
        reach: usize,
    },
}

/// What a run keeps between runs: the arena (payloads, masks, tape) and the stacks.
#[derive(Debug, Default)]
pub(crate) struct State<R> {
    pub arena: Arena<R>,
    pub stack: Vec<Slot>,
    pub frames: Vec<Frame>,
    pub saved: Vec<Slot>,
    pub consts: Vec<Slot>,
    pub inputs: Vec<Slot>,
}

/// One walk of a program over one block of lanes.
pub(crate) struct Machine<'a, R> {
    pub prog: &'a Program,
    pub s: &'a mut State<R>,
    /// The lanes the current instruction runs for.
    pub mask: MaskId,
    /// Whether numeric operations on active values are recorded.
    pub taping: bool,
    pub limits: Limits,
    /// Instructions executed so far, this walk.
    pub steps: u64,
    /// Bytes charged against [`Limits::max_memory`].
    pub bytes: usize,
    /// The instruction running.
    pub pc: usize,
}

/// How a branch's selector splits the active lanes.
enum Truth {
    All(bool),
    Split(MaskId, MaskId),
}

impl<R: Real> Machine<'_, R> {
    /// Where the running instruction was written.
    pub fn pos(&self) -> Pos {
        self.prog.pos(self.pc)
    }

    /// Counts `n` bytes against the memory limit.
    #[inline(always)]
    pub fn charge(&mut self, n: usize) -> Result<()> {
        self.bytes += n;
        if self.bytes > self.limits.max_memory {
            return Err(self.memory_error());
        }
        Ok(())
    }

    #[cold]
    pub fn memory_error(&self) -> Error {
        Error::MemoryLimit {
            limit_mb: (self.limits.max_memory as u64).div_ceil(1 << 20),
            pos: self.pos(),
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Slot {
        self.s
            .stack
            .pop()
            .expect("the assembler checked the stack depth")
    }

    /// Runs the program to its end and returns the slot of its result.
    pub fn run(&mut self) -> Result<Slot> {
        let n = self.prog.ops.len();
        let mut pc = 0usize;
        while pc < n {
            self.pc = pc;
            self.steps += 1;
            if self.steps > self.limits.max_steps {
                return Err(Error::StepLimit {
                    limit: self.limits.max_steps,
                    pos: self.pos(),
                });
            }
            match self.prog.ops[pc] {
                Op::Push(k) => {
                    let s = self.s.consts[k as usize];
                    self.s.stack.push(s);
                }
                Op::Load(k) => {
                    let s = self.s.inputs[k as usize];
                    self.s.stack.push(s);
                }
                Op::Unary(op) => {
                    let a = self.pop();
                    let y = self.unary(op, a)?;
                    self.s.stack.push(y);
                }
                Op::Binary(op) => {
                    let b = self.pop();
                    let a = self.pop();
                    let y = self.binary(op, a, b)?;
                    self.s.stack.push(y);
                }
                Op::Dup => {
                    let top = *self.s.stack.last().expect("checked by the assembler");
                    self.s.stack.push(top);
                }
                Op::Dot => {
                    let b = self.pop();
                    let a = self.pop();
                    let y = self.dot(a, b)?;
                    self.s.stack.push(y);
                }
                Op::Loop { count, end } => {
                    if count == 0 {
                        pc = end as usize + 1;
                        continue;
                    }
                    self.s.frames.push(Frame::Loop { left: count });
                }
                Op::EndLoop { start } => {
                    let Some(Frame::Loop { left }) = self.s.frames.last_mut() else {
                        unreachable!("an `end` of a loop closes a loop frame");
                    };
                    *left -= 1;
                    if *left > 0 {
                        pc = start as usize + 1;
                        continue;
                    }
                    self.s.frames.pop();
                }
                Op::Branch { other, reach } => {
                    let sel = self.pop();
                    match self.truth(sel)? {
                        Truth::All(t) => {
                            self.s.frames.push(Frame::Uniform);
                            if !t {
                                pc = other as usize + 1;
                                continue;
                            }
                        }
                        Truth::Split(then, other) => self.enter_divergent(then, other, reach),
                    }
                }
                Op::Else { end } => match self.s.frames.last() {
                    Some(Frame::Uniform) => {
                        pc = end as usize;
                        continue;
                    }
                    Some(&Frame::Divergent {
                        other,
                        base,
                        saved,
                        reach,
                        ..
                    }) => {
                        let st = &mut *self.s;
                        st.saved.extend_from_slice(&st.stack[base..]);
                        st.stack.truncate(base);
                        st.stack.extend_from_slice(&st.saved[saved..saved + reach]);
                        self.mask = other;
                    }
                    _ => unreachable!("an `else` belongs to a branch frame"),
                },
                Op::EndBranch => match self.s.frames.pop() {
                    Some(Frame::Uniform) => {}
                    Some(Frame::Divergent {
                        then,
                        outer,
                        base,
                        saved,
                        reach,
                        ..
                    }) => {
                        self.mask = outer;
                        let k = self.s.stack.len() - base;
                        for i in 0..k {
                            let a = self.s.saved[saved + reach + i];
                            let b = self.s.stack[base + i];
                            let y = self.select(then, a, b)?;
                            self.s.stack[base + i] = y;
                        }
                        self.s.saved.truncate(saved);
                    }
                    _ => unreachable!("an `end` of a branch closes a branch frame"),
                },
            }
            pc += 1;
        }
        Ok(self.pop())
    }

    fn enter_divergent(&mut self, then: MaskId, other: MaskId, reach: u32) {
        let st = &mut *self.s;
        let reach = reach as usize;
        let base = st.stack.len() - reach;
        let saved = st.saved.len();
        st.saved.extend_from_slice(&st.stack[base..]);
        st.frames.push(Frame::Divergent {
            then,
            other,
            outer: self.mask,
            base,
            saved,
            reach,
        });
        self.mask = then;
    }

    /// How the selector `sel` splits the active lanes: lanes where it is not zero take the
    /// first block.
    fn truth(&mut self, sel: Slot) -> Result<Truth> {
        let arena = &mut self.s.arena;
        let info = arena.info(sel);
        if !info.is_scalar() {
            return Err(self.shape_error(
                "branch",
                format!("the selector must be a number, but it is {}", info.shape()),
            ));
        }
        if !info.lanes() {
            return Ok(Truth::All(arena.numbers(&info)[0] != R::ZERO));
        }
        let lanes = arena.lanes();
        self.charge(lanes)?;
        let arena = &mut self.s.arena;
        let m = arena.mask_where(&info, |x| x != R::ZERO);
        let (any_t, any_f) = arena.split_counts(self.mask, m);
        if !any_f || !any_t {
            return Ok(Truth::All(any_t));
        }
        self.charge(2 * lanes)?;
        let then = self.s.arena.and(self.mask, m);
        let other = self.s.arena.and_not(self.mask, m);
        Ok(Truth::Split(then, other))
    }

    #[cold]
    pub fn shape_error(&self, op: &'static str, message: String) -> Error {
        Error::Shape {
            op,
            pos: self.pos(),
            message,
        }
    }
}
