//! A candidate program and its fit: the rows the search fits on as lanes, the candidate's free
//! parameters shared by every row, fitted by Levenberg-Marquardt (or L-BFGS, or the paper's
//! Adam) from its own starting values and a few more restarts, all restarts lane groups of one
//! walk. A candidate whose fit fails carries the reason instead of a loss.

use super::emit::{self, Names};
use super::expr::Genome;
use crate::calibrate::adam::AdamSettings;
use crate::calibrate::lbfgs::LbfgsSettings;
use crate::calibrate::lm::LmSettings;
use crate::calibrate::{self, Loss, Optimizer, Problem, Settings};
use crate::rng::SplitMix;
use runtime_cpu::{Bindings, Limits, Program, Session};
use serde::{Deserialize, Serialize};

/// Where a candidate came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Origin {
    /// The built-in proposer's island `i`.
    Island(u16),
    /// The outside proposer (`--proposer`).
    Proposer,
    /// `--seed-programs`.
    Seed,
}

/// A program to fit.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Where it came from.
    pub origin: Origin,
    /// Its genome, when it is one of the built-in grammar's programs.
    pub genome: Option<Genome>,
    /// The program text: its free variables are the inputs and the parameters.
    pub src: String,
    /// The parameters, in order.
    pub params: Vec<String>,
    /// Where the fit starts.
    pub init: Vec<f64>,
    /// Node count.
    pub complexity: usize,
    /// Made by perturbing a parent's constants: fitted again from these starting values even
    /// when its skeleton was fitted before.
    pub perturbed: bool,
    /// The proposer's `id`, echoed in the answer.
    pub id: Option<serde_json::Value>,
    /// The score of its (better) parent on its island, when it has one: it must beat it, or
    /// pass the annealing draw, to take a place there.
    pub parent_score: Option<f64>,
}

impl Candidate {
    /// A genome as a candidate: its constants are its parameters and their starting values.
    pub fn from_genome(
        genome: Genome,
        names: &Names,
        origin: Origin,
        perturbed: bool,
    ) -> Candidate {
        let init = genome.constants();
        Candidate {
            origin,
            src: emit::source(&genome, names),
            params: (0..init.len()).map(|k| names.param(k)).collect(),
            init,
            complexity: genome.size(),
            genome: Some(genome),
            perturbed,
            id: None,
            parent_score: None,
        }
    }
}

/// The fitting method.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Method {
    /// Levenberg-Marquardt on the per-row Jacobian.
    Lm,
    /// L-BFGS on the mean squared error.
    Lbfgs,
    /// Adam on the mean squared error (the paper's co-search protocol).
    Adam,
}

/// How each candidate is fitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitSettings {
    /// The method.
    pub method: Method,
    /// Iterations (each one walk over every restart; Adam and L-BFGS: steps).
    pub iterations: usize,
    /// Restarts: the candidate's own starting values, then draws around them.
    pub restarts: usize,
    /// Restarts of a candidate with a loop (an `iterate`): an iterated map's constants are
    /// harder to fit from one start.
    pub loop_restarts: usize,
    /// Adam's learning rate.
    pub lr: f64,
    /// Node visits allowed per walk (a runaway candidate fails at this budget).
    pub max_steps: u64,
    /// Payload memory allowed per walk, in MB.
    pub max_memory_mb: usize,
}

impl FitSettings {
    fn settings(&self, k: usize) -> Settings {
        Settings {
            optimizer: match self.method {
                Method::Lm => Optimizer::Lm(LmSettings::default()),
                Method::Lbfgs => Optimizer::Lbfgs(LbfgsSettings::default()),
                Method::Adam => Optimizer::Adam(AdamSettings {
                    lr: self.lr,
                    ..Default::default()
                }),
            },
            steps: self.iterations,
            clamps: vec![None; k],
            limits: self.limits(),
            final_loss: true,
            lane_block: runtime_cpu::DEFAULT_LANE_BLOCK,
        }
    }

