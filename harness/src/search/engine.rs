//! The search loop, one generation at a time: propose (every island's children, and the
//! outside proposer's candidates in the order they came), simplify and deduplicate against the
//! skeleton cache, fit the new candidates over the worker threads, then, in candidate order,
//! score them, update the islands and the hall of fame, and answer the outside proposer. Every
//! random choice is drawn from a generator seeded by (seed, island, generation), and results are
//! merged in candidate order, never in completion order, so a count-bounded search gives the
//! same bytes on any number of threads.

use super::cache::{Cache, Saved};
use super::candidate::{self, Candidate, Fitted, Origin, Rows};
use super::convert;
use super::dataset::Data;
use super::emit::{self, Names};
use super::expr::Genome;
use super::feed::{Answer, Feed, Incoming};
use super::front::{HallOfFame, Member};
use super::generate::{below, Grammar};
use super::options::Options;
use super::population::{Crowd, Island, Pressure};
use crate::calibrate::workers::{Evaluator, Workers};
use crate::rng::SplitMix;
use runtime_cpu::{Program, Session};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
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
    /// The next generation.
    pub generation: u64,
    /// The islands.
    pub islands: Vec<Island>,
    /// The hall of fame.
    pub hall: HallOfFame,
    /// The counters.
    pub counters: Counters,
    /// The skeleton cache.
    pub cache: Vec<Saved>,
    /// Seconds searched so far.
    pub seconds: f64,
    /// Best loss against seconds.
    pub history: Vec<(f64, f64)>,
    /// Programs from the outside proposer or seeds admitted to the islands so far.
    pub injected: u64,
    /// Hashes of the skeletons fitted so far, sorted.
    pub seen: Vec<u64>,
}

/// When the loop stops.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    /// After this many evaluations (over the whole search, resumed runs included).
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

    fn now(&self) -> bool {
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

/// A running search.
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
    /// The islands.
    pub islands: Vec<Island>,
    /// The hall of fame.
    pub hall: HallOfFame,
    /// The counters.
    pub counters: Counters,
    /// Best loss against seconds.
    pub history: Vec<(f64, f64)>,
    /// The next generation.
    pub generation: u64,
    /// Seconds of earlier runs (a resumed search).
    pub earlier_seconds: f64,
    /// When this run started.
    pub started: Instant,
    seeds: Vec<Candidate>,
    injected: u64,
    cache: Cache,
    /// Hashes of every skeleton fitted (the cache forgets; this counts distinct skeletons).
    seen: HashSet<u64>,
    pub(super) workers: Workers<f64>,
    pressure: Pressure,
}

/// What is to be done with one candidate of a batch.
enum Plan {
    /// Fit job `j`.
    Fit(usize),
    /// The same skeleton as job `j` of this batch.
    Same(usize),
    /// Known from the cache.
    Cached(Vec<f64>, Result<f64, String>),
    /// Failed before fitting.
    Failed(String),
    /// A proposer's line that is no candidate.
    Bad,
}

struct Job {
    program: Program,
    params: Vec<String>,
    init: Vec<f64>,
    seed: u64,
    restarts: usize,
}

