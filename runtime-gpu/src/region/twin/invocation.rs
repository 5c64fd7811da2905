//! One invocation of the interpreter: the shader's bindings (`P`, `slots`, `ops`, `aux`,
//! `data`, `masks`, `adj`), its private variables (`lane`, `TK`, `TW`, `M`, `X`, `T`,
//! `LOGABS`), and the small helpers of the shader's head: `record`, `len_of`, `rows_of`,
//! `cols_of`, `has_adj`, `view`, `adj_view`, `ld`, `put`, `gadj`, `acc`, `bit`. Each loop of
//! the shader is written with [`Inv::upto`], [`Inv::span`] or [`Inv::stride`], which count
//! its header visits (one per turn and one to leave) as a software driver's loop cap does.

use shared_ir::region::{OpRecord, Opcode, NO_ADJ, OP_WORDS, SLOT_WORDS};
use shared_ir::Real;
use std::iter::StepBy;
use std::ops::Range;

/// The shader's `MAXN * MAXN`: the size of the private arrays `M`, `X` and `T`.
pub(super) const PRIVATE: usize = 64;

/// The bindings of one dispatch, and the `Params` fields the interpreter reads.
#[derive(Debug)]
pub(super) struct Buffers<'a, R> {
    /// `P.lanes`.
    pub lanes: u32,
    /// `P.words_per_mask`.
    pub words_per_mask: u32,
    pub slots: &'a [u32],
    pub ops: &'a [u32],
    pub aux: &'a [u32],
    pub data: &'a mut [R],
    pub masks: &'a [u32],
    pub adj: &'a mut [R],
    /// Reads and writes past an arena: none for a region whose shapes agree. The GPU's
    /// bounds-checked accesses read some number of the buffer (here zero) and drop the write.
    pub stray: std::cell::Cell<u64>,
}

/// One invocation's private variables, zero at its start as WGSL's are, and the loop-header
/// visits it made in this dispatch.
#[derive(Clone, Debug)]
pub(super) struct Private<R> {
    pub m: [R; PRIVATE],
    pub x: [R; PRIVATE],
    pub t: [R; PRIVATE],
    pub logabs: R,
    pub visits: u64,
}

impl<R: Real> Default for Private<R> {
    fn default() -> Self {
        Private {
            m: [R::ZERO; PRIVATE],
            x: [R::ZERO; PRIVATE],
            t: [R::ZERO; PRIVATE],
            logabs: R::ZERO,
            visits: 0,
        }
    }
}

/// The shader's `View`: element `e` of a slot on this lane at `at + e * step` of the data
/// arena (a value view) or of the adjoint arena (an adjoint view); `on` false in the adjoint
/// view of a slot without an adjoint.
#[derive(Clone, Copy, Debug)]
pub(super) struct View {
    pub at: usize,
    pub step: usize,
    pub on: bool,
}

impl View {
    fn index(self, e: usize) -> usize {
        self.at + e * self.step
    }
}

/// One invocation: lane `lane`, place `tk` of its lane's `tw` invocations (the shader's
/// `lane`, `TK`, `TW`), with the bindings and its private variables.
#[derive(Debug)]
pub(super) struct Inv<'s, 'a, R> {
    pub buf: &'s mut Buffers<'a, R>,
    pub me: &'s mut Private<R>,
    pub lane: usize,
    pub tk: usize,
    pub tw: usize,
}

impl<R: Real> Inv<'_, '_, R> {
    /// `for (var e = 0u; e < n; e++)`, counting its header visits.
    pub fn upto(&mut self, n: usize) -> Range<usize> {
        self.span(0, n)
    }

    /// `for (var e = from; e < n; e++)`, counting its header visits.
    pub fn span(&mut self, from: usize, n: usize) -> Range<usize> {
        self.me.visits += n.saturating_sub(from) as u64 + 1;
        from..n.max(from)
    }

