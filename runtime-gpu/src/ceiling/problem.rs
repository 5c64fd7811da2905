//! The filter of the ceiling experiment, and its layout as the kernel reads it.
//!
//! F = 0.9 I plus off-diagonal entries (0.3 / D) cos(0.7 (i + 1)(j + 1)); H observes the first
//! two state components; y_t = (sin 0.3 t, 0.5 cos 0.2 t) for t = 0 .. T - 1; Q = q I, R = r I
//! with q_g = 0.05 (1 + 0.0007 g) and r_g = 0.10 (1 + 0.0005 g); x0 = 0, P0 = I.

use shared_ir::Real;

/// Time steps of the experiment (T).
pub const STEPS: usize = 80;

/// The population size of the paper's figures (G).
pub const PAPER_POPULATION: usize = 16_384;

/// Entry (i, j) of the D x D transition matrix F.
pub fn transition(d: usize, i: usize, j: usize) -> f64 {
    if i == j {
        0.9
    } else {
        (0.3 / d as f64) * (0.7 * ((i + 1) * (j + 1)) as f64).cos()
    }
}

/// The observation y_t.
pub fn observation(t: usize) -> [f64; 2] {
    let t = t as f64;
    [(0.3 * t).sin(), 0.5 * (0.2 * t).cos()]
}

/// The noise variances (q_g, r_g) of candidate g.
pub fn noise(g: usize) -> (f64, f64) {
    let g = g as f64;
    (0.05 * (1.0 + 0.0007 * g), 0.10 * (1.0 + 0.0005 * g))
}

/// (q_g, r_g) for every g in `candidates`, rounded to `R`.
pub fn noise_population<R: Real>(candidates: std::ops::Range<usize>) -> Vec<[R; 2]> {
    candidates
        .map(|g| {
            let (q, r) = noise(g);
            [R::from_f64(q), R::from_f64(r)]
        })
        .collect()
}

/// The filter in the kernel's layout: D padded to DP = 4 ceil(D / 4), F stored by block
/// columns (`f[(j / 4) * DP + i][j % 4]` is `F[i][j]`), zero in the padding.
#[derive(Clone, Debug, PartialEq)]
pub struct CeilingProblem<R> {
    /// The state dimension D.
    pub d: usize,
    /// D padded to a multiple of 4.
    pub dp: usize,
    /// Time steps T.
    pub steps: usize,
    /// F in blocks, `dp * dp / 4` of them, by block columns.
    pub f: Vec<[R; 4]>,
    /// y_t for t = 0 .. T - 1.
    pub obs: Vec<[R; 2]>,
}

impl<R: Real> CeilingProblem<R> {
    /// The filter of dimension `d` over `steps` steps, rounded to `R`.
    pub fn new(d: usize, steps: usize) -> Self {
        let dp = d.div_ceil(4) * 4;
        let mut f = vec![[R::ZERO; 4]; dp * dp / 4];
        for i in 0..d {
            for j in 0..d {
                f[(j / 4) * dp + i][j % 4] = R::from_f64(transition(d, i, j));
            }
        }
        let obs = (0..steps)
            .map(|t| observation(t).map(R::from_f64))
            .collect();
        CeilingProblem {
            d,
            dp,
            steps,
            f,
            obs,
        }
    }
}
