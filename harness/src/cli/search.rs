//! `ndvm search`: discover programs and their constants from a CSV of measurements.

use crate::calibrate::RowKind;
use crate::schedule;
use crate::search::candidate::{Candidate, Method, Origin};
use crate::search::dataset::{Columns, Data};
use crate::search::engine::{Checkpoint, Engine, Stop};
use crate::search::feed::Incoming;
use crate::search::feed::{Feed, NoFeed};
use crate::search::front::Member;
use crate::search::options::{Iterate, Options};
use crate::search::proposer::{parse_line, Outside, ProposerStatus, StreamLimits};
use crate::search::report::{self, Summary};
use crate::search::select::{EarlyStop, Select};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `ndvm search`.
#[derive(Args, Debug)]
#[command(
    after_help = "Example (the LLM-SR oscillator, one minute on every core):\n  \
    ndvm search --data data/sr/llm-sr/oscillator1/train.csv --target a \\\n    \
    --test id=data/sr/llm-sr/oscillator1/test_id.csv \
    --test ood=data/sr/llm-sr/oscillator1/test_ood.csv --budget 60"
)]
pub struct SearchArgs {
    /// The training data: a CSV with a header of column names, one row per data point (a
    /// `split` column of `train`/`holdout` holds rows out as the test set `holdout`).
    #[arg(long, value_name = "TRAIN.csv")]
    pub data: PathBuf,
    /// The column to model (several, `y1,y2`: a search and a front for each); with --time,
    /// the states (`x,y,...`).
    #[arg(long, value_name = "COL")]
    pub target: String,
    /// ODE discovery: the time column; the --target columns are then the states of a system
    /// `d state / dt = f(states, inputs, t)` observed at these times (docs/ode.md).
    #[arg(long, value_name = "COL")]
    pub time: Option<String>,
    /// With --time: the column naming each row's trajectory (one trajectory when absent).
    #[arg(long, value_name = "COL", requires = "time")]
    pub trajectory: Option<String>,
    /// With --time: right-hand sides that do not read the time.
    #[arg(long, requires = "time")]
    pub autonomous: bool,
    /// With --time: observations per shooting segment of the fit.
    #[arg(long, value_name = "N", default_value_t = crate::ode::shoot::FitOptions::default().segment, requires = "time")]
    pub segment: usize,
    /// With --time: the largest Runge-Kutta step (default: the median gap between
    /// observations).
    #[arg(long, value_name = "H", requires = "time")]
    pub max_step: Option<f64>,
    /// With --time: keep each training trajectory's initial state at its first row instead of
    /// fitting it.
    #[arg(long, requires = "time")]
    pub fixed_initial: bool,
    /// A held-out set, reported by name (several allowed).
    #[arg(long = "test", value_name = "NAME=FILE.csv")]
    pub tests: Vec<String>,
    /// The input columns (default: every column but the target; with --time: measured
    /// input signals, none by default).
    #[arg(long, value_name = "a,b,...", value_delimiter = ',')]
    pub inputs: Option<Vec<String>>,
    /// A column of non-negative weights of the training rows: each row's loss counts that
    /// many times (the loss is the weighted mean; test sets are scored unweighted).
    #[arg(long, value_name = "COL")]
    pub weights: Option<String>,
    /// How a row's value is scored against its target: `l2` (squared error), `l1`,
    /// `huber:DELTA`, `logcosh` or `relative` (squared error over |target|), or a program of
    /// the object language over `f` (the value), `y` (the target) and constants of its own:
    /// `"(square (- (log f) (log y)))"`. Least squares (l2, relative) are fitted by
    /// Levenberg-Marquardt, the others by L-BFGS on the exact gradient.
    #[arg(long, value_name = "LOSS", default_value = "l2")]
    pub loss: String,
    /// The operators programs are built from.
    #[arg(long, value_name = "LIST", default_value = crate::search::ops::DEFAULT)]
    pub ops: String,
    /// The largest complexity (node count) of a built-in candidate.
    #[arg(long, value_name = "N", default_value_t = Options::default().max_complexity)]
    pub max_complexity: usize,
    /// The deepest tree of a built-in candidate.
    #[arg(long, value_name = "N", default_value_t = Options::default().max_depth)]
    pub max_depth: usize,
    /// The complexity of each operator, constant (`const`) and input (`var`): `exp=3,sin=2`
    /// (1 for what is not listed).
    #[arg(long, value_name = "OP=N,...")]
    pub complexity_of: Option<String>,
    /// The largest complexity of each argument of an operator, -1 for any: `pow=(-1,1)` (any
    /// base, an exponent of one node); several separated by `;`.
    #[arg(long, value_name = "OP=(N,M);...")]
    pub constraints: Option<String>,
    /// How many times an operator may appear on one path below another:
    /// `sin=sin:0,cos:0;exp=exp:0` (no sin or cos inside a sin, no exp inside an exp).
    #[arg(long, value_name = "OUTER=INNER:N,...;...")]
    pub nested: Option<String>,
    /// The SI units of inputs and target: `x=m,t=s,y=m/s^2` (products of powers of m, s,
    /// kg, A, K, mol, cd; unlisted columns dimensionless). A built-in candidate whose units do
    /// not balance is refused, or penalised with --dimensional-penalty.
    #[arg(long, value_name = "COL=UNIT,...")]
    pub units: Option<String>,
    /// With --units: instead of refusing a candidate whose units do not balance, add this to
    /// its selection score (log10 of its normalised loss) per place they do not.
    #[arg(long, value_name = "X", requires = "units")]
    pub dimensional_penalty: Option<f64>,
    /// Wall-clock budget in seconds (default 60 without --max-evals).
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Stop after this many candidates (with --seed, the front is the same for any --threads).
    #[arg(long, value_name = "N")]
    pub max_evals: Option<u64>,
    /// The seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// An outside proposer: a command that speaks the JSON-lines protocol of docs/search.md.
    #[arg(long, value_name = "\"CMD ARGS\"")]
    pub proposer: Option<String>,
    /// Only the outside proposer proposes; the search ends when it does.
    #[arg(long, requires = "proposer")]
    pub proposer_only: bool,
    /// Seconds the outside proposer may stay silent before it is given up.
    #[arg(long, value_name = "S", default_value_t = 30.0)]
    pub proposer_timeout: f64,
    /// The longest line read from the outside proposer, in bytes; a longer one is dropped as
    /// it is read, answered with an error and counted.
    #[arg(long, value_name = "BYTES", default_value_t = StreamLimits::default().max_line)]
    pub proposer_max_line: usize,
    /// Lines of the outside proposer read ahead of the search at most (and taken into one
    /// batch); past them its writes wait.
    #[arg(long, value_name = "N", default_value_t = StreamLimits::default().queue)]
    pub proposer_queue: usize,
    /// Programs to start from: JSON lines `{"src", "init"}` (`init` optional).
    #[arg(long, value_name = "FILE.jsonl")]
    pub seed_programs: Option<PathBuf>,
    /// Writes the front (front.jsonl, front.csv, front.svg), the best loss against time
    /// (progress.svg) and a checkpoint (checkpoint.json) here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Continues the search of a checkpoint in DIR (its settings; the budget, --max-evals and
    /// --threads of this command).
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// `text` or `json`.
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub format: String,
    /// The model chosen from the front: `best` (the highest score, the largest drop of log
    /// loss per node, among the members with a loss at most 1.5 times the lowest),
    /// `accuracy` (the lowest loss) or `score` (the highest score).
    #[arg(long, value_enum, default_value_t = Select::Best)]
    pub select: Select,
    /// Ends the search once a member at most COMPLEXITY nodes large (any, without `@`)
    /// reaches LOSS on the rows it is fitted on (`1e-10@20`).
    #[arg(long, value_name = "LOSS[@COMPLEXITY]")]
    pub early_stop: Option<String>,
    /// How candidates are fitted.
    #[arg(long, value_enum, default_value_t = Method::Lm)]
    pub fit: Method,
    /// Iterations per fit.
    #[arg(long, value_name = "N", default_value_t = Options::default().fit.iterations)]
    pub iterations: usize,
    /// Restarts per fit (lane groups of one walk); a candidate with a loop gets at least
    /// two.
    #[arg(long, value_name = "N", default_value_t = Options::default().fit.restarts)]
    pub restarts: usize,
    /// Training rows fitted on during the search (0: all); the front is refitted on all.
    #[arg(long, value_name = "N", default_value_t = Options::default().fit_rows)]
    pub fit_rows: usize,
    /// Islands of the built-in proposer.
    #[arg(long, value_name = "N", default_value_t = Options::default().islands)]
    pub islands: usize,
    /// Members per island.
    #[arg(long, value_name = "N", default_value_t = Options::default().population)]
    pub population: usize,
    /// Selection's penalty per node.
    #[arg(long, value_name = "X", default_value_t = Options::default().parsimony)]
    pub parsimony: f64,
    /// Whether built-in candidates may `iterate`: `auto` when an input column holds trip
    /// counts (non-negative integers), `on`, `off`.
    #[arg(long, value_enum, default_value_t = Iterate::Auto)]
    pub iterate: Iterate,
    /// No `let`-shared subexpressions in built-in candidates.
    #[arg(long)]
    pub no_share: bool,
    /// Node visits allowed per walk (a runaway candidate fails at this budget).
    #[arg(long, value_name = "N", default_value_t = Options::default().fit.max_steps)]
    pub max_steps: u64,
    /// Sets any setting of the search by name, after the flags above (`--set temperature=0.2
    /// --set weights.crossover=0.2`; docs/search.md lists them).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Payload memory allowed per walk, in MB (a runaway candidate fails at this limit).
    #[arg(long, value_name = "MB", default_value_t = Options::default().fit.max_memory_mb)]
    pub max_memory_mb: usize,
    /// The ids of the arguments given on the command line (set by the caller; empty: unknown).
    #[arg(skip)]
    pub given: Vec<String>,
}

