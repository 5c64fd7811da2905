//! `ndvm bench decompose`: where the speed comes from, measured in one run on the suite's five
//! cost-model programs.
//!
//! - Forward, one lane: the boxed oracle interpreter (`ndvm_check::oracle`, every value a boxed
//!   tree, plain recursion), `runtime-cpu`, the bytecode VM (for the programs it can express),
//!   and the same program written by hand in Rust.
//! - Value and gradient per lane at several lane counts: `runtime-cpu` and the VM.
//! - Each of those with the decode cache and pooling on (the program decoded once, one session
//!   reused) and off (the program read and decoded again and a fresh session with fresh arenas
//!   made for every call).

use super::timing::seconds_per_call;
use crate::ceiling::kalman_nll;
use crate::data::{suite, SuiteProgram};
use crate::examples::VM_SUITE_PROGRAMS;
use crate::handwritten::handwritten;
use ndvm_check::oracle::{Input, Oracle, Output};
use runtime_cpu::{Bindings, GradSpec, Program, RunOptions, Session, Tensor};
use runtime_vm::{Grad, Options, Vm};
use serde::Serialize;
use std::hint::black_box;
use std::time::Duration;

/// The suite's cost-model programs, in the paper's order.
pub const PROGRAMS: &[&str] = &[
    "scalar_mul_add",
    "michaelis_menten",
    "damped_oscillator",
    "logistic_map_loop",
    "kalman2d_T80",
];

/// Which cache settings to measure.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
pub enum Caches {
    /// Both, with the ratio.
    Both,
    /// Decode cache and pooling on (the default way to run).
    On,
    /// Decode cache and pooling off: read and decode per call, a fresh session per call.
    Off,
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct Config {
    /// Lane counts for value and gradient.
    pub lanes: Vec<usize>,
    /// Minimum length of one timing sample.
    pub min_sample: Duration,
    /// Samples per figure (the median is reported).
    pub samples: usize,
    /// Cache settings.
    pub caches: Caches,
}

impl Config {
    fn settings(&self) -> Vec<bool> {
        match self.caches {
            Caches::Both => vec![true, false],
            Caches::On => vec![true],
            Caches::Off => vec![false],
        }
    }
}

/// One program's forward time at one lane, microseconds per evaluation.
#[derive(Clone, Debug, Serialize)]
pub struct ForwardRow {
    /// Suite name.
    pub program: String,
    /// Decode cache and pooling on.
    pub cached: bool,
    /// The boxed oracle interpreter.
    pub oracle_us: f64,
    /// `runtime-cpu`.
    pub cpu_us: f64,
    /// The bytecode VM, for the programs it can express.
    pub vm_us: Option<f64>,
    /// The program written by hand (no caches to switch off: the same figure in both rows).
    pub handwritten_us: f64,
    /// `runtime-cpu`'s value.
    pub value: f64,
    /// Largest relative difference of the other values from `runtime-cpu`'s.
    pub max_rel_diff: f64,
}

/// One program's value and gradient at one lane count, microseconds per lane.
#[derive(Clone, Debug, Serialize)]
pub struct GradRow {
    /// Suite name.
    pub program: String,
    /// Decode cache and pooling on.
    pub cached: bool,
    /// Lanes per evaluation.
    pub lanes: usize,
    /// `runtime-cpu`.
    pub cpu_per_lane_us: f64,
    /// The bytecode VM, for the programs it can express.
    pub vm_per_lane_us: Option<f64>,
    /// Largest relative difference between the VM's values and gradients and `runtime-cpu`'s.
    pub vm_max_rel_diff: Option<f64>,
}

/// Everything measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Forward, one lane.
    pub forward: Vec<ForwardRow>,
    /// Value and gradient per lane.
    pub grad: Vec<GradRow>,
    /// The programs the VM runs (the others need matrices).
    pub vm_programs: Vec<String>,
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-30)
}

fn vm_source(name: &str) -> Option<&'static str> {
    VM_SUITE_PROGRAMS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
}

/// The program's inputs on `lanes` lanes: the suite's values at one lane; beyond, every scalar
/// input varies a little per lane (the matrix stays uniform).
pub fn lane_bindings(p: &SuiteProgram, lanes: usize) -> Bindings {
    if lanes == 1 {
        return p.bindings();
    }
    let mut b = Bindings::new();
    if let Some((n, r, c, d)) = &p.matrix {
        b = b.uniform(n, Tensor::matrix(*r, *c, d.clone()).expect("well-formed"));
    }
    for (k, (n, x)) in p.scalars.iter().enumerate() {
        let col = (0..lanes)
            .map(|l| x * (1.0 + 0.001 * ((l + 5 * k) % 17) as f64))
            .collect();
        b = b.lanes(n, col).expect("equal lane counts");
    }
    b
}

