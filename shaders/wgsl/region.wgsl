// The region interpreter: a slice of a region's op records over the data arena, forward
// (`forward`) or backwards through the adjoints (`reverse`). Each lane has `P.width`
// invocations (a power of two up to 64, dividing the workgroup's WG) that share its ops: the
// element loops of elementwise ops, select, extract, pack and the products (matvec, matmul,
// transpose, outer) are spread over them (element e on invocation e % width), and the rest (reductions,
// factorisations, a pack's adjoint) run on the lane's first invocation. With more than one
// invocation per lane (`forward_shared`, `reverse_shared`) a storage barrier between ops makes
// each op's results visible to the next; lanes never share numbers, so no barrier wider than
// the workgroup is needed and a whole slice is one dispatch.
// The record and slot layouts are those of shared-ir's `region` module; every rule mirrors the
// CPU kernels of runtime-cpu (`kernels/`, `backward.rs`). Matrices that are factored (det,
// logdet, inv, solve) are at most MAXN x MAXN; the host never sends a larger one here.

struct Params {
    lanes: u32,
    op_begin: u32,
    op_end: u32,
    words_per_mask: u32,
    // Bit patterns of NaN and +inf, read at run time so no constant folding sees them.
    nan_bits: u32,
    inf_bits: u32,
    // Invocations per lane.
    width: u32,
    pad1: u32,
}

// Invocations per workgroup: a power of two from 64 (the most invocations per lane) to 1024.
override WG: u32 = 64u;

const SW: u32 = 6u;   // words per slot
const OW: u32 = 8u;   // words per op
const NO_ADJ: u32 = 0xffffffffu;
const MAXN: u32 = 8u;
const FLOOR: f32 = 1e-8;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> slots: array<u32>;
@group(0) @binding(2) var<storage, read> ops: array<u32>;
@group(0) @binding(3) var<storage, read> aux: array<u32>;
@group(0) @binding(4) var<storage, read_write> data: array<f32>;
@group(0) @binding(5) var<storage, read> masks: array<u32>;
@group(0) @binding(6) var<storage, read_write> adj: array<f32>;
// Per lane, the record the next dispatch starts from: a dispatch runs only where the previous
// one finished, and records where its loop ended, so a loop the driver cuts short is seen.
@group(0) @binding(7) var<storage, read_write> progress: array<u32>;

var<private> lane: u32;
// This invocation's place among its lane's `TW` invocations.
var<private> TK: u32;
var<private> TW: u32;
var<private> M: array<f32, 64>;
var<private> X: array<f32, 64>;
var<private> T: array<f32, 64>;
// ln |det| of the last elimination: the sum of ln |pivot| (no product to overflow).
var<private> LOGABS: f32;

// One op record, unpacked (the layout of shared-ir's `OpRecord`).
struct Record {
    code: u32,
    sub: u32,
    out: u32,
    a: u32,
    b: u32,
    extra: u32,
    mask: u32,
    count: u32,
}

fn record(i: u32) -> Record {
    let o = i * OW;
    return Record(ops[o], ops[o + 1u], ops[o + 2u], ops[o + 3u], ops[o + 4u], ops[o + 5u],
        ops[o + 6u], ops[o + 7u]);
}

fn nan() -> f32 { return bitcast<f32>(P.nan_bits); }
fn inf() -> f32 { return bitcast<f32>(P.inf_bits); }

fn len_of(s: u32) -> u32 { return slots[s * SW + 1u]; }
fn rows_of(s: u32) -> u32 { return slots[s * SW + 4u]; }
fn cols_of(s: u32) -> u32 { return slots[s * SW + 5u]; }
fn has_adj(s: u32) -> bool { return slots[s * SW + 3u] != NO_ADJ; }

// Where a slot's numbers lie on this lane: element e at `at + e * step` of the data arena (a
// value view) or of the adjoint arena (an adjoint view). Each op resolves its operands' views
// once, so its element loops read no slot table. `on` is 0 in the adjoint view of a slot that
// has no adjoint.
struct View {
    at: u32,
    step: u32,
    on: u32,
}

