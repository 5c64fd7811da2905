//! The twin's linalg ops in regions built by hand: each forward against a straightforward
//! `f64` reference, and reverse against central differences of the twin's own forward, at one
//! and at four invocations per lane (which must give the same numbers).

use super::TwinRegions;
use shared_ir::region::{encode_op, MaskBits, OpRecord, Opcode, Region, RegionDevice, NO_ADJ};
use shared_ir::LinalgOp;

const LANES: usize = 3;

/// A region built by hand over per-lane slots, and its data arena.
struct Build {
    region: Region,
    data: Vec<f64>,
    adj_len: usize,
}

impl Build {
    fn new() -> Self {
        Build {
            region: Region {
                lanes: LANES as u32,
                ..Region::default()
            },
            data: Vec::new(),
            adj_len: 0,
        }
    }

    /// A per-lane `rows x cols` slot holding `values[lane][element]`, with an adjoint when
    /// `adj`.
    fn slot(&mut self, (rows, cols): (usize, usize), values: &[Vec<f64>], adj: bool) -> u32 {
        let n = rows * cols;
        let at = self.data.len();
        for e in 0..n {
            for lane in values {
                self.data.push(lane[e]);
            }
        }
        let adj_at = if adj {
            self.adj_len += n * LANES;
            (self.adj_len - n * LANES) as u32
        } else {
            NO_ADJ
        };
        let id = (self.region.slots.len() / 6) as u32;
        let words = [at as u32, n as u32, 1, adj_at, rows as u32, cols as u32];
        self.region.slots.extend_from_slice(&words);
        id
    }

    fn record(&mut self, opcode: Opcode, sub: u32, out: u32, a: u32, b: u32) {
        let rec = OpRecord {
            opcode,
            sub,
            out,
            a,
            b,
            ..OpRecord::default()
        };
        encode_op(&rec, &mut self.region.ops);
    }
}

/// One linalg op on operands of these shapes.
#[derive(Clone, Copy, Debug)]
struct Case {
    op: LinalgOp,
    a: (usize, usize),
    b: (usize, usize),
    out: (usize, usize),
    /// Scales operand `a` (a tiny vector takes the protected clamp).
    scale: f64,
}