fn oracle_inputs(p: &SuiteProgram) -> Vec<(&str, Input)> {
    let mut v: Vec<(&str, Input)> = p
        .scalars
        .iter()
        .map(|(n, x)| (n.as_str(), Input::scalar(*x)))
        .collect();
    if let Some((n, r, c, d)) = &p.matrix {
        v.push((n.as_str(), Input::matrix(*r, *c, d.clone())));
    }
    v
}

/// The hand-written program's value, and its time per call.
fn handwritten_at(p: &SuiteProgram, cfg: &Config) -> (f64, f64) {
    let scalar = |n: &str| p.scalars.iter().find(|s| s.0 == n).expect("bound").1;
    if let Some(h) = handwritten(&p.name) {
        let args: Vec<f64> = h.inputs.iter().map(|n| scalar(n)).collect();
        let t = seconds_per_call(
            || {
                black_box((h.f)(black_box(&args)));
            },
            cfg.min_sample,
            cfg.samples,
        );
        return ((h.f)(&args), t);
    }
    let (_, rows, _, data) = p.matrix.as_ref().expect("the Kalman program has obs");
    let obs: Vec<[f64; 2]> = (0..*rows).map(|i| [data[2 * i], data[2 * i + 1]]).collect();
    let (q, r) = (scalar("q"), scalar("r"));
    let t = seconds_per_call(
        || {
            black_box(kalman_nll(black_box(&obs), black_box(q), black_box(r)));
        },
        cfg.min_sample,
        cfg.samples,
    );
    (kalman_nll(&obs, q, r), t)
}

fn forward(p: &SuiteProgram, cfg: &Config) -> Vec<ForwardRow> {
    let inputs = oracle_inputs(p);
    let bindings = p.bindings();
    let none = RunOptions::default();
    let vm_none = Options::default();
    let asm = vm_source(&p.name);
    let (hand_value, hand) = handwritten_at(p, cfg);
    let oracle = Oracle::parse(&p.src).expect("the oracle reads the suite");
    let program = Program::parse(&p.src).expect("the suite parses");
    let vm_prog = asm.map(|a| runtime_vm::Program::parse(a).expect("assembles"));
    let value = Session::<f64>::new()
        .run(&program, &bindings, &none)
        .cloned()
        .expect("bound")
        .values[0]
        .as_ref()
        .expect("runs")
        .as_number()
        .expect("a number");
    let mut diff = rel(hand_value, value);
    if let Ok(Output::Number(x)) = oracle.eval(&inputs) {
        diff = diff.max(rel(x, value));
    } else {
        diff = f64::INFINITY;
    }
    if let Some(vp) = &vm_prog {
        let out = Vm::<f64>::new()
            .run(vp, &bindings, &vm_none)
            .cloned()
            .expect("runs");
        diff = diff.max(rel(out.values[0], value));
    }
    let time = |f: &mut dyn FnMut()| seconds_per_call(f, cfg.min_sample, cfg.samples) * 1e6;
    let mut rows = Vec::new();
    for cached in cfg.settings() {
        let (oracle_us, cpu_us, vm_us);
        if cached {
            oracle_us = time(&mut || {
                black_box(oracle.eval(&inputs).expect("runs"));
            });
            let mut session = Session::<f64>::new();
            cpu_us = time(&mut || {
                black_box(session.run(&program, &bindings, &none).expect("bound"));
            });
            let mut vm = Vm::<f64>::new();
            vm_us = vm_prog.as_ref().map(|vp| {
                time(&mut || {
                    black_box(vm.run(vp, &bindings, &vm_none).expect("runs"));
                })
            });
        } else {
            oracle_us = time(&mut || {
                let o = Oracle::parse(&p.src).expect("reads");
                black_box(o.eval(&inputs).expect("runs"));
            });
            cpu_us = time(&mut || {
                let prog = Program::parse(&p.src).expect("parses");
                let out = Session::<f64>::new().run(&prog, &bindings, &none).cloned();
                black_box(out.expect("bound"));
            });
            vm_us = asm.map(|a| {
                time(&mut || {
                    let vp = runtime_vm::Program::parse(a).expect("assembles");
                    black_box(
                        Vm::<f64>::new()
                            .run(&vp, &bindings, &vm_none)
                            .cloned()
                            .expect("runs"),
                    );
                })
            });
        }
        rows.push(ForwardRow {
            program: p.name.clone(),
            cached,
            oracle_us,
            cpu_us,
            vm_us,
            handwritten_us: hand * 1e6,
            value,
            max_rel_diff: diff,
        });
    }
    rows
}

