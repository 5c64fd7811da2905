//! Runs that replay the last walk. A run of the same program over inputs of the same layout
//! (the same names bound the same way, with the same shapes and lanes, the same gradients and
//! limits) as the last run, which was one walk that succeeded, replays that walk's trace
//! ([`crate::regions::Trace`]) over its new numbers instead of walking again: an optimiser's
//! steps and a search's restarts change numbers only. The replay checks every decision the
//! walk made on numbers; where one comes out differently it stops, and the run walks (and
//! traces) afresh. After [`MAX_MISSES`] such misses in a row a layout is walked from then on.
//! A run of several lane blocks, and every run of a session with a device attached, walks.

use super::{contiguous, Engine, Input};
use crate::backward::Resolved;
use crate::bindings::{Binding, Bindings};
use crate::code::Code;
use crate::eval::Limits;
use crate::payload::Payloads;
use crate::program::Program;
use crate::value::{Slot, Value};
use shared_ir::{Real, Shape};
use std::sync::Arc;

/// Replays in a row whose decisions came out differently before a layout is walked from then
/// on (its branches depend on the numbers).
pub(super) const MAX_MISSES: u32 = 4;

/// How an input is bound, as a walk lays it out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// One uniform number.
    Number,
    /// A uniform tensor, with how many numbers it holds (which its shape does not fix).
    Uniform(Shape, usize),
    /// One value per lane.
    Lanes(Shape),
}

impl Kind {
    fn of(b: &Binding) -> Kind {
        match b {
            Binding::Uniform(t) if t.shape.is_scalar() && t.data.len() == 1 => Kind::Number,
            Binding::Uniform(t) => Kind::Uniform(t.shape, t.data.len()),
            Binding::Lanes { shape, .. } => Kind::Lanes(*shape),
        }
    }
}

/// The layout the executor's trace was made for, with the walk's value.
#[derive(Debug, Default)]
pub(super) struct Replay {
    /// The program walked (held, so that no other program takes its place at its address).
    code: Option<Arc<Code>>,
    lanes: usize,
    taping: bool,
    limits: (u64, u32, usize),
    inputs: Vec<Input>,
    kinds: Vec<Kind>,
    /// The bindings' names ([`Bindings::names`]) whose kinds `kinds` are: bindings with the
    /// same names have the same kinds, since only binding a name changes a kind.
    names: u64,
    /// True when the trace is of a walk of this layout that succeeded.
    ready: bool,
    /// The walk's value and node visits.
    value: Option<Value>,
    steps: u64,
    /// Replays of this layout in a row that missed.
    misses: u32,
    /// Runs that replayed, over the session's life.
    pub(super) hits: u64,
    /// The kept walk's reverse pass, resolved ([`Resolved`]); valid while `resolved` is set,
    /// from the walk's end until the next walk starts.
    reverse: Resolved,
    resolved: bool,
}

impl Replay {
    /// The reverse pass of the tape the session holds, resolved, when that tape is the kept
    /// walk's (a replay leaves it so).
    pub(super) fn reverse(&self) -> Option<&Resolved> {
        self.resolved.then_some(&self.reverse)
    }

    /// True when a run of this layout may replay the trace, or trace its walk: the layout is
    /// the last one's (else it becomes the layout, with no trace yet).
    fn same_layout(
        &mut self,
        program: &Program,
        bindings: &Bindings,
        inputs: &[Input],
        lanes: usize,
        taping: bool,
        limits: Limits,
    ) -> bool {
        let code = program.code_shared();
        let limits = (limits.max_steps, limits.max_depth, limits.max_memory);
        let same = self.code.as_ref().is_some_and(|c| Arc::ptr_eq(c, code))
            && self.lanes == lanes
            && self.taping == taping
            && self.limits == limits
            && self.inputs == inputs
            && (self.names == bindings.names()
                || self
                    .kinds
                    .iter()
                    .zip(inputs)
                    .all(|(k, i)| *k == Kind::of(bindings.at(i.binding as usize))));
        self.names = bindings.names();
        if !same {
            self.code = Some(code.clone());
            (self.lanes, self.taping, self.limits) = (lanes, taping, limits);
            self.inputs.clear();
            self.inputs.extend_from_slice(inputs);
            self.kinds.clear();
            let kinds = inputs
                .iter()
                .map(|i| Kind::of(bindings.at(i.binding as usize)));
            self.kinds.extend(kinds);
            self.ready = false;
            self.misses = 0;
        }
        same
    }
}

