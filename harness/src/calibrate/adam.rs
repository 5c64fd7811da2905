//! Adam, with the arithmetic in the run's precision (so an f32 fit follows the same rounding as
//! PyTorch's float32 Adam, the paper's optimiser).

use runtime_cpu::Real;

/// Adam's settings.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AdamSettings {
    /// Learning rate.
    pub lr: f64,
    /// First-moment decay.
    pub beta1: f64,
    /// Second-moment decay.
    pub beta2: f64,
    /// Denominator guard.
    pub eps: f64,
}

impl Default for AdamSettings {
    /// The paper's settings: learning rate 0.05, betas 0.9 and 0.999, eps 1e-8.
    fn default() -> Self {
        AdamSettings {
            lr: 0.05,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }
}

/// Adam's state for one parameter vector.
#[derive(Clone, Debug)]
pub struct Adam<R> {
    s: AdamSettings,
    m: Vec<R>,
    v: Vec<R>,
    t: i32,
}

impl<R: Real> Adam<R> {
    /// A fresh state for `n` parameters.
    pub fn new(s: AdamSettings, n: usize) -> Self {
        Adam {
            s,
            m: vec![R::ZERO; n],
            v: vec![R::ZERO; n],
            t: 0,
        }
    }

    /// One update of `p` against gradient `g`, as PyTorch's `Adam.step` computes it.
    pub fn step(&mut self, p: &mut [R], g: &[R]) {
        self.t += 1;
        let bc1 = 1.0 - self.s.beta1.powi(self.t);
        let bc2_sqrt = (1.0 - self.s.beta2.powi(self.t)).sqrt();
        let step_size = R::from_f64(self.s.lr / bc1);
        let (b1c, b2, b2c) = (
            R::from_f64(1.0 - self.s.beta1),
            R::from_f64(self.s.beta2),
            R::from_f64(1.0 - self.s.beta2),
        );
        let (bc2_sqrt, eps) = (R::from_f64(bc2_sqrt), R::from_f64(self.s.eps));
        for i in 0..p.len() {
            let m = self.m[i];
            self.m[i] = m + b1c * (g[i] - m);
            self.v[i] = self.v[i] * b2 + b2c * g[i] * g[i];
            let denom = self.v[i].sqrt() / bc2_sqrt + eps;
            p[i] -= step_size * (self.m[i] / denom);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_step_moves_each_parameter_by_the_learning_rate() {
        // After one step m_hat = g and v_hat = g^2, so the update is lr * g / (|g| + eps).
        let mut a = Adam::<f64>::new(AdamSettings::default(), 2);
        let mut p = [1.0, -1.0];
        a.step(&mut p, &[3.0, -0.5]);
        assert!((p[0] - (1.0 - 0.05)).abs() < 1e-7);
        assert!((p[1] - (-1.0 + 0.05)).abs() < 1e-7);
    }

    #[test]
    fn minimises_a_quadratic() {
        let mut a = Adam::<f64>::new(
            AdamSettings {
                lr: 0.1,
                ..Default::default()
            },
            1,
        );
        let mut p = [3.0];
        for _ in 0..500 {
            let g = [2.0 * (p[0] - 1.0)];
            a.step(&mut p, &g);
        }
        assert!((p[0] - 1.0).abs() < 1e-3);
    }
}
