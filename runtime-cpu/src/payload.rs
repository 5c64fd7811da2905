//! The payload table: every number, vector and matrix of a run, stored densely.
//!
//! A slot is either *uniform* (one copy, the same on every lane) or *per lane* (B copies).
//! Data are element-major: element `e` of a per-lane slot occupies `B` contiguous numbers, so
//! every kernel is a loop over lanes that the compiler vectorises.

use crate::value::Slot;
use shared_ir::{Real, Shape};

/// What the table knows about one slot, in 16 bytes: the offsets of its numbers and of its
/// adjoint, and its shape and flags packed in two words.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct SlotInfo {
    /// Offset of the slot's first number in the data arena.
    offset: u32,
    /// Offset of the slot's lane-wide adjoint in the reverse pass's arena ([`NO_ADJ`] when it
    /// has none). Adjoints are laid out in allocation order as slots are made, so the reverse
    /// pass needs no layout step of its own.
    adj: u32,
    /// Rows of the shape (a vector's length; 1 for a scalar).
    rows: u32,
    /// Columns (the low [`COL_BITS`] bits; 1 for a scalar or a vector), then the shape's kind
    /// (two bits: scalar, vector, matrix), per lane, and active.
    cols: u32,
}

/// [`SlotInfo::adj`] of a slot that has no adjoint.
pub const NO_ADJOINT: usize = NO_ADJ as usize;
/// The stored adjoint offset of a slot that has none.
const NO_ADJ: u32 = u32::MAX;
/// Bits of [`SlotInfo`]'s column count: a matrix may have at most `2^28 - 1` columns.
const COL_BITS: u32 = 28;
const COL_MASK: u32 = (1 << COL_BITS) - 1;
const VECTOR: u32 = 1 << COL_BITS;
const MATRIX: u32 = 2 << COL_BITS;
const KIND: u32 = 3 << COL_BITS;
const LANES: u32 = 1 << 30;
const ACTIVE: u32 = 1 << 31;

impl SlotInfo {
    /// A slot's description (`adj` is [`NO_ADJ`] for none); `None` for a matrix of more
    /// columns than its word holds.
    #[inline(always)]
    fn new(offset: u32, adj: u32, shape: Shape, lanes: bool, active: bool) -> Option<Self> {
        let (rows, cols, kind) = match shape {
            Shape::Scalar => (1, 1, 0),
            Shape::Vector(n) => (n, 1, VECTOR),
            Shape::Matrix(r, c) if c <= COL_MASK => (r, c, MATRIX),
            Shape::Matrix(..) => return None,
        };
        let flags = kind | if lanes { LANES } else { 0 } | if active { ACTIVE } else { 0 };
        Some(SlotInfo {
            offset,
            adj,
            rows,
            cols: cols | flags,
        })
    }

    /// A uniform scalar's description.
    #[inline(always)]
    fn scalar(offset: u32, adj: u32, active: bool) -> Self {
        SlotInfo {
            offset,
            adj,
            rows: 1,
            cols: 1 | if active { ACTIVE } else { 0 },
        }
    }

    /// Offset of the slot's first number in the data arena.
    #[inline(always)]
    pub fn offset(&self) -> usize {
        self.offset as usize
    }

    /// Offset of the slot's lane-wide adjoint in the reverse pass's arena (active slots only;
    /// `usize::MAX` otherwise).
    #[inline(always)]
    pub fn adj(&self) -> usize {
        self.adj as usize
    }

    /// Shape of one lane.
    #[inline(always)]
    pub fn shape(&self) -> Shape {
        match self.cols & KIND {
            0 => Shape::Scalar,
            VECTOR => Shape::Vector(self.rows),
            _ => Shape::Matrix(self.rows, self.cols & COL_MASK),
        }
    }

    /// Elements of one lane.
    #[inline(always)]
    pub fn elements(&self) -> u32 {
        self.rows * (self.cols & COL_MASK)
    }

    /// True when the slot holds one value per lane.
    #[inline(always)]
    pub fn lanes(&self) -> bool {
        self.cols & LANES != 0
    }

    /// True when the value depends on a differentiated input.
    #[inline(always)]
    pub fn active(&self) -> bool {
        self.cols & ACTIVE != 0
    }

    /// Numbers stored for this slot.
    #[inline(always)]
    pub fn stored(&self, lanes: usize) -> usize {
        if self.lanes() {
            self.n() * lanes
        } else {
            self.n()
        }
    }

