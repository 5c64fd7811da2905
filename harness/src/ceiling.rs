//! The compiled ceiling: the 2x2 Kalman-filter negative log-likelihood written directly in Rust.
//!
//! This is the baseline the interpreter is benchmarked against: the object-language program
//!
//! ```text
//! (loop ((k 0) (x (vec 0.0 0.0)) (P (mat (vec 1.0 0.0) (vec 0.0 1.0))) (L 0.0))
//!   (if (= k T) L
//!       (let* ((Q (scale q (eye 2))) (R (scale r (eye 2)))
//!              (Ppred (+ P Q)) (y (ref obs k)) (e (- y x)) (S (+ Ppred R))
//!              (Sinv (inv S)) (Kg (matmul Ppred Sinv)) (xnew (+ x (matvec Kg e)))
//!              (Pnew (matmul (- (eye 2) Kg) Ppred))
//!              (nll (+ (log (det S)) (dot e (matvec Sinv e)))))
//!         (recur (+ k 1) xnew Pnew (+ L nll)))))
//! ```
//!
//! as straight-line code over stack arrays, with its reverse-mode gradient with respect to `q`
//! and `r` derived by hand (no AD library, no interpreter). `T` is the number of rows of `obs`.
//! 2x2 matrices are `[R; 4]` in row-major order (`[m00, m01, m10, m11]`); the general 2x2
//! operations are used throughout (symmetry of `P` is not assumed), so the code computes exactly
//! what the program says. The only memory touched besides the stack is the caller's tape.

use shared_ir::Real;

/// A 2x2 matrix, row-major: `[m00, m01, m10, m11]`.
type M2<R> = [R; 4];

/// What the forward sweep of [`kalman_nll_grad`] saves at one time step for the backward sweep.
///
/// With `e = y - x`, `Sinv = (Ppred + r I)^-1`, `Kg = Ppred Sinv`, `v = Sinv e` and
/// `w = Sinv^T e`, these are the per-step constants of the reverse recurrence (see
/// [`kalman_nll_grad`]); all are formed during the forward sweep, off its critical path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KalmanStep<R> {
    /// The Kalman gain `Kg = Ppred Sinv` (row-major).
    pub kg: [R; 4],
    /// `B = I - Ppred^T Sinv^T` (row-major).
    pub b: [R; 4],
    /// `C = Sinv^T - w w^T` (row-major), the adjoint of `S` from the likelihood term alone.
    pub c: [R; 4],
    /// `v = Sinv e`.
    pub v: [R; 2],
    /// `v + w`, the adjoint of `e` from the likelihood term.
    pub vw: [R; 2],
}

/// `a b` for 2x2 matrices.
#[inline(always)]
fn matmul<R: Real>(a: &M2<R>, b: &M2<R>) -> M2<R> {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
    ]
}

/// `a v` for a 2x2 matrix and a 2-vector.
#[inline(always)]
fn matvec<R: Real>(a: &M2<R>, v: &[R; 2]) -> [R; 2] {
    [a[0] * v[0] + a[1] * v[1], a[2] * v[0] + a[3] * v[1]]
}

/// `a^T v` for a 2x2 matrix and a 2-vector.
#[inline(always)]
fn matvec_t<R: Real>(a: &M2<R>, v: &[R; 2]) -> [R; 2] {
    [a[0] * v[0] + a[2] * v[1], a[1] * v[0] + a[3] * v[1]]
}

/// `a^T b` for 2x2 matrices.
#[inline(always)]
fn matmul_tn<R: Real>(a: &M2<R>, b: &M2<R>) -> M2<R> {
    [
        a[0] * b[0] + a[2] * b[2],
        a[0] * b[1] + a[2] * b[3],
        a[1] * b[0] + a[3] * b[2],
        a[1] * b[1] + a[3] * b[3],
    ]
}

/// The transpose of a 2x2 matrix.
#[inline(always)]
fn transpose<R: Real>(a: &M2<R>) -> M2<R> {
    [a[0], a[2], a[1], a[3]]
}

