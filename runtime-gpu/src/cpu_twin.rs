//! The CPU twin of the numeric-ceiling kernel, `shaders/wgsl/ceiling.wgsl`.
//!
//! It is written to read like the shader: the same phases in the same order, the same vec4
//! blocks and running sums, the same per-invocation work split (`for lid in 0..wg` around each
//! phase, where the GPU runs the invocations at once and a barrier ends the phase), and the
//! same `state` record between dispatches. It is generic over the payload type, so it runs in
//! `f32` (what the GPU computes, compared at a named tolerance) and in `f64` (checked against an
//! independent straightforward filter in the tests). It also counts the loop-header visits of
//! every invocation, which is how the tests prove the plan keeps each invocation under the
//! software driver's cap.

// `for lid in 0..wg` indexes per-invocation state, as the shader's `local_invocation_index`
// does; an iterator over the counters would hide which invocation does what.
#![allow(clippy::needless_range_loop)]

use crate::ceiling::{CeilingPlan, CeilingProblem};
use rayon::prelude::*;
use shared_ir::Real;

/// A WGSL `vec4<f32>`.
type V4<R> = [R; 4];

/// `acc += a * b`, component-wise (the shader's `a0 += x * y` on vec4s).
#[inline(always)]
fn fma4<R: Real>(acc: &mut V4<R>, a: V4<R>, b: V4<R>) {
    for m in 0..4 {
        acc[m] += a[m] * b[m];
    }
}

/// The shader's `hsum`: `(v.x + v.y) + (v.z + v.w)`.
#[inline(always)]
fn hsum<R: Real>(v: V4<R>) -> R {
    (v[0] + v[1]) + (v[2] + v[3])
}

/// The shader's `identity_block`: row `i`, columns `j0 .. j0 + 3` of the D x D identity.
#[inline(always)]
fn identity_block<R: Real>(i: usize, j0: usize, d: usize) -> V4<R> {
    std::array::from_fn(|m| {
        if i < d && j0 + m == i {
            R::ONE
        } else {
            R::ZERO
        }
    })
}

/// The shader's `gain`: row i of K = P' H^T S^-1 from (P'[i][0], P'[i][1]) and S^-1.
#[inline(always)]
fn gain<R: Real>(p: [R; 2], s_inv: V4<R>) -> [R; 2] {
    [
        p[0] * s_inv[0] + p[1] * s_inv[2],
        p[0] * s_inv[1] + p[1] * s_inv[3],
    ]
}

/// Row `i` of a blocked matrix with `q4` blocks per row: `m[i * q4 + k]` is `mat_row(m, i, q4)[k]`.
#[inline(always)]
fn mat_row<R>(m: &[V4<R>], i: usize, q4: usize) -> &[V4<R>] {
    &m[i * q4..(i + 1) * q4]
}

/// `lid, lid + wg, ... < n` (a loop of the shader), counting its header visits.
#[inline(always)]
fn strided(
    lid: usize,
    wg: usize,
    n: usize,
    visits: &mut u64,
) -> std::iter::StepBy<std::ops::Range<usize>> {
    let range = lid.min(n)..n;
    *visits += range.len().div_ceil(wg) as u64 + 1;
    range.step_by(wg)
}

/// `0 .. n` (a loop of the shader), counting its header visits.
#[inline(always)]
fn counted(n: usize, visits: &mut u64) -> std::ops::Range<usize> {
    *visits += n as u64 + 1;
    0..n
}

/// One candidate's record of the kernel's `state` buffer: P, x and the running NLL.
#[derive(Clone, Debug, PartialEq)]
pub struct CandidateState<R> {
    /// P in blocks.
    pub p: Vec<V4<R>>,
    /// x in blocks.
    pub x: Vec<V4<R>>,
    /// The NLL so far.
    pub nll: R,
}

/// What one dispatch runs (the part of the kernel's `Params` the twin needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchParams {
    /// First time step.
    pub step_begin: usize,
    /// Time steps.
    pub step_count: usize,
    /// Write P, x and the NLL back to the state record.
    pub save_state: bool,
}

/// One workgroup: its shared arrays, its invocations' private variables, and the loop-header
/// visits each invocation made in the last dispatch.
#[derive(Clone, Debug)]
pub struct Workgroup<R> {
    wg: usize,
    wa: Vec<V4<R>>,
    wb: Vec<V4<R>>,
    x4: Vec<V4<R>>,
    xp4: Vec<V4<R>>,
    /// Loop-header visits per invocation.
    pub visits: Vec<u64>,
}

