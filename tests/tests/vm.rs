//! The bytecode VM (`runtime-vm`), a second front end on the same runtime: the paper's four
//! workloads W1-W4 and the suite programs it can express, their values and gradients against
//! finite differences and against the same math in the object language run by `runtime-cpu`,
//! at one lane and at 256 lanes with per-lane inputs, lane decomposition, and a branch that
//! diverges across lanes.

use ndvm_tests::{suite, SplitMix};
use runtime_cpu::{Bindings, GradSpec, Real, RunOptions, Session, Shape};
use runtime_vm::{Grad, Options, Program, Vm};

/// A workload: its assembly, the same math in the object language, its inputs (name, the
/// paper's value, the per-lane range) and the paper's value.
struct Workload {
    name: &'static str,
    asm: &'static str,
    scm: &'static str,
    scalars: &'static [(&'static str, f64, f64, f64)],
    vectors: &'static [(&'static str, [f64; 3])],
    value: f64,
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "W1",
        asm: include_str!("../../examples/vm/w1.asm"),
        scm: "(+ (* (exp (- (* a x))) (cos (* w x))) b)",
        scalars: &[
            ("a", 0.3, 0.1, 0.8),
            ("x", 1.5, 0.2, 3.0),
            ("w", 2.0, 0.5, 3.0),
            ("b", 0.7, -1.0, 1.0),
        ],
        vectors: &[],
        value: 0.068753,
    },
    Workload {
        name: "W2",
        asm: include_str!("../../examples/vm/w2.asm"),
        scm: "(loop ((x x0) (k 0)) (if (= k 12) x (recur (* r (* x (- 1 x))) (+ k 1))))",
        scalars: &[("x0", 0.4, 0.1, 0.9), ("r", 3.2, 2.5, 3.4)],
        vectors: &[],
        value: 0.513102,
    },
    Workload {
        name: "W3",
        asm: include_str!("../../examples/vm/w3.asm"),
        scm: "(if (not (= g 0)) (* a x) (/ b x))",
        scalars: &[
            ("g", 1.0, 0.0, 0.0),
            ("a", 2.0, 0.5, 3.0),
            ("x", 1.5, 0.5, 2.5),
            ("b", 3.0, 1.0, 4.0),
        ],
        vectors: &[],
        value: 3.0,
    },
    Workload {
        name: "W4",
        asm: include_str!("../../examples/vm/w4.asm"),
        scm: "(+ (+ (dot m0 v) (dot m1 v)) (dot m2 v))",
        scalars: &[],
        vectors: &[
            ("m0", [1.0, 2.0, -1.0]),
            ("m1", [0.5, -0.5, 2.0]),
            ("m2", [-1.0, 1.0, 0.5]),
            ("v", [1.0, 0.5, -2.0]),
        ],
        value: -1.25,
    },
];