/// One forward step: returns `(Ppred, e, Sinv, det S, Kg)` and updates nothing.
#[inline(always)]
#[allow(clippy::type_complexity)]
fn step_forward<R: Real>(
    x: &[R; 2],
    p: &M2<R>,
    y: &[R; 2],
    q: R,
    r: R,
) -> (M2<R>, [R; 2], M2<R>, R, M2<R>) {
    // Ppred = P + q I; e = y - x; S = Ppred + r I.
    let pp = [p[0] + q, p[1], p[2], p[3] + q];
    let e = [y[0] - x[0], y[1] - x[1]];
    let s = [pp[0] + r, pp[1], pp[2], pp[3] + r];
    // Closed-form 2x2 determinant and inverse.
    let det = s[0] * s[3] - s[1] * s[2];
    let si = [s[3] / det, -s[1] / det, -s[2] / det, s[0] / det];
    let kg = matmul(&pp, &si);
    (pp, e, si, det, kg)
}

/// `nll = log(det S) + e . (Sinv e)`.
#[inline(always)]
fn step_nll<R: Real>(e: &[R; 2], si: &M2<R>, det: R) -> R {
    let v = matvec(si, e);
    det.ln() + (e[0] * v[0] + e[1] * v[1])
}

/// `xnew = x + Kg e` and `Pnew = (I - Kg) Ppred`.
#[inline(always)]
fn step_update<R: Real>(x: &mut [R; 2], p: &mut M2<R>, e: &[R; 2], pp: &M2<R>, kg: &M2<R>) {
    let ke = matvec(kg, e);
    *x = [x[0] + ke[0], x[1] + ke[1]];
    let a = [R::ONE - kg[0], -kg[1], -kg[2], R::ONE - kg[3]];
    *p = matmul(&a, pp);
}

/// The initial state: `x = (0, 0)`, `P = I`.
#[inline(always)]
fn initial_state<R: Real>() -> ([R; 2], M2<R>) {
    ([R::ZERO; 2], [R::ONE, R::ZERO, R::ZERO, R::ONE])
}

/// The negative log-likelihood `L(q, r)` of the 2x2 Kalman filter over `obs` (row `k` is the
/// observation at step `k`), forward only.
pub fn kalman_nll<R: Real>(obs: &[[R; 2]], q: R, r: R) -> R {
    let (mut x, mut p) = initial_state::<R>();
    let mut l = R::ZERO;
    for y in obs {
        let (pp, e, si, det, kg) = step_forward(&x, &p, y, q, r);
        l += step_nll(&e, &si, det);
        step_update(&mut x, &mut p, &e, &pp, &kg);
    }
    l
}

