//! `ndvm fuzz`: randomized differential testing of the runtime against the independent oracle
//! of `ndvm-check`, over generated programs of every family of the language.
//!
//! Each program passes six gates (G1 forward vs oracle, G2 gradients vs oracle, G3 gradients
//! vs finite differences, G4 lane decomposition, G5 thread counts, G6 f32 vs f64). The report is
//! a table per feature family; each failing program is shrunk and written to `--out`.

use clap::{Args, ValueEnum};
use ndvm_check::driver::{self, CaseResult, Progress};
use ndvm_check::gen::{Case, Families, Family, GenOptions};
use ndvm_check::report::Report;
use ndvm_check::shrink::shrink;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Output format.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table per family.
    #[default]
    Text,
    /// One JSON object.
    Json,
}

/// Arguments of `ndvm fuzz`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n    \
    ndvm fuzz --seed 7 --count 100000\n    \
    ndvm fuzz --seed 3 --count 2000 --family matrix --family trip --format json\n\n\
    Exit status: 0 when every program passes every gate, 1 when one fails (each failing \
    program is shrunk and written to --out), 2 for a usage error.")]
pub struct FuzzArgs {
    /// Generator seed.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Evaluate with `sqrt`, `log` and `normalize` clamped to at least 1e-8 like the paper's
    /// artifact runtime, in the oracle and the runtime alike (IEEE is the default).
    #[arg(long)]
    pub protected_ops: bool,
    /// Number of programs (indices 0..count of the seed's stream).
    #[arg(long, default_value_t = 1000)]
    pub count: u64,
    /// Only programs containing this family (repeatable: all of them); one of arith, math,
    /// let, lambda, define, list, vector, matrix, loop, branch, trip.
    #[arg(long = "family", value_name = "NAME")]
    pub families: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Folder for failing programs (one shrunk `.scm` file each).
    #[arg(long, default_value = "fuzz-failures")]
    pub out: PathBuf,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Candidates the shrinker may try per failing program.
    #[arg(long, default_value_t = 3000)]
    pub shrink_budget: usize,
    /// Seconds the shrinker may spend per failing program.
    #[arg(long, default_value_t = 60)]
    pub shrink_seconds: u64,
}

/// Runs `ndvm fuzz`.
pub fn main(args: FuzzArgs) -> ExitCode {
    let mut require = Families::NONE;
    for name in &args.families {
        match Family::from_name(name) {
            Some(f) => require.insert(f),
            None => {
                let known: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
                eprintln!(
                    "error: unknown family `{name}` (known: {})",
                    known.join(", ")
                );
                return ExitCode::from(2);
            }
        }
    }
    let options = GenOptions {
        require,
        protected_ops: args.protected_ops,
    };
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let start = Instant::now();
    let progress = Progress::new(args.count, 5.0);
    let results = driver::run(args.seed, args.count, &options, threads, &|d| {
        progress.tick(d)
    });
    let report = Report::new(args.seed, &results, start.elapsed().as_secs_f64());
    let mut written = Vec::new();
    for r in results.iter().filter(|r| r.failed.is_some()) {
        match write_failure(&args, r) {
            Ok(p) => written.push(p),
            Err(e) => eprintln!("error: {e}"),
        }
    }
    match args.format {
        Format::Text => {
            print!("{}", report.text());
            for (i, g, m) in &report.failures {
                println!("program {i}: {g} {m}");
            }
            for p in &written {
                println!("wrote {}", p.display());
            }
        }
        Format::Json => {
            let mut j = report.json();
            j["written"] = written.iter().map(|p| p.display().to_string()).collect();
            println!("{j:#}");
        }
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Shrinks a failing program and writes it with a header; returns the file's path.
fn write_failure(args: &FuzzArgs, r: &CaseResult) -> Result<PathBuf, String> {
    let case = r.failed.as_ref().expect("a failing program");
    let (gate, original) = r.verdict.first_failure().expect("a failing gate");
    let shrunk = if r.verdict.invalid.is_some() {
        None
    } else {
        Some(shrink(
            case,
            gate,
            args.shrink_budget,
            Duration::from_secs(args.shrink_seconds),
        ))
    };
    let (small, message) = match &shrunk {
        Some(s) => (&s.case, s.message.as_str()),
        None => (case, original),
    };
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let path = args
        .out
        .join(format!("seed{}-{:06}-{gate}.scm", case.seed, case.index));
    let mut s = String::new();
    let _ = writeln!(s, "; ndvm fuzz failure");
    let _ = writeln!(s, "; seed: {}", case.seed);
    let _ = writeln!(s, "; index: {}", case.index);
    let _ = writeln!(s, "; families: {}", case.families);
    let _ = writeln!(s, "; gate: {gate} ({})", gate.title());
    let _ = writeln!(s, "; message: {message}");
    if let Some(sh) = &shrunk {
        let _ = writeln!(
            s,
            "; shrunk in {} candidates; the unshrunk program failed with: {original}",
            sh.attempts
        );
    }
    if let Some(why) = &r.verdict.invalid {
        let _ = writeln!(s, "; the oracle cannot evaluate the program: {why}");
    }
    write_inputs(&mut s, small);
    let _ = writeln!(
        s,
        "; reproduce: ndvm fuzz --seed {} --count {}",
        case.seed,
        case.index + 1
    );
    let _ = writeln!(s, ";; the program as generated:");
    for line in case.source.lines() {
        let _ = writeln!(s, ";; {line}");
    }
    s.push_str(&small.source);
    std::fs::write(&path, s).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// The inputs as `bind:` and `lanes:` header lines (the format of `tests/programs/README.md`).
fn write_inputs(s: &mut String, case: &Case) {
    let _ = writeln!(s, "; lane count: {}", case.lanes);
    let mut uniform = Vec::new();
    let mut lanes = Vec::new();
    for i in &case.inputs {
        let fmt = |data: &[f64]| literal(i.shape, data);
        if i.per_lane {
            let vals: Vec<String> = (0..case.lanes).map(|l| fmt(i.lane(l))).collect();
            lanes.push(format!("{}={}", i.name, vals.join(",")));
        } else {
            uniform.push(format!("{}={}", i.name, fmt(&i.data)));
        }
    }
    if !uniform.is_empty() {
        let _ = writeln!(s, "; bind: {}", uniform.join(" "));
    }
    if !lanes.is_empty() {
        let _ = writeln!(s, "; lanes: {}", lanes.join(" "));
    }
}

fn literal(shape: Option<ndvm_check::oracle::Shape>, data: &[f64]) -> String {
    use ndvm_check::oracle::Shape;
    let nums = |xs: &[f64]| {
        xs.iter()
            .map(|x| format!("{x:?}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    match shape {
        None => format!("{:?}", data[0]),
        Some(Shape::Vector(_)) => format!("[{}]", nums(data)),
        Some(Shape::Matrix(_, c)) => {
            let rows: Vec<String> = data
                .chunks(c.max(1))
                .map(|r| format!("[{}]", nums(r)))
                .collect();
            format!("[{}]", rows.join(","))
        }
    }
}
