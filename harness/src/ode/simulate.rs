//! A fitted system integrated forward from given initial states across every observation of
//! a set of trajectories, and its score there: the trajectories as lanes of one walk per gap
//! between observations, each walk continuing from where the last ended.

use super::data::Trajectory;
use super::grid::{push_padded, Grid};
use super::program::{integrate, names, Output, System};
use runtime_cpu::{Bindings, LaneValue, Limits, Program, RunOptions, Session, Shape};

/// The integrated states `[trajectory][state][observation]`.
pub type Paths = Vec<Vec<Vec<f64>>>;

/// Integrates `sys` with constants `params` over each of `trajs` from `initial[r]` (its
/// state at its first time), returning the state at every observed time.
pub fn simulate(
    session: &mut Session<f64>,
    sys: &System,
    params: &[f64],
    trajs: &[Trajectory],
    initial: &[Vec<f64>],
    max_step: f64,
    limits: Limits,
) -> Result<Paths, String> {
    let program = Program::parse(&integrate(sys, Output::States))
        .map_err(|e| format!("the integration program: {e}"))?;
    let d = sys.states.len();
    let grids: Vec<Grid> = trajs.iter().map(|t| Grid::of(&t.t, max_step)).collect();
    let inputs: Vec<_> = trajs.iter().zip(&grids).map(|(t, g)| g.inputs(t)).collect();
    let mut paths: Paths = trajs
        .iter()
        .zip(initial)
        .map(|(tr, x0)| {
            (0..d)
                .map(|i| {
                    let mut v = vec![f64::NAN; tr.len()];
                    v[0] = x0[i];
                    v
                })
                .collect()
        })
        .collect();
    let longest = trajs.iter().map(Trajectory::len).max().unwrap_or(0);
    let mut fixed = Bindings::new();
    for (name, &v) in sys.params.iter().zip(params) {
        fixed = fixed.scalar(name, v);
    }
    for k in 0..longest.saturating_sub(1) {
        // The trajectories with a gap `k -> k + 1`.
        let live: Vec<usize> = (0..trajs.len())
            .filter(|&r| trajs[r].len() > k + 1)
            .collect();
        let width = live
            .iter()
            .map(|&r| grids[r].at[k + 1] - grids[r].at[k])
            .max()
            .unwrap_or(1);
        let (mut hs, mut n, mut t0) = (vec![], vec![], vec![]);
        let mut starts = vec![Vec::new(); d];
        let mut ua = vec![Vec::new(); sys.inputs.len()];
        let mut us = vec![Vec::new(); sys.inputs.len()];
        for &r in &live {
            let g = &grids[r];
            let (a, b) = (g.at[k], g.at[k + 1]);
            push_padded(&mut hs, &g.steps, a, b, width);
            n.push((b - a) as f64);
            t0.push(trajs[r].t[k]);
            for (i, s) in starts.iter_mut().enumerate() {
                s.push(paths[r][i][k]);
            }
            for (j, (at, slope)) in inputs[r].iter().enumerate() {
                push_padded(&mut ua[j], at, a, b, width);
                push_padded(&mut us[j], slope, a, b, width);
            }
        }
        let per = |b: Bindings, name: &str, shape: Shape, v: Vec<f64>| {
            b.lane_tensors(name, shape, v).map_err(|e| e.to_string())
        };
        let mut b = fixed.clone();
        b = per(b, names::STEPS, Shape::Vector(width as u32), hs)?;
        b = per(b, names::COUNT, Shape::Scalar, n)?;
        b = per(b, names::START_TIME, Shape::Scalar, t0)?;
        for (i, s) in starts.into_iter().enumerate() {
            b = per(b, &names::start(i), Shape::Scalar, s)?;
        }
        for (j, (a, s)) in ua.into_iter().zip(us).enumerate() {
            b = per(b, &names::input_at(j), Shape::Vector(width as u32), a)?;
            b = per(b, &names::input_slope(j), Shape::Vector(width as u32), s)?;
        }
        let opts = RunOptions {
            limits,
            ..Default::default()
        };
        let out = session
            .run(&program, &b, &opts)
            .map_err(|e| e.to_string())?;
        for (l, &r) in live.iter().enumerate() {
            match &out.values[l] {
                Ok(LaneValue::Tensor(_, v)) => {
                    for i in 0..d {
                        paths[r][i][k + 1] = v[i];
                    }
                }
                Ok(LaneValue::Number(x)) if d == 1 => paths[r][0][k + 1] = *x,
                Ok(other) => return Err(format!("a state is not a number: {}", other.to_scheme())),
                Err(e) => {
                    return Err(format!(
                        "trajectory `{}` at t = {}: {e}",
                        trajs[r].name, trajs[r].t[k]
                    ))
                }
            }
        }
    }
    Ok(paths)
}

/// R^2 and NMSE of integrated paths against the observed trajectories, pooled over every
/// trajectory and state (scikit-learn's `multioutput="variance_weighted"`: the squared
/// residuals over the squared deviations from each state's mean, summed over the states);
/// and the mean squared residual.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Score {
    /// `1 - SSR / SST`.
    pub r2: f64,
    /// `1 - R^2`.
    pub nmse: f64,
    /// Mean squared residual over every observation and state.
    pub mse: f64,
}

/// Each state's squared residuals of `paths` against `trajs` and squared deviations of `trajs`
/// from the state's mean over every trajectory: `(ssr, sst)` per state, and the observations
/// per state.
pub fn sums(paths: &Paths, trajs: &[Trajectory]) -> (Vec<(f64, f64)>, usize) {
    let d = trajs.first().map_or(0, |t| t.x.len());
    let count: usize = trajs.iter().map(Trajectory::len).sum();
    let per_state = (0..d)
        .map(|i| {
            let all = trajs.iter().flat_map(|t| t.x[i].iter());
            let mean = all.sum::<f64>() / count.max(1) as f64;
            let (mut ssr, mut sst) = (0.0, 0.0);
            for (p, tr) in paths.iter().zip(trajs) {
                for (a, b) in p[i].iter().zip(&tr.x[i]) {
                    ssr += (a - b) * (a - b);
                    sst += (b - mean) * (b - mean);
                }
            }
            (ssr, sst)
        })
        .collect();
    (per_state, count)
}

/// The score of `paths` against `trajs`; a non-finite path scores R^2 = -inf.
pub fn score(paths: &Paths, trajs: &[Trajectory]) -> Score {
    let (per_state, count) = sums(paths, trajs);
    let ssr: f64 = per_state.iter().map(|s| s.0).sum();
    let sst: f64 = per_state.iter().map(|s| s.1).sum();
    let count = count * per_state.len();
    if !ssr.is_finite() {
        return Score {
            r2: f64::NEG_INFINITY,
            nmse: f64::INFINITY,
            mse: f64::INFINITY,
        };
    }
    let nmse = if sst > 0.0 { ssr / sst } else { f64::INFINITY };
    Score {
        r2: 1.0 - nmse,
        nmse,
        mse: ssr / count.max(1) as f64,
    }
}
