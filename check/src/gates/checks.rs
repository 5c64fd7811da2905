//! The comparisons of the six gates.

use super::runs::{self, Run};
use super::tol::{self, within};
use super::{error_kind, OracleLanes, Verdict};
use crate::gen::Case;
use runtime_cpu::{Program, Session};

pub(super) struct Ctx<'a> {
    pub case: &'a Case,
    pub program: &'a Program,
    pub oracle: &'a OracleLanes,
    pub base: &'a Run,
    pub verdict: &'a mut Verdict,
}

/// Compares two runs: values bit for bit, gradients (per lane and summed) bit for bit when
/// `grad_rtol` is `None`, else within it, scaled by `1 + |gradient| + |value|`.
///
/// With a tolerance, two errors need only be of the same kind: the message of an error on one
/// lane of a batch may describe the value less precisely than that of the lane alone ("a
/// number" where the values differ across lanes, "the number 1.5" alone).
fn same_runs(a: &Run, b: &Run, grad_rtol: Option<f64>, what: &str) -> Result<(), String> {
    let same = |x: f64, y: f64, scale: f64| match grad_rtol {
        None => x.to_bits() == y.to_bits(),
        Some(r) => x.to_bits() == y.to_bits() || within(x, y, r, scale),
    };
    let mut size = 1.0;
    for (l, (x, y)) in a.values.iter().zip(&b.values).enumerate() {
        let equal = match (x, y) {
            (Ok(x), Ok(y)) => x.to_bits() == y.to_bits(),
            (Err(x), Err(y)) => x == y || (grad_rtol.is_some() && error_kind(x) == error_kind(y)),
            _ => false,
        };
        if !equal {
            return Err(format!("lane {l}: value {x:?} vs {what} {y:?}"));
        }
        size += x.as_ref().map_or(0.0, |v| v.abs());
    }
    if a.grads.len() != b.grads.len() {
        return Err(format!(
            "{} gradients vs {} in {what}",
            a.grads.len(),
            b.grads.len()
        ));
    }
    for g in &a.grads {
        let h = b
            .grad(&g.name)
            .ok_or(format!("no gradient for `{}` in {what}", g.name))?;
        let n = g.width.max(1);
        for (i, (x, y)) in g.per_lane.iter().zip(&h.per_lane).enumerate() {
            let v = a.values[i / n].as_ref().map_or(0.0, |v| v.abs());
            if !same(*x, *y, 1.0 + x.abs() + v) {
                return Err(format!(
                    "lane {} d/d{}[{}]: {x:e} vs {what} {y:e}",
                    i / n,
                    g.name,
                    i % n
                ));
            }
        }
        let total = size
            + g.per_lane
                .iter()
                .filter(|x| x.is_finite())
                .map(|x| x.abs())
                .sum::<f64>();
        for (e, (x, y)) in g.sum.iter().zip(&h.sum).enumerate() {
            if !same(*x, *y, total) {
                return Err(format!("summed d/d{}[{e}]: {x:e} vs {what} {y:e}", g.name));
            }
        }
    }
    Ok(())
}

