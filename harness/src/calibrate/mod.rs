//! Calibration: fit the free parameters of a program to data by gradient steps.
//!
//! Data columns bind as lanes; the parameters are shared by every data lane of a restart, and
//! several restarts run as lane groups of one walk (restart-major: lane `r * N + i` is data row
//! `i` of restart `r`), whose lane blocks [`workers::Workers`] spreads over threads. The loss is
//! the mean squared error against a target column, or the mean of the program's own value (a
//! likelihood). Adam (the paper's settings by default), L-BFGS, or Levenberg-Marquardt for a
//! least-squares loss;
//! optional box constraints by projection; a non-finite loss ends a restart as failed.
//!
//! | file | what |
//! | --- | --- |
//! | `adam.rs` | Adam in the run's precision |
//! | `lbfgs.rs` | L-BFGS with a backtracking line search |
//! | `lm.rs` | Levenberg-Marquardt on the per-row Jacobian, restarts as lane groups |
//! | `table.rs` | CSV data with a train/holdout split |
//! | `report.rs` | a whole calibration as `ndvm calibrate` runs it: seeded restarts, fit, R^2 |
//! | `workers.rs` | restarts spread over worker threads, one session each |

pub mod adam;
pub mod lbfgs;
pub mod lm;
mod rebind;
pub mod report;
pub mod table;
pub mod workers;

use adam::{Adam, AdamSettings};
use lbfgs::{Lbfgs, LbfgsSettings};
use lm::LmSettings;
use rebind::Layout;
use runtime_cpu::{Bindings, LaneValue, Limits, Outcome, Program, Real, Session};
use std::ops::Range;
use workers::Evaluator;

/// What is minimised.
#[derive(Clone, Debug, PartialEq)]
pub enum Loss {
    /// Mean squared error of the program's value against this target, one per data row.
    Mse(Vec<f64>),
    /// A loss of the program's value against a target row by row, other than the plain mean
    /// squared error: rows weighted, or a robust or relative loss.
    Rows(RowLoss),
    /// The mean of the program's value over the data rows.
    Value,
}

impl Loss {
    /// Whether it is a (weighted) sum of squared residuals, which Levenberg-Marquardt fits.
    pub fn least_squares(&self) -> bool {
        match self {
            Loss::Mse(_) => true,
            Loss::Rows(r) => r.kind.least_squares(),
            Loss::Value => false,
        }
    }
}

/// How one row's value `f` is scored against its target `y` (`d = f - y`).
#[derive(Copy, Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RowKind {
    /// `d^2`.
    #[default]
    L2,
    /// `|d|`.
    L1,
    /// `d^2 / 2` within `delta` of the target, `delta (|d| - delta / 2)` beyond.
    Huber(f64),
    /// `ln(cosh(d))`.
    LogCosh,
    /// `d^2 / |y|` (`|y|` at least [`RELATIVE_FLOOR`]).
    Relative,
    /// Poisson deviance with a log link: the value is the log of the rate `mu = e^f`, and a
    /// row scores `2 (y ln(y / mu) - (y - mu))` (counts, `y >= 0`).
    Poisson,
}

/// The smallest `|y|` the relative loss divides by.
pub const RELATIVE_FLOOR: f64 = 1e-12;

impl RowKind {
    /// Reads `l2`, `l1`, `huber:DELTA`, `logcosh` or `relative`.
    pub fn parse(text: &str) -> Result<RowKind, String> {
        let bad = |why: &str| {
            format!(
                "--loss {text}: {why}; expected l2, l1, huber:DELTA (DELTA above 0), logcosh, \
                 relative, poisson or a program (...)"
            )
        };
        match text.trim() {
            "l2" => Ok(RowKind::L2),
            "l1" => Ok(RowKind::L1),
            "logcosh" => Ok(RowKind::LogCosh),
            "relative" => Ok(RowKind::Relative),
            "poisson" => Ok(RowKind::Poisson),
            t => match t.strip_prefix("huber:").or(t.strip_prefix("huber")) {
                Some(d) => match d.trim().parse::<f64>() {
                    Ok(d) if d.is_finite() && d > 0.0 => Ok(RowKind::Huber(d)),
                    _ => Err(bad("huber needs its DELTA, a number above 0 (huber:1.0)")),
                },
                None => Err(bad("not a loss of ndvm search")),
            },
        }
    }

