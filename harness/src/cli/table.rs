//! The results of `ndvm run` as text for people: `value: ...` and `d/dNAME: ...` lines for one
//! lane, a table with a row per lane for many.

use super::output::Precision;
use super::report::Source;
use runtime_cpu::{Error, Outcome};
use std::fmt::Write;

/// Tables of more lanes than this show only the first [`HEAD`] and last [`TAIL`] lanes.
pub const FULL_TABLE: usize = 20;
/// Lanes shown at the top of a long table.
pub const HEAD: usize = 10;
/// Lanes shown at the bottom of a long table.
pub const TAIL: usize = 5;

/// The outcome as text.
pub fn text(outcome: &Outcome, source: &Source<'_>, precision: Precision) -> String {
    let mut out = String::new();
    if outcome.lanes == 1 {
        match &outcome.values[0] {
            Ok(v) => {
                let _ = writeln!(out, "value: {}", precision.value(v));
                for g in &outcome.grads {
                    let _ = writeln!(
                        out,
                        "d/d{}: {}",
                        g.name,
                        precision.tensor(g.shape, &g.per_lane)
                    );
                }
            }
            Err(e) => {
                let _ = writeln!(out, "{}", lane_error(e, source));
            }
        }
        return out;
    }
    table(&mut out, outcome, source, precision);
    let failed = outcome.values.iter().filter(|v| v.is_err()).count();
    let _ = writeln!(out, "{} lanes; {failed} failed", outcome.lanes);
    for g in outcome.grads.iter().filter(|g| g.uniform) {
        let over = if failed == 0 {
            "lanes".to_string()
        } else {
            format!("the {} lanes that succeeded", outcome.lanes - failed)
        };
        let _ = writeln!(
            out,
            "d/d{} summed over {over}: {}",
            g.name,
            precision.tensor(g.shape, &g.sum)
        );
    }
    out
}

/// A failed lane's cell: `error: MESSAGE (at FILE:LINE:COL)`.
fn lane_error(e: &Error, source: &Source<'_>) -> String {
    match source.location(e) {
        Some((line, col)) => format!("error: {e} (at {}:{line}:{col})", source.name()),
        None => format!("error: {e}"),
    }
}

/// The table: a header, then a row per lane (or the first and last lanes around `...`).
fn table(out: &mut String, outcome: &Outcome, source: &Source<'_>, precision: Precision) {
    let lanes = outcome.lanes;
    let shown: Vec<usize> = if lanes > FULL_TABLE {
        (0..HEAD).chain(lanes - TAIL..lanes).collect()
    } else {
        (0..lanes).collect()
    };
    let mut header = vec!["lane".to_string(), "value".to_string()];
    header.extend(outcome.grads.iter().map(|g| format!("d/d{}", g.name)));
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|&l| {
            let mut row = vec![l.to_string()];
            match &outcome.values[l] {
                Ok(v) => {
                    row.push(precision.value(v));
                    for g in &outcome.grads {
                        let n = g.shape.len();
                        row.push(precision.tensor(g.shape, &g.per_lane[l * n..(l + 1) * n]));
                    }
                }
                Err(e) => row.push(lane_error(e, source)),
            }
            row
        })
        .collect();
    // Error rows hold one long cell; they do not widen the columns.
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows.iter().filter(|r| r.len() == header.len()) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: &[String]| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let _ = write!(s, "{cell:<w$}", w = widths[i]);
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&header);
    for (k, row) in rows.iter().enumerate() {
        if lanes > FULL_TABLE && k == HEAD {
            line(&[format!("... ({} lanes not shown)", lanes - HEAD - TAIL)]);
        }
        line(row);
    }
}
