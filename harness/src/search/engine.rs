//! The search loop, one generation at a time ([`super::batch`]): propose (every island's
//! children, and the outside proposer's candidates in the order they came), simplify and
//! deduplicate against each island's skeleton cache, fit the new candidates over the worker
//! threads, then, in candidate order, score them, update the islands and their halls of fame,
//! and answer the outside proposer; every `migration_interval` generations, the islands
//! migrate. Every random choice is drawn from a generator seeded by (seed, island,
//! generation), results are merged in candidate order, never in completion order, and islands
//! share nothing between migrations, so a count-bounded search gives the same bytes on any
//! number of threads, and with its islands in one process or apart ([`Engine::island`]).

use super::candidate::{Candidate, ProgramLoss, Rows};
use super::dataset::Data;
use super::emit::{self, Names};
use super::expr::Genome;
use super::feed::{Feed, NoFeed};
use super::front::HallOfFame;
use super::generate::{below, Grammar};
use super::options::Options;
use super::population::Pressure;
use super::select::EarlyStop;
use super::shard::{share, Arrival, Shard, ShardState};
use super::units::Units;
use crate::calibrate::workers::Workers;
use crate::rng::SplitMix;
use runtime_cpu::Session;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// What the search has done.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// Candidates scored (fitted, or answered from the skeleton cache).
    pub evaluations: u64,
    /// Candidates fitted.
    pub fits: u64,
    /// Candidates answered from the skeleton cache without a fit.
    pub cache_hits: u64,
    /// Fits that reused a cached decode (a perturbed candidate of a known skeleton).
    pub decodes_reused: u64,
    /// Candidates that failed (parse, type or arity error, runaway, non-finite loss).
    pub failed: u64,
    /// Distinct skeletons fitted.
    pub distinct_skeletons: u64,
    /// Walks of the runtime (each over every restart's rows).
    pub walks: u64,
    /// Rows times nodes walked: the lanes of every walk times its candidate's complexity.
    pub row_nodes: u64,
    /// Generations completed.
    pub generations: u64,
}

/// Everything a search needs to continue where it stopped.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The settings it ran with.
    pub options: Options,
    /// The inputs and target it searched over.
    pub inputs: Vec<String>,
    /// The target.
    pub target: String,
    /// Training rows.
    pub rows: usize,
    /// The fingerprint of the training and test data ([`Data::fingerprint`]; empty in
    /// checkpoints written before it was kept).
    #[serde(default)]
    pub data: String,
    /// Migrations so far.
    pub epoch: u64,
    /// Generations since the last migration.
    pub steps: u64,
    /// The islands, each with its hall of fame, cache and counters.
    pub shards: Vec<ShardState>,
    /// Seconds searched so far.
    pub seconds: f64,
    /// Best loss against seconds.
    pub history: Vec<(f64, f64)>,
    /// Programs from the outside proposer or seeds given to the islands so far.
    pub injected: u64,
}

/// When the loop stops.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    /// After this many evaluations (over the whole search, resumed runs included), each
    /// island stopping at its share ([`share`]).
    pub max_evals: Option<u64>,
    /// No generation starts after this instant, and no fit of the last one.
    pub deadline: Option<Instant>,
    /// Set by Ctrl-C.
    pub interrupt: Arc<AtomicBool>,
    /// Only the outside proposer proposes; the search ends when it does.
    pub proposer_only: bool,
}