    /// The limits of one walk.
    pub fn limits(&self) -> Limits {
        Limits {
            max_steps: self.max_steps,
            max_depth: 10_000,
            max_memory: self.max_memory_mb << 20,
        }
    }
}

/// Rows to fit or score on, as the calibration binds them.
#[derive(Clone, Debug)]
pub struct Rows {
    /// Input names and columns.
    pub columns: Vec<(String, Vec<f64>)>,
    /// The target.
    pub y: Vec<f64>,
}

impl Rows {
    /// The rows of a dataset.
    pub fn of(d: &super::dataset::Dataset, inputs: &[String]) -> Rows {
        Rows {
            columns: inputs
                .iter()
                .enumerate()
                .map(|(j, n)| (n.clone(), d.column(j).to_vec()))
                .collect(),
            y: d.y.to_vec(),
        }
    }

    /// The calibration problem of `program` on these rows: only the columns it reads are bound
    /// (the first one when it reads none, so there is a lane per row).
    pub fn problem(&self, program: &Program, params: &[String]) -> Problem {
        let reads: Vec<&str> = program.inputs().collect();
        let mut data: Vec<(String, Vec<f64>)> = self
            .columns
            .iter()
            .filter(|(n, _)| reads.contains(&n.as_str()))
            .cloned()
            .collect();
        if data.is_empty() {
            data.push(self.columns[0].clone());
        }
        Problem {
            program: program.clone(),
            fixed: Bindings::new(),
            data,
            params: params.to_vec(),
            loss: Loss::Mse(self.y.clone()),
        }
    }

    /// The population variance of the target.
    pub fn variance(&self) -> f64 {
        super::dataset::variance(&self.y)
    }
}

/// A fit's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Fitted {
    /// The fitted parameters (the starting values when the fit failed).
    pub params: Vec<f64>,
    /// The mean squared error on the fit rows, or why there is none.
    pub loss: Result<f64, String>,
    /// Walks made.
    pub walks: usize,
    /// Lanes walked over all of them (rows times restarts per walk).
    pub lanes: usize,
}

/// The starting points: `init`, then `restarts - 1` draws around it seeded by `seed`.
pub fn starts(init: &[f64], restarts: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = SplitMix(seed);
    let mut all = vec![init.to_vec()];
    for _ in 1..restarts.max(1) {
        all.push(
            init.iter()
                .map(|&v| {
                    if v == 0.0 || rng.unit() < 0.25 {
                        rng.normal()
                    } else {
                        let sign = if rng.unit() < 0.2 { -1.0 } else { 1.0 };
                        sign * v * rng.normal().exp()
                    }
                })
                .collect(),
        );
    }
    all
}

/// Fits `program`'s `params` on `rows` from `init` (restarts drawn with `seed`).
pub fn fit(
    session: &mut Session<f64>,
    program: &Program,
    params: &[String],
    init: &[f64],
    rows: &Rows,
    fit: &FitSettings,
    seed: u64,
) -> Fitted {
    let problem = rows.problem(program, params);
    if params.is_empty() {
        return Fitted {
            params: Vec::new(),
            loss: score(session, &problem, &[], fit.limits()),
            walks: 1,
            lanes: rows.y.len(),
        };
    }
    let settings = fit.settings(params.len());
    let result = calibrate::fit(
        session,
        &problem,
        &starts(init, fit.restarts, seed),
        &settings,
    );
    match result.best {
        Some(b) => {
            let r = &result.restarts[b];
            Fitted {
                params: r.params.clone(),
                loss: Ok(r.final_loss.unwrap_or(r.last_step_loss)),
                walks: result.evaluations,
                lanes: result.lanes,
            }
        }
        None => Fitted {
            params: init.to_vec(),
            loss: Err(result.restarts[0]
                .failure
                .clone()
                .unwrap_or_else(|| "the fit failed".into())),
            walks: result.evaluations,
            lanes: result.lanes,
        },
    }
}

