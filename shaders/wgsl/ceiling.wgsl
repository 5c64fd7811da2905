// The numeric-ceiling kernel: the forward negative log-likelihood of a D-dimensional Kalman
// filter for a population of noise candidates (q, r), one workgroup per candidate.
//
// Its CPU twin, written to read like this file phase by phase, is `runtime-gpu/src/cpu_twin.rs`;
// the host side that plans and records the dispatches is `runtime-gpu/src/ceiling/`.
//
// Per time step t (x and P are the filter's state, F the transition, H = [I2 0]):
//   xp = F x                       P' = F P F^T + q I
//   e  = y_t - H xp                S  = H P' H^T + r I   (2 x 2)
//   K  = P' H^T S^-1               x  = xp + K e          P = P' - K H P'
//   nll += 0.5 (e^T S^-1 e + log det S + 2 log 2 pi)
//
// Layout. D is padded to DP = 4 ceil(D / 4). P and the scratch matrix are stored row-major as
// vec4 blocks: element (i, j) is component j % 4 of block i * Q4 + j / 4, with Q4 = DP / 4. F is
// stored by block columns instead: f_mat[k * DP + i] holds F[i][4k .. 4k + 3], so invocations
// that take consecutive rows of F read consecutive memory. Padding rows and columns are zero
// and stay zero (F's padding is zero and q is added for i < D only).
//
// Work split. Every matrix phase gives each invocation whole output blocks, o = lid, lid + WG,
// ... (4 outputs, 4 running vec4 sums over the shared index k), with the row of F varying
// fastest across invocations: F reads are contiguous and workgroup reads are broadcasts.
// Invocations lid < Q4 own the state vector block x[4 lid .. 4 lid + 3] in a private variable;
// invocation 0 owns the running NLL. Workgroup barriers separate the phases.
//
// Loop budget. Mesa's software Vulkan driver (lavapipe) stops an invocation after 65,535 loop
// iterations in total, without an error. The host therefore runs at most `step_count` steps
// per dispatch, chosen so that one invocation stays within a few thousand iterations, and
// carries P, x and the NLL across dispatches in `state`.

// The largest padded dimension DP this pipeline accepts (sizes the workgroup arrays).
override DMAX: u32 = 64u;
// Invocations per workgroup; at least DP / 4.
override WG: u32 = 256u;

