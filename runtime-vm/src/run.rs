//! Runs: inputs bound to payload slots, a walk per block of lanes, the reverse pass over the
//! shared tape, and values and gradients read back per lane.

use crate::error::{Error, Result};
use crate::exec::{Limits, Machine, State};
use crate::op::Program;
use runtime_cpu::{Binding, Bindings, MaskId, Slot};
use shared_ir::{Real, Shape};

/// Lanes walked together by default (the same block as `runtime-cpu`'s default).
pub const DEFAULT_LANE_BLOCK: usize = 256;

/// Which inputs to differentiate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Grad {
    /// None: forward only.
    #[default]
    None,
    /// Every input.
    All,
    /// These inputs.
    Some(Vec<String>),
}

/// How to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Inputs to differentiate.
    pub grad: Grad,
    /// Step and memory limits of each walk.
    pub limits: Limits,
    /// Lanes walked together; larger batches are cut into blocks of this many (0: no limit).
    pub lane_block: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            grad: Grad::None,
            limits: Limits::default(),
            lane_block: DEFAULT_LANE_BLOCK,
        }
    }
}

/// The gradient of the result with respect to one input.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    /// The input.
    pub name: String,
    /// Its shape on one lane.
    pub shape: Shape,
    /// True when the input is bound uniformly (then `sum` is the gradient of the lanes' sum).
    pub uniform: bool,
    /// Lane after lane, `shape.len()` numbers each.
    pub per_lane: Vec<f64>,
    /// The sum over lanes.
    pub sum: Vec<f64>,
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Lanes.
    pub lanes: usize,
    /// The result's shape on one lane.
    pub shape: Shape,
    /// The result, lane after lane, `shape.len()` numbers each.
    pub values: Vec<f64>,
    /// Gradients, in the order asked (the program's input order for [`Grad::All`]).
    pub grads: Vec<Gradient>,
    /// Instructions executed over all walks.
    pub steps: u64,
    /// Walks made (one per block of lanes).
    pub walks: usize,
}

impl Outcome {
    /// The result on lane `l`.
    pub fn value(&self, l: usize) -> &[f64] {
        let n = self.shape.len();
        &self.values[l * n..(l + 1) * n]
    }

    /// The gradient for `name`.
    pub fn grad(&self, name: &str) -> Option<&Gradient> {
        self.grads.iter().find(|g| g.name == name)
    }
}

/// A VM with its memory pools; reuse it across runs to avoid reallocating.
#[derive(Debug, Default)]
pub struct Vm<R: Real> {
    state: State<R>,
    buf: Vec<f64>,
    wrt: Vec<usize>,
    outcome: Outcome,
}

impl Default for Outcome {
    fn default() -> Self {
        Outcome {
            lanes: 0,
            shape: Shape::Scalar,
            values: Vec::new(),
            grads: Vec::new(),
            steps: 0,
            walks: 0,
        }
    }
}

impl<R: Real> Vm<R> {
    /// A new VM.
    pub fn new() -> Self {
        Vm::default()
    }

    /// Runs `prog` on `bindings`: every lane's result, and gradients when asked. The outcome
    /// lives in the VM and is overwritten by the next run, so repeated evaluation allocates
    /// nothing once warm; clone it to keep it.
    pub fn run(&mut self, prog: &Program, bindings: &Bindings, opts: &Options) -> Result<&Outcome> {
        let mut out = std::mem::take(&mut self.outcome);
        let r = self.run_into(prog, bindings, opts, &mut out);
        self.outcome = out;
        r.map(|()| &self.outcome)
    }

    /// Runs into `out`, reusing its buffers.
    fn run_into(
        &mut self,
        prog: &Program,
        bindings: &Bindings,
        opts: &Options,
        out: &mut Outcome,
    ) -> Result<()> {
        let mut wrt = std::mem::take(&mut self.wrt);
        let r = self.run_with(prog, bindings, opts, out, &mut wrt);
        self.wrt = wrt;
        r
    }