/// The mean squared error of `problem` at `values`.
pub fn score(
    session: &mut Session<f64>,
    problem: &Problem,
    values: &[f64],
    limits: Limits,
) -> Result<f64, String> {
    let lane_block = runtime_cpu::DEFAULT_LANE_BLOCK;
    calibrate::evaluate(
        session,
        problem,
        &[values.to_vec()],
        limits,
        lane_block,
        false,
    )
    .remove(0)
    .map(|(mse, _)| mse)
}

/// NMSE (MSE over the target's population variance) and R^2 of `program` at `values` on
/// `rows`.
pub fn test_scores(
    session: &mut Session<f64>,
    program: &Program,
    params: &[String],
    values: &[f64],
    rows: &Rows,
    limits: Limits,
) -> Result<(f64, f64), String> {
    let mse = score(session, &rows.problem(program, params), values, limits)?;
    let nmse = mse / rows.variance();
    Ok((nmse, 1.0 - nmse))
}

impl Candidate {
    /// A program given as text (a seed, an outside proposer's line): every free variable that
    /// is not an input is a parameter, starting at its `init` value or 1.0.
    pub fn from_source(
        src: &str,
        init: &std::collections::HashMap<String, f64>,
        inputs: &[String],
        origin: Origin,
        id: Option<serde_json::Value>,
    ) -> Result<Candidate, String> {
        let program = Program::parse(src).map_err(|e| format!("does not parse: {e}"))?;
        let params: Vec<String> = program
            .inputs()
            .filter(|n| !inputs.iter().any(|i| i == n))
            .map(String::from)
            .collect();
        let values = params
            .iter()
            .map(|p| init.get(p).copied().unwrap_or(1.0))
            .collect();
        Ok(Candidate {
            origin,
            genome: None,
            src: src.to_string(),
            params,
            init: values,
            complexity: super::convert::complexity(src)?,
            perturbed: false,
            id,
            parent_score: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Rows {
        let x: Vec<f64> = (0..50).map(|i| f64::from(i) * 0.1).collect();
        let v: Vec<f64> = (0..50).map(|i| f64::from(i % 7)).collect();
        let y = x
            .iter()
            .zip(&v)
            .map(|(x, v)| 2.5 * x.sin() + 0.3 * v)
            .collect();
        Rows {
            columns: vec![("x".into(), x), ("v".into(), v)],
            y,
        }
    }

    fn settings() -> FitSettings {
        FitSettings {
            method: Method::Lm,
            iterations: 30,
            restarts: 3,
            loop_restarts: 3,
            lr: 0.05,
            max_steps: 100_000,
            max_memory_mb: 256,
        }
    }

    #[test]
    fn fits_a_known_formula_exactly() {
        let p = Program::parse("(+ (* a (sin (* w x))) (* b v))").unwrap();
        let params: Vec<String> = ["a", "w", "b"].iter().map(|s| s.to_string()).collect();
        let mut s = Session::new();
        let f = fit(
            &mut s,
            &p,
            &params,
            &[1.0, 1.1, 1.0],
            &rows(),
            &settings(),
            7,
        );
        assert!(f.loss.clone().unwrap() < 1e-20, "{f:?}");
        let (nmse, r2) =
            test_scores(&mut s, &p, &params, &f.params, &rows(), settings().limits()).unwrap();
        assert!(nmse < 1e-20 && (r2 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn failures_carry_their_reason() {
        let mut s = Session::new();
        let cases = [
            ("(if (> x 1) #t #f)", "not a number"),
            ("(loop ((i 0)) (recur (+ i a)))", "step"),
            ("(log (- 0 (* a a) 1))", "non-finite"),
        ];
        for (src, want) in cases {
            let p = Program::parse(src).unwrap();
            let params: Vec<String> = p.inputs().filter(|n| *n == "a").map(String::from).collect();
            let f = fit(
                &mut s,
                &p,
                &params,
                &vec![1.0; params.len()],
                &rows(),
                &settings(),
                1,
            );
            let e = f.loss.unwrap_err();
            assert!(e.contains(want), "{src}: {e}");
        }
    }
}