struct Params {
    // State dimension D (at least 2).
    d: u32,
    // D padded to a multiple of 4.
    dp: u32,
    // Index of the first candidate of this dispatch in `noise` and `nll_out`.
    cand_base: u32,
    // First time step of this dispatch.
    step_begin: u32,
    // Time steps in this dispatch.
    step_count: u32,
    // Time steps in all (T).
    steps_total: u32,
    // 1: more dispatches follow, so write P, x and the NLL back to `state`.
    save_state: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// F by block columns: f_mat[k * DP + i] = F[i][4k .. 4k + 3].
@group(0) @binding(1) var<storage, read> f_mat: array<vec4<f32>>;
// The observations y_t.
@group(0) @binding(2) var<storage, read> obs: array<vec2<f32>>;
// (q, r) per candidate.
@group(0) @binding(3) var<storage, read> noise: array<vec2<f32>>;
// Per candidate of this dispatch: P (DP x DP blocks), x (Q4 blocks), (nll, 0, 0, 0).
@group(0) @binding(4) var<storage, read_write> state: array<vec4<f32>>;
// The NLL per candidate, written by the dispatch that runs the last step.
@group(0) @binding(5) var<storage, read_write> nll_out: array<f32>;

// P, then the predicted covariance P'.
var<workgroup> wa: array<vec4<f32>, DMAX * DMAX / 4u>;
// Scratch: x, then (P F^T)^T, then the updated P.
var<workgroup> wb: array<vec4<f32>, DMAX * DMAX / 4u>;

const LOG_2PI: f32 = 1.8378770664093453;

// The sum of a vec4's components, in a fixed order (the CPU twin adds in the same order).
fn hsum(v: vec4<f32>) -> f32 {
    return (v.x + v.y) + (v.z + v.w);
}

// Row `i`, columns j0 .. j0 + 3 of the D x D identity.
fn identity_block(i: u32, j0: u32, d: u32) -> vec4<f32> {
    let cols = vec4<u32>(j0) + vec4<u32>(0u, 1u, 2u, 3u);
    let on = (cols == vec4<u32>(i)) & vec4<bool>(i < d);
    return select(vec4<f32>(0.0), vec4<f32>(1.0), on);
}

// Row i of the gain K = P' H^T S^-1 from (P'[i][0], P'[i][1]) and S^-1 (row-major).
fn gain(p: vec2<f32>, s_inv: vec4<f32>) -> vec2<f32> {
    return vec2<f32>(p.x * s_inv.x + p.y * s_inv.z, p.x * s_inv.y + p.y * s_inv.w);
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let d = params.d;
    let dp = params.dp;
    let q4 = dp / 4u;
    let nblk = dp * q4;
    let cand = params.cand_base + wid.x;
    let q = noise[cand].x;
    let r = noise[cand].y;
    let base = wid.x * (nblk + q4 + 1u);

    var x4 = vec4<f32>(0.0);
    var nll = 0.0;

    // Load P, x and the NLL, or start from x0 = 0, P0 = I.
    if (params.step_begin == 0u) {
        for (var b = lid; b < nblk; b += WG) {
            wa[b] = identity_block(b / q4, (b % q4) * 4u, d);
        }
    } else {
        for (var b = lid; b < nblk; b += WG) {
            wa[b] = state[base + b];
        }
        if (lid < q4) {
            x4 = state[base + nblk + lid];
        }
        if (lid == 0u) {
            nll = state[base + nblk + q4].x;
        }
    }
    workgroupBarrier();

    for (var s = 0u; s < params.step_count; s += 1u) {
        let y = obs[params.step_begin + s];

        // Phase X: publish x, then xp = F x (own rows, and rows 0 and 1 for the innovation).
        if (lid < q4) {
            wb[lid] = x4;
        }
        workgroupBarrier();
        var xp4 = vec4<f32>(0.0);
        var xp01 = vec2<f32>(0.0);
        if (lid < q4) {
            let row = 4u * lid;
            var a0 = vec4<f32>(0.0);
            var a1 = vec4<f32>(0.0);
            var a2 = vec4<f32>(0.0);
            var a3 = vec4<f32>(0.0);
            var h0 = vec4<f32>(0.0);
            var h1 = vec4<f32>(0.0);
            for (var k = 0u; k < q4; k += 1u) {
                let xk = wb[k];
                a0 += f_mat[k * dp + row + 0u] * xk;
                a1 += f_mat[k * dp + row + 1u] * xk;
                a2 += f_mat[k * dp + row + 2u] * xk;
                a3 += f_mat[k * dp + row + 3u] * xk;
                h0 += f_mat[k * dp] * xk;
                h1 += f_mat[k * dp + 1u] * xk;
            }
            xp4 = vec4<f32>(hsum(a0), hsum(a1), hsum(a2), hsum(a3));
            xp01 = vec2<f32>(hsum(h0), hsum(h1));
        }
        workgroupBarrier();

        // Phase A: wb = (P F^T)^T, that is wb[j][i] = sum_k P[i][k] F[j][k]; j varies fastest.
        for (var o = lid; o < nblk; o += WG) {
            let j = o % dp;
            let ib = o / dp;
            let i0 = ib * 4u;
            var a0 = vec4<f32>(0.0);
            var a1 = vec4<f32>(0.0);
            var a2 = vec4<f32>(0.0);
            var a3 = vec4<f32>(0.0);
            for (var k = 0u; k < q4; k += 1u) {
                let fj = f_mat[k * dp + j];
                a0 += wa[(i0 + 0u) * q4 + k] * fj;
                a1 += wa[(i0 + 1u) * q4 + k] * fj;
                a2 += wa[(i0 + 2u) * q4 + k] * fj;
                a3 += wa[(i0 + 3u) * q4 + k] * fj;
            }
            wb[j * q4 + ib] = vec4<f32>(hsum(a0), hsum(a1), hsum(a2), hsum(a3));
        }
        workgroupBarrier();

        // Phase B: wa = P' = F (P F^T) + q I, that is wa[i][j] = sum_k F[i][k] wb[j][k] + q [i = j];
        // i varies fastest.
        for (var o = lid; o < nblk; o += WG) {
            let i = o % dp;
            let jb = o / dp;
            let j0 = jb * 4u;
            var a0 = vec4<f32>(0.0);
            var a1 = vec4<f32>(0.0);
            var a2 = vec4<f32>(0.0);
            var a3 = vec4<f32>(0.0);
            for (var k = 0u; k < q4; k += 1u) {
                let fi = f_mat[k * dp + i];
                a0 += fi * wb[(j0 + 0u) * q4 + k];
                a1 += fi * wb[(j0 + 1u) * q4 + k];
                a2 += fi * wb[(j0 + 2u) * q4 + k];
                a3 += fi * wb[(j0 + 3u) * q4 + k];
            }
            wa[i * q4 + jb] = vec4<f32>(hsum(a0), hsum(a1), hsum(a2), hsum(a3)) + q * identity_block(i, j0, d);
        }
        workgroupBarrier();

        // Phase S (every invocation, privately): S = H P' H^T + r I and S^-1, row-major.
        let p0 = wa[0u].xy;
        let p1 = wa[q4].xy;
        let s00 = p0.x + r;
        let s11 = p1.y + r;
        let det = s00 * s11 - p0.y * p1.x;
        let s_inv = vec4<f32>(s11, -p0.y, -p1.x, s00) / det;

        // Phase C: wb = P' - K (H P'), with K's row i from P'[i][0..2].
        for (var b = lid; b < nblk; b += WG) {
            let jb = b % q4;
            let k = gain(wa[(b / q4) * q4].xy, s_inv);
            wb[b] = wa[b] - k.x * wa[jb] - k.y * wa[q4 + jb];
        }
        // The state update x = xp + K e and the likelihood term.
        if (lid < q4) {
            let e = y - xp01;
            let row = 4u * lid;
            let k0 = gain(wa[(row + 0u) * q4].xy, s_inv);
            let k1 = gain(wa[(row + 1u) * q4].xy, s_inv);
            let k2 = gain(wa[(row + 2u) * q4].xy, s_inv);
            let k3 = gain(wa[(row + 3u) * q4].xy, s_inv);
            x4 = xp4 + vec4<f32>(k0.x, k1.x, k2.x, k3.x) * e.x + vec4<f32>(k0.y, k1.y, k2.y, k3.y) * e.y;
            if (lid == 0u) {
                let v = vec2<f32>(s_inv.x * e.x + s_inv.y * e.y, s_inv.z * e.x + s_inv.w * e.y);
                nll += 0.5 * ((e.x * v.x + e.y * v.y) + log(det) + 2.0 * LOG_2PI);
            }
        }
        workgroupBarrier();

        // Phase P: P = wb.
        for (var b = lid; b < nblk; b += WG) {
            wa[b] = wb[b];
        }
        workgroupBarrier();
    }

    if (params.save_state != 0u) {
        for (var b = lid; b < nblk; b += WG) {
            state[base + b] = wa[b];
        }
        if (lid < q4) {
            state[base + nblk + lid] = x4;
        }
        if (lid == 0u) {
            state[base + nblk + q4] = vec4<f32>(nll, 0.0, 0.0, 0.0);
        }
    }
    if (lid == 0u && params.step_begin + params.step_count == params.steps_total) {
        nll_out[cand] = nll;
    }
}
