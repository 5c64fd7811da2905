//! The ODE search: right-hand sides proposed state by state, then assembled into systems that
//! are fitted and scored by integration.
//!
//! 1. **Proposal.** Each trajectory is smoothed ([`super::smooth`]); for each state, the
//!    search's engine (its islands, operators, simplification and hall of fame) regresses the
//!    smoothed slope on the smoothed states, time and inputs. Its Pareto front is that
//!    state's pool of right-hand sides.
//! 2. **Systems.** A system takes one right-hand side from each state's pool. Starting from
//!    the most accurate choice and from the choice of best score, every system one swap away
//!    is fitted through the integrator ([`super::shoot`]: constants and initial states by
//!    Levenberg-Marquardt on the integrated trajectories), and the search moves to the best
//!    system found, until no swap improves it or three quarters of the time are spent.
//! 3. **Evolution** ([`super::evolve`]): the fitted systems seed islands that breed systems
//!    as systems (per-state swaps between parents, pool picks, crossing between states and
//!    the search's own mutations), each child fitted through the integrator.
//! 4. **Pruning**: every system one term smaller than a member of the front is fitted.
//!
//! Every system on the front is fitted and scored by integration; the slopes only propose.

use super::data::{OdeData, Trajectory};
use super::evolve::{Breeder, Evolution, Islands};
use super::outside::SystemFeed;
use super::program::System;
use super::shoot::{FitOptions, Shooting};
use super::simulate::{score, simulate, sums, Score};
use super::smooth::{smooth, Smoothed};
use crate::search::dataset::{Data, Dataset};
use crate::search::emit::{self, Names};
use crate::search::engine::{grammar_of, Engine, Stop};
use crate::search::expr::Genome;
use crate::search::feed::NoFeed;
use crate::search::generate::Grammar;
use crate::search::options::Options;
use crate::search::simplify::{self, key};
use ndarray::{Array1, Array2, ShapeBuilder};
use runtime_cpu::Session;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The settings of an ODE search.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The first stage's search settings (per state).
    pub search: Options,
    /// How systems are fitted.
    pub fit: FitOptions,
    /// Leave time out of the right-hand sides.
    pub autonomous: bool,
    /// Worker threads.
    pub threads: usize,
    /// Candidates of the first stage per state (with `--max-evals`).
    pub max_evals: Option<u64>,
    /// Systems fitted at most in the second stage.
    pub max_systems: usize,
    /// Rounds of swaps at most.
    pub rounds: usize,
    /// Generations of the third stage at most.
    pub generations: usize,
    /// Systems to fit first (`--seed-programs`): one right-hand side per state.
    pub seeds: Vec<Vec<Genome>>,
    /// Only the outside proposer proposes (`--proposer-only`): no first, second or third
    /// stage.
    pub proposer_only: bool,
}

impl Settings {
    /// `(max_systems, rounds, generations)` for a search bounded by `max_evals` (a fixed
    /// amount of work, so that `--seed` gives the same front on any number of threads: 200
    /// systems in 4 rounds, then 4 generations) or by time alone (no bound but the deadline).
    pub fn caps(max_evals: Option<u64>) -> (usize, usize, usize) {
        if max_evals.is_some() {
            (200, 4, 4)
        } else {
            (usize::MAX, 50, usize::MAX)
        }
    }
}

/// One state's right-hand side in a system.
#[derive(Clone, Debug, PartialEq)]
pub struct Equation {
    /// The expression, with its constants at their fitted values.
    pub genome: Genome,
    /// Its node count.
    pub complexity: usize,
}

/// A fitted system.
#[derive(Clone, Debug)]
pub struct Fitted {
    /// The right-hand sides, one per state.
    pub equations: Vec<Equation>,
    /// The system as the integrator reads it.
    pub system: System,
    /// The fitted constants (in `system.params` order).
    pub params: Vec<f64>,
    /// Each training trajectory's fitted initial state.
    pub initial: Vec<Vec<f64>>,
    /// The training trajectories integrated from `initial`, scored.
    pub train: Score,
    /// Each state's share of it: its squared residuals over its squared deviations.
    pub state_nmse: Vec<f64>,
    /// The sum of the equations' complexities.
    pub complexity: usize,
}

/// Counts of the search's work.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Counters {
    /// First-stage candidates (all states).
    pub proposals: u64,
    /// Systems fitted through the integrator.
    pub systems: u64,
    /// Systems of those bred by the third stage.
    pub evolved: u64,
    /// Systems of those tried with a term of the front's members left out.
    pub pruned: u64,
    /// Systems of those from the outside proposer.
    pub outside: u64,
    /// Systems whose fit failed (a state that blew up, a step budget).
    pub failed: u64,
    /// Walks of the integration programs.
    pub walks: u64,
}