/// One lane's inputs: every scalar and vector of the workload, by name.
type Lane = Vec<(&'static str, Vec<f64>)>;

fn paper_lane(w: &Workload) -> Lane {
    let mut lane: Lane = w.scalars.iter().map(|s| (s.0, vec![s.1])).collect();
    lane.extend(w.vectors.iter().map(|v| (v.0, v.1.to_vec())));
    lane
}

/// Per-lane inputs drawn at random; W3's selector is 0 on about a third of the lanes, so its
/// branch diverges.
fn random_lanes(w: &Workload, lanes: usize, seed: u64) -> Vec<Lane> {
    let mut rng = SplitMix(seed);
    (0..lanes)
        .map(|_| {
            let mut lane: Lane = w
                .scalars
                .iter()
                .map(|&(n, _, lo, hi)| {
                    let x = if n == "g" {
                        if rng.unit() < 1.0 / 3.0 {
                            0.0
                        } else {
                            1.0
                        }
                    } else {
                        rng.uniform(lo, hi)
                    };
                    (n, vec![x])
                })
                .collect();
            lane.extend(w.vectors.iter().map(|v| {
                (
                    v.0,
                    v.1.iter().map(|x| x + rng.uniform(-1.0, 1.0)).collect(),
                )
            }));
            lane
        })
        .collect()
}

/// Bindings of one lane per entry of `lanes` (uniform when there is one lane).
fn bindings(lanes: &[Lane]) -> Bindings {
    let mut b = Bindings::new();
    for (k, (name, first)) in lanes[0].iter().enumerate() {
        let shape = if first.len() == 1 {
            Shape::Scalar
        } else {
            Shape::Vector(first.len() as u32)
        };
        if lanes.len() == 1 {
            b = b.uniform(
                name,
                runtime_cpu::Tensor {
                    shape,
                    data: first.clone(),
                },
            );
        } else {
            let data = lanes.iter().flat_map(|l| l[k].1.iter().copied()).collect();
            b = b.lane_tensors(name, shape, data).expect("whole lanes");
        }
    }
    b
}

/// Values and gradients (every input, lane after lane), by name.
struct Run {
    values: Vec<f64>,
    grads: Vec<(String, Vec<f64>)>,
}

impl Run {
    fn grad(&self, name: &str) -> &[f64] {
        &self.grads.iter().find(|g| g.0 == name).expect("asked").1
    }
}

fn vm(w: &Workload, lanes: &[Lane]) -> Run {
    vm_in::<f64>(w, lanes)
}

fn vm_in<R: Real>(w: &Workload, lanes: &[Lane]) -> Run {
    let prog = Program::parse(w.asm).expect("the workload assembles");
    let opts = Options {
        grad: Grad::All,
        ..Default::default()
    };
    let out = Vm::<R>::new()
        .run(&prog, &bindings(lanes), &opts)
        .cloned()
        .expect("runs");
    assert_eq!(out.lanes, lanes.len());
    Run {
        values: out.values.clone(),
        grads: out
            .grads
            .iter()
            .map(|g| (g.name.clone(), g.per_lane.clone()))
            .collect(),
    }
}

fn cpu(scm: &str, lanes: &[Lane]) -> Run {
    cpu_in::<f64>(scm, lanes)
}

fn cpu_in<R: Real>(scm: &str, lanes: &[Lane]) -> Run {
    let prog = runtime_cpu::Program::parse(scm).expect("the object-language twin parses");
    let opts = RunOptions {
        grad: GradSpec::All,
        ..Default::default()
    };
    let out = Session::<R>::new()
        .run(&prog, &bindings(lanes), &opts)
        .cloned()
        .expect("runs");
    Run {
        values: out
            .values
            .iter()
            .map(|v| v.as_ref().expect("lane ok").as_number().expect("a number"))
            .collect(),
        grads: out
            .grads
            .iter()
            .map(|g| (g.name.clone(), g.per_lane.clone()))
            .collect(),
    }
}

/// Bit for bit the same number (the VM and `runtime-cpu` run the same kernels in the same
/// order, and a lane of a batch runs the same arithmetic as a one-lane run).
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn ulps_apart(a: f64, b: f64) -> u64 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
}

/// The VM's gradients on one lane against central finite differences of its own values.
fn check_fd(w: &Workload, lane: &Lane, run: &Run, at: usize) {
    let prog = Program::parse(w.asm).expect("assembles");
    let mut vm = Vm::<f64>::new();
    let mut f = |l: &Lane| {
        let out = vm
            .run(
                &prog,
                &bindings(std::slice::from_ref(l)),
                &Options::default(),
            )
            .expect("runs");
        out.values[0]
    };
    for (k, (name, xs)) in lane.iter().enumerate() {
        for e in 0..xs.len() {
            let x = xs[e];
            let h = 1e-6 * x.abs().max(1.0);
            let (mut up, mut down) = (lane.clone(), lane.clone());
            up[k].1[e] = x + h;
            down[k].1[e] = x - h;
            let fd = (f(&up) - f(&down)) / (2.0 * h);
            let g = run.grad(name)[at * xs.len() + e];
            assert!(
                (fd - g).abs() <= 1e-6 * (1.0 + g.abs()),
                "{} lane {at}: d/d{name}[{e}] = {g}, finite differences {fd}",
                w.name
            );
        }
    }
}

