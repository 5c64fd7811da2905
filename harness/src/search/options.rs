//! Every setting of a search, with its default, in one place.

use super::candidate::{FitSettings, Method};
use super::constraints::Constraints;
use super::mutate::MutationWeights;
use super::ops::{OpSet, DEFAULT};
use crate::calibrate::RowKind;
use serde::{Deserialize, Serialize};

/// When the grammar has `iterate`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Iterate {
    /// When an input column holds trip counts (non-negative integers).
    Auto,
    /// Always (fixed trip counts when no column holds counts).
    On,
    /// Never.
    Off,
}

/// How a search runs. `Options::default()` is what `ndvm search` uses without flags.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// Operator names (`--ops`).
    pub ops: Vec<String>,
    /// The largest complexity (node count) a built-in candidate may have.
    pub max_complexity: usize,
    /// The deepest tree a built-in candidate may have.
    pub max_depth: usize,
    /// Islands of the built-in proposer.
    pub islands: usize,
    /// Members per island.
    pub population: usize,
    /// Children each island proposes per generation.
    pub offspring: usize,
    /// Generations between migrations.
    pub migration_interval: u64,
    /// Members each island receives at a migration (half from the hall of fame, half the
    /// next island's best).
    pub migrants: usize,
    /// Members drawn per tournament.
    pub tournament: usize,
    /// Selection's penalty per node (added to log10 of the normalised loss).
    pub parsimony: f64,
    /// Selection's penalty per unit of an island's share at a complexity.
    pub crowding: f64,
    /// How much worse than its parent (in log10 of the loss) a child may be and still be
    /// taken onto its island, one unit making it e times less likely.
    pub temperature: f64,
    /// How each candidate is fitted.
    pub fit: FitSettings,
    /// Training rows the search fits on (drawn once, with the seed); 0 for every row. The
    /// hall of fame is fitted again on every training row at the end.
    pub fit_rows: usize,
    /// Iterations of the final fit of the hall of fame on every training row.
    pub polish_iterations: usize,
    /// Whether the grammar has `iterate`.
    pub iterate: Iterate,
    /// Whether the grammar has `let`-shared subexpressions.
    pub share: bool,
    /// The largest fixed trip count of an `iterate`.
    pub max_fixed_count: u32,
    /// The largest value of an input column an `iterate` may take its trip count from.
    pub max_count_value: f64,
    /// The seed of every random choice.
    pub seed: u64,
    /// The variation operators' weights.
    pub weights: MutationWeights,
    /// Skeletons the cache holds before it is emptied.
    pub cache_capacity: usize,
    /// How a row's value is scored against its target (`--loss`).
    #[serde(default)]
    pub loss: RowKind,
    /// A loss written in the object language over `f`, `y` and constants of its own
    /// (`--loss "(...)"`), which takes the place of `loss`.
    #[serde(default)]
    pub loss_program: Option<String>,
    /// Each operator's complexity, argument sizes and nesting limits (`--complexity-of`,
    /// `--constraints`, `--nested`).
    #[serde(default)]
    pub constraints: Constraints,
    /// The SI units of the inputs and the target (`--units "x=m,y=m/s^2"`).
    #[serde(default)]
    pub units: Option<String>,
    /// The penalty (added to the log10 of the normalised loss in selection) per place a
    /// program's units do not balance; `None`: such a program is refused.
    #[serde(default)]
    pub dimensional_penalty: Option<f64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ops: DEFAULT.split(',').map(String::from).collect(),
            max_complexity: 40,
            max_depth: 12,
            islands: 4,
            population: 100,
            offspring: 50,
            migration_interval: 10,
            migrants: 4,
            tournament: 8,
            parsimony: 0.02,
            crowding: 2.0,
            temperature: 0.1,
            fit: FitSettings {
                method: Method::Lm,
                iterations: 20,
                restarts: 1,
                loop_restarts: 3,
                lr: 0.05,
                max_steps: 1_000_000,
                max_memory_mb: 512,
            },
            fit_rows: 1000,
            polish_iterations: 100,
            iterate: Iterate::Auto,
            share: true,
            max_fixed_count: 10,
            max_count_value: 1000.0,
            seed: 1,
            weights: MutationWeights::default(),
            cache_capacity: 50_000,
            loss: RowKind::L2,
            loss_program: None,
            constraints: Constraints::default(),
            units: None,
            dimensional_penalty: None,
        }
    }
}

