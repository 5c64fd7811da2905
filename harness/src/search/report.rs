//! What a search reports: the summary, and the front with each member's scores on every test
//! set, as JSON, as a table, as CSV, and as SVG charts of the front and of the best loss
//! against time.

use super::engine::{Counters, Engine};
use super::feed::{Answer, TestScore};
use super::front::Member;
use super::select::{self, Select};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// The summary of a run: the search's counters and how it ran.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Candidates scored, fitted, answered from the cache, failed, distinct skeletons, walks.
    #[serde(flatten)]
    pub counters: Counters,
    /// Wall-clock seconds, earlier runs of a resumed search included.
    pub seconds: f64,
    /// Candidates fitted per second.
    pub fits_per_second: f64,
    /// Rows times nodes walked per second (the lanes of every walk times its candidate's
    /// complexity).
    pub row_nodes_per_second: f64,
    /// Worker threads.
    pub threads: usize,
    /// The seed.
    pub seed: u64,
    /// Rows fitted on during the search.
    pub fit_rows: usize,
    /// Training rows.
    pub train_rows: usize,
    /// Why the search stopped.
    pub stopped: String,
    /// The outside proposer: lines, bad lines, how it ended (null without one).
    pub proposer: Option<Value>,
    /// The loss fitted and reported as `train_loss` (`--loss`).
    pub loss: String,
    /// Whether the training rows are weighted (`--weights`).
    pub weighted: bool,
}

impl Summary {
    /// What `train_loss` is, for people: `MSE`, or the loss and whether it is weighted.
    pub fn loss_label(&self) -> String {
        match (self.loss.as_str(), self.weighted) {
            ("l2", false) => "MSE".into(),
            (l, w) if l.starts_with('(') => {
                format!("{}loss {l}", if w { "weighted " } else { "" })
            }
            (l, false) => format!("{l} loss"),
            (l, true) => format!("weighted {l} loss"),
        }
    }
}

impl Summary {
    /// The summary of `engine`'s run so far.
    pub fn of(engine: &Engine, stopped: &str, proposer: Option<Value>) -> Summary {
        let seconds = engine.seconds();
        let c = &engine.counters;
        Summary {
            counters: c.clone(),
            seconds,
            fits_per_second: c.fits as f64 / seconds.max(1e-9),
            row_nodes_per_second: c.row_nodes as f64 / seconds.max(1e-9),
            threads: engine.workers.threads(),
            seed: engine.options.seed,
            fit_rows: engine.fit_rows.y.len(),
            train_rows: engine.data.train.rows(),
            stopped: stopped.to_string(),
            proposer,
            loss: engine
                .options
                .loss_program
                .clone()
                .unwrap_or_else(|| engine.options.loss.name()),
            weighted: engine.fit_rows.weights.is_some(),
        }
    }
}

/// One member of the reported front.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Node count.
    pub complexity: usize,
    /// MSE on the training rows.
    pub train_loss: f64,
    /// `{NAME: {"nmse", "r2"}}`.
    pub tests: Map<String, Value>,
    /// The program.
    pub src: String,
    /// `{NAME: value}`.
    pub params: Map<String, Value>,
    /// Infix math.
    pub infix: String,
    /// The drop of `ln(train_loss)` per unit of complexity from the next simpler member.
    pub score: f64,
    /// Whether it is the model chosen by `--select`.
    pub selected: bool,
    /// Whether its units balance (with `--units`; `None` for a program without a genome).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units_ok: Option<bool>,
}

/// Parameters as a JSON object.
pub fn params_json(names: &[String], values: &[f64]) -> Map<String, Value> {
    names
        .iter()
        .zip(values)
        .map(|(n, v)| (n.clone(), json!(v)))
        .collect()
}

/// Test scores as a JSON object: `{NAME: {"nmse", "r2"}}`, with `null` scores and an
/// `error` where the program has none.
pub fn tests_json(tests: &[TestScore]) -> Map<String, Value> {
    tests
        .iter()
        .map(|(n, s)| {
            let v = match s {
                Ok((nmse, r2)) => json!({"nmse": nmse, "r2": r2}),
                Err(e) => json!({"nmse": null, "r2": null, "error": e}),
            };
            (n.clone(), v)
        })
        .collect()
}