fn view(s: u32) -> View {
    let base = slots[s * SW];
    if slots[s * SW + 2u] != 0u {
        return View(base + lane, P.lanes, 1u);
    }
    return View(base, 1u, 1u);
}
// The adjoint arena is lane-wide: every slot with an adjoint has one number per lane there.
fn adj_view(s: u32) -> View {
    let base = slots[s * SW + 3u];
    if base == NO_ADJ {
        return View(0u, 0u, 0u);
    }
    return View(base + lane, P.lanes, 1u);
}
fn ld(v: View, e: u32) -> f32 { return data[v.at + e * v.step]; }
fn put(v: View, e: u32, x: f32) { data[v.at + e * v.step] = x; }
fn gadj(v: View, e: u32) -> f32 { return adj[v.at + e * v.step]; }
fn acc(v: View, e: u32, x: f32) {
    if v.on != 0u {
        let i = v.at + e * v.step;
        adj[i] = adj[i] + x;
    }
}
fn bit(m: u32) -> bool {
    let w = masks[m * P.words_per_mask + lane / 32u];
    return ((w >> (lane % 32u)) & 1u) != 0u;
}

fn ln(x: f32) -> f32 {
    if x < 0.0 || x != x { return nan(); }
    if x == 0.0 { return -inf(); }
    return log(x);
}
fn root(x: f32) -> f32 {
    if x < 0.0 || x != x { return nan(); }
    return sqrt(x);
}
fn protect(x: f32) -> f32 { return select(x, FLOOR, x < FLOOR); }

fn powf(a: f32, b: f32) -> f32 {
    if b == 0.0 || a == 1.0 { return 1.0; }
    // The CPU's `shared_ir::op::pow`: exact for the exponents 1 and 2.
    if b == 1.0 { return a; }
    if b == 2.0 { return a * a; }
    if b != b { return nan(); }
    let half = b * 0.5;
    let odd = floor(b) == b && floor(half) != half;
    if a == 0.0 {
        // IEEE pow: +0 or +inf, with the zero's sign kept by an odd integer power.
        var r = 0.0;
        if b < 0.0 { r = inf(); }
        if odd && (bitcast<u32>(a) >> 31u) == 1u { return -r; }
        return r;
    }
    let r = pow(abs(a), b);
    if a < 0.0 {
        if floor(b) != b { return nan(); }
        if odd { return -r; }
    }
    return r;
}

fn unary_f(op: u32, x: f32) -> f32 {
    switch op {
        case 0u: { return -x; } // Neg
        case 1u: { return 1.0 / x; } // Recip
        case 2u: { return sin(x); } // Sin
        case 3u: { return cos(x); } // Cos
        case 4u: { return exp(x); } // Exp
        case 5u: { return ln(x); } // Log
        case 6u: { return root(x); } // Sqrt
        case 7u: { return abs(x); } // Abs
        case 8u: { return ln(protect(x)); } // LogProtected
        default: { return root(protect(x)); } // SqrtProtected
    }
}

fn unary_d(op: u32, x: f32, y: f32) -> f32 {
    switch op {
        case 0u: { return -1.0; } // Neg
        case 1u: { return -(y * y); } // Recip
        case 2u: { return cos(x); } // Sin
        case 3u: { return -sin(x); } // Cos
        case 4u: { return y; } // Exp
        case 5u: { return 1.0 / x; } // Log
        case 6u: { return 0.5 / y; } // Sqrt
        case 7u: { return sign(x); } // Abs
        case 8u: { return select(0.0, 1.0 / x, x > FLOOR); } // LogProtected
        default: { return select(0.0, 0.5 / y, x > FLOOR); } // SqrtProtected
    }
}

