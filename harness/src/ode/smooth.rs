//! Smoothed states and their time derivatives, for the first stage of the search (which
//! proposes right-hand sides by regressing on them) and as the segments' starting states.
//!
//! Each observation's value and slope come from a cubic fitted by least squares to the
//! `2h + 1` observations around it (shifted inward at the ends), in the trajectory's own
//! times, so irregular sampling needs no resampling. The half-width `h` is chosen per
//! trajectory and state by leave-one-out cross-validation of the smoothed values: small on
//! clean data, wider as noise grows.

use super::data::Trajectory;

/// Half-widths tried.
const WIDTHS: [usize; 10] = [2, 3, 4, 5, 7, 10, 14, 20, 28, 40];

/// A trajectory's smoothed states and their derivatives, `[state][observation]`, and the
/// half-width chosen for each state.
#[derive(Clone, Debug, PartialEq)]
pub struct Smoothed {
    /// Smoothed states.
    pub x: Vec<Vec<f64>>,
    /// Their time derivatives.
    pub dx: Vec<Vec<f64>>,
    /// The half-width chosen per state.
    pub width: Vec<usize>,
}

/// Smooths every state of `tr`.
pub fn smooth(tr: &Trajectory) -> Smoothed {
    let mut out = Smoothed {
        x: Vec::new(),
        dx: Vec::new(),
        width: Vec::new(),
    };
    for col in &tr.x {
        let h = best_width(&tr.t, col);
        let (x, dx): (Vec<f64>, Vec<f64>) = (0..tr.len())
            .map(|k| local_fit(&tr.t, col, k, h, None).unwrap_or((col[k], 0.0)))
            .unzip();
        out.x.push(x);
        out.dx.push(dx);
        out.width.push(h);
    }
    out
}

/// The half-width of least leave-one-out error.
fn best_width(t: &[f64], y: &[f64]) -> usize {
    let n = t.len();
    let mut best = (f64::INFINITY, WIDTHS[0]);
    for &h in WIDTHS.iter().filter(|&&h| 2 * h < n) {
        let err: f64 = (0..n)
            .map(|k| match local_fit(t, y, k, h, Some(k)) {
                Some((v, _)) => (v - y[k]) * (v - y[k]),
                None => f64::INFINITY,
            })
            .sum();
        if err < best.0 {
            best = (err, h);
        }
    }
    best.1
}

/// The value and slope at `t[k]` of the cubic (a parabola with fewer than five points)
/// fitted to the window of half-width `h` around `k`, leaving out observation `skip`.
fn local_fit(t: &[f64], y: &[f64], k: usize, h: usize, skip: Option<usize>) -> Option<(f64, f64)> {
    let n = t.len();
    if n < 2 {
        return None;
    }
    let size = (2 * h + 1).min(n);
    let lo = k.saturating_sub(h).min(n - size);
    let idx: Vec<usize> = (lo..lo + size).filter(|&i| Some(i) != skip).collect();
    let m = idx.len();
    let deg = if m >= 5 { 3 } else { (m - 1).min(2) };
    if deg == 0 {
        return None;
    }
    // In units of the window's span, for a well-conditioned fit.
    let span = (t[idx[m - 1]] - t[idx[0]]).max(f64::MIN_POSITIVE);
    let q = deg + 1;
    let mut a = vec![0.0; q * q];
    let mut b = vec![0.0; q];
    for &i in &idx {
        let s = (t[i] - t[k]) / span;
        let mut pw = vec![1.0; q];
        for j in 1..q {
            pw[j] = pw[j - 1] * s;
        }
        for r in 0..q {
            b[r] += pw[r] * y[i];
            for c in 0..q {
                a[r * q + c] += pw[r] * pw[c];
            }
        }
    }
    if !crate::calibrate::lm::solve(&mut a, &mut b) {
        return None;
    }
    Some((b[0], b[1] / span))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slopes_of_a_clean_curve_are_close_and_noise_widens_the_window() {
        let t: Vec<f64> = (0..200)
            .map(|k| f64::from(k) * 0.05 + 0.01 * f64::from(k % 3))
            .collect();
        let x: Vec<f64> = t.iter().map(|&s| s.sin()).collect();
        let tr = Trajectory {
            name: "0".into(),
            t: t.clone(),
            x: vec![x.clone()],
            u: vec![],
        };
        let s = smooth(&tr);
        for (k, &tk) in t.iter().enumerate() {
            assert!((s.dx[0][k] - tk.cos()).abs() < 1e-4, "{k}: {}", s.dx[0][k]);
        }
        let mut rng = crate::rng::SplitMix(3);
        let noisy: Vec<f64> = x.iter().map(|v| v + 0.05 * rng.normal()).collect();
        let s2 = smooth(&Trajectory {
            x: vec![noisy],
            ..tr
        });
        assert!(s2.width[0] > s.width[0], "{:?} {:?}", s2.width, s.width);
        let err: f64 = t
            .iter()
            .zip(&s2.dx[0])
            .map(|(tk, d)| (d - tk.cos()).powi(2))
            .sum::<f64>()
            / t.len() as f64;
        assert!(err < 0.05, "{err}");
    }
}