impl<R: Real> Engine<R> {
    /// Whether this run, of one walk over `group`, traces its walk; and its value and node
    /// visits when the last walk's trace replayed on its numbers.
    pub(super) fn replay(
        &mut self,
        program: &Program,
        bindings: &Bindings,
        inputs: &[Input],
        group: &[usize],
        taping: bool,
        limits: Limits,
    ) -> (bool, Option<(Value, u64)>) {
        let lanes = group.len();
        let device = self.state.regions.device().is_some();
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        {
            // A cancelled session walks, and the walk stops at once.
            return (false, None);
        }
        let r = &mut self.replay;
        if !r.same_layout(program, bindings, inputs, lanes, taping, limits) {
            return (true, None);
        }
        if device {
            // The device decides per walk where the walk's ops run.
            return (false, None);
        }
        if r.misses >= MAX_MISSES {
            return (false, None);
        }
        if !r.ready {
            return (true, None);
        }
        let st = &mut self.state;
        for (inp, &slot) in inputs.iter().zip(&self.pools.slots) {
            write_input(&mut st.pay, slot, bindings.at(inp.binding as usize), group);
        }
        let hit = st
            .regions
            .trace
            .replay(&mut st.pay, &st.masks, &mut st.scratch);
        if !hit {
            r.misses += 1;
            r.ready = false;
            return (r.misses < MAX_MISSES, None);
        }
        r.misses = 0;
        r.hits += 1;
        (false, r.value.map(|v| (v, r.steps)))
    }

    /// Before a run walks: no run replays until a walk is kept (a walk that does not finish,
    /// a panic, leaves the arena and the slots of the kept walk behind).
    pub(super) fn forget_trace(&mut self) {
        self.replay.ready = false;
    }

    /// A walk starts: the tape and slots are no longer the kept walk's.
    pub(super) fn tape_renewed(&mut self) {
        self.replay.resolved = false;
    }

    /// After a run that walked: keeps the trace when the run was one traced walk and it
    /// succeeded with `value` in `steps` node visits (else no run replays until one is).
    pub(super) fn keep_trace(&mut self, walked: Option<(Value, u64)>, walks: usize) {
        let complete = self.state.regions.trace.complete();
        self.state.regions.trace.end();
        let r = &mut self.replay;
        r.ready = false;
        if let (Some((v, steps)), 1, true) = (walked, walks, complete) {
            (r.value, r.steps, r.ready) = (Some(v), steps, true);
            self.state.regions.trace.resolve(&self.state.pay);
            r.reverse.build(&self.state.tape, &self.state.pay);
            r.resolved = true;
        }
    }
}

/// Writes the numbers of input `binding` into its slot `slot` for the lanes of `group`.
pub(super) fn write_input<R: Real>(
    pay: &mut Payloads<R>,
    slot: Slot,
    binding: &Binding,
    group: &[usize],
) {
    let dst = pay.get_mut(slot);
    match binding {
        Binding::Uniform(t) => {
            for (d, &x) in dst.iter_mut().zip(&t.data) {
                *d = R::from_f64(x);
            }
        }
        Binding::Lanes { shape, data } => {
            let (n, l) = (shape.len(), group.len());
            match contiguous(group) {
                // One element per lane, lanes in a run: one copy.
                Some(first) if n == 1 => {
                    for (d, &x) in dst.iter_mut().zip(&data[first..first + l]) {
                        *d = R::from_f64(x);
                    }
                }
                _ => {
                    for e in 0..n {
                        for (i, &lane) in group.iter().enumerate() {
                            dst[e * l + i] = R::from_f64(data[lane * n + e]);
                        }
                    }
                }
            }
        }
    }
}