/// The arguments that set what a checkpoint keeps (each the flag `--` with dashes for the
/// underscores): given with `--resume`, they are refused.
const SETTINGS: &[&str] = &[
    "loss",
    "max_depth",
    "complexity_of",
    "constraints",
    "nested",
    "units",
    "dimensional_penalty",
    "ops",
    "max_complexity",
    "seed",
    "fit",
    "iterations",
    "restarts",
    "fit_rows",
    "islands",
    "population",
    "parsimony",
    "iterate",
    "no_share",
    "max_steps",
    "set",
    "max_memory_mb",
    "seed_programs",
];

/// With `--resume`, the settings flags given (an error naming them), since the search goes on
/// with the checkpoint's settings.
pub(super) fn refuse_settings(args: &SearchArgs, also: &[&str]) -> Result<(), String> {
    let given: Vec<String> = SETTINGS
        .iter()
        .chain(also)
        .filter(|id| args.given.iter().any(|g| g == *id))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    if args.resume.is_some() && !given.is_empty() {
        return Err(format!(
            "--resume goes on with the settings the checkpoint was made with; {} would change \
             them (drop {}, or start a new search with --out)",
            given.join(", "),
            if given.len() == 1 { "it" } else { "them" }
        ));
    }
    Ok(())
}

/// Runs `ndvm search`.
pub fn main(args: SearchArgs) -> ExitCode {
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

pub(super) fn options(args: &SearchArgs) -> Result<Options, String> {
    let d = Options::default();
    let mut o = Options {
        ops: args.ops.split(',').map(|s| s.trim().to_string()).collect(),
        max_complexity: args.max_complexity,
        islands: args.islands.max(1),
        population: args.population.max(2),
        offspring: (args.population / 2).max(1),
        parsimony: args.parsimony,
        fit: crate::search::candidate::FitSettings {
            method: args.fit,
            iterations: args.iterations,
            restarts: args.restarts.max(1),
            loop_restarts: args.restarts.max(d.fit.loop_restarts),
            max_steps: args.max_steps,
            max_memory_mb: args.max_memory_mb.max(1),
            ..d.fit.clone()
        },
        fit_rows: args.fit_rows,
        iterate: args.iterate,
        share: !args.no_share,
        seed: args.seed,
        loss: if args.loss.trim_start().starts_with('(') {
            RowKind::L2
        } else {
            RowKind::parse(&args.loss)?
        },
        loss_program: args
            .loss
            .trim_start()
            .starts_with('(')
            .then(|| args.loss.clone()),
        max_depth: args.max_depth,
        units: args.units.clone(),
        dimensional_penalty: args.dimensional_penalty,
        ..d
    };
    if args
        .dimensional_penalty
        .is_some_and(|p| !(p.is_finite() && p >= 0.0))
    {
        return Err("--dimensional-penalty: expected a number of 0 or more".into());
    }
    if let Some(t) = &args.complexity_of {
        o.constraints.parse_costs(t)?;
    }
    if let Some(t) = &args.constraints {
        o.constraints.parse_args(t)?;
    }
    if let Some(t) = &args.nested {
        o.constraints.parse_nested(t)?;
    }
    for s in &args.set {
        o.set(s)?;
    }
    o.check()?;
    Ok(o)
}

pub(super) fn tests(args: &SearchArgs) -> Result<Vec<(String, PathBuf)>, String> {
    args.tests
        .iter()
        .map(|t| match t.split_once('=') {
            Some((n, f)) if !n.is_empty() && !f.is_empty() => Ok((n.to_string(), PathBuf::from(f))),
            _ => Err(format!("--test {t}: expected NAME=FILE.csv")),
        })
        .collect()
}

/// Reads `--seed-programs`: one `{"src", "init"}` per line, checked as a proposer's lines are.
fn seed_programs(path: &Path, inputs: &[String]) -> Result<Vec<Candidate>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let text = crate::search::dataset::utf8(bytes, &path.display().to_string())?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line, inputs, Origin::Seed) {
            Incoming::Program(c) => out.push(c),
            Incoming::Bad { error, .. } => {
                return Err(format!("{}:{}: {error}", path.display(), i + 1))
            }
        }
    }
    Ok(out)
}

