//! Fitting a system's constants and starting states through the integrator by multiple
//! shooting and Levenberg-Marquardt.
//!
//! Each trajectory is cut into segments of a few observations. Segment `s` starts at its own
//! fitted state `Z[s]`; the lanes of one walk are, for every segment, one lane per
//! observation in it and per state (integrated from `Z[s]` to that observation, returning
//! that state's residual) and, between a segment and the next, one continuity lane per state
//! (the segment integrated to its end, against the next one's start, weighted). Each lane
//! reads its segment's start and the next one's as inputs of its own, so the runtime's reverse
//! tape gives, through every Runge-Kutta step, each lane's exact gradient with respect to the
//! constants and to the two starts it sees: the rows of the (sparse) Jacobian. The continuity weight grows over
//! the phases of a fit, so that its end is one continuous trajectory from each trajectory's
//! fitted initial state: the model that is then scored.

use super::data::Trajectory;
use super::grid::{push_padded, Grid};
use super::normal::Normal;
use super::program::{integrate, names, Output, System};
use crate::calibrate::lm::solve;
use runtime_cpu::{Binding, Bindings, GradSpec, Limits, Program, RunOptions, Session, Shape};

/// How a system is fitted.
#[derive(Clone, Debug)]
pub struct FitOptions {
    /// Observations per segment (at least 2; a trajectory's last segment may be shorter).
    pub segment: usize,
    /// The largest Runge-Kutta step.
    pub max_step: f64,
    /// Levenberg-Marquardt iterations per phase.
    pub iterations: usize,
    /// The continuity weight of each phase, in order.
    pub weights: Vec<f64>,
    /// Fit each trajectory's initial state (else it stays the observed one).
    pub fit_initial: bool,
    /// The limits of one walk.
    pub limits: Limits,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            segment: 8,
            max_step: f64::INFINITY,
            iterations: 30,
            weights: vec![10.0, 100.0],
            fit_initial: true,
            limits: Limits::default(),
        }
    }
}

/// What a lane reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct LaneInfo {
    /// Its segment.
    seg: usize,
    /// The segment it meets at its end (a continuity lane).
    next: Option<usize>,
}

/// A multiple-shooting problem: the program, the lanes' data and targets.
pub struct Shooting {
    program: Program,
    /// The per-lane data, the weights at 1 (`%w` is bound per phase).
    data: Bindings,
    lanes: Vec<LaneInfo>,
    targets: Vec<f64>,
    /// Whether a lane is a continuity lane (its weight is the phase's).
    continuity: Vec<bool>,
    /// Segments in all.
    segments: usize,
    /// Each trajectory's first segment.
    firsts: Vec<usize>,
    states: usize,
    params: Vec<String>,
    /// The observed state at each segment's start.
    observed_starts: Vec<Vec<f64>>,
    /// Each segment's trajectory and first observation.
    seg_at: Vec<(usize, usize)>,
}

/// A system's fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// The fitted constants.
    pub params: Vec<f64>,
    /// Each trajectory's fitted initial state.
    pub initial: Vec<Vec<f64>>,
    /// The mean squared residual of the last phase (continuity lanes included).
    pub shooting_loss: f64,
    /// Walks made.
    pub walks: usize,
}

