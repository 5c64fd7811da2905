//! The per-family table of a fuzz run (programs, and passes per gate), like the paper's
//! Table 7, as text or JSON.

use crate::driver::CaseResult;
use crate::gates::{Gate, Status};
use crate::gen::Family;
use serde_json::{json, Value as Json};
use std::fmt::Write as _;

/// One row: a family (or all programs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The family's name, or `all`.
    pub name: String,
    /// Programs containing the family.
    pub programs: usize,
    /// Of those, how many passed each gate.
    pub passes: [usize; 6],
}

/// The summary of a run.
#[derive(Clone, Debug)]
pub struct Report {
    /// Generator seed.
    pub seed: u64,
    /// One row per family, then `all`.
    pub rows: Vec<Row>,
    /// Lanes over all programs.
    pub lanes: usize,
    /// G3 comparisons made.
    pub fd_checked: usize,
    /// G3 comparisons left out near a decision of the program.
    pub fd_skipped: usize,
    /// Lanes left out of G1, G2 or G6 near a tie.
    pub lanes_skipped: usize,
    /// Failing programs: index, gate and message.
    pub failures: Vec<(u64, Gate, String)>,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl Report {
    /// Summarises `results` (in index order) of a run that took `seconds`.
    pub fn new(seed: u64, results: &[CaseResult], seconds: f64) -> Report {
        let mut rows: Vec<Row> = Family::ALL
            .iter()
            .map(|f| f.name().to_string())
            .chain(["all".to_string()])
            .map(|name| Row {
                name,
                programs: 0,
                passes: [0; 6],
            })
            .collect();
        let mut r = Report {
            seed,
            rows: Vec::new(),
            lanes: 0,
            fd_checked: 0,
            fd_skipped: 0,
            lanes_skipped: 0,
            failures: Vec::new(),
            seconds,
        };
        for c in results {
            r.lanes += c.lanes;
            r.fd_checked += c.verdict.fd_checked;
            r.fd_skipped += c.verdict.fd_skipped;
            r.lanes_skipped += c.verdict.lanes_skipped;
            if let Some((g, m)) = c.verdict.first_failure() {
                r.failures.push((c.index, g, m.to_string()));
            }
            let n = rows.len();
            for (i, row) in rows.iter_mut().enumerate() {
                if i + 1 < n && !c.families.contains(Family::ALL[i]) {
                    continue;
                }
                row.programs += 1;
                for g in Gate::ALL {
                    if c.verdict.status[g.index()] == Status::Pass {
                        row.passes[g.index()] += 1;
                    }
                }
            }
        }
        r.rows = rows;
        r
    }

    /// Programs run.
    pub fn programs(&self) -> usize {
        self.rows.last().map_or(0, |r| r.programs)
    }

    /// True when every program passed every gate.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// The table as text.
    pub fn text(&self) -> String {
        let total = self.programs().max(1) as f64;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "ndvm fuzz --seed {}: {} programs, {} lanes, {:.1} s",
            self.seed,
            self.programs(),
            self.lanes,
            self.seconds
        );
        let _ = write!(s, "{:<8} {:>9} {:>7}", "family", "programs", "share");
        for g in Gate::ALL {
            let _ = write!(s, " {:>9}", g.to_string());
        }
        s.push('\n');
        for row in &self.rows {
            let _ = write!(
                s,
                "{:<8} {:>9} {:>6.1}%",
                row.name,
                row.programs,
                100.0 * row.programs as f64 / total
            );
            for p in row.passes {
                let _ = write!(s, " {p:>9}");
            }
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "gates: {}",
            Gate::ALL
                .iter()
                .map(|g| format!("{g} {}", g.title()))
                .collect::<Vec<_>>()
                .join("; ")
        );
        let _ = writeln!(
            s,
            "G3: {} comparisons, {} left out next to a branch or kink; {} lane checks left out near a tie",
            self.fd_checked, self.fd_skipped, self.lanes_skipped
        );
        let _ = writeln!(s, "{} failing programs", self.failures.len());
        s
    }

    /// The report as JSON.
    pub fn json(&self) -> Json {
        json!({
            "seed": self.seed,
            "programs": self.programs(),
            "lanes": self.lanes,
            "seconds": self.seconds,
            "gates": Gate::ALL.iter().map(|g| json!({"gate": g.to_string(), "title": g.title()})).collect::<Vec<_>>(),
            "families": self.rows.iter().map(|r| json!({
                "family": r.name,
                "programs": r.programs,
                "passes": Gate::ALL.iter().map(|g| (g.to_string(), json!(r.passes[g.index()]))).collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
            "fd_checked": self.fd_checked,
            "fd_skipped": self.fd_skipped,
            "lanes_skipped": self.lanes_skipped,
            "failures": self.failures.iter().map(|(i, g, m)| json!({"index": i, "gate": g.to_string(), "message": m})).collect::<Vec<_>>(),
        })
    }
}
