//! `ndvm bench kalman`: value and gradient of the 80-step Kalman likelihood through the
//! interpreter against the hand-written compiled ceiling, measured in the same run, at several
//! lane counts and in both precisions; and the small scalar programs of the suite at one lane.

use super::timing::seconds_per_call;
use crate::ceiling::{kalman_nll_grad_lanes, KalmanStep};
use crate::data::{suite, SMALL_PROGRAMS};
use crate::examples::{kalman_obs, KALMAN_SRC};
use runtime_cpu::{Bindings, GradSpec, Program, Real, RunOptions, Session, Tensor};
use serde::Serialize;
use std::time::Duration;

/// What to measure.
#[derive(Clone, Debug)]
pub struct Config {
    /// Lane counts.
    pub lanes: Vec<usize>,
    /// Precisions, `f64` and/or `f32`.
    pub precisions: Vec<String>,
    /// Minimum length of one timing sample.
    pub min_sample: Duration,
    /// Samples per figure (the median is reported).
    pub samples: usize,
    /// Lanes walked together (0: all lanes in one walk).
    pub lane_block: usize,
}

/// One measured configuration of the Kalman program.
#[derive(Clone, Debug, Serialize)]
pub struct KalmanRow {
    /// `f64` or `f32`.
    pub precision: String,
    /// Lanes per evaluation.
    pub lanes: usize,
    /// Microseconds per evaluation (value and gradient of every lane).
    pub eval_us: f64,
    /// Microseconds per lane.
    pub per_lane_us: f64,
    /// The hand-written ceiling's microseconds per lane, same run.
    pub ceiling_per_lane_us: f64,
    /// `per_lane_us / ceiling_per_lane_us`.
    pub ratio_to_ceiling: f64,
    /// Largest relative difference between our values and gradients and the ceiling's.
    pub max_rel_diff: f64,
}

/// One small program at one lane.
#[derive(Clone, Debug, Serialize)]
pub struct SmallRow {
    /// Suite name.
    pub name: String,
    /// Microseconds per value and gradient, program decoded once.
    pub eval_us: f64,
    /// Microseconds to read and decode the program.
    pub decode_us: f64,
}

/// Kalman lane inputs: q and r vary a little per lane.
fn lane_params(lanes: usize) -> (Vec<f64>, Vec<f64>) {
    let q = (0..lanes)
        .map(|l| 0.05 * (1.0 + 0.01 * (l % 17) as f64))
        .collect();
    let r = (0..lanes)
        .map(|l| 0.1 * (1.0 + 0.01 * (l % 13) as f64))
        .collect();
    (q, r)
}

/// The Kalman bindings for `lanes` lanes (scalars at one lane).
pub fn kalman_bindings(lanes: usize) -> Bindings {
    let obs = kalman_obs();
    let flat: Vec<f64> = obs.iter().flat_map(|r| r.iter().copied()).collect();
    let b = Bindings::new().uniform("obs", Tensor::matrix(obs.len(), 2, flat).expect("80x2"));
    let (q, r) = lane_params(lanes);
    if lanes == 1 {
        b.scalar("q", q[0]).scalar("r", r[0])
    } else {
        b.lanes("q", q)
            .and_then(|b| b.lanes("r", r))
            .expect("equal lane counts")
    }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-30)
}