impl Stop {
    /// Why a search that ran until this stop ended, after `evaluations`: `interrupted`,
    /// `max-evals`, `proposer` (under `proposer_only`, the proposer ended before the
    /// deadline) or `budget`.
    pub fn reason(&self, evaluations: u64) -> &'static str {
        if self.interrupt.load(Ordering::Relaxed) {
            "interrupted"
        } else if self.max_evals.is_some_and(|m| evaluations >= m) {
            "max-evals"
        } else if self.proposer_only && self.deadline.is_none_or(|d| Instant::now() < d) {
            "proposer"
        } else {
            "budget"
        }
    }

    pub(super) fn now(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// The deepest genome any setting allows.
pub const MAX_DEPTH: usize = 64;

/// A generator for one purpose: a hash of the seed and the parts.
pub fn rng_for(seed: u64, parts: &[u64]) -> SplitMix {
    let mut r = SplitMix(seed ^ 0x5DEE_CE66_D1CE_4E5B);
    for &p in parts {
        r = SplitMix(r.next_u64() ^ p.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }
    r.next_u64();
    r
}

/// The grammar of the built-in proposer for `options` over `data`'s inputs.
pub fn grammar_of(options: &Options, data: &Data) -> Result<Grammar, String> {
    let ops = options.op_set()?;
    let count_inputs = data.count_columns(options.max_count_value);
    let iterate = match options.iterate {
        super::options::Iterate::Auto => !count_inputs.is_empty(),
        super::options::Iterate::On => true,
        super::options::Iterate::Off => false,
    };
    Ok(Grammar {
        ops,
        inputs: data.inputs.len(),
        count_inputs,
        max_fixed_count: options.max_fixed_count,
        iterate,
        share: options.share,
        max_size: options.max_complexity,
        // The genome's own code recurses over trees: keep them far from the stack's end.
        max_depth: options.max_depth.min(MAX_DEPTH),
        constraints: options.constraints.clone(),
        units: match &options.units {
            Some(text) => Some((
                Units::parse(text, &data.inputs, &data.target)?,
                options.dimensional_penalty,
            )),
            None => None,
        },
    })
}

/// A running search: all its islands in this process, or one of them (a worker of a search
/// spread over processes, [`Engine::island`]).
pub struct Engine {
    /// The settings.
    pub options: Options,
    /// The data.
    pub data: Data,
    /// The grammar of the built-in proposer.
    pub grammar: Grammar,
    /// The names programs are written with.
    pub names: Names,
    /// The rows candidates are fitted on.
    pub fit_rows: Rows,
    /// The test sets' rows, by name.
    pub test_rows: Vec<(String, Rows)>,
    /// The islands this engine runs, by number.
    pub shards: Vec<Shard>,
    /// The hall of fame of every island here.
    pub hall: HallOfFame,
    /// The counters of every island here (generations: the most any island has run).
    pub counters: Counters,
    /// Best loss against seconds.
    pub history: Vec<(f64, f64)>,
    /// Migrations so far.
    pub epoch: u64,
    /// Generations since the last migration.
    pub steps: u64,
    /// Seconds of earlier runs (a resumed search).
    pub earlier_seconds: f64,
    /// When this run started.
    pub started: Instant,
    pub(super) seeds: Vec<Candidate>,
    pub(super) injected: u64,
    pub(super) workers: Workers<f64>,
    /// The flag that cancels the workers' walks, while one is set ([`Engine::set_cancel`]).
    pub(super) cancel: Option<Arc<AtomicBool>>,
    pub(super) pressure: Pressure,
    /// The loss that ends the search before its budget (`--early-stop`).
    pub early_stop: Option<EarlyStop>,
    /// Whether a member reached it.
    pub stopped_early: bool,
}

/// What one island's epoch did ([`Engine::epoch`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochReport {
    /// Generations it ran.
    pub steps: u64,
    /// False once the island has no more to do (its share of `max_evals`, or the stop).
    pub live: bool,
}

impl Engine {
    /// A new search over `data` on `threads` workers, starting from `seeds` (programs as text).
    pub fn new(
        options: Options,
        data: Data,
        threads: usize,
        seeds: Vec<Candidate>,
    ) -> Result<Engine, String> {
        let all = (0..options.islands.max(1)).collect();
        Engine::with_islands(options, data, threads, seeds, all)
    }

    /// Island `index` of a search over `data` (of `options.islands`), alone: a worker of a
    /// search whose islands run apart, driven by [`Engine::epoch`]. It keeps the seeds that
    /// fall to it (seed `j` goes to island `j % islands`).
    pub fn island(
        options: Options,
        data: Data,
        threads: usize,
        seeds: Vec<Candidate>,
        index: usize,
    ) -> Result<Engine, String> {
        if index >= options.islands.max(1) {
            return Err(format!(
                "island {index} of a search of {} islands",
                options.islands
            ));
        }
        Engine::with_islands(options, data, threads, seeds, vec![index])
    }

    fn with_islands(
        options: Options,
        data: Data,
        threads: usize,
        seeds: Vec<Candidate>,
        islands: Vec<usize>,
    ) -> Result<Engine, String> {
        let grammar = grammar_of(&options, &data)?;
        if options.loss == crate::calibrate::RowKind::Poisson && options.loss_program.is_none() {
            if let Some(i) = data.train.y.iter().position(|&y| y < 0.0) {
                return Err(format!(
                    "--loss poisson: the target `{}` is {} on training row {} (from 1): counts \
                     must be 0 or more",
                    data.target,
                    data.train.y[i],
                    i + 1
                ));
            }
        }
        let names = Names::new(&data.inputs);
        let fit_rows =
            sample_rows(&data, &options).with_program_loss(loss_program(&data, &options)?);
        let test_rows = data
            .tests
            .iter()
            .map(|t| (t.name.clone(), Rows::of(&t.data, &data.inputs)))
            .collect();
        let pressure = Pressure {
            tournament: options.tournament,
            parsimony: options.parsimony,
            crowding: options.crowding,
            temperature: options.temperature,
            variance: fit_rows.variance(),
        };
        let workers = Workers::new(threads, || Ok(Session::new()))?;
        let shards = islands
            .into_iter()
            .map(|i| Shard::new(i, options.cache_capacity))
            .collect();
        Ok(Engine {
            shards,
            hall: HallOfFame::default(),
            counters: Counters::default(),
            history: Vec::new(),
            epoch: 0,
            steps: 0,
            earlier_seconds: 0.0,
            started: Instant::now(),
            seeds,
            injected: 0,
            workers,
            cancel: None,
            pressure,
            early_stop: None,
            stopped_early: false,
            options,
            data,
            grammar,
            names,
            fit_rows,
            test_rows,
        })
    }

    /// A search continued from a checkpoint.
    pub fn resume(c: Checkpoint, data: Data, threads: usize) -> Result<Engine, String> {
        if c.inputs != data.inputs || c.target != data.target || c.rows != data.train.rows() {
            return Err(format!(
                "the checkpoint is of a search over inputs {} and target `{}` on {} rows, not \
                 of this data ({} -> `{}`, {} rows)",
                c.inputs.join(","),
                c.target,
                c.rows,
                data.inputs.join(","),
                data.target,
                data.train.rows()
            ));
        }
        let print = data.fingerprint();
        if c.data.is_empty() {
            log::warn!("the checkpoint has no fingerprint of its data: it is not checked");
        } else if c.data != print {
            return Err(format!(
                "the checkpoint is of a search on other data: the same columns and {} rows, but \
                 other values in the training or test files (fingerprint {} in the checkpoint, \
                 {print} of these files); give the files it ran on, or start a new search",
                c.rows, c.data
            ));
        }
        let k = c.options.islands.max(1);
        let numbers: Vec<usize> = c.shards.iter().map(|s| s.index).collect();
        if numbers != (0..k).collect::<Vec<_>>() {
            return Err(format!(
                "the checkpoint holds islands {numbers:?} of a search of {k}: it is damaged"
            ));
        }
        let mut e = Engine::new(c.options, data, threads, Vec::new())?;
        e.epoch = c.epoch;
        e.steps = c.steps;
        e.history = c.history;
        e.earlier_seconds = c.seconds;
        e.injected = c.injected;
        e.load_states(c.shards)?;
        Ok(e)
    }

    /// Replaces the islands' states with `states` (each by its number: islands of this engine
    /// only), checking that they hold only programs this search can have.
    pub fn load_states(&mut self, states: Vec<ShardState>) -> Result<(), String> {
        for s in states {
            let Some(at) = self.shards.iter().position(|x| x.index == s.index) else {
                return Err(format!("island {} is not one of this search's", s.index));
            };
            // The islands hold what the grammar admits; the hall of fame also programs from
            // outside, of any shape, that only need to be programs of this data.
            let bad = {
                let mut members = s.island.members.iter().map(|m| &m.genome);
                let mut hall = s.hall.members().filter_map(|m| m.genome.as_ref());
                members
                    .find(|g| !self.grammar.admits(g))
                    .or_else(|| hall.find(|g| !self.grammar.readable(g)))
                    .map(|g| format!("{g:?}"))
            };
            if let Some(bad) = bad {
                return Err(format!(
                    "the state of island {} holds a program this search cannot have \
                     ({bad}): it is damaged, or of other data or settings",
                    s.index
                ));
            }
            if s.generation > 0 {
                // The seeds went to the islands in their first generation.
                self.seeds.clear();
            }
            self.shards[at] = Shard::from_state(s, self.options.cache_capacity);
        }
        self.gather();
        Ok(())
    }

    /// The state to continue from.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            options: self.options.clone(),
            inputs: self.data.inputs.clone(),
            target: self.data.target.clone(),
            rows: self.data.train.rows(),
            data: self.data.fingerprint(),
            epoch: self.epoch,
            steps: self.steps,
            shards: self.shards.iter().map(|s| s.state(true)).collect(),
            seconds: self.seconds(),
            history: self.history.clone(),
            injected: self.injected,
        }
    }

    /// A flag that, once set (the budget's end, a signal), cancels the walks in progress:
    /// the fits they belong to are dropped, as if the stop had come before them, and nothing
    /// of them reaches the islands or the cache. `None` lets every walk finish.
    pub fn set_cancel(&mut self, flag: Option<Arc<AtomicBool>>) {
        self.workers.set_cancel(flag.clone());
        self.cancel = flag;
    }

    /// Seconds searched, earlier runs included.
    pub fn seconds(&self) -> f64 {
        self.earlier_seconds + self.started.elapsed().as_secs_f64()
    }

    /// Runs generations of every island until `stop`, the islands migrating every
    /// `migration_interval` generations; `after` is called after each generation.
    pub fn run(&mut self, feed: &mut dyn Feed, stop: &Stop, after: &mut dyn FnMut(&Engine)) {
        loop {
            if stop.now() || self.shards.iter().all(|s| self.done(s, stop)) {
                break;
            }
            if !self.generation_step(feed, stop) {
                break;
            }
            self.steps += 1;
            if self.options.migration_interval > 0 && self.steps == self.options.migration_interval
            {
                let arrivals = self.arrivals();
                self.migrated(arrivals);
            }
            after(self);
            if let Some(e) = self.early_stop {
                if self.hall.members().any(|m| e.reached(m.complexity, m.loss)) {
                    self.stopped_early = true;
                    break;
                }
            }
        }
    }

    /// Why the run under `stop` ended: `early-stop`, or [`Stop::reason`]'s.
    pub fn stop_reason(&self, stop: &Stop) -> &'static str {
        if self.stopped_early {
            "early-stop"
        } else {
            stop.reason(self.counters.evaluations)
        }
    }

    /// One epoch of an island run alone: takes in `arrivals`, then runs generations until the
    /// next migration is due, its share of `stop.max_evals` is spent, or the stop.
    pub fn epoch(&mut self, arrivals: Vec<Arrival>, stop: &Stop) -> EpochReport {
        let cap = self.options.population;
        if let Some(s) = self.shards.first_mut() {
            s.admit(arrivals, cap);
        }
        self.steps = 0;
        let interval = self.options.migration_interval;
        let live = |e: &Engine| !stop.now() && e.shards.iter().any(|s| !e.done(s, stop));
        while (interval == 0 || self.steps < interval) && live(self) {
            if !self.generation_step(&mut NoFeed, stop) {
                return EpochReport {
                    steps: self.steps,
                    live: false,
                };
            }
            self.steps += 1;
        }
        EpochReport {
            steps: self.steps,
            live: live(self),
        }
    }

    /// Whether island `s` has spent its share of `stop.max_evals`.
    pub(super) fn done(&self, s: &Shard, stop: &Stop) -> bool {
        stop.max_evals
            .is_some_and(|m| s.counters.evaluations >= share(m, self.options.islands, s.index))
    }

    /// The hall of fame and the counters of every island here, gathered again.
    pub(super) fn gather(&mut self) {
        let mut hall = HallOfFame::default();
        let mut c = Counters::default();
        for s in &self.shards {
            for m in s.hall.members() {
                hall.offer(m);
            }
            let t = &s.counters;
            c.evaluations += t.evaluations;
            c.fits += t.fits;
            c.cache_hits += t.cache_hits;
            c.decodes_reused += t.decodes_reused;
            c.failed += t.failed;
            c.distinct_skeletons += t.distinct_skeletons;
            c.walks += t.walks;
            c.row_nodes += t.row_nodes;
            c.generations = c.generations.max(t.generations);
        }
        self.hall = hall;
        self.counters = c;
        if let Some(b) = self.hall.best_loss() {
            if self.history.last().is_none_or(|&(_, l)| b < l) {
                self.history.push((self.seconds(), b));
            }
        }
    }

    /// What each island receives at the migration due now (of an engine holding every
    /// island): members of the hall of fame of all islands, and the next island's tournament
    /// winners, by island.
    pub fn arrivals(&self) -> Vec<Vec<Arrival>> {
        let k = self.shards.len();
        let hall: Vec<(&Genome, f64)> = self
            .hall
            .members()
            .filter_map(|m| Some((m.genome.as_ref()?, m.loss)))
            .collect();
        let from_hall = self.options.migrants.div_ceil(2);
        let mut out = Vec::with_capacity(k);
        for i in 0..k {
            let index = self.shards[i].index as u64;
            let mut arrive = Vec::new();
            let mut rng = rng_for(self.options.seed, &[3, index, self.epoch]);
            for _ in 0..from_hall {
                if hall.is_empty() {
                    break;
                }
                let (g, loss) = hall[below(&mut rng, hall.len())];
                let src = emit::source(g, &self.names);
                arrive.push(Arrival {
                    genome: g.clone(),
                    loss,
                    src,
                });
            }
            if k > 1 {
                let mut rng = rng_for(self.options.seed, &[5, index, self.epoch]);
                let next = &self.shards[(i + 1) % k].island;
                let crowd = next.crowd(&self.grammar);
                for _ in from_hall..self.options.migrants {
                    let pick = next.select(&mut rng, &self.pressure, &crowd, &self.grammar);
                    if let Some((m, _)) = pick {
                        arrive.push(Arrival {
                            genome: m.genome.clone(),
                            loss: m.loss,
                            src: m.src.clone(),
                        });
                    }
                }
            }
            out.push(arrive);
        }
        out
    }

    /// Takes in a migration's arrivals (by island, as [`Engine::arrivals`] gives them) and
    /// counts the migration.
    pub fn migrated(&mut self, arrivals: Vec<Vec<Arrival>>) {
        let cap = self.options.population;
        for (s, a) in self.shards.iter_mut().zip(arrivals) {
            s.admit(a, cap);
        }
        self.epoch += 1;
        self.steps = 0;
    }
}