/// What the search found.
pub struct Outcome {
    /// The Pareto front: complexity against the integrated training MSE.
    pub front: Vec<Fitted>,
    /// The work done.
    pub counters: Counters,
    /// The first failures' reasons (a few).
    pub failures: Vec<String>,
    /// The names the equations are written with (states, time, inputs; parameters per state).
    pub names: Vec<Names>,
    /// The smoothing half-width chosen per trajectory and state.
    pub widths: Vec<Vec<usize>>,
    /// The largest Runge-Kutta step used.
    pub max_step: f64,
}

/// Reads `--seed-programs` for a system: one JSON line per system, `{"src": {STATE: PROGRAM,
/// ...}, "init": {NAME: VALUE, ...}}` (or `"src": [PROGRAM, ...]` in the states' order), each
/// program over the states, time and inputs in the grammar of the search's candidates; numbers
/// and other free names are its constants (starting at `init`, else 1).
pub fn read_seeds(
    text: &str,
    file: &str,
    data: &OdeData,
    autonomous: bool,
) -> Result<Vec<Vec<Genome>>, String> {
    let inputs = stage_inputs(data, autonomous);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{file}:{}", i + 1);
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{at}: not a JSON line: {e}"))?;
        out.push(
            parse_system(&v, &data.columns.states, &inputs).map_err(|e| format!("{at}: {e}"))?,
        );
    }
    Ok(out)
}

/// A system as a JSON object (a `--seed-programs` line, an outside proposer's line):
/// `{"src": {STATE: PROGRAM, ...}, "init": {NAME: VALUE, ...}}` or `"src": [PROGRAM, ...]` in
/// the order of `states`, each program over `inputs` (the states, the time, the measured
/// inputs).
pub fn parse_system(
    v: &serde_json::Value,
    states: &[String],
    inputs: &[String],
) -> Result<Vec<Genome>, String> {
    let mut init = std::collections::HashMap::new();
    if let Some(m) = v.get("init") {
        let m = m
            .as_object()
            .ok_or("`init` is not an object of constants' values")?;
        for (k, x) in m {
            let x = x
                .as_f64()
                .ok_or_else(|| format!("`init.{k}` is not a number"))?;
            init.insert(k.clone(), x);
        }
    }
    let srcs: Vec<String> = match v.get("src") {
        Some(serde_json::Value::Object(m)) => {
            if let Some(k) = m.keys().find(|k| !states.contains(k)) {
                return Err(format!(
                    "`src.{k}`: `{k}` is not a state ({})",
                    states.join(", ")
                ));
            }
            states
                .iter()
                .map(|s| {
                    m.get(s)
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| {
                            format!("`src.{s}`: no right-hand side (a string) for state `{s}`")
                        })
                })
                .collect::<Result<_, _>>()?
        }
        Some(serde_json::Value::Array(a)) if a.len() == states.len() => a
            .iter()
            .enumerate()
            .map(|(j, x)| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("`src[{j}]` is not a string"))
            })
            .collect::<Result<_, _>>()?,
        Some(serde_json::Value::String(text)) => vector_parts(text, states.len())?,
        _ => {
            return Err(format!(
                "a system is {{\"src\": {{STATE: PROGRAM, ...}}, \"init\": {{...}}}}, \
                 {{\"src\": [PROGRAM, ...]}} with one program per state ({}), or \
                 {{\"src\": \"(vec PROGRAM ...)\"}}",
                states.join(", ")
            ))
        }
    };
    let mut system = Vec::new();
    for (s, src) in states.iter().zip(&srcs) {
        let g = crate::search::convert::to_genome(src, inputs, &[], &init).ok_or_else(|| {
            format!(
                "the right-hand side of `{s}`, `{src}`, is not a program of the search's grammar \
                 over {} (+ - * /, the operators of --ops, pow, min, max, let)",
                inputs.join(", ")
            )
        })?;
        system.push(g);
    }
    Ok(system)
}

/// The right-hand sides of a system written as one program returning a vector,
/// `(vec F1 F2 ...)` (or `list`) with one element per state; for one state, any program.
fn vector_parts(text: &str, d: usize) -> Result<Vec<String>, String> {
    let t = text.trim();
    let body = ["(vec", "(list"]
        .iter()
        .find_map(|head| {
            t.strip_prefix(head)
                .filter(|rest| rest.starts_with(char::is_whitespace) || rest.starts_with('('))
        })
        .and_then(|rest| rest.strip_suffix(')'));
    let Some(body) = body else {
        return if d == 1 {
            Ok(vec![t.to_string()])
        } else {
            Err(format!(
                "`src` as one program returns a vector of the {d} right-hand sides: \
                 (vec F1 F2 ...)"
            ))
        };
    };
    // The elements: the top-level forms and atoms of `body`.
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, None);
    for (i, c) in body.char_indices() {
        match c {
            '(' => {
                if depth == 0 {
                    start = Some(i);
                }
                depth += 1;
            }
            ')' => {
                depth = depth.checked_sub(1).ok_or("`src`: a `)` without its `(`")?;
                if depth == 0 {
                    parts.push(body[start.take().unwrap_or(i)..=i].to_string());
                }
            }
            c if c.is_whitespace() && depth == 0 => {
                if let Some(s) = start.take() {
                    parts.push(body[s..i].to_string());
                }
            }
            _ => {
                if depth == 0 && start.is_none() {
                    start = Some(i);
                }
            }
        }
    }
    if depth != 0 {
        return Err("`src`: a `(` without its `)`".into());
    }
    if let Some(s) = start {
        parts.push(body[s..].to_string());
    }
    if parts.len() != d {
        return Err(format!(
            "`src` returns a vector of {} elements for {d} states",
            parts.len()
        ));
    }
    Ok(parts)
}