fn kalman_at<R: Real>(cfg: &Config, lanes: usize) -> KalmanRow {
    let program = Program::parse(KALMAN_SRC).expect("the example parses");
    let bindings = kalman_bindings(lanes);
    let options = RunOptions {
        grad: GradSpec::Some(vec!["q".into(), "r".into()]),
        lane_block: cfg.lane_block,
        ..Default::default()
    };
    let mut session = Session::<R>::new();
    let eval = seconds_per_call(
        || {
            let out = session.run(&program, &bindings, &options).expect("bound");
            std::hint::black_box(out);
        },
        cfg.min_sample,
        cfg.samples,
    );
    let obs: Vec<[R; 2]> = kalman_obs()
        .iter()
        .map(|o| [R::from_f64(o[0]), R::from_f64(o[1])])
        .collect();
    let (q, r) = lane_params(lanes);
    let (q, r): (Vec<R>, Vec<R>) = (
        q.into_iter().map(R::from_f64).collect(),
        r.into_iter().map(R::from_f64).collect(),
    );
    let (mut v, mut dq, mut dr) = (
        vec![R::ZERO; lanes],
        vec![R::ZERO; lanes],
        vec![R::ZERO; lanes],
    );
    let mut tape: Vec<KalmanStep<R>> = Vec::new();
    let ceiling = seconds_per_call(
        || {
            kalman_nll_grad_lanes(&obs, &q, &r, &mut v, &mut dq, &mut dr, &mut tape);
            std::hint::black_box(&v);
        },
        cfg.min_sample,
        cfg.samples,
    );
    let out = session.run(&program, &bindings, &options).expect("bound");
    let mut diff = 0.0f64;
    for l in 0..lanes {
        let ours = out.values[l]
            .as_ref()
            .expect("runs")
            .as_number()
            .expect("a number");
        diff = diff.max(rel(ours, v[l].to_f64()));
        diff = diff.max(rel(
            out.grad("q").expect("asked").per_lane[l],
            dq[l].to_f64(),
        ));
        diff = diff.max(rel(
            out.grad("r").expect("asked").per_lane[l],
            dr[l].to_f64(),
        ));
    }
    let per_lane = eval / lanes as f64;
    let ceiling_per_lane = ceiling / lanes as f64;
    KalmanRow {
        precision: R::NAME.to_string(),
        lanes,
        eval_us: eval * 1e6,
        per_lane_us: per_lane * 1e6,
        ceiling_per_lane_us: ceiling_per_lane * 1e6,
        ratio_to_ceiling: per_lane / ceiling_per_lane,
        max_rel_diff: diff,
    }
}

/// Measures the Kalman program at every configured lane count and precision.
pub fn kalman(cfg: &Config) -> Vec<KalmanRow> {
    let mut rows = Vec::new();
    for p in &cfg.precisions {
        for &lanes in &cfg.lanes {
            rows.push(match p.as_str() {
                "f32" => kalman_at::<f32>(cfg, lanes),
                _ => kalman_at::<f64>(cfg, lanes),
            });
        }
    }
    rows
}

/// Measures the suite's small programs at one lane, value and gradient of every input.
pub fn small(cfg: &Config) -> Vec<SmallRow> {
    let mut session = Session::<f64>::new();
    suite()
        .into_iter()
        .filter(|p| SMALL_PROGRAMS.contains(&p.name.as_str()))
        .map(|p| {
            let decode = seconds_per_call(
                || {
                    std::hint::black_box(Program::parse(&p.src).expect("parses"));
                },
                cfg.min_sample,
                cfg.samples,
            );
            let program = Program::parse(&p.src).expect("parses");
            let bindings = p.bindings();
            let options = RunOptions {
                grad: GradSpec::All,
                ..Default::default()
            };
            let eval = seconds_per_call(
                || {
                    std::hint::black_box(
                        session.run(&program, &bindings, &options).expect("bound"),
                    );
                },
                cfg.min_sample,
                cfg.samples,
            );
            SmallRow {
                name: p.name.clone(),
                eval_us: eval * 1e6,
                decode_us: decode * 1e6,
            }
        })
        .collect()
}

/// Microseconds to read and decode the Kalman program.
pub fn kalman_decode_us(cfg: &Config) -> f64 {
    seconds_per_call(
        || {
            std::hint::black_box(Program::parse(KALMAN_SRC).expect("parses"));
        },
        cfg.min_sample,
        cfg.samples,
    ) * 1e6
}
