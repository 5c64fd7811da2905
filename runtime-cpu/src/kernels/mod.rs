//! Numeric kernels over lanes. Every kernel is a loop over lanes on element-major data, written
//! so that the compiler vectorises it; reverse kernels take a [`Gate`] so that adjoints of lanes
//! outside a record's active mask are selected away, never multiplied by zero.
//!
//! | file | what |
//! | --- | --- |
//! | `elementwise.rs` | unary and binary ops with scalar broadcast, forward and reverse |
//! | `linalg.rs` | vector and matrix ops, forward |
//! | `linalg_grad.rs` | vector and matrix ops, reverse |
//! | `lu.rs` | per-lane LU for determinants, inverses and solves of any size |

// Lane loops index several slices with the same lane; that is the clearest form here.
#![allow(clippy::needless_range_loop)]

/// `$body` (a block) run over `$l` lanes: compiled for AVX2 where the CPU has it when there
/// are eight lanes or more, so that its lane loops take four `f64` (eight `f32`) at a time;
/// else as it is. The same bits either way: nothing is fused into a multiply-add.
macro_rules! lanes {
    ($l:expr, $body:block) => {
        $crate::kernels::run_lanes(
            $l,
            #[inline(always)]
            || $body,
        )
    };
}

pub mod elementwise;
pub mod linalg;
pub mod linalg_grad;
pub mod lu;

use shared_ir::Real;

/// What [`lanes!`] expands to: `f` (a closure marked `#[inline(always)]`) run compiled for AVX2
/// when `l >= 8` and the CPU has it.
#[inline(always)]
pub(crate) fn run_lanes<T>(l: usize, f: impl FnOnce() -> T) -> T {
    if l >= 8 {
        shared_ir::vmath::with_avx2(shared_ir::vmath::Lanes(f))
    } else {
        f()
    }
}

/// Which lanes a reverse kernel may write.
pub trait Gate: Copy {
    /// True when every lane is kept (known at compile time).
    const ALL: bool;

    /// True when lane `l` receives adjoint contributions.
    fn keep(&self, l: usize) -> bool;

    /// `c` on kept lanes, zero elsewhere (a select, so a NaN on a dead lane is dropped).
    #[inline(always)]
    fn pass<R: Real>(&self, l: usize, c: R) -> R {
        if self.keep(l) {
            c
        } else {
            R::ZERO
        }
    }
}

/// Every lane is kept.
#[derive(Copy, Clone, Debug)]
pub struct Ungated;

impl Gate for Ungated {
    const ALL: bool = true;

    #[inline(always)]
    fn keep(&self, _l: usize) -> bool {
        true
    }
}

/// Only lanes set in the mask are kept.
#[derive(Copy, Clone, Debug)]
pub struct Gated<'a>(pub &'a [bool]);

impl Gate for Gated<'_> {
    const ALL: bool = false;

    #[inline(always)]
    fn keep(&self, l: usize) -> bool {
        self.0[l]
    }
}

/// Adds a contribution that `f` accumulates (`+=`) into the slice it is given to `adj`, on the
/// kept lanes only. Ungated, `f` accumulates into `adj` directly; gated, into `tmp` (zeroed
/// first), which is then added lane by lane through the gate.
#[inline(always)]
pub fn accumulate<R: shared_ir::Real, G: Gate>(
    adj: &mut [R],
    tmp: &mut [R],
    gate: G,
    f: impl FnOnce(&mut [R]),
) {
    if G::ALL {
        f(adj);
    } else {
        let tmp = &mut tmp[..adj.len()];
        tmp.fill(R::ZERO);
        f(tmp);
        for (l, (a, &t)) in adj.iter_mut().zip(tmp.iter()).enumerate() {
            *a += gate.pass(l, t);
        }
    }
}

/// The lane count a kernel loops over. [`One`] makes it a constant, so the one-lane
/// instantiation of every kernel compiles to straight scalar code.
pub trait Width: Copy {
    /// True for [`One`] (known at compile time).
    const ONE: bool = false;

    /// The lane count.
    fn get(self) -> usize;
}

/// Exactly one lane.
#[derive(Copy, Clone, Debug)]
pub struct One;

impl Width for One {
    const ONE: bool = true;

    #[inline(always)]
    fn get(self) -> usize {
        1
    }
}

/// Any number of lanes.
#[derive(Copy, Clone, Debug)]
pub struct Lanes(pub usize);

impl Width for Lanes {
    #[inline(always)]
    fn get(self) -> usize {
        self.0
    }
}

/// Calls `$body` with `$w` bound to `One` when `$l == 1` and to `Lanes` otherwise.
#[macro_export]
macro_rules! with_width {
    ($l:expr, $w:ident => $body:expr) => {{
        let l: usize = $l;
        if l == 1 {
            let $w = $crate::kernels::One;
            $body
        } else {
            let $w = $crate::kernels::Lanes(l);
            $body
        }
    }};
}

/// Copies a uniform tensor of `n` elements into `buf` as `lanes` copies, element-major.
pub fn broadcast<'b, R: Real>(buf: &'b mut Vec<R>, src: &[R], lanes: usize) -> &'b [R] {
    buf.clear();
    for &x in src {
        buf.extend(std::iter::repeat_n(x, lanes));
    }
    buf
}