/// The first stage's inputs, in order: the states, the time (unless autonomous), the inputs.
pub fn stage_inputs(data: &OdeData, autonomous: bool) -> Vec<String> {
    let c = &data.columns;
    let mut v = c.states.clone();
    if !autonomous {
        v.push(c.time.clone());
    }
    v.extend(c.inputs.iter().cloned());
    v
}

/// The regression data of state `i`'s slope.
fn slope_data(data: &OdeData, smoothed: &[Smoothed], i: usize, autonomous: bool) -> Data {
    let inputs = stage_inputs(data, autonomous);
    let rows: usize = data.train.iter().map(Trajectory::len).sum();
    let mut cols: Vec<Vec<f64>> = vec![Vec::with_capacity(rows); inputs.len()];
    let mut y = Vec::with_capacity(rows);
    for (tr, sm) in data.train.iter().zip(smoothed) {
        for k in 0..tr.len() {
            let mut j = 0;
            for s in &sm.x {
                cols[j].push(s[k]);
                j += 1;
            }
            if !autonomous {
                cols[j].push(tr.t[k]);
                j += 1;
            }
            for u in &tr.u {
                cols[j].push(u[k]);
                j += 1;
            }
            y.push(sm.dx[i][k]);
        }
    }
    let x = Array2::from_shape_fn((rows, inputs.len()).f(), |(r, j)| cols[j][r]);
    Data {
        inputs,
        target: format!("d{}/dt", data.columns.states[i]),
        train: Dataset {
            x,
            y: Array1::from(y),
            w: None,
        },
        tests: vec![],
    }
}

/// The names of state `i`'s equation: its constants `{c}{i}_{k}`, none equal to an input.
pub(super) fn equation_names(inputs: &[String], i: usize) -> Names {
    let mut n = Names::new(inputs);
    let mut prefix = format!("{}{i}_", n.param);
    while inputs.iter().any(|x| x.starts_with(&prefix)) {
        prefix.insert(0, 'p');
    }
    n.param = prefix;
    n
}

/// A system of `equations` as the integrator reads it.
pub(super) fn system_of(data: &OdeData, names: &[Names], equations: &[&Genome]) -> System {
    let c = &data.columns;
    let mut params = Vec::new();
    let mut rhs = Vec::new();
    for (g, n) in equations.iter().zip(names) {
        rhs.push(emit::source(g, n));
        params.extend((0..g.constants().len()).map(|k| n.param(k)));
    }
    System {
        states: c.states.clone(),
        inputs: c.inputs.clone(),
        time: c.time.clone(),
        rhs,
        params,
    }
}

/// The first stage for state `i`: the engine's front on the slopes.
fn propose(
    data: &OdeData,
    smoothed: &[Smoothed],
    i: usize,
    settings: &Settings,
    deadline: Option<Instant>,
    interrupt: &Arc<AtomicBool>,
) -> Result<(Vec<(Genome, f64)>, u64), String> {
    let d = slope_data(data, smoothed, i, settings.autonomous);
    if d.train.target_variance() <= 0.0 {
        // A state that does not change: its right-hand side is a constant (zero).
        return Ok((
            vec![(Genome::of(crate::search::expr::Expr::Const(0.0)), 0.0)],
            0,
        ));
    }
    let mut options = settings.search.clone();
    options.seed = settings.search.seed.wrapping_add(i as u64);
    let mut engine = Engine::new(options, d, settings.threads, vec![])?;
    let stop = Stop {
        max_evals: settings.max_evals,
        deadline,
        interrupt: Arc::clone(interrupt),
        proposer_only: false,
    };
    engine.run(&mut NoFeed, &stop, &mut |_| {});
    engine.polish(deadline, interrupt);
    let pool = engine
        .hall
        .front()
        .into_iter()
        .filter_map(|m| m.genome.clone().map(|g| (g, m.loss)))
        .collect();
    Ok((pool, engine.counters.evaluations))
}

