//! Runs: binding inputs to a program, walking it over a batch of lanes, and reading values
//! and gradients back per lane. A lane that fails, or a group of lanes whose branches return
//! structurally different values, is handled apart; the other lanes carry on.

use crate::backward::{backward, Adjoints};
use crate::bindings::{Binding, Bindings};
use crate::code::Code;
use crate::error::{Error, Result};
use crate::eval::{Ctx, Fault, Limits, Machine, State, NO_CLOSURE};
use crate::payload::Col;
use crate::print::{lane_value, LaneValue};
use crate::program::Program;
use crate::value::{MaskId, Slot, Value};
use shared_ir::{Real, Shape};
use std::collections::VecDeque;
use std::sync::Arc;

mod device;
mod grads;
mod inputs;
mod replay;

use grads::{prepare_grads, sum_grads};
use inputs::resolve;
use replay::{write_input, Replay};

/// Lanes walked together by default: at 1024 lanes of the 80-step Kalman program, blocks of 256
/// run 2.3 times faster per lane than one walk, whose working set (every payload and adjoint of
/// the tape) outgrows the cache (`ndvm bench kalman --lane-block`).
pub const DEFAULT_LANE_BLOCK: usize = 256;

/// Which inputs to differentiate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum GradSpec {
    /// None: forward only.
    #[default]
    None,
    /// Every input of the program.
    All,
    /// These inputs.
    Some(Vec<String>),
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Inputs to differentiate.
    pub grad: GradSpec,
    /// Step, depth and memory limits.
    pub limits: Limits,
    /// Lanes walked together; larger batches are cut into blocks of this many (0: no limit).
    /// Results do not depend on it; the default, [`DEFAULT_LANE_BLOCK`], keeps a block's
    /// payloads and adjoints in cache.
    pub lane_block: usize,
    /// The adjoint each lane's value is seeded with (one per lane; all ones when `None`). With
    /// seeds `w`, the gradients are those of `sum_l w_l * value_l`: a loss summed over lanes.
    pub seed: Option<Vec<f64>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            grad: GradSpec::None,
            limits: Limits::default(),
            lane_block: DEFAULT_LANE_BLOCK,
            seed: None,
        }
    }
}

/// The gradient of the program's value with respect to one input.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    /// The input.
    pub name: String,
    /// The input's shape on one lane.
    pub shape: Shape,
    /// True when the input is bound uniformly (then `sum` is the gradient of the sum over lanes).
    pub uniform: bool,
    /// Lane after lane, `shape.len()` numbers each; NaN on lanes that failed.
    pub per_lane: Vec<f64>,
    /// The sum over the lanes that succeeded, in lane order.
    pub sum: Vec<f64>,
}

/// The result of a run.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Number of lanes.
    pub lanes: usize,
    /// The value on each lane, or the error that lane met.
    pub values: Vec<std::result::Result<LaneValue, Error>>,
    /// Gradients, one per differentiated input, in the order asked.
    pub grads: Vec<Gradient>,
    /// Node visits over all walks.
    pub steps: u64,
    /// Walks made (more than one when lanes were blocked, split or failed apart).
    pub walks: usize,
}

impl Outcome {
    /// The error shared by every lane, when every lane failed the same way.
    pub fn common_error(&self) -> Option<&Error> {
        let first = self.values.first()?.as_ref().err()?;
        self.values
            .iter()
            .all(|v| v.as_ref().err() == Some(first))
            .then_some(first)
    }

    /// The gradient for `name`.
    pub fn grad(&self, name: &str) -> Option<&Gradient> {
        self.grads.iter().find(|g| g.name == name)
    }
}

/// An interpreter with its memory pools; reuse it across runs to avoid reallocating.
#[derive(Debug, Default)]
pub struct Session<R: Real> {
    engine: Engine<R>,
    /// The outcome [`Session::run`] fills and lends out.
    outcome: Outcome,
}