    fn run_with(
        &mut self,
        prog: &Program,
        bindings: &Bindings,
        opts: &Options,
        out: &mut Outcome,
        wrt: &mut Vec<usize>,
    ) -> Result<()> {
        wanted(prog, &opts.grad, wrt)?;
        for (k, name) in prog.inputs.iter().enumerate() {
            if bindings.get(name).is_none() {
                return Err(Error::Unbound {
                    name: name.clone(),
                    pos: prog.input_pos[k],
                });
            }
        }
        let lanes = bindings.lane_count();
        out.grads.truncate(wrt.len());
        for (j, &k) in wrt.iter().enumerate() {
            let (shape, uniform) = match bindings.get(&prog.inputs[k]).expect("checked above") {
                Binding::Uniform(t) => (t.shape, true),
                Binding::Lanes { shape, .. } => (*shape, false),
            };
            if j == out.grads.len() {
                out.grads.push(Gradient {
                    name: String::new(),
                    shape,
                    uniform,
                    per_lane: Vec::new(),
                    sum: Vec::new(),
                });
            }
            let g = &mut out.grads[j];
            if g.name != prog.inputs[k] {
                g.name.clear();
                g.name.push_str(&prog.inputs[k]);
            }
            (g.shape, g.uniform) = (shape, uniform);
            g.per_lane.clear();
            g.per_lane.resize(lanes * shape.len(), 0.0);
            g.sum.clear();
            g.sum.resize(shape.len(), 0.0);
        }
        let block = match opts.lane_block {
            0 => lanes,
            b => b,
        };
        (out.lanes, out.shape, out.steps, out.walks) = (lanes, Shape::Scalar, 0, 0);
        for first in (0..lanes).step_by(block) {
            let group = first..(first + block).min(lanes);
            let (result, steps) = self.walk(prog, bindings, wrt, group.clone(), opts);
            out.steps += steps;
            out.walks += 1;
            let result = result?;
            self.read_values(prog, result, group.clone(), out)?;
            if !wrt.is_empty() {
                self.read_grads(result, wrt, group, &mut out.grads)?;
            }
        }
        for g in &mut out.grads {
            let n = g.shape.len();
            for l in 0..lanes {
                for e in 0..n {
                    g.sum[e] += g.per_lane[l * n + e];
                }
            }
        }
        Ok(())
    }

    /// One walk over the lanes `group`; the result's slot, and the instructions executed.
    fn walk(
        &mut self,
        prog: &Program,
        bindings: &Bindings,
        wrt: &[usize],
        group: std::ops::Range<usize>,
        opts: &Options,
    ) -> (Result<Slot>, u64) {
        let l = group.len();
        let st = &mut self.state;
        st.arena
            .reset(l, opts.limits.max_memory / std::mem::size_of::<R>());
        st.stack.clear();
        st.stack.reserve(prog.max_depth);
        st.frames.clear();
        st.saved.clear();
        st.consts.clear();
        st.inputs.clear();
        let mut m = Machine {
            prog,
            s: st,
            mask: MaskId::ALL,
            taping: !wrt.is_empty(),
            limits: opts.limits,
            steps: 0,
            bytes: 0,
            pc: 0,
        };
        let r = bind(&mut m, prog, bindings, wrt, group).and_then(|()| m.run());
        (r, m.steps)
    }

    fn read_values(
        &mut self,
        prog: &Program,
        result: Slot,
        group: std::ops::Range<usize>,
        out: &mut Outcome,
    ) -> Result<()> {
        let arena = &self.state.arena;
        let info = arena.info(result);
        if group.start == 0 {
            out.shape = info.shape();
            out.values.clear();
            out.values.resize(out.lanes * info.n(), 0.0);
        } else if out.shape != info.shape() {
            let last = prog.ops.len() - 1;
            return Err(Error::Shape {
                op: "end",
                pos: prog.pos(last),
                message: format!(
                    "the result is {} on some lanes and {} on others",
                    out.shape,
                    info.shape()
                ),
            });
        }
        let (n, l) = (info.n(), group.len());
        let data = arena.numbers(&info);
        for (i, lane) in group.enumerate() {
            for e in 0..n {
                let x = if info.lanes() {
                    data[e * l + i]
                } else {
                    data[e]
                };
                out.values[lane * n + e] = x.to_f64();
            }
        }
        Ok(())
    }