    /// Elements of one lane.
    #[inline(always)]
    pub fn n(&self) -> usize {
        self.elements() as usize
    }

    /// True for a scalar (stored once or per lane).
    #[inline(always)]
    pub fn is_scalar(&self) -> bool {
        self.cols & KIND == 0
    }

    /// True for a scalar stored once (the same on every lane).
    #[inline(always)]
    pub fn is_uniform_scalar(&self) -> bool {
        self.cols & (KIND | LANES) == 0
    }

    /// The same slot with its numbers at `offset` and no adjoint.
    fn moved(self, offset: usize) -> Self {
        SlotInfo {
            offset: offset as u32,
            adj: NO_ADJ,
            ..self
        }
    }
}

impl std::fmt::Debug for SlotInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlotInfo")
            .field("offset", &self.offset())
            .field("shape", &self.shape())
            .field("lanes", &self.lanes())
            .field("active", &self.active())
            .field("adj", &self.adj())
            .finish()
    }
}

/// One element of a slot, seen across lanes.
#[derive(Copy, Clone, Debug)]
pub enum Col<'a, R> {
    /// One value per lane.
    Lanes(&'a [R]),
    /// The same value on every lane.
    Uniform(R),
}

impl<R: Real> Col<'_, R> {
    /// The value on lane `l`.
    #[inline(always)]
    pub fn at(&self, l: usize) -> R {
        match self {
            Col::Lanes(s) => s[l],
            Col::Uniform(x) => *x,
        }
    }
}

/// The payload arena of one run.
///
/// The arena is a bump allocator over `data`, which keeps its length (the high-water mark)
/// between runs: a new slot reuses numbers a previous run left there, so nothing is zeroed and
/// every kernel writes its whole output.
#[derive(Debug, Default)]
pub struct Payloads<R> {
    lanes: usize,
    data: Vec<R>,
    top: usize,
    slots: Vec<SlotInfo>,
    limit: usize,
    adj_top: usize,
    keep_lanes: bool,
}

impl<R: Real> Payloads<R> {
    /// Clears the table for a run of `lanes` lanes, keeping its memory. `limit` bounds the
    /// numbers stored.
    pub fn reset(&mut self, lanes: usize, limit: usize) {
        self.reset_keeping(lanes, limit, false);
    }

    /// [`Payloads::reset`]; with `keep_lanes`, a per-lane slot stays per lane even on one lane
    /// (so that a region device sees the same work at every width).
    pub fn reset_keeping(&mut self, lanes: usize, limit: usize, keep_lanes: bool) {
        self.keep_lanes = keep_lanes;
        self.lanes = lanes.max(1);
        self.top = 0;
        self.slots.clear();
        // Offsets are kept in 32 bits.
        self.limit = limit.min(u32::MAX as usize);
        self.adj_top = 0;
    }

    /// Numbers the adjoints of the active slots made so far take (lane-wide each).
    #[inline(always)]
    pub fn adjoint_len(&self) -> usize {
        self.adj_top
    }

    /// The adjoint offset for a new slot of `len` elements.
    #[inline(always)]
    fn next_adjoint(&mut self, len: usize, active: bool) -> Option<u32> {
        if !active {
            return Some(NO_ADJ);
        }
        let a = self.adj_top;
        let end = a + len * self.lanes;
        // Adjoint offsets are kept in 32 bits, short of the mark of none.
        if end >= NO_ADJ as usize {
            return None;
        }
        self.adj_top = end;
        Some(a as u32)
    }

    /// Lanes of the run.
    #[inline(always)]
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Reserves `n` numbers at the top of the arena; `None` past the limit.
    #[inline(always)]
    fn bump(&mut self, n: usize) -> Option<usize> {
        let offset = self.top;
        let end = offset + n;
        if end > self.limit {
            return None;
        }
        if end > self.data.len() {
            self.data.resize(end, R::ZERO);
        }
        self.top = end;
        Some(offset)
    }

    /// The slot's description.
    #[inline(always)]
    pub fn info(&self, s: Slot) -> SlotInfo {
        self.slots[s.0 as usize]
    }

    /// Allocates a slot whose numbers are unspecified (the caller writes them all); `None`
    /// when the memory limit would be crossed.
    #[inline]
    pub fn alloc(&mut self, shape: Shape, lanes: bool, active: bool) -> Option<Slot> {
        self.alloc_info(shape, lanes, active).map(|(s, _)| s)
    }