/// What a run works in: the walk's state, the adjoints and the host-side buffers.
#[derive(Debug, Default)]
struct Engine<R: Real> {
    state: State<R>,
    adj: Adjoints<R>,
    pools: Pools,
    /// The layout of the last walk's trace, for the next run to replay.
    replay: Replay,
    /// Set from outside, it stops a walk ([`Session::set_cancel`]).
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Buffers a run uses on the host side, kept between runs.
#[derive(Debug, Default)]
struct Pools {
    /// Lane groups waiting for a walk (more than one after a split, a failure or blocking).
    queue: VecDeque<Vec<usize>>,
    /// Spare lane lists.
    spare: Vec<Vec<usize>>,
    /// The lanes `0, 1, 2, ...` (at least as many as the last run of one block had).
    whole: Vec<usize>,
    /// The input slots of the current walk.
    slots: Vec<Slot>,
    /// One input's adjoint, lane-wide.
    buf: Vec<f64>,
    /// The run's inputs.
    inputs: Vec<Input>,
    /// The differentiated inputs (indices into `inputs`), in the order asked.
    wrt: Vec<u32>,
    /// The program and the bindings' names ([`Bindings::names`]) that `inputs` were
    /// resolved for.
    resolved: Option<(Arc<Code>, u64)>,
    /// The lanes and differentiated inputs the outcome's gradients were last sized for (by
    /// [`prepare_grads`], under the program and names of `resolved`).
    grads_for: Option<(usize, Vec<u32>)>,
}

/// One input of the program in a run: its global, where it is bound, and its place among
/// the gradients (when differentiated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Input {
    global: u32,
    binding: u32,
    grad: Option<usize>,
}

impl<R: Real> Session<R> {
    /// A new session.
    pub fn new() -> Self {
        Session::default()
    }

    /// Runs that replayed the last walk rather than walking, over the session's life: a run
    /// of the same program over inputs of the same layout as the last one (new numbers, the
    /// same names, shapes, lanes, gradients and limits) replays that walk's numeric work when
    /// the walk's decisions on numbers come out the same; its outcome is the walk's, bit for
    /// bit.
    pub fn replayed(&self) -> u64 {
        self.engine.replay.hits
    }

    /// A flag that, once set from outside (a deadline passed, a signal came), stops this
    /// session's walks within a slice of their step budget (65,536 steps) with
    /// [`crate::Error::Cancelled`] on every lane; `None` for none. A walk that finished is kept.
    pub fn set_cancel(&mut self, flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        self.engine.cancel = flag;
    }

    /// Runs `program` on `bindings`. The outcome lives in the session and is overwritten by
    /// the next run, so repeated evaluation (an optimiser's steps) allocates nothing once
    /// warm; clone it to keep it.
    ///
    /// Errors here concern the inputs (a missing binding, an unknown gradient name); errors of
    /// the program are reported per lane in [`Outcome::values`].
    pub fn run(
        &mut self,
        program: &Program,
        bindings: &Bindings,
        options: &RunOptions,
    ) -> Result<&Outcome> {
        let out = &mut self.outcome;
        self.engine.run_into(program, bindings, options, out)?;
        Ok(&self.outcome)
    }
}