    fn read_grads(
        &mut self,
        result: Slot,
        wrt: &[usize],
        group: std::ops::Range<usize>,
        grads: &mut [Gradient],
    ) -> Result<()> {
        let st = &mut self.state;
        let info = st.arena.info(result);
        if !info.is_scalar() {
            return Err(Error::NotDifferentiable {
                shape: info.shape(),
            });
        }
        st.arena.reverse(result);
        let l = group.len();
        // Every input's adjoint is read and zeroed, so the next pass starts from zeros.
        for (k, &slot) in st.inputs.iter().enumerate() {
            st.arena.take_gradient(slot, &mut self.buf);
            let Some(j) = wrt.iter().position(|&w| w == k) else {
                continue;
            };
            let g = &mut grads[j];
            let n = g.shape.len();
            for (i, lane) in group.clone().enumerate() {
                for e in 0..n {
                    g.per_lane[lane * n + e] = self.buf[e * l + i];
                }
            }
        }
        if info.active() {
            // The seed, when no record consumed it (the result is an input).
            st.arena.take_gradient(result, &mut self.buf);
        }
        Ok(())
    }
}

/// The indices of the inputs to differentiate, each once, into `out`.
fn wanted(prog: &Program, grad: &Grad, out: &mut Vec<usize>) -> Result<()> {
    out.clear();
    match grad {
        Grad::None => Ok(()),
        Grad::All => {
            out.extend(0..prog.inputs.len());
            Ok(())
        }
        Grad::Some(names) => {
            for n in names {
                let Some(k) = prog.inputs.iter().position(|i| i == n) else {
                    let known = if prog.inputs.is_empty() {
                        "it loads none".to_string()
                    } else {
                        format!("its inputs are {}", prog.inputs.join(", "))
                    };
                    return Err(Error::Binding {
                        name: n.clone(),
                        message: format!(
                            "cannot differentiate: not an input of the program ({known})"
                        ),
                    });
                };
                if !out.contains(&k) {
                    out.push(k);
                }
            }
            Ok(())
        }
    }
}

/// Allocates the constants and the inputs of a walk (inputs to differentiate are active).
fn bind<R: Real>(
    m: &mut Machine<'_, R>,
    prog: &Program,
    bindings: &Bindings,
    wrt: &[usize],
    group: std::ops::Range<usize>,
) -> Result<()> {
    for c in &prog.consts {
        let (s, _) = m.alloc(c.shape, false, false)?;
        for (d, &x) in m.s.arena.numbers_mut(s).iter_mut().zip(&c.data) {
            *d = R::from_f64(x);
        }
        m.s.consts.push(s);
    }
    let l = group.len();
    for (k, name) in prog.inputs.iter().enumerate() {
        let active = wrt.contains(&k);
        let s = match bindings.get(name).expect("checked before the walk") {
            Binding::Uniform(t) => {
                let (s, _) = m.alloc(t.shape, false, active)?;
                for (d, &x) in m.s.arena.numbers_mut(s).iter_mut().zip(&t.data) {
                    *d = R::from_f64(x);
                }
                s
            }
            Binding::Lanes { shape, data } => {
                let (s, info) = m.alloc(*shape, true, active)?;
                let n = shape.len();
                let dst = m.s.arena.numbers_mut(s);
                for e in 0..n {
                    for (i, lane) in group.clone().enumerate() {
                        let x = R::from_f64(data[lane * n + e]);
                        if info.lanes() {
                            dst[e * l + i] = x;
                        } else {
                            dst[e] = x;
                        }
                    }
                }
                s
            }
        };
        m.s.inputs.push(s);
    }
    Ok(())
}
