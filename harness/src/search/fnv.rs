//! FNV-1a over 128 bits: a hash that is the same on every machine and build, for what is kept
//! across runs (a checkpoint's fingerprint of its data, the skeleton cache's keys) and for
//! seeds drawn from content.

/// The hash so far.
#[derive(Clone, Copy, Debug)]
pub struct Fnv(pub u128);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0x6c62_272e_07bb_0142_62b8_2175_6295_c58d)
    }
}

impl Fnv {
    /// Hashes bytes in.
    pub fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u128::from(b);
            self.0 = self
                .0
                .wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
        }
    }

    /// Hashes a text in, ended so that `"ab","c"` and `"a","bc"` differ.
    pub fn text(&mut self, s: &str) {
        self.bytes(s.as_bytes());
        self.bytes(&[0xff]);
    }

    /// Hashes a number's bits in.
    pub fn number(&mut self, x: f64) {
        self.bytes(&x.to_bits().to_le_bytes());
    }
}
