//! The shooting fit's normal equations solved by their structure. A segment's start couples
//! only with its own lanes and, through continuity, with the next segment's start: ordered
//! segment by segment, the starts' block is a band a few states wide. The constants couple with
//! everything: a border. The damped system is solved by a banded Cholesky factor of the starts'
//! block and the Schur complement of the constants, in time linear in the segments, where a
//! dense solve takes their cube.

use crate::calibrate::lm::solve;

/// The normal equations `J^T J` and `J^T r` in bordered-band form.
pub struct Normal {
    /// The band's order for each free parameter: `Some(position)` for a segment start, `None`
    /// for a constant (whose place in the border is `border[a]`).
    place: Vec<Place>,
    /// The band's size.
    n: usize,
    /// Its half-bandwidth.
    w: usize,
    /// The border's size (the constants).
    k: usize,
    /// The band's lower half: `band[i * (w + 1) + (i - j)]` for `j <= i`, `i - j <= w`.
    band: Vec<f64>,
    /// The band-border block: `cross[i * k + c]`.
    cross: Vec<f64>,
    /// The border's block: `corner[c * k + e]`.
    corner: Vec<f64>,
    /// `J^T r` in the band's order, then the border's.
    rhs: Vec<f64>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Place {
    Band(usize),
    Border(usize),
}

impl Normal {
    /// The layout for free parameters whose segment (`None` for a constant) and state are
    /// `key[a]`, and residual rows touching the free parameters `rows[r]`. `None` when the
    /// starts' block is not narrow enough to gain from the band.
    pub fn layout(key: &[Option<(usize, usize)>], rows: &[Vec<usize>]) -> Option<Normal> {
        let mut starts: Vec<(usize, usize, usize)> = key
            .iter()
            .enumerate()
            .filter_map(|(a, k)| k.map(|(s, i)| (s, i, a)))
            .collect();
        starts.sort_unstable();
        let mut place = vec![Place::Border(usize::MAX); key.len()];
        for (pos, &(_, _, a)) in starts.iter().enumerate() {
            place[a] = Place::Band(pos);
        }
        let mut k = 0;
        for p in place.iter_mut() {
            if *p == Place::Border(usize::MAX) {
                *p = Place::Border(k);
                k += 1;
            }
        }
        let n = starts.len();
        let mut w = 0;
        for row in rows {
            let band: Vec<usize> = row
                .iter()
                .filter_map(|&a| match place[a] {
                    Place::Band(i) => Some(i),
                    Place::Border(_) => None,
                })
                .collect();
            if let (Some(lo), Some(hi)) = (band.iter().min(), band.iter().max()) {
                w = w.max(hi - lo);
            }
        }
        if n == 0 || (w + 1) * 4 > n {
            return None;
        }
        Some(Normal {
            place,
            n,
            w,
            k,
            band: vec![0.0; n * (w + 1)],
            cross: vec![0.0; n * k],
            corner: vec![0.0; k * k],
            rhs: vec![0.0; n + k],
        })
    }