    /// Its name as `--loss` reads it.
    pub fn name(&self) -> String {
        match self {
            RowKind::L2 => "l2".into(),
            RowKind::L1 => "l1".into(),
            RowKind::Huber(d) => format!("huber:{d}"),
            RowKind::LogCosh => "logcosh".into(),
            RowKind::Relative => "relative".into(),
            RowKind::Poisson => "poisson".into(),
        }
    }

    /// Whether it is a squared residual, weighted (Levenberg-Marquardt fits it).
    pub fn least_squares(&self) -> bool {
        matches!(self, RowKind::L2 | RowKind::Relative)
    }

    /// A row's loss and its derivative in the value, at `d = f - y`.
    #[inline]
    pub fn at(&self, d: f64, y: f64) -> (f64, f64) {
        match *self {
            RowKind::L2 => (d * d, 2.0 * d),
            RowKind::L1 => (d.abs(), if d == 0.0 { 0.0 } else { d.signum() }),
            RowKind::Huber(delta) => {
                if d.abs() <= delta {
                    (0.5 * d * d, d)
                } else {
                    (delta * (d.abs() - 0.5 * delta), delta * d.signum())
                }
            }
            RowKind::LogCosh => {
                // ln(cosh d) = |d| + ln(1 + e^(-2|d|)) - ln 2, which does not overflow.
                let a = d.abs();
                (
                    a + (-2.0 * a).exp().ln_1p() - std::f64::consts::LN_2,
                    d.tanh(),
                )
            }
            RowKind::Relative => {
                let s = 1.0 / y.abs().max(RELATIVE_FLOOR);
                (d * d * s, 2.0 * d * s)
            }
            RowKind::Poisson => {
                // d = f - y; the value is f = d + y, the rate e^f.
                let f = d + y;
                let mu = f.exp();
                // y ln(y / mu) is 0 at y = 0 (and left out below 0, which a search refuses).
                let (log_term, dlog) = if y > 0.0 {
                    (y * (y.ln() - f), -y)
                } else {
                    (0.0, 0.0)
                };
                (2.0 * (log_term - (y - mu)), 2.0 * (dlog + mu))
            }
        }
    }
}

/// A row-by-row loss: its target, the rows' weights (each row's loss counts that many times;
/// the loss is the weighted mean), and how a row is scored.
#[derive(Clone, Debug, PartialEq)]
pub struct RowLoss {
    /// One target per data row.
    pub target: Vec<f64>,
    /// One non-negative weight per data row (every row 1 when `None`).
    pub weights: Option<Vec<f64>>,
    /// How a row is scored.
    pub kind: RowKind,
}

impl RowLoss {
    /// Row `i`'s weight.
    #[inline]
    pub fn weight(&self, i: usize) -> f64 {
        self.weights.as_ref().map_or(1.0, |w| w[i])
    }

    /// The sum of the first `n` rows' weights (what the loss is divided by).
    pub fn total(&self, n: usize) -> f64 {
        self.weights
            .as_ref()
            .map_or(n as f64, |w| w[..n].iter().sum())
    }

    /// Row `i`'s weight in a least-squares loss's sum of squared residuals.
    #[inline]
    pub fn squares_weight(&self, i: usize) -> f64 {
        let w = self.weight(i);
        match self.kind {
            RowKind::Relative => w / self.target[i].abs().max(RELATIVE_FLOOR),
            _ => w,
        }
    }
}

/// A calibration problem: a program, its fixed inputs, its data and its free parameters.
#[derive(Clone, Debug)]
pub struct Problem {
    /// The model.
    pub program: Program,
    /// Inputs bound the same on every lane (matrices, constants).
    pub fixed: Bindings,
    /// Per-row inputs: name and one value per data row.
    pub data: Vec<(String, Vec<f64>)>,
    /// The parameters to fit, in order.
    pub params: Vec<String>,
    /// The loss.
    pub loss: Loss,
}

impl Problem {
    /// Data rows (1 when there is no data).
    pub fn rows(&self) -> usize {
        self.data.first().map_or(1, |(_, c)| c.len())
    }
}

/// The optimiser.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Optimizer {
    /// Adam.
    Adam(AdamSettings),
    /// L-BFGS.
    Lbfgs(LbfgsSettings),
    /// Levenberg-Marquardt on the per-row Jacobian (a least-squares loss only).
    Lm(LmSettings),
}