impl<R: Real> Engine<R> {
    /// Runs into `out`, reusing its buffers.
    fn run_into(
        &mut self,
        program: &Program,
        bindings: &Bindings,
        options: &RunOptions,
        out: &mut Outcome,
    ) -> Result<()> {
        let code = program.code();
        // The differentiated inputs, as indices into the program's inputs, in the order asked.
        let mut wrt = std::mem::take(&mut self.pools.wrt);
        wrt.clear();
        match &options.grad {
            GradSpec::None => {}
            GradSpec::All => wrt.extend(0..program.inputs().count() as u32),
            GradSpec::Some(names) => {
                for n in names {
                    let Some(k) = program.inputs().position(|i| i == n) else {
                        self.pools.wrt = wrt;
                        return Err(not_an_input(program, n));
                    };
                    if !wrt.contains(&(k as u32)) {
                        wrt.push(k as u32);
                    }
                }
            }
        }
        // The previous run's inputs stand when it ran the same program on the same names.
        let mut inputs = std::mem::take(&mut self.pools.inputs);
        let names = bindings.names();
        let shared = program.code_shared();
        match &self.pools.resolved {
            Some((c, n)) if *n == names && Arc::ptr_eq(c, shared) => {
                for i in &mut inputs {
                    i.grad = None;
                }
            }
            _ => {
                self.pools.resolved = None;
                self.pools.grads_for = None;
                if let Err(e) = resolve(code, bindings, &mut inputs) {
                    (self.pools.wrt, self.pools.inputs) = (wrt, inputs);
                    return Err(e);
                }
                self.pools.resolved = Some((shared.clone(), names));
            }
        }
        for (k, &i) in wrt.iter().enumerate() {
            inputs[i as usize].grad = Some(k);
        }
        let r = self.run_resolved(program, bindings, options, &inputs, &wrt, out);
        (self.pools.wrt, self.pools.inputs) = (wrt, inputs);
        r
    }

