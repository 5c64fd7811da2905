//! One generation of the islands an engine runs: each island's batch (the seeds and outside
//! proposer's candidates that fall to it, then its own children), planned against its skeleton
//! cache, every island's fits over one pool of threads, then each island's results taken in
//! candidate order. The outside proposer's candidates go to the islands in turn, and their
//! answers are sent in the order the candidates came.

use super::candidate::{self, Candidate, Fitted, Origin};
use super::convert;
use super::emit;
use super::engine::{rng_for, Engine, Stop};
use super::expr::Genome;
use super::feed::{Answer, Feed, Incoming};
use super::front::Member;
use super::population::Crowd;
use super::shard::{share, Shard};
use crate::calibrate::workers::Evaluator;
use runtime_cpu::Program;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// What is to be done with one candidate of a batch.
enum Plan {
    /// Fit job `j`; true when it reuses a cached decode.
    Fit(usize, bool),
    /// The same skeleton as job `j` of this batch.
    Same(usize),
    /// Known from the cache.
    Cached(Vec<f64>, Result<f64, String>),
    /// Failed before fitting.
    Failed(String),
}

struct Job {
    program: Program,
    params: Vec<String>,
    init: Vec<f64>,
    seed: u64,
    restarts: usize,
}

/// One island's candidates of a generation: each with its place in the order the outside
/// proposer's lines and the seeds came (`None` for the island's own children).
type Batch = Vec<(Option<usize>, Candidate)>;

impl Engine {
    /// One generation of every island that has not spent its share; false when there is
    /// nothing more to do.
    pub(super) fn generation_step(&mut self, feed: &mut dyn Feed, stop: &Stop) -> bool {
        // The seeds (`--seed-programs`) come first, once, whoever else proposes.
        let mut incoming: Vec<Incoming> = std::mem::take(&mut self.seeds)
            .into_iter()
            .map(Incoming::Program)
            .collect();
        if feed.alive() {
            let far = Instant::now() + std::time::Duration::from_secs(86_400);
            let wait = stop.proposer_only.then(|| stop.deadline.unwrap_or(far));
            incoming.extend(feed.take(wait));
        }
        let from_feed = incoming.iter().any(|c| match c {
            Incoming::Program(c) => c.origin == Origin::Proposer,
            Incoming::Bad { .. } => true,
        });
        let mut answers: Vec<(usize, Answer)> = Vec::new();
        let mut batches: Vec<Batch> = vec![Vec::new(); self.shards.len()];
        let islands = self.options.islands.max(1) as u64;
        for (pos, item) in incoming.into_iter().enumerate() {
            match item {
                Incoming::Program(c) => {
                    let island = (self.injected % islands) as usize;
                    self.injected += 1;
                    if let Some(s) = self.shards.iter().position(|s| s.index == island) {
                        batches[s].push((Some(pos), c));
                    }
                }
                Incoming::Bad { id, src, error } => answers.push((
                    pos,
                    Answer {
                        id,
                        src,
                        params: Vec::new(),
                        train_loss: None,
                        complexity: None,
                        tests: Vec::new(),
                        error: Some(error),
                    },
                )),
            }
        }
        let live: Vec<bool> = self.shards.iter().map(|s| !self.done(s, stop)).collect();
        for (s, batch) in batches.iter_mut().enumerate() {
            if live[s] && !stop.proposer_only {
                let own = self.proposals(&self.shards[s]);
                batch.extend(own.into_iter().map(|c| (None, c)));
            }
            if let Some(m) = stop.max_evals {
                let sh = &self.shards[s];
                let left = share(m, self.options.islands, sh.index)
                    .saturating_sub(sh.counters.evaluations) as usize;
                for (pos, c) in batch.drain(left.min(batch.len())..) {
                    if let Some(pos) = pos.filter(|_| c.origin == Origin::Proposer) {
                        let why = "the search reached --max-evals before this candidate";
                        answers.push((pos, self.failure(&c, why)));
                    }
                }
            }
        }
        if batches.iter().all(Vec::is_empty) && answers.is_empty() {
            // Nothing came, and nothing will from the built-in proposer: go on waiting only
            // while an outside proposer may still send something.
            return stop.proposer_only && feed.alive() && !stop.now();
        }
        let mut plans = Vec::with_capacity(batches.len());
        let mut jobs = Vec::new();
        for (s, batch) in batches.iter().enumerate() {
            let (p, j) = self.plan(s, batch);
            plans.push((jobs.len()..jobs.len() + j.len(), p));
            jobs.extend(j);
        }
        let fits = self.fit_jobs(&jobs, stop);
        for (s, (batch, (range, plan))) in batches.into_iter().zip(plans).enumerate() {
            let mut shard = std::mem::take(&mut self.shards[s]);
            let (j, f) = (&jobs[range.clone()], &fits[range]);
            self.merge(&mut shard, batch, plan, j, f, &mut answers);
            if live[s] {
                shard.generation += 1;
                shard.counters.generations += 1;
            }
            self.shards[s] = shard;
        }
        answers.sort_by_key(|(pos, _)| *pos);
        for (_, a) in &answers {
            feed.answer(a);
        }
        self.gather();
        if from_feed || (feed.every_generation() && feed.alive()) {
            let front = self.hall.front();
            feed.front(&front, self);
        }
        true
    }