fn binary_f(op: u32, a: f32, b: f32) -> f32 {
    switch op {
        case 0u: { return a + b; } // Add
        case 1u: { return a - b; } // Sub
        case 2u: { return a * b; } // Mul
        case 3u: { return a / b; } // Div
        case 4u: { return powf(a, b); } // Pow
        case 5u: { return select(a, b, b < a); } // Min
        case 6u: { return select(a, b, b > a); } // Max
        case 7u: { // Modulo
            let r = a - b * trunc(a / b);
            if r != 0.0 && ((r < 0.0) != (b < 0.0)) { return r + b; }
            return r;
        }
        default: { return a - b * trunc(a / b); } // Remainder
    }
}

fn binary_d(op: u32, a: f32, b: f32, y: f32) -> vec2<f32> {
    switch op {
        case 0u: { return vec2<f32>(1.0, 1.0); } // Add
        case 1u: { return vec2<f32>(1.0, -1.0); } // Sub
        case 2u: { return vec2<f32>(b, a); } // Mul
        case 3u: { // Div
            let inv = 1.0 / b;
            return vec2<f32>(inv, -(y * inv));
        }
        case 4u: { // Pow
            var da = 0.0;
            if b != 0.0 { da = b * powf(a, b - 1.0); }
            var db = 0.0;
            if !(a == 0.0 && b >= 0.0) { db = y * ln(a); }
            return vec2<f32>(da, db);
        }
        case 5u: { return select(vec2<f32>(1.0, 0.0), vec2<f32>(0.0, 1.0), b < a); } // Min
        case 6u: { return select(vec2<f32>(1.0, 0.0), vec2<f32>(0.0, 1.0), b > a); } // Max
        case 7u: { return vec2<f32>(1.0, -((a - y) / b)); } // Modulo
        default: { return vec2<f32>(1.0, -trunc(a / b)); } // Remainder
    }
}

// Gauss-Jordan elimination with partial pivoting of the n x n matrix in M against the n x k
// right-hand side in X: afterwards X holds M^-1 X. Returns the determinant.
fn eliminate(n: u32, k: u32) -> f32 {
    var det = 1.0;
    LOGABS = 0.0;
    for (var c = 0u; c < n; c++) {
        var p = c;
        var best = abs(M[c * n + c]);
        for (var r = c + 1u; r < n; r++) {
            let v = abs(M[r * n + c]);
            if v > best { best = v; p = r; }
        }
        if p != c {
            det = -det;
            for (var j = 0u; j < n; j++) {
                let t = M[c * n + j]; M[c * n + j] = M[p * n + j]; M[p * n + j] = t;
            }
            for (var j = 0u; j < k; j++) {
                let t = X[c * k + j]; X[c * k + j] = X[p * k + j]; X[p * k + j] = t;
            }
        }
        let piv = M[c * n + c];
        det = det * piv;
        LOGABS = LOGABS + ln(abs(piv));
        if piv == 0.0 && k == 0u {
            // A singular matrix: its determinant is 0 (as the CPU's LU gives), nothing to solve.
            return 0.0;
        }
        let inv = 1.0 / piv;
        for (var j = 0u; j < n; j++) { M[c * n + j] = M[c * n + j] * inv; }
        for (var j = 0u; j < k; j++) { X[c * k + j] = X[c * k + j] * inv; }
        for (var r = 0u; r < n; r++) {
            if r == c { continue; }
            let f = M[r * n + c];
            for (var j = 0u; j < n; j++) { M[r * n + j] = M[r * n + j] - f * M[c * n + j]; }
            for (var j = 0u; j < k; j++) { X[r * k + j] = X[r * k + j] - f * X[c * k + j]; }
        }
    }
    return det;
}

// M = A (or its transpose), X = I: after `eliminate(n, n)`, X = A^-1 (or A^-T).
fn load_inverse(va: View, n: u32, transposed: bool) {
    for (var i = 0u; i < n; i++) {
        for (var j = 0u; j < n; j++) {
            if transposed { M[i * n + j] = ld(va, j * n + i); } else { M[i * n + j] = ld(va, i * n + j); }
            X[i * n + j] = select(0.0, 1.0, i == j);
        }
    }
}

