//! Lane masks: a boolean per lane. Mask 0 has every lane set. Masks are both the active set of
//! a divergent branch and the value of a comparison on lane data.

use crate::value::MaskId;

/// Every mask of a run, `lanes` booleans each.
#[derive(Debug, Default)]
pub struct Masks {
    lanes: usize,
    bits: Vec<bool>,
}

impl Masks {
    /// Clears the table for a run of `lanes` lanes; mask 0 (every lane) is recreated.
    pub fn reset(&mut self, lanes: usize) {
        self.lanes = lanes.max(1);
        self.bits.clear();
        self.bits.resize(self.lanes, true);
    }

    /// Every mask's lanes as bits, for a region device.
    pub fn bits(&self) -> shared_ir::region::MaskBits {
        let words_per_mask = self.lanes.div_ceil(32);
        let masks = self.bits.len() / self.lanes;
        let mut words = vec![0u32; masks * words_per_mask];
        for (i, &b) in self.bits.iter().enumerate() {
            if b {
                let (m, l) = (i / self.lanes, i % self.lanes);
                words[m * words_per_mask + l / 32] |= 1 << (l % 32);
            }
        }
        shared_ir::region::MaskBits {
            words_per_mask: words_per_mask as u32,
            words,
        }
    }

    /// Masks made so far (mask 0 included).
    #[inline(always)]
    pub fn count(&self) -> usize {
        self.bits.len() / self.lanes
    }

    /// Drops every mask from `from` on but those of `keep` (sorted, each at or after `from`),
    /// which move down in order: `keep[i]` becomes mask `from + i`.
    pub fn retain_since(&mut self, from: MaskId, keep: &[MaskId]) {
        let n = self.lanes;
        let mut dst = from.0 as usize * n;
        for m in keep {
            debug_assert!(m.0 >= from.0);
            let src = m.0 as usize * n;
            self.bits.copy_within(src..src + n, dst);
            dst += n;
        }
        self.bits.truncate(dst);
    }

    /// The booleans of a mask.
    #[inline(always)]
    pub fn get(&self, m: MaskId) -> &[bool] {
        let s = m.0 as usize * self.lanes;
        &self.bits[s..s + self.lanes]
    }

    /// Adds a mask computed lane by lane.
    pub fn push_with(&mut self, f: impl Fn(usize) -> bool) -> MaskId {
        let id = self.bits.len() / self.lanes;
        self.bits.extend((0..self.lanes).map(f));
        MaskId(id as u32)
    }

    /// Adds a mask from booleans.
    pub fn push_from(&mut self, lanes: impl Iterator<Item = bool>) -> MaskId {
        let id = self.bits.len() / self.lanes;
        self.bits.extend(lanes);
        debug_assert_eq!(self.bits.len() % self.lanes, 0);
        MaskId(id as u32)
    }

    /// `a & b`.
    pub fn and(&mut self, a: MaskId, b: MaskId) -> MaskId {
        self.combine(a, b, |x, y| x & y)
    }

    /// `a & !b`.
    pub fn and_not(&mut self, a: MaskId, b: MaskId) -> MaskId {
        self.combine(a, b, |x, y| x & !y)
    }

    /// `a | b`.
    pub fn or(&mut self, a: MaskId, b: MaskId) -> MaskId {
        self.combine(a, b, |x, y| x | y)
    }

    /// `a == b`, lane by lane.
    pub fn equal(&mut self, a: MaskId, b: MaskId) -> MaskId {
        self.combine(a, b, |x, y| x == y)
    }

    /// `!a`.
    pub fn not(&mut self, a: MaskId) -> MaskId {
        self.combine(a, a, |x, _| !x)
    }

    /// Lane-wise `if c then a else b`.
    pub fn select(&mut self, c: MaskId, a: MaskId, b: MaskId) -> MaskId {
        let n = self.lanes;
        let (cs, as_, bs) = (c.0 as usize * n, a.0 as usize * n, b.0 as usize * n);
        let id = self.bits.len() / n;
        for l in 0..n {
            let v = if self.bits[cs + l] {
                self.bits[as_ + l]
            } else {
                self.bits[bs + l]
            };
            self.bits.push(v);
        }
        MaskId(id as u32)
    }

    fn combine(&mut self, a: MaskId, b: MaskId, f: impl Fn(bool, bool) -> bool) -> MaskId {
        let n = self.lanes;
        let (sa, sb) = (a.0 as usize * n, b.0 as usize * n);
        let id = self.bits.len() / n;
        self.bits.reserve(n);
        for l in 0..n {
            let v = f(self.bits[sa + l], self.bits[sb + l]);
            self.bits.push(v);
        }
        MaskId(id as u32)
    }

    /// How the lanes of `active` split on `test`: (any true, any false).
    pub fn split_counts(&self, active: MaskId, test: MaskId) -> (bool, bool) {
        let (a, t) = (self.get(active), self.get(test));
        let mut any_t = false;
        let mut any_f = false;
        for (&x, &y) in a.iter().zip(t) {
            any_t |= x & y;
            any_f |= x & !y;
        }
        (any_t, any_f)
    }

    /// The indices of the set lanes.
    pub fn lanes_of(&self, m: MaskId) -> Vec<usize> {
        self.get(m)
            .iter()
            .enumerate()
            .filter_map(|(i, &b)| b.then_some(i))
            .collect()
    }
}