impl Options {
    /// Sets one field by its dotted name (`temperature`, `fit.restarts`, `weights.crossover`)
    /// to a JSON value; an unknown name or a value of the wrong type is an error.
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| format!("--set {assignment}: expected NAME=VALUE"))?;
        let value: serde_json::Value = serde_json::from_str(value)
            .unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        let mut all = serde_json::to_value(&*self).map_err(|e| e.to_string())?;
        let mut at = &mut all;
        for part in key.split('.') {
            at = at
                .get_mut(part)
                .ok_or_else(|| format!("--set {key}: no such setting (see docs/search.md)"))?;
        }
        *at = value;
        *self = serde_json::from_value(all).map_err(|e| format!("--set {assignment}: {e}"))?;
        Ok(())
    }

    /// Checks the settings a search cannot run with: an empty island, no children, a limit of
    /// zero, a number that is not finite.
    pub fn check(&self) -> Result<(), String> {
        let at_least_one = [
            ("islands", self.islands),
            ("population", self.population),
            ("offspring", self.offspring),
            ("tournament", self.tournament),
            ("max_complexity", self.max_complexity),
            ("max_depth", self.max_depth),
            ("cache_capacity", self.cache_capacity),
            ("fit.restarts", self.fit.restarts),
            ("fit.loop_restarts", self.fit.loop_restarts),
            ("fit.max_memory_mb", self.fit.max_memory_mb),
        ];
        for (name, v) in at_least_one {
            if v == 0 {
                return Err(format!("{name} must be at least 1"));
            }
        }
        if self.fit.max_memory_mb > 1 << 20 {
            return Err("fit.max_memory_mb: at most 1048576 (1 TB)".into());
        }
        if self.islands > 1024 || self.population > 1_000_000 {
            return Err("islands (at most 1024) or population (at most 1000000) too large".into());
        }
        let finite = [
            ("parsimony", self.parsimony),
            ("crowding", self.crowding),
            ("temperature", self.temperature),
            ("fit.lr", self.fit.lr),
            ("max_count_value", self.max_count_value),
        ];
        for (name, v) in finite {
            if !v.is_finite() {
                return Err(format!("{name} must be a finite number"));
            }
        }
        if let RowKind::Huber(d) = self.loss {
            if !(d.is_finite() && d > 0.0) {
                return Err("loss: huber's delta must be a number above 0".into());
            }
        }
        if let Some(p) = self.dimensional_penalty {
            if !(p.is_finite() && p >= 0.0) {
                return Err("dimensional_penalty must be a number of 0 or more".into());
            }
            if self.units.is_none() {
                return Err("dimensional_penalty needs units".into());
            }
        }
        self.constraints.check()?;
        self.op_set().map(|_| ())
    }

    /// The operator set.
    pub fn op_set(&self) -> Result<OpSet, String> {
        OpSet::parse(&self.ops.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_set_by_name() {
        let mut o = Options::default();
        o.set("temperature=0.5").unwrap();
        o.set("fit.restarts=4").unwrap();
        o.set("fit.method=\"Adam\"").unwrap();
        o.set("weights.crossover=0.3").unwrap();
        assert_eq!(
            (o.temperature, o.fit.restarts, o.weights.crossover),
            (0.5, 4, 0.3)
        );
        assert_eq!(o.fit.method, Method::Adam);
        assert!(o.set("nothing=1").unwrap_err().contains("no such setting"));
        assert!(o.set("islands=many").is_err());
        assert!(o.set("islands").is_err());
    }
}
