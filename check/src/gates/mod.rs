//! The six gates every generated program must pass.
//!
//! | gate | what |
//! | --- | --- |
//! | G1 | each lane's value from the runtime equals the oracle's |
//! | G2 | each lane's gradient (and the summed gradient of uniform inputs) equals the oracle's forward-mode gradient |
//! | G3 | each lane's gradient equals central finite differences of the runtime's own `f64` forward |
//! | G4 | a batched run equals, lane by lane, runs of each lane alone (and runs in blocks); a session reused lane after lane gives a fresh one's bits |
//! | G5 | lanes cut into blocks run by 1, 2 and 8 worker threads give byte-identical results |
//! | G6 | an `f32` run agrees with the `f64` run within `f32` tolerance |
//!
//! The tolerances are in [`tol`]. The runtime is reached only through its public API.

mod checks;
pub mod runs;
pub mod tol;

use crate::gen::Case;
use crate::oracle::{LaneGradient, Oracle, Output};
use runtime_cpu::Program;
use std::fmt;

/// One of the six gates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Gate {
    /// Forward values against the oracle.
    G1,
    /// Gradients against the oracle.
    G2,
    /// Gradients against finite differences of the runtime's forward.
    G3,
    /// Lane decomposition.
    G4,
    /// Thread counts.
    G5,
    /// `f32` against `f64`.
    G6,
}

impl Gate {
    /// The gates in order.
    pub const ALL: [Gate; 6] = [Gate::G1, Gate::G2, Gate::G3, Gate::G4, Gate::G5, Gate::G6];

    /// Position in [`Gate::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// A short description.
    pub fn title(self) -> &'static str {
        match self {
            Gate::G1 => "forward vs oracle",
            Gate::G2 => "gradients vs oracle",
            Gate::G3 => "gradients vs finite differences",
            Gate::G4 => "lane decomposition",
            Gate::G5 => "thread counts 1/2/8",
            Gate::G6 => "f32 vs f64",
        }
    }

    /// The gate called `name` (`G1` ... `G6`, any case).
    pub fn from_name(name: &str) -> Option<Gate> {
        Gate::ALL
            .into_iter()
            .find(|g| g.to_string().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "G{}", self.index() + 1)
    }
}

/// The result of one gate on one program.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Passed.
    Pass,
    /// Failed, with what was seen.
    Fail(String),
    /// Not run (an earlier step could not be done, or the gate was not asked for).
    NotRun,
}

/// The results of the gates on one program.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// One status per gate, in [`Gate::ALL`] order.
    pub status: [Status; 6],
    /// Set when the oracle could not evaluate the program (not a gate failure of the runtime:
    /// the program is invalid; it is reported as a G1 failure).
    pub invalid: Option<String>,
    /// G3 comparisons made.
    pub fd_checked: usize,
    /// G3 comparisons left out because a decision of the program was within reach.
    pub fd_skipped: usize,
    /// Lanes left out of G1, G2 or G6 because of a near tie.
    pub lanes_skipped: usize,
}

impl Verdict {
    fn new() -> Verdict {
        Verdict {
            status: std::array::from_fn(|_| Status::NotRun),
            invalid: None,
            fd_checked: 0,
            fd_skipped: 0,
            lanes_skipped: 0,
        }
    }

    /// True when every gate passed.
    pub fn passed(&self) -> bool {
        self.status.iter().all(|s| *s == Status::Pass)
    }

    /// The first failing gate and its message.
    pub fn first_failure(&self) -> Option<(Gate, &str)> {
        Gate::ALL
            .into_iter()
            .find_map(|g| match &self.status[g.index()] {
                Status::Fail(m) => Some((g, m.as_str())),
                _ => None,
            })
    }

    /// True when `gate` failed.
    pub fn failed(&self, gate: Gate) -> bool {
        matches!(self.status[gate.index()], Status::Fail(_))
    }

    fn set(&mut self, gate: Gate, r: Result<(), String>) {
        self.status[gate.index()] = match r {
            Ok(()) => Status::Pass,
            Err(m) => Status::Fail(m),
        };
    }
}