/// How to fit.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The optimiser.
    pub optimizer: Optimizer,
    /// Optimiser steps (iterations for L-BFGS).
    pub steps: usize,
    /// Box constraint per parameter (`None`: free).
    pub clamps: Vec<Option<(f64, f64)>>,
    /// Limits of each evaluation.
    pub limits: Limits,
    /// Evaluate the loss once more at the final parameters.
    pub final_loss: bool,
    /// Lanes per walk (see [`RunOptions::lane_block`]).
    pub lane_block: usize,
}

/// One restart's result.
#[derive(Clone, Debug, PartialEq)]
pub struct RestartResult {
    /// Final parameters.
    pub params: Vec<f64>,
    /// Loss of the last step (at the parameters before the last update).
    pub last_step_loss: f64,
    /// Loss at the final parameters, when asked for.
    pub final_loss: Option<f64>,
    /// Why the restart failed, if it did.
    pub failure: Option<String>,
}

/// The result of a fit.
#[derive(Clone, Debug, PartialEq)]
pub struct FitResult {
    /// Every restart.
    pub restarts: Vec<RestartResult>,
    /// The best successful restart (lowest loss), if any.
    pub best: Option<usize>,
    /// Optimiser steps taken (the most over restarts; L-BFGS stops early once converged).
    pub steps: usize,
    /// Program evaluations (walks over all restarts) made.
    pub evaluations: usize,
    /// Lanes walked over every evaluation (rows times the restarts each one walked).
    pub lanes: usize,
}

/// Loss and gradient per restart from one evaluation over all restarts.
pub type PerRestart = Vec<Result<(f64, Vec<f64>), String>>;

/// One evaluation's results lane by lane: each lane's value (or why it has none) and, per
/// parameter, each lane's gradient.
#[derive(Clone, Debug, Default)]
pub struct LaneResults {
    /// Each lane's value.
    pub values: Vec<Result<f64, String>>,
    /// Per parameter, each lane's gradient (empty without gradients).
    pub grads: Vec<Vec<f64>>,
}

impl LaneResults {
    fn of(problem: &Problem, out: &Outcome, with_grad: bool) -> Self {
        let values = out.values.iter().map(lane_number).collect();
        let lanes = OutcomeLanes::new(problem, out, with_grad);
        let grads = (0..lanes.params)
            .map(|k| lanes.per_lane(k).to_vec())
            .collect();
        LaneResults { values, grads }
    }

    /// Appends the next lanes' results.
    pub fn extend(&mut self, next: LaneResults) {
        self.values.extend(next.values);
        if self.grads.is_empty() {
            self.grads = next.grads;
        } else {
            for (g, more) in self.grads.iter_mut().zip(next.grads) {
                g.extend(more);
            }
        }
    }
}

/// Evaluates lanes `lanes` of the restarts `p` (lane `r * N + i` is data row `i` of restart
/// `r`); one restart's parameters are bound once, as one walk of every lane binds them.
pub(crate) fn evaluate_lanes<R: Real>(
    session: &mut Session<R>,
    problem: &Problem,
    p: &[Vec<f64>],
    lanes: Range<usize>,
    limits: Limits,
    lane_block: usize,
    with_grad: bool,
) -> LaneResults {
    let n = lanes.len();
    let layout = Layout::new(p, lanes, limits, lane_block, with_grad);
    rebind::with_run(problem, p, &layout, |b, opts| {
        match session.run(&problem.program, b, opts) {
            Ok(out) => LaneResults::of(problem, out, with_grad),
            Err(e) => LaneResults {
                values: vec![Err(e.to_string()); n],
                grads: vec![vec![f64::NAN; n]; problem.params.len()],
            },
        }
    })
}

/// Every lane's value and gradient for the restarts `p`, in one walk of every lane.
pub fn evaluate_all<R: Real>(
    session: &mut Session<R>,
    problem: &Problem,
    p: &[Vec<f64>],
    limits: Limits,
    lane_block: usize,
    with_grad: bool,
) -> LaneResults {
    let lanes = 0..p.len() * problem.rows();
    evaluate_lanes(session, problem, p, lanes, limits, lane_block, with_grad)
}