impl Ctx<'_> {
    /// The oracle's value on lane `l` (0 on a failing lane, for scales).
    fn size(&self, l: usize) -> f64 {
        self.oracle.value(l).map_or(0.0, f64::abs)
    }

    /// True for a lane the oracle fails on, or whose closest decision is nearer than
    /// `margin` (counted as skipped). With `exact_ties`, an exact tie (of exact inputs such as
    /// 0 and 1) is not skipped: both `f64` evaluations decide it by the documented
    /// conventions. In `f32` the numbers are rounded differently, so no tie is exact there.
    fn skip(&mut self, l: usize, margin: f64, exact_ties: bool) -> bool {
        match &self.oracle.lanes[l] {
            Err(_) => true,
            Ok(g) if g.rel_margin < margin && !(exact_ties && g.rel_margin == 0.0) => {
                self.verdict.lanes_skipped += 1;
                true
            }
            Ok(_) => false,
        }
    }

    pub fn g1(&mut self) -> Result<(), String> {
        for l in 0..self.case.lanes {
            match (self.oracle.value(l), &self.base.values[l]) {
                (Ok(want), Ok(got)) => {
                    if !self.skip(l, tol::TIE_MARGIN, true)
                        && !within(*got, want, tol::G1_RTOL, 1.0 + want.abs())
                    {
                        return Err(format!("lane {l}: value {got:e}, oracle {want:e}"));
                    }
                }
                (Ok(want), Err(e)) => {
                    return Err(format!(
                        "lane {l}: runtime error {e}, oracle value {want:e}"
                    ))
                }
                (Err(want), got) => {
                    let same = got
                        .as_ref()
                        .is_err_and(|e| error_kind(e) == error_kind(want));
                    if !same {
                        return Err(format!("lane {l}: runtime {got:?}, oracle error {want}"));
                    }
                }
            }
        }
        Ok(())
    }

    pub fn g2(&mut self) -> Result<(), String> {
        for g in &self.base.grads {
            if !self.oracle.inputs.contains(&g.name) {
                return Err(format!(
                    "a gradient for `{}`, which the oracle finds no input",
                    g.name
                ));
            }
        }
        let mut skip = vec![false; self.case.lanes];
        for (l, s) in skip.iter_mut().enumerate() {
            *s = self.skip(l, tol::TIE_MARGIN, true);
        }
        let near_tie = (0..self.case.lanes).any(|l| skip[l] && self.oracle.lanes[l].is_ok());
        for (k, name) in self.oracle.inputs.iter().enumerate() {
            let g = self
                .base
                .grad(name)
                .ok_or(format!("no gradient for input `{name}`"))?;
            let n = g.width;
            let mut sum = vec![0.0; n];
            let mut size = 1.0;
            for (l, &skip_lane) in skip.iter().enumerate() {
                let v = self.size(l);
                let Ok(lane) = &self.oracle.lanes[l] else {
                    if let Some(e) = (0..n).find(|&e| !g.per_lane[l * n + e].is_nan()) {
                        let got = g.per_lane[l * n + e];
                        return Err(format!(
                            "lane {l} fails, yet d/d{name}[{e}] is {got:e}, not NaN"
                        ));
                    }
                    continue;
                };
                for (e, s) in sum.iter_mut().enumerate() {
                    let want = lane.grads[k][e];
                    *s += want;
                    size += want.abs() + v;
                    let got = g.per_lane[l * n + e];
                    if !skip_lane && !within(got, want, tol::G2_RTOL, 1.0 + want.abs() + v) {
                        return Err(format!("lane {l} d/d{name}[{e}]: {got:e}, oracle {want:e}"));
                    }
                }
            }
            if g.uniform && !near_tie {
                for (e, (&got, &want)) in g.sum.iter().zip(&sum).enumerate() {
                    if !within(got, want, tol::G2_RTOL, size) {
                        return Err(format!("summed d/d{name}[{e}]: {got:e}, oracle {want:e}"));
                    }
                }
            }
        }
        self.g2_seeded_subset(&skip)
    }

    /// The gradient of `sum_l w_l value_l` for every other input only (`GradSpec::Some` and
    /// per-lane seeds `w`): `w_l` times the oracle's per-lane gradient.
    fn g2_seeded_subset(&mut self, skip: &[bool]) -> Result<(), String> {
        let names: Vec<String> = self.oracle.inputs.iter().step_by(2).cloned().collect();
        if names.is_empty() {
            return Ok(());
        }
        let seeds: Vec<f64> = (0..self.case.lanes)
            .map(|l| [1.5, -0.5, 2.0, 0.25][l % 4])
            .collect();
        let all: Vec<usize> = (0..self.case.lanes).collect();
        let mut opts = runs::options(true);
        opts.grad = runtime_cpu::GradSpec::Some(names.clone());
        opts.seed = Some(seeds.clone());
        let run = runs::run_with::<f64>(self.program, &runs::bindings(self.case, &all), &opts)?;
        if run.grads.len() != names.len() {
            return Err(format!(
                "{} gradients for {} names asked",
                run.grads.len(),
                names.len()
            ));
        }
        for name in &names {
            let k = self
                .oracle
                .inputs
                .iter()
                .position(|n| n == name)
                .expect("an input");
            let g = run
                .grad(name)
                .ok_or(format!("seeded: no gradient for `{name}`"))?;
            let n = g.width;
            for l in 0..self.case.lanes {
                let Ok(lane) = &self.oracle.lanes[l] else {
                    continue;
                };
                if skip[l] {
                    continue;
                }
                let v = self.size(l);
                for e in 0..n {
                    let want = seeds[l] * lane.grads[k][e];
                    let got = g.per_lane[l * n + e];
                    if !within(got, want, tol::G2_RTOL, 2.0 * (1.0 + want.abs() + v)) {
                        return Err(format!(
                            "lane {l} d/d{name}[{e}] with seed {} and only {} differentiated: {got:e}, oracle {want:e}",
                            seeds[l],
                            names.join(",")
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    pub fn g3(&mut self) -> Result<(), String> {
        let case = self.case;
        // Every (lane, input, element) compared, and the step for it.
        let mut points = Vec::new();
        for (k, name) in self.oracle.inputs.iter().enumerate() {
            let Some(i) = case.inputs.iter().position(|c| &c.name == name) else {
                return Err(format!("input `{name}` has no binding"));
            };
            for l in 0..case.lanes {
                let Ok(lane) = &self.oracle.lanes[l] else {
                    continue;
                };
                for e in 0..case.inputs[i].width() {
                    let x = case.inputs[i].lane(l)[e];
                    let h = tol::G3_STEP * x.abs().max(1.0);
                    if lane.flips[k][e] < tol::G3_FLIP_SAFETY * 2.0 * h {
                        self.verdict.fd_skipped += 1;
                        continue;
                    }
                    points.push((l, i, e, h));
                }
            }
        }
        if points.is_empty() {
            return Ok(());
        }
        // One run: four perturbed copies (+h, -h, +2h, -2h) of each point's lane.
        let steps = [1.0, -1.0, 2.0, -2.0];
        let mut b = runtime_cpu::Bindings::new();
        let mut actual = vec![[0.0; 4]; points.len()];
        for (ii, inp) in case.inputs.iter().enumerate() {
            let n = inp.width();
            let mut data = Vec::with_capacity(points.len() * 4 * n);
            for (p, &(l, i, e, h)) in points.iter().enumerate() {
                for (s, &m) in steps.iter().enumerate() {
                    let start = data.len();
                    data.extend_from_slice(inp.lane(l));
                    if i == ii {
                        data[start + e] += m * h;
                        actual[p][s] = data[start + e];
                    }
                }
            }
            b = b
                .lane_tensors(&inp.name, runs::rt_shape(inp.shape), data)
                .map_err(|e| format!("{e:?}"))?;
        }
        let fd = runs::run::<f64>(self.program, &b, false)?;
        for (p, &(l, i, e, _)) in points.iter().enumerate() {
            let f = |s: usize| fd.values[p * 4 + s].clone();
            let (fp1, fm1, fp2, fm2) = match (f(0), f(1), f(2), f(3)) {
                (Ok(a), Ok(b), Ok(c), Ok(d)) => (a, b, c, d),
                other => return Err(format!("lane {l}: a perturbed run failed: {other:?}")),
            };
            let x = actual[p];
            let d1 = (fp1 - fm1) / (x[0] - x[1]);
            let d2 = (fp2 - fm2) / (x[2] - x[3]);
            let est = (d1 - d2).abs();
            let fdv = (4.0 * d1 - d2) / 3.0;
            let name = &case.inputs[i].name;
            let g = self
                .base
                .grad(name)
                .ok_or(format!("no gradient for `{name}`"))?;
            let got = g.per_lane[l * g.width + e];
            if fdv.is_nan() {
                // The function is NaN next to the point: nothing to compare against.
                self.verdict.fd_skipped += 1;
                continue;
            }
            let v = self.size(l);
            self.verdict.fd_checked += 1;
            let bound = tol::G3_RTOL * (1.0 + got.abs() + v) + tol::G3_EST * est;
            let ok = (got - fdv).abs() <= bound;
            if !ok {
                return Err(format!(
                    "lane {l} d/d{name}[{e}]: {got:e}, finite difference {fdv:e} (steps give {d1:e} and {d2:e})"
                ));
            }
        }
        Ok(())
    }

    pub fn g4(&mut self) -> Result<(), String> {
        let mut singles: Vec<Run> = Vec::with_capacity(self.case.lanes);
        // One session reused lane after lane replays the last lane's walk where its decisions
        // come out the same: bit for bit a fresh session's run either way.
        let mut reused = Session::<f64>::new();
        for l in 0..self.case.lanes {
            let bindings = runs::single(self.case, l);
            let fresh = runs::run::<f64>(self.program, &bindings, true)?;
            let again = reused
                .run(self.program, &bindings, &runs::options(true))
                .map(Run::read)
                .map_err(|e| format!("{e:?}"))?;
            same_runs(&fresh, &again, None, "the run in a reused session")
                .map_err(|m| format!("lane {l} alone: {m}"))?;
            singles.push(fresh);
        }
        // The lanes of the batch, assembled from the single runs, summed in lane order.
        let mut joined = self.base.clone();
        for (l, one) in singles.iter().enumerate() {
            joined.values[l] = one.values[0].clone();
            for g in &mut joined.grads {
                let h = one
                    .grad(&g.name)
                    .ok_or(format!("lane {l} alone: no gradient for `{}`", g.name))?;
                let n = g.width;
                g.per_lane[l * n..(l + 1) * n].copy_from_slice(&h.per_lane[..n]);
            }
        }
        for g in &mut joined.grads {
            let n = g.width;
            g.sum = vec![0.0; n];
            for (l, v) in joined.values.iter().enumerate() {
                if v.is_ok() {
                    for e in 0..n {
                        g.sum[e] += g.per_lane[l * n + e];
                    }
                }
            }
        }
        same_runs(
            self.base,
            &joined,
            Some(tol::G4_GRAD_RTOL),
            "the lane run alone",
        )?;
        let blocks = runs::blocked(self.program, self.case, 0)?;
        same_runs(
            self.base,
            &blocks,
            Some(tol::G4_GRAD_RTOL),
            "the lanes run in blocks",
        )?;
        // The runtime's own blocking of a batch.
        let all: Vec<usize> = (0..self.case.lanes).collect();
        let mut opts = runs::options(true);
        opts.lane_block = 2;
        let blocked = runs::run_with::<f64>(self.program, &runs::bindings(self.case, &all), &opts)?;
        same_runs(
            self.base,
            &blocked,
            Some(tol::G4_GRAD_RTOL),
            "the run with lane_block 2",
        )
    }

    pub fn g5(&mut self) -> Result<(), String> {
        let first = runs::blocked(self.program, self.case, 0)?;
        for k in 1..tol::G5_THREADS.len() {
            let other = runs::blocked(self.program, self.case, k)?;
            let what = format!("{} threads", tol::G5_THREADS[k]);
            same_runs(&first, &other, None, &what)
                .map_err(|m| format!("{} thread(s) vs {m}", tol::G5_THREADS[0]))?;
        }
        Ok(())
    }

    pub fn g6(&mut self) -> Result<(), String> {
        let all: Vec<usize> = (0..self.case.lanes).collect();
        let narrow = runs::run::<f32>(self.program, &runs::bindings(self.case, &all), true)?;
        let mut skipped = false;
        for l in 0..self.case.lanes {
            if let (Err(e), got) = (&self.base.values[l], &narrow.values[l]) {
                if !got.as_ref().is_err_and(|g| error_kind(g) == error_kind(e)) {
                    return Err(format!("lane {l}: f32 {got:?}, f64 error {e}"));
                }
                continue;
            }
            if self.skip(l, tol::G6_MARGIN, false) {
                skipped = true;
                continue;
            }
            let (Ok(wide), got) = (&self.base.values[l], &narrow.values[l]) else {
                continue;
            };
            let Ok(got) = got else {
                return Err(format!(
                    "lane {l}: f32 run failed: {got:?}, f64 value {wide:e}"
                ));
            };
            if !within(*got, *wide, tol::G6_RTOL, 1.0 + wide.abs()) {
                return Err(format!("lane {l}: f32 value {got:e}, f64 {wide:e}"));
            }
            for g in &self.base.grads {
                let h = narrow
                    .grad(&g.name)
                    .ok_or(format!("f32: no gradient for `{}`", g.name))?;
                let n = g.width;
                for e in 0..n {
                    let (x, y) = (g.per_lane[l * n + e], h.per_lane[l * n + e]);
                    if !within(y, x, tol::G6_RTOL, 1.0 + x.abs() + wide.abs()) {
                        return Err(format!("lane {l} d/d{}[{e}]: f32 {y:e}, f64 {x:e}", g.name));
                    }
                }
            }
        }
        if !skipped {
            for g in &self.base.grads {
                let h = narrow
                    .grad(&g.name)
                    .ok_or(format!("f32: no gradient for `{}`", g.name))?;
                let n = g.width.max(1);
                let ok_lanes = |i: usize| self.base.values[i / n].is_ok();
                let size: f64 = 1.0
                    + (0..g.per_lane.len())
                        .filter(|&i| ok_lanes(i))
                        .map(|i| g.per_lane[i].abs())
                        .sum::<f64>()
                    + self
                        .base
                        .values
                        .iter()
                        .flatten()
                        .map(|x| x.abs())
                        .sum::<f64>();
                for (e, (x, y)) in g.sum.iter().zip(&h.sum).enumerate() {
                    if !within(*y, *x, tol::G6_RTOL, size) {
                        return Err(format!("summed d/d{}[{e}]: f32 {y:e}, f64 {x:e}", g.name));
                    }
                }
            }
        }
        Ok(())
    }
}