/// The index of the member of best score among `pool` (by complexity): the largest drop of
/// log loss per added node, among members with a loss within 1.5 times the lowest.
fn best_score(pool: &[(Genome, f64)]) -> usize {
    let lowest = pool.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let mut best = (f64::NEG_INFINITY, pool.len().saturating_sub(1));
    for j in 0..pool.len() {
        if pool[j].1 > 1.5 * lowest.max(1e-300) {
            continue;
        }
        let s = if j == 0 {
            0.0
        } else {
            let dc = pool[j].0.size() as f64 - pool[j - 1].0.size() as f64;
            -(pool[j].1.max(1e-300).ln() - pool[j - 1].1.max(1e-300).ln()) / dc.max(1.0)
        };
        if s > best.0 {
            best = (s, j);
        }
    }
    best.1
}

/// How a run of the ODE search is bounded and what it talks to besides its data.
pub struct Run<'a> {
    /// No system is started after this instant.
    pub deadline: Option<Instant>,
    /// Set by Ctrl-C: the search stops as at its deadline.
    pub interrupt: &'a Arc<AtomicBool>,
    /// Once set, stops the integration walks in progress.
    pub cancel: Option<Arc<AtomicBool>>,
    /// An outside proposer of systems.
    pub feed: Option<&'a mut dyn SystemFeed>,
    /// Where an earlier run stopped (`--resume`).
    pub resume: Option<Resumed>,
    /// Sees where the search stands after each generation of the third stage and at its end.
    pub save: &'a mut dyn FnMut(Snapshot),
    /// Says what the search is doing.
    pub progress: &'a dyn Fn(&str),
}

/// Runs the ODE search on `data` until `deadline` (the first stage takes half of the time),
/// or, given `resume`, continues the third stage of an earlier run. `save` sees where the
/// search stands after each generation of the third stage and at its end.
///
/// `cancel`, once set (at the deadline, by a signal), stops the integration walks in progress
/// within a slice of their step budget; the systems they were fitting are dropped.
pub fn discover(data: &OdeData, settings: &Settings, run: Run) -> Result<Outcome, String> {
    let Run {
        deadline,
        interrupt,
        cancel,
        feed,
        resume,
        save,
        progress,
    } = run;
    let started = Instant::now();
    let smoothed: Vec<Smoothed> = data.train.iter().map(smooth).collect();
    let d = data.columns.states.len();
    let inputs = stage_inputs(data, settings.autonomous);
    let names: Vec<Names> = (0..d).map(|i| equation_names(&inputs, i)).collect();
    let mut proposals = 0;
    let grammar = grammar_of(
        &settings.search,
        &slope_data(data, &smoothed, 0, settings.autonomous),
    )?;
    let fit = FitOptions {
        max_step: max_step(&settings.fit, data),
        ..settings.fit.clone()
    };
    // Where each segment starts: the smoothed states.
    let systems = Systems {
        data,
        names: &names,
        smoothed: &smoothed,
        fit: &fit,
    };
    let mut record = Record::default();
    let late =
        || interrupt.load(Ordering::Relaxed) || deadline.is_some_and(|end| Instant::now() >= end);
    let mut outside = feed.map(|feed| Outsiders {
        feed,
        names: &names,
        threads: settings.threads,
    });
    let outcome = |record: Record, proposals: u64| {
        let Record {
            fitted,
            counters: mut work,
            failures,
            ..
        } = record;
        work.proposals += proposals;
        Outcome {
            front: front_of(&fitted).into_iter().cloned().collect(),
            counters: work,
            failures,
            names: names.clone(),
            widths: smoothed.iter().map(|s| s.width.clone()).collect(),
            max_step: fit.max_step,
        }
    };
    if settings.proposer_only {
        // Only the outside proposer proposes: its systems are fitted as they come, until it
        // ends or the time is spent.
        if let Some(o) = outside.as_mut() {
            o.feed.heard();
            while !late() && o.feed.alive() {
                let wait = deadline.unwrap_or_else(|| Instant::now() + Duration::from_secs(1));
                progress("fitting the outside proposer's systems");
                o.poll(Some(wait), &systems, &mut record, &late, cancel.as_ref());
            }
        }
        return Ok(outcome(record, 0));
    }
    let (pools, state) = match resume {
        Some(r) => {
            record = r.record;
            (r.pools, Some(r.islands))
        }
        None => {
            let pools = first_stages(
                data,
                settings,
                &grammar,
                &smoothed,
                &systems,
                (started, deadline),
                interrupt,
                cancel.as_ref(),
                &mut record,
                &mut proposals,
                outside.as_mut(),
                progress,
            )?;
            (pools, None)
        }
    };
    let Some(state) = state.or_else(|| Islands::seeded(&record.fitted)) else {
        return Ok(outcome(record, proposals));
    };
    let before = record.counters.systems;
    let outside_before = record.counters.outside;
    let evolution = Evolution {
        systems: &systems,
        breeder: Breeder {
            pools: &pools,
            grammar: &grammar,
            weights: &settings.search.weights,
        },
        seed: settings.search.seed,
        threads: settings.threads,
        generations: settings.generations,
    };
    let mut after = |record: &Record, islands: &Islands| {
        save(Snapshot {
            pools: &pools,
            record,
            islands,
            last: false,
        })
    };
    // The last tenth of the time is left to pruning the front.
    let pruning = deadline.map(|end| end - end.saturating_duration_since(started).mul_f64(0.1));
    let breeding = || late() || pruning.is_some_and(|at| Instant::now() >= at);
    let islands = evolution.run(
        state,
        &breeding,
        cancel.as_ref(),
        &mut record,
        outside.as_mut(),
        progress,
        &mut after,
    );
    record.counters.evolved +=
        record.counters.systems - before - (record.counters.outside - outside_before);
    let before = record.counters.systems;
    evolution.prune(&late, cancel.as_ref(), &mut record, progress);
    record.counters.pruned += record.counters.systems - before;
    record.counters.proposals += proposals;
    save(Snapshot {
        pools: &pools,
        record: &record,
        islands: &islands,
        last: true,
    });
    Ok(outcome(record, 0))
}

