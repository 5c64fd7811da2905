//! A whole calibration as `ndvm calibrate` runs it (and the Python package's `ndvm.calibrate`):
//! the restarts' initial values drawn from a seed, the fit, and R^2 on the training and
//! held-out rows at the best restart's parameters.

use super::workers::{Evaluator, Workers};
use super::{fit, r_squared, FitResult, Loss, Problem, Settings};
use crate::device::Attach;
use crate::rng::SplitMix;
use runtime_cpu::{RegionCounts, Session};
use runtime_gpu::DeviceChoice;
use serde_json::json;
use std::collections::BTreeMap;

/// Initial values of `restarts` restarts: the first at `init`, the others at
/// `init + 0.3 max(1, |init|) N(0, 1)` drawn from `seed`.
pub fn starts(init: &[f64], restarts: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = SplitMix(seed);
    (0..restarts.max(1))
        .map(|r| {
            init.iter()
                .map(|&x| {
                    if r == 0 {
                        x
                    } else {
                        x + 0.3 * x.abs().max(1.0) * rng.normal()
                    }
                })
                .collect()
        })
        .collect()
}

/// The result of a calibration.
#[derive(Clone, Debug)]
pub struct Report {
    /// Every restart and the best one.
    pub fit: FitResult,
    /// R^2 on the training rows at the best parameters (a target column only).
    pub train_r2: Option<f64>,
    /// Held-out loss and R^2 at the best parameters, when rows are held out.
    pub held: Option<(f64, Option<f64>)>,
    /// Where the numeric regions ran (all zero without a device, `--device cpu`).
    pub regions: RegionCounts,
}

impl Report {
    /// As `ndvm calibrate --format json` prints it: the best parameters by name, losses, R^2,
    /// every restart, and the work done in `seconds`.
    pub fn to_json(&self, params: &[String], seconds: f64) -> serde_json::Value {
        let best = self.fit.best.map(|b| &self.fit.restarts[b]);
        let restarts: Vec<_> = self
            .fit
            .restarts
            .iter()
            .map(|x| json!({"params": x.params, "loss": x.final_loss, "last_step_loss": x.last_step_loss, "error": x.failure}))
            .collect();
        json!({
            "params": best.map(|b| params.iter().cloned().zip(b.params.iter().copied()).collect::<BTreeMap<_, _>>()),
            "loss": best.and_then(|b| b.final_loss),
            "last_step_loss": best.map(|b| b.last_step_loss),
            "r2": self.train_r2,
            "holdout_loss": self.held.map(|h| h.0),
            "holdout_r2": self.held.and_then(|h| h.1),
            "best_restart": self.fit.best,
            "restarts": restarts,
            "steps": self.fit.steps,
            "evaluations": self.fit.evaluations,
            "seconds": seconds,
            "regions": {
                "device": self.regions.device_regions,
                "cpu": self.regions.cpu_regions,
                "device_reverse": self.regions.device_reverse,
            },
        })
    }
}

/// Fits `problem` from `starts` on `threads` worker threads (restarts spread over them; one
/// when the lanes run as one walk, on the GPU) and scores the best restart on the training
/// and held-out rows.
pub fn calibrate<R: Attach>(
    problem: &Problem,
    held: Option<&Problem>,
    starts: &[Vec<f64>],
    settings: &Settings,
    choice: DeviceChoice,
    threads: usize,
) -> Result<Report, String> {
    if !problem.data.is_empty() && problem.rows() == 0 {
        return Err(super::table::NOTHING_TO_FIT.into());
    }
    let threads = if settings.lane_block == 0 { 1 } else { threads };
    let mut workers = Workers::new(threads, || {
        let mut s = Session::<R>::new();
        R::attach(&mut s, choice)?;
        Ok(s)
    })?;
    let fit = fit(&mut workers, problem, starts, settings);
    let best = fit.best.map(|b| fit.restarts[b].params.clone());
    let r2_of = |p: &Problem, mse: f64| match &p.loss {
        Loss::Mse(t) => Some(r_squared(mse, t)),
        Loss::Rows(_) | Loss::Value => None,
    };
    let train_r2 = match (&best, fit.best) {
        (Some(_), Some(b)) => fit.restarts[b].final_loss.and_then(|l| r2_of(problem, l)),
        _ => None,
    };
    let held = match (held, &best) {
        (Some(h), Some(p)) => match workers
            .evaluate(
                h,
                std::slice::from_ref(p),
                settings.limits,
                settings.lane_block,
                false,
            )
            .remove(0)
        {
            Ok((loss, _)) => Some((loss, r2_of(h, loss))),
            Err(_) => None,
        },
        _ => None,
    };
    Ok(Report {
        fit,
        train_r2,
        held,
        regions: workers.region_counts(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_restart_starts_at_init_and_the_others_are_seeded() {
        let a = starts(&[0.5, -2.0], 3, 7);
        assert_eq!(a[0], vec![0.5, -2.0]);
        assert_eq!(a, starts(&[0.5, -2.0], 3, 7));
        assert_ne!(a[1], a[2]);
        assert_eq!(starts(&[1.0], 0, 0).len(), 1);
    }
}