/// The most worker threads `--threads` takes.
const MAX_THREADS: usize = 1024;

/// Checks the numeric flags before anything runs.
fn check_flags(args: &SearchArgs) -> Result<(), String> {
    if let Some(b) = args.budget {
        if !(b.is_finite() && b > 0.0 && b <= 1e9) {
            return Err(format!(
                "--budget {b}: expected a number of seconds above 0 and at most 1e9"
            ));
        }
    }
    let t = args.proposer_timeout;
    if !(t.is_finite() && t > 0.0 && t <= 1e6) {
        return Err(format!(
            "--proposer-timeout {t}: expected a number of seconds above 0"
        ));
    }
    if args.proposer_max_line == 0 || args.proposer_queue == 0 {
        return Err("--proposer-max-line and --proposer-queue: expected at least 1".into());
    }
    if args.threads.is_some_and(|n| n == 0 || n > MAX_THREADS) {
        return Err(format!("--threads: expected 1 to {MAX_THREADS}"));
    }
    if args.max_memory_mb == 0 || args.max_memory_mb > 1 << 20 {
        return Err(format!(
            "--max-memory-mb {}: expected 1 to 1048576 (1 TB)",
            args.max_memory_mb
        ));
    }
    for (flag, value, least) in [
        ("--islands", args.islands, 1),
        ("--population", args.population, 2),
        ("--restarts", args.restarts, 1),
    ] {
        if value < least {
            return Err(format!("{flag} {value}: expected at least {least}"));
        }
    }
    Ok(())
}

