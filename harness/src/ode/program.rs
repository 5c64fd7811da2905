//! A candidate system as programs of the object language that integrate it: a `loop` over
//! time steps, each one step of the classical fourth-order Runge-Kutta scheme, with the
//! right-hand sides written in line. The runtime walks the loop over many lanes at once (the
//! segments of the trajectories, or the trajectories themselves) and its reverse tape gives
//! the exact gradient of where a lane ends with respect to every constant and starting state.
//!
//! Every name the programs add starts with `%`, which no data column's name can hold, so a
//! right-hand side reads its states, inputs and time by their own names.

use std::fmt::Write;

/// A system `d state / dt = rhs(states, inputs, time)`, one right-hand side per state.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    /// The states, in order: the variables the right-hand sides read.
    pub states: Vec<String>,
    /// Measured inputs, linear between their samples.
    pub inputs: Vec<String>,
    /// The time's name.
    pub time: String,
    /// One program text per state over the states, inputs, time and `params`.
    pub rhs: Vec<String>,
    /// The constants every right-hand side may read, in order.
    pub params: Vec<String>,
}

/// What a lane of an integration returns once its steps are done. Every lane starts at the
/// per-lane states `%s0, %s1, ...` and the time `%t0`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// The fit's residual: `%w * sum_i %e_i (x_i - %q_i)`, the lane's chosen state (`%e` is
    /// one-hot) against `%q` (zero on an observation's lane, whose target is the observed
    /// value; the next segment's start on a continuity lane).
    Shooting,
    /// Every state as a vector.
    States,
}

/// The per-lane inputs of an integration program, by name.
pub mod names {
    /// The step sizes, one per step (a vector; only the first `%n` are taken).
    pub const STEPS: &str = "%hs";
    /// The number of steps.
    pub const COUNT: &str = "%n";
    /// The time at the start.
    pub const START_TIME: &str = "%t0";
    /// Shooting: the lane's weight.
    pub const WEIGHT: &str = "%w";

    /// The starting value of state `i`.
    pub fn start(i: usize) -> String {
        format!("%s{i}")
    }

    /// Shooting: what state `i` is compared with at the end (the next segment's start).
    pub fn next(i: usize) -> String {
        format!("%q{i}")
    }

    /// Shooting: 1 where the lane reports state `i`, else 0.
    pub fn pick(i: usize) -> String {
        format!("%e{i}")
    }

    /// Input `j`'s value at the start of each step (a vector).
    pub fn input_at(j: usize) -> String {
        format!("%ua{j}")
    }

    /// Input `j`'s slope over each step (a vector).
    pub fn input_slope(j: usize) -> String {
        format!("%us{j}")
    }
}

/// True when some right-hand side of `sys` reads the time (one that cannot be read counts).
pub fn reads_time(sys: &System) -> bool {
    sys.rhs
        .iter()
        .any(|r| runtime_cpu::Program::parse(r).map_or(true, |p| p.inputs().any(|n| n == sys.time)))
}

/// The integration program of `sys` whose lanes return `output`.
pub fn integrate(sys: &System, output: Output) -> String {
    let timed = reads_time(sys);
    let t = &sys.time;
    let mut p = String::from("(loop ((%m 0)");
    if timed {
        let _ = write!(p, " ({t} {})", names::START_TIME);
    }
    for (i, s) in sys.states.iter().enumerate() {
        let _ = write!(p, " ({s} {})", names::start(i));
    }
    let _ = write!(p, ") (if (>= %m {}) ", names::COUNT);
    match output {
        Output::Shooting => {
            let _ = write!(p, "(* {} (+", names::WEIGHT);
            for (i, s) in sys.states.iter().enumerate() {
                let _ = write!(p, " (* {} (- {s} {}))", names::pick(i), names::next(i));
            }
            p.push_str("))");
        }
        Output::States => {
            p.push_str("(vec");
            for s in &sys.states {
                let _ = write!(p, " {s}");
            }
            p.push(')');
        }
    }
    let _ = write!(
        p,
        " (let* ((%h (ref {} %m)) (%a (* 0.5 %h)) (%b (/ %h 6))",
        names::STEPS
    );
    // Stage `k` evaluates every right-hand side at the state `x + c_k h k_{k-1}` and the time
    // `t + c_k h` (c = 0, 1/2, 1/2, 1), the inputs interpolated there.
    let part = ["", "%a", "%a", "%h"];
    for (stage, c) in part.iter().enumerate() {
        if stage > 0 {
            for (l, s) in sys.states.iter().enumerate() {
                let _ = write!(p, " (%x{stage}_{l} (+ {s} (* {c} %k{}_{l})))", stage - 1);
            }
        }
        for (i, rhs) in sys.rhs.iter().enumerate() {
            let _ = write!(p, " (%k{stage}_{i} (let (");
            for (j, u) in sys.inputs.iter().enumerate() {
                let at = format!("(ref {} %m)", names::input_at(j));
                if stage == 0 {
                    let _ = write!(p, "({u} {at}) ");
                } else {
                    let slope = format!("(ref {} %m)", names::input_slope(j));
                    let _ = write!(p, "({u} (+ {at} (* {slope} {c}))) ");
                }
            }
            if stage > 0 {
                if timed {
                    let _ = write!(p, "({t} (+ {t} {c})) ");
                }
                for (l, s) in sys.states.iter().enumerate() {
                    let _ = write!(p, "({s} %x{stage}_{l}) ");
                }
            }
            let _ = write!(p, ") {rhs}))");
        }
    }
    p.push_str(") (recur (+ %m 1)");
    if timed {
        let _ = write!(p, " (+ {t} %h)");
    }
    for (i, s) in sys.states.iter().enumerate() {
        let _ = write!(
            p,
            " (+ {s} (* %b (+ %k0_{i} (* 2 %k1_{i}) (* 2 %k2_{i}) %k3_{i})))"
        );
    }
    p.push_str("))))");
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use runtime_cpu::{Bindings, Program, RunOptions, Session, Shape};

    fn decay() -> System {
        System {
            states: vec!["x".into()],
            inputs: vec![],
            time: "t".into(),
            rhs: vec!["(- (* a x))".into()],
            params: vec!["a".into()],
        }
    }

    #[test]
    fn rk4_steps_match_the_scheme() {
        // dx/dt = -a x: one RK4 step multiplies x by 1 - z + z^2/2 - z^3/6 + z^4/24, z = a h.
        let sys = decay();
        let prog = Program::parse(&integrate(&sys, Output::States)).unwrap();
        let b = Bindings::new()
            .scalar("a", 0.7)
            .scalar("%s0", 2.0)
            .scalar("%t0", 0.0)
            .scalar("%n", 3.0)
            .uniform("%hs", runtime_cpu::Tensor::vector(vec![0.1, 0.2, 0.05]));
        let mut s = Session::<f64>::new();
        let out = s.run(&prog, &b, &RunOptions::default()).unwrap();
        let v = match out.values[0].as_ref().unwrap() {
            runtime_cpu::LaneValue::Tensor(Shape::Vector(1), v) => v[0],
            other => panic!("{other:?}"),
        };
        let step = |z: f64| 1.0 - z + z * z / 2.0 - z * z * z / 6.0 + z.powi(4) / 24.0;
        let want = 2.0 * step(0.07) * step(0.14) * step(0.035);
        assert!((v - want).abs() < 1e-14, "{v} {want}");
    }
}
