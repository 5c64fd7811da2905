//! One fit's result, the summary of a run, and agreement with reference results.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// A fit's result: one line of the `--out` file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FitRecord {
    /// Cycle through the stream.
    pub cycle: u64,
    /// Candidate index in the stream.
    pub index: usize,
    /// Held-out mean squared error (`null` for a failed fit).
    pub held_mse: Option<f64>,
    /// Training loss of the last Adam step (`null` for a failed fit).
    pub train_loss: Option<f64>,
    /// Held-out R^2 (`null` for a failed fit).
    pub held_r2: Option<f64>,
    /// Why the fit failed.
    #[serde(default)]
    pub error: Option<String>,
}

impl FitRecord {
    /// A failed fit.
    pub fn failed(cycle: u64, index: usize, error: String) -> Self {
        FitRecord {
            cycle,
            index,
            held_mse: None,
            train_loss: None,
            held_r2: None,
            error: Some(error),
        }
    }

    /// True for a fit with held-out R^2 above 0.9.
    pub fn success(&self) -> bool {
        self.held_r2.is_some_and(|r| r > 0.9)
    }
}

/// The summary of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Fits completed.
    pub fits: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Fits per second.
    pub fits_per_second: f64,
    /// Worker threads.
    pub threads: usize,
    /// Fits that failed.
    pub failed: usize,
    /// Fits with held-out R^2 > 0.9.
    pub successes: usize,
    /// Distinct skeletons among the successes.
    pub distinct_successful_skeletons: usize,
    /// Best held-out R^2.
    pub best_r2: Option<f64>,
    /// Seconds to the first successful fit.
    pub first_success_seconds: Option<f64>,
}

/// Summarises fits with their completion times and candidates' skeletons.
pub fn summarise(
    records: &[FitRecord],
    finished_at: &[f64],
    skeletons: &[String],
    seconds: f64,
    threads: usize,
) -> Summary {
    let successes: Vec<usize> = (0..records.len())
        .filter(|&i| records[i].success())
        .collect();
    let distinct: BTreeSet<&str> = successes
        .iter()
        .map(|&i| skeletons[records[i].index].as_str())
        .collect();
    Summary {
        fits: records.len(),
        seconds,
        fits_per_second: records.len() as f64 / seconds.max(1e-9),
        threads,
        failed: records.iter().filter(|r| r.error.is_some()).count(),
        successes: successes.len(),
        distinct_successful_skeletons: distinct.len(),
        best_r2: records
            .iter()
            .filter_map(|r| r.held_r2)
            .fold(None, |b: Option<f64>, r| Some(b.map_or(r, |b| b.max(r)))),
        first_success_seconds: successes
            .iter()
            .map(|&i| finished_at[i])
            .fold(None, |b: Option<f64>, t| Some(b.map_or(t, |b| b.min(t)))),
    }
}

/// Agreement of our fits with reference fits of the same (cycle, index).
#[derive(Clone, Debug, Serialize)]
pub struct Agreement {
    /// Fits present in both.
    pub compared: usize,
    /// Fits whose R^2 agree within `1e-3 max(1, |R^2|)`, or both failed.
    pub agree: usize,
    /// Reference successes.
    pub reference_successes: usize,
    /// Reference successes that also succeed here.
    pub successes_matched: usize,
    /// Fits that failed in the reference but not here, and the reverse.
    pub failed_only_in_reference: usize,
    /// Fits that failed here but not in the reference.
    pub failed_only_here: usize,
}

/// Compares `ours` with `reference` fit by fit.
pub fn agreement(ours: &[FitRecord], reference: &[FitRecord]) -> Agreement {
    let refs: HashMap<(u64, usize), &FitRecord> =
        reference.iter().map(|r| ((r.cycle, r.index), r)).collect();
    let mut a = Agreement {
        compared: 0,
        agree: 0,
        reference_successes: 0,
        successes_matched: 0,
        failed_only_in_reference: 0,
        failed_only_here: 0,
    };
    for o in ours {
        let Some(r) = refs.get(&(o.cycle, o.index)) else {
            continue;
        };
        a.compared += 1;
        match (o.held_r2, r.held_r2) {
            (None, None) => a.agree += 1,
            (Some(x), Some(y)) if (x - y).abs() <= 1e-3 * y.abs().max(1.0) => a.agree += 1,
            (Some(_), None) => a.failed_only_in_reference += 1,
            (None, Some(_)) => a.failed_only_here += 1,
            _ => {}
        }
        if r.success() {
            a.reference_successes += 1;
            if o.success() {
                a.successes_matched += 1;
            }
        }
    }
    a
}

/// Reads fit records (a JSONL file of `FitRecord`s).
pub fn read_records(text: &str) -> anyhow::Result<Vec<FitRecord>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).map_err(|e| anyhow::anyhow!("malformed fit record `{l}`: {e}"))
        })
        .collect()
}
