//! Entry ids: 8 lowercase hex digits, like `randomUUID().slice(0, 8)` in the reference.
//! A per-thread generator seeded once from the OS keeps this off the syscall path;
//! callers check ids for collisions, as the reference's `generateId` does.

use std::cell::Cell;

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let b = *uuid::Uuid::new_v4().as_bytes();
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) | 1
}

/// SplitMix64.
fn next() -> u64 {
    STATE.with(|s| {
        let v = s.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        s.set(v);
        let mut z = v;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// A random 8-hex-digit id.
pub fn short_id() -> String {
    format!("{:08x}", next() as u32)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_8_hex_digits_and_vary() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| super::short_id()).collect();
        assert!(ids.len() > 990);
        assert!(
            ids.iter().all(|i| i.len() == 8 && i.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
        );
    }
}