fn det_of(va: View, n: u32) -> f32 {
    if n == 0u { return 1.0; }
    if n == 1u { return ld(va, 0u); }
    if n == 2u { return ld(va, 0u) * ld(va, 3u) - ld(va, 1u) * ld(va, 2u); }
    for (var i = 0u; i < n * n; i++) { M[i] = ld(va, i); }
    return eliminate(n, 0u);
}

// The products whose result elements are spread over a lane's invocations (forward and
// reverse): matvec, matmul, transpose, outer.
fn spreads(op: u32) -> bool {
    return op == 6u || op == 7u || op == 8u || op == 10u;
}

// The linalg op `op` on slots a and b, whose views (and the result's) are va, vb and vo.
fn linalg_f(op: u32, a: u32, b: u32, va: View, vb: View, vo: View) {
    if !spreads(op) && TK != 0u { return; }
    let na = len_of(a);
    let m = rows_of(a);
    let k = cols_of(a);
    switch op {
        case 0u: { // Dot
            var s = 0.0;
            for (var e = 0u; e < na; e++) { s = s + ld(va, e) * ld(vb, e); }
            put(vo, 0u, s);
        }
        case 1u: { // Vsum
            var s = 0.0;
            for (var e = 0u; e < na; e++) { s = s + ld(va, e); }
            put(vo, 0u, s);
        }
        case 2u: { // Norm
            var s = 0.0;
            for (var e = 0u; e < na; e++) { s = s + ld(va, e) * ld(va, e); }
            put(vo, 0u, root(s));
        }
        case 3u, 4u: { // Normalize, NormalizeProtected
            var s = 0.0;
            for (var e = 0u; e < na; e++) { s = s + ld(va, e) * ld(va, e); }
            s = root(s);
            if op == 4u && s < FLOOR { s = FLOOR; }
            for (var e = 0u; e < na; e++) { put(vo, e, ld(va, e) / s); }
        }
        case 5u: { // Cross
            let a0 = ld(va, 0u); let a1 = ld(va, 1u); let a2 = ld(va, 2u);
            let b0 = ld(vb, 0u); let b1 = ld(vb, 1u); let b2 = ld(vb, 2u);
            put(vo, 0u, a1 * b2 - a2 * b1);
            put(vo, 1u, a2 * b0 - a0 * b2);
            put(vo, 2u, a0 * b1 - a1 * b0);
        }
        case 6u: { // Matvec
            for (var i = TK; i < m; i += TW) {
                var s = 0.0;
                for (var j = 0u; j < k; j++) { s = s + ld(va, i * k + j) * ld(vb, j); }
                put(vo, i, s);
            }
        }
        case 7u: { // Matmul
            let n = cols_of(b);
            for (var e = TK; e < m * n; e += TW) {
                let i = e / n;
                let j = e % n;
                var s = 0.0;
                for (var p = 0u; p < k; p++) { s = s + ld(va, i * k + p) * ld(vb, p * n + j); }
                put(vo, e, s);
            }
        }
        case 8u: { // Transpose
            // out is k x m: element (j, i) is A[i][j].
            for (var e = TK; e < m * k; e += TW) { put(vo, (e % k) * m + e / k, ld(va, e)); }
        }
        case 9u: { // Trace
            var s = 0.0;
            for (var i = 0u; i < min(m, k); i++) { s = s + ld(va, i * k + i); }
            put(vo, 0u, s);
        }
        case 10u: { // Outer
            let nb = len_of(b);
            for (var e = TK; e < na * nb; e += TW) { put(vo, e, ld(va, e / nb) * ld(vb, e % nb)); }
        }
        case 11u: { put(vo, 0u, det_of(va, m)); } // Det
        case 12u: { // Logdet
            if m <= 2u {
                put(vo, 0u, ln(abs(det_of(va, m))));
            } else {
                for (var i = 0u; i < m * m; i++) { M[i] = ld(va, i); }
                eliminate(m, 0u);
                put(vo, 0u, LOGABS);
            }
        }
        case 13u: { // Inv
            if m == 1u {
                put(vo, 0u, 1.0 / ld(va, 0u));
            } else if m == 2u {
                let inv = 1.0 / (ld(va, 0u) * ld(va, 3u) - ld(va, 1u) * ld(va, 2u));
                put(vo, 0u, ld(va, 3u) * inv);
                put(vo, 1u, -ld(va, 1u) * inv);
                put(vo, 2u, -ld(va, 2u) * inv);
                put(vo, 3u, ld(va, 0u) * inv);
            } else if m > 0u {
                load_inverse(va, m, false);
                eliminate(m, m);
                for (var e = 0u; e < m * m; e++) { put(vo, e, X[e]); }
            }
        }
        default: { // Solve
            // solve: A (m x m) against b (m x c).
            let c = cols_of(b);
            for (var i = 0u; i < m * m; i++) { M[i] = ld(va, i); }
            for (var i = 0u; i < m * c; i++) { X[i] = ld(vb, i); }
            eliminate(m, c);
            for (var i = 0u; i < m * c; i++) { put(vo, i, X[i]); }
        }
    }
}