    /// [`Payloads::alloc`], also returning the new slot's description.
    #[inline]
    pub fn alloc_info(
        &mut self,
        shape: Shape,
        lanes: bool,
        active: bool,
    ) -> Option<(Slot, SlotInfo)> {
        let lanes = lanes && (self.lanes > 1 || self.keep_lanes);
        let len = shape.len();
        // A slot too large to count in 32 bits is past any memory limit.
        u32::try_from(len).ok()?;
        let n = if lanes { len * self.lanes } else { len };
        let offset = self.bump(n)?;
        let adj = self.next_adjoint(len, active)?;
        let info = SlotInfo::new(offset as u32, adj, shape, lanes, active)?;
        self.slots.push(info);
        Some((Slot((self.slots.len() - 1) as u32), info))
    }

    /// Allocates a uniform scalar holding `x`.
    #[inline]
    pub fn push_scalar(&mut self, x: R, active: bool) -> Option<Slot> {
        let offset = self.bump(1)?;
        self.data[offset] = x;
        let adj = self.next_adjoint(1, active)?;
        let info = SlotInfo::scalar(offset as u32, adj, active);
        self.slots.push(info);
        Some(Slot((self.slots.len() - 1) as u32))
    }

    /// Allocates a uniform, inactive scalar for each of `xs` (a program's constants), in
    /// order; false when the memory limit would be crossed.
    pub fn push_constants(&mut self, xs: &[f64]) -> bool {
        let Some(offset) = self.bump(xs.len()) else {
            return false;
        };
        for (d, &x) in self.data[offset..offset + xs.len()].iter_mut().zip(xs) {
            *d = R::from_f64(x);
        }
        self.slots
            .extend((offset..offset + xs.len()).map(|offset| SlotInfo {
                offset: offset as u32,
                adj: NO_ADJ,
                rows: 1,
                cols: 1,
            }));
        true
    }

    /// Drops every slot from `from` on but those of `keep` (sorted, each at or after `from`),
    /// whose numbers move down in order: `keep[i]` becomes slot `from + i`. For a run that
    /// records no tape: a moved slot keeps no adjoint. Returns the numbers kept.
    pub fn retain_since(&mut self, from: Slot, keep: &[Slot]) -> usize {
        let first = from.0 as usize;
        let Some(start) = self.slots.get(first).map(|i| i.offset()) else {
            return 0;
        };
        let mut dst = start;
        for (k, s) in keep.iter().enumerate() {
            let info = self.slots[s.0 as usize];
            debug_assert!(s.0 >= from.0 && !info.active());
            let n = info.stored(self.lanes);
            self.data.copy_within(info.offset()..info.offset() + n, dst);
            self.slots[first + k] = info.moved(dst);
            dst += n;
        }
        self.slots.truncate(first + keep.len());
        self.top = dst;
        dst - start
    }

    /// Numbers in use (the end of the newest slot).
    #[inline(always)]
    pub fn top(&self) -> usize {
        self.top
    }

    /// Every slot made so far, in order.
    pub fn slot_infos(&self) -> &[SlotInfo] {
        &self.slots
    }

    /// The numbers in use, mutably (a region device writes its results here).
    pub fn data_mut(&mut self) -> &mut [R] {
        &mut self.data[..self.top]
    }

    /// Every number of the arena (a slot's numbers start at its [`SlotInfo::offset`]).
    #[inline(always)]
    pub fn data(&self) -> &[R] {
        &self.data
    }

    /// The numbers of the slot `info` describes.
    #[inline(always)]
    pub fn get_info(&self, info: &SlotInfo) -> &[R] {
        &self.data[info.offset()..info.offset() + info.stored(self.lanes)]
    }

    /// The slot `o` describes (the newest slot, or any slot after its inputs) mutably, with
    /// every number before it readable.
    #[inline(always)]
    pub fn split_info(&mut self, o: &SlotInfo) -> (&[R], &mut [R]) {
        let n = o.stored(self.lanes);
        let (before, rest) = self.data.split_at_mut(o.offset());
        (&*before, &mut rest[..n])
    }

    /// The numbers of a slot.
    #[inline(always)]
    pub fn get(&self, s: Slot) -> &[R] {
        let i = self.slots[s.0 as usize];
        &self.data[i.offset()..i.offset() + i.stored(self.lanes)]
    }

    /// The numbers of a slot, mutably.
    #[inline(always)]
    pub fn get_mut(&mut self, s: Slot) -> &mut [R] {
        let i = self.slots[s.0 as usize];
        let n = i.stored(self.lanes);
        &mut self.data[i.offset()..i.offset() + n]
    }

