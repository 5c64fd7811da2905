//! Forward-only loops in bounded memory: when no tape is recorded, the payload slots and lane
//! masks an iteration made and the next one cannot reach are given back at the `recur`.
//!
//! A loop marks the tops of the payload table, the mask table and the heap when it starts.
//! Everything made after the mark by the iteration that ends at a `recur` is dead except what
//! the new values of the loop variables, the values of lanes that already left the loop and
//! the active lanes hold: those are moved down to the mark, in order, and renumbered. Values
//! made before the mark are never touched. Nothing else can hold a newer slot: frame slots of
//! the body are bound again before they are read, a `define` is top-level only, and once an
//! iteration has made a pair or a closure (which could hold one) the loop reclaims no more.
//!
//! The work is amortised: a loop reclaims only once its iterations have made, past what
//! survived last time, at least as much again as survived and at least [`RECLAIM_NUMBERS`]
//! numbers, [`RECLAIM_SLOTS`] slots or [`RECLAIM_MASK_BYTES`] bytes of masks, so a large loop
//! state is not copied every iteration.
//!
//! This rests on rules of the language that nothing else checks: no form assigns a variable
//! made outside the iteration (there is no `set!`; `define` is top-level only), and the only
//! write into an existing closure (a `letrec` binding read through a capture made before it
//! was assigned, `Machine::late_capture`) copies a value made before the loop. A form that
//! mutates (or a primitive that calls closures and keeps their results) must extend the roots
//! here.

use super::Machine;
use crate::value::{MaskId, Slot, Value};
use shared_ir::Real;

/// Numbers (beyond the survivors) an iteration may leave before the loop reclaims.
pub(crate) const RECLAIM_NUMBERS: usize = 1 << 16;
/// Slots (beyond the survivors) an iteration may leave before the loop reclaims.
pub(crate) const RECLAIM_SLOTS: usize = 1 << 12;
/// Bytes of masks (beyond the survivors) an iteration may leave before the loop reclaims.
pub(crate) const RECLAIM_MASK_BYTES: usize = 1 << 16;

/// The tops of the tables when a loop started, and when it next reclaims.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Mark {
    slots: u32,
    masks: u32,
    pairs: u32,
    closures: u32,
    /// Slot count past which the next reclaim runs.
    slots_at: usize,
    /// Arena top past which the next reclaim runs.
    numbers_at: usize,
    /// Mask count past which the next reclaim runs.
    masks_at: usize,
}

/// Where the live values of a loop sit when it reclaims.
pub(crate) struct Roots {
    /// The loop variables' new values: `stack[start..start + len]`.
    pub start: usize,
    pub len: usize,
}