#[test]
fn workloads_at_one_lane() {
    for w in WORKLOADS {
        let lane = paper_lane(w);
        let ours = vm(w, std::slice::from_ref(&lane));
        assert!(
            (ours.values[0] - w.value).abs() < 5e-7,
            "{}: {} (paper {})",
            w.name,
            ours.values[0],
            w.value
        );
        let twin = cpu(w.scm, std::slice::from_ref(&lane));
        assert!(same(ours.values[0], twin.values[0]), "{}", w.name);
        for (name, g) in &ours.grads {
            for (a, b) in g.iter().zip(twin.grad(name)) {
                assert!(same(*a, *b), "{}: d/d{name} {a} vs runtime-cpu {b}", w.name);
            }
        }
        check_fd(w, &lane, &ours, 0);
    }
}

#[test]
fn workloads_at_256_lanes() {
    for (i, w) in WORKLOADS.iter().enumerate() {
        let lanes = random_lanes(w, 256, 0x5eed + i as u64);
        let ours = vm(w, &lanes);
        let twin = cpu(w.scm, &lanes);
        for (l, lane) in lanes.iter().enumerate() {
            // Lane decomposition: lane l of the batch is a one-lane run on lane l's inputs.
            let one = vm(w, std::slice::from_ref(lane));
            assert!(same(ours.values[l], one.values[0]), "{} lane {l}", w.name);
            assert!(same(ours.values[l], twin.values[l]), "{} lane {l}", w.name);
            for (name, g) in &ours.grads {
                let n = g.len() / lanes.len();
                for e in 0..n {
                    let (a, b, c) = (g[l * n + e], one.grad(name)[e], twin.grad(name)[l * n + e]);
                    assert!(same(a, b), "{} lane {l} d/d{name}: {a} vs {b}", w.name);
                    assert!(same(a, c), "{} lane {l} d/d{name}: {a} vs cpu {c}", w.name);
                }
            }
            if l % 16 == 0 {
                check_fd(w, lane, &ours, l);
            }
        }
    }
}

#[test]
fn workloads_in_f32() {
    for (i, w) in WORKLOADS.iter().enumerate() {
        let lanes = random_lanes(w, 64, 0xf32 + i as u64);
        let (ours, twin) = (vm_in::<f32>(w, &lanes), cpu_in::<f32>(w.scm, &lanes));
        let wide = vm(w, &lanes);
        for (l, (a, b)) in ours.values.iter().zip(&twin.values).enumerate() {
            assert!(same(*a, *b), "{} lane {l}: {a} vs cpu {b}", w.name);
            let x = wide.values[l];
            assert!(
                (a - x).abs() <= 1e-4 * (1.0 + x.abs()),
                "{} lane {l}",
                w.name
            );
        }
        for (name, g) in &ours.grads {
            for (a, b) in g.iter().zip(twin.grad(name)) {
                assert!(same(*a, *b), "{} d/d{name}: {a} vs cpu {b}", w.name);
            }
        }
    }
}

#[test]
fn w3_branch_diverges_per_lane() {
    let w = &WORKLOADS[2];
    let lanes = random_lanes(w, 256, 3);
    let taken: Vec<bool> = lanes.iter().map(|l| l[0].1[0] != 0.0).collect();
    assert!(
        taken.iter().any(|&t| t) && taken.iter().any(|&t| !t),
        "both blocks run"
    );
    let ours = vm(w, &lanes);
    for (l, lane) in lanes.iter().enumerate() {
        let [a, x, b] = [lane[1].1[0], lane[2].1[0], lane[3].1[0]];
        let (value, da, dx, db) = if taken[l] {
            (a * x, x, a, 0.0)
        } else {
            (b / x, 0.0, -b / (x * x), 1.0 / x)
        };
        assert_eq!(ours.values[l], value, "lane {l}");
        assert_eq!(ours.grad("a")[l], da, "lane {l}");
        assert!(ulps_apart(ours.grad("x")[l], dx) <= 2, "lane {l}");
        assert!(ulps_apart(ours.grad("b")[l], db) <= 1, "lane {l}");
        assert_eq!(ours.grad("g")[l], 0.0, "the selector gets no gradient");
    }
}