impl Shooting {
    /// The problem of `sys` over `trajs`.
    pub fn new(sys: &System, trajs: &[Trajectory], opts: &FitOptions) -> Result<Shooting, String> {
        let program = Program::parse(&integrate(sys, Output::Shooting))
            .map_err(|e| format!("the integration program: {e}"))?;
        let d = sys.states.len();
        let seg_len = opts.segment.max(2);
        // Segments: (trajectory, first observation, last observation), the last shared with
        // the next segment's first.
        let mut segs: Vec<(usize, usize, usize)> = Vec::new();
        let mut firsts = Vec::new();
        for (r, tr) in trajs.iter().enumerate() {
            firsts.push(segs.len());
            let n = tr.len();
            let mut a = 0;
            while a + 1 < n {
                let mut b = (a + seg_len - 1).min(n - 1);
                // A last segment of one gap joins the one before.
                if n - 1 - b == 1 {
                    b = n - 1;
                }
                segs.push((r, a, b));
                a = b;
            }
        }
        let grids: Vec<Grid> = trajs
            .iter()
            .map(|t| Grid::of(&t.t, opts.max_step))
            .collect();
        let inputs: Vec<Vec<(Vec<f64>, Vec<f64>)>> =
            trajs.iter().zip(&grids).map(|(t, g)| g.inputs(t)).collect();
        let width = segs
            .iter()
            .map(|&(r, a, b)| grids[r].at[b] - grids[r].at[a])
            .max()
            .unwrap_or(1)
            .max(1);
        let nseg = segs.len();
        // One record per lane: (info, target, steps from the segment's start, observation).
        let mut recs: Vec<(LaneInfo, f64, usize, usize, usize)> = Vec::new();
        for (s, &(r, a, b)) in segs.iter().enumerate() {
            let last = s + 1 == nseg || segs[s + 1].0 != r;
            // Observations a..b (b only on a trajectory's last segment), then continuity.
            let end = if last { b } else { b - 1 };
            let n = |k: usize| grids[r].at[k] - grids[r].at[a];
            for k in a..=end {
                for i in 0..d {
                    recs.push((
                        LaneInfo { seg: s, next: None },
                        trajs[r].x[i][k],
                        n(k),
                        k,
                        i,
                    ));
                }
            }
            if !last {
                for i in 0..d {
                    let info = LaneInfo {
                        seg: s,
                        next: Some(s + 1),
                    };
                    recs.push((info, 0.0, n(b), b, i));
                }
            }
        }
        // Lanes of equal step counts side by side: a block of lanes walks as many steps as
        // its longest lane takes.
        recs.sort_by_key(|rec| rec.2);
        let mut lanes = Vec::new();
        let mut targets = Vec::new();
        let mut continuity = Vec::new();
        let (mut hs, mut count, mut t0) = (vec![], vec![], vec![]);
        let mut e: Vec<Vec<f64>> = vec![Vec::new(); d];
        let mut ua: Vec<Vec<f64>> = vec![Vec::new(); sys.inputs.len()];
        let mut us: Vec<Vec<f64>> = vec![Vec::new(); sys.inputs.len()];
        for &(info, target, _, k, i) in &recs {
            let (r, a, _) = segs[info.seg];
            let g = &grids[r];
            lanes.push(info);
            targets.push(target);
            continuity.push(info.next.is_some());
            let (from, to) = (g.at[a], g.at[k]);
            push_padded(&mut hs, &g.steps, from, to, width);
            count.push((to - from) as f64);
            t0.push(trajs[r].t[a]);
            for (m, pick) in e.iter_mut().enumerate() {
                pick.push(if m == i { 1.0 } else { 0.0 });
            }
            for (j, (at, slope)) in inputs[r].iter().enumerate() {
                push_padded(&mut ua[j], at, from, to, width);
                push_padded(&mut us[j], slope, from, to, width);
            }
        }
        let per = |name: &str, shape: Shape, v: Vec<f64>, b: Bindings| {
            b.lane_tensors(name, shape, v).map_err(|e| e.to_string())
        };
        let mut data = Bindings::new();
        data = per(names::STEPS, Shape::Vector(width as u32), hs, data)?;
        data = per(names::COUNT, Shape::Scalar, count, data)?;
        data = per(names::START_TIME, Shape::Scalar, t0, data)?;
        for (i, pick) in e.into_iter().enumerate() {
            data = per(&names::pick(i), Shape::Scalar, pick, data)?;
        }
        for j in 0..sys.inputs.len() {
            let a = std::mem::take(&mut ua[j]);
            let s = std::mem::take(&mut us[j]);
            data = per(&names::input_at(j), Shape::Vector(width as u32), a, data)?;
            data = per(&names::input_slope(j), Shape::Vector(width as u32), s, data)?;
        }
        let observed_starts = segs.iter().map(|&(r, a, _)| trajs[r].state(a)).collect();
        let seg_at = segs.iter().map(|&(r, a, _)| (r, a)).collect();
        Ok(Shooting {
            seg_at,
            program,
            data,
            lanes,
            targets,
            continuity,
            segments: nseg,
            firsts,
            states: d,
            params: sys.params.clone(),
            observed_starts,
        })
    }

    /// Each segment's start taken from smoothed states (`smoothed[r].x[i][k]`).
    pub fn starts_from(&self, smoothed: &[super::smooth::Smoothed]) -> Vec<Vec<f64>> {
        self.seg_at
            .iter()
            .map(|&(r, a)| smoothed[r].x.iter().map(|c| c[a]).collect())
            .collect()
    }