impl Engine {
    /// A new search over `data` on `threads` workers, starting from `seeds` (programs as text).
    pub fn new(
        options: Options,
        data: Data,
        threads: usize,
        seeds: Vec<Candidate>,
    ) -> Result<Engine, String> {
        let ops = options.op_set()?;
        let count_inputs = data.count_columns(options.max_count_value);
        let iterate = match options.iterate {
            super::options::Iterate::Auto => !count_inputs.is_empty(),
            super::options::Iterate::On => true,
            super::options::Iterate::Off => false,
        };
        let grammar = Grammar {
            ops,
            inputs: data.inputs.len(),
            count_inputs,
            max_fixed_count: options.max_fixed_count,
            iterate,
            share: options.share,
            max_size: options.max_complexity,
            // The genome's own code recurses over trees: keep them far from the stack's end.
            max_depth: options.max_depth.min(MAX_DEPTH),
        };
        let names = Names::new(&data.inputs);
        let fit_rows = sample_rows(&data, options.fit_rows, options.seed);
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
        Ok(Engine {
            islands: vec![Island::default(); options.islands.max(1)],
            hall: HallOfFame::default(),
            counters: Counters::default(),
            history: Vec::new(),
            generation: 0,
            earlier_seconds: 0.0,
            started: Instant::now(),
            seeds,
            injected: 0,
            cache: Cache::new(options.cache_capacity),
            seen: HashSet::new(),
            workers,
            pressure,
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
        let mut e = Engine::new(c.options, data, threads, Vec::new())?;
        e.generation = c.generation;
        e.islands = c.islands;
        e.hall = c.hall;
        e.counters = c.counters;
        e.history = c.history;
        e.earlier_seconds = c.seconds;
        e.injected = c.injected;
        e.seen = c.seen.into_iter().collect();
        e.cache.load(c.cache);
        let members = e
            .islands
            .iter()
            .flat_map(|i| i.members.iter().map(|m| &m.genome));
        let hall = e.hall.members().filter_map(|m| m.genome.as_ref());
        if let Some(bad) = members.chain(hall).find(|g| !e.grammar.admits(g)) {
            return Err(format!(
                "the checkpoint holds a program this search cannot have ({bad:?}): it is \
                 damaged, or of other data or settings"
            ));
        }
        Ok(e)
    }

    /// The state to continue from.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            options: self.options.clone(),
            inputs: self.data.inputs.clone(),
            target: self.data.target.clone(),
            rows: self.data.train.rows(),
            generation: self.generation,
            islands: self.islands.clone(),
            hall: self.hall.clone(),
            counters: self.counters.clone(),
            cache: self.cache.save(),
            seconds: self.seconds(),
            history: self.history.clone(),
            injected: self.injected,
            seen: {
                let mut v: Vec<u64> = self.seen.iter().copied().collect();
                v.sort_unstable();
                v
            },
        }
    }

    /// Seconds searched, earlier runs included.
    pub fn seconds(&self) -> f64 {
        self.earlier_seconds + self.started.elapsed().as_secs_f64()
    }

    /// Runs generations until `stop`; `after` is called after each one.
    pub fn run(&mut self, feed: &mut dyn Feed, stop: &Stop, after: &mut dyn FnMut(&Engine)) {
        loop {
            if stop.now() || self.evals_left(stop) == Some(0) {
                break;
            }
            if !self.generation_step(feed, stop) {
                break;
            }
            after(self);
        }
    }

    fn evals_left(&self, stop: &Stop) -> Option<u64> {
        stop.max_evals
            .map(|m| m.saturating_sub(self.counters.evaluations))
    }

    /// The built-in proposer's candidates of this generation: a random first population, then
    /// every island's children.
    fn proposals(&mut self) -> Vec<Candidate> {
        let mut out = Vec::new();
        let g = self.generation;
        let first = self.islands.iter().all(|i| i.members.is_empty());
        for (i, island) in self.islands.iter().enumerate() {
            let mut rng = rng_for(self.options.seed, &[1, i as u64, g]);
            if first {
                for _ in 0..self.options.population {
                    let genome = self.grammar.random_admitted(&mut rng);
                    let origin = Origin::Island(i as u16);
                    out.push(Candidate::from_genome(genome, &self.names, origin, false));
                }
            } else {
                out.extend(island.offspring(
                    &mut rng,
                    self.options.offspring,
                    &self.grammar,
                    &self.options.weights,
                    &self.pressure,
                    &self.names,
                    i as u16,
                ));
            }
        }
        out
    }

