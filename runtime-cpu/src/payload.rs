//! The payload table: every number, vector and matrix of a run, stored densely.
//!
//! A slot is either *uniform* (one copy, the same on every lane) or *per lane* (B copies).
//! Data are element-major: element `e` of a per-lane slot occupies `B` contiguous numbers, so
//! every kernel is a loop over lanes that the compiler vectorises.

use crate::value::Slot;
use shared_ir::{Real, Shape};

/// What the table knows about one slot.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SlotInfo {
    /// Offset of the slot's first number in the data arena.
    pub offset: usize,
    /// Shape of one lane.
    pub shape: Shape,
    /// True when the slot holds one value per lane.
    pub lanes: bool,
    /// True when the value depends on a differentiated input.
    pub active: bool,
}

impl SlotInfo {
    /// Numbers stored for this slot.
    #[inline(always)]
    pub fn stored(&self, lanes: usize) -> usize {
        if self.lanes {
            self.shape.len() * lanes
        } else {
            self.shape.len()
        }
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
}

impl<R: Real> Payloads<R> {
    /// Clears the table for a run of `lanes` lanes, keeping its memory. `limit` bounds the
    /// numbers stored.
    pub fn reset(&mut self, lanes: usize, limit: usize) {
        self.lanes = lanes.max(1);
        self.top = 0;
        self.slots.clear();
        self.limit = limit;
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
        let lanes = lanes && self.lanes > 1;
        let n = if lanes {
            shape.len() * self.lanes
        } else {
            shape.len()
        };
        let offset = self.bump(n)?;
        self.slots.push(SlotInfo {
            offset,
            shape,
            lanes,
            active,
        });
        Some(Slot((self.slots.len() - 1) as u32))
    }

    /// Allocates a uniform scalar holding `x`.
    #[inline]
    pub fn push_scalar(&mut self, x: R, active: bool) -> Option<Slot> {
        let offset = self.bump(1)?;
        self.data[offset] = x;
        self.slots.push(SlotInfo {
            offset,
            shape: Shape::Scalar,
            lanes: false,
            active,
        });
        Some(Slot((self.slots.len() - 1) as u32))
    }

    /// The numbers of a slot.
    #[inline(always)]
    pub fn get(&self, s: Slot) -> &[R] {
        let i = self.slots[s.0 as usize];
        &self.data[i.offset..i.offset + i.stored(self.lanes)]
    }

    /// The numbers of a slot, mutably.
    #[inline(always)]
    pub fn get_mut(&mut self, s: Slot) -> &mut [R] {
        let i = self.slots[s.0 as usize];
        let n = i.stored(self.lanes);
        &mut self.data[i.offset..i.offset + n]
    }

    /// Element `e` of a slot across lanes.
    #[inline(always)]
    pub fn col(&self, s: Slot, e: usize) -> Col<'_, R> {
        let i = self.slots[s.0 as usize];
        if i.lanes {
            let start = i.offset + e * self.lanes;
            Col::Lanes(&self.data[start..start + self.lanes])
        } else {
            Col::Uniform(self.data[i.offset + e])
        }
    }

    /// The slot `out` mutably together with read access to every earlier slot: kernels read
    /// their inputs from `before` and write `out`.
    #[inline(always)]
    pub fn split(&mut self, out: Slot) -> (Inputs<'_, R>, &mut [R]) {
        let i = self.slots[out.0 as usize];
        let n = i.stored(self.lanes);
        let (before, rest) = self.data.split_at_mut(i.offset);
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
        (!i.lanes && i.shape == Shape::Scalar).then(|| self.data[i.offset])
    }

    /// Every slot's description.
    pub fn slots(&self) -> &[SlotInfo] {
        &self.slots
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
        &self.data[i.offset..i.offset + i.stored(self.lanes)]
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
        if i.lanes {
            let start = i.offset + e * self.lanes;
            Col::Lanes(&self.data[start..start + self.lanes])
        } else {
            Col::Uniform(self.data[i.offset + e])
        }
    }
}
