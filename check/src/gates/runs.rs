//! Runs of the runtime under test, through its public API only: bindings made from a case,
//! batched, single-lane, perturbed and blocked-over-threads runs, read back into plain numbers.

use super::tol;
use crate::gen::Case;
use crate::oracle::Shape;
use rayon::prelude::*;
use rayon::ThreadPool;
use runtime_cpu::{
    Bindings, GradSpec, LaneValue, Limits, Outcome, Program, Real, RunOptions, Session, Tensor,
};
use std::cell::RefCell;

/// The runtime's shape for an input shape.
pub fn rt_shape(s: Option<Shape>) -> runtime_cpu::Shape {
    match s {
        None => runtime_cpu::Shape::Scalar,
        Some(Shape::Vector(n)) => runtime_cpu::Shape::Vector(n as u32),
        Some(Shape::Matrix(r, c)) => runtime_cpu::Shape::Matrix(r as u32, c as u32),
    }
}

fn tensor(s: Option<Shape>, data: Vec<f64>) -> Tensor {
    Tensor {
        shape: rt_shape(s),
        data,
    }
}

/// Bindings of the case restricted to `lanes` (in that order); uniform inputs stay uniform.
pub fn bindings(case: &Case, lanes: &[usize]) -> Bindings {
    let mut b = Bindings::new();
    for i in &case.inputs {
        b = if i.per_lane {
            let data = lanes
                .iter()
                .flat_map(|&l| i.lane(l).iter().copied())
                .collect();
            b.lane_tensors(&i.name, rt_shape(i.shape), data)
                .expect("whole lanes of one count")
        } else {
            b.uniform(&i.name, tensor(i.shape, i.data.clone()))
        };
    }
    b
}

/// Bindings of lane `l` alone, every input bound uniformly (as a user would for one data
/// point).
pub fn single(case: &Case, l: usize) -> Bindings {
    let mut b = Bindings::new();
    for i in &case.inputs {
        b = b.uniform(&i.name, tensor(i.shape, i.lane(l).to_vec()));
    }
    b
}

/// Run options of the gates.
pub fn options(grad: bool) -> RunOptions {
    RunOptions {
        grad: if grad { GradSpec::All } else { GradSpec::None },
        limits: Limits {
            max_steps: tol::MAX_STEPS,
            ..Limits::default()
        },
        ..RunOptions::default()
    }
}

/// The gradient for one input, read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Grad {
    /// Input name.
    pub name: String,
    /// Numbers per lane.
    pub width: usize,
    /// Bound uniformly.
    pub uniform: bool,
    /// Lane after lane.
    pub per_lane: Vec<f64>,
    /// Sum over the lanes that succeeded.
    pub sum: Vec<f64>,
}

/// A run read back: each lane's number (or why there is none) and the gradients.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// Each lane's value.
    pub values: Vec<Result<f64, String>>,
    /// Gradients, by input.
    pub grads: Vec<Grad>,
}

impl Run {
    /// Reads an outcome.
    pub fn read(out: &Outcome) -> Run {
        let values = out
            .values
            .iter()
            .map(|v| match v {
                Ok(LaneValue::Number(x)) => Ok(*x),
                Ok(other) => Err(format!("not a number: {}", other.to_scheme())),
                Err(e) => Err(format!("{e:?}")),
            })
            .collect();
        let grads = out
            .grads
            .iter()
            .map(|g| Grad {
                name: g.name.clone(),
                width: g.shape.len(),
                uniform: g.uniform,
                per_lane: g.per_lane.clone(),
                sum: g.sum.clone(),
            })
            .collect();
        Run { values, grads }
    }

    /// The gradient for `name`.
    pub fn grad(&self, name: &str) -> Option<&Grad> {
        self.grads.iter().find(|g| g.name == name)
    }
}

/// Runs `program` on `bindings` in a fresh session of number type `R`.
pub fn run<R: Real>(program: &Program, bindings: &Bindings, grad: bool) -> Result<Run, String> {
    run_with::<R>(program, bindings, &options(grad))
}

/// Runs `program` on `bindings` with `options` in a fresh session of number type `R`.
pub fn run_with<R: Real>(
    program: &Program,
    bindings: &Bindings,
    options: &RunOptions,
) -> Result<Run, String> {
    Session::<R>::new()
        .run(program, bindings, options)
        .map(Run::read)
        .map_err(|e| format!("{e:?}"))
}

thread_local! {
    static WORKER: RefCell<Session<f64>> = RefCell::new(Session::new());
}

thread_local! {
    /// The G5 thread pools of the calling thread: each thread that runs gates has its own, so
    /// that programs checked in parallel do not queue for one pool.
    static POOLS: Vec<ThreadPool> = tol::G5_THREADS
        .iter()
        .map(|&n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(move |i| format!("g5-{n}-{i}"))
                .build()
                .expect("a thread pool")
        })
        .collect();
}

/// The case's lanes cut into blocks of [`tol::G5_BLOCK`], run by the pool of `G5_THREADS[k]`
/// threads, each worker with its own session; results placed by lane and summed in lane order.
pub fn blocked(program: &Program, case: &Case, k: usize) -> Result<Run, String> {
    let blocks: Vec<Vec<usize>> = (0..case.lanes)
        .step_by(tol::G5_BLOCK)
        .map(|s| (s..(s + tol::G5_BLOCK).min(case.lanes)).collect())
        .collect();
    let outs: Vec<Result<Outcome, String>> = POOLS.with(|pools| {
        pools[k].install(|| {
            blocks
                .par_iter()
                .map(|lanes| {
                    WORKER.with(|s| {
                        s.borrow_mut()
                            .run(program, &bindings(case, lanes), &options(true))
                            .cloned()
                            .map_err(|e| format!("{e:?}"))
                    })
                })
                .collect()
        })
    });
    let mut values = vec![Err("no block ran this lane".to_string()); case.lanes];
    let mut grads: Vec<Grad> = Vec::new();
    for (lanes, out) in blocks.iter().zip(outs) {
        let r = Run::read(&out?);
        for (i, &l) in lanes.iter().enumerate() {
            values[l] = r.values[i].clone();
        }
        for g in &r.grads {
            let k = match grads.iter().position(|h| h.name == g.name) {
                Some(k) => k,
                None => {
                    grads.push(Grad {
                        name: g.name.clone(),
                        width: g.width,
                        uniform: g.uniform,
                        per_lane: vec![f64::NAN; case.lanes * g.width],
                        sum: vec![0.0; g.width],
                    });
                    grads.len() - 1
                }
            };
            let n = g.width;
            for (i, &l) in lanes.iter().enumerate() {
                grads[k].per_lane[l * n..(l + 1) * n]
                    .copy_from_slice(&g.per_lane[i * n..(i + 1) * n]);
            }
        }
    }
    for g in &mut grads {
        let n = g.width;
        for (l, v) in values.iter().enumerate() {
            if v.is_ok() {
                for e in 0..n {
                    g.sum[e] += g.per_lane[l * n + e];
                }
            }
        }
    }
    Ok(Run { values, grads })
}