/// The first and second stages: each state's pool of right-hand sides proposed, then the
/// systems assembled from them fitted (into `record`); returns the pools.
#[allow(clippy::too_many_arguments)]
fn first_stages(
    data: &OdeData,
    settings: &Settings,
    grammar: &Grammar,
    smoothed: &[Smoothed],
    systems: &Systems,
    (started, deadline): (Instant, Option<Instant>),
    interrupt: &Arc<AtomicBool>,
    cancel: Option<&Arc<AtomicBool>>,
    record: &mut Record,
    proposals: &mut u64,
    mut outside: Option<&mut Outsiders>,
    progress: &dyn Fn(&str),
) -> Result<Vec<Vec<(Genome, f64)>>, String> {
    let d = data.columns.states.len();
    let mut pools = Vec::new();
    for i in 0..d {
        progress(&format!(
            "proposing right-hand sides for d{}/dt",
            data.columns.states[i]
        ));
        let until = deadline.map(|end| {
            let share = end
                .saturating_duration_since(started)
                .mul_f64(0.5 / d as f64);
            started + share * (i as u32 + 1)
        });
        let (pool, evals) = propose(data, smoothed, i, settings, until, interrupt)?;
        *proposals += evals;
        if pool.is_empty() {
            return Err(format!(
                "no right-hand side was found for d{}/dt",
                data.columns.states[i]
            ));
        }
        let mut pool = pool;
        let inputs = stage_inputs(data, settings.autonomous);
        for (src, mse) in super::library::candidates(data, smoothed, i) {
            let g = crate::search::convert::to_genome(&src, &inputs, &[], &Default::default())
                .map(|g| simplify::genome(g, &grammar.ops));
            if let Some(g) = g.filter(|g| grammar.admits(g)) {
                if !pool
                    .iter()
                    .any(|(p, _)| key(&p.body) == key(&g.body) && p.lets == g.lets)
                {
                    pool.push((g, mse));
                }
            }
        }
        pools.push(pool);
    }
    // The seeds join the pools (with no slope loss of their own) and are fitted first, with
    // every system one swap away from them.
    let mut seeded = Vec::new();
    for seed in &settings.seeds {
        let choice: Vec<usize> = seed
            .iter()
            .zip(pools.iter_mut())
            .map(|(g, pool)| {
                pool.push((g.clone(), f64::INFINITY));
                pool.len() - 1
            })
            .collect();
        seeded.push(choice);
    }
    // The proposer's silence counts from here: the first stage does not read it.
    if let Some(o) = outside.as_deref_mut() {
        o.feed.heard();
    }
    let late =
        || interrupt.load(Ordering::Relaxed) || deadline.is_some_and(|end| Instant::now() >= end);
    // The second stage ends at three quarters of the time, leaving the rest to the third.
    let combined =
        deadline.map(|end| started + end.saturating_duration_since(started).mul_f64(0.75));
    let combining = || late() || combined.is_some_and(|end| Instant::now() >= end);
    combine(
        systems, &pools, &seeded, settings, &combining, cancel, record, outside, progress,
    );
    Ok(pools)
}

/// Where a search stands, for a checkpoint: each state's pool, the systems fitted, the third
/// stage's islands; `last` after the last generation of this run.
pub struct Snapshot<'a> {
    /// Each state's pool.
    pub pools: &'a [Vec<(Genome, f64)>],
    /// The systems fitted and the work done.
    pub record: &'a Record,
    /// The third stage's islands.
    pub islands: &'a Islands,
    /// True after this run's last generation.
    pub last: bool,
}