    /// [`Session::run_into`] once the inputs are resolved: `inputs` in the program's order,
    /// `wrt` the differentiated ones (indices into `inputs`) in the order asked.
    fn run_resolved(
        &mut self,
        program: &Program,
        bindings: &Bindings,
        options: &RunOptions,
        inputs: &[Input],
        wrt: &[u32],
        out: &mut Outcome,
    ) -> Result<()> {
        let lanes = bindings.lane_count();
        if let Some(seed) = &options.seed {
            if seed.len() != lanes {
                return Err(Error::Binding {
                    name: "seed".into(),
                    message: format!("{} seeds for {lanes} lanes", seed.len()),
                });
            }
        }
        let Outcome { values, grads, .. } = out;
        // The gradients are sized as the last run's when its program, names, lanes and
        // differentiated inputs were these: only their sums start afresh.
        match &mut self.pools.grads_for {
            Some((l, w)) if *l == lanes && w[..] == wrt[..] && grads.len() == wrt.len() => {
                for g in grads.iter_mut() {
                    g.sum.fill(0.0);
                }
            }
            kept => {
                prepare_grads(grads, program, bindings, inputs, wrt, lanes);
                let (l, w) = kept.get_or_insert_with(Default::default);
                *l = lanes;
                w.clear();
                w.extend_from_slice(wrt);
            }
        }
        // Every lane is resolved below, so neither the placeholder nor a previous run's value
        // survives: only lanes the previous run did not have need one.
        values.truncate(lanes);
        while values.len() < lanes {
            values.push(Ok(LaneValue::Number(f64::NAN)));
        }
        let block = if options.lane_block == 0 {
            lanes
        } else {
            options.lane_block
        };
        let taping = !wrt.is_empty();
        // A run of one block replays the last walk's trace when it can, else traces its walk.
        let mut first = None;
        if (1..=block.max(1)).contains(&lanes) {
            let mut whole = std::mem::take(&mut self.pools.whole);
            if whole.len() < lanes {
                whole.extend(whole.len()..lanes);
            }
            let group = &whole[..lanes];
            let (trace, replayed) =
                self.replay(program, bindings, inputs, group, taping, options.limits);
            let done = match replayed {
                // The common case, an optimiser's step: no queue of lane groups.
                Some((v, used)) => {
                    let seed = options.seed.as_deref();
                    let again = self.collect(program, v, group, inputs, seed, values, grads);
                    (!again).then_some(used)
                }
                None => None,
            };
            self.pools.whole = whole;
            if let Some(steps) = done {
                sum_grads(grads, values);
                (out.lanes, out.steps, out.walks) = (lanes, steps, 1);
                return Ok(());
            }
            first = Some(if replayed.is_some() {
                (false, None)
            } else {
                (trace, None)
            });
        }
        let mut queue = std::mem::take(&mut self.pools.queue);
        queue.clear();
        for s in (0..lanes).step_by(block.max(1)) {
            let mut g = self.pools.spare.pop().unwrap_or_default();
            g.clear();
            g.extend(s..(s + block).min(lanes));
            queue.push_back(g);
        }
        let mut steps = 0u64;
        let mut walks = 0usize;
        let (mut trace, mut replayed) = match (first, queue.front()) {
            (Some(first), _) => first,
            (None, Some(g)) if queue.len() == 1 => {
                self.replay(program, bindings, inputs, g, taping, options.limits)
            }
            _ => (false, None),
        };
        let hit = replayed.is_some();
        if !hit {
            self.forget_trace();
        }
        let mut walked = None;
        while let Some(group) = queue.pop_front() {
            walks += 1;
            let (result, used) = match replayed.take() {
                Some((v, used)) => (Ok(v), used),
                None => {
                    let (limits, cancel) = (options.limits, self.cancel.clone());
                    let r = self.walk(
                        program,
                        bindings,
                        inputs,
                        &group,
                        limits,
                        cancel.as_deref(),
                        taping,
                        trace,
                    );
                    if trace {
                        walked = r.0.as_ref().ok().map(|&v| (v, r.1));
                        trace = false;
                    }
                    (r.0, r.1)
                }
            };
            steps += used;
            match result {
                Ok(v) => {
                    let seed = options.seed.as_deref();
                    let again = self.collect(program, v, &group, inputs, seed, values, grads);
                    if again {
                        queue.push_front(group);
                        continue;
                    }
                }
                Err(fault) => match *fault {
                    Fault::Error { error, mask } => {
                        let failed = self.lanes_of(mask, &group);
                        let rest: Vec<usize> = group
                            .iter()
                            .copied()
                            .filter(|l| !failed.contains(l))
                            .collect();
                        for &l in &failed {
                            values[l] = Err(error.clone());
                        }
                        if !rest.is_empty() && failed.len() < group.len() {
                            queue.push_back(rest);
                        }
                    }
                    Fault::Split { mask } => {
                        let first = self.lanes_of(mask, &group);
                        let rest: Vec<usize> = group
                            .iter()
                            .copied()
                            .filter(|l| !first.contains(l))
                            .collect();
                        if first.is_empty() || rest.is_empty() {
                            unreachable!("a split always has lanes on both sides");
                        }
                        queue.push_front(rest);
                        queue.push_front(first);
                    }
                    Fault::Retry => {
                        queue.push_front(group);
                        continue;
                    }
                },
            }
            self.pools.spare.push(group);
        }
        self.pools.queue = queue;
        if !hit {
            self.keep_trace(walked, walks);
        }
        sum_grads(grads, values);
        (out.lanes, out.steps, out.walks) = (lanes, steps, walks);
        Ok(())
    }

    fn lanes_of(&self, mask: MaskId, group: &[usize]) -> Vec<usize> {
        if mask == MaskId::ALL {
            return group.to_vec();
        }
        self.state
            .masks
            .lanes_of(mask)
            .into_iter()
            .map(|i| group[i])
            .collect()
    }

