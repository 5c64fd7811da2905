//! Sparse polynomial right-hand sides: each state's smoothed slope regressed on the monomials of
//! the states and inputs (degree 3 over at most two variables, else 2) by sequentially
//! thresholded least squares, at several thresholds. Each distinct support is one more member of
//! the state's pool, which the second and third stages then fit through the integrator; the
//! polynomial laws a library regression finds at once are there from the start, beside the
//! search's own.

use super::data::OdeData;
use super::smooth::Smoothed;
use crate::calibrate::lm::solve;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Relative sizes under which a term is dropped: its coefficient times its column's RMS, over
/// the slope's RMS.
pub const THRESHOLDS: [f64; 5] = [0.001, 0.01, 0.05, 0.1, 0.2];

/// The monomials over `n` variables up to degree `degree`: each a list of variable indexes
/// (empty for the constant), in order of degree.
pub fn monomials(n: usize, degree: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..degree {
        let mut next = Vec::new();
        for m in &last {
            let from = m.last().copied().unwrap_or(0);
            for v in from..n {
                let mut m2 = m.clone();
                m2.push(v);
                next.push(m2);
            }
        }
        out.extend(next.iter().cloned());
        last = next;
    }
    out
}

/// The least-squares coefficients of `y` on the columns `active` of `a` (`None` when singular).
fn least_squares(a: &[Vec<f64>], y: &[f64], active: &[usize]) -> Option<Vec<f64>> {
    let k = active.len();
    let mut ata = vec![0.0; k * k];
    let mut aty = vec![0.0; k];
    for (p, &i) in active.iter().enumerate() {
        for (q, &j) in active.iter().enumerate().skip(p) {
            let s: f64 = a[i].iter().zip(&a[j]).map(|(u, v)| u * v).sum();
            ata[p * k + q] = s;
            ata[q * k + p] = s;
        }
        aty[p] = a[i].iter().zip(y).map(|(u, v)| u * v).sum();
    }
    // A touch of ridge keeps nearly collinear monomials solvable.
    let trace: f64 = (0..k).map(|p| ata[p * k + p]).sum::<f64>() / k.max(1) as f64;
    for p in 0..k {
        ata[p * k + p] += 1e-12 * trace.max(1e-300);
    }
    solve(&mut ata, &mut aty).then_some(aty)
}

/// Sequentially thresholded least squares at `threshold`: the coefficients of the terms kept
/// (zero for those dropped).
fn stlsq(a: &[Vec<f64>], y: &[f64], rms: &[f64], threshold: f64) -> Option<Vec<f64>> {
    let y_rms = (y.iter().map(|v| v * v).sum::<f64>() / y.len().max(1) as f64).sqrt();
    let mut active: Vec<usize> = (0..a.len()).collect();
    let mut w = vec![0.0; a.len()];
    for _ in 0..10 {
        let c = least_squares(a, y, &active)?;
        w.iter_mut().for_each(|v| *v = 0.0);
        for (&j, v) in active.iter().zip(&c) {
            w[j] = *v;
        }
        let keep: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&j| (w[j] * rms[j]).abs() >= threshold * y_rms)
            .collect();
        if keep.len() == active.len() {
            return Some(w);
        }
        if keep.is_empty() {
            return None;
        }
        active = keep;
    }
    Some(w)
}

/// State `i`'s sparse polynomial right-hand sides as programs over `inputs` (the states, then
/// the measured inputs, by those names), each with its slope MSE: one per distinct support over
/// [`THRESHOLDS`].
pub fn candidates(data: &OdeData, smoothed: &[Smoothed], i: usize) -> Vec<(String, f64)> {
    let c = &data.columns;
    let names: Vec<&String> = c.states.iter().chain(&c.inputs).collect();
    let n = names.len();
    let degree = if n <= 2 { 3 } else { 2 };
    let terms = monomials(n, degree);
    // The variables' values over every observation, then each monomial's column.
    let mut vars: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut y = Vec::new();
    for (tr, sm) in data.train.iter().zip(smoothed) {
        for k in 0..tr.len() {
            for (v, col) in vars.iter_mut().enumerate() {
                col.push(if v < c.states.len() {
                    sm.x[v][k]
                } else {
                    tr.u[v - c.states.len()][k]
                });
            }
            y.push(sm.dx[i][k]);
        }
    }
    let rows = y.len();
    let a: Vec<Vec<f64>> = terms
        .iter()
        .map(|m| {
            (0..rows)
                .map(|r| m.iter().map(|&v| vars[v][r]).product())
                .collect()
        })
        .collect();
    let rms: Vec<f64> = a
        .iter()
        .map(|col| (col.iter().map(|v| v * v).sum::<f64>() / rows.max(1) as f64).sqrt())
        .collect();
    if rows <= terms.len() || !y.iter().all(|v| v.is_finite()) {
        return Vec::new();
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for &threshold in &THRESHOLDS {
        let Some(w) = stlsq(&a, &y, &rms, threshold) else {
            continue;
        };
        let support: Vec<usize> = (0..w.len()).filter(|&j| w[j] != 0.0).collect();
        if support.is_empty() || !seen.insert(support.clone()) {
            continue;
        }
        let mse = (0..rows)
            .map(|r| {
                let f: f64 = support.iter().map(|&j| w[j] * a[j][r]).sum();
                (f - y[r]) * (f - y[r])
            })
            .sum::<f64>()
            / rows as f64;
        let mut src = String::from("(+ 0");
        for &j in &support {
            let _ = write!(src, " (* {:e}", w[j]);
            for &v in &terms[j] {
                let _ = write!(src, " {}", names[v]);
            }
            src.push(')');
        }
        src.push(')');
        out.push((src, mse));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monomials_up_to_a_degree() {
        assert_eq!(monomials(2, 2).len(), 6);
        assert_eq!(monomials(2, 3).len(), 10);
        assert_eq!(monomials(3, 2).len(), 10);
        assert_eq!(monomials(2, 2)[3], [0, 0]);
    }

    #[test]
    fn thresholding_finds_the_support_of_a_sparse_law() {
        // y = 3 x - 2 x z over x, z on a grid; the other monomials are dropped.
        let mut x = Vec::new();
        let mut z = Vec::new();
        for p in 0..20 {
            for q in 0..20 {
                x.push(p as f64 / 10.0 - 1.0);
                z.push(q as f64 / 7.0 - 1.3);
            }
        }
        let terms = monomials(2, 2);
        let a: Vec<Vec<f64>> = terms
            .iter()
            .map(|m| {
                (0..x.len())
                    .map(|r| m.iter().map(|&v| [x[r], z[r]][v]).product())
                    .collect()
            })
            .collect();
        let y: Vec<f64> = (0..x.len())
            .map(|r| 3.0 * x[r] - 2.0 * x[r] * z[r])
            .collect();
        let rms: Vec<f64> = a
            .iter()
            .map(|c| (c.iter().map(|v| v * v).sum::<f64>() / c.len() as f64).sqrt())
            .collect();
        let w = stlsq(&a, &y, &rms, 0.05).unwrap();
        for (j, m) in terms.iter().enumerate() {
            let want = match m.as_slice() {
                [0] => 3.0,
                [0, 1] => -2.0,
                _ => 0.0,
            };
            assert!((w[j] - want).abs() < 1e-9, "{m:?}: {}", w[j]);
        }
    }
}