impl<R: Real> Workgroup<R> {
    /// A workgroup of `wg` invocations for matrices of padded dimension `dp`.
    pub fn new(dp: usize, wg: usize) -> Self {
        let nblk = dp * dp / 4;
        Workgroup {
            wg,
            wa: vec![[R::ZERO; 4]; nblk],
            wb: vec![[R::ZERO; 4]; nblk],
            x4: vec![[R::ZERO; 4]; dp / 4],
            xp4: vec![[R::ZERO; 4]; dp / 4],
            visits: vec![0; wg],
        }
    }
}

/// The kernel's `main` for one workgroup (one candidate with noise `q`, `r`). Returns the NLL
/// when this dispatch ran the last step (the kernel's write to `nll_out`).
pub fn dispatch<R: Real>(
    problem: &CeilingProblem<R>,
    w: &mut Workgroup<R>,
    params: DispatchParams,
    (q, r): (R, R),
    state: &mut CandidateState<R>,
) -> Option<R> {
    let (d, dp, wg, f) = (problem.d, problem.dp, w.wg, &problem.f);
    let q4 = dp / 4;
    let nblk = dp * q4;
    // Invocations past the last block only pass each block loop's header once; they are never
    // the busiest, so the twin skips them in the block loops (their visit counts stay low).
    let active = wg.min(nblk);
    let (wa, wb, v) = (&mut w.wa, &mut w.wb, &mut w.visits);
    v.fill(0);
    let mut nll = R::ZERO; // invocation 0's private running NLL
    w.x4.fill([R::ZERO; 4]);

    // Load P, x and the NLL, or start from x0 = 0, P0 = I.
    for lid in 0..active {
        for b in strided(lid, wg, nblk, &mut v[lid]) {
            wa[b] = if params.step_begin == 0 {
                identity_block(b / q4, (b % q4) * 4, d)
            } else {
                state.p[b]
            };
        }
        if params.step_begin != 0 && lid < q4 {
            w.x4[lid] = state.x[lid];
        }
    }
    if params.step_begin != 0 {
        nll = state.nll;
    }

    for lid in 0..wg {
        v[lid] += params.step_count as u64 + 1; // the step loop
    }
    let mut xp01 = [R::ZERO; 2];
    for s in 0..params.step_count {
        let y = problem.obs[params.step_begin + s];

        // Phase X: publish x, then xp = F x (own rows, and rows 0 and 1 for the innovation).
        wb[..q4].copy_from_slice(&w.x4);
        for lid in 0..q4.min(wg) {
            let row = 4 * lid;
            let (mut a, mut h0, mut h1) = ([[R::ZERO; 4]; 4], [R::ZERO; 4], [R::ZERO; 4]);
            for k in counted(q4, &mut v[lid]) {
                let xk = wb[k];
                for (m, am) in a.iter_mut().enumerate() {
                    fma4(am, f[k * dp + row + m], xk);
                }
                fma4(&mut h0, f[k * dp], xk);
                fma4(&mut h1, f[k * dp + 1], xk);
            }
            w.xp4[lid] = a.map(hsum);
            xp01 = [hsum(h0), hsum(h1)];
        }

        // Phase A: wb = (P F^T)^T, that is wb[j][i] = sum_k P[i][k] F[j][k]; j varies fastest.
        for lid in 0..active {
            for o in strided(lid, wg, nblk, &mut v[lid]) {
                let (j, ib) = (o % dp, o / dp);
                let p = [0, 1, 2, 3].map(|m| mat_row(wa, ib * 4 + m, q4));
                let mut a = [[R::ZERO; 4]; 4];
                for k in counted(q4, &mut v[lid]) {
                    let fj = f[k * dp + j];
                    for m in 0..4 {
                        fma4(&mut a[m], p[m][k], fj);
                    }
                }
                wb[j * q4 + ib] = a.map(hsum);
            }
        }

        // Phase B: wa = P' = F (P F^T) + q I, that is wa[i][j] = sum_k F[i][k] wb[j][k] + q [i = j];
        // i varies fastest.
        for lid in 0..active {
            for o in strided(lid, wg, nblk, &mut v[lid]) {
                let (i, jb) = (o % dp, o / dp);
                let t = [0, 1, 2, 3].map(|m| mat_row(wb, jb * 4 + m, q4));
                let mut a = [[R::ZERO; 4]; 4];
                for k in counted(q4, &mut v[lid]) {
                    let fi = f[k * dp + i];
                    for m in 0..4 {
                        fma4(&mut a[m], fi, t[m][k]);
                    }
                }
                let unit = identity_block::<R>(i, jb * 4, d);
                wa[i * q4 + jb] = std::array::from_fn(|m| hsum(a[m]) + q * unit[m]);
            }
        }

        // Phase S (every invocation computes the same, privately): S = H P' H^T + r I, S^-1.
        let (p0, p1) = ([wa[0][0], wa[0][1]], [wa[q4][0], wa[q4][1]]);
        let s00 = p0[0] + r;
        let s11 = p1[1] + r;
        let det = s00 * s11 - p0[1] * p1[0];
        let s_inv = [s11, -p0[1], -p1[0], s00].map(|x| x / det);

        // Phase C: wb = P' - K (H P'), with K's row i from P'[i][0..2].
        for lid in 0..active {
            for b in strided(lid, wg, nblk, &mut v[lid]) {
                let jb = b % q4;
                let blk = wa[(b / q4) * q4];
                let k = gain([blk[0], blk[1]], s_inv);
                wb[b] =
                    std::array::from_fn(|m| wa[b][m] - k[0] * wa[jb][m] - k[1] * wa[q4 + jb][m]);
            }
        }
        // The state update x = xp + K e and the likelihood term.
        let e = [y[0] - xp01[0], y[1] - xp01[1]];
        for lid in 0..q4.min(wg) {
            let row = 4 * lid;
            let ks: [[R; 2]; 4] = std::array::from_fn(|m| {
                let blk = wa[(row + m) * q4];
                gain([blk[0], blk[1]], s_inv)
            });
            w.x4[lid] = std::array::from_fn(|m| w.xp4[lid][m] + ks[m][0] * e[0] + ks[m][1] * e[1]);
        }
        let vv = [
            s_inv[0] * e[0] + s_inv[1] * e[1],
            s_inv[2] * e[0] + s_inv[3] * e[1],
        ];
        let log_2pi = R::from_f64(1.837_877_066_409_345_3);
        let two = R::from_f64(2.0);
        nll += R::from_f64(0.5) * ((e[0] * vv[0] + e[1] * vv[1]) + det.ln() + two * log_2pi);

        // Phase P: P = wb.
        for lid in 0..active {
            for b in strided(lid, wg, nblk, &mut v[lid]) {
                wa[b] = wb[b];
            }
        }
    }

    if params.save_state {
        for lid in 0..active {
            for b in strided(lid, wg, nblk, &mut v[lid]) {
                state.p[b] = wa[b];
            }
        }
        state.x.copy_from_slice(&w.x4);
        state.nll = nll;
    }
    (params.step_begin + params.step_count == problem.steps).then_some(nll)
}