/// Evaluates loss and gradient of every restart, read straight from the session's outcome
/// (the same numbers as [`losses`] of [`evaluate_all`], without copying every lane first).
pub fn evaluate<R: Real>(
    session: &mut Session<R>,
    problem: &Problem,
    p: &[Vec<f64>],
    limits: Limits,
    lane_block: usize,
    with_grad: bool,
) -> PerRestart {
    let lanes = 0..p.len() * problem.rows();
    let layout = Layout::new(p, lanes, limits, lane_block, with_grad);
    rebind::with_run(problem, p, &layout, |b, opts| {
        match session.run(&problem.program, b, opts) {
            Ok(out) => {
                let lanes = OutcomeLanes::new(problem, out, with_grad);
                (0..p.len())
                    .map(|r| restart_loss(problem, &lanes, r, with_grad))
                    .collect()
            }
            Err(e) => vec![Err(e.to_string()); p.len()],
        }
    })
}

/// The least-squares normal equations of every restart, read straight from the session's
/// outcome (the same numbers as [`lm::normals`] of [`evaluate_all`], without copying every
/// lane first).
pub(crate) fn normals<R: Real>(
    session: &mut Session<R>,
    problem: &Problem,
    p: &[Vec<f64>],
    limits: Limits,
    lane_block: usize,
) -> lm::PerRestartNormal {
    let lanes = 0..p.len() * problem.rows();
    let layout = Layout::new(p, lanes, limits, lane_block, true);
    rebind::with_run(problem, p, &layout, |b, opts| {
        match session.run(&problem.program, b, opts) {
            Ok(out) => lm::normals(problem, &OutcomeLanes::new(problem, out, true), p.len()),
            Err(e) => vec![Err(e.to_string()); p.len()],
        }
    })
}

/// What a restart's loss reads of an evaluation: each lane's value, and each parameter's
/// gradient on each lane (none without gradients).
pub(crate) trait Lanes {
    /// The lane's value, or why it has none.
    fn value(&self, lane: usize) -> Result<f64, String>;
    /// The lane's value when it is a number (no message built otherwise).
    fn number(&self, lane: usize) -> Option<f64>;
    fn grads(&self) -> usize;
    /// One parameter's gradient on a run of lanes.
    fn grad_run(&self, param: usize, lanes: Range<usize>) -> &[f64];
}

impl Lanes for LaneResults {
    fn value(&self, lane: usize) -> Result<f64, String> {
        self.values[lane].clone()
    }
    fn number(&self, lane: usize) -> Option<f64> {
        self.values[lane].as_ref().ok().copied()
    }
    fn grads(&self) -> usize {
        self.grads.len()
    }
    fn grad_run(&self, param: usize, lanes: Range<usize>) -> &[f64] {
        &self.grads[param][lanes]
    }
}

/// A session's outcome seen as [`Lanes`].
struct OutcomeLanes<'a> {
    out: &'a Outcome,
    /// Where each parameter's gradient is among the outcome's: `None` when they are in the
    /// parameters' order (as a run asked for them), else their places.
    order: Option<Vec<usize>>,
    params: usize,
}

impl<'a> OutcomeLanes<'a> {
    fn new(problem: &Problem, out: &'a Outcome, with_grad: bool) -> Self {
        let params = if with_grad { problem.params.len() } else { 0 };
        let in_order = !with_grad
            || (out.grads.len() == params
                && out
                    .grads
                    .iter()
                    .zip(&problem.params)
                    .all(|(g, p)| g.name == *p));
        let order = (!in_order).then(|| {
            let place = |name: &String| {
                let k = out.grads.iter().position(|g| g.name == *name);
                k.expect("every parameter is differentiated")
            };
            problem.params.iter().map(place).collect()
        });
        OutcomeLanes { out, order, params }
    }

    /// Parameter `k`'s gradient on every lane.
    fn per_lane(&self, k: usize) -> &'a [f64] {
        let place = self.order.as_ref().map_or(k, |o| o[k]);
        &self.out.grads[place].per_lane
    }
}

impl Lanes for OutcomeLanes<'_> {
    fn value(&self, lane: usize) -> Result<f64, String> {
        lane_number(&self.out.values[lane])
    }
    fn number(&self, lane: usize) -> Option<f64> {
        self.out.values[lane].as_ref().ok()?.as_number()
    }
    fn grads(&self) -> usize {
        self.params
    }
    fn grad_run(&self, param: usize, lanes: Range<usize>) -> &[f64] {
        &self.per_lane(param)[lanes]
    }
}

