//! Levenberg-Marquardt for least squares. The per-lane gradients of one batched walk are the
//! rows of the Jacobian of the residuals `f_i - y_i`, so each iteration is one walk: every
//! restart's trial point at once (restarts as lane groups), each restart with its own damping.
//! A trial that lowers the loss is taken and the damping relaxed; one that does not (or fails:
//! a NaN, a step budget) is refused and the damping raised, from the same Jacobian. A restart
//! ends when its loss stops falling or its damping runs away; it fails only when its start
//! cannot be evaluated.

use super::workers::Evaluator;
use super::{project, FitResult, Lanes, Loss, Problem, RestartResult, Settings};

/// Levenberg-Marquardt settings.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LmSettings {
    /// The damping of the first step (relative to the diagonal of `J^T J`).
    pub initial_damping: f64,
    /// A restart has converged when a step lowers its loss by less than this fraction.
    pub tolerance: f64,
}

impl Default for LmSettings {
    fn default() -> Self {
        LmSettings {
            initial_damping: 1e-3,
            tolerance: 1e-10,
        }
    }
}

/// One restart's least-squares state at its parameters: the mean squared residual, and the
/// normal equations `J^T J` (row-major, `k * k`) and `J^T r`.
#[derive(Clone, Debug, PartialEq)]
pub struct Normal {
    /// Mean of the squared residuals.
    pub loss: f64,
    /// `J^T J`.
    pub jtj: Vec<f64>,
    /// `J^T r`.
    pub jtr: Vec<f64>,
}

/// The normal equations of each restart, or why its lanes could not give them.
pub type PerRestartNormal = Vec<Result<Normal, String>>;

/// A restart's sums over `rows` in row order: the squared residuals, the lower triangle of
/// `J^T J` (row-major, `k * k`) and `J^T r`; `y(i)` is row `i`'s value, `grads[j][i]` its
/// gradient in parameter `j` (zero for a parameter past `grads`).
type Sums = (f64, Vec<f64>, Vec<f64>);

/// [`sums_any`] for `K` parameters known when compiled: the row and the sums in registers.
fn sums<const K: usize>(
    grads: &[&[f64]],
    rows: &[f64],
    y: impl Fn(usize) -> Result<f64, String>,
    w: impl Fn(usize) -> f64,
) -> Result<Sums, String> {
    // Each column cut to the rows, so that reading it needs no bounds check.
    let g: [&[f64]; K] = std::array::from_fn(|j| &grads[j][..rows.len()]);
    let (mut jtj, mut jtr, mut row) = ([[0.0f64; K]; K], [0.0f64; K], [0.0f64; K]);
    let loss = add_rows(&g, rows, y, w, jtj.as_flattened_mut(), &mut jtr, &mut row)?;
    Ok((loss, jtj.as_flattened().to_vec(), jtr.to_vec()))
}

fn sums_any(
    k: usize,
    grads: &[&[f64]],
    rows: &[f64],
    y: impl Fn(usize) -> Result<f64, String>,
    w: impl Fn(usize) -> f64,
) -> Result<Sums, String> {
    let (mut jtj, mut jtr, mut row) = (vec![0.0; k * k], vec![0.0; k], vec![0.0; k]);
    let loss = add_rows(grads, rows, y, w, &mut jtj, &mut jtr, &mut row)?;
    Ok((loss, jtj, jtr))
}

/// Adds every row's terms, weighted by `w(i)`, to `jtj` (`k * k`, its lower triangle) and
/// `jtr` (`k`, the length of `row`), in row order; returns the weighted sum of the squared
/// residuals. (A weight of exactly 1 leaves every product as it is: the unweighted sums.)
#[inline(always)]
fn add_rows(
    grads: &[&[f64]],
    rows: &[f64],
    y: impl Fn(usize) -> Result<f64, String>,
    w: impl Fn(usize) -> f64,
    jtj: &mut [f64],
    jtr: &mut [f64],
    row: &mut [f64],
) -> Result<f64, String> {
    let k = row.len();
    let mut loss = 0.0;
    for (i, &t) in rows.iter().enumerate() {
        let res = y(i)? - t;
        let wi = w(i);
        let wres = wi * res;
        loss += wres * res;
        for (x, g) in row.iter_mut().zip(grads) {
            *x = g[i];
        }
        for a in 0..k {
            jtr[a] += row[a] * wres;
            let wa = wi * row[a];
            for b in 0..=a {
                jtj[a * k + b] += wa * row[b];
            }
        }
    }
    Ok(loss)
}