/// The NLL of one candidate and the most loop-header visits any invocation made in a dispatch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwinRun<R> {
    /// The candidate's NLL.
    pub nll: R,
    /// Most loop-header visits of one invocation in one dispatch.
    pub max_loop_visits: u64,
}

/// Runs one candidate through every dispatch of `plan`, as the GPU does.
pub fn run_candidate<R: Real>(
    problem: &CeilingProblem<R>,
    plan: &CeilingPlan,
    w: &mut Workgroup<R>,
    noise: (R, R),
) -> TwinRun<R> {
    let dp = problem.dp;
    let mut state = CandidateState {
        p: vec![[R::ZERO; 4]; dp * dp / 4],
        x: vec![[R::ZERO; 4]; dp / 4],
        nll: R::ZERO,
    };
    let mut run = TwinRun {
        nll: R::NAN,
        max_loop_visits: 0,
    };
    for (i, chunk) in plan.chunks.iter().enumerate() {
        let params = DispatchParams {
            step_begin: chunk.begin,
            step_count: chunk.count,
            save_state: i + 1 < plan.chunks.len(),
        };
        if let Some(nll) = dispatch(problem, w, params, noise, &mut state) {
            run.nll = nll;
        }
        run.max_loop_visits = run
            .max_loop_visits
            .max(*w.visits.iter().max().unwrap_or(&0));
    }
    run
}

/// The NLL of every candidate of `noise` (pairs `(q, r)`), on all cores.
pub fn population<R: Real>(
    problem: &CeilingProblem<R>,
    plan: &CeilingPlan,
    noise: &[[R; 2]],
) -> Vec<R> {
    let wg = plan.workgroup_size as usize;
    noise
        .par_iter()
        .map_init(
            || Workgroup::new(problem.dp, wg),
            |w, &[q, r]| run_candidate(problem, plan, w, (q, r)).nll,
        )
        .collect()
}
