//! The reverse pass of a replayed walk, its records resolved once. A replay redoes a kept
//! walk's numeric work into the same slots, so the walk's tape and every slot it names stand
//! as they were: when the trace is kept, each record's slot descriptions are read once into
//! offsets and sizes, and the replays' reverse passes read those instead. Each resolved record
//! runs the same kernel on the same numbers as [`super::backward`] would, so the gradients
//! are the same bits.

use super::linalg::{self, LinalgBack};
use super::{binary_one, binary_sides, step, trig, unary_lanes, unary_one, Adjoints, Scratch};
use crate::kernels::elementwise::{self, View};
use crate::kernels::{Gated, Ungated, Width};
use crate::mask::Masks;
use crate::payload::{Col, Payloads, SlotInfo, NO_ADJOINT};
use crate::tape::{Rec, Tape};
use crate::value::MaskId;
use shared_ir::{BinaryOp, Real, UnaryOp};

/// One record of the reverse pass, resolved. Offsets fit in `u32`: the arenas are indexed by
/// `u32` offsets ([`SlotInfo`]).
#[derive(Copy, Clone, Debug)]
enum Back {
    /// A unary op on one number at one lane: the operand's and the result's offsets, then
    /// their adjoints'.
    Unary1 { op: UnaryOp, at: [u32; 4] },
    /// A binary op on one number at one lane: the operands' and the result's offsets, then
    /// their adjoints'.
    Binary1 { op: BinaryOp, at: [u32; 6] },
    /// [`Both`]'s entry `k`.
    Both(u32),
    /// [`Map`]'s entry `k`.
    Map(u32),
    /// [`LinalgBack`]'s entry `k`.
    Linalg(u32),
    /// The tape's entry `k`, as the walk's reverse pass runs it.
    Entry(u32),
}

/// A binary op whose partials are a few instructions, over numbers in a line (one number a
/// lane, or every number at one lane), both operands' adjoints in one pass.
#[derive(Copy, Clone, Debug)]
struct Both {
    op: BinaryOp,
    one_lane: bool,
    /// The operands' and the result's numbers: offset and count, or `None` for one number
    /// shared by every lane.
    cols: [(u32, Option<u32>); 3],
    /// Adjoint offsets of the operands and the result.
    adj: [usize; 3],
    /// Elements per lane of the operands and the result.
    n: [usize; 3],
}

/// A slot's numbers as an elementwise kernel sees them: offset, count, one value per lane,
/// a scalar broadcast to every element.
#[derive(Copy, Clone, Debug)]
struct At {
    at: u32,
    len: u32,
    lanes: bool,
    scalar: bool,
}

impl At {
    fn of<R: Real>(pay: &Payloads<R>, info: &SlotInfo) -> At {
        At {
            at: info.offset() as u32,
            len: info.stored(pay.lanes()) as u32,
            lanes: info.lanes(),
            scalar: info.is_scalar(),
        }
    }

    #[inline(always)]
    fn view<'p, R>(&self, d: &'p [R]) -> View<'p, R> {
        View {
            data: &d[self.at as usize..(self.at + self.len) as usize],
            lanes: self.lanes,
            scalar: self.scalar,
        }
    }
}

/// What an elementwise record read through views does.
#[derive(Copy, Clone, Debug)]
enum MapOp {
    /// A unary op: views of the operand and the result.
    Unary(UnaryOp),
    /// `sin` or `cos`: a view of the kept derivative.
    Trig,
    /// A binary op, one operand at a time: views of the operands and the result.
    Binary(BinaryOp),
}

/// An elementwise record read through views, resolved: its views (as [`MapOp`] says), the
/// adjoint offsets and elements per lane of its operands and result (the result last).
#[derive(Copy, Clone, Debug)]
struct Map {
    op: MapOp,
    views: [At; 3],
    adj: [usize; 3],
    n: [usize; 3],
}

/// The reverse pass of one kept walk, resolved.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    /// In the order the pass runs them (the tape's, reversed).
    steps: Vec<Back>,
    both: Vec<Both>,
    maps: Vec<Map>,
    linalg: Vec<LinalgBack>,
}

/// A resolved offset as `u32` (adjoint offsets keep `NO_ADJOINT` as `u32::MAX`).
fn small(x: usize) -> u32 {
    if x == NO_ADJOINT {
        u32::MAX
    } else {
        x as u32
    }
}

/// The offset `x` resolved by [`small`], back.
#[inline(always)]
fn wide(x: u32) -> usize {
    if x == u32::MAX {
        NO_ADJOINT
    } else {
        x as usize
    }
}