    /// One walk over the lanes of `group`, its numeric work traced for replay when `trace`.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &mut self,
        program: &Program,
        bindings: &Bindings,
        inputs: &[Input],
        group: &[usize],
        limits: Limits,
        cancel: Option<&std::sync::atomic::AtomicBool>,
        taping: bool,
        trace: bool,
    ) -> (std::result::Result<Value, Box<Fault>>, u64) {
        if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
            return (Err(cancelled_fault()), 0);
        }
        let code = program.code();
        self.tape_renewed();
        let st = &mut self.state;
        let slots = &mut self.pools.slots;
        slots.clear();
        let l = group.len();
        let recording = st.regions.begin(l);
        // A session with a device walks every run: the device decides per walk.
        let trace = trace && !recording && st.regions.device().is_none();
        st.regions.trace.begin(trace);
        st.pay
            .reset_keeping(l, limits.max_memory / std::mem::size_of::<R>(), recording);
        st.masks.reset(l);
        st.heap.reset();
        st.tape.reset();
        st.stack.clear();
        st.loops.clear();
        st.globals.clear();
        st.globals.resize(code.globals.len(), Value::Unassigned);
        if !st.pay.push_constants(&code.consts) {
            return (Err(memory_fault(limits)), 0);
        }
        for inp in inputs {
            let active = inp.grad.is_some();
            let slot = match bindings.at(inp.binding as usize) {
                Binding::Uniform(t) if t.shape.is_scalar() && t.data.len() == 1 => {
                    let Some(s) = st.pay.push_scalar(R::from_f64(t.data[0]), active) else {
                        return (Err(memory_fault(limits)), 0);
                    };
                    s
                }
                b => {
                    let (shape, lanes) = match b {
                        Binding::Uniform(t) => (t.shape, false),
                        Binding::Lanes { shape, .. } => (*shape, true),
                    };
                    let Some(s) = st.pay.alloc(shape, lanes, active) else {
                        return (Err(memory_fault(limits)), 0);
                    };
                    write_input(&mut st.pay, s, b, group);
                    s
                }
            };
            st.globals[inp.global as usize] = Value::Num(slot);
            slots.push(slot);
        }
        st.stack.resize(code.top_frame as usize, Value::Unassigned);
        let mut m = Machine::new(code, st, limits, taping, cancel);
        let r = m.eval(
            code.top,
            Ctx {
                fp: 0,
                clo: NO_CLOSURE,
            },
        );
        let r = r.and_then(|v| m.finish(v));
        let r = r.map_err(|_| m.take_fault());
        let used = m.steps();
        (r, used)
    }

    /// Reads values and gradients of a successful walk into the per-lane results. True when
    /// the walk must run again on the CPU: the device failed under `auto` while it held
    /// numbers the CPU's reverse pass needs.
    #[allow(clippy::too_many_arguments)]
    fn collect(
        &mut self,
        program: &Program,
        v: Value,
        group: &[usize],
        inputs: &[Input],
        seed: Option<&[f64]>,
        values: &mut [std::result::Result<LaneValue, Error>],
        grads: &mut [Gradient],
    ) -> bool {
        let code = program.code();
        let st = &self.state;
        match v {
            Value::Num(s) if st.pay.info(s).is_scalar() => {
                // A number over a number (the previous run's) is written in place.
                let put = |slot: &mut std::result::Result<LaneValue, Error>, x: f64| match slot {
                    Ok(LaneValue::Number(y)) => *y = x,
                    other => *other = Ok(LaneValue::Number(x)),
                };
                match (contiguous(group), st.pay.col(s, 0)) {
                    (Some(first), Col::Lanes(xs)) => {
                        for (slot, x) in values[first..first + group.len()].iter_mut().zip(xs) {
                            put(slot, x.to_f64());
                        }
                    }
                    (_, col) => {
                        for (i, &lane) in group.iter().enumerate() {
                            put(&mut values[lane], col.at(i).to_f64());
                        }
                    }
                }
            }
            _ => {
                for (i, &lane) in group.iter().enumerate() {
                    values[lane] = Ok(lane_value(v, i, code, &st.pay, &st.masks, &st.heap));
                }
            }
        }
        if grads.is_empty() {
            return false;
        }
        let result = match v {
            Value::Num(s) if st.pay.info(s).is_scalar() => s,
            other => {
                let got = match other {
                    Value::Num(s) => st.pay.info(s).shape().to_string(),
                    o => o.kind().to_string(),
                };
                for &lane in group {
                    values[lane] = Err(Error::NotDifferentiable { got: got.clone() });
                }
                return false;
            }
        };
        if self
            .state
            .regions
            .wants_reverse(&self.state.tape, &self.state.pay)
        {
            match self.reverse_on_device(result, group, inputs, seed, grads) {
                Ok(()) => return false,
                Err(message) => {
                    if !self.state.regions.falls_back(&message) {
                        for &lane in group {
                            values[lane] = Err(Error::Device {
                                message: message.clone(),
                            });
                        }
                        return false;
                    }
                }
            }
        }
        // The CPU's reverse pass reads every value: those the device still holds come back.
        let st = &mut self.state;
        if let Err(message) = st.regions.read_stale(&mut st.pay) {
            if st.regions.falls_back(&message) {
                return true;
            }
            for &lane in group {
                values[lane] = Err(Error::Device {
                    message: message.clone(),
                });
            }
            return false;
        }
        self.adj.prepare(&self.state.pay);
        if let Some(adj) = self.adj.get_mut(&self.state.pay.info(result)) {
            match seed {
                None => adj.fill(R::ONE),
                Some(w) => {
                    for (a, &lane) in adj.iter_mut().zip(group) {
                        *a = R::from_f64(w[lane]);
                    }
                }
            }
        }
        let st = &mut self.state;
        match self.replay.reverse() {
            Some(r) => r.backward(&st.tape, &st.pay, &st.masks, &mut self.adj, &mut st.grad),
            None => backward(&st.tape, &st.pay, &st.masks, &mut self.adj, &mut st.grad),
        }
        let l = group.len();
        let buf = &mut self.pools.buf;
        let run = contiguous(group);
        for (inp, &slot) in inputs.iter().zip(&self.pools.slots) {
            // An input without a gradient is bound inactive: it has no adjoint to read.
            let Some(k) = inp.grad else { continue };
            let info = st.pay.info(slot);
            let g = &mut grads[k];
            let n = g.shape.len();
            match run {
                // One element per lane, lanes in a run: the adjoint is the gradient.
                Some(first) if n == 1 => {
                    self.adj.take_into(&info, &mut g.per_lane[first..first + l]);
                }
                _ => {
                    self.adj.take_clean(&info, buf);
                    for e in 0..n {
                        for (i, &lane) in group.iter().enumerate() {
                            g.per_lane[lane * n + e] = buf[e * l + i];
                        }
                    }
                }
            }
        }
        // The seed, when the result is not an input and no record made it (a constant result).
        let info = st.pay.info(result);
        if info.active() {
            self.adj.take_clean(&info, buf);
        }
        false
    }
}