/// A lane's value as the loss takes it: a number, or why there is none.
fn lane_number(v: &std::result::Result<LaneValue, runtime_cpu::Error>) -> Result<f64, String> {
    match v {
        Ok(v) => v
            .as_number()
            .ok_or_else(|| format!("the model's value is {}, not a number", v.to_scheme())),
        Err(e) => Err(e.to_string()),
    }
}

/// Each restart's loss and gradient from its lanes' results.
pub(crate) fn losses(
    problem: &Problem,
    lanes: &LaneResults,
    restarts: usize,
    with_grad: bool,
) -> PerRestart {
    (0..restarts)
        .map(|r| restart_loss(problem, lanes, r, with_grad))
        .collect()
}

/// Restart `r`'s loss over its lanes, and its gradient (zeros without gradients).
fn restart_loss(
    problem: &Problem,
    lanes: &impl Lanes,
    r: usize,
    with_grad: bool,
) -> Result<(f64, Vec<f64>), String> {
    let n = problem.rows();
    let first = r * n;
    let params = if with_grad { lanes.grads() } else { 0 };
    let run = |k: usize| lanes.grad_run(k, first..first + n);
    let mut grad = vec![0.0; problem.params.len()];
    let loss = match params {
        0 => lane_loss(problem, lanes, first, &mut Fixed::<0>::new(run)),
        1 => lane_loss(problem, lanes, first, &mut Fixed::<1>::new(run)),
        2 => lane_loss(problem, lanes, first, &mut Fixed::<2>::new(run)),
        3 => lane_loss(problem, lanes, first, &mut Fixed::<3>::new(run)),
        4 => lane_loss(problem, lanes, first, &mut Fixed::<4>::new(run)),
        _ => lane_loss(problem, lanes, first, &mut Listed::default()),
    };
    let loss = match loss {
        Ok((loss, Sums::Fixed(sums))) => {
            grad[..params].copy_from_slice(&sums[..params]);
            loss
        }
        Ok((loss, Sums::Weights(w))) => {
            for (k, g) in grad.iter_mut().enumerate().take(params) {
                *g = w.iter().zip(run(k)).map(|(w, x)| w * x).sum();
            }
            loss
        }
        Err(e) => return Err(e),
    };
    if !loss.is_finite() {
        return Err("non-finite loss".to_string());
    }
    Ok((loss, grad))
}

/// The loss over the lanes `first..first + N` of one restart, each lane's weight
/// `dloss / dvalue` handed to `acc` in lane order.
fn lane_loss<A: Accumulate>(
    problem: &Problem,
    lanes: &impl Lanes,
    first: usize,
    acc: &mut A,
) -> Result<(f64, Sums), String> {
    let n = problem.rows();
    let nf = n as f64;
    let y = |i: usize| match lanes.number(first + i) {
        Some(y) => Ok(y),
        None => lanes.value(first + i),
    };
    let mut loss = 0.0;
    acc.lanes(n);
    match &problem.loss {
        Loss::Mse(t) => {
            for (i, &t) in t[..n].iter().enumerate() {
                let d = y(i)? - t;
                loss += d * d / nf;
                acc.add(i, 2.0 * d / nf);
            }
        }
        Loss::Rows(rl) => {
            let total = rl.total(n);
            for (i, &t) in rl.target[..n].iter().enumerate() {
                let w = rl.weight(i) / total;
                let (l, dl) = rl.kind.at(y(i)? - t, t);
                loss += w * l;
                acc.add(i, w * dl);
            }
        }
        Loss::Value => {
            for i in 0..n {
                loss += y(i)? / nf;
                acc.add(i, 1.0 / nf);
            }
        }
    }
    Ok((loss, acc.sums()))
}

/// What the lane weights become: the gradient sums, or the weights themselves.
enum Sums {
    Fixed([f64; 4]),
    Weights(Vec<f64>),
}

/// Takes each lane's weight, in lane order.
trait Accumulate {
    /// Before the first weight: lanes `0..n` will come.
    fn lanes(&mut self, _n: usize) {}
    fn add(&mut self, lane: usize, w: f64);
    fn sums(&mut self) -> Sums;
}

