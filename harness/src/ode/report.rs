//! The ODE front for people and programs: a table, JSON lines, and a plot per trajectory of
//! the data against the integrated model.

use super::data::{OdeData, Trajectory};
use super::discover::{Fitted, Outcome, Settings};
use super::simulate::{score, simulate, Paths, Score};
use crate::search::emit::{self, Names};
use crate::search::report::escape;
use crate::search::select::{self, Select};
use runtime_cpu::{Limits, Session};
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// One front member's scores and equations, as reported.
#[derive(Clone, Debug)]
pub struct Row {
    /// The member.
    pub fitted: Fitted,
    /// Each test set's score, by name (integrated from each trajectory's first row).
    pub tests: Vec<(String, Result<Score, String>)>,
    /// Each state's right-hand side: `(src, infix)`, infix with the fitted constants.
    pub equations: Vec<(String, String)>,
    /// Whether it is the model chosen by `--select`.
    pub selected: bool,
}

impl Row {
    /// The row of `f`.
    pub fn of(f: Fitted, tests: Vec<(String, Result<Score, String>)>, names: &[Names]) -> Row {
        let equations = f
            .equations
            .iter()
            .zip(names)
            .zip(&f.system.rhs)
            .map(|((e, n), src)| (src.clone(), emit::infix_exact(&e.genome, n)))
            .collect();
        Row {
            fitted: f,
            tests,
            equations,
            selected: false,
        }
    }
}

/// Marks the row `how` chooses by the integrated trajectories' training MSE; the choice as the
/// JSON's `selected` (`{"criterion", "complexity"}`, null on an empty front).
pub fn choose(rows: &mut [Row], how: Select) -> Value {
    let front: Vec<(usize, f64)> = rows
        .iter()
        .map(|r| (r.fitted.complexity, r.fitted.train.mse))
        .collect();
    match select::select(&front, how) {
        Some(i) => {
            rows[i].selected = true;
            json!({"criterion": how.name(), "complexity": rows[i].fitted.complexity})
        }
        None => Value::Null,
    }
}

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

fn score_json(s: &Score) -> Value {
    json!({"r2": finite(s.r2), "nmse": finite(s.nmse)})
}

/// A front member as JSON: complexity, the training loss (the integrated trajectories' mean
/// squared residual), the scores, constants, initial states and equations.
pub fn member_json(data: &OdeData, r: &Row) -> Value {
    let f = &r.fitted;
    let mut tests = Map::new();
    for (name, s) in &r.tests {
        tests.insert(
            name.clone(),
            match s {
                Ok(s) => score_json(s),
                Err(e) => json!({"r2": null, "nmse": null, "error": e}),
            },
        );
    }
    let mut params = Map::new();
    for (n, v) in f.system.params.iter().zip(&f.params) {
        params.insert(n.clone(), finite(*v));
    }
    let mut initial = Map::new();
    for (tr, x0) in data.train.iter().zip(&f.initial) {
        let mut m = Map::new();
        for (s, v) in data.columns.states.iter().zip(x0) {
            m.insert(s.clone(), finite(*v));
        }
        initial.insert(tr.name.clone(), Value::Object(m));
    }
    let mut equations = Map::new();
    for (s, (src, infix)) in data.columns.states.iter().zip(&r.equations) {
        equations.insert(s.clone(), json!({"src": src, "infix": infix}));
    }
    json!({
        "complexity": f.complexity,
        "train_loss": finite(f.train.mse),
        "train": score_json(&f.train),
        "tests": tests,
        "params": params,
        "initial": initial,
        "equations": equations,
        "selected": r.selected,
    })
}

/// The front as a text table: complexity, training R^2 and NMSE, each test's, then each
/// state's equation.
pub fn table(data: &OdeData, rows: &[Row]) -> String {
    let mut out = String::new();
    let tests: Vec<&String> = rows
        .first()
        .map(|r| r.tests.iter().map(|t| &t.0).collect())
        .unwrap_or_default();
    let _ = write!(
        out,
        "  {:>10}  {:>10}  {:>10}",
        "complexity", "train R^2", "train NMSE"
    );
    for t in &tests {
        let _ = write!(
            out,
            "  {:>12}  {:>12}",
            format!("{t} R^2"),
            format!("{t} NMSE")
        );
    }
    out.push('\n');
    let num = |x: f64| {
        if x.is_finite() {
            format!("{x:.6}")
        } else {
            "-".into()
        }
    };
    for r in rows {
        let f = &r.fitted;
        let _ = write!(
            out,
            "{} {:>10}  {:>10}  {:>10}",
            if r.selected { '*' } else { ' ' },
            f.complexity,
            num(f.train.r2),
            format!("{:.3e}", f.train.nmse)
        );
        for (_, s) in &r.tests {
            match s {
                Ok(s) => {
                    let _ = write!(
                        out,
                        "  {:>12}  {:>12}",
                        num(s.r2),
                        format!("{:.3e}", s.nmse)
                    );
                }
                Err(_) => {
                    let _ = write!(out, "  {:>12}  {:>12}", "failed", "-");
                }
            }
        }
        out.push('\n');
        for (s, (src, infix)) in data.columns.states.iter().zip(&r.equations) {
            let _ = writeln!(out, "    d{s}/dt = {infix}");
            let _ = writeln!(out, "    {:width$}   {src}", "", width = s.len() + 4);
        }
    }
    out
}