fn forward_op(i: u32) {
    let r = record(i);
    let code = r.code;
    let sub = r.sub;
    let out = r.out;
    let a = r.a;
    let b = r.b;
    let extra = r.extra;
    let n = len_of(out);
    let va = view(a);
    let vb = view(b);
    let vo = view(out);
    switch code {
        case 0u: { // Unary
            for (var e = TK; e < n; e += TW) { put(vo, e, unary_f(sub, ld(va, e))); }
        }
        case 1u: { // Binary
            let sa = len_of(a) == 1u;
            let sb = len_of(b) == 1u;
            for (var e = TK; e < n; e += TW) {
                put(vo, e, binary_f(sub, ld(va, select(e, 0u, sa)), ld(vb, select(e, 0u, sb))));
            }
        }
        case 2u: { // Select
            let c = bit(extra);
            for (var e = TK; e < n; e += TW) { put(vo, e, select(ld(vb, e), ld(va, e), c)); }
        }
        case 3u: { // Pack
            // Element `base + e` of the result, e of part q, on invocation (base + e) % TW.
            var base = 0u;
            for (var q = 0u; q < r.count; q++) {
                let p = aux[extra + q];
                let l = len_of(p);
                let vp = view(p);
                for (var e = (TK + TW - base % TW) % TW; e < l; e += TW) {
                    put(vo, base + e, ld(vp, e));
                }
                base += l;
            }
        }
        case 4u: { // Extract
            for (var e = TK; e < n; e += TW) { put(vo, e, ld(va, extra + e)); }
        }
        default: { linalg_f(sub, a, b, va, vb, vo); } // Linalg
    }
}

// dA += s * (A^-T) for the square matrix a of size n (s per lane).
fn acc_inverse_transpose(va: View, ja: View, n: u32, s: f32) {
    if n == 1u {
        acc(ja, 0u, s / ld(va, 0u));
        return;
    }
    load_inverse(va, n, true);
    eliminate(n, n);
    for (var e = 0u; e < n * n; e++) { acc(ja, e, s * X[e]); }
}

