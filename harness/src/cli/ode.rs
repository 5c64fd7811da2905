//! `ndvm search --time COL`: ODE discovery from trajectories (docs/ode.md).

use super::search::SearchArgs;
use crate::ode::checkpoint::{Checkpoint, Kept};
use crate::ode::data::{self, Columns, OdeData, Trajectory};
use crate::ode::discover::{self, Run, Settings, Snapshot};
use crate::ode::outside::{Outside, SystemFeed};
use crate::ode::report::{self, Row};
use crate::ode::shoot::FitOptions;
use crate::ode::simulate::simulate;
use crate::schedule;
use crate::search::options::Iterate;
use crate::search::proposer::{ProposerStatus, StreamLimits};
use runtime_cpu::Session;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The settings flags of ODE discovery a checkpoint keeps (refused with `--resume`).
const SETTINGS: &[&str] = &["segment", "max_step", "fixed_initial", "autonomous"];

/// Runs ODE discovery.
pub fn run(args: &SearchArgs) -> Result<ExitCode, String> {
    if args.proposer_only && args.proposer.is_none() {
        return Err("--proposer-only needs --proposer".into());
    }
    super::search::refuse_settings(args, SETTINGS)?;
    if args.weights.is_some() || args.given.iter().any(|g| g == "loss") {
        return Err(
            "--weights and --loss apply to ndvm search without --time; ODE discovery \
                    fits the integrated trajectories by least squares"
                .into(),
        );
    }
    if args.units.is_some() || args.complexity_of.is_some() {
        return Err(
            "--units and --complexity-of apply to ndvm search without --time (ODE \
                    discovery counts every node 1 and does not check units)"
                .into(),
        );
    }
    if args.early_stop.is_some() {
        return Err(
            "--early-stop ends a search without --time; ODE discovery stops at its \
                    --budget or --max-evals"
                .into(),
        );
    }
    let cols = Columns {
        time: args.time.clone().unwrap_or_default(),
        states: args
            .target
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        trajectory: args.trajectory.clone(),
        inputs: args.inputs.clone().unwrap_or_default(),
    };
    if !(args.max_step.is_none_or(|h| h.is_finite() && h > 0.0)) {
        return Err("--max-step: expected a number above 0".into());
    }
    if args.segment < 2 {
        return Err(format!(
            "--segment {}: expected at least 2 observations",
            args.segment
        ));
    }
    let data = data::read_all(&args.data, &super::search::tests(args)?, &cols)?;
    let threads = args.threads.unwrap_or_else(schedule::cores).max(1);
    let checkpoint = match &args.resume {
        Some(dir) => {
            let path = dir.join("checkpoint.json");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let c: Checkpoint = serde_json::from_str(&text).map_err(|e| {
                format!("{}: not a checkpoint of an ODE search: {e}", path.display())
            })?;
            Some(c)
        }
        None => None,
    };
    let (search, segment, max_step, fit_initial, autonomous) = match &checkpoint {
        Some(c) => (
            c.search.clone(),
            c.segment,
            c.max_step.unwrap_or(f64::INFINITY),
            c.fit_initial,
            c.autonomous,
        ),
        None => {
            let mut search = super::search::options(args)?;
            search.iterate = Iterate::Off;
            search.share = false;
            (
                search,
                args.segment,
                args.max_step.unwrap_or(f64::INFINITY),
                !args.fixed_initial,
                args.autonomous,
            )
        }
    };
    let resumed = checkpoint.map(|c| c.resume(&data)).transpose()?;
    let seeds = match &args.seed_programs {
        Some(p) => {
            let file = p.display().to_string();
            let bytes = std::fs::read(p).map_err(|e| format!("cannot read {file}: {e}"))?;
            let text = crate::search::dataset::utf8(bytes, &file)?;
            discover::read_seeds(&text, &file, &data, autonomous)?
        }
        None => Vec::new(),
    };
    let limits = crate::search::candidate::FitSettings {
        max_steps: search.fit.max_steps.max(1) * 100,
        ..search.fit.clone()
    }
    .limits();
    let settings = Settings {
        seeds,
        search,
        fit: FitOptions {
            segment,
            max_step,
            limits,
            fit_initial,
            ..FitOptions::default()
        },
        autonomous,
        threads,
        max_evals: args.max_evals.map(|n| n.div_ceil(cols.states.len() as u64)),
        max_systems: Settings::caps(args.max_evals).0,
        rounds: Settings::caps(args.max_evals).1,
        generations: Settings::caps(args.max_evals).2,
        proposer_only: args.proposer_only,
    };
    let started = Instant::now();
    let budget = match (args.budget, args.max_evals) {
        (Some(b), _) => Some(b),
        (None, None) => Some(60.0),
        (None, Some(_)) => None,
    };
    let deadline = budget.map(|b| started + Duration::from_secs_f64(b * 0.9));
    let interrupt = Arc::new(AtomicBool::new(false));
    // Cancels the integration walks in progress at the deadline or a signal: no costly
    // candidate holds the search past its budget.
    let halt = Arc::new(AtomicBool::new(false));
    super::stop_on_signals(&interrupt, &[&halt]);
    let timer = deadline.map(|until| super::Alarm::at(until, Arc::clone(&halt)));
    let bar = super::search::progress(budget);
    let say = |m: &str| {
        if let Some(b) = &bar {
            b.set_message(m.to_string());
        }
    };
    // The checkpoint: every 30 seconds of the third stage and at its end.
    let out_dir = args.out.clone().or_else(|| args.resume.clone());
    let kept = Kept {
        columns: &data.columns,
        autonomous,
        search: &settings.search,
        segment,
        max_step,
        fit_initial,
    };
    let mut saved = Instant::now();
    let mut save_error = None;
    let mut save = |s: Snapshot| {
        let Some(dir) = &out_dir else { return };
        if s.last || saved.elapsed() >= Duration::from_secs(30) {
            saved = Instant::now();
            let c = Checkpoint::of(&s, &kept, &data);
            if let Err(e) = super::search::write_checkpoint(dir, &c) {
                log::warn!("{e}");
                save_error = Some(e);
            }
        }
    };
    let mut outside = match &args.proposer {
        Some(cmd) => Some(Outside::start(
            cmd,
            &data,
            discover::stage_inputs(&data, autonomous),
            settings.search.op_set()?.names(),
            autonomous,
            (
                discover::max_step(&settings.fit, &data),
                settings.fit.limits,
            ),
            (
                Duration::from_secs_f64(args.proposer_timeout.max(0.01)),
                StreamLimits {
                    max_line: args.proposer_max_line,
                    queue: args.proposer_queue,
                },
                args.proposer_only,
            ),
            Arc::clone(&interrupt),
        )?),
        None => None,
    };
    let outcome = discover::discover(
        &data,
        &settings,
        Run {
            deadline,
            interrupt: &interrupt,
            cancel: Some(Arc::clone(&halt)),
            feed: outside.as_mut().map(|o| o as &mut dyn SystemFeed),
            resume: resumed,
            save: &mut save,
            progress: &say,
        },
    );
    let proposer = outside.as_mut().map(Outside::finish);
    let outcome = outcome?;
    drop(timer);
    say("scoring the front");
    let mut session = Session::<f64>::new();
    let max_step = outcome.max_step;
    let limits = settings.fit.limits;
    let mut rows = report::rows(&data, &outcome, limits);
    let selected = report::choose(&mut rows, args.select);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let stopped = if interrupt.load(Ordering::Relaxed) {
        "interrupted"
    } else if args.proposer_only && deadline.is_none_or(|end| Instant::now() < end) {
        "proposer"
    } else if budget.is_some() {
        "budget"
    } else {
        "max-evals"
    };
    let c = &outcome.counters;
    let summary = report::summary_json(
        &data,
        &outcome,
        &settings,
        started.elapsed().as_secs_f64(),
        stopped,
        proposer.as_ref().map(ProposerStatus::json),
    );
    let mut out = std::io::stdout().lock();
    if args.format == "json" {
        let front: Vec<_> = rows.iter().map(|r| report::member_json(&data, r)).collect();
        let _ = writeln!(
            out,
            "{}",
            serde_json::json!({"summary": summary, "front": front, "selected": selected})
        );
    } else {
        let _ = writeln!(
            out,
            "{} right-hand sides proposed, {} systems fitted through the integrator ({} bred as \
             systems, {} failed) in {:.1} s on {} thread(s); stopped by {stopped}",
            c.proposals,
            c.systems,
            c.evolved,
            c.failed,
            started.elapsed().as_secs_f64(),
            threads
        );
        if let Some(p) = &proposer {
            let _ = writeln!(
                out,
                "outside proposer: {}; {} of its systems fitted",
                p.describe(),
                c.outside
            );
        }
        let _ = writeln!(
            out,
            "\nPareto front (complexity against the integrated trajectories' MSE, {} \
             trajectories, {} observations):",
            data.train.len(),
            data.train.iter().map(Trajectory::len).sum::<usize>()
        );
        let _ = write!(out, "{}", report::table(&data, &rows));
        if let Some(c) = selected["complexity"].as_u64() {
            let _ = writeln!(
                out,
                "\n* the model chosen by --select {} (complexity {c})",
                args.select.name()
            );
        }
    }
    let _ = out.flush();
    drop(out);
    if let Some(e) = save_error {
        eprintln!("error: {e} (the front above is the search's result)");
        return Ok(ExitCode::from(3));
    }
    if let Some(dir) = &out_dir {
        if let Err(e) = write_outputs(dir, &data, &rows, &mut session, max_step, limits) {
            eprintln!("error: {e} (the front above is the search's result)");
            return Ok(ExitCode::from(3));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn write_outputs(
    dir: &Path,
    data: &OdeData,
    rows: &[Row],
    session: &mut Session<f64>,
    max_step: f64,
    limits: runtime_cpu::Limits,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    let mut jsonl = String::new();
    for r in rows {
        jsonl.push_str(&report::member_json(data, r).to_string());
        jsonl.push('\n');
    }
    write("front.jsonl", jsonl)?;
    // The plots show the chosen member.
    let Some(best) = rows.iter().find(|r| r.selected).or(rows.last()) else {
        return Ok(());
    };
    let f = &best.fitted;
    let states = &data.columns.states;
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let train = simulate(
        session,
        &f.system,
        &f.params,
        &data.train,
        &f.initial,
        max_step,
        limits,
    );
    if let Ok(paths) = train {
        for (tr, p) in data.train.iter().zip(&paths) {
            let title = format!(
                "training trajectory {} (complexity {})",
                tr.name, f.complexity
            );
            write(
                &format!("train_{}.svg", safe(&tr.name)),
                report::trajectory_svg(&title, states, tr, p),
            )?;
        }
    }
    for (name, trajs) in &data.tests {
        let starts: Vec<Vec<f64>> = trajs.iter().map(|t| t.state(0)).collect();
        if let Ok(paths) = simulate(
            session, &f.system, &f.params, trajs, &starts, max_step, limits,
        ) {
            for (tr, p) in trajs.iter().zip(&paths) {
                let title = format!("test {name}, trajectory {} (from its first row)", tr.name);
                write(
                    &format!("test_{}_{}.svg", safe(name), safe(&tr.name)),
                    report::trajectory_svg(&title, states, tr, p),
                )?;
            }
        }
    }
    Ok(())
}