/// Numbers in [-1, 1) from a seed (a small LCG: the tests need no quality, only spread).
fn numbers(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// Operand values per lane; a factored matrix gets `n` on its diagonal (well conditioned).
fn operand(case: &Case, which: u64, (r, c): (usize, usize)) -> Vec<Vec<f64>> {
    (0..LANES as u64)
        .map(|l| {
            let mut v = numbers(17 * which + l, r * c);
            if which == 0 && case.op.factors() {
                for i in 0..r {
                    v[i * c + i] += r as f64 * if l == 1 { -1.0 } else { 1.0 };
                }
            }
            if which == 0 {
                v.iter_mut().for_each(|x| *x *= case.scale);
            }
            v
        })
        .collect()
}

/// `out = op(a, b)`, `loss = dot(out, w)`, run forward and reverse by the twin at `width`
/// invocations per lane: the results per lane and the adjoints of `a` and `b` per lane.
#[allow(clippy::type_complexity)]
fn run(
    case: &Case,
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    width: u32,
) -> (Vec<Vec<f64>>, Vec<f64>, [Vec<Vec<f64>>; 2]) {
    let mut g = Build::new();
    let sa = g.slot(case.a, a, true);
    let sb = if case.op.binary() {
        g.slot(case.b, b, true)
    } else {
        sa
    };
    let zero = |(r, c): (usize, usize)| vec![vec![0.0; r * c]; LANES];
    let so = g.slot(case.out, &zero(case.out), true);
    let n_out = case.out.0 * case.out.1;
    let w: Vec<Vec<f64>> = (0..LANES).map(|l| numbers(99 + l as u64, n_out)).collect();
    let sw = g.slot((n_out, 1), &w, false);
    let sl = g.slot((1, 1), &zero((1, 1)), true);
    g.record(Opcode::Linalg, case.op.code(), so, sa, sb);
    g.record(Opcode::Linalg, LinalgOp::Dot.code(), sl, so, sw);
    let masks = MaskBits {
        words_per_mask: 1,
        words: vec![(1 << LANES) - 1],
    };
    let mut twin = TwinRegions::<f64>::new().with_lane_width(width);
    let everything = 0..g.data.len();
    twin.forward(
        &g.region,
        &masks,
        &g.data,
        std::slice::from_ref(&everything),
    )
    .expect("runs");
    let arena = twin.data().to_vec();
    // Slot `slot`'s numbers per lane in `arena`, from its word `k` (0 values, 3 adjoint).
    let per_lane = |arena: &[f64], slot: u32, k: usize, n: usize| -> Vec<Vec<f64>> {
        let at = g.region.slots[slot as usize * 6 + k] as usize;
        (0..LANES)
            .map(|l| (0..n).map(|e| arena[at + e * LANES + l]).collect())
            .collect()
    };
    let out = per_lane(&arena, so, 0, n_out);
    let loss: Vec<f64> = per_lane(&arena, sl, 0, 1)
        .into_iter()
        .map(|v| v[0])
        .collect();
    let seed = g.region.slots[sl as usize * 6 + 3] as usize;
    let adj = twin
        .reverse(
            &g.region,
            &masks,
            &g.data,
            &[],
            g.adj_len,
            (seed, &[1.0; LANES]),
            g.adj_len,
        )
        .expect("runs");
    let counts = twin.counts();
    assert_eq!(counts.stray(), 0, "{case:?}: accesses past an arena");
    assert_eq!(
        counts.over_plan(),
        0,
        "{case:?}: more loop visits than planned"
    );
    let da = per_lane(&adj, sa, 3, case.a.0 * case.a.1);
    let db = if case.op.binary() {
        per_lane(&adj, sb, 3, case.b.0 * case.b.1)
    } else {
        Vec::new()
    };
    (out, loss, [da, db])
}

/// Laplace expansion along the first row.
fn det(a: &[f64], n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    (0..n)
        .map(|j| {
            let minor: Vec<f64> = (1..n)
                .flat_map(|r| (0..n).filter(move |&c| c != j).map(move |c| a[r * n + c]))
                .collect();
            let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
            sign * a[j] * det(&minor, n - 1)
        })
        .sum()
}

/// The inverse by cofactors: `inv[i][j] = cof[j][i] / det`.
fn inverse(a: &[f64], n: usize) -> Vec<f64> {
    let d = det(a, n);
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let minor: Vec<f64> = (0..n)
                .filter(|&r| r != j)
                .flat_map(|r| (0..n).filter(move |&c| c != i).map(move |c| a[r * n + c]))
                .collect();
            let sign = if (i + j) % 2 == 0 { 1.0 } else { -1.0 };
            out[i * n + j] = sign * det(&minor, n - 1) / d;
        }
    }
    out
}

/// `(m x k) (k x n)`.
fn product(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    out
}

/// The op in plain `f64`, by the textbook formula.
fn reference(case: &Case, a: &[f64], b: &[f64]) -> Vec<f64> {
    let ((m, k), (_, n)) = (case.a, case.b);
    let norm = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    match case.op {
        LinalgOp::Dot => vec![a.iter().zip(b).map(|(x, y)| x * y).sum()],
        LinalgOp::Vsum => vec![a.iter().sum()],
        LinalgOp::Norm => vec![norm],
        LinalgOp::Normalize => a.iter().map(|x| x / norm).collect(),
        LinalgOp::NormalizeProtected => a.iter().map(|x| x / norm.max(1e-8)).collect(),
        LinalgOp::Cross => vec![
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ],
        LinalgOp::Matvec => product(a, b, m, k, 1),
        LinalgOp::Matmul => product(a, b, m, k, n),
        LinalgOp::Transpose => (0..k * m).map(|e| a[(e % m) * k + e / m]).collect(),
        LinalgOp::Trace => vec![(0..m.min(k)).map(|i| a[i * k + i]).sum()],
        LinalgOp::Outer => (0..m * case.b.0)
            .map(|e| a[e / case.b.0] * b[e % case.b.0])
            .collect(),
        LinalgOp::Det => vec![det(a, m)],
        LinalgOp::Logdet => vec![det(a, m).abs().ln()],
        LinalgOp::Inv => inverse(a, m),
        LinalgOp::Solve => product(&inverse(a, m), b, m, m, n),
    }
}