fn run(args: &SearchArgs) -> Result<ExitCode, String> {
    check_flags(args)?;
    if args.time.is_some() {
        return super::ode::run(args);
    }
    refuse_settings(args, &[])?;
    let targets: Vec<String> = args
        .target
        .split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    if targets.len() > 1 {
        return super::targets::run(args, &targets);
    }
    let early_stop = args
        .early_stop
        .as_deref()
        .map(EarlyStop::parse)
        .transpose()?;
    let cols = Columns {
        target: targets.first().cloned().unwrap_or_default(),
        inputs: args.inputs.clone(),
        weights: args.weights.clone(),
    };
    let data = Data::read(&args.data, &tests(args)?, &cols)?;
    let threads = args.threads.unwrap_or_else(schedule::cores).max(1);
    let mut engine = match &args.resume {
        Some(dir) => {
            let path = dir.join("checkpoint.json");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let c: Checkpoint = serde_json::from_str(&text)
                .map_err(|e| format!("{}: not a checkpoint of ndvm search: {e}", path.display()))?;
            Engine::resume(c, data, threads)?
        }
        None => {
            let seeds = match &args.seed_programs {
                Some(p) => seed_programs(p, &data.inputs)?,
                None => Vec::new(),
            };
            Engine::new(options(args)?, data, threads, seeds)?
        }
    };
    engine.early_stop = early_stop;
    // The budget runs from here: the data is read and decoded.
    let started = Instant::now();
    let out = args.out.clone().or_else(|| args.resume.clone());
    if let Some(dir) = &out {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let interrupt = Arc::new(AtomicBool::new(false));
    // Cancels the walks in progress: set by a signal or when the search's time is up, so
    // that no candidate, however costly, holds the search past its budget.
    let halt = Arc::new(AtomicBool::new(false));
    // A first Ctrl-C or SIGTERM stops the search cleanly, the front printed and the
    // checkpoint written, and cancels the walks in progress; a second one ends the process.
    super::stop_on_signals(&interrupt, &[&halt]);
    let budget = match (args.budget, args.max_evals) {
        (Some(b), _) => Some(b),
        (None, None) => Some(60.0),
        (None, Some(_)) => None,
    };
    // The final refit of the front on every row runs inside the budget.
    let search_until = budget.map(|b| started + Duration::from_secs_f64(b * 0.95));
    let stop = Stop {
        max_evals: args.max_evals,
        deadline: search_until,
        interrupt: Arc::clone(&interrupt),
        proposer_only: args.proposer_only,
    };
    let mut outside = match &args.proposer {
        Some(cmd) => Some(
            Outside::start(
                cmd,
                &engine,
                Duration::from_secs_f64(args.proposer_timeout.max(0.01)),
                StreamLimits {
                    max_line: args.proposer_max_line,
                    queue: args.proposer_queue,
                },
                Arc::clone(&interrupt),
            )?
            .only(args.proposer_only),
        ),
        None => None,
    };
    let bar = progress(budget);
    let mut last_save = Instant::now();
    engine.set_cancel(Some(Arc::clone(&halt)));
    let timer = search_until.map(|until| super::Alarm::at(until, Arc::clone(&halt)));
    {
        let feed: &mut dyn Feed = match outside.as_mut() {
            Some(o) => o,
            None => &mut NoFeed,
        };
        engine.run(feed, &stop, &mut |e: &Engine| {
            if let Some(bar) = &bar {
                let s = e.seconds();
                let best = e
                    .hall
                    .best_loss()
                    .map_or("-".into(), |b| format!("{b:.4e}"));
                bar.set_message(format!(
                    "{} evals, {:.0} fits/s, best loss {best}, front {}",
                    e.counters.evaluations,
                    e.counters.fits as f64 / s.max(1e-9),
                    e.hall.front().len()
                ));
            }
            if let Some(dir) = &out {
                if last_save.elapsed() > Duration::from_secs(30) {
                    let _ = save_checkpoint(dir, e);
                    last_save = Instant::now();
                }
            }
        });
    }
    if let Some(bar) = &bar {
        bar.set_message("fitting the front on every training row");
    }
    // The front's refit and scoring run to the end (short once the budget is spent: see
    // `Engine::polish`).
    drop(timer);
    engine.set_cancel(None);
    let stopped = engine.stop_reason(&stop);
    let proposer_status = outside.as_mut().map(|o| o.finish());
    // Nothing written from here on stops the front from being printed: a failed write is
    // reported after it, with a non-zero exit.
    let mut failed_writes: Vec<String> = Vec::new();
    if let Some(dir) = &out {
        if let Err(e) = save_checkpoint(dir, &engine) {
            failed_writes.push(e);
        }
    }
    engine.polish(
        budget.map(|b| started + Duration::from_secs_f64(b)),
        &interrupt,
    );
    let front: Vec<Member> = engine.hall.front().into_iter().cloned().collect();
    let mut rows = report::rows(&mut engine, &front);
    let selected = report::choose(&mut rows, args.select);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let summary = Summary::of(
        &engine,
        stopped,
        proposer_status.as_ref().map(ProposerStatus::json),
    );
    let test_names: Vec<String> = engine.data.tests.iter().map(|t| t.name.clone()).collect();
    if args.format == "json" {
        let v = serde_json::json!({ "summary": summary, "front": rows, "selected": selected });
        let _ = writeln!(std::io::stdout().lock(), "{v}");
    } else {
        print_text(&summary, &rows, &test_names, proposer_status.as_ref());
        if let Some(c) = selected["complexity"].as_u64() {
            let _ = writeln!(
                std::io::stdout().lock(),
                "\n* the model chosen by --select {} (complexity {c})",
                args.select.name()
            );
        }
    }
    let _ = std::io::stdout().flush();
    if let Some(dir) = &out {
        if let Err(e) = write_outputs(dir, &engine, &rows, &test_names) {
            failed_writes.push(e);
        }
    }
    if failed_writes.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for e in &failed_writes {
        eprintln!("error: {e} (the front above is the search's result)");
    }
    Ok(ExitCode::from(3))
}

fn save_checkpoint(dir: &Path, e: &Engine) -> Result<(), String> {
    write_checkpoint(dir, &e.checkpoint())
}

/// Writes `c` to `DIR/checkpoint.json` through a temporary file, so that a failed write leaves
/// the last checkpoint whole.
pub(super) fn write_checkpoint(dir: &Path, c: &impl serde::Serialize) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("checkpoint.json");
    let tmp = dir.join("checkpoint.json.tmp");
    // Written as it is serialised: a checkpoint of a long search is tens of megabytes, never
    // held whole in memory.
    let write = || -> std::io::Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer(&mut file, c)?;
        file.flush()
    };
    write().map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn write_outputs(
    dir: &Path,
    e: &Engine,
    rows: &[report::Row],
    tests: &[String],
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    let mut jsonl = String::new();
    for r in rows {
        jsonl.push_str(&serde_json::to_string(r).map_err(|e| e.to_string())?);
        jsonl.push('\n');
    }
    write("front.jsonl", jsonl)?;
    write("front.csv", report::csv(rows, tests))?;
    let pts: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.complexity as f64, r.train_loss))
        .collect();
    write(
        "front.svg",
        report::svg(
            &pts,
            "Pareto front",
            "complexity (nodes)",
            "training MSE",
            true,
        ),
    )?;
    write(
        "progress.svg",
        report::svg(
            &e.history,
            "Best loss against time",
            "seconds",
            "MSE on the fit rows",
            true,
        ),
    )
}