impl Resolved {
    /// Resolves `tape`'s records over `pay`, the arena the walk that made them left.
    pub(crate) fn build<R: Real>(&mut self, tape: &Tape, pay: &Payloads<R>) {
        self.steps.clear();
        self.both.clear();
        self.maps.clear();
        self.linalg.clear();
        let one = pay.lanes() == 1;
        for (k, entry) in tape.entries.iter().enumerate().rev() {
            let back = match entry.rec {
                // A lane mask: the walk's pass, which gates the lanes.
                _ if entry.mask != MaskId::ALL => Back::Entry(k as u32),
                Rec::Unary { op, out, a } => {
                    let (io, ia) = (pay.info(out), pay.info(a));
                    if one && io.is_scalar() {
                        let at = [ia.offset(), io.offset(), ia.adj(), io.adj()];
                        Back::Unary1 {
                            op,
                            at: at.map(small),
                        }
                    } else {
                        let (va, vy) = (At::of(pay, &ia), At::of(pay, &io));
                        self.map(MapOp::Unary(op), [va, vy, vy], [&ia, &io, &io])
                    }
                }
                Rec::Trig { out, a, d, .. } => {
                    let (io, ia, id) = (pay.info(out), pay.info(a), pay.info(d));
                    let vd = At::of(pay, &id);
                    self.map(MapOp::Trig, [vd, vd, vd], [&ia, &io, &io])
                }
                Rec::Binary { op, out, a, b } => {
                    let (io, ia, ib) = (pay.info(out), pay.info(a), pay.info(b));
                    if one && io.is_scalar() {
                        let at = [ia.offset(), ib.offset(), io.offset()];
                        let d = [ia.adj(), ib.adj(), io.adj()];
                        let at = [at[0], at[1], at[2], d[0], d[1], d[2]];
                        Back::Binary1 {
                            op,
                            at: at.map(small),
                        }
                    } else if super::cheap(op, &ia, &ib, &io) && (io.n() == 1 || one) {
                        let col = |i: &SlotInfo| {
                            let len = i.stored(pay.lanes()) as u32;
                            (i.offset() as u32, (one || i.lanes()).then_some(len))
                        };
                        self.both.push(Both {
                            op,
                            one_lane: one,
                            cols: [col(&ia), col(&ib), col(&io)],
                            adj: [ia.adj(), ib.adj(), io.adj()],
                            n: [ia.n(), ib.n(), io.n()],
                        });
                        Back::Both(self.both.len() as u32 - 1)
                    } else if super::cheap(op, &ia, &ib, &io) {
                        Back::Entry(k as u32)
                    } else {
                        let views = [At::of(pay, &ia), At::of(pay, &ib), At::of(pay, &io)];
                        self.map(MapOp::Binary(op), views, [&ia, &ib, &io])
                    }
                }
                Rec::Linalg { op, out, a, b } => {
                    self.linalg.push(LinalgBack::of(op, out, a, b, pay));
                    Back::Linalg(self.linalg.len() as u32 - 1)
                }
                _ => Back::Entry(k as u32),
            };
            self.steps.push(back);
        }
    }

    /// Appends a [`Map`] of `op` over `views` and the adjoints of the slots `infos` (the result
    /// last; a unary op's result twice).
    fn map(&mut self, op: MapOp, views: [At; 3], infos: [&SlotInfo; 3]) -> Back {
        self.maps.push(Map {
            op,
            views,
            adj: infos.map(|i| i.adj()),
            n: infos.map(|i| i.n()),
        });
        Back::Map(self.maps.len() as u32 - 1)
    }

    /// Runs the reverse pass of the walk [`Resolved::build`] resolved, over `pay` as a replay
    /// of that walk left it (`tape` and `masks` the walk's). Seed the result's adjoint first.
    pub(crate) fn backward<R: Real>(
        &self,
        tape: &Tape,
        pay: &Payloads<R>,
        masks: &Masks,
        adj: &mut Adjoints<R>,
        scratch: &mut Scratch<R>,
    ) {
        crate::with_width!(pay.lanes(), w => {
            for back in &self.steps {
                match *back {
                    Back::Unary1 { op, at } => {
                        let at = at.map(wide);
                        unary_one(op, pay.data(), &mut adj.data, at, Ungated);
                    }
                    Back::Binary1 { op, at } => {
                        let [x, y, z, dx, dy, dz] = at.map(wide);
                        binary_one(op, pay.data(), &mut adj.data, [x, y, z], [dx, dy, dz], Ungated);
                    }
                    Back::Both(k) => {
                        let b = &self.both[k as usize];
                        let d = pay.data();
                        let col = |(at, len): (u32, Option<u32>)| match len {
                            Some(len) => Col::Lanes(&d[at as usize..(at + len) as usize]),
                            None => Col::Uniform(d[at as usize]),
                        };
                        let [ca, cb, cy] = b.cols.map(col);
                        if let Some((da, db, g)) = adj.operands_at(b.adj, b.n) {
                            elementwise::binary_grad_both(b.op, da, db, g, ca, cb, cy, b.one_lane, Ungated);
                        }
                    }
                    Back::Map(k) => {
                        let m = &self.maps[k as usize];
                        let d = pay.data();
                        let [da, db, dy] = m.adj;
                        match m.op {
                            MapOp::Unary(op) => {
                                let (va, vy) = (m.views[0].view(d), m.views[1].view(d));
                                unary_lanes(op, adj, [da, dy], m.n[2], va, vy, Ungated, w);
                            }
                            MapOp::Trig => {
                                let dv = m.views[0].view(d).data;
                                trig(adj, [da, dy], m.n[2], dv, Ungated, w.get());
                            }
                            MapOp::Binary(op) => {
                                let views = m.views.map(|v| v.view(d));
                                binary_sides(op, adj, [da, db, dy], m.n, views, Ungated, w);
                            }
                        }
                    }
                    Back::Linalg(k) => {
                        linalg::step(&self.linalg[k as usize], pay, adj, scratch, Ungated, w);
                    }
                    Back::Entry(k) => {
                        let entry = &tape.entries[k as usize];
                        if entry.mask == MaskId::ALL {
                            step(entry, tape, pay, masks, adj, scratch, Ungated, w);
                        } else {
                            let gate = Gated(masks.get(entry.mask));
                            step(entry, tape, pay, masks, adj, scratch, gate, w);
                        }
                    }
                }
            }
        })
    }
}