    /// Element `e` of a slot across lanes.
    #[inline(always)]
    pub fn col(&self, s: Slot, e: usize) -> Col<'_, R> {
        let i = self.slots[s.0 as usize];
        if i.lanes() {
            let start = i.offset() + e * self.lanes;
            Col::Lanes(&self.data[start..start + self.lanes])
        } else {
            Col::Uniform(self.data[i.offset() + e])
        }
    }

    /// The slot `out` mutably together with read access to every earlier slot: kernels read
    /// their inputs from `before` and write `out`.
    #[inline(always)]
    pub fn split(&mut self, out: Slot) -> (Inputs<'_, R>, &mut [R]) {
        let i = self.slots[out.0 as usize];
        let n = i.stored(self.lanes);
        let (before, rest) = self.data.split_at_mut(i.offset());
        (
            Inputs {
                data: &*before,
                slots: &self.slots,
                lanes: self.lanes,
            },
            &mut rest[..n],
        )
    }

    /// The value of a uniform scalar slot.
    #[inline(always)]
    pub fn scalar(&self, s: Slot) -> Option<R> {
        let i = self.slots[s.0 as usize];
        (!i.lanes() && i.shape() == Shape::Scalar).then(|| self.data[i.offset()])
    }
}

/// Read access to the slots before a kernel's output.
pub struct Inputs<'a, R> {
    data: &'a [R],
    slots: &'a [SlotInfo],
    lanes: usize,
}

impl<'a, R: Real> Inputs<'a, R> {
    /// The numbers of an earlier slot.
    #[inline(always)]
    pub fn get(&self, s: Slot) -> &'a [R] {
        let i = self.slots[s.0 as usize];
        &self.data[i.offset()..i.offset() + i.stored(self.lanes)]
    }

    /// The description of a slot.
    #[inline(always)]
    pub fn info(&self, s: Slot) -> SlotInfo {
        self.slots[s.0 as usize]
    }

    /// Element `e` of an earlier slot across lanes.
    #[inline(always)]
    pub fn col(&self, s: Slot, e: usize) -> Col<'a, R> {
        let i = self.slots[s.0 as usize];
        if i.lanes() {
            let start = i.offset() + e * self.lanes;
            Col::Lanes(&self.data[start..start + self.lanes])
        } else {
            Col::Uniform(self.data[i.offset() + e])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_description_keeps_its_shape_flags_and_offsets() {
        let mut pay = Payloads::<f64>::default();
        pay.reset(3, 1 << 20);
        let shapes = [
            Shape::Scalar,
            Shape::Vector(1),
            Shape::Vector(5),
            Shape::Matrix(1, 1),
            Shape::Matrix(2, 3),
            Shape::Matrix(7, 1),
        ];
        let mut adj = 0;
        let mut top = 0;
        for (k, &shape) in shapes.iter().enumerate() {
            let (lanes, active) = (k % 2 == 0, k % 3 != 1);
            let (_, info) = pay.alloc_info(shape, lanes, active).expect("room");
            assert_eq!(info.shape(), shape);
            assert_eq!(info.n(), shape.len());
            assert_eq!((info.lanes(), info.active()), (lanes, active));
            assert_eq!(info.is_scalar(), shape.is_scalar());
            assert_eq!(info.is_uniform_scalar(), shape.is_scalar() && !lanes);
            assert_eq!(info.offset(), top);
            top += info.stored(3);
            if active {
                assert_eq!(info.adj(), adj);
                adj += shape.len() * 3;
            } else {
                assert_eq!(info.adj(), NO_ADJOINT);
            }
        }
        let s = pay.push_scalar(2.5, true).expect("room");
        let info = pay.info(s);
        assert!(info.is_uniform_scalar() && info.active());
        assert_eq!((info.offset(), info.adj()), (top, adj));
        assert_eq!(pay.scalar(s), Some(2.5));
    }

    #[test]
    fn a_matrix_of_more_columns_than_the_description_holds_is_refused() {
        let mut pay = Payloads::<f32>::default();
        pay.reset(1, 1 << 20);
        // No numbers, but columns past 28 bits: refused as if past the memory limit.
        assert!(pay.alloc(Shape::Matrix(0, 1 << 28), false, false).is_none());
        let s = pay.alloc(Shape::Matrix(0, (1 << 28) - 1), false, false);
        let info = pay.info(s.expect("no numbers"));
        assert_eq!(info.shape(), Shape::Matrix(0, (1 << 28) - 1));
        assert_eq!(info.n(), 0);
    }
}