/// A spinner with the budget and a message, on a terminal.
pub(super) fn progress(budget: Option<f64>) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    let template = match budget {
        Some(b) => format!("{{elapsed_precise}} / {b:.0} s  {{msg}}"),
        None => "{elapsed_precise}  {msg}".to_string(),
    };
    bar.set_style(ProgressStyle::with_template(&template).expect("a valid template"));
    bar.enable_steady_tick(Duration::from_millis(250));
    Some(bar)
}

pub(super) fn print_text(
    s: &Summary,
    rows: &[report::Row],
    tests: &[String],
    p: Option<&ProposerStatus>,
) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{} candidates in {:.1} s on {} thread(s): {} fits ({:.0} per second), {} from the \
         skeleton cache, {} failed, {} distinct skeletons; stopped by {}",
        s.counters.evaluations,
        s.seconds,
        s.threads,
        s.counters.fits,
        s.fits_per_second,
        s.counters.cache_hits,
        s.counters.failed,
        s.counters.distinct_skeletons,
        s.stopped
    );
    if let Some(p) = p {
        let _ = writeln!(out, "outside proposer: {}", p.describe());
    }
    let _ = writeln!(
        out,
        "\nPareto front (complexity against training {}, on {} rows):",
        s.loss_label(),
        s.train_rows
    );
    let label = if s.loss == "l2" && !s.weighted {
        "train MSE"
    } else {
        "train loss"
    };
    let _ = write!(out, "{}", report::table(rows, tests, label));
}