    /// Residuals and their Jacobian's rows (as lists of parameter index and value) at
    /// `theta` and the segments' starts `z` (`z[s][i]`), continuity lanes weighted by `w`;
    /// parameters are ordered: constants, then state 0 of every segment, state 1, ...
    #[allow(clippy::type_complexity)]
    fn evaluate(
        &self,
        session: &mut Session<f64>,
        theta: &[f64],
        z: &[Vec<f64>],
        w: f64,
        opts: &FitOptions,
    ) -> Result<(Vec<f64>, Vec<Vec<(usize, f64)>>), String> {
        let mut b = self.data.clone();
        let weights: Vec<f64> = self
            .continuity
            .iter()
            .map(|&c| if c { w } else { 1.0 })
            .collect();
        b = b
            .set(
                names::WEIGHT,
                Binding::Lanes {
                    shape: Shape::Scalar,
                    data: weights.clone(),
                },
            )
            .map_err(|e| e.to_string())?;
        for (name, &v) in self.params.iter().zip(theta) {
            b = b.scalar(name, v);
        }
        // Each lane starts at its segment's start and meets the next segment's (or nothing).
        let mut wrt = self.params.clone();
        // `i` picks the state within each segment's start (`z[segment][i]`).
        #[allow(clippy::needless_range_loop)]
        for i in 0..self.states {
            let per_lane = |f: &dyn Fn(&LaneInfo) -> f64| Binding::Lanes {
                shape: Shape::Scalar,
                data: self.lanes.iter().map(f).collect(),
            };
            let start = per_lane(&|l| z[l.seg][i]);
            let next = per_lane(&|l| l.next.map_or(0.0, |n| z[n][i]));
            b = b.set(&names::start(i), start).map_err(|e| e.to_string())?;
            b = b.set(&names::next(i), next).map_err(|e| e.to_string())?;
            wrt.push(names::start(i));
            wrt.push(names::next(i));
        }
        let opts_run = RunOptions {
            grad: GradSpec::Some(wrt),
            limits: opts.limits,
            ..Default::default()
        };
        let out = session
            .run(&self.program, &b, &opts_run)
            .map_err(|e| e.to_string())?;
        let k = self.params.len();
        let nseg = self.segments;
        let mut res = Vec::with_capacity(self.lanes.len());
        let mut rows = Vec::with_capacity(self.lanes.len());
        for (l, info) in self.lanes.iter().enumerate() {
            let v = match &out.values[l] {
                Ok(v) => v.as_number().ok_or("a lane's value is not a number")?,
                Err(e) => return Err(e.to_string()),
            };
            let target = self.targets[l] * if self.continuity[l] { w } else { 1.0 };
            let r = v - target;
            if !r.is_finite() {
                return Err("the integrated state is not finite".into());
            }
            res.push(r);
            let mut row = Vec::with_capacity(k + 2 * self.states);
            for (j, g) in out.grads.iter().take(k).enumerate() {
                row.push((j, g.per_lane[l]));
            }
            for i in 0..self.states {
                let (start, next) = (&out.grads[k + 2 * i], &out.grads[k + 2 * i + 1]);
                row.push((k + i * nseg + info.seg, start.per_lane[l]));
                if let Some(n) = info.next {
                    row.push((k + i * nseg + n, next.per_lane[l]));
                }
            }
            if row.iter().any(|(_, x)| !x.is_finite()) {
                return Err("the gradient of the integrated state is not finite".into());
            }
            rows.push(row);
        }
        Ok((res, rows))
    }