/// The value `L(q, r)` and its exact gradient `(L, dL/dq, dL/dr)` by a hand-written reverse sweep.
///
/// `tape` is caller-owned scratch reused between calls: it is cleared at the start (never shrunk)
/// and holds one [`KalmanStep`] per observation, so after the first call of a given length the
/// function does not allocate.
///
/// The reverse sweep carries the adjoints `gx`, `gP` of the state leaving each step. Writing
/// `A = I - Kg`, the plain adjoint rules of the step (`Pnew = A Ppred`, `xnew = x + Kg e`,
/// `Kg = Ppred Sinv`, `Sinv = S^-1`, `log det S`, `e . Sinv e`, `S = Ppred + r I`,
/// `Ppred = P + q I`, `e = y - x`) collapse, using `Sinv^T Ppred^T = Kg^T`, to
///
/// ```text
/// X    = gP B + gx v^T          (= gP + gKg Sinv^T)
/// gP'  = A^T X + C              (adjoint of Ppred, and so of P)
/// gx'  = A^T gx - (v + w)
/// gq  += tr gP'
/// gr  += tr gS,  gS = C - Kg^T (X - gP)
/// ```
///
/// which keeps the loop-carried dependency short (two 2x2 products per step).
pub fn kalman_nll_grad<R: Real>(
    obs: &[[R; 2]],
    q: R,
    r: R,
    tape: &mut Vec<KalmanStep<R>>,
) -> (R, R, R) {
    tape.clear();
    tape.reserve(obs.len());

    // Forward sweep, saving the reverse recurrence's per-step constants.
    let (mut x, mut p) = initial_state::<R>();
    let mut l = R::ZERO;
    for y in obs {
        let (pp, e, si, det, kg) = step_forward(&x, &p, y, q, r);
        let v = matvec(&si, &e);
        let w = matvec_t(&si, &e);
        l += det.ln() + (e[0] * v[0] + e[1] * v[1]);
        step_update(&mut x, &mut p, &e, &pp, &kg);
        let m = matmul_tn(&pp, &transpose(&si));
        tape.push(KalmanStep {
            kg,
            b: [R::ONE - m[0], -m[1], -m[2], R::ONE - m[3]],
            c: [
                si[0] - w[0] * w[0],
                si[2] - w[0] * w[1],
                si[1] - w[1] * w[0],
                si[3] - w[1] * w[1],
            ],
            v,
            vw: [v[0] + w[0], v[1] + w[1]],
        });
    }

    // Reverse sweep; L does not depend on the final state, so both adjoints start at zero.
    let mut gx = [R::ZERO; 2];
    let mut gp: M2<R> = [R::ZERO; 4];
    let mut gq = R::ZERO;
    let mut gr = R::ZERO;
    for st in tape.iter().rev() {
        let kg = &st.kg;
        let b = &st.b;
        let c = &st.c;
        let v = &st.v;
        // X = gP B + gx v^T.
        let x_ = [
            gp[0] * b[0] + gp[1] * b[2] + gx[0] * v[0],
            gp[0] * b[1] + gp[1] * b[3] + gx[0] * v[1],
            gp[2] * b[0] + gp[3] * b[2] + gx[1] * v[0],
            gp[2] * b[1] + gp[3] * b[3] + gx[1] * v[1],
        ];
        // gr += tr C - <Kg, X - gP>.
        let g = [x_[0] - gp[0], x_[1] - gp[1], x_[2] - gp[2], x_[3] - gp[3]];
        gr += (c[0] + c[3]) - ((kg[0] * g[0] + kg[1] * g[1]) + (kg[2] * g[2] + kg[3] * g[3]));
        // A = I - Kg;  gP' = A^T X + C;  gx' = A^T gx - (v + w).
        let a = [R::ONE - kg[0], -kg[1], -kg[2], R::ONE - kg[3]];
        let ax = matmul_tn(&a, &x_);
        gp = [ax[0] + c[0], ax[1] + c[1], ax[2] + c[2], ax[3] + c[3]];
        gq += gp[0] + gp[3];
        let agx = matvec_t(&a, &gx);
        gx = [agx[0] - st.vw[0], agx[1] - st.vw[1]];
    }
    (l, gq, gr)
}

