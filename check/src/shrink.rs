//! Shrinks a failing program to a small one that still fails the same gate: fewer lanes,
//! inputs made uniform, top-level forms dropped, subexpressions replaced by their parts,
//! arguments dropped and numbers simplified, greedily, until no step keeps the failure.
//!
//! A candidate counts only when the oracle can still evaluate it (a number on every lane), so
//! the shrunk program is a valid program of the language that the runtime gets wrong.

use crate::gates::{check_only, Gate, Status};
use crate::gen::Case;
use crate::oracle::reader::{program_text, read_all, Datum};
use std::time::{Duration, Instant};

/// A shrunk failing case.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The smallest failing case found.
    pub case: Case,
    /// The gate it fails.
    pub gate: Gate,
    /// What that gate saw.
    pub message: String,
    /// Candidates tried.
    pub attempts: usize,
}

/// The message of `gate` failing on `case`, if it fails there and the program is valid.
pub fn fails(case: &Case, gate: Gate) -> Option<String> {
    let v = check_only(case, &[gate]);
    if v.invalid.is_some() {
        return None;
    }
    match &v.status[gate.index()] {
        Status::Fail(m) => Some(m.clone()),
        _ => None,
    }
}

/// Shrinks `case`, which fails `gate`, trying at most `budget` candidates for at most `time`.
pub fn shrink(case: &Case, gate: Gate, budget: usize, time: Duration) -> Shrunk {
    let start = Instant::now();
    let mut best = case.clone();
    let mut message = fails(case, gate).unwrap_or_else(|| "(does not fail again)".into());
    let mut attempts = 0;
    let Ok(mut forms) = read_all(&case.source) else {
        return Shrunk {
            case: best,
            gate,
            message,
            attempts,
        };
    };
    'outer: loop {
        for cand in candidates(&best, &forms) {
            if attempts >= budget || start.elapsed() > time {
                break 'outer;
            }
            attempts += 1;
            let (c, f) = cand;
            if let Some(m) = fails(&c, gate) {
                best = c;
                forms = f;
                message = m;
                continue 'outer;
            }
        }
        break;
    }
    Shrunk {
        case: best,
        gate,
        message,
        attempts,
    }
}

fn with_source(case: &Case, forms: &[Datum]) -> Case {
    Case {
        source: program_text(forms),
        ..case.clone()
    }
}

/// Every simplification of `case` one step away, the larger steps first.
fn candidates(case: &Case, forms: &[Datum]) -> Vec<(Case, Vec<Datum>)> {
    let mut out = Vec::new();
    // Fewer lanes: one lane, then the first half.
    if case.lanes > 1 {
        for l in 0..case.lanes {
            out.push((keep_lanes(case, &[l]), forms.to_vec()));
        }
        let half: Vec<usize> = (0..case.lanes / 2).collect();
        out.push((keep_lanes(case, &half), forms.to_vec()));
    }
    // Per-lane inputs bound uniformly (to lane 0's value).
    for (i, inp) in case.inputs.iter().enumerate() {
        if inp.per_lane {
            let mut c = case.clone();
            c.inputs[i].per_lane = false;
            c.inputs[i].data = inp.lane(0).to_vec();
            if !c.inputs.iter().any(|x| x.per_lane) {
                c.lanes = 1;
            }
            out.push((c, forms.to_vec()));
        }
    }
    // Drop a top-level form (never the last).
    for i in 0..forms.len().saturating_sub(1) {
        let mut f = forms.to_vec();
        f.remove(i);
        out.push((with_source(case, &f), f));
    }
    // Replace a subexpression by one of its parts, or drop one of a list's items.
    let mut paths = Vec::new();
    for (i, d) in forms.iter().enumerate() {
        collect_paths(d, vec![i], &mut paths);
    }
    for p in &paths {
        let node = at(forms, p);
        if let Datum::List(items) | Datum::Brackets(items) = node {
            for child in items {
                if !matches!(child, Datum::Sym(_)) || items.len() == 1 {
                    let f = replaced(forms, p, child.clone());
                    out.push((with_source(case, &f), f));
                }
            }
            for k in 1..items.len() {
                let mut smaller = items.clone();
                smaller.remove(k);
                let d = match node {
                    Datum::List(_) => Datum::List(smaller),
                    _ => Datum::Brackets(smaller),
                };
                let f = replaced(forms, p, d);
                out.push((with_source(case, &f), f));
            }
        }
    }
    // Simpler numbers.
    for p in &paths {
        if let Datum::Num(x) = at(forms, p) {
            for y in [0.0, 1.0, (x * 10.0).round() / 10.0, x.round()] {
                if y != *x {
                    let f = replaced(forms, p, Datum::Num(y));
                    out.push((with_source(case, &f), f));
                }
            }
        }
    }
    out
}

fn keep_lanes(case: &Case, lanes: &[usize]) -> Case {
    let mut c = case.clone();
    c.lanes = lanes.len();
    for inp in &mut c.inputs {
        if inp.per_lane {
            let n = inp.width();
            inp.data = lanes
                .iter()
                .flat_map(|&l| {
                    case.inputs
                        .iter()
                        .find(|x| x.name == inp.name)
                        .expect("same inputs")
                        .data[l * n..(l + 1) * n]
                        .to_vec()
                })
                .collect();
        }
    }
    c
}

/// Paths of every datum, parents before their parts.
fn collect_paths(d: &Datum, path: Vec<usize>, out: &mut Vec<Vec<usize>>) {
    out.push(path.clone());
    if let Datum::List(items) | Datum::Brackets(items) = d {
        for (i, c) in items.iter().enumerate() {
            let mut p = path.clone();
            p.push(i);
            collect_paths(c, p, out);
        }
    }
}

fn at<'d>(forms: &'d [Datum], path: &[usize]) -> &'d Datum {
    let mut d = &forms[path[0]];
    for &i in &path[1..] {
        d = match d {
            Datum::List(items) | Datum::Brackets(items) => &items[i],
            _ => unreachable!("paths follow lists"),
        };
    }
    d
}

fn replaced(forms: &[Datum], path: &[usize], new: Datum) -> Vec<Datum> {
    let mut f = forms.to_vec();
    let mut d = &mut f[path[0]];
    for &i in &path[1..] {
        d = match d {
            Datum::List(items) | Datum::Brackets(items) => &mut items[i],
            _ => unreachable!("paths follow lists"),
        };
    }
    *d = new;
    f
}
