//! `ndvm search --target y1,y2,...`: one search per target in one run, on the same data and
//! threads, each with its share of the budget; a front per target.

use super::search::{options, progress, tests, SearchArgs};
use crate::schedule;
use crate::search::dataset::{Columns, Csv, Data};
use crate::search::engine::{Engine, Stop};
use crate::search::feed::NoFeed;
use crate::search::front::Member;
use crate::search::report::{self, Summary};
use crate::search::select::EarlyStop;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One target's search: its summary, its front and the chosen member.
struct Found {
    target: String,
    summary: Summary,
    rows: Vec<report::Row>,
    selected: Value,
    tests: Vec<String>,
}

/// Runs a search per target of `targets`.
pub(super) fn run(args: &SearchArgs, targets: &[String]) -> Result<ExitCode, String> {
    for (flag, given) in [
        ("--resume", args.resume.is_some()),
        ("--proposer", args.proposer.is_some()),
        ("--seed-programs", args.seed_programs.is_some()),
    ] {
        if given {
            return Err(format!(
                "{flag} takes one target; several (--target {}) are searched one after another \
                 without it",
                targets.join(",")
            ));
        }
    }
    for (i, t) in targets.iter().enumerate() {
        if targets[..i].contains(t) {
            return Err(format!("--target: `{t}` is listed twice"));
        }
    }
    let early_stop = args
        .early_stop
        .as_deref()
        .map(EarlyStop::parse)
        .transpose()?;
    // The inputs: as given, else every column but the targets and the weights.
    let inputs = match &args.inputs {
        Some(list) => list.clone(),
        None => {
            let csv = Csv::read(&args.data)?;
            csv.names
                .iter()
                .filter(|n| !targets.contains(n) && Some(*n) != args.weights.as_ref())
                .cloned()
                .collect()
        }
    };
    let mut sets = Vec::new();
    for t in targets {
        let cols = Columns {
            target: t.clone(),
            inputs: Some(inputs.clone()),
            weights: args.weights.clone(),
        };
        sets.push(Data::read(&args.data, &tests(args)?, &cols)?);
    }
    let options = options(args)?;
    // Each target's units: the others' left out (they are not its inputs).
    let units_for = |t: &str| {
        options.units.as_ref().map(|u| {
            u.split(',')
                .filter(|part| {
                    let name = part.split('=').next().unwrap_or("").trim();
                    name == t || !targets.iter().any(|o| o == name)
                })
                .collect::<Vec<_>>()
                .join(",")
        })
    };
    let threads = args.threads.unwrap_or_else(schedule::cores).max(1);
    let budget = match (args.budget, args.max_evals) {
        (Some(b), _) => Some(b),
        (None, None) => Some(60.0),
        (None, Some(_)) => None,
    };
    let started = Instant::now();
    let interrupt = Arc::new(AtomicBool::new(false));
    let halt = Arc::new(AtomicBool::new(false));
    super::stop_on_signals(&interrupt, &[&halt]);
    let mut found = Vec::new();
    for (k, data) in sets.into_iter().enumerate() {
        let target = data.target.clone();
        let tests: Vec<String> = data.tests.iter().map(|t| t.name.clone()).collect();
        let mut own = options.clone();
        own.units = units_for(&target);
        let mut engine = Engine::new(own, data, threads, Vec::new())?;
        engine.early_stop = early_stop;
        // Each target's share: what is left of the budget over the targets left.
        let end = budget.map(|b| {
            let left = Duration::from_secs_f64(b).saturating_sub(started.elapsed());
            Instant::now() + left / (targets.len() - k) as u32
        });
        let search_until = end.map(|e| {
            let now = Instant::now();
            now + e.saturating_duration_since(now).mul_f64(0.95)
        });
        let stop = Stop {
            max_evals: args.max_evals,
            deadline: search_until,
            interrupt: Arc::clone(&interrupt),
            proposer_only: false,
        };
        halt.store(interrupt.load(Ordering::Relaxed), Ordering::Relaxed);
        let bar = progress(end.map(|e| e.saturating_duration_since(Instant::now()).as_secs_f64()));
        engine.set_cancel(Some(Arc::clone(&halt)));
        let timer = search_until.map(|until| super::Alarm::at(until, Arc::clone(&halt)));
        engine.run(&mut NoFeed, &stop, &mut |e: &Engine| {
            if let Some(bar) = &bar {
                let best = e
                    .hall
                    .best_loss()
                    .map_or("-".into(), |b| format!("{b:.4e}"));
                bar.set_message(format!(
                    "{target}: {} evals, best loss {best}, front {}",
                    e.counters.evaluations,
                    e.hall.front().len()
                ));
            }
        });
        drop(timer);
        engine.set_cancel(None);
        let stopped = engine.stop_reason(&stop);
        engine.polish(end, &interrupt);
        let front: Vec<Member> = engine.hall.front().into_iter().cloned().collect();
        let mut rows = report::rows(&mut engine, &front);
        let selected = report::choose(&mut rows, args.select);
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        found.push(Found {
            summary: Summary::of(&engine, stopped, None),
            target,
            rows,
            selected,
            tests,
        });
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
    }
    let mut out = std::io::stdout().lock();
    if args.format == "json" {
        let mut fronts = Map::new();
        let mut summaries = Map::new();
        let mut selected = Map::new();
        for f in &found {
            fronts.insert(f.target.clone(), json!(f.rows));
            summaries.insert(f.target.clone(), json!(f.summary));
            selected.insert(f.target.clone(), f.selected.clone());
        }
        let summary = json!({
            "targets": targets,
            "seconds": started.elapsed().as_secs_f64(),
            "threads": threads,
            "per_target": summaries,
        });
        let v = json!({"summary": summary, "fronts": fronts, "selected": selected});
        let _ = writeln!(out, "{v}");
    } else {
        for f in &found {
            let _ = writeln!(out, "\n== {} ==", f.target);
            drop(out);
            super::search::print_text(&f.summary, &f.rows, &f.tests, None);
            out = std::io::stdout().lock();
            if let Some(c) = f.selected["complexity"].as_u64() {
                let _ = writeln!(
                    out,
                    "\n* the model of {} chosen by --select {} (complexity {c})",
                    f.target,
                    args.select.name()
                );
            }
        }
    }
    let _ = out.flush();
    // The fronts are printed: a failed write loses nothing but its file.
    let mut failed = false;
    if let Some(dir) = &args.out {
        for f in &found {
            let sub = dir.join(&f.target);
            let write = |name: &str, text: String| {
                std::fs::create_dir_all(&sub)
                    .and_then(|()| std::fs::write(sub.join(name), text))
                    .map_err(|e| format!("cannot write {}: {e}", sub.join(name).display()))
            };
            let jsonl: String = f.rows.iter().map(|r| json!(r).to_string() + "\n").collect();
            for r in [
                write("front.jsonl", jsonl),
                write("front.csv", report::csv(&f.rows, &f.tests)),
            ] {
                if let Err(e) = r {
                    eprintln!("error: {e} (the fronts above are the search's result)");
                    failed = true;
                }
            }
        }
    }
    Ok(if failed {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}