/// Up to four parameters' sums `sum_i w_i * g_i` in registers, from -0.0 in lane order
/// (where `Iterator::sum` starts: the same bits as summing a list of the weights).
struct Fixed<'a, const N: usize> {
    runs: [&'a [f64]; N],
    sums: [f64; N],
}

impl<'a, const N: usize> Fixed<'a, N> {
    fn new(run: impl Fn(usize) -> &'a [f64]) -> Self {
        Fixed {
            runs: std::array::from_fn(run),
            sums: [-0.0; N],
        }
    }
}

impl<const N: usize> Accumulate for Fixed<'_, N> {
    #[inline(always)]
    fn lanes(&mut self, n: usize) {
        // Every run covers the lanes (and the lane loop needs no bounds check).
        for run in &mut self.runs {
            *run = &run[..n];
        }
    }
    #[inline(always)]
    fn add(&mut self, lane: usize, w: f64) {
        for k in 0..N {
            self.sums[k] += w * self.runs[k][lane];
        }
    }
    fn sums(&mut self) -> Sums {
        let mut out = [0.0; 4];
        out[..N].copy_from_slice(&self.sums);
        Sums::Fixed(out)
    }
}

/// More parameters: the weights, listed.
#[derive(Default)]
struct Listed(Vec<f64>);

impl Accumulate for Listed {
    fn add(&mut self, _lane: usize, w: f64) {
        self.0.push(w);
    }
    fn sums(&mut self) -> Sums {
        Sums::Weights(std::mem::take(&mut self.0))
    }
}

/// Puts each parameter inside its box (a NaN stays NaN). The callers refuse bounds that are
/// NaN or crossed; here such bounds cannot panic (`max` then `min`, not `clamp`).
pub(crate) fn project(p: &mut [f64], clamps: &[Option<(f64, f64)>]) {
    for (x, c) in p.iter_mut().zip(clamps) {
        if let (Some((lo, hi)), false) = (c, x.is_nan()) {
            *x = x.max(*lo).min(*hi);
        }
    }
}

/// Fits `problem` from the initial parameters `init` (one vector per restart), evaluating
/// on `session` (one session, or [`workers::Workers`] to spread the restarts over threads).
pub fn fit(
    session: &mut impl Evaluator,
    problem: &Problem,
    init: &[Vec<f64>],
    settings: &Settings,
) -> FitResult {
    match settings.optimizer {
        Optimizer::Adam(a) => fit_adam(session, problem, init, settings, a),
        Optimizer::Lbfgs(l) => fit_lbfgs(session, problem, init, settings, l),
        Optimizer::Lm(l) => lm::fit(session, problem, init, settings, l),
    }
}

fn fit_adam<E: Evaluator>(
    session: &mut E,
    problem: &Problem,
    init: &[Vec<f64>],
    settings: &Settings,
    a: AdamSettings,
) -> FitResult {
    let k = problem.params.len();
    let mut p: Vec<Vec<f64>> = init.to_vec();
    for x in p.iter_mut() {
        project(x, &settings.clamps);
    }
    let mut states: Vec<Adam<E::Number>> = init.iter().map(|_| Adam::new(a, k)).collect();
    let mut results: Vec<RestartResult> = p
        .iter()
        .map(|x| RestartResult {
            params: x.clone(),
            last_step_loss: f64::NAN,
            final_loss: None,
            failure: None,
        })
        .collect();
    let mut evaluations = 0;
    // One restart's parameters and gradient in the run's precision, for its Adam step.
    let (mut pr, mut gr) = (Vec::with_capacity(k), Vec::with_capacity(k));
    let from = <E::Number as Real>::from_f64;
    for step in 0..settings.steps {
        evaluations += 1;
        let per = session.evaluate(problem, &p, settings.limits, settings.lane_block, true);
        for (r, res) in per.into_iter().enumerate() {
            if results[r].failure.is_some() {
                continue;
            }
            match res {
                Ok((loss, g)) => {
                    results[r].last_step_loss = loss;
                    pr.clear();
                    pr.extend(p[r].iter().map(|&x| from(x)));
                    gr.clear();
                    gr.extend(g.iter().map(|&x| from(x)));
                    states[r].step(&mut pr, &gr);
                    for (x, y) in p[r].iter_mut().zip(&pr) {
                        *x = y.to_f64();
                    }
                    project(&mut p[r], &settings.clamps);
                }
                Err(e) => results[r].failure = Some(format!("step {step}: {e}")),
            }
        }
        if results.iter().all(|r| r.failure.is_some()) {
            break;
        }
    }
    finish(
        session,
        problem,
        p,
        results,
        settings,
        settings.steps,
        (evaluations, evaluations * init.len() * problem.rows()),
    )
}

