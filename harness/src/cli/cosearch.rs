//! `ndvm cosearch`: replay a stream of candidate programs through calibration under a budget.

use super::output::Precision;
use crate::calibrate::adam::AdamSettings;
use crate::cosearch::record::{agreement, read_records, summarise, FitRecord, Summary};
use crate::cosearch::stream::{read_stream, Inits, Task};
use crate::cosearch::{fit_number, plot, prepare, Prepared, Protocol};
use crate::device::Attach;
use crate::schedule::{self, Stop};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use runtime_cpu::{DecodeOptions, Limits, Session};
use runtime_gpu::DeviceChoice;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Arguments of `ndvm cosearch`.
#[derive(Args, Debug)]
#[command(
    after_help = "Example (the paper's damped-oscillator stream, one minute on all cores):\n  \
    ndvm cosearch --stream data/cosearch/damped_oscillator_candidates.jsonl \
    --data data/cosearch/damped_oscillator.csv --inits data/cosearch/damped_oscillator_inits.jsonl \
    --budget 60 --out fits.jsonl"
)]
pub struct CosearchArgs {
    /// The candidate stream: JSONL lines `{"src", "params", "skeleton"}`.
    #[arg(long, value_name = "CANDIDATES.jsonl")]
    pub stream: PathBuf,
    /// The task: a CSV with columns `x`, `y` and `split` (`train` or `holdout`).
    #[arg(long, value_name = "TASK.csv")]
    pub data: PathBuf,
    /// Initial parameter values per (cycle, index); fits beyond it draw N(0, 0.3^2).
    #[arg(long, value_name = "INITS.jsonl")]
    pub inits: Option<PathBuf>,
    /// Wall-clock budget in seconds (no fit starts after it).
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Stop after this many fits (makes a run count-bounded and reproducible).
    #[arg(long, value_name = "N")]
    pub max_fits: Option<usize>,
    /// Adam steps per fit.
    #[arg(long, default_value_t = 50)]
    pub steps: usize,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 0.05)]
    pub lr: f64,
    /// Worker threads (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Writes one line per fit: `cycle, index, held_mse, train_loss, held_r2, error`; a plot of
    /// best R^2 and fits against time goes next to it (`.svg`).
    #[arg(long, value_name = "FITS.jsonl")]
    pub out: Option<PathBuf>,
    /// Compares the fits with reference fits (same line format) and prints the agreement.
    #[arg(long, value_name = "FITS.jsonl")]
    pub reference: Option<PathBuf>,
    /// The number type to compute in.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    pub precision: Precision,
    /// `sqrt`, `log` and `normalize` clamp their argument to at least 1e-8, like the paper's
    /// artifact runtime (to replay its results).
    #[arg(long)]
    pub protected_ops: bool,
    /// Where the numeric regions run: `cpu`, `gpu` (f32 only) or `auto` (the GPU for the
    /// regions the measured cost model expects to run faster there; the CPU in f64).
    #[arg(long, value_name = "cpu|gpu|auto", default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
    /// Node visits allowed per evaluation (a runaway candidate fails at this budget).
    #[arg(long, value_name = "N", default_value_t = 2_000_000)]
    pub max_steps: u64,
    /// `text` or `json`.
    #[arg(long, default_value = "text")]
    pub format: String,
}

/// Runs `ndvm cosearch`.
pub fn main(args: CosearchArgs) -> ExitCode {
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &CosearchArgs) -> Result<ExitCode, String> {
    if args.budget.is_none() && args.max_fits.is_none() {
        return Err("give --budget SECONDS, --max-fits N, or both".into());
    }
    let stream = read_stream(&args.stream).map_err(|e| format!("{e:#}"))?;
    let task = Task::read(&args.data).map_err(|e| format!("{e:#}"))?;
    let inits = match &args.inits {
        Some(p) => Inits::read(p).map_err(|e| format!("{e:#}"))?,
        None => Inits::default(),
    };
    let prepared = prepare(
        stream,
        &task,
        DecodeOptions {
            protected_ops: args.protected_ops,
        },
    );
    let skeletons: Vec<String> = prepared
        .iter()
        .map(|p| {
            p.candidate.as_ref().map_or(String::new(), |c| {
                if c.skeleton.is_empty() {
                    c.src.clone()
                } else {
                    c.skeleton.clone()
                }
            })
        })
        .collect();
    let protocol = Protocol {
        steps: args.steps,
        adam: AdamSettings {
            lr: args.lr,
            ..Default::default()
        },
        limits: Limits {
            max_steps: args.max_steps,
            ..Limits::default()
        },
    };
    let threads = args.threads.unwrap_or_else(schedule::cores).max(1);
    let (records, finished_at, seconds) = match args.precision {
        Precision::F64 => replay::<f64>(args, &prepared, &task, &inits, &protocol, threads)?,
        Precision::F32 => replay::<f32>(args, &prepared, &task, &inits, &protocol, threads)?,
    };
    let summary = summarise(&records, &finished_at, &skeletons, seconds, threads);
    if let Some(out) = &args.out {
        let mut text = String::new();
        for r in &records {
            text.push_str(&serde_json::to_string(r).expect("serialisable"));
            text.push('\n');
        }
        std::fs::write(out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        let r2: Vec<Option<f64>> = records.iter().map(|r| r.held_r2).collect();
        let title = format!("{} fits, {} threads", records.len(), threads);
        let svg_path = out.with_extension("svg");
        std::fs::write(&svg_path, plot::svg(&finished_at, &r2, &title))
            .map_err(|e| format!("cannot write {}: {e}", svg_path.display()))?;
    }
    let agree = match &args.reference {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            Some(agreement(
                &records,
                &read_records(&text).map_err(|e| format!("{}: {e}", p.display()))?,
            ))
        }
        None => None,
    };
    print_summary(args, &summary, agree.as_ref());
    Ok(ExitCode::SUCCESS)
}

