//! An independent, straightforward D-dimensional Kalman filter in f64, written from the issue's
//! definition with plain nested vectors: no padding, no blocks, no shared code with the crate.

type Mat = Vec<Vec<f64>>;

fn matmul(a: &Mat, b: &Mat) -> Mat {
    let (n, m, p) = (a.len(), b.len(), b[0].len());
    (0..n)
        .map(|i| {
            (0..p)
                .map(|j| (0..m).map(|k| a[i][k] * b[k][j]).sum())
                .collect()
        })
        .collect()
}

fn transpose(a: &Mat) -> Mat {
    (0..a[0].len())
        .map(|j| (0..a.len()).map(|i| a[i][j]).collect())
        .collect()
}

/// The NLL of the filter with F = 0.9 I + off-diagonal (0.3 / D) cos(0.7 (i + 1)(j + 1)),
/// H = first two components, y_t = (sin 0.3 t, 0.5 cos 0.2 t), Q = q I, R = r I, x0 = 0, P0 = I.
pub fn kalman_nll(d: usize, steps: usize, q: f64, r: f64) -> f64 {
    let f: Mat = (0..d)
        .map(|i| {
            (0..d)
                .map(|j| {
                    if i == j {
                        0.9
                    } else {
                        0.3 / d as f64 * (0.7 * ((i + 1) * (j + 1)) as f64).cos()
                    }
                })
                .collect()
        })
        .collect();
    let ft = transpose(&f);
    let mut x = vec![0.0; d];
    let mut p: Mat = (0..d)
        .map(|i| (0..d).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    let mut nll = 0.0;
    for t in 0..steps {
        let y = [(0.3 * t as f64).sin(), 0.5 * (0.2 * t as f64).cos()];
        let xp: Vec<f64> = (0..d)
            .map(|i| (0..d).map(|k| f[i][k] * x[k]).sum())
            .collect();
        let mut pp = matmul(&matmul(&f, &p), &ft);
        for (i, row) in pp.iter_mut().enumerate() {
            row[i] += q;
        }
        let s = [[pp[0][0] + r, pp[0][1]], [pp[1][0], pp[1][1] + r]];
        let det = s[0][0] * s[1][1] - s[0][1] * s[1][0];
        let si = [
            [s[1][1] / det, -s[0][1] / det],
            [-s[1][0] / det, s[0][0] / det],
        ];
        let e = [y[0] - xp[0], y[1] - xp[1]];
        let k: Vec<[f64; 2]> = (0..d)
            .map(|i| {
                [
                    pp[i][0] * si[0][0] + pp[i][1] * si[1][0],
                    pp[i][0] * si[0][1] + pp[i][1] * si[1][1],
                ]
            })
            .collect();
        x = (0..d)
            .map(|i| xp[i] + k[i][0] * e[0] + k[i][1] * e[1])
            .collect();
        p = (0..d)
            .map(|i| {
                (0..d)
                    .map(|j| pp[i][j] - k[i][0] * pp[0][j] - k[i][1] * pp[1][j])
                    .collect()
            })
            .collect();
        let quad =
            e[0] * (si[0][0] * e[0] + si[0][1] * e[1]) + e[1] * (si[1][0] * e[0] + si[1][1] * e[1]);
        nll += 0.5 * (quad + det.ln() + 2.0 * (2.0 * std::f64::consts::PI).ln());
    }
    nll
}