/// The "B single runs" ceiling: for each lane `i`, `(value[i], dq[i], dr[i])` is
/// [`kalman_nll_grad`]`(obs, q[i], r[i], tape)`; all lanes share `obs` and the scratch `tape`.
///
/// # Panics
///
/// If `r`, `value`, `dq` or `dr` is shorter than `q`.
pub fn kalman_nll_grad_lanes<R: Real>(
    obs: &[[R; 2]],
    q: &[R],
    r: &[R],
    value: &mut [R],
    dq: &mut [R],
    dr: &mut [R],
    tape: &mut Vec<KalmanStep<R>>,
) {
    let n = q.len();
    let (r, value, dq, dr) = (&r[..n], &mut value[..n], &mut dq[..n], &mut dr[..n]);
    for i in 0..n {
        let (l, gq, gr) = kalman_nll_grad(obs, q[i], r[i], tape);
        value[i] = l;
        dq[i] = gq;
        dr[i] = gr;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference file was written by Python's `json`, which emits the non-standard tokens
    /// `NaN`, `Infinity` and `-Infinity` (e.g. for `(/ 1.0 0.0)`); serde_json rejects them, so
    /// outside string literals they become `null` (no entry read here uses them).
    fn strict_json(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let mut in_string = false;
        while let Some(c) = rest.chars().next() {
            if in_string {
                if c == '\\' {
                    let n = c.len_utf8() + rest[1..].chars().next().map_or(0, char::len_utf8);
                    out.push_str(&rest[..n]);
                    rest = &rest[n..];
                    continue;
                }
                in_string = c != '"';
            } else if c == '"' {
                in_string = true;
            } else if let Some(tok) = ["-Infinity", "Infinity", "NaN"]
                .into_iter()
                .find(|t| rest.starts_with(t))
            {
                out.push_str("null");
                rest = &rest[tok.len()..];
                continue;
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    /// The `kalman2d_T80` observations (80 rows) from the oracle reference file.
    fn oracle_obs() -> Vec<[f64; 2]> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../data/suite/oracle_refs.json"
        );
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
        let json: serde_json::Value =
            serde_json::from_str(&strict_json(&text)).expect("oracle_refs.json parses");
        let prog = json["programs"]
            .as_array()
            .expect("programs array")
            .iter()
            .find(|p| p["name"] == "kalman2d_T80")
            .expect("kalman2d_T80 entry");
        let m = &prog["matrix"];
        assert_eq!(m["rows"].as_u64(), Some(80));
        assert_eq!(m["cols"].as_u64(), Some(2));
        let data: Vec<f64> = m["data"]
            .as_array()
            .expect("matrix.data array")
            .iter()
            .map(|v| v.as_f64().expect("number"))
            .collect();
        assert_eq!(data.len(), 160);
        data.chunks_exact(2).map(|c| [c[0], c[1]]).collect()
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    #[test]
    fn matches_oracle_reference() {
        let obs = oracle_obs();
        let mut tape = Vec::new();
        let (l, gq, gr) = kalman_nll_grad(&obs, 0.05, 0.1, &mut tape);
        assert!(rel(l, 831.220_886_230_468_8) < 1e-4, "value {l}");
        assert!(rel(gq, -3_458.668_212_890_625) < 2e-3, "dL/dq {gq}");
        assert!(rel(gr, -7_529.309_570_312_5) < 2e-3, "dL/dr {gr}");
        assert_eq!(kalman_nll(&obs, 0.05, 0.1), l);
        assert_eq!(tape.len(), 80);
    }

    #[test]
    fn gradient_matches_central_differences() {
        let obs = oracle_obs();
        let mut tape = Vec::new();
        for &(q, r) in &[(0.05, 0.1), (0.3, 0.02), (1.0, 2.0)] {
            let (_, gq, gr) = kalman_nll_grad(&obs, q, r, &mut tape);
            let hq = 1e-6 * q;
            let hr = 1e-6 * r;
            let fq = (kalman_nll(&obs, q + hq, r) - kalman_nll(&obs, q - hq, r)) / (2.0 * hq);
            let fr = (kalman_nll(&obs, q, r + hr) - kalman_nll(&obs, q, r - hr)) / (2.0 * hr);
            assert!(rel(gq, fq) < 1e-6, "q={q} r={r}: dL/dq {gq} vs fd {fq}");
            assert!(rel(gr, fr) < 1e-6, "q={q} r={r}: dL/dr {gr} vs fd {fr}");
        }
    }

    #[test]
    fn f32_agrees_with_f64() {
        let obs = oracle_obs();
        let obs32: Vec<[f32; 2]> = obs.iter().map(|y| [y[0] as f32, y[1] as f32]).collect();
        let (mut t64, mut t32) = (Vec::new(), Vec::new());
        let a = kalman_nll_grad(&obs, 0.05, 0.1, &mut t64);
        let b = kalman_nll_grad(&obs32, 0.05f32, 0.1f32, &mut t32);
        for (x, y) in [(a.0, b.0), (a.1, b.1), (a.2, b.2)] {
            assert!(rel(f64::from(y), x) < 1e-3, "f32 {y} vs f64 {x}");
        }
        assert_eq!(kalman_nll(&obs32, 0.05f32, 0.1f32), b.0);
    }

    #[test]
    fn lanes_equal_single_runs() {
        let obs = oracle_obs();
        let q = [0.05, 0.2, 0.01, 1.5];
        let r = [0.1, 0.05, 0.7, 0.3];
        let (mut v, mut dq, mut dr) = ([0.0; 4], [0.0; 4], [0.0; 4]);
        let mut tape = Vec::new();
        kalman_nll_grad_lanes(&obs, &q, &r, &mut v, &mut dq, &mut dr, &mut tape);
        let mut tape1 = Vec::new();
        for i in 0..4 {
            let (l, gq, gr) = kalman_nll_grad(&obs, q[i], r[i], &mut tape1);
            assert_eq!((v[i], dq[i], dr[i]), (l, gq, gr), "lane {i}");
        }
    }
}