/// What `--resume` continues: the pools, the systems fitted, the islands.
pub struct Resumed {
    /// Each state's pool.
    pub pools: Vec<Vec<(Genome, f64)>>,
    /// The systems fitted and the work done.
    pub record: Record,
    /// The third stage's islands.
    pub islands: Islands,
}

/// The largest Runge-Kutta step: `--max-step`, else the median gap between observations.
pub fn max_step(fit: &FitOptions, data: &OdeData) -> f64 {
    if fit.max_step.is_finite() {
        fit.max_step
    } else {
        super::grid::median_gap(&data.train)
    }
}

/// The outside proposer as the stages see it.
pub(super) struct Outsiders<'a, 'f> {
    feed: &'f mut dyn SystemFeed,
    names: &'a [Names],
    threads: usize,
}

impl Outsiders<'_, '_> {
    /// Takes the proposer's systems (waiting until `wait` for one), fits them, answers each
    /// in the order they came and sends the front; returns where those fitted are in
    /// `record.fitted`. A system from outside is always fitted, even one whose structure was.
    pub fn poll(
        &mut self,
        wait: Option<Instant>,
        systems: &Systems,
        record: &mut Record,
        late: &(dyn Fn() -> bool + Sync),
        cancel: Option<&Arc<AtomicBool>>,
    ) -> Vec<usize> {
        let got = self.feed.take(wait);
        if got.is_empty() {
            return Vec::new();
        }
        let batch: Vec<Vec<Genome>> = got
            .iter()
            .filter_map(|p| p.system.as_ref().ok().cloned())
            .collect();
        let results = systems.fit_all(&batch, self.threads, late, cancel);
        let errors: Vec<Option<String>> = results
            .iter()
            .map(|r| match r {
                Some(Err(e)) => Some(e.clone()),
                _ => None,
            })
            .collect();
        let at = record.add(&batch, results);
        record.counters.outside += at.iter().filter(|a| a.is_some()).count() as u64;
        let mut fitted = Vec::new();
        let mut j = 0;
        for p in &got {
            let answer = match &p.system {
                Err(e) => Err(e.clone()),
                Ok(_) => {
                    let a = match at[j] {
                        Some(Some(k)) => {
                            fitted.push(k);
                            Ok(&record.fitted[k])
                        }
                        Some(None) => Err(errors[j].clone().unwrap_or_default()),
                        None => Err("the search ended before it was fitted".to_string()),
                    };
                    j += 1;
                    a
                }
            };
            self.feed.answer(p, answer, self.names);
        }
        let front: Vec<Fitted> = front_of(&record.fitted).into_iter().cloned().collect();
        self.feed.front(&front, self.names);
        fitted
    }
}

/// Every system fitted so far, and what it cost.
#[derive(Default)]
pub struct Record {
    /// The systems fitted, in the order they were fitted.
    pub fitted: Vec<Fitted>,
    /// The systems' structures (their keys) already fitted or failed: none is fitted twice.
    pub seen: BTreeSet<String>,
    /// The work done.
    pub counters: Counters,
    /// The first failures' reasons.
    pub failures: Vec<String>,
}

impl Record {
    /// Records the results of fitting `systems`; returns for each one `None` where it was not
    /// run, `Some(None)` where its fit failed, and else its index in `fitted`.
    pub fn add(
        &mut self,
        systems: &[Vec<Genome>],
        results: Vec<SystemResult>,
    ) -> Vec<Option<Option<usize>>> {
        let mut at = Vec::with_capacity(systems.len());
        for (genomes, r) in systems.iter().zip(results) {
            match r {
                Some(Ok((f, walks))) => {
                    self.counters.systems += 1;
                    self.counters.walks += walks as u64;
                    self.seen.insert(system_key(genomes));
                    self.fitted.push(f);
                    at.push(Some(Some(self.fitted.len() - 1)));
                }
                Some(Err(e)) => {
                    self.counters.systems += 1;
                    self.counters.failed += 1;
                    if self.failures.len() < 5 {
                        self.failures.push(e);
                    }
                    self.seen.insert(system_key(genomes));
                    at.push(Some(None));
                }
                None => at.push(None),
            }
        }
        at
    }
}

/// A system's structure: its right-hand sides with the constants blanked.
pub(super) fn system_key(genomes: &[Genome]) -> String {
    let mut s = String::new();
    for g in genomes {
        for e in g.lets.iter().chain(std::iter::once(&g.body)) {
            s.push_str(&key(e));
            s.push(';');
        }
        s.push('|');
    }
    s
}

/// The Pareto front of `fitted`: complexity against the integrated training MSE.
fn front_of(fitted: &[Fitted]) -> Vec<&Fitted> {
    front_indexes(fitted)
        .into_iter()
        .map(|k| &fitted[k])
        .collect()
}