/// The front as rows, scored on every test set. With `--loss poisson` each program is the log
/// of the rate: a row is the rate, `exp` of it, and so scored.
pub fn rows(engine: &mut Engine, front: &[Member]) -> Vec<Row> {
    let log_link = engine.options.loss == crate::calibrate::RowKind::Poisson
        && engine.options.loss_program.is_none();
    front
        .iter()
        .map(|m| {
            let mut infix = engine.infix(m);
            let rate;
            let m = if log_link {
                infix = format!("exp({infix})");
                rate = Member {
                    src: format!("(exp {})", m.src),
                    complexity: m.complexity + 1,
                    ..m.clone()
                };
                &rate
            } else {
                m
            };
            let tests = engine.test_scores(m);
            Row {
                complexity: m.complexity,
                train_loss: m.loss,
                tests: tests_json(&tests),
                src: m.src.clone(),
                params: params_json(&m.params, &m.values),
                infix,
                score: 0.0,
                selected: false,
                units_ok: m.genome.as_ref().and_then(|g| engine.grammar.units_ok(g)),
            }
        })
        .collect()
}

/// Scores the front's rows and marks the one `how` chooses; the choice as the JSON's
/// `selected` (`{"criterion", "complexity"}`, null on an empty front).
pub fn choose(rows: &mut [Row], how: Select) -> Value {
    let front: Vec<(usize, f64)> = rows.iter().map(|r| (r.complexity, r.train_loss)).collect();
    for (r, s) in rows.iter_mut().zip(select::scores(&front)) {
        r.score = s;
    }
    match select::select(&front, how) {
        Some(i) => {
            rows[i].selected = true;
            json!({"criterion": how.name(), "complexity": rows[i].complexity})
        }
        None => Value::Null,
    }
}

/// An answer line of the proposer protocol.
pub fn answer_json(a: &Answer) -> Value {
    let params: Map<String, Value> = a
        .params
        .iter()
        .map(|(n, v)| (n.clone(), json!(v)))
        .collect();
    json!({
        "id": a.id,
        "src": a.src,
        "params": params,
        "train_loss": a.train_loss,
        "complexity": a.complexity,
        "tests": tests_json(&a.tests),
        "error": a.error,
    })
}

/// A front member as the protocol's `front` line lists it (scored on the fit rows only).
pub fn member_json(engine: &Engine, m: &Member) -> Value {
    json!({
        "complexity": m.complexity,
        "train_loss": m.loss,
        "src": m.src,
        "params": params_json(&m.params, &m.values),
        "infix": engine.infix(m),
    })
}

/// The front as a table for people; `loss` heads the training loss's column.
pub fn table(rows: &[Row], tests: &[String], loss: &str) -> String {
    let mut s = String::new();
    let _ = write!(s, "  {:>4}  {:>11}", "cx", loss);
    for t in tests {
        let _ = write!(s, "  {:>11}  {:>9}", format!("{t} NMSE"), "R^2");
    }
    s.push_str("  model\n");
    for r in rows {
        let mark = if r.selected { '*' } else { ' ' };
        let _ = write!(s, "{mark} {:>4}  {:>11.4e}", r.complexity, r.train_loss);
        for t in tests {
            let (nmse, r2) = r
                .tests
                .get(t)
                .map(|v| (v["nmse"].as_f64(), v["r2"].as_f64()))
                .unwrap_or((None, None));
            let f = |x: Option<f64>, w: usize, e: bool| match x {
                Some(x) if e => format!("{x:>w$.4e}"),
                Some(x) => format!("{x:>w$.6}"),
                None => format!("{:>w$}", "-"),
            };
            let _ = write!(s, "  {}  {}", f(nmse, 11, true), f(r2, 9, false));
        }
        let _ = writeln!(s, "  {}", r.infix);
        let params: Vec<String> = r
            .params
            .iter()
            .map(|(n, v)| format!("{n}={}", v.as_f64().map_or("?".into(), |x| format!("{x}"))))
            .collect();
        let _ = writeln!(s, "{:>21}{}  {}", "", r.src, params.join(" "));
    }
    s
}