fn cases() -> Vec<Case> {
    let case = |op, a, b, out| Case {
        op,
        a,
        b,
        out,
        scale: 1.0,
    };
    let mut all = vec![
        case(LinalgOp::Dot, (5, 1), (5, 1), (1, 1)),
        case(LinalgOp::Vsum, (5, 1), (1, 1), (1, 1)),
        case(LinalgOp::Norm, (4, 1), (1, 1), (1, 1)),
        case(LinalgOp::Normalize, (4, 1), (1, 1), (4, 1)),
        case(LinalgOp::NormalizeProtected, (4, 1), (1, 1), (4, 1)),
        Case {
            scale: 1e-10,
            ..case(LinalgOp::NormalizeProtected, (4, 1), (1, 1), (4, 1))
        },
        case(LinalgOp::Cross, (3, 1), (3, 1), (3, 1)),
        case(LinalgOp::Matvec, (3, 4), (4, 1), (3, 1)),
        case(LinalgOp::Matmul, (3, 4), (4, 2), (3, 2)),
        case(LinalgOp::Transpose, (3, 4), (1, 1), (4, 3)),
        case(LinalgOp::Trace, (3, 4), (1, 1), (1, 1)),
        case(LinalgOp::Outer, (3, 1), (4, 1), (3, 4)),
    ];
    for n in [1, 2, 3, 4, 8] {
        all.push(case(LinalgOp::Det, (n, n), (1, 1), (1, 1)));
        all.push(case(LinalgOp::Logdet, (n, n), (1, 1), (1, 1)));
        all.push(case(LinalgOp::Inv, (n, n), (1, 1), (n, n)));
        all.push(case(LinalgOp::Solve, (n, n), (n, 1), (n, 1)));
        all.push(case(LinalgOp::Solve, (n, n), (n, 2), (n, 2)));
    }
    all
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

#[test]
fn every_linalg_op_matches_a_reference_forward_and_finite_differences_reverse() {
    let ops: std::collections::HashSet<u32> = cases().iter().map(|c| c.op.code()).collect();
    assert_eq!(ops.len(), LinalgOp::ALL.len(), "every op has a case");
    for case in cases() {
        let (a, b) = (operand(&case, 0, case.a), operand(&case, 1, case.b));
        let (out, loss, grads) = run(&case, &a, &b, 1);
        for l in 0..LANES {
            let want = reference(&case, &a[l], &b[l]);
            for (e, (&x, &y)) in out[l].iter().zip(&want).enumerate() {
                assert!(close(x, y, 1e-10), "{case:?} lane {l} [{e}]: {x} vs {y}");
            }
        }
        // The same numbers with four invocations per lane sharing the op.
        let wide = run(&case, &a, &b, 4);
        let bits =
            |v: &[Vec<f64>]| -> Vec<u64> { v.concat().iter().map(|x| x.to_bits()).collect() };
        assert_eq!(bits(&wide.0), bits(&out), "{case:?}: results at width 4");
        for (shared, one) in wide.2.iter().zip(&grads) {
            assert_eq!(bits(shared), bits(one), "{case:?}: adjoints at width 4");
        }
        // Each operand element moved on every lane at once (the lanes are independent).
        let operands = if case.op.binary() { 2 } else { 1 };
        for s in 0..operands {
            for e in 0..grads[s][0].len() {
                let x = [&a, &b][s][0][e];
                let h = 1e-6 * x.abs().max(1e-3);
                let moved = |d: f64| {
                    let (mut a, mut b) = (a.clone(), b.clone());
                    for lane in [&mut a, &mut b][s].iter_mut() {
                        lane[e] += d;
                    }
                    run(&case, &a, &b, 1).1
                };
                let (up, down) = (moved(h), moved(-h));
                for l in 0..LANES {
                    let fd = (up[l] - down[l]) / (2.0 * h);
                    let g = grads[s][l][e];
                    assert!(
                        close(g, fd, 1e-5 * (1.0 + loss[l].abs())),
                        "{case:?} lane {l} d/d{}[{e}]: {g} vs fd {fd}",
                        ["a", "b"][s]
                    );
                }
            }
        }
    }
}