    /// One generation; false when there is nothing more to do.
    fn generation_step(&mut self, feed: &mut dyn Feed, stop: &Stop) -> bool {
        let mut batch: Vec<Incoming> = if feed.alive() {
            let far = Instant::now() + std::time::Duration::from_secs(86_400);
            let wait = stop.proposer_only.then(|| stop.deadline.unwrap_or(far));
            feed.take(wait)
        } else {
            Vec::new()
        };
        let from_feed = batch.len();
        // The seeds (`--seed-programs`) come first, once, whoever else proposes.
        batch.extend(
            std::mem::take(&mut self.seeds)
                .into_iter()
                .map(Incoming::Program),
        );
        if !stop.proposer_only {
            batch.extend(self.proposals().into_iter().map(Incoming::Program));
        }
        if batch.is_empty() {
            // Nothing came, and nothing will from the built-in proposer: go on waiting only
            // while an outside proposer may still send something.
            return stop.proposer_only && feed.alive() && !stop.now();
        }
        if let Some(left) = self.evals_left(stop) {
            let mut kept = 0u64;
            let mut dropped = Vec::new();
            batch.retain(|c| {
                let Incoming::Program(p) = c else {
                    return true;
                };
                kept += 1;
                if kept > left {
                    dropped.push(p.clone());
                }
                kept <= left
            });
            for c in dropped.iter().filter(|c| c.origin == Origin::Proposer) {
                feed.answer(
                    &self.failure(c, "the search reached --max-evals before this candidate"),
                );
            }
        }
        let (plans, jobs) = self.plan(&batch);
        let fits = self.fit_jobs(&jobs, stop);
        self.merge(batch, plans, &jobs, fits, feed);
        if from_feed > 0 || (feed.every_generation() && feed.alive()) {
            let front = self.hall.front();
            feed.front(&front, self);
        }
        self.generation += 1;
        self.counters.generations += 1;
        if self.options.migration_interval > 0
            && self.generation % self.options.migration_interval == 0
        {
            self.migrate();
        }
        let best = self.hall.best_loss();
        if let Some(b) = best {
            if self.history.last().is_none_or(|&(_, l)| b < l) {
                self.history.push((self.seconds(), b));
            }
        }
        true
    }

    /// Decides, in candidate order, what each candidate needs.
    fn plan(&mut self, batch: &[Incoming]) -> (Vec<Plan>, Vec<Job>) {
        let mut jobs: Vec<Job> = Vec::new();
        let mut pending: HashMap<&str, usize> = HashMap::new();
        let mut plans = Vec::with_capacity(batch.len());
        for (k, item) in batch.iter().enumerate() {
            let Incoming::Program(c) = item else {
                plans.push(Plan::Bad);
                continue;
            };
            let seed = rng_for(self.options.seed, &[2, self.generation, k as u64]).next_u64();
            let looped = match &c.genome {
                Some(g) => g.roots().any(|r| r.has_iterate()),
                None => convert::has_loop(&c.src),
            };
            let fit = &self.options.fit;
            let restarts = if looped {
                fit.loop_restarts
            } else {
                fit.restarts
            };
            let job = |program: Program| Job {
                program,
                params: c.params.clone(),
                init: c.init.clone(),
                seed,
                restarts,
            };
            let plan = if let Some(e) = self.cache.get(&c.src) {
                if c.perturbed {
                    self.counters.decodes_reused += 1;
                    jobs.push(job(e.program.clone()));
                    Plan::Fit(jobs.len() - 1)
                } else {
                    Plan::Cached(e.values.clone(), e.loss.clone())
                }
            } else if let (Some(&j), false) = (pending.get(c.src.as_str()), c.perturbed) {
                Plan::Same(j)
            } else {
                match Program::parse(&c.src) {
                    Ok(p) => {
                        jobs.push(job(p));
                        pending.insert(&c.src, jobs.len() - 1);
                        Plan::Fit(jobs.len() - 1)
                    }
                    Err(e) => Plan::Failed(format!("does not parse: {e}")),
                }
            };
            plans.push(plan);
        }
        (plans, jobs)
    }