/// Each restart's normal equations from its lanes' values and gradients (lane `r * N + i` is
/// row `i` of restart `r`), summed in row order.
pub(crate) fn normals(problem: &Problem, lanes: &impl Lanes, restarts: usize) -> PerRestartNormal {
    let n = problem.rows();
    let k = problem.params.len();
    let (target, weighted) = match &problem.loss {
        Loss::Mse(t) => (t, None),
        Loss::Rows(r) if r.kind.least_squares() => (&r.target, Some(r)),
        _ => {
            return vec![
                Err("Levenberg-Marquardt needs a target (a least-squares loss)".into());
                restarts
            ]
        }
    };
    // A weighted loss is divided by the weights' sum.
    let total = weighted.map_or(n as f64, |r| r.total(n));
    (0..restarts)
        .map(|r| {
            let first = r * n;
            let rows = &target[..n.min(target.len())];
            let grads: Vec<&[f64]> = (0..lanes.grads())
                .map(|j| lanes.grad_run(j, first..first + n))
                .collect();
            let y = |i: usize| match lanes.number(first + i) {
                Some(f) => Ok(f),
                None => lanes.value(first + i),
            };
            let (loss, mut jtj, jtr) = match weighted {
                None => {
                    let w = |_: usize| 1.0;
                    match (k, grads.len() == k) {
                        (1, true) => sums::<1>(&grads, rows, y, w)?,
                        (2, true) => sums::<2>(&grads, rows, y, w)?,
                        (3, true) => sums::<3>(&grads, rows, y, w)?,
                        (4, true) => sums::<4>(&grads, rows, y, w)?,
                        (5, true) => sums::<5>(&grads, rows, y, w)?,
                        (6, true) => sums::<6>(&grads, rows, y, w)?,
                        _ => sums_any(k, &grads, rows, y, w)?,
                    }
                }
                Some(r) => sums_any(k, &grads, rows, y, |i| r.squares_weight(i))?,
            };
            for a in 0..k {
                for b in 0..a {
                    jtj[b * k + a] = jtj[a * k + b];
                }
            }
            let loss = loss / total;
            let finite = loss.is_finite()
                && jtj.iter().all(|x| x.is_finite())
                && jtr.iter().all(|x| x.is_finite());
            if finite {
                Ok(Normal { loss, jtj, jtr })
            } else {
                Err("non-finite loss or Jacobian".to_string())
            }
        })
        .collect()
}

/// Solves `a x = b` in place (`a` row-major `k * k`) by elimination with partial pivoting;
/// false when `a` is singular.
pub fn solve(a: &mut [f64], b: &mut [f64]) -> bool {
    let k = b.len();
    for c in 0..k {
        let pivot = (c..k)
            .max_by(|&i, &j| a[i * k + c].abs().total_cmp(&a[j * k + c].abs()))
            .expect("a column");
        let p = a[pivot * k + c];
        if p == 0.0 || p.is_nan() {
            return false;
        }
        if pivot != c {
            for j in 0..k {
                a.swap(pivot * k + j, c * k + j);
            }
            b.swap(pivot, c);
        }
        for i in c + 1..k {
            let f = a[i * k + c] / a[c * k + c];
            if f != 0.0 {
                for j in c..k {
                    a[i * k + j] -= f * a[c * k + j];
                }
                b[i] -= f * b[c];
            }
        }
    }
    for c in (0..k).rev() {
        let mut s = b[c];
        for j in c + 1..k {
            s -= a[c * k + j] * b[j];
        }
        b[c] = s / a[c * k + c];
    }
    b.iter().all(|x| x.is_finite())
}