    /// `for (var e = from; e < n; e += step)`, counting its header visits.
    pub fn stride(&mut self, from: usize, n: usize, step: usize) -> StepBy<Range<usize>> {
        let r = self.span(from, n);
        // `from_to` counted every number of the range; the loop visits every `step`-th.
        self.me.visits -= r.len() as u64;
        self.me.visits += r.len().div_ceil(step) as u64;
        r.step_by(step)
    }

    /// The shader's `record`: op record `i`, unpacked (an unknown opcode reads as `Linalg`,
    /// the `default` arm of the shader's switch).
    pub fn record(&self, i: usize) -> OpRecord {
        let w = &self.buf.ops[i * OP_WORDS..(i + 1) * OP_WORDS];
        let opcode = match w[0] {
            0 => Opcode::Unary,
            1 => Opcode::Binary,
            2 => Opcode::Select,
            3 => Opcode::Pack,
            4 => Opcode::Extract,
            _ => Opcode::Linalg,
        };
        OpRecord {
            opcode,
            sub: w[1],
            out: w[2],
            a: w[3],
            b: w[4],
            extra: w[5],
            mask: w[6],
            count: w[7],
        }
    }

    fn slot(&self, s: u32, k: usize) -> u32 {
        self.buf.slots[s as usize * SLOT_WORDS + k]
    }
    pub fn len_of(&self, s: u32) -> usize {
        self.slot(s, 1) as usize
    }
    pub fn rows_of(&self, s: u32) -> usize {
        self.slot(s, 4) as usize
    }
    pub fn cols_of(&self, s: u32) -> usize {
        self.slot(s, 5) as usize
    }
    pub fn has_adj(&self, s: u32) -> bool {
        self.slot(s, 3) != NO_ADJ
    }

    /// The shader's `view`.
    pub fn view(&self, s: u32) -> View {
        let base = self.slot(s, 0) as usize;
        if self.slot(s, 2) != 0 {
            return View {
                at: base + self.lane,
                step: self.buf.lanes as usize,
                on: true,
            };
        }
        View {
            at: base,
            step: 1,
            on: true,
        }
    }

    /// The shader's `adj_view`: the adjoint arena is lane-wide.
    pub fn adj_view(&self, s: u32) -> View {
        let base = self.slot(s, 3);
        if base == NO_ADJ {
            return View {
                at: 0,
                step: 0,
                on: false,
            };
        }
        View {
            at: base as usize + self.lane,
            step: self.buf.lanes as usize,
            on: true,
        }
    }

    pub fn ld(&self, v: View, e: usize) -> R {
        self.buf
            .data
            .get(v.index(e))
            .copied()
            .unwrap_or_else(|| self.stray())
    }
    pub fn put(&mut self, v: View, e: usize, x: R) {
        match self.buf.data.get_mut(v.index(e)) {
            Some(d) => *d = x,
            None => _ = self.stray(),
        }
    }
    pub fn gadj(&self, v: View, e: usize) -> R {
        self.buf
            .adj
            .get(v.index(e))
            .copied()
            .unwrap_or_else(|| self.stray())
    }
    pub fn acc(&mut self, v: View, e: usize, x: R) {
        if v.on {
            match self.buf.adj.get_mut(v.index(e)) {
                Some(d) => *d += x,
                None => _ = self.stray(),
            }
        }
    }
    /// Counts an access past an arena; reads as zero.
    fn stray(&self) -> R {
        self.buf.stray.set(self.buf.stray.get() + 1);
        R::ZERO
    }

    /// The shader's `bit`: lane `lane` of mask `m`. A mask past the table reads as clear
    /// (where the GPU's bounds-checked read of the `masks` buffer gives some number).
    pub fn bit(&self, m: u32) -> bool {
        let i = m as usize * self.buf.words_per_mask as usize + self.lane / 32;
        let w = self.buf.masks.get(i).copied().unwrap_or(0);
        ((w >> (self.lane % 32)) & 1) != 0
    }
}