// The reverse rules. Where a lane's invocations share an op, each adds only to adjoint
// elements of its own index (of `a` and of `b` alike, so an op whose operands are one slot
// never has two invocations add to one number).
fn linalg_r(op: u32, a: u32, b: u32, va: View, vb: View, vo: View, ja: View, jb: View,
            jo: View) {
    if !spreads(op) && TK != 0u { return; }
    let na = len_of(a);
    let m = rows_of(a);
    let k = cols_of(a);
    let two = op == 0u || op == 5u || op == 6u || op == 7u || op == 10u || op == 14u;
    let ga = has_adj(a);
    let gb = two && has_adj(b);
    switch op {
        case 0u: { // Dot
            let g = gadj(jo, 0u);
            for (var e = 0u; e < na; e++) {
                if ga { acc(ja, e, g * ld(vb, e)); }
                if gb { acc(jb, e, g * ld(va, e)); }
            }
        }
        case 1u: { // Vsum
            let g = gadj(jo, 0u);
            for (var e = 0u; e < na; e++) { acc(ja, e, g); }
        }
        case 2u: { // Norm
            let g = gadj(jo, 0u);
            let y = ld(vo, 0u);
            for (var e = 0u; e < na; e++) { acc(ja, e, g * ld(va, e) / y); }
        }
        case 3u, 4u: { // Normalize, NormalizeProtected
            var yg = 0.0;
            var s = 0.0;
            for (var e = 0u; e < na; e++) {
                yg = yg + ld(vo, e) * gadj(jo, e);
                s = s + ld(va, e) * ld(va, e);
            }
            s = root(s);
            let clamped = op == 4u && s < FLOOR;
            for (var e = 0u; e < na; e++) {
                let g = gadj(jo, e);
                if clamped { acc(ja, e, g / FLOOR); } else { acc(ja, e, (g - ld(vo, e) * yg) / s); }
            }
        }
        case 5u: { // Cross
            let g0 = gadj(jo, 0u); let g1 = gadj(jo, 1u); let g2 = gadj(jo, 2u);
            if ga {
                let b0 = ld(vb, 0u); let b1 = ld(vb, 1u); let b2 = ld(vb, 2u);
                acc(ja, 0u, b1 * g2 - b2 * g1);
                acc(ja, 1u, b2 * g0 - b0 * g2);
                acc(ja, 2u, b0 * g1 - b1 * g0);
            }
            if gb {
                let a0 = ld(va, 0u); let a1 = ld(va, 1u); let a2 = ld(va, 2u);
                acc(jb, 0u, g1 * a2 - g2 * a1);
                acc(jb, 1u, g2 * a0 - g0 * a2);
                acc(jb, 2u, g0 * a1 - g1 * a0);
            }
        }
        case 6u: { // Matvec
            // y = A v: dA[r][c] += g[r] v[c]; dv[c] += sum_r A[r][c] g[r].
            if ga {
                for (var e = TK; e < m * k; e += TW) { acc(ja, e, gadj(jo, e / k) * ld(vb, e % k)); }
            }
            if gb {
                for (var c = TK; c < k; c += TW) {
                    var s = 0.0;
                    for (var r = 0u; r < m; r++) { s = s + ld(va, r * k + c) * gadj(jo, r); }
                    acc(jb, c, s);
                }
            }
        }
        case 7u: { // Matmul
            // C = A B: dA = G B^T, dB = A^T G.
            let n = cols_of(b);
            if ga {
                for (var e = TK; e < m * k; e += TW) {
                    let i = e / k;
                    let p = e % k;
                    var s = 0.0;
                    for (var j = 0u; j < n; j++) { s = s + gadj(jo, i * n + j) * ld(vb, p * n + j); }
                    acc(ja, e, s);
                }
            }
            if gb {
                for (var e = TK; e < k * n; e += TW) {
                    let p = e / n;
                    let j = e % n;
                    var s = 0.0;
                    for (var i = 0u; i < m; i++) { s = s + ld(va, i * k + p) * gadj(jo, i * n + j); }
                    acc(jb, e, s);
                }
            }
        }
        case 8u: { // Transpose
            for (var e = TK; e < m * k; e += TW) { acc(ja, e, gadj(jo, (e % k) * m + e / k)); }
        }
        case 9u: { // Trace
            let g = gadj(jo, 0u);
            for (var i = 0u; i < min(m, k); i++) { acc(ja, i * k + i, g); }
        }
        case 10u: { // Outer
            let nb = len_of(b);
            if ga {
                for (var e = TK; e < na; e += TW) {
                    var s = 0.0;
                    for (var c = 0u; c < nb; c++) { s = s + gadj(jo, e * nb + c) * ld(vb, c); }
                    acc(ja, e, s);
                }
            }
            if gb {
                for (var e = TK; e < nb; e += TW) {
                    var s = 0.0;
                    for (var r = 0u; r < na; r++) { s = s + gadj(jo, r * nb + e) * ld(va, r); }
                    acc(jb, e, s);
                }
            }
        }
        case 11u: { // Det
            let g = gadj(jo, 0u);
            if m == 1u {
                acc(ja, 0u, g);
            } else if m == 2u {
                acc(ja, 0u, g * ld(va, 3u));
                acc(ja, 1u, -g * ld(va, 2u));
                acc(ja, 2u, -g * ld(va, 1u));
                acc(ja, 3u, g * ld(va, 0u));
            } else if m > 0u {
                acc_inverse_transpose(va, ja, m, g * ld(vo, 0u));
            }
        }
        case 12u: { // Logdet
            let g = gadj(jo, 0u);
            if m == 2u {
                let d = ld(va, 0u) * ld(va, 3u) - ld(va, 1u) * ld(va, 2u);
                acc(ja, 0u, g * ld(va, 3u) / d);
                acc(ja, 1u, -g * ld(va, 2u) / d);
                acc(ja, 2u, -g * ld(va, 1u) / d);
                acc(ja, 3u, g * ld(va, 0u) / d);
            } else if m > 0u {
                acc_inverse_transpose(va, ja, m, g);
            }
        }
        case 13u: { // Inv
            // Y = A^-1: dA = -Y^T G Y^T. T = Y^T G first.
            for (var i = 0u; i < m; i++) {
                for (var q = 0u; q < m; q++) {
                    var s = 0.0;
                    for (var p = 0u; p < m; p++) { s = s + ld(vo, p * m + i) * gadj(jo, p * m + q); }
                    T[i * m + q] = s;
                }
            }
            for (var i = 0u; i < m; i++) {
                for (var j = 0u; j < m; j++) {
                    var s = 0.0;
                    for (var q = 0u; q < m; q++) { s = s + T[i * m + q] * ld(vo, j * m + q); }
                    acc(ja, i * m + j, -s);
                }
            }
        }
        default: { // Solve
            // X = A^-1 B: Z = A^-T G; dB += Z; dA -= Z X^T.
            let c = cols_of(b);
            for (var i = 0u; i < m; i++) {
                for (var j = 0u; j < m; j++) { M[i * m + j] = ld(va, j * m + i); }
            }
            for (var i = 0u; i < m * c; i++) { X[i] = gadj(jo, i); }
            eliminate(m, c);
            if gb {
                for (var i = 0u; i < m * c; i++) { acc(jb, i, X[i]); }
            }
            if ga {
                for (var i = 0u; i < m; i++) {
                    for (var j = 0u; j < m; j++) {
                        var s = 0.0;
                        for (var q = 0u; q < c; q++) { s = s + X[i * c + q] * ld(vo, j * c + q); }
                        acc(ja, i * m + j, -s);
                    }
                }
            }
        }
    }
}