/// Runs the fits across `threads` workers; returns them in order with their completion times.
fn replay<R: Attach>(
    args: &CosearchArgs,
    prepared: &[Prepared],
    task: &Task,
    inits: &Inits,
    protocol: &Protocol,
    threads: usize,
) -> Result<(Vec<FitRecord>, Vec<f64>, f64), String> {
    // A device the user cannot have is a usage error, found before any worker starts.
    R::attach(&mut Session::<R>::new(), args.device)?;
    let start = Instant::now();
    // The budget's end or a signal cancels the fits in progress (each recorded as stopped),
    // so that no candidate holds the replay past its budget; after a signal no fit starts.
    let halt = Arc::new(AtomicBool::new(false));
    let signalled = Arc::new(AtomicBool::new(false));
    super::stop_on_signals(&signalled, &[&halt]);
    let stop = Stop {
        max_jobs: args.max_fits,
        deadline: args.budget.map(|b| start + Duration::from_secs_f64(b)),
        flag: Some(&signalled),
    };
    let _alarm = stop
        .deadline
        .map(|d| super::Alarm::at(d, Arc::clone(&halt)));
    let bar = progress(args, start);
    let times = Mutex::new(Vec::new());
    let best = Mutex::new((0usize, f64::NEG_INFINITY));
    let records = schedule::run(
        threads,
        stop,
        || {
            let mut s = Session::<R>::new();
            R::attach(&mut s, args.device).expect("checked before the workers start");
            s.set_cancel(Some(Arc::clone(&halt)));
            s
        },
        |session, n| fit_number(session, prepared, task, inits, protocol, n),
        |n, r: &FitRecord| {
            let t = start.elapsed().as_secs_f64();
            times.lock().expect("not poisoned").push((n, t));
            if let Some(bar) = &bar {
                let mut b = best.lock().expect("not poisoned");
                if r.success() {
                    b.0 += 1;
                }
                if let Some(r2) = r.held_r2 {
                    b.1 = b.1.max(r2);
                }
                bar.set_position(bar.position() + 1);
                bar.set_message(format!("successes {}  best R^2 {:.4}", b.0, b.1));
            }
        },
    );
    let seconds = start.elapsed().as_secs_f64();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut finished_at = vec![0.0; records.len()];
    for (n, t) in times.into_inner().expect("not poisoned") {
        if n < finished_at.len() {
            finished_at[n] = t;
        }
    }
    Ok((records, finished_at, seconds))
}

fn progress(args: &CosearchArgs, _start: Instant) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = match args.max_fits {
        Some(n) => ProgressBar::new(n as u64),
        None => ProgressBar::new_spinner(),
    };
    let style = ProgressStyle::with_template("{elapsed_precise} {pos} fits ({per_sec}) {msg}")
        .expect("a valid template");
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

fn print_summary(
    args: &CosearchArgs,
    s: &Summary,
    agree: Option<&crate::cosearch::record::Agreement>,
) {
    if args.format == "json" {
        println!(
            "{}",
            serde_json::json!({ "summary": s, "agreement": agree })
        );
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "fits                 {}", s.fits);
    let _ = writeln!(
        out,
        "time                 {:.2} s on {} thread(s)",
        s.seconds, s.threads
    );
    let _ = writeln!(out, "fits per second      {:.1}", s.fits_per_second);
    let _ = writeln!(out, "failed fits          {}", s.failed);
    let _ = writeln!(out, "successes (R^2>0.9)  {}", s.successes);
    let _ = writeln!(
        out,
        "distinct skeletons   {}",
        s.distinct_successful_skeletons
    );
    let _ = writeln!(
        out,
        "best held-out R^2    {}",
        s.best_r2.map_or("-".into(), |r| format!("{r:.5}"))
    );
    let _ = writeln!(
        out,
        "first success        {}",
        s.first_success_seconds
            .map_or("-".into(), |t| format!("{t:.3} s"))
    );
    if let Some(a) = agree {
        let pct = 100.0 * a.agree as f64 / a.compared.max(1) as f64;
        let _ = writeln!(
            out,
            "agreement with the reference: {}/{} fits ({pct:.2}%)",
            a.agree, a.compared
        );
        let _ = writeln!(
            out,
            "  reference successes matched: {}/{}",
            a.successes_matched, a.reference_successes
        );
        let _ = writeln!(
            out,
            "  failed only in the reference: {}; failed only here: {}",
            a.failed_only_in_reference, a.failed_only_here
        );
    }
}
