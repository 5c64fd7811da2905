//! The ODE search's checkpoint (`checkpoint.json` in `--out DIR`), which `--resume DIR`
//! continues: the settings, a fingerprint of the data, each state's pool, the systems on the
//! front and on the third stage's islands, the structures already fitted, and the counters.

use super::data::{Columns, OdeData};
use super::discover::{
    equation_names, stage_inputs, system_of, Counters, Equation, Fitted, Record, Resumed, Snapshot,
};
use super::evolve::Islands;
use super::simulate::Score;
use crate::search::emit::Names;
use crate::search::expr::Genome;
use crate::search::options::Options;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A number that may be infinite (JSON has no infinity): `None` for one that is not finite.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// A fitted system as the checkpoint keeps it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Saved {
    /// Each state's right-hand side, its constants at their fitted values.
    pub equations: Vec<Genome>,
    /// The fitted constants.
    pub params: Vec<f64>,
    /// Each training trajectory's fitted initial state.
    pub initial: Vec<Vec<f64>>,
    /// The integrated training R^2, NMSE and MSE (null where not finite).
    pub train: [Option<f64>; 3],
    /// Each state's NMSE.
    pub state_nmse: Vec<Option<f64>>,
}

/// Everything an ODE search needs to continue where it stopped.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    /// `"ode"`.
    pub mode: String,
    /// The columns it searched over.
    pub columns: Columns,
    /// Right-hand sides without the time.
    pub autonomous: bool,
    /// The first stage's settings (and the third's operators and limits).
    pub search: Options,
    /// Observations per shooting segment.
    pub segment: usize,
    /// `--max-step` (null: the median gap).
    pub max_step: Option<f64>,
    /// Each training trajectory's initial state fitted.
    pub fit_initial: bool,
    /// The data's fingerprint ([`OdeData::fingerprint`]).
    pub data: String,
    /// Each state's pool: right-hand sides and their slope loss (null for a seed).
    pub pools: Vec<Vec<(Genome, Option<f64>)>>,
    /// The systems kept: the front's and the islands'.
    pub systems: Vec<Saved>,
    /// The islands, as indexes into `systems`.
    pub islands: Vec<Vec<usize>>,
    /// Generations of the third stage so far.
    pub generation: usize,
    /// The structures fitted so far (none is fitted twice).
    pub seen: Vec<String>,
    /// The work done so far.
    pub counters: Counters,
    /// The first failures' reasons.
    pub failures: Vec<String>,
}

/// The settings a checkpoint keeps besides the search's options.
pub struct Kept<'a> {
    /// The columns.
    pub columns: &'a Columns,
    /// Right-hand sides without the time.
    pub autonomous: bool,
    /// The first stage's settings.
    pub search: &'a Options,
    /// Observations per shooting segment.
    pub segment: usize,
    /// `--max-step`, or infinite for the median gap.
    pub max_step: f64,
    /// Each training trajectory's initial state fitted.
    pub fit_initial: bool,
}

impl Checkpoint {
    /// The checkpoint of `s`: the systems on the front of `s.record` and on its islands.
    pub fn of(s: &Snapshot, kept: &Kept, data: &OdeData) -> Checkpoint {
        let fitted = &s.record.fitted;
        let mut keep: BTreeSet<usize> = s.islands.islands.iter().flatten().copied().collect();
        keep.extend(super::discover::front_indexes(fitted));
        let keep: Vec<usize> = keep.into_iter().collect();
        let at = |k: usize| keep.binary_search(&k).expect("a kept system");
        let systems = keep
            .iter()
            .map(|&k| {
                let f = &fitted[k];
                Saved {
                    equations: f.equations.iter().map(|e| e.genome.clone()).collect(),
                    params: f.params.clone(),
                    initial: f.initial.clone(),
                    train: [
                        finite(f.train.r2),
                        finite(f.train.nmse),
                        finite(f.train.mse),
                    ],
                    state_nmse: f.state_nmse.iter().map(|&x| finite(x)).collect(),
                }
            })
            .collect();
        Checkpoint {
            mode: "ode".into(),
            columns: kept.columns.clone(),
            autonomous: kept.autonomous,
            search: kept.search.clone(),
            segment: kept.segment,
            max_step: finite(kept.max_step),
            fit_initial: kept.fit_initial,
            data: data.fingerprint(),
            pools: s
                .pools
                .iter()
                .map(|p| p.iter().map(|(g, l)| (g.clone(), finite(*l))).collect())
                .collect(),
            systems,
            islands: s
                .islands
                .islands
                .iter()
                .map(|i| i.iter().map(|&k| at(k)).collect())
                .collect(),
            generation: s.islands.generation,
            seen: s.record.seen.iter().cloned().collect(),
            counters: s.record.counters.clone(),
            failures: s.record.failures.clone(),
        }
    }

    /// Where the search stood, on `data` (which must be the data it was made on).
    pub fn resume(self, data: &OdeData) -> Result<Resumed, String> {
        if self.mode != "ode" {
            return Err("not a checkpoint of an ODE search (ndvm search --time)".into());
        }
        if self.columns != data.columns {
            return Err(format!(
                "the checkpoint searched time `{}`, states {}, inputs [{}]; give the same \
                 --time, --target, --trajectory and --inputs",
                self.columns.time,
                self.columns.states.join(","),
                self.columns.inputs.join(",")
            ));
        }
        let print = data.fingerprint();
        if self.data != print {
            return Err(format!(
                "the checkpoint was made on other data: other values in the training or test \
                 files (fingerprint {} in the checkpoint, {print} here)",
                self.data
            ));
        }
        let d = data.columns.states.len();
        let inputs = stage_inputs(data, self.autonomous);
        let names: Vec<Names> = (0..d).map(|i| equation_names(&inputs, i)).collect();
        let n = self.systems.len();
        if self.pools.len() != d
            || self.systems.iter().any(|s| s.equations.len() != d)
            || self.islands.iter().flatten().any(|&k| k >= n)
        {
            return Err("the checkpoint is damaged: its systems do not match its states".into());
        }
        let fitted = self
            .systems
            .into_iter()
            .map(|s| {
                let refs: Vec<&Genome> = s.equations.iter().collect();
                let system = system_of(data, &names, &refs);
                let equations: Vec<Equation> = s
                    .equations
                    .into_iter()
                    .map(|g| Equation {
                        complexity: g.size(),
                        genome: g,
                    })
                    .collect();
                let [r2, nmse, mse] = s.train;
                Fitted {
                    complexity: equations.iter().map(|e| e.complexity).sum(),
                    equations,
                    system,
                    params: s.params,
                    initial: s.initial,
                    train: Score {
                        r2: r2.unwrap_or(f64::NEG_INFINITY),
                        nmse: nmse.unwrap_or(f64::INFINITY),
                        mse: mse.unwrap_or(f64::INFINITY),
                    },
                    state_nmse: s
                        .state_nmse
                        .into_iter()
                        .map(|x| x.unwrap_or(f64::INFINITY))
                        .collect(),
                }
            })
            .collect();
        Ok(Resumed {
            pools: self
                .pools
                .into_iter()
                .map(|p| {
                    p.into_iter()
                        .map(|(g, l)| (g, l.unwrap_or(f64::INFINITY)))
                        .collect()
                })
                .collect(),
            record: Record {
                fitted,
                seen: self.seen.into_iter().collect(),
                counters: self.counters,
                failures: self.failures,
            },
            islands: Islands {
                islands: self.islands,
                generation: self.generation,
            },
        })
    }
}
