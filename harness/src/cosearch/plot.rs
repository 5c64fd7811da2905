//! A small SVG chart of a replay: best held-out R^2 (left axis) and fits completed (right axis)
//! against wall-clock time. Written by hand: two polylines need no plotting library.

use std::fmt::Write;

/// The chart for fits finished at `times` (seconds, in completion order) with their R^2.
pub fn svg(times: &[f64], r2: &[Option<f64>], title: &str) -> String {
    let (w, h, left, right, top, bottom) = (720.0, 420.0, 70.0, 70.0, 40.0, 50.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let t_max = times.iter().copied().fold(1e-9f64, f64::max);
    let n = times.len().max(1) as f64;
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by(|&a, &b| times[a].total_cmp(&times[b]));
    let (mut best, mut r2_pts, mut fit_pts) = (f64::NEG_INFINITY, String::new(), String::new());
    let x = |t: f64| left + pw * t / t_max;
    let y_r2 = |r: f64| top + ph * (1.0 - r.clamp(0.0, 1.0));
    // The fits line needs no more than about a thousand points.
    let stride = order.len().div_ceil(1000).max(1);
    for (k, &i) in order.iter().enumerate() {
        if let Some(r) = r2[i] {
            if r > best {
                best = r;
                let _ = write!(r2_pts, "{:.1},{:.1} ", x(times[i]), y_r2(best));
            }
        }
        if k % stride == 0 || k + 1 == order.len() {
            let y = top + ph * (1.0 - (k + 1) as f64 / n);
            let _ = write!(fit_pts, "{:.1},{:.1} ", x(times[i]), y);
        }
    }
    if best > f64::NEG_INFINITY {
        let _ = write!(r2_pts, "{:.1},{:.1}", x(t_max), y_r2(best));
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="14">{title}</text>"#,
        w / 2.0
    );
    let _ = writeln!(
        s,
        r#"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    for k in 0..=5 {
        let f = k as f64 / 5.0;
        let yy = top + ph * (1.0 - f);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{yy}" x2="{}" y2="{yy}" stroke="#ddd"/>"##,
            left + pw
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{f:.1}</text>"#,
            left - 6.0,
            yy + 4.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{:.0}</text>"#,
            left + pw + 6.0,
            yy + 4.0,
            f * n
        );
        let xx = left + pw * f;
        let _ = writeln!(
            s,
            r#"<text x="{xx}" y="{}" text-anchor="middle">{:.1}</text>"#,
            top + ph + 18.0,
            f * t_max
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">wall-clock seconds</text>"#,
        left + pw / 2.0,
        h - 10.0
    );
    let _ = writeln!(
        s,
        r##"<text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle" fill="#1f77b4">best held-out R^2</text>"##,
        top + ph / 2.0,
        top + ph / 2.0
    );
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" transform="rotate(90 {} {})" text-anchor="middle" fill="#d62728">fits completed</text>"##,
        w - 16.0,
        top + ph / 2.0,
        w - 16.0,
        top + ph / 2.0
    );
    let _ = writeln!(
        s,
        r##"<polyline points="{fit_pts}" fill="none" stroke="#d62728" stroke-width="1.5"/>"##
    );
    let _ = writeln!(
        s,
        r##"<polyline points="{r2_pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>"##
    );
    let _ = writeln!(s, "</svg>");
    s
}