/// The damped step `-(J^T J + lambda D)^-1 J^T r`, `D` the diagonal of `J^T J` (floored so
/// a parameter the residuals do not see still gets a finite step); `None` when singular.
fn step(n: &Normal, lambda: f64) -> Option<Vec<f64>> {
    let k = n.jtr.len();
    let mut a = n.jtj.clone();
    let top = (0..k).map(|i| a[i * k + i]).fold(0.0f64, f64::max);
    let floor = (top * 1e-12).max(1e-300);
    for i in 0..k {
        a[i * k + i] += lambda * a[i * k + i].max(floor);
    }
    let mut b: Vec<f64> = n.jtr.iter().map(|g| -g).collect();
    solve(&mut a, &mut b).then_some(b)
}

/// Damping beyond which a restart stops: no step it could take would be seen.
const MAX_DAMPING: f64 = 1e16;

struct Restart {
    at: Normal,
    lambda: f64,
    done: bool,
}

/// Fits by Levenberg-Marquardt: at most `settings.steps` iterations of one walk each, after
/// the walk at the starting points.
pub fn fit(
    session: &mut impl Evaluator,
    problem: &Problem,
    init: &[Vec<f64>],
    settings: &Settings,
    lm: LmSettings,
) -> FitResult {
    let mut p: Vec<Vec<f64>> = init.to_vec();
    for x in p.iter_mut() {
        project(x, &settings.clamps);
    }
    let mut results: Vec<RestartResult> = p
        .iter()
        .map(|x| RestartResult {
            params: x.clone(),
            last_step_loss: f64::NAN,
            final_loss: None,
            failure: None,
        })
        .collect();
    let first = session.normals(problem, &p, settings.limits, settings.lane_block);
    let mut evaluations = 1;
    let mut lanes = p.len() * problem.rows();
    let mut states: Vec<Option<Restart>> = first
        .into_iter()
        .zip(results.iter_mut())
        .map(|(n, res)| match n {
            Ok(at) => Some(Restart {
                at,
                lambda: lm.initial_damping,
                done: false,
            }),
            Err(e) => {
                res.failure = Some(format!("at the start: {e}"));
                None
            }
        })
        .collect();
    let mut taken = 0;
    for _ in 0..settings.steps {
        let mut active = Vec::new();
        let mut trials = Vec::new();
        for (r, st) in states.iter_mut().enumerate() {
            let Some(st) = st.as_mut().filter(|s| !s.done) else {
                continue;
            };
            let mut delta = step(&st.at, st.lambda);
            while delta.is_none() && st.lambda < MAX_DAMPING {
                st.lambda *= 10.0;
                delta = step(&st.at, st.lambda);
            }
            let Some(delta) = delta else {
                st.done = true;
                continue;
            };
            let mut q: Vec<f64> = p[r].iter().zip(&delta).map(|(x, d)| x + d).collect();
            project(&mut q, &settings.clamps);
            if q == p[r] {
                st.done = true;
                continue;
            }
            active.push(r);
            trials.push(q);
        }
        if active.is_empty() {
            break;
        }
        taken += 1;
        evaluations += 1;
        lanes += trials.len() * problem.rows();
        let per = session.normals(problem, &trials, settings.limits, settings.lane_block);
        for ((r, q), n) in active.into_iter().zip(trials).zip(per) {
            let st = states[r].as_mut().expect("active restarts have a state");
            match n {
                Ok(n) if n.loss < st.at.loss => {
                    let gain = st.at.loss - n.loss;
                    st.done = gain <= lm.tolerance * st.at.loss || n.loss == 0.0;
                    st.at = n;
                    st.lambda = (st.lambda / 3.0).max(1e-12);
                    p[r] = q;
                }
                _ => {
                    st.lambda *= 4.0;
                    st.done = st.lambda > MAX_DAMPING;
                }
            }
        }
    }
    for ((res, st), x) in results.iter_mut().zip(&states).zip(p) {
        if let Some(st) = st {
            res.last_step_loss = st.at.loss;
            res.final_loss = Some(st.at.loss);
        }
        res.params = x;
    }
    let best = (0..results.len())
        .filter(|&r| results[r].failure.is_none())
        .min_by(|&a, &b| {
            results[a]
                .last_step_loss
                .total_cmp(&results[b].last_step_loss)
        });
    FitResult {
        restarts: results,
        best,
        steps: taken,
        evaluations,
        lanes,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{fit as calibrate, Optimizer};
    use super::*;
    use runtime_cpu::{Bindings, Limits, Program, Session};

    fn problem(src: &str, params: &[&str], truth: impl Fn(f64) -> f64) -> Problem {
        let x: Vec<f64> = (0..40).map(|i| f64::from(i) * 0.1).collect();
        let y = x.iter().map(|&v| truth(v)).collect();
        Problem {
            program: Program::parse(src).unwrap(),
            fixed: Bindings::new(),
            data: vec![("x".into(), x)],
            params: params.iter().map(|s| s.to_string()).collect(),
            loss: Loss::Mse(y),
        }
    }

    fn settings(steps: usize) -> Settings {
        Settings {
            optimizer: Optimizer::Lm(LmSettings::default()),
            steps,
            clamps: vec![None; 3],
            limits: Limits::default(),
            final_loss: true,
            lane_block: 256,
        }
    }

    #[test]
    fn a_linear_model_is_solved_in_one_step() {
        let p = problem("(+ a (* b x))", &["a", "b"], |x| 3.0 - 2.0 * x);
        let r = calibrate(
            &mut Session::<f64>::new(),
            &p,
            &[vec![0.0, 0.0]],
            &settings(5),
        );
        let best = &r.restarts[r.best.unwrap()];
        assert!((best.params[0] - 3.0).abs() < 1e-12 && (best.params[1] + 2.0).abs() < 1e-12);
        assert!(best.final_loss.unwrap() < 1e-24);
    }

    #[test]
    fn a_nonlinear_model_converges_and_restarts_are_lane_groups() {
        let p = problem("(* a (exp (* b x)))", &["a", "b"], |x| {
            1.5 * (-0.7 * x).exp()
        });
        let starts = vec![vec![1.0, 0.0], vec![0.5, -2.0], vec![f64::NAN, 0.0]];
        let r = calibrate(&mut Session::<f64>::new(), &p, &starts, &settings(50));
        for k in 0..2 {
            let x = &r.restarts[k].params;
            assert!(
                (x[0] - 1.5).abs() < 1e-8 && (x[1] + 0.7).abs() < 1e-8,
                "{x:?}"
            );
        }
        assert!(r.restarts[2]
            .failure
            .as_deref()
            .unwrap()
            .contains("non-finite"));
        // Each restart alone gives the same numbers as it does among the others.
        let alone = calibrate(&mut Session::<f64>::new(), &p, &starts[1..2], &settings(50));
        assert_eq!(alone.restarts[0].params, r.restarts[1].params);
    }

    #[test]
    fn the_normal_equations_match_finite_differences() {
        let p = problem("(* a (sin (* b x)))", &["a", "b"], |x| x.cos());
        let at = |a: f64, b: f64| {
            let lanes = super::super::evaluate_all(
                &mut Session::<f64>::new(),
                &p,
                &[vec![a, b]],
                Limits::default(),
                256,
                true,
            );
            normals(&p, &lanes, 1).remove(0).unwrap()
        };
        let n = at(0.8, 1.3);
        let h = 1e-6;
        // d(loss)/da = 2/N J^T r.
        let fd = (at(0.8 + h, 1.3).loss - at(0.8 - h, 1.3).loss) / (2.0 * h);
        assert!(
            (fd - 2.0 * n.jtr[0] / 40.0).abs() < 1e-6,
            "{fd} {}",
            n.jtr[0]
        );
        let mut a = vec![2.0, 1.0, 1.0, 3.0];
        let mut b = vec![3.0, 5.0];
        assert!(solve(&mut a, &mut b));
        assert!((b[0] - 0.8).abs() < 1e-12 && (b[1] - 1.4).abs() < 1e-12);
        assert!(!solve(&mut [1.0, 2.0, 2.0, 4.0], &mut [1.0, 1.0]));
    }
}
