//! Inputs of a co-search replay: the candidate stream, the initial values per fit, the task data.

use crate::calibrate::table::Table;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// One candidate program of a stream.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Candidate {
    /// The program.
    pub src: String,
    /// Its free parameters, fitted; every other input is data.
    pub params: Vec<String>,
    /// Its structure with constants and parameters abstracted (for counting distinct successes).
    #[serde(default)]
    pub skeleton: String,
}

/// A file's text, or an error naming the line of its first byte that is not UTF-8.
fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    crate::search::dataset::utf8(bytes, &path.display().to_string()).map_err(anyhow::Error::msg)
}

/// Reads a JSONL stream; a malformed line becomes an `Err` entry (its fits are recorded failed).
pub fn read_stream(path: &Path) -> Result<Vec<Result<Candidate, String>>> {
    let text = read_text(path)?;
    let entries: Vec<_> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str::<Candidate>(l)
                .map_err(|e| format!("line {}: malformed candidate: {e}", i + 1))
        })
        .collect();
    if entries.is_empty() {
        bail!("{} holds no candidates", path.display());
    }
    Ok(entries)
}

#[derive(Deserialize)]
struct InitLine {
    cycle: u64,
    index: usize,
    init: HashMap<String, f64>,
}

/// Initial parameter values per (cycle, candidate index), as the paper's harness drew them.
#[derive(Clone, Debug, Default)]
pub struct Inits {
    map: HashMap<(u64, usize), HashMap<String, f64>>,
}

impl Inits {
    /// Reads a JSONL file of `{cycle, index, init}`.
    pub fn read(path: &Path) -> Result<Inits> {
        let text = read_text(path)?;
        let mut map = HashMap::new();
        for (i, l) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let line: InitLine = serde_json::from_str(l)
                .with_context(|| format!("{} line {}", path.display(), i + 1))?;
            map.insert((line.cycle, line.index), line.init);
        }
        Ok(Inits { map })
    }

    /// The initial value of `param` for fit (cycle, index): the stored one, or else a draw from
    /// N(0, 0.3^2) seeded by `1000 cycle + index` (the paper's seeding; our own generator).
    pub fn value(&self, cycle: u64, index: usize, k: usize, param: &str) -> f64 {
        if let Some(x) = self.map.get(&(cycle, index)).and_then(|m| m.get(param)) {
            return *x;
        }
        let mut rng = crate::rng::SplitMix(1000 * cycle + index as u64);
        let mut z = 0.0;
        for _ in 0..=k {
            z = rng.normal();
        }
        0.3 * z
    }

    /// Number of stored fits.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// The task: training and held-out data of a symbolic-regression problem with columns `x`, `y`.
#[derive(Clone, Debug)]
pub struct Task {
    /// Training inputs.
    pub train_x: Vec<f64>,
    /// Training targets.
    pub train_y: Vec<f64>,
    /// Held-out inputs.
    pub hold_x: Vec<f64>,
    /// Held-out targets.
    pub hold_y: Vec<f64>,
}

impl Task {
    /// Reads a CSV with columns `x`, `y` and `split`.
    pub fn read(path: &Path) -> Result<Task> {
        let t = Table::read(path)?;
        let (train, hold) = (t.rows(false), t.rows(true));
        let col = |t: &Table, c: &str| -> Result<Vec<f64>> {
            t.column(c)
                .map(<[f64]>::to_vec)
                .with_context(|| format!("{} has no `{c}` column", path.display()))
        };
        let task = Task {
            train_x: col(&train, "x")?,
            train_y: col(&train, "y")?,
            hold_x: col(&hold, "x")?,
            hold_y: col(&hold, "y")?,
        };
        if task.hold_x.is_empty() || task.train_x.is_empty() {
            bail!(
                "{} needs both `train` and `holdout` rows in its `split` column",
                path.display()
            );
        }
        Ok(task)
    }
}