/// The rows the search fits on: every training row, or `n` of them drawn with `seed` (in
/// file order).
/// The training rows a fit counts, scored as `options` say: every row, or every row of
/// positive weight (a row of weight 0 counts for nothing, and is not fitted on).
pub(super) fn train_rows(data: &Data, options: &Options) -> Rows {
    let program_loss = loss_program(data, options).ok().flatten();
    match &data.train.w {
        Some(w) if w.iter().any(|&x| x == 0.0) => {
            let idx: Vec<usize> = (0..w.len()).filter(|&r| w[r] > 0.0).collect();
            Rows::of(&data.train.select(&idx), &data.inputs)
        }
        _ => Rows::of(&data.train, &data.inputs),
    }
    .scored_by(options.loss)
    .with_program_loss(program_loss)
}

/// The loss program of `options` read for `data`'s inputs.
fn loss_program(data: &Data, options: &Options) -> Result<Option<Arc<ProgramLoss>>, String> {
    options
        .loss_program
        .as_deref()
        .map(|text| ProgramLoss::parse(text, &data.inputs).map(Arc::new))
        .transpose()
}

fn sample_rows(data: &Data, options: &Options) -> Rows {
    let (n, seed) = (options.fit_rows, options.seed);
    // Rows of weight 0 count for nothing: they are not drawn.
    let weighted: Vec<usize> = match &data.train.w {
        Some(w) => (0..w.len()).filter(|&r| w[r] > 0.0).collect(),
        None => (0..data.train.rows()).collect(),
    };
    let total = weighted.len();
    if (n == 0 || n >= total) && total == data.train.rows() {
        return Rows::of(&data.train, &data.inputs).scored_by(options.loss);
    }
    let mut idx = weighted;
    if n > 0 && n < total {
        let mut rng = rng_for(seed, &[0]);
        for i in 0..n {
            let j = i + below(&mut rng, total - i);
            idx.swap(i, j);
        }
        idx.truncate(n);
    }
    idx.sort_unstable();
    Rows::of(&data.train.select(&idx), &data.inputs).scored_by(options.loss)
}