    /// Fits the jobs over the workers; `None` for a job the stop came before.
    fn fit_jobs(&mut self, jobs: &[Job], stop: &Stop) -> Vec<Option<Fitted>> {
        let rows = &self.fit_rows;
        let fit = &self.options.fit;
        self.workers.each(jobs.len(), &|j, s| {
            if stop.now() {
                return None;
            }
            let job = &jobs[j];
            let settings = candidate::FitSettings {
                restarts: job.restarts,
                ..fit.clone()
            };
            // A bug of ndvm that panics fails this candidate, not the search.
            let fitted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                candidate::fit(
                    s,
                    &job.program,
                    &job.params,
                    &job.init,
                    rows,
                    &settings,
                    job.seed,
                )
            }));
            Some(fitted.unwrap_or_else(|_| {
                Fitted {
                    params: job.init.clone(),
                    loss: Err(
                        "internal error: the fit panicked (a bug of ndvm; please report \
                           this program)"
                            .into(),
                    ),
                    walks: 0,
                    lanes: 0,
                }
            }))
        })
    }

    /// Takes the results in, in candidate order.
    fn merge(
        &mut self,
        batch: Vec<Incoming>,
        plans: Vec<Plan>,
        jobs: &[Job],
        fits: Vec<Option<Fitted>>,
        feed: &mut dyn Feed,
    ) {
        let crowds: Vec<Crowd> = self.islands.iter().map(Island::crowd).collect();
        for (k, (item, plan)) in batch.into_iter().zip(plans).enumerate() {
            let c = match item {
                Incoming::Bad { id, src, error } => {
                    feed.answer(&Answer {
                        id,
                        src,
                        params: Vec::new(),
                        train_loss: None,
                        complexity: None,
                        tests: Vec::new(),
                        error: Some(error),
                    });
                    continue;
                }
                Incoming::Program(c) => c,
            };
            let proposed = c.origin == Origin::Proposer;
            let Some((values, loss)) = self.resolve(&c, &plan, jobs, &fits) else {
                if proposed {
                    let why = "the search stopped before this candidate was fitted";
                    feed.answer(&self.failure(&c, why));
                }
                continue;
            };
            match loss {
                Ok(loss) => {
                    let member = self.take_in(k, &c, values, loss, &crowds);
                    if proposed {
                        let a = self.answer(&c, &member);
                        feed.answer(&a);
                    }
                }
                Err(e) => {
                    self.counters.failed += 1;
                    if proposed {
                        feed.answer(&self.failure(&c, &e));
                    }
                }
            }
        }
    }

    /// A candidate's fitted values and loss (or failure), counted; `None` when the stop came
    /// before its fit.
    fn resolve(
        &mut self,
        c: &Candidate,
        plan: &Plan,
        jobs: &[Job],
        fits: &[Option<Fitted>],
    ) -> Option<(Vec<f64>, Result<f64, String>)> {
        let (values, loss) = match plan {
            Plan::Fit(j) => {
                let f = fits[*j].as_ref()?;
                self.counters.fits += 1;
                self.counters.walks += f.walks as u64;
                self.counters.row_nodes += (f.lanes * c.complexity) as u64;
                self.cache
                    .record(&c.src, &jobs[*j].program, &f.params, &f.loss);
                let mut h = std::collections::hash_map::DefaultHasher::new();
                c.src.hash(&mut h);
                self.counters.distinct_skeletons += u64::from(self.seen.insert(h.finish()));
                (f.params.clone(), f.loss.clone())
            }
            Plan::Same(j) => {
                let f = fits[*j].as_ref()?;
                self.counters.cache_hits += 1;
                (f.params.clone(), f.loss.clone())
            }
            Plan::Cached(v, l) => {
                self.counters.cache_hits += 1;
                (v.clone(), l.clone())
            }
            Plan::Failed(e) => (c.init.clone(), Err(e.clone())),
            Plan::Bad => return None,
        };
        self.counters.evaluations += 1;
        let loss = loss.and_then(|l| {
            if l.is_finite() {
                Ok(l)
            } else {
                Err("non-finite loss".to_string())
            }
        });
        Some((values, loss))
    }

    /// A fitted candidate into the hall of fame, and onto an island when it is a genome (its
    /// own island's, if it passes the acceptance; a proposer's or a seed's in turn).
    fn take_in(
        &mut self,
        k: usize,
        c: &Candidate,
        values: Vec<f64>,
        loss: f64,
        crowds: &[Crowd],
    ) -> Member {
        let genome = self.fitted_genome(c, &values);
        // A program given as text counts as its genome when it reads as one.
        let complexity = genome.as_ref().map_or(c.complexity, Genome::size);
        let member = Member {
            src: c.src.clone(),
            params: c.params.clone(),
            values,
            loss,
            complexity,
            genome: genome.clone(),
            origin: c.origin,
        };
        self.hall.offer(&member);
        let Some(g) = genome else {
            return member;
        };
        let cap = self.options.population;
        match c.origin {
            Origin::Island(i) => {
                let mut rng = rng_for(self.options.seed, &[4, self.generation, k as u64]);
                let score = self.pressure.score(loss, complexity, &crowds[i as usize]);
                if self.pressure.accept(score, c.parent_score, &mut rng) {
                    self.islands[i as usize].admit(g, loss, &c.src, cap);
                }
            }
            Origin::Proposer | Origin::Seed if self.grammar.admits(&g) => {
                let i = (self.injected % self.islands.len() as u64) as usize;
                self.injected += 1;
                let src = emit::source(&g, &self.names);
                self.islands[i].admit(g, loss, &src, cap);
            }
            _ => {}
        }
        member
    }

    /// The candidate's genome with its fitted values: its own, or the program read as one (of
    /// any size: [`Grammar::admits`] says whether it may join an island).
    fn fitted_genome(&self, c: &Candidate, values: &[f64]) -> Option<Genome> {
        if let Some(g) = &c.genome {
            let mut g = g.clone();
            g.set_constants(values);
            return Some(g);
        }
        let init: HashMap<String, f64> = c
            .params
            .iter()
            .cloned()
            .zip(values.iter().copied())
            .collect();
        convert::to_genome(&c.src, &self.data.inputs, &self.grammar.count_inputs, &init)
    }

    fn failure(&self, c: &Candidate, error: &str) -> Answer {
        Answer {
            id: c.id.clone(),
            src: Some(c.src.clone()),
            params: Vec::new(),
            train_loss: None,
            complexity: Some(c.complexity),
            tests: Vec::new(),
            error: Some(error.to_string()),
        }
    }

    /// The answer to a fitted candidate, scored on every test set.
    fn answer(&mut self, c: &Candidate, m: &Member) -> Answer {
        let tests = self.test_scores(m);
        Answer {
            id: c.id.clone(),
            src: Some(c.src.clone()),
            params: m
                .params
                .iter()
                .cloned()
                .zip(m.values.iter().copied())
                .collect(),
            train_loss: Some(m.loss),
            complexity: Some(m.complexity),
            tests,
            error: None,
        }
    }

    /// Every island receives migrants: members of the hall of fame, and the next island's
    /// best.
    fn migrate(&mut self) {
        let k = self.islands.len();
        let hall: Vec<&Member> = self.hall.members().filter(|m| m.genome.is_some()).collect();
        let mut arrivals: Vec<Vec<(Genome, f64, String)>> = vec![Vec::new(); k];
        for (i, arrive) in arrivals.iter_mut().enumerate() {
            let mut rng = rng_for(self.options.seed, &[3, i as u64, self.generation]);
            let from_hall = self.options.migrants.div_ceil(2);
            for _ in 0..from_hall {
                if hall.is_empty() {
                    break;
                }
                let m = hall[below(&mut rng, hall.len())];
                if let Some(g) = &m.genome {
                    arrive.push((g.clone(), m.loss, emit::source(g, &self.names)));
                }
            }
            if k > 1 {
                let next = &self.islands[(i + 1) % k];
                let crowd = next.crowd();
                for _ in from_hall..self.options.migrants {
                    if let Some((m, _)) = next.select(&mut rng, &self.pressure, &crowd) {
                        arrive.push((m.genome.clone(), m.loss, m.src.clone()));
                    }
                }
            }
        }
        let cap = self.options.population;
        for (island, arrive) in self.islands.iter_mut().zip(arrivals) {
            for (g, l, src) in arrive {
                island.admit(g, l, &src, cap);
            }
        }
    }
}

/// The rows the search fits on: every training row, or `n` of them drawn with `seed` (in
/// file order).
fn sample_rows(data: &Data, n: usize, seed: u64) -> Rows {
    let total = data.train.rows();
    if n == 0 || n >= total {
        return Rows::of(&data.train, &data.inputs);
    }
    let mut idx: Vec<usize> = (0..total).collect();
    let mut rng = rng_for(seed, &[0]);
    for i in 0..n {
        let j = i + below(&mut rng, total - i);
        idx.swap(i, j);
    }
    let mut pick = idx[..n].to_vec();
    pick.sort_unstable();
    Rows::of(&data.train.select(&pick), &data.inputs)
}
