//! The numbers of a walk, for a front end other than the evaluator (the bytecode VM): the
//! payload arena, the lane masks, the tape and the reverse pass behind one narrow interface.
//! Every op is made through the numeric-op layer ([`Arena::make`], [`Numbers`]) as the
//! evaluator's are, and the reverse pass is the evaluator's, so such a front end's values and
//! gradients are the evaluator's bit for bit.

use crate::backward::{self, backward, Adjoints};
use crate::mask::Masks;
use crate::ops::{self, Numbers, OpError};
use crate::payload::{Payloads, SlotInfo};
use crate::tape::{Entry, Tape};
use crate::value::{MaskId, Slot};
use shared_ir::{Real, Shape};

/// The payloads, masks and tape of one walk over a block of lanes, with the reverse pass's
/// buffers; reuse it across walks to keep its memory.
#[derive(Debug, Default)]
pub struct Arena<R> {
    pay: Payloads<R>,
    masks: Masks,
    tape: Tape,
    scratch: ops::Scratch<R>,
    adj: Adjoints<R>,
    reverse: backward::Scratch<R>,
}

impl<R: Real> Arena<R> {
    /// Empties the arena for a walk of `lanes` lanes storing at most `max_numbers` numbers,
    /// keeping its memory.
    pub fn reset(&mut self, lanes: usize, max_numbers: usize) {
        self.pay.reset(lanes, max_numbers);
        self.masks.reset(lanes);
        self.tape.reset();
    }

    /// Lanes of the walk.
    #[inline(always)]
    pub fn lanes(&self) -> usize {
        self.pay.lanes()
    }

    /// A slot's description (shape, per lane or uniform, active).
    #[inline(always)]
    pub fn info(&self, s: Slot) -> SlotInfo {
        self.pay.info(s)
    }

    /// The numbers of the slot `info` describes: element-major, `lanes()` per element when
    /// per lane.
    #[inline(always)]
    pub fn numbers(&self, info: &SlotInfo) -> &[R] {
        self.pay.get_info(info)
    }

    /// A slot's numbers, to write (an input's or a constant's, after [`Arena::alloc`]).
    #[inline(always)]
    pub fn numbers_mut(&mut self, s: Slot) -> &mut [R] {
        self.pay.get_mut(s)
    }

    /// A new slot whose numbers the caller writes, and its description; `None` past the
    /// arena's limit. A slot per lane is stored once on a walk of one lane.
    #[inline]
    pub fn alloc(&mut self, shape: Shape, lanes: bool, active: bool) -> Option<(Slot, SlotInfo)> {
        self.pay.alloc_info(shape, lanes, active)
    }

    /// Makes an op with `f` through the numeric-op layer, taped under `mask` when `taping`;
    /// also the bytes it added to the arena and the tape (slot descriptions, numbers and
    /// records), for a front end that keeps its own memory account.
    #[inline(always)]
    pub fn make(
        &mut self,
        taping: bool,
        mask: MaskId,
        f: impl FnOnce(&mut Numbers<'_, R>) -> Result<Slot, OpError>,
    ) -> (Result<Slot, OpError>, usize) {
        let before = (self.pay.slot_infos().len(), self.pay.top(), self.tape.len());
        let mut numbers = Numbers::eager(
            &mut self.pay,
            &self.masks,
            &mut self.scratch,
            &mut self.tape,
            taping,
            mask,
        );
        let made = f(&mut numbers);
        let slots = self.pay.slot_infos().len() - before.0;
        let numbers = self.pay.top() - before.1;
        let records = self.tape.len() - before.2;
        let bytes = slots * std::mem::size_of::<SlotInfo>()
            + numbers * std::mem::size_of::<R>()
            + records * std::mem::size_of::<Entry>();
        (made, bytes)
    }

    /// A new mask of the lanes where `test` holds for the per-lane scalar slot `info`.
    pub fn mask_where(&mut self, info: &SlotInfo, test: impl Fn(R) -> bool) -> MaskId {
        let lanes = self.pay.get_info(info);
        self.masks.push_from(lanes.iter().map(|&x| test(x)))
    }

    /// Whether any lane of `active` has `test` set, and whether any has it clear.
    pub fn split_counts(&self, active: MaskId, test: MaskId) -> (bool, bool) {
        self.masks.split_counts(active, test)
    }

    /// The lanes in both `a` and `b`.
    pub fn and(&mut self, a: MaskId, b: MaskId) -> MaskId {
        self.masks.and(a, b)
    }

    /// The lanes in `a` but not in `b`.
    pub fn and_not(&mut self, a: MaskId, b: MaskId) -> MaskId {
        self.masks.and_not(a, b)
    }

    /// The reverse pass from the scalar slot `result`, its adjoint seeded with one on every
    /// lane. Read each input's gradient with [`Arena::take_gradient`] next.
    pub fn reverse(&mut self, result: Slot) {
        self.adj.prepare(&self.pay);
        if let Some(seed) = self.adj.get_mut(&self.pay.info(result)) {
            seed.fill(R::ONE);
        }
        backward(
            &self.tape,
            &self.pay,
            &self.masks,
            &mut self.adj,
            &mut self.reverse,
        );
    }

    /// The adjoint of slot `s` after [`Arena::reverse`] into `out` (element-major, lane-wide;
    /// zeros for a slot without one), leaving it zero for the next pass. Take every active
    /// slot's that no record consumed (the inputs', and the result's when no record made it).
    pub fn take_gradient(&mut self, s: Slot, out: &mut Vec<f64>) {
        self.adj.take_clean(&self.pay.info(s), out);
    }
}
