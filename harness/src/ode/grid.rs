//! The time steps of an integration: each gap between two observations cut into equal steps
//! no longer than the largest step allowed, so that a regular grid takes one Runge-Kutta step
//! per gap and an irregular one takes more where its gaps are long.

use super::data::Trajectory;

/// The steps across one trajectory.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// Step sizes, in order.
    pub steps: Vec<f64>,
    /// `at[k]`: the steps taken to reach observation `k` (`at[0]` is 0).
    pub at: Vec<usize>,
    /// Each step's time at its start.
    pub start: Vec<f64>,
}

impl Grid {
    /// The steps of `t`, none longer than `max_step`.
    pub fn of(t: &[f64], max_step: f64) -> Grid {
        let mut g = Grid {
            steps: Vec::new(),
            at: vec![0],
            start: Vec::new(),
        };
        for w in t.windows(2) {
            let gap = w[1] - w[0];
            let n = steps_for(gap, max_step);
            for s in 0..n {
                g.steps.push(gap / n as f64);
                g.start.push(w[0] + gap * s as f64 / n as f64);
            }
            g.at.push(g.steps.len());
        }
        g
    }

    /// For each step and each input, its value at the step's start and its slope: inputs are
    /// linear between their samples.
    pub fn inputs(&self, tr: &Trajectory) -> Vec<(Vec<f64>, Vec<f64>)> {
        tr.u.iter()
            .map(|u| {
                let mut at = Vec::with_capacity(self.steps.len());
                let mut slope = Vec::with_capacity(self.steps.len());
                for k in 0..tr.len() - 1 {
                    let m = (u[k + 1] - u[k]) / (tr.t[k + 1] - tr.t[k]);
                    for s in self.at[k]..self.at[k + 1] {
                        at.push(u[k] + m * (self.start[s] - tr.t[k]));
                        slope.push(m);
                    }
                }
                (at, slope)
            })
            .collect()
    }
}

/// Appends `v[from..to]` to `out`, padded with zeros to `width`: one lane's per-step values
/// in a per-lane vector as wide as the longest lane's.
pub fn push_padded(out: &mut Vec<f64>, v: &[f64], from: usize, to: usize, width: usize) {
    out.extend_from_slice(&v[from..to]);
    out.resize(out.len() + width - (to - from), 0.0);
}

/// Steps to cross `gap` at most `max_step` long each (at least one; at most a million).
pub fn steps_for(gap: f64, max_step: f64) -> usize {
    let n = (gap / max_step * (1.0 - 1e-9)).ceil();
    if n.is_finite() {
        (n as usize).clamp(1, 1_000_000)
    } else {
        1
    }
}

/// The median gap between observations over `trajs`: the default largest step.
pub fn median_gap(trajs: &[Trajectory]) -> f64 {
    let mut gaps: Vec<f64> = trajs
        .iter()
        .flat_map(|tr| tr.t.windows(2).map(|w| w[1] - w[0]))
        .collect();
    gaps.sort_by(f64::total_cmp);
    gaps.get(gaps.len() / 2).copied().unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_gaps_take_several_steps() {
        let g = Grid::of(&[0.0, 0.1, 0.35, 0.45], 0.1);
        assert_eq!(g.at, vec![0, 1, 4, 5]);
        assert!((g.steps[1] - 0.25 / 3.0).abs() < 1e-15);
        assert!((g.start[3] - (0.1 + 0.5 / 3.0)).abs() < 1e-15);
        assert_eq!(steps_for(0.1, 0.1), 1);
    }
}