/// A plot of one trajectory: for each state a panel of the observations (points) against the
/// integrated model (a line).
pub fn trajectory_svg(
    title: &str,
    states: &[String],
    tr: &Trajectory,
    path: &[Vec<f64>],
) -> String {
    let (w, panel, left, right, top) = (760.0, 200.0, 70.0, 20.0, 40.0);
    let h = top + panel * states.len() as f64 + 30.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        w / 2.0,
        escape(title)
    );
    let (t0, t1) = (tr.t[0], *tr.t.last().unwrap_or(&tr.t[0]));
    let pw = w - left - right;
    let x = |t: f64| left + pw * (t - t0) / (t1 - t0).max(1e-300);
    for (i, name) in states.iter().enumerate() {
        let y0 = top + panel * i as f64;
        let ph = panel - 30.0;
        let vals = tr.x[i]
            .iter()
            .chain(path[i].iter().filter(|v| v.is_finite()));
        let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
        let pad = ((hi - lo) * 0.05).max(1e-12);
        let (lo, hi) = (lo - pad, hi + pad);
        let y = |v: f64| y0 + ph * (1.0 - (v.clamp(lo, hi) - lo) / (hi - lo));
        let _ = writeln!(
            s,
            r#"<rect x="{left}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text><text x="{}" y="{}" text-anchor="end">{}</text><text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">{}</text>"#,
            left - 4.0,
            y0 + 10.0,
            emit::number(hi),
            left - 4.0,
            y0 + ph,
            emit::number(lo),
            y0 + ph / 2.0,
            y0 + ph / 2.0,
            escape(name)
        );
        for (t, v) in tr.t.iter().zip(&tr.x[i]) {
            let _ = writeln!(
                s,
                r##"<circle cx="{:.1}" cy="{:.1}" r="2" fill="#888"/>"##,
                x(*t),
                y(*v)
            );
        }
        let mut line = String::new();
        for (t, v) in tr.t.iter().zip(&path[i]) {
            if v.is_finite() {
                let _ = write!(line, "{:.1},{:.1} ", x(*t), y(*v));
            }
        }
        let _ = writeln!(
            s,
            r##"<polyline points="{line}" fill="none" stroke="#d62728" stroke-width="1.5"/>"##
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">t from {} to {} (points: data; line: the model integrated)</text>"#,
        left + pw / 2.0,
        h - 8.0,
        emit::number(t0),
        emit::number(t1)
    );
    s.push_str("</svg>\n");
    s
}

/// A test set's score: each trajectory integrated from its first row.
pub fn test_score(
    session: &mut Session<f64>,
    f: &Fitted,
    trajs: &[Trajectory],
    max_step: f64,
    limits: Limits,
) -> Result<Score, String> {
    let starts: Vec<Vec<f64>> = trajs.iter().map(|t| t.state(0)).collect();
    let paths: Paths = simulate(
        session, &f.system, &f.params, trajs, &starts, max_step, limits,
    )?;
    Ok(score(&paths, trajs))
}

/// The front's rows, each member scored on every test set.
pub fn rows(data: &OdeData, outcome: &Outcome, limits: Limits) -> Vec<Row> {
    let mut session = Session::<f64>::new();
    outcome
        .front
        .iter()
        .map(|f| {
            let tests = data
                .tests
                .iter()
                .map(|(name, trajs)| {
                    let s = test_score(&mut session, f, trajs, outcome.max_step, limits);
                    (name.clone(), s)
                })
                .collect();
            Row::of(f.clone(), tests, &outcome.names)
        })
        .collect()
}

/// The run's summary.
pub fn summary_json(
    data: &OdeData,
    outcome: &Outcome,
    settings: &Settings,
    seconds: f64,
    stopped: &str,
    proposer: Option<Value>,
) -> Value {
    let c = &outcome.counters;
    json!({
        "mode": "ode",
        "seconds": seconds,
        "threads": settings.threads,
        "states": data.columns.states,
        "time": data.columns.time,
        "trajectories": data.train.len(),
        "observations": data.train.iter().map(Trajectory::len).sum::<usize>(),
        "proposals": c.proposals,
        "systems_fitted": c.systems,
        "systems_failed": c.failed,
        "systems_evolved": c.evolved,
        "systems_pruned": c.pruned,
        "systems_outside": c.outside,
        "proposer": proposer,
        "walks": c.walks,
        "integrator": "rk4",
        "max_step": outcome.max_step,
        "segment": settings.fit.segment,
        "smoothing_half_widths": outcome.widths,
        "failures": outcome.failures,
        "stopped": stopped,
    })
}
