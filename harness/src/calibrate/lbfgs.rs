//! Limited-memory BFGS with a backtracking (Armijo) line search, for fits that must converge
//! well. Box constraints: a variable held at a bound by its gradient is frozen for the step (its
//! gradient and direction components are zeroed), and each trial point is projected.

use std::collections::VecDeque;

/// L-BFGS settings.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LbfgsSettings {
    /// Curvature pairs kept.
    pub history: usize,
    /// Stop when the largest gradient component falls below this.
    pub gradient_tolerance: f64,
    /// Line-search evaluations allowed per iteration.
    pub max_line_search: usize,
}

impl Default for LbfgsSettings {
    fn default() -> Self {
        LbfgsSettings {
            history: 10,
            gradient_tolerance: 1e-9,
            max_line_search: 30,
        }
    }
}

/// One evaluation: the loss and its gradient, or why it failed.
pub type Evaluation = Result<(f64, Vec<f64>), String>;

/// An accepted point: parameters, loss and gradient.
pub type Accepted = (Vec<f64>, f64, Vec<f64>);

/// L-BFGS state.
#[derive(Clone, Debug)]
pub struct Lbfgs {
    s: LbfgsSettings,
    pairs: VecDeque<(Vec<f64>, Vec<f64>, f64)>,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Lbfgs {
    /// A fresh state.
    pub fn new(s: LbfgsSettings) -> Self {
        Lbfgs {
            s,
            pairs: VecDeque::new(),
        }
    }

    /// The quasi-Newton descent direction `-H g` (two-loop recursion).
    fn direction(&self, g: &[f64]) -> Vec<f64> {
        let mut q = g.to_vec();
        let mut alphas = Vec::with_capacity(self.pairs.len());
        for (s, y, rho) in self.pairs.iter().rev() {
            let a = rho * dot(s, &q);
            for (qi, yi) in q.iter_mut().zip(y) {
                *qi -= a * yi;
            }
            alphas.push(a);
        }
        let gamma = self
            .pairs
            .back()
            .map_or(1.0, |(s, y, _)| dot(s, y) / dot(y, y));
        for qi in q.iter_mut() {
            *qi *= gamma;
        }
        for ((s, y, rho), a) in self.pairs.iter().zip(alphas.iter().rev()) {
            let b = rho * dot(y, &q);
            for (qi, si) in q.iter_mut().zip(s) {
                *qi += (a - b) * si;
            }
        }
        q.iter().map(|x| -x).collect()
    }

    /// One iteration from `x` (loss `f`, gradient `g`): returns the accepted point with its loss
    /// and gradient, the number of evaluations made, and `None` when no decrease was found.
    pub fn step(
        &mut self,
        x: &[f64],
        f: f64,
        g: &[f64],
        bounds: &[Option<(f64, f64)>],
        eval: &mut dyn FnMut(&[f64]) -> Evaluation,
    ) -> Result<(Option<Accepted>, usize), String> {
        // Variables at a bound whose gradient pushes them out stay where they are.
        let frozen: Vec<bool> = (0..x.len())
            .map(|i| match bounds.get(i).copied().flatten() {
                Some((lo, hi)) => (x[i] <= lo && g[i] > 0.0) || (x[i] >= hi && g[i] < 0.0),
                None => false,
            })
            .collect();
        let g_free: Vec<f64> = g
            .iter()
            .zip(&frozen)
            .map(|(&gi, &fz)| if fz { 0.0 } else { gi })
            .collect();
        if g_free.iter().fold(0.0f64, |m, v| m.max(v.abs())) < self.s.gradient_tolerance {
            return Ok((None, 0));
        }
        let mut d = self.direction(&g_free);
        for (di, &fz) in d.iter_mut().zip(&frozen) {
            if fz {
                *di = 0.0;
            }
        }
        let mut slope = dot(&g_free, &d);
        if slope >= 0.0 {
            // Not a descent direction: restart from steepest descent.
            self.pairs.clear();
            d = g_free.iter().map(|x| -x).collect();
            slope = -dot(&g_free, &g_free);
        }
        let project = |p: &mut [f64]| {
            for (xi, b) in p.iter_mut().zip(bounds) {
                if let Some((lo, hi)) = b {
                    *xi = xi.clamp(*lo, *hi);
                }
            }
        };
        let mut t = if self.pairs.is_empty() {
            1.0 / dot(&g_free, &g_free).sqrt().max(1e-12)
        } else {
            1.0
        };
        let mut evals = 0;
        for _ in 0..self.s.max_line_search {
            let mut trial: Vec<f64> = x.iter().zip(&d).map(|(xi, di)| xi + t * di).collect();
            project(&mut trial);
            evals += 1;
            match eval(&trial) {
                Ok((ft, gt)) if ft.is_finite() && ft <= f + 1e-4 * t * slope => {
                    let s: Vec<f64> = trial.iter().zip(x).map(|(a, b)| a - b).collect();
                    let y: Vec<f64> = gt
                        .iter()
                        .zip(g)
                        .zip(&frozen)
                        .map(|((a, b), &fz)| if fz { 0.0 } else { a - b })
                        .collect();
                    let sy = dot(&s, &y);
                    if sy > 1e-12 {
                        if self.pairs.len() == self.s.history {
                            self.pairs.pop_front();
                        }
                        self.pairs.push_back((s, y, 1.0 / sy));
                    }
                    return Ok((Some((trial, ft, gt)), evals));
                }
                Ok(_) => t *= 0.5,
                Err(e) => return Err(e),
            }
        }
        Ok((None, evals))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimises_the_rosenbrock_function() {
        let mut eval = |x: &[f64]| -> Evaluation {
            let (a, b) = (x[0], x[1]);
            let f = (1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2);
            Ok((
                f,
                vec![
                    -2.0 * (1.0 - a) - 400.0 * a * (b - a * a),
                    200.0 * (b - a * a),
                ],
            ))
        };
        let mut x = vec![-1.2, 1.0];
        let (mut f, mut g) = eval(&x).unwrap();
        let mut opt = Lbfgs::new(LbfgsSettings::default());
        for _ in 0..200 {
            match opt.step(&x, f, &g, &[], &mut eval).unwrap().0 {
                Some((x2, f2, g2)) => (x, f, g) = (x2, f2, g2),
                None => break,
            }
        }
        assert!(
            (x[0] - 1.0).abs() < 1e-5 && (x[1] - 1.0).abs() < 1e-5,
            "{x:?}"
        );
    }
}