/// Where the members of the Pareto front of `fitted` are in it, by complexity.
pub(super) fn front_indexes(fitted: &[Fitted]) -> Vec<usize> {
    let mut best: BTreeMap<usize, usize> = BTreeMap::new();
    for (k, f) in fitted.iter().enumerate() {
        if !f.train.mse.is_finite() {
            continue;
        }
        match best.get(&f.complexity) {
            Some(&b) if fitted[b].train.mse <= f.train.mse => {}
            _ => {
                best.insert(f.complexity, k);
            }
        }
    }
    let mut front: Vec<usize> = Vec::new();
    for k in best.into_values() {
        if front
            .last()
            .is_none_or(|&b| fitted[k].train.mse < fitted[b].train.mse)
        {
            front.push(k);
        }
    }
    front
}

/// The second stage: systems assembled from the pools. The most accurate choice, the choice
/// of best score, the diagonal of ranks, the seeds and every system one swap away from them
/// are fitted; then, round by round, the swaps around the best system not yet expanded.
#[allow(clippy::too_many_arguments)]
fn combine(
    systems: &Systems,
    pools: &[Vec<(Genome, f64)>],
    seeded: &[Vec<usize>],
    settings: &Settings,
    late: &(dyn Fn() -> bool + Sync),
    cancel: Option<&Arc<AtomicBool>>,
    record: &mut Record,
    mut outside: Option<&mut Outsiders>,
    progress: &dyn Fn(&str),
) {
    let accurate: Vec<usize> = pools
        .iter()
        .map(|p| {
            (0..p.len())
                .min_by(|&a, &b| p[a].1.total_cmp(&p[b].1))
                .unwrap_or(0)
        })
        .collect();
    let scored: Vec<usize> = pools.iter().map(|p| best_score(p)).collect();
    let longest = pools.iter().map(Vec::len).max().unwrap_or(1);
    let mut queue: Vec<Vec<usize>> = seeded.to_vec();
    queue.extend([accurate.clone(), scored.clone()]);
    queue.extend((0..longest).map(|r| pools.iter().map(|p| r.min(p.len() - 1)).collect()));
    queue.extend(neighbours(&accurate, pools));
    queue.extend(neighbours(&scored, pools));
    for c in seeded {
        queue.extend(neighbours(c, pools));
    }
    let mut expanded: BTreeSet<Vec<usize>> = [accurate, scored]
        .into_iter()
        .chain(seeded.iter().cloned())
        .collect();
    // The training MSE of each choice fitted (infinite where its fit failed).
    let mut tried: BTreeMap<Vec<usize>, f64> = BTreeMap::new();
    let genomes_of = |c: &[usize]| -> Vec<Genome> {
        c.iter()
            .enumerate()
            .map(|(i, &j)| pools[i][j].0.clone())
            .collect()
    };
    for round in 0..settings.rounds.max(1) {
        let mut seen = BTreeSet::new();
        queue.retain(|c| !tried.contains_key(c) && seen.insert(c.clone()));
        let room = settings.max_systems.saturating_sub(tried.len());
        queue.truncate(room);
        if let Some(o) = outside.as_deref_mut() {
            o.poll(None, systems, record, late, cancel);
        }
        if queue.is_empty() || late() {
            break;
        }
        progress(&format!(
            "fitting {} systems through the integrator (round {})",
            queue.len(),
            round + 1
        ));
        let genomes: Vec<Vec<Genome>> = queue.iter().map(|c| genomes_of(c)).collect();
        let results = systems.fit_all(&genomes, settings.threads, late, cancel);
        let at = record.add(&genomes, results);
        for (choice, k) in queue.drain(..).zip(at) {
            match k {
                None => {}
                Some(Some(k)) => {
                    tried.insert(choice, record.fitted[k].train.mse);
                }
                Some(None) => {
                    tried.insert(choice, f64::INFINITY);
                }
            }
        }
        // Next: the swaps around the best system not yet expanded.
        let next = tried
            .iter()
            .filter(|(c, l)| l.is_finite() && !expanded.contains(*c))
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(c, _)| c.clone());
        if let Some(c) = next {
            queue.extend(neighbours(&c, pools));
            expanded.insert(c);
        }
    }
}

/// Every choice one swap away from `c`.
fn neighbours(c: &[usize], pools: &[Vec<(Genome, f64)>]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for (i, p) in pools.iter().enumerate() {
        for j in 0..p.len() {
            if j != c[i] {
                let mut n = c.to_vec();
                n[i] = j;
                out.push(n);
            }
        }
    }
    out
}

/// What systems are fitted on.
pub(super) struct Systems<'a> {
    data: &'a OdeData,
    names: &'a [Names],
    smoothed: &'a [Smoothed],
    fit: &'a FitOptions,
}

pub(super) type SystemResult = Option<Result<(Fitted, usize), String>>;