/// What the oracle says about each lane of a case.
pub struct OracleLanes {
    /// The oracle's inputs (names), in its order.
    pub inputs: Vec<String>,
    /// Per lane: value, gradients and decision margins, or the error the lane meets.
    pub lanes: Vec<Result<LaneGradient, String>>,
}

impl OracleLanes {
    /// The value on lane `l`, or its error.
    pub fn value(&self, l: usize) -> Result<f64, &str> {
        match &self.lanes[l] {
            Ok(g) => match g.value {
                Output::Number(x) => Ok(x),
                _ => unreachable!("checked by oracle_lanes"),
            },
            Err(e) => Err(e),
        }
    }
}

/// The kind of an error message: `Domain` of `Domain: ...` or of `Domain { ... }`.
pub fn error_kind(message: &str) -> &str {
    let end = message
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(message.len());
    &message[..end]
}

/// Evaluates every lane of `case` with the oracle. An error when the oracle cannot read the
/// program, when a free name has no binding, when a lane's value is not a number, or when a
/// lane runs past the oracle's limits (the program is not a valid test); a lane that meets an
/// error of the language (a failed `ref` in a branch some lanes take) keeps it.
pub fn oracle_lanes(case: &Case) -> Result<OracleLanes, String> {
    let o = Oracle::parse_with(&case.source, case.protected_ops)?;
    if let Some(free) = o
        .inputs()
        .iter()
        .find(|n| !case.inputs.iter().any(|i| &i.name == *n))
    {
        return Err(format!("UnboundName: `{free}` has no binding"));
    }
    let mut lanes = Vec::with_capacity(case.lanes);
    for l in 0..case.lanes {
        match o.gradient(&case.oracle_inputs(l)) {
            Ok(g) => match g.value {
                Output::Number(_) => lanes.push(Ok(g)),
                ref other => return Err(format!("lane {l}: the value is not a number: {other:?}")),
            },
            Err(e)
                if matches!(
                    error_kind(&e),
                    "NotDifferentiable" | "UnboundName" | "StepBudget" | "DepthLimit"
                ) =>
            {
                return Err(format!("lane {l}: {e}"))
            }
            Err(e) => lanes.push(Err(e)),
        }
    }
    Ok(OracleLanes {
        inputs: o.inputs().to_vec(),
        lanes,
    })
}

/// Runs every gate on `case`.
pub fn check(case: &Case) -> Verdict {
    check_only(case, &Gate::ALL)
}

/// Runs the gates in `gates` on `case` (the others stay [`Status::NotRun`]).
pub fn check_only(case: &Case, gates: &[Gate]) -> Verdict {
    let mut v = Verdict::new();
    let oracle = match oracle_lanes(case) {
        Ok(o) => o,
        Err(e) => {
            v.invalid = Some(e.clone());
            v.set(
                Gate::G1,
                Err(format!("the oracle cannot evaluate the program: {e}")),
            );
            return v;
        }
    };
    let decode = runtime_cpu::DecodeOptions {
        protected_ops: case.protected_ops,
    };
    let program = match Program::parse_with(&case.source, decode) {
        Ok(p) => p,
        Err(e) => {
            v.set(
                Gate::G1,
                Err(format!("the runtime rejects the program: {e}")),
            );
            return v;
        }
    };
    let all: Vec<usize> = (0..case.lanes).collect();
    let base = match runs::run::<f64>(&program, &runs::bindings(case, &all), true) {
        Ok(r) => r,
        Err(e) => {
            v.set(
                Gate::G1,
                Err(format!("the runtime refuses the bindings: {e}")),
            );
            return v;
        }
    };
    let mut c = checks::Ctx {
        case,
        program: &program,
        oracle: &oracle,
        base: &base,
        verdict: &mut v,
    };
    for &g in gates {
        let r = match g {
            Gate::G1 => c.g1(),
            Gate::G2 => c.g2(),
            Gate::G3 => c.g3(),
            Gate::G4 => c.g4(),
            Gate::G5 => c.g5(),
            Gate::G6 => c.g6(),
        };
        c.verdict.set(g, r);
    }
    v
}