fn fit_lbfgs<E: Evaluator>(
    session: &mut E,
    problem: &Problem,
    init: &[Vec<f64>],
    settings: &Settings,
    l: LbfgsSettings,
) -> FitResult {
    // The restarts are independent: each is fitted whole on one session.
    let fits = session.each(init.len(), &|r, s: &mut Session<E::Number>| {
        let mut evaluations = 0;
        let mut eval = |x: &[f64]| {
            evaluations += 1;
            evaluate(
                s,
                problem,
                &[x.to_vec()],
                settings.limits,
                settings.lane_block,
                true,
            )
            .remove(0)
        };
        let (res, taken) = lbfgs_one(&mut eval, &init[r], settings, l);
        (res, taken, evaluations)
    });
    let taken = fits.iter().map(|f| f.1).max().unwrap_or(0);
    let evaluations = fits.iter().map(|f| f.2).sum();
    let results: Vec<RestartResult> = fits.into_iter().map(|f| f.0).collect();
    let finals = results.iter().map(|r| r.params.clone()).collect();
    finish(
        session,
        problem,
        finals,
        results,
        settings,
        taken,
        (evaluations, evaluations * problem.rows()),
    )
}

/// One restart fitted by L-BFGS from `start`; also the steps it took.
fn lbfgs_one(
    eval: &mut dyn FnMut(&[f64]) -> lbfgs::Evaluation,
    start: &[f64],
    settings: &Settings,
    l: LbfgsSettings,
) -> (RestartResult, usize) {
    let mut x = start.to_vec();
    project(&mut x, &settings.clamps);
    let mut taken = 0;
    let mut res = RestartResult {
        params: x.clone(),
        last_step_loss: f64::NAN,
        final_loss: None,
        failure: None,
    };
    match eval(&x) {
        Ok((mut f, mut g)) => {
            let mut opt = Lbfgs::new(l);
            res.last_step_loss = f;
            for step in 0..settings.steps {
                match opt.step(&x, f, &g, &settings.clamps, &mut *eval) {
                    Ok((Some((x2, f2, g2)), _)) => {
                        (x, f, g) = (x2, f2, g2);
                        taken = step + 1;
                    }
                    Ok((None, _)) => break,
                    Err(e) => {
                        res.failure = Some(format!("step {step}: {e}"));
                        break;
                    }
                }
                res.last_step_loss = f;
            }
        }
        Err(e) => res.failure = Some(format!("step 0: {e}")),
    }
    res.params = x;
    (res, taken)
}

fn finish(
    session: &mut impl Evaluator,
    problem: &Problem,
    p: Vec<Vec<f64>>,
    mut results: Vec<RestartResult>,
    settings: &Settings,
    steps: usize,
    (mut evaluations, mut lanes): (usize, usize),
) -> FitResult {
    if settings.final_loss {
        evaluations += 1;
        lanes += p.len() * problem.rows();
        let per = session.evaluate(problem, &p, settings.limits, settings.lane_block, false);
        for (r, res) in per.into_iter().enumerate() {
            if results[r].failure.is_none() {
                match res {
                    Ok((loss, _)) => results[r].final_loss = Some(loss),
                    Err(e) => results[r].failure = Some(format!("final evaluation: {e}")),
                }
            }
        }
    }
    for (r, x) in p.into_iter().enumerate() {
        results[r].params = x;
    }
    let best = (0..results.len())
        .filter(|&r| results[r].failure.is_none())
        .min_by(|&a, &b| {
            let la = results[a].final_loss.unwrap_or(results[a].last_step_loss);
            let lb = results[b].final_loss.unwrap_or(results[b].last_step_loss);
            la.total_cmp(&lb)
        });
    FitResult {
        restarts: results,
        best,
        steps,
        evaluations,
        lanes,
    }
}

/// R^2 of predictions against targets: `1 - MSE / Var(target)` (population variance).
pub fn r_squared(mse: f64, target: &[f64]) -> f64 {
    let n = target.len() as f64;
    let mean = target.iter().sum::<f64>() / n;
    let var = target.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / n;
    1.0 - mse / var
}