impl Systems<'_> {
    /// Fits the systems `choices` (one right-hand side per state, their constants the fit's
    /// starting values) over `threads` workers, in order; `None` for one not started before
    /// `late()`.
    pub(super) fn fit_all(
        &self,
        choices: &[Vec<Genome>],
        threads: usize,
        late: &(dyn Fn() -> bool + Sync),
        cancel: Option<&Arc<AtomicBool>>,
    ) -> Vec<SystemResult> {
        let next = AtomicUsize::new(0);
        let out: Mutex<Vec<SystemResult>> = Mutex::new(vec![None; choices.len()]);
        std::thread::scope(|scope| {
            for _ in 0..threads.clamp(1, choices.len().max(1)) {
                scope.spawn(|| {
                    let mut session = Session::<f64>::new();
                    session.set_cancel(cancel.cloned());
                    loop {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        if j >= choices.len() || late() {
                            break;
                        }
                        let r = self.fit_one(&mut session, &choices[j]);
                        // A fit the cancel flag cut short is dropped, not counted as failed.
                        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                            break;
                        }
                        out.lock().expect("no worker panics")[j] = Some(r);
                    }
                });
            }
        });
        out.into_inner().expect("no worker panics")
    }

    /// Fits the system of right-hand sides `genomes`.
    fn fit_one(
        &self,
        session: &mut Session<f64>,
        genomes: &[Genome],
    ) -> Result<(Fitted, usize), String> {
        let genomes: Vec<&Genome> = genomes.iter().collect();
        let system = system_of(self.data, self.names, &genomes);
        let theta: Vec<f64> = genomes.iter().flat_map(|g| g.constants()).collect();
        let shooting = Shooting::new(&system, &self.data.train, self.fit)?;
        let starts = shooting.starts_from(self.smoothed);
        let f = shooting.fit(session, &theta, Some(starts), self.fit)?;
        let paths = simulate(
            session,
            &system,
            &f.params,
            &self.data.train,
            &f.initial,
            self.fit.max_step,
            self.fit.limits,
        )?;
        let train = score(&paths, &self.data.train);
        // Each state's squared residuals over its squared deviations.
        let state_nmse = sums(&paths, &self.data.train)
            .0
            .into_iter()
            .map(|(ssr, sst)| match (sst > 0.0, ssr > 0.0) {
                (true, _) => ssr / sst,
                (false, true) => f64::INFINITY,
                (false, false) => 0.0,
            })
            .collect();
        let mut values = f.params.iter().copied();
        let equations = genomes
            .iter()
            .map(|g| {
                let mut g = (*g).clone();
                let n = g.constants().len();
                let mine: Vec<f64> = values.by_ref().take(n).collect();
                g.set_constants(&mine);
                Equation {
                    complexity: g.size(),
                    genome: g,
                }
            })
            .collect::<Vec<_>>();
        Ok((
            Fitted {
                complexity: equations.iter().map(|e| e.complexity).sum(),
                equations,
                system,
                params: f.params,
                initial: f.initial,
                train,
                state_nmse,
            },
            f.walks,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_system_is_an_object_a_list_or_one_program_returning_a_vector() {
        let states = vec!["x".to_string(), "y".to_string()];
        let inputs = states.clone();
        let parse = |line: &str| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            parse_system(&v, &states, &inputs)
        };
        let object = parse(r#"{"src": {"x": "(* a y)", "y": "(- x)"}, "init": {"a": 2}}"#).unwrap();
        let list = parse(r#"{"src": ["(* a y)", "(- x)"], "init": {"a": 2}}"#).unwrap();
        let vector = parse(r#"{"src": "(vec (* a y) (- x))", "init": {"a": 2}}"#).unwrap();
        assert_eq!(object, list);
        assert_eq!(object, vector);
        assert_eq!(object[0].constants(), [2.0]);
        assert_eq!(
            parse(r#"{"src": "(list y (- x))"}"#).unwrap()[0],
            parse(r#"{"src": ["y", "x"]}"#).unwrap()[0]
        );
        let err = |line: &str| parse(line).unwrap_err();
        assert!(err(r#"{"src": "(vec y)"}"#).contains("1 elements for 2 states"));
        assert!(err(r#"{"src": "(* a y)"}"#).contains("(vec F1 F2 ...)"));
        assert!(err(r#"{"src": "(vec (* a y) (- x)"}"#).contains("without its"));
        assert!(err(r#"{"src": {"x": "y"}}"#).contains("`src.y`"));
        assert!(err(r#"{"src": {"x": "y", "y": "x", "z": "1"}}"#).contains("`z` is not a state"));
        assert!(err(r#"{"src": {"x": "y", "y": "x"}, "init": {"a": "one"}}"#).contains("init.a"));
        assert!(err(r#"{"src": ["(+ a", "x"]}"#).contains("is not a program"));
        assert!(err(r#"{"id": 3}"#).contains("a system is"));
    }
}