    /// Island `s`'s candidates of this generation: a random population while it is empty,
    /// then its children.
    fn proposals(&self, s: &Shard) -> Vec<Candidate> {
        let i = s.index as u64;
        let mut rng = rng_for(self.options.seed, &[1, i, s.generation]);
        let origin = Origin::Island(s.index as u16);
        if s.island.members.is_empty() {
            return (0..self.options.population)
                .map(|_| {
                    let genome = self.grammar.random_admitted(&mut rng);
                    Candidate::from_genome(genome, &self.names, origin, false)
                })
                .collect();
        }
        s.island.offspring(
            &mut rng,
            self.options.offspring,
            &self.grammar,
            &self.options.weights,
            &self.pressure,
            &self.names,
            s.index as u16,
        )
    }

    /// Decides, in candidate order, what each of island `s`'s candidates needs; its jobs'
    /// numbers count from 0.
    fn plan(&self, s: usize, batch: &Batch) -> (Vec<Plan>, Vec<Job>) {
        let shard = &self.shards[s];
        let mut jobs: Vec<Job> = Vec::new();
        // Jobs of this batch by text (the island's own candidates) or by text and starting
        // values (candidates from outside).
        let mut pending: HashMap<(&str, Vec<u64>), usize> = HashMap::new();
        let mut plans = Vec::with_capacity(batch.len());
        for (k, (_, c)) in batch.iter().enumerate() {
            // A candidate from outside (a proposer's line, a seed program) is fitted from its
            // own starting values with a seed drawn from its text and those values, so that
            // its answer is the same whichever island it falls to and whatever came before;
            // the cache may only spare it the decode.
            let outside = !matches!(c.origin, Origin::Island(_));
            let seed = if outside {
                rng_for(self.options.seed, &[3, content_hash(&c.src, &c.init)]).next_u64()
            } else {
                let parts = [2, shard.index as u64, shard.generation, k as u64];
                rng_for(self.options.seed, &parts).next_u64()
            };
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
            let key = (
                c.src.as_str(),
                if outside {
                    c.init.iter().map(|x| x.to_bits()).collect()
                } else {
                    Vec::new()
                },
            );
            let refit = outside || c.perturbed;
            let cached = shard.cache.get(&c.src).filter(|e| {
                // A failure is an answer only for the start that failed.
                let same_start = e.start.len() == c.init.len()
                    && e.start
                        .iter()
                        .zip(&c.init)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                !refit && (e.loss.is_ok() || same_start)
            });
            let plan = if let Some(e) = cached {
                Plan::Cached(e.values.to_vec(), e.loss.clone())
            } else if let (Some(&j), false) = (pending.get(&key), c.perturbed) {
                Plan::Same(j)
            } else if let Some(p) = shard.cache.decoded(&c.src) {
                jobs.push(job(p.clone()));
                pending.entry(key).or_insert(jobs.len() - 1);
                Plan::Fit(jobs.len() - 1, true)
            } else {
                match self.fit_rows.program(&c.src) {
                    Ok(p) => {
                        jobs.push(job(p));
                        pending.entry(key).or_insert(jobs.len() - 1);
                        Plan::Fit(jobs.len() - 1, false)
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
        let cancel = self.cancel.clone();
        let cancelled = move || cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
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
            // A fit whose walks were cancelled is not an answer.
            if cancelled() {
                return None;
            }
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

    /// Takes island `shard`'s results in, in candidate order; the answers to the outside
    /// proposer's candidates go to `answers` with their places.
    fn merge(
        &mut self,
        shard: &mut Shard,
        batch: Batch,
        plans: Vec<Plan>,
        jobs: &[Job],
        fits: &[Option<Fitted>],
        answers: &mut Vec<(usize, Answer)>,
    ) {
        let crowd = shard.island.crowd(&self.grammar);
        for (k, ((pos, c), plan)) in batch.into_iter().zip(plans).enumerate() {
            let pos = pos.filter(|_| c.origin == Origin::Proposer);
            let Some((values, loss)) = resolve(shard, &c, &plan, jobs, fits) else {
                if let Some(pos) = pos {
                    let why = "the search stopped before this candidate was fitted";
                    answers.push((pos, self.failure(&c, why)));
                }
                continue;
            };
            match loss {
                Ok(loss) => {
                    let member = self.take_in(shard, k, &c, values, loss, &crowd);
                    if let Some(pos) = pos {
                        answers.push((pos, self.answer(&c, &member)));
                    }
                }
                Err(e) => {
                    shard.counters.failed += 1;
                    if let Some(pos) = pos {
                        answers.push((pos, self.failure(&c, &e)));
                    }
                }
            }
        }
    }

    /// A fitted candidate into its island's hall of fame, and onto the island when it is a
    /// genome (if it passes the acceptance, for the island's own child).
    fn take_in(
        &self,
        shard: &mut Shard,
        k: usize,
        c: &Candidate,
        values: Vec<f64>,
        loss: f64,
        crowd: &Crowd,
    ) -> Member {
        let genome = self.fitted_genome(c, &values);
        // A program given as text counts as its genome when it reads as one.
        let complexity = genome
            .as_ref()
            .map_or(c.complexity, |g| self.grammar.complexity(g));
        let member = Member {
            src: c.src.clone(),
            params: c.params.clone(),
            values,
            loss,
            complexity,
            genome: genome.clone(),
            origin: c.origin,
        };
        shard.hall.offer(&member);
        let Some(g) = genome else {
            return member;
        };
        let cap = self.options.population;
        match c.origin {
            Origin::Island(_) => {
                let parts = [4, shard.index as u64, shard.generation, k as u64];
                let mut rng = rng_for(self.options.seed, &parts);
                let score =
                    self.pressure.score(loss, complexity, crowd) + self.grammar.units_penalty(&g);
                if self.pressure.accept(score, c.parent_score, &mut rng) {
                    shard.island.admit(g, loss, &c.src, cap);
                }
            }
            Origin::Proposer | Origin::Seed if self.grammar.admits(&g) => {
                let src = emit::source(&g, &self.names);
                shard.island.admit(g, loss, &src, cap);
            }
            _ => {}
        }
        member
    }

    /// The candidate's genome with its fitted values: its own, or the program read as one (of
    /// any size: [`super::generate::Grammar::admits`] says whether it may join an island).
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
}

/// A candidate's fitted values and loss (or failure), counted on its island; `None` when the
/// stop came before its fit.
fn resolve(
    shard: &mut Shard,
    c: &Candidate,
    plan: &Plan,
    jobs: &[Job],
    fits: &[Option<Fitted>],
) -> Option<(Vec<f64>, Result<f64, String>)> {
    let counters = &mut shard.counters;
    let (values, loss) = match plan {
        Plan::Fit(j, reused) => {
            let f = fits[*j].as_ref()?;
            counters.fits += 1;
            counters.walks += f.walks as u64;
            counters.row_nodes += (f.lanes * c.complexity) as u64;
            counters.decodes_reused += u64::from(*reused);
            shard
                .cache
                .record(&c.src, &jobs[*j].program, &c.init, &f.params, &f.loss);
            let mut h = std::collections::hash_map::DefaultHasher::new();
            c.src.hash(&mut h);
            counters.distinct_skeletons += u64::from(shard.seen.insert(h.finish()));
            (f.params.clone(), f.loss.clone())
        }
        Plan::Same(j) => {
            let f = fits[*j].as_ref()?;
            counters.cache_hits += 1;
            (f.params.clone(), f.loss.clone())
        }
        Plan::Cached(v, l) => {
            counters.cache_hits += 1;
            (v.clone(), l.clone())
        }
        Plan::Failed(e) => (c.init.clone(), Err(e.clone())),
    };
    counters.evaluations += 1;
    let loss = loss.and_then(|l| {
        if l.is_finite() {
            Ok(l)
        } else {
            Err("non-finite loss".to_string())
        }
    });
    Some((values, loss))
}

/// A hash of a program text and its starting values, the same on every machine and build.
fn content_hash(src: &str, init: &[f64]) -> u64 {
    let mut h = super::fnv::Fnv::default();
    h.text(src);
    for &x in init {
        h.number(x);
    }
    h.0 as u64
}
