//! Co-search replay: a stream of candidate programs pushed through calibration, the paper's
//! protocol. Fit `n` calibrates candidate `n mod len` in cycle `n div len` with that cycle's
//! initial values: Adam on the training MSE with the candidate's parameters shared by every
//! training point (the lanes), a non-finite loss failing the fit, then the held-out MSE and
//! `R^2 = 1 - MSE / Var(y_holdout)`; a fit succeeds when `R^2 > 0.9`.
//!
//! | file | what |
//! | --- | --- |
//! | `stream.rs` | candidates, initial values, task data |
//! | `record.rs` | one fit's result line, the run summary, agreement with reference fits |
//! | `plot.rs` | best R^2 and fits against wall-clock time, as SVG |

pub mod plot;
pub mod record;
pub mod stream;

use crate::calibrate::adam::AdamSettings;
use crate::calibrate::{evaluate, fit, r_squared, Loss, Optimizer, Problem, Settings};
use record::FitRecord;
use runtime_cpu::{Bindings, DecodeOptions, Limits, Program, Real, Session};
use stream::{Candidate, Inits, Task};

/// How each fit runs.
#[derive(Clone, Debug)]
pub struct Protocol {
    /// Adam steps per fit.
    pub steps: usize,
    /// Adam settings.
    pub adam: AdamSettings,
    /// Limits of each evaluation.
    pub limits: Limits,
}

impl Default for Protocol {
    /// The paper's: 50 Adam steps, learning rate 0.05; a runaway candidate is cut off after
    /// 2 million node visits per evaluation.
    fn default() -> Self {
        Protocol {
            steps: 50,
            adam: AdamSettings::default(),
            limits: Limits {
                max_steps: 2_000_000,
                ..Limits::default()
            },
        }
    }
}

/// A candidate ready to fit: decoded once, with its training and held-out problems.
pub struct Prepared {
    /// The candidate as read.
    pub candidate: Result<Candidate, String>,
    problems: Result<(Problem, Problem), String>,
}

/// Decodes every candidate of a stream once.
pub fn prepare(
    stream: Vec<Result<Candidate, String>>,
    task: &Task,
    options: DecodeOptions,
) -> Vec<Prepared> {
    stream
        .into_iter()
        .map(|candidate| {
            let problems = match &candidate {
                Err(e) => Err(e.clone()),
                Ok(c) => match Program::parse_with(&c.src, options) {
                    Err(e) => Err(format!("does not parse: {e}")),
                    Ok(program) => {
                        let problem = |x: &[f64], y: &[f64]| Problem {
                            program: program.clone(),
                            fixed: Bindings::new(),
                            data: vec![("x".to_string(), x.to_vec())],
                            params: c.params.clone(),
                            loss: Loss::Mse(y.to_vec()),
                        };
                        Ok((
                            problem(&task.train_x, &task.train_y),
                            problem(&task.hold_x, &task.hold_y),
                        ))
                    }
                },
            };
            Prepared {
                candidate,
                problems,
            }
        })
        .collect()
}

/// Runs fit number `n` of the replay.
pub fn fit_number<R: Real>(
    session: &mut Session<R>,
    prepared: &[Prepared],
    task: &Task,
    inits: &Inits,
    protocol: &Protocol,
    n: usize,
) -> FitRecord {
    let index = n % prepared.len();
    let cycle = (n / prepared.len()) as u64;
    let mut record = FitRecord::failed(cycle, index, String::new());
    let (train, hold) = match &prepared[index].problems {
        Ok(p) => p,
        Err(e) => {
            record.error = Some(e.clone());
            return record;
        }
    };
    let init: Vec<f64> = train
        .params
        .iter()
        .enumerate()
        .map(|(k, p)| inits.value(cycle, index, k, p))
        .collect();
    let settings = Settings {
        optimizer: Optimizer::Adam(protocol.adam),
        steps: protocol.steps,
        clamps: vec![None; init.len()],
        limits: protocol.limits,
        final_loss: false,
        lane_block: runtime_cpu::DEFAULT_LANE_BLOCK,
    };
    let result = fit(session, train, &[init], &settings);
    let restart = &result.restarts[0];
    if let Some(e) = &restart.failure {
        record.error = Some(e.clone());
        return record;
    }
    match evaluate(
        session,
        hold,
        std::slice::from_ref(&restart.params),
        protocol.limits,
        runtime_cpu::DEFAULT_LANE_BLOCK,
        false,
    )
    .remove(0)
    {
        Ok((mse, _)) => {
            record.held_mse = Some(mse);
            record.train_loss = Some(restart.last_step_loss);
            record.held_r2 = Some(r_squared(mse, &task.hold_y));
            record.error = None;
        }
        Err(e) => record.error = Some(format!("held-out evaluation: {e}")),
    }
    record
}