/// The first lane of `group` when its lanes are one run (`first, first + 1, ...`). Groups
/// hold their lanes in increasing order, each once, so the ends tell.
#[inline]
fn contiguous(group: &[usize]) -> Option<usize> {
    let (&first, &last) = (group.first()?, group.last()?);
    (last - first + 1 == group.len()).then_some(first)
}

/// The error for a gradient asked of `name`, which is not an input of `program`.
#[cold]
fn not_an_input(program: &Program, name: &str) -> Error {
    let input_names: Vec<&str> = program.inputs().collect();
    let known = if input_names.is_empty() {
        "it has none".to_string()
    } else {
        format!("its inputs are {}", input_names.join(", "))
    };
    Error::Binding {
        name: name.to_string(),
        message: format!("cannot differentiate: not an input of the program ({known})"),
    }
}

fn cancelled_fault() -> Box<Fault> {
    Box::new(Fault::Error {
        error: Error::Cancelled { span: None },
        mask: MaskId::ALL,
    })
}

fn memory_fault(limits: Limits) -> Box<Fault> {
    Box::new(Fault::Error {
        error: Error::MemoryLimit {
            limit_mb: (limits.max_memory as u64).div_ceil(1 << 20),
            span: None,
        },
        mask: MaskId::ALL,
    })
}