    /// Accumulates `J^T J` and `J^T r` from residuals `r` whose rows' entries over the free
    /// parameters are `rows[l]` (`(parameter, derivative)`).
    pub fn accumulate(&mut self, r: &[f64], rows: &[Vec<(usize, f64)>]) {
        self.band.iter_mut().for_each(|v| *v = 0.0);
        self.cross.iter_mut().for_each(|v| *v = 0.0);
        self.corner.iter_mut().for_each(|v| *v = 0.0);
        self.rhs.iter_mut().for_each(|v| *v = 0.0);
        let (n, w, k) = (self.n, self.w, self.k);
        for (res, row) in r.iter().zip(rows) {
            for &(a, va) in row {
                match self.place[a] {
                    Place::Band(i) => self.rhs[i] += va * res,
                    Place::Border(c) => self.rhs[n + c] += va * res,
                }
                for &(b, vb) in row {
                    match (self.place[a], self.place[b]) {
                        (Place::Band(i), Place::Band(j)) if j <= i => {
                            self.band[i * (w + 1) + (i - j)] += va * vb;
                        }
                        (Place::Band(i), Place::Border(c)) => self.cross[i * k + c] += va * vb,
                        (Place::Border(c), Place::Border(e)) => {
                            self.corner[c * k + e] += va * vb;
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// The damped step `-(J^T J + lambda D)^-1 J^T r` over the free parameters (in their order),
    /// `D` the diagonal of `J^T J` floored at 1e-12 of its largest entry; `None` when the system
    /// is singular.
    pub fn damped(&self, lambda: f64) -> Option<Vec<f64>> {
        let (n, w, k) = (self.n, self.w, self.k);
        let wb = w + 1;
        let top = (0..n)
            .map(|i| self.band[i * wb])
            .chain((0..k).map(|c| self.corner[c * k + c]))
            .fold(0.0f64, f64::max);
        let floor = (top * 1e-12).max(1e-300);
        let mut l = self.band.clone();
        for i in 0..n {
            l[i * wb] += lambda * l[i * wb].max(floor);
        }
        // The band's Cholesky factor, in place: A = L L^T.
        for i in 0..n {
            for j in i.saturating_sub(w)..=i {
                let mut s = l[i * wb + (i - j)];
                for m in i.saturating_sub(w).max(j.saturating_sub(w))..j {
                    s -= l[i * wb + (i - m)] * l[j * wb + (j - m)];
                }
                if i == j {
                    if s <= 0.0 || !s.is_finite() {
                        return None;
                    }
                    l[i * wb] = s.sqrt();
                } else {
                    l[i * wb + (i - j)] = s / l[j * wb];
                }
            }
        }
        // Solves A x = b in place, b in the band's order.
        let band_solve = |b: &mut [f64]| {
            for i in 0..n {
                let mut s = b[i];
                for m in i.saturating_sub(w)..i {
                    s -= l[i * wb + (i - m)] * b[m];
                }
                b[i] = s / l[i * wb];
            }
            for i in (0..n).rev() {
                let mut s = b[i];
                for m in i + 1..(i + wb).min(n) {
                    s -= l[m * wb + (m - i)] * b[m];
                }
                b[i] = s / l[i * wb];
            }
        };
        // The right-hand side -J^T r.
        let mut bz: Vec<f64> = self.rhs[..n].iter().map(|g| -g).collect();
        let mut bc: Vec<f64> = self.rhs[n..].iter().map(|g| -g).collect();
        if k > 0 {
            // The Schur complement S = C - B^T A^-1 B and its right-hand side.
            let mut ainv_b = vec![0.0; n * k];
            let mut col = vec![0.0; n];
            for c in 0..k {
                for (i, v) in col.iter_mut().enumerate() {
                    *v = self.cross[i * k + c];
                }
                band_solve(&mut col);
                for (i, v) in col.iter().enumerate() {
                    ainv_b[i * k + c] = *v;
                }
            }
            let mut s = self.corner.clone();
            for c in 0..k {
                s[c * k + c] += lambda * self.corner[c * k + c].max(floor);
            }
            let mut ainv_bz = bz.clone();
            band_solve(&mut ainv_bz);
            for c in 0..k {
                for e in 0..k {
                    let dot: f64 = (0..n)
                        .map(|i| self.cross[i * k + c] * ainv_b[i * k + e])
                        .sum();
                    s[c * k + e] -= dot;
                }
                let dot: f64 = (0..n).map(|i| self.cross[i * k + c] * ainv_bz[i]).sum();
                bc[c] -= dot;
            }
            if !solve(&mut s, &mut bc) {
                return None;
            }
            // The starts: A x_z = b_z - B x_c.
            for (i, v) in bz.iter_mut().enumerate() {
                let dot: f64 = (0..k).map(|c| self.cross[i * k + c] * bc[c]).sum();
                *v -= dot;
            }
        }
        band_solve(&mut bz);
        let step: Vec<f64> = self
            .place
            .iter()
            .map(|p| match *p {
                Place::Band(i) => bz[i],
                Place::Border(c) => bc[c],
            })
            .collect();
        step.iter().all(|v| v.is_finite()).then_some(step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix;

    /// The banded solve against a dense one, on the structure of a shooting fit: 2 constants,
    /// 3 states, 12 segments, each row touching the constants, its segment's starts and, on
    /// continuity rows, the next segment's.
    #[test]
    fn the_bordered_band_solve_is_the_dense_solve() {
        let (k, d, nseg) = (2, 3, 12);
        let m = k + d * nseg;
        let key: Vec<Option<(usize, usize)>> = (0..m)
            .map(|p| (p >= k).then(|| ((p - k) % nseg, (p - k) / nseg)))
            .collect();
        let mut rng = SplitMix(17);
        let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
        let mut r = Vec::new();
        for s in 0..nseg {
            for obs in 0..6 {
                let mut row: Vec<(usize, f64)> = (0..k).map(|c| (c, rng.unit() - 0.5)).collect();
                for i in 0..d {
                    row.push((k + i * nseg + s, rng.unit() - 0.5));
                    if obs == 5 && s + 1 < nseg {
                        row.push((k + i * nseg + s + 1, rng.unit() - 0.5));
                    }
                }
                rows.push(row);
                r.push(rng.unit() - 0.5);
            }
        }
        let touched: Vec<Vec<usize>> = rows
            .iter()
            .map(|row| row.iter().map(|e| e.0).collect())
            .collect();
        let mut normal = Normal::layout(&key, &touched).expect("a band");
        normal.accumulate(&r, &rows);
        // The dense normal equations.
        let mut jtj = vec![0.0; m * m];
        let mut jtr = vec![0.0; m];
        for (res, row) in r.iter().zip(&rows) {
            for &(a, va) in row {
                jtr[a] += va * res;
                for &(b, vb) in row {
                    jtj[a * m + b] += va * vb;
                }
            }
        }
        for lambda in [1e-6, 1e-2, 10.0] {
            let top = (0..m).map(|i| jtj[i * m + i]).fold(0.0f64, f64::max);
            let mut a = jtj.clone();
            for i in 0..m {
                a[i * m + i] += lambda * a[i * m + i].max(top * 1e-12);
            }
            let mut b: Vec<f64> = jtr.iter().map(|g| -g).collect();
            assert!(solve(&mut a, &mut b));
            let banded = normal.damped(lambda).unwrap();
            for (x, y) in banded.iter().zip(&b) {
                assert!(
                    (x - y).abs() <= 1e-9 * (1.0 + y.abs()),
                    "{x} {y} at lambda {lambda}"
                );
            }
        }
    }
}