/// The front as CSV: complexity, train_loss, per test set NMSE and R^2, score, selected,
/// infix, src, params.
pub fn csv(rows: &[Row], tests: &[String]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["complexity".to_string(), "train_loss".to_string()];
    for t in tests {
        header.push(format!("{t}_nmse"));
        header.push(format!("{t}_r2"));
    }
    header.extend(["score", "selected", "infix", "src", "params"].map(String::from));
    let _ = w.write_record(&header);
    for r in rows {
        let mut rec = vec![r.complexity.to_string(), format!("{}", r.train_loss)];
        for t in tests {
            for k in ["nmse", "r2"] {
                rec.push(
                    r.tests
                        .get(t)
                        .and_then(|v| v[k].as_f64())
                        .map_or(String::new(), |x| format!("{x}")),
                );
            }
        }
        rec.push(format!("{}", r.score));
        rec.push(r.selected.to_string());
        rec.push(r.infix.clone());
        rec.push(r.src.clone());
        rec.push(Value::Object(r.params.clone()).to_string());
        let _ = w.write_record(&rec);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A line chart with a log-scale y axis: `points` (x, y > 0) joined, as steps when `steps`.
pub fn svg(
    points: &[(f64, f64)],
    title: &str,
    x_label: &str,
    y_label: &str,
    steps: bool,
) -> String {
    let (w, h, left, right, top, bottom) = (720.0, 420.0, 80.0, 30.0, 40.0, 50.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|&(x, y)| x.is_finite() && y.is_finite() && y > 0.0)
        .collect();
    let x_max = pts.iter().map(|p| p.0).fold(1e-9f64, f64::max);
    let x_min = pts.iter().map(|p| p.0).fold(x_max, f64::min).min(0.0);
    let ly: Vec<f64> = pts.iter().map(|p| p.1.log10()).collect();
    let lo = ly.iter().copied().fold(f64::INFINITY, f64::min).floor();
    let hi = ly
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .max(lo + 1.0);
    let lo = if lo.is_finite() { lo } else { -1.0 };
    let hi = if hi.is_finite() { hi } else { 0.0 };
    let x = |v: f64| left + pw * (v - x_min) / (x_max - x_min).max(1e-12);
    let y = |v: f64| top + ph * (1.0 - (v.log10() - lo) / (hi - lo));
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="14">{}</text>"#,
        w / 2.0,
        escape(title)
    );
    let _ = writeln!(
        s,
        r#"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    let mut e = lo as i32;
    while f64::from(e) <= hi {
        let yy = y(10f64.powi(e));
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">1e{e}</text>"##,
            left + pw,
            left - 6.0,
            yy + 4.0
        );
        e += 1;
    }
    for k in 0..=4 {
        let v = x_min + (x_max - x_min) * f64::from(k) / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            x(v),
            top + ph + 18.0,
            super::emit::number(v)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        h - 10.0,
        escape(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#,
        top + ph / 2.0,
        top + ph / 2.0,
        escape(y_label)
    );
    let mut line = String::new();
    for (i, &(px, py)) in pts.iter().enumerate() {
        if steps && i > 0 {
            let _ = write!(line, "{:.1},{:.1} ", x(px), y(pts[i - 1].1));
        }
        let _ = write!(line, "{:.1},{:.1} ", x(px), y(py));
    }
    let _ = writeln!(
        s,
        r##"<polyline points="{line}" fill="none" stroke="#1f77b4" stroke-width="2"/>"##
    );
    for &(px, py) in &pts {
        let _ = writeln!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="#1f77b4"/>"##,
            x(px),
            y(py)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// `t` with the characters XML gives meaning to escaped.
pub fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