fn reverse_op(i: u32) {
    let r = record(i);
    let code = r.code;
    let sub = r.sub;
    let out = r.out;
    let a = r.a;
    let b = r.b;
    let extra = r.extra;
    let n = len_of(out);
    if !has_adj(out) || !bit(r.mask) { return; }
    let va = view(a);
    let vb = view(b);
    let vo = view(out);
    let ja = adj_view(a);
    let jb = adj_view(b);
    let jo = adj_view(out);
    switch code {
        case 0u: { // Unary
            if has_adj(a) {
                for (var e = TK; e < n; e += TW) {
                    acc(ja, e, gadj(jo, e) * unary_d(sub, ld(va, e), ld(vo, e)));
                }
            }
        }
        case 1u: { // Binary
            let sa = len_of(a) == 1u;
            let sb = len_of(b) == 1u;
            for (var e = TK; e < n; e += TW) {
                let d = binary_d(sub, ld(va, select(e, 0u, sa)), ld(vb, select(e, 0u, sb)), ld(vo, e));
                let g = gadj(jo, e);
                if !sa { acc(ja, e, g * d.x); }
                if !sb { acc(jb, e, g * d.y); }
            }
            // A broadcast scalar's adjoint is a sum over the elements: one invocation adds it.
            if TK == 0u && (sa || sb) {
                var s = vec2<f32>(0.0, 0.0);
                for (var q = 0u; q < n; q++) {
                    let d = binary_d(sub, ld(va, select(q, 0u, sa)), ld(vb, select(q, 0u, sb)), ld(vo, q));
                    s = s + gadj(jo, q) * d;
                }
                if sa { acc(ja, 0u, s.x); }
                if sb { acc(jb, 0u, s.y); }
            }
        }
        case 2u: { // Select
            let c = bit(extra);
            for (var e = TK; e < n; e += TW) {
                if c { acc(ja, e, gadj(jo, e)); } else { acc(jb, e, gadj(jo, e)); }
            }
        }
        case 3u: { // Pack
            // A pack's parts may repeat: one invocation adds every part's adjoint.
            if TK == 0u {
                var eo = 0u;
                for (var q = 0u; q < r.count; q++) {
                    let p = aux[extra + q];
                    let jp = adj_view(p);
                    for (var e = 0u; e < len_of(p); e++) { acc(jp, e, gadj(jo, eo)); eo++; }
                }
            }
        }
        case 4u: { // Extract
            for (var e = TK; e < n; e += TW) { acc(ja, extra + e, gadj(jo, e)); }
        }
        default: { linalg_r(sub, a, b, va, vb, vo, ja, jb, jo); } // Linalg
    }
    // The result's adjoint is not cleared: no other record reads it, and the host clears the
    // whole adjoint arena before a reverse pass.
}