impl<R: Real> Machine<'_, R> {
    /// The mark of a loop starting now, or `None` when its iterations must keep every slot
    /// (a tape is recorded, or the ops are collected for a device).
    pub(crate) fn loop_mark(&self) -> Option<Mark> {
        if self.taping || self.s.regions.recording() {
            return None;
        }
        let slots = self.s.pay.slot_infos().len();
        let masks = self.s.masks.count();
        let mut mark = Mark {
            slots: slots as u32,
            masks: masks as u32,
            pairs: self.s.heap.pairs.len() as u32,
            closures: self.s.heap.closures.len() as u32,
            slots_at: 0,
            numbers_at: 0,
            masks_at: 0,
        };
        self.next_reclaim(&mut mark, 0, 0, 0);
        Some(mark)
    }

    /// Sets when `mark`'s loop next reclaims: once as much again as survived (`slots`,
    /// `numbers`, `masks`) and at least the thresholds have been made.
    fn next_reclaim(&self, mark: &mut Mark, slots: usize, numbers: usize, masks: usize) {
        let s = &*self.s;
        let mask_step = (RECLAIM_MASK_BYTES / s.pay.lanes().max(1)).max(16);
        mark.slots_at = s.pay.slot_infos().len() + slots.max(RECLAIM_SLOTS);
        mark.numbers_at = s.pay.top() + numbers.max(RECLAIM_NUMBERS);
        mark.masks_at = s.masks.count() + masks.max(mask_step);
    }

    /// At a `recur` of the innermost loop: gives back what its iterations made that `roots`,
    /// the lanes that left the loop and the active lanes cannot reach, once enough is there.
    #[inline]
    pub(crate) fn reclaim(&mut self, roots: Roots) {
        let Some(st) = self.s.loops.last() else {
            return;
        };
        let Some(mark) = st.mark else {
            return;
        };
        let s = &*self.s;
        let due = s.pay.slot_infos().len() >= mark.slots_at
            || s.pay.top() >= mark.numbers_at
            || s.masks.count() >= mark.masks_at;
        if due {
            self.reclaim_now(mark, roots);
        }
    }

    #[inline(never)]
    fn reclaim_now(&mut self, mut mark: Mark, roots: Roots) {
        let s = &mut *self.s;
        let grew = s.heap.pairs.len() != mark.pairs as usize
            || s.heap.closures.len() != mark.closures as usize;
        if grew {
            // A pair or closure made since the mark may hold a newer slot, and the heap never
            // shrinks: this loop keeps everything from now on.
            if let Some(st) = s.loops.last_mut() {
                st.mark = None;
            }
            return;
        }
        // The survivors move: a replay could not redo that.
        s.regions.trace.abandon();
        let exit = s.loops.last().and_then(|st| st.exit);
        let (from_slot, from_mask) = (Slot(mark.slots), MaskId(mark.masks));
        let mut keep_slots = std::mem::take(&mut s.keep_slots);
        let mut keep_masks = std::mem::take(&mut s.keep_masks);
        keep_slots.clear();
        keep_masks.clear();
        let mut note = |v: Value| match v {
            Value::Num(x) if x >= from_slot => keep_slots.push(x),
            Value::LaneBool(m) if m.0 >= from_mask.0 => keep_masks.push(m),
            _ => {}
        };
        s.stack[roots.start..roots.start + roots.len]
            .iter()
            .for_each(|&v| note(v));
        if let Some(v) = exit {
            note(v);
        }
        if self.mask.0 >= from_mask.0 {
            keep_masks.push(self.mask);
        }
        keep_slots.sort_unstable();
        keep_slots.dedup();
        keep_masks.sort_unstable_by_key(|m| m.0);
        keep_masks.dedup();
        let kept_numbers = s.pay.retain_since(from_slot, &keep_slots);
        s.masks.retain_since(from_mask, &keep_masks);
        let slot_of = |x: Slot| match keep_slots.binary_search(&x) {
            Ok(i) => Slot(from_slot.0 + i as u32),
            Err(_) => x,
        };
        let mask_of = |m: MaskId| match keep_masks.binary_search_by_key(&m.0, |k| k.0) {
            Ok(i) => MaskId(from_mask.0 + i as u32),
            Err(_) => m,
        };
        let renumber = |v: Value| match v {
            Value::Num(x) if x >= from_slot => Value::Num(slot_of(x)),
            Value::LaneBool(m) if m.0 >= from_mask.0 => Value::LaneBool(mask_of(m)),
            v => v,
        };
        for v in &mut s.stack[roots.start..roots.start + roots.len] {
            *v = renumber(*v);
        }
        self.mask = mask_of(self.mask);
        let exit = exit.map(renumber);
        let (kept_slots, kept_masks) = (keep_slots.len(), keep_masks.len());
        s.keep_slots = keep_slots;
        s.keep_masks = keep_masks;
        self.next_reclaim(&mut mark, kept_slots, kept_numbers, kept_masks);
        if let Some(st) = self.s.loops.last_mut() {
            st.exit = exit;
            st.mark = Some(mark);
        }
    }
}