    /// Fits the constants from `theta` and the segments' starts from `z` (the observed
    /// starts when `None`).
    pub fn fit(
        &self,
        session: &mut Session<f64>,
        theta: &[f64],
        z: Option<Vec<Vec<f64>>>,
        opts: &FitOptions,
    ) -> Result<Fit, String> {
        let k = self.params.len();
        let d = self.states;
        let nseg = self.segments;
        let mut z = z.unwrap_or_else(|| self.observed_starts.clone());
        let mut x: Vec<f64> = theta.to_vec();
        for i in 0..d {
            x.extend(z.iter().map(|s| s[i]));
        }
        // The parameters LM moves: all but the trajectories' initial states when those stay.
        let free: Vec<usize> = (0..x.len())
            .filter(|&p| opts.fit_initial || p < k || !self.firsts.contains(&((p - k) % nseg)))
            .collect();
        let unpack = |x: &[f64], z: &mut Vec<Vec<f64>>| {
            for (s, zs) in z.iter_mut().enumerate() {
                for (i, v) in zs.iter_mut().enumerate() {
                    *v = x[k + i * nseg + s];
                }
            }
        };
        // The normal equations by their band of segment starts and border of constants (a
        // dense solve where the band would not gain).
        let index: Vec<Option<usize>> = {
            let mut v = vec![None; x.len()];
            for (a, &p) in free.iter().enumerate() {
                v[p] = Some(a);
            }
            v
        };
        let key: Vec<Option<(usize, usize)>> = free
            .iter()
            .map(|&p| (p >= k).then(|| ((p - k) % nseg, (p - k) / nseg)))
            .collect();
        let mut banded: Option<Option<Normal>> = None;
        let mut walks = 0;
        let mut loss = f64::NAN;
        for (phase, &w) in opts.weights.iter().enumerate() {
            // An earlier phase only starts the next: it stops at a coarser improvement.
            let tolerance = if phase + 1 < opts.weights.len() {
                1e-6
            } else {
                1e-10
            };
            unpack(&x, &mut z);
            walks += 1;
            let (mut r, mut rows) = self
                .evaluate(session, &x[..k], &z, w, opts)
                .map_err(|e| format!("at the start: {e}"))?;
            let mut at = sum_sq(&r);
            let mut lambda = 1e-3;
            for _ in 0..opts.iterations {
                let local: Vec<Vec<(usize, f64)>> = rows
                    .iter()
                    .map(|row| {
                        row.iter()
                            .filter_map(|&(p, v)| index[p].map(|a| (a, v)))
                            .collect()
                    })
                    .collect();
                let structure = banded.get_or_insert_with(|| {
                    let touched: Vec<Vec<usize>> = local
                        .iter()
                        .map(|row| row.iter().map(|e| e.0).collect())
                        .collect();
                    Normal::layout(&key, &touched)
                });
                let dense = match structure {
                    Some(nm) => {
                        nm.accumulate(&r, &local);
                        None
                    }
                    None => Some(normal(&r, &rows, &free, x.len())),
                };
                let mut step = None;
                while step.is_none() && lambda < 1e16 {
                    step = match (&dense, &*structure) {
                        (Some((jtj, jtr)), _) => damped(jtj, jtr, lambda),
                        (None, Some(nm)) => nm.damped(lambda),
                        (None, None) => None,
                    };
                    if step.is_none() {
                        lambda *= 10.0;
                    }
                }
                let Some(step) = step else { break };
                let mut trial = x.clone();
                for (&p, dx) in free.iter().zip(&step) {
                    trial[p] += dx;
                }
                if trial == x {
                    break;
                }
                let mut zt = z.clone();
                unpack(&trial, &mut zt);
                walks += 1;
                match self.evaluate(session, &trial[..k], &zt, w, opts) {
                    Ok((r2, rows2)) if sum_sq(&r2) < at => {
                        let now = sum_sq(&r2);
                        let done = at - now <= tolerance * at || now == 0.0;
                        (x, z, r, rows, at) = (trial, zt, r2, rows2, now);
                        lambda = (lambda / 3.0).max(1e-12);
                        if done {
                            break;
                        }
                    }
                    _ => {
                        lambda *= 4.0;
                        if lambda > 1e16 {
                            break;
                        }
                    }
                }
            }
            loss = at / r.len().max(1) as f64;
        }
        unpack(&x, &mut z);
        Ok(Fit {
            params: x[..k].to_vec(),
            initial: self.firsts.iter().map(|&s| z[s].clone()).collect(),
            shooting_loss: loss,
            walks,
        })
    }
}