/// The VM's values and gradients against `runtime-cpu`'s on every lane.
fn vm_vs_cpu(cpu: &runtime_cpu::Outcome, vm: &runtime_vm::Outcome) -> f64 {
    let mut d = 0.0f64;
    for l in 0..cpu.lanes {
        let v = cpu.values[l].as_ref().expect("runs").as_number();
        d = d.max(rel(vm.values[l], v.expect("a number")));
        for g in &cpu.grads {
            let ours = vm.grad(&g.name).expect("same inputs");
            d = d.max(rel(ours.per_lane[l], g.per_lane[l]));
        }
    }
    d
}

fn grad(p: &SuiteProgram, cfg: &Config) -> Vec<GradRow> {
    let names: Vec<String> = p.scalars.iter().map(|s| s.0.clone()).collect();
    let opts = RunOptions {
        grad: GradSpec::Some(names.clone()),
        ..Default::default()
    };
    let vm_opts = Options {
        grad: Grad::Some(names),
        ..Default::default()
    };
    let asm = vm_source(&p.name);
    let program = Program::parse(&p.src).expect("parses");
    let vm_prog = asm.map(|a| runtime_vm::Program::parse(a).expect("assembles"));
    let time = |f: &mut dyn FnMut()| seconds_per_call(f, cfg.min_sample, cfg.samples) * 1e6;
    let mut rows = Vec::new();
    for &lanes in &cfg.lanes {
        let b = lane_bindings(p, lanes);
        let check = vm_prog.as_ref().map(|vp| {
            let cpu = Session::<f64>::new()
                .run(&program, &b, &opts)
                .cloned()
                .expect("bound");
            let vm = Vm::<f64>::new()
                .run(vp, &b, &vm_opts)
                .cloned()
                .expect("runs");
            vm_vs_cpu(&cpu, &vm)
        });
        for cached in cfg.settings() {
            let (cpu_us, vm_us);
            if cached {
                let mut session = Session::<f64>::new();
                cpu_us = time(&mut || {
                    black_box(session.run(&program, &b, &opts).expect("bound"));
                });
                let mut vm = Vm::<f64>::new();
                vm_us = vm_prog.as_ref().map(|vp| {
                    time(&mut || {
                        black_box(vm.run(vp, &b, &vm_opts).expect("runs"));
                    })
                });
            } else {
                cpu_us = time(&mut || {
                    let prog = Program::parse(&p.src).expect("parses");
                    black_box(
                        Session::<f64>::new()
                            .run(&prog, &b, &opts)
                            .cloned()
                            .expect("bound"),
                    );
                });
                vm_us = asm.map(|a| {
                    time(&mut || {
                        let vp = runtime_vm::Program::parse(a).expect("assembles");
                        black_box(
                            Vm::<f64>::new()
                                .run(&vp, &b, &vm_opts)
                                .cloned()
                                .expect("runs"),
                        );
                    })
                });
            }
            rows.push(GradRow {
                program: p.name.clone(),
                cached,
                lanes,
                cpu_per_lane_us: cpu_us / lanes as f64,
                vm_per_lane_us: vm_us.map(|t| t / lanes as f64),
                vm_max_rel_diff: check,
            });
        }
    }
    rows
}

/// Runs every measurement.
pub fn run(cfg: &Config) -> Report {
    let all = suite();
    let programs: Vec<&SuiteProgram> = PROGRAMS
        .iter()
        .map(|n| all.iter().find(|p| p.name == *n).expect("in the suite"))
        .collect();
    let mut report = Report {
        forward: Vec::new(),
        grad: Vec::new(),
        vm_programs: VM_SUITE_PROGRAMS
            .iter()
            .map(|(n, _)| n.to_string())
            .collect(),
    };
    for p in &programs {
        report.forward.extend(forward(p, cfg));
    }
    for p in &programs {
        report.grad.extend(grad(p, cfg));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_and_setting_is_measured_and_agrees() {
        let cfg = Config {
            lanes: vec![1, 4],
            min_sample: Duration::from_micros(200),
            samples: 1,
            caches: Caches::Both,
        };
        let r = run(&cfg);
        assert_eq!(r.forward.len(), 2 * PROGRAMS.len());
        assert_eq!(r.grad.len(), 2 * 2 * PROGRAMS.len());
        for f in &r.forward {
            assert!(f.oracle_us > 0.0 && f.cpu_us > 0.0 && f.handwritten_us > 0.0);
            assert_eq!(
                f.vm_us.is_some(),
                f.program != "kalman2d_T80",
                "{}",
                f.program
            );
            assert!(f.max_rel_diff < 1e-12, "{}: {}", f.program, f.max_rel_diff);
        }
        for g in &r.grad {
            assert!(g.cpu_per_lane_us > 0.0);
            if let Some(d) = g.vm_max_rel_diff {
                assert_eq!(d, 0.0, "{} at {} lanes", g.program, g.lanes);
            }
        }
        let text = super::super::decompose_report::text(&r);
        assert!(text.contains("kalman2d_T80"));
        let svg = super::super::decompose_report::svg(&r);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), PROGRAMS.len() + 4);
    }
}
