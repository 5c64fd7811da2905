//! The decomposition benchmark's table (text) and plot (SVG, written by hand: a few polylines
//! on log-log axes need no plotting library).

use super::decompose::{GradRow, Report};
use std::fmt::Write;

fn opt(x: Option<f64>, prec: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.prec$}"))
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "-".into(),
    }
}

/// The row of `program` at `lanes` with the caches `cached`.
fn find<'a>(r: &'a Report, program: &str, lanes: usize, cached: bool) -> Option<&'a GradRow> {
    r.grad
        .iter()
        .find(|g| g.program == program && g.lanes == lanes && g.cached == cached)
}

/// The report as tables.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Forward, one lane, us per evaluation (caches on: the program decoded once, one session \
         reused; off: read, decoded and a fresh session every call)"
    );
    let _ = writeln!(
        s,
        "{:<18} {:>6} {:>10} {:>12} {:>9} {:>13} {:>11} {:>9} {:>9}",
        "program",
        "caches",
        "oracle",
        "runtime-cpu",
        "VM",
        "hand-written",
        "oracle/cpu",
        "cpu/hand",
        "max rel"
    );
    for f in &r.forward {
        let _ = writeln!(
            s,
            "{:<18} {:>6} {:>10.3} {:>12.3} {:>9} {:>13.4} {:>11.2} {:>9.1} {:>9.1e}",
            f.program,
            if f.cached { "on" } else { "off" },
            f.oracle_us,
            f.cpu_us,
            opt(f.vm_us, 3),
            f.handwritten_us,
            f.oracle_us / f.cpu_us,
            f.cpu_us / f.handwritten_us,
            f.max_rel_diff
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Value + gradient (every scalar input), us per lane; cold = decode cache and pooling off"
    );
    let _ = writeln!(
        s,
        "{:<18} {:>5} {:>10} {:>9} {:>7} {:>10} {:>9} {:>11} {:>10} {:>9}",
        "program",
        "lanes",
        "cpu",
        "VM",
        "VM/cpu",
        "cpu cold",
        "VM cold",
        "cpu cold/on",
        "VM cold/on",
        "VM diff"
    );
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for g in &r.grad {
        if !keys.contains(&(g.program.as_str(), g.lanes)) {
            keys.push((g.program.as_str(), g.lanes));
        }
    }
    for (program, lanes) in keys {
        let (on, off) = (
            find(r, program, lanes, true),
            find(r, program, lanes, false),
        );
        let get = |row: Option<&GradRow>, vm: bool| {
            row.and_then(|g| {
                if vm {
                    g.vm_per_lane_us
                } else {
                    Some(g.cpu_per_lane_us)
                }
            })
        };
        let diff = on.or(off).and_then(|g| g.vm_max_rel_diff);
        let _ = writeln!(
            s,
            "{:<18} {:>5} {:>10} {:>9} {:>7} {:>10} {:>9} {:>11} {:>10} {:>9}",
            program,
            lanes,
            opt(get(on, false), 4),
            opt(get(on, true), 4),
            ratio(get(on, true), get(on, false)),
            opt(get(off, false), 4),
            opt(get(off, true), 4),
            ratio(get(off, false), get(on, false)),
            ratio(get(off, true), get(on, true)),
            diff.map_or("-".into(), |d| format!("{d:.1e}"))
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "The VM runs {} (kalman2d_T80 needs matrices, which its instruction set lacks).",
        r.vm_programs.join(", ")
    );
    amortization(&mut s, r);
    s
}

/// Per-lane cost at one lane over per-lane cost at the most lanes measured.
fn amortization(s: &mut String, r: &Report) {
    let Some(max) = r.grad.iter().map(|g| g.lanes).max() else {
        return;
    };
    let Some(min) = r.grad.iter().map(|g| g.lanes).min() else {
        return;
    };
    if max == min {
        return;
    }
    let mut programs: Vec<&str> = Vec::new();
    for g in &r.grad {
        if !programs.contains(&g.program.as_str()) {
            programs.push(&g.program);
        }
    }
    let _ = writeln!(
        s,
        "Per-lane cost at {min} lane(s) over per-lane cost at {max} lanes:"
    );
    for cached in [true, false] {
        for p in &programs {
            let (Some(a), Some(b)) = (find(r, p, min, cached), find(r, p, max, cached)) else {
                continue;
            };
            let _ = writeln!(
                s,
                "  {:<18} caches {:<3}  runtime-cpu {:>7.1}x   VM {:>7}",
                p,
                if cached { "on" } else { "off" },
                a.cpu_per_lane_us / b.cpu_per_lane_us,
                match ratio(a.vm_per_lane_us, b.vm_per_lane_us).as_str() {
                    "-" => "-".to_string(),
                    r => format!("{r}x"),
                }
            );
        }
    }
}

const COLORS: &[&str] = &["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"];

/// Per-lane value-and-gradient time against lanes, log-log: `runtime-cpu` solid, the VM
/// dashed, caches on (off when only off was measured).
pub fn svg(r: &Report) -> String {
    let (w, h, left, right, top, bottom) = (760.0, 460.0, 80.0, 210.0, 40.0, 50.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let cached = r.grad.iter().any(|g| g.cached);
    let rows: Vec<&GradRow> = r.grad.iter().filter(|g| g.cached == cached).collect();
    let ys: Vec<f64> = rows
        .iter()
        .flat_map(|g| [Some(g.cpu_per_lane_us), g.vm_per_lane_us])
        .flatten()
        .filter(|y| *y > 0.0)
        .collect();
    let (ymin, ymax) = ys
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &y| (a.min(y), b.max(y)));
    let (y0, y1) = (
        ymin.max(1e-6).log10().floor(),
        ymax.max(1e-6)
            .log10()
            .ceil()
            .max(ymin.log10().floor() + 1.0),
    );
    let xmax = rows.iter().map(|g| g.lanes).max().unwrap_or(1).max(2) as f64;
    let x = |l: usize| left + pw * (l as f64).log10() / xmax.log10();
    let y = |v: f64| top + ph * (1.0 - (v.log10() - y0) / (y1 - y0));
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="14">Value + gradient, us per lane (caches {})</text>"#,
        left + pw / 2.0,
        if cached { "on" } else { "off" }
    );
    let _ = writeln!(
        s,
        r#"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    for e in (y0 as i32)..=(y1 as i32) {
        let yy = y(10f64.powi(e));
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">1e{e}</text>"##,
            left + pw,
            left - 6.0,
            yy + 4.0
        );
    }
    let mut lanes: Vec<usize> = rows.iter().map(|g| g.lanes).collect();
    lanes.sort_unstable();
    lanes.dedup();
    for &l in &lanes {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{l}</text>"#,
            x(l),
            top + ph + 18.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">lanes</text>"#,
        left + pw / 2.0,
        h - 8.0
    );
    let mut programs: Vec<&str> = Vec::new();
    for g in &rows {
        if !programs.contains(&g.program.as_str()) {
            programs.push(&g.program);
        }
    }
    for (i, p) in programs.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        for vm in [false, true] {
            let pts: Vec<String> = rows
                .iter()
                .filter(|g| g.program == *p)
                .filter_map(|g| {
                    let v = if vm {
                        g.vm_per_lane_us?
                    } else {
                        g.cpu_per_lane_us
                    };
                    Some(format!("{:.1},{:.1}", x(g.lanes), y(v)))
                })
                .collect();
            if pts.is_empty() {
                continue;
            }
            let dash = if vm { r#" stroke-dasharray="6,4""# } else { "" };
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
                pts.join(" ")
            );
        }
        let ly = top + 16.0 + 18.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/><text x="{}" y="{}">{p}</text>"#,
            left + pw + 12.0,
            left + pw + 36.0,
            left + pw + 42.0,
            ly + 4.0
        );
    }
    let ly = top + 16.0 + 18.0 * programs.len() as f64 + 10.0;
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{ly}">solid: runtime-cpu</text><text x="{}" y="{}">dashed: bytecode VM</text>"##,
        left + pw + 12.0,
        left + pw + 12.0,
        ly + 16.0
    );
    s.push_str("</svg>\n");
    s
}
