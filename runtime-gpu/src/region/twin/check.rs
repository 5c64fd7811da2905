//! What the twin checks before it runs a region, so that its table reads never fail: every
//! slot a record names is in the slot table, every pack's parts in the aux list, and every
//! factored matrix fits the shader's private arrays (`MAXN` x `MAXN`, the limit the host
//! checks before it sends a region to the GPU). Reads and writes of the arenas are checked
//! where they happen (see `Buffers::stray`).

use super::super::MAX_FACTOR;
use shared_ir::region::{Opcode, Region, OP_WORDS, SLOT_WORDS};
use shared_ir::LinalgOp;

/// Checks `region` (see the module's notes).
pub(super) fn check(region: &Region) -> Result<(), String> {
    if region.ops.len() % OP_WORDS != 0 || region.slots.len() % SLOT_WORDS != 0 {
        return Err("a region table of a partial record or slot".into());
    }
    let slots = region.slots.len() / SLOT_WORDS;
    let word = |s: u32, k: usize| region.slots[s as usize * SLOT_WORDS + k] as usize;
    for (i, w) in region.ops.chunks_exact(OP_WORDS).enumerate() {
        let (opcode, sub, out, a, b, extra, count) = (w[0], w[1], w[2], w[3], w[4], w[5], w[7]);
        let mut named = vec![out, a, b];
        if opcode == Opcode::Pack as u32 {
            let parts = region
                .aux
                .get(extra as usize..extra as usize + count as usize)
                .ok_or_else(|| format!("record {i}: pack parts past the aux list"))?;
            named.extend_from_slice(parts);
        }
        if let Some(s) = named.iter().find(|&&s| s as usize >= slots) {
            return Err(format!("record {i} names slot {s} of {slots}"));
        }
        if opcode == Opcode::Linalg as u32 {
            // Codes past the last are the shader's `default` arm: solve.
            let op = LinalgOp::ALL.get(sub as usize).copied();
            let n = match op.unwrap_or(LinalgOp::Solve) {
                LinalgOp::Solve => word(a, 4).max(word(b, 5)),
                op if op.factors() => word(a, 4),
                _ => 0,
            };
            if n > MAX_FACTOR {
                return Err(format!(
                    "the region interpreter factors matrices of at most \
                     {MAX_FACTOR}x{MAX_FACTOR}; record {i} factors {n}x{n}"
                ));
            }
        }
    }
    Ok(())
}