// The lane and place of this invocation: `P.width` invocations per lane, so WG / width lanes
// per workgroup (workgroups over a 2-D grid). Neighbouring invocations take neighbouring lanes,
// whose numbers are neighbours in memory (element e of lane l at offset + e * lanes + l).
fn place(li: u32, wg: vec3<u32>, nwg: vec3<u32>) {
    TW = P.width;
    let per_group = WG / TW;
    TK = li / per_group;
    lane = (wg.x + wg.y * nwg.x) * per_group + li % per_group;
}

// One invocation per lane (`P.width` = 1): no barrier, which a software driver runs faster.
@compute @workgroup_size(WG)
fn forward(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>,
           @builtin(num_workgroups) nwg: vec3<u32>) {
    place(li, wg, nwg);
    if lane >= P.lanes || progress[lane] != P.op_begin { return; }
    // The counter, not op_end, is recorded: a driver that cuts the loop short is caught.
    var i = P.op_begin;
    loop {
        if i >= P.op_end { break; }
        forward_op(i);
        i++;
    }
    progress[lane] = i;
}

@compute @workgroup_size(WG)
fn reverse(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>,
           @builtin(num_workgroups) nwg: vec3<u32>) {
    place(li, wg, nwg);
    if lane >= P.lanes || progress[lane] != P.op_end { return; }
    var i = P.op_end;
    loop {
        if i <= P.op_begin { break; }
        reverse_op(i - 1u);
        i--;
    }
    progress[lane] = i;
}

// `P.width` > 1 invocations per lane share its ops, with a barrier after each.
@compute @workgroup_size(WG)
fn forward_shared(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    place(li, wg, nwg);
    let live = lane < P.lanes && progress[lane] == P.op_begin;
    // Every invocation has read its lane's progress before the first one moves it on.
    storageBarrier();
    var i = P.op_begin;
    loop {
        if i >= P.op_end { break; }
        if live { forward_op(i); }
        storageBarrier();
        i++;
    }
    if live && TK == 0u { progress[lane] = i; }
}

@compute @workgroup_size(WG)
fn reverse_shared(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    place(li, wg, nwg);
    let live = lane < P.lanes && progress[lane] == P.op_end;
    storageBarrier();
    var i = P.op_end;
    loop {
        if i <= P.op_begin { break; }
        if live { reverse_op(i - 1u); }
        storageBarrier();
        i--;
    }
    if live && TK == 0u { progress[lane] = i; }
}