fn sum_sq(r: &[f64]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

/// `J^T J` and `J^T r` over the free parameters (`free[a]` is column `a`).
fn normal(r: &[f64], rows: &[Vec<(usize, f64)>], free: &[usize], n: usize) -> (Vec<f64>, Vec<f64>) {
    let m = free.len();
    let mut place = vec![usize::MAX; n];
    for (a, &p) in free.iter().enumerate() {
        place[p] = a;
    }
    let mut jtj = vec![0.0; m * m];
    let mut jtr = vec![0.0; m];
    let mut row: Vec<(usize, f64)> = Vec::new();
    for (res, full) in r.iter().zip(rows) {
        row.clear();
        row.extend(
            full.iter()
                .filter(|(p, _)| place[*p] != usize::MAX)
                .map(|&(p, v)| (place[p], v)),
        );
        for &(a, va) in &row {
            jtr[a] += va * res;
            for &(b, vb) in &row {
                jtj[a * m + b] += va * vb;
            }
        }
    }
    (jtj, jtr)
}

/// The damped step `-(J^T J + lambda D)^-1 J^T r`.
fn damped(jtj: &[f64], jtr: &[f64], lambda: f64) -> Option<Vec<f64>> {
    let m = jtr.len();
    let mut a = jtj.to_vec();
    let top = (0..m).map(|i| a[i * m + i]).fold(0.0f64, f64::max);
    let floor = (top * 1e-12).max(1e-300);
    for i in 0..m {
        a[i * m + i] += lambda * a[i * m + i].max(floor);
    }
    let mut b: Vec<f64> = jtr.iter().map(|g| -g).collect();
    solve(&mut a, &mut b).then_some(b)
}

#[cfg(test)]
mod tests {
    use super::super::simulate::{score, simulate};
    use super::*;

    /// The damped oscillator `x' = y, y' = -a x - b y` from two initial states.
    pub(crate) fn oscillator() -> (System, Vec<Trajectory>) {
        let sys = System {
            states: vec!["x".into(), "y".into()],
            inputs: vec![],
            time: "t".into(),
            rhs: vec!["y".into(), "(- (- (* a x)) (* b y))".into()],
            params: vec!["a".into(), "b".into()],
        };
        let t: Vec<f64> = (0..200).map(|k| f64::from(k) * 0.05).collect();
        let blank = |x0: f64| Trajectory {
            name: format!("{x0}"),
            t: t.clone(),
            x: vec![vec![0.0; t.len()]; 2],
            u: vec![],
        };
        let mut trajs = vec![blank(1.0), blank(-2.0)];
        let paths = simulate(
            &mut Session::new(),
            &sys,
            &[4.5, 0.43],
            &trajs,
            &[vec![1.0, 0.0], vec![-2.0, 1.0]],
            0.01,
            Limits::default(),
        )
        .unwrap();
        for (tr, p) in trajs.iter_mut().zip(paths) {
            tr.x = p;
        }
        (sys, trajs)
    }

    #[test]
    fn constants_half_off_are_recovered_through_the_integrator() {
        let (sys, trajs) = oscillator();
        let opts = FitOptions {
            max_step: 0.05,
            segment: std::env::var("SEG")
                .map(|v| v.parse().unwrap())
                .unwrap_or(16),
            weights: std::env::var("WTS")
                .map(|v| v.split(',').map(|x| x.parse().unwrap()).collect())
                .unwrap_or(vec![1.0, 10.0, 100.0]),
            ..Default::default()
        };
        let shooting = Shooting::new(&sys, &trajs, &opts).unwrap();
        let mut s = Session::new();
        let t0 = std::time::Instant::now();
        let reps: usize = std::env::var("REPS")
            .map(|v| v.parse().unwrap())
            .unwrap_or(1);
        for _ in 1..reps {
            shooting.fit(&mut s, &[2.25, 0.645], None, &opts).unwrap();
        }
        let fit = shooting.fit(&mut s, &[2.25, 0.645], None, &opts).unwrap();
        eprintln!(
            "TIMING fit {:?} walks {} lanes {}",
            t0.elapsed(),
            fit.walks,
            shooting.lanes.len()
        );
        assert!((fit.params[0] - 4.5).abs() < 1e-5, "{fit:?}");
        assert!((fit.params[1] - 0.43).abs() < 1e-5, "{fit:?}");
        let paths = simulate(
            &mut s,
            &sys,
            &fit.params,
            &trajs,
            &fit.initial,
            0.01,
            Limits::default(),
        )
        .unwrap();
        let sc = score(&paths, &trajs);
        assert!(sc.r2 > 1.0 - 1e-9, "{sc:?}");
    }
}