#[test]
fn a_dead_lanes_nan_stays_there() {
    // x = 0 on the lanes that multiply: b / x there is infinite, but those lanes take a x,
    // and the infinity reaches neither their values nor their gradients.
    let prog = Program::parse(WORKLOADS[2].asm).expect("assembles");
    let b = Bindings::new()
        .lanes("g", vec![1.0, 0.0, 1.0])
        .and_then(|b| b.lanes("x", vec![0.0, 2.0, 0.0]))
        .expect("lanes")
        .scalar("a", 2.0)
        .scalar("b", 3.0);
    let opts = Options {
        grad: Grad::All,
        ..Default::default()
    };
    let out = Vm::<f64>::new()
        .run(&prog, &b, &opts)
        .cloned()
        .expect("runs");
    assert_eq!(out.values, vec![0.0, 1.5, 0.0]);
    assert_eq!(out.grad("x").unwrap().per_lane, vec![2.0, -0.75, 2.0]);
    assert_eq!(out.grad("b").unwrap().per_lane, vec![0.0, 0.5, 0.0]);
    assert_eq!(out.grad("b").unwrap().sum, vec![0.5]);
}

/// The suite programs the VM can express, against their reference values and gradients and
/// against `runtime-cpu` running their source.
#[test]
fn suite_programs_in_assembly() {
    let files = [
        (
            "scalar_mul_add",
            include_str!("../../examples/vm/scalar_mul_add.asm"),
        ),
        (
            "michaelis_menten",
            include_str!("../../examples/vm/michaelis_menten.asm"),
        ),
        (
            "damped_oscillator",
            include_str!("../../examples/vm/damped_oscillator.asm"),
        ),
        (
            "logistic_map_loop",
            include_str!("../../examples/vm/logistic_map_loop.asm"),
        ),
    ];
    let suite = suite();
    for (name, asm) in files {
        let p = suite.iter().find(|p| p.name == name).expect("in the suite");
        let prog = Program::parse(asm).expect("assembles");
        let opts = Options {
            grad: Grad::All,
            ..Default::default()
        };
        let b = p.bindings();
        let ours = Vm::<f64>::new()
            .run(&prog, &b, &opts)
            .cloned()
            .expect("runs");
        let cpu_prog = runtime_cpu::Program::parse(&p.src).expect("parses");
        let cpu_opts = RunOptions {
            grad: GradSpec::All,
            ..Default::default()
        };
        let twin = Session::<f64>::new()
            .run(&cpu_prog, &b, &cpu_opts)
            .cloned()
            .expect("runs");
        let v = twin.values[0].as_ref().unwrap().as_number().unwrap();
        assert!(same(ours.values[0], v), "{name}: {} vs {v}", ours.values[0]);
        let reference = p.value.expect("a reference value");
        assert!(
            (ours.values[0] - reference).abs() <= 1e-6 * (1.0 + reference.abs()),
            "{name}"
        );
        for (input, want) in &p.grads {
            let g = ours.grad(input).expect("every input").per_lane[0];
            let cpu_g = twin.grad(input).unwrap().per_lane[0];
            assert!(same(g, cpu_g), "{name} d/d{input}: {g} vs {cpu_g}");
            // The reference is float32.
            assert!(
                (g - want).abs() <= 1e-5 * (1.0 + want.abs()),
                "{name} d/d{input}"
            );
        }
    }
}
