//! Random ids as pi 1.6.0 makes them: entry ids are the first 8 hex digits of a v4 UUID,
//! checked against the ids taken (`generateId`), and session ids are pi-ai's monotonic
//! UUIDv7 (`uuidv7`).

use std::cell::RefCell;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Random bytes drawn per refill of a thread's pool: one system call for 1,024 ids.
const POOL: usize = 4096;

thread_local! {
    static RANDOM: RefCell<([u8; POOL], usize)> = const { RefCell::new(([0; POOL], POOL)) };
}

fn random_bytes<const N: usize>() -> [u8; N] {
    RANDOM.with_borrow_mut(|(pool, pos)| {
        if *pos + N > POOL {
            getrandom::fill(pool).expect("the system's random source");
            *pos = 0;
        }
        let out = pool[*pos..*pos + N].try_into().expect("N bytes");
        *pos += N;
        out
    })
}

fn hex(bytes: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
}

/// `randomUUID().slice(0, 8)`: the first 8 hex digits of a v4 UUID are 32 random bits (the
/// version nibble comes later), so 4 random bytes as hex have the same distribution.
pub fn short_id() -> String {
    let mut out = String::with_capacity(8);
    hex(&random_bytes::<4>(), &mut out);
    out
}

/// The reference's `generateId`: a short id that `taken` does not hold, or after 100 tries a
/// whole v4 UUID.
pub fn generate_id(taken: impl Fn(&str) -> bool) -> String {
    generate(|_, id| taken(id))
}

/// `generate_id` where `taken` also gets the short id's 32 bits (checked without text first).
fn generate(mut taken: impl FnMut(u32, &str) -> bool) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for _ in 0..100 {
        let bits = u32::from_be_bytes(random_bytes::<4>());
        let mut text = [0u8; 8];
        for (i, d) in text.iter_mut().enumerate() {
            *d = DIGITS[(bits >> (28 - 4 * i) & 15) as usize];
        }
        let id = std::str::from_utf8(&text).expect("hex digits");
        if !taken(bits, id) {
            return id.to_string();
        }
    }
    uuid::Uuid::new_v4().to_string()
}

/// Short ids are random, so their bits hash themselves (a multiply spreads them to the top).
#[derive(Default, Clone, Copy)]
struct BitsHasher(u64);

impl std::hash::Hasher for BitsHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = ((self.0 << 8) | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Ids handed out ahead of the entries that will carry them (`Session::reserve_ids`): each
/// is made by `generate_id` against the index and the ids handed out before it, so a batch
/// used in order gives the ids one `generateId(byId)` call per entry would have given.
#[derive(Default)]
pub struct Reserved {
    /// Short ids as their 32 bits (no allocation per id: in-memory appends take one each).
    short: std::collections::HashSet<u32, std::hash::BuildHasherDefault<BitsHasher>>,
    /// Whole UUIDs (after 100 taken short ids).
    long: std::collections::HashSet<Box<str>>,
}

/// The 32 bits of a short id (8 lowercase hex digits), or `None` for any other text.
fn short_bits(id: &str) -> Option<u32> {
    if id.len() == 8 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        u32::from_str_radix(id, 16).ok()
    } else {
        None
    }
}

impl Reserved {
    #[cfg(test)]
    fn contains(&self, id: &str) -> bool {
        match short_bits(id) {
            Some(bits) => self.short.contains(&bits),
            None => self.long.contains(id),
        }
    }

    /// `n` new ids, space-separated, in the order they are to be used; `taken` says which ids
    /// the index holds.
    pub fn take(&mut self, n: usize, taken: impl Fn(&str) -> bool) -> String {
        let mut out = String::with_capacity(n * 9);
        for i in 0..n {
            let id = generate(|bits, id| self.short.contains(&bits) || taken(id));
            match short_bits(&id) {
                Some(bits) => self.short.insert(bits),
                None => self.long.contains(id.as_str()) || self.long.insert(id.as_str().into()),
            };
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&id);
        }
        out
    }

    /// The id is in the index now, or its entry was never added: it is no longer held here.
    pub fn release(&mut self, id: &str) {
        if self.short.is_empty() && self.long.is_empty() {
            return;
        }
        match short_bits(id) {
            Some(bits) => self.short.remove(&bits),
            None => self.long.remove(id),
        };
    }
}

/// The highest sequence of pi-ai's generator (41 bits).
const MAX_SEQUENCE: u64 = (1 << 41) - 1;

/// pi-ai's generator state: the last timestamp used and the sequence (random at first, then
/// one more per id, whatever the clock does).
static V7: Mutex<(u64, Option<u64>)> = Mutex::new((0, None));

/// pi-ai's monotonic `uuidv7()`: the millisecond time (never before the last one used), a
/// 42-bit sequence, random bits. `None` once the sequence is exhausted (pi-ai throws
/// `RangeError("UUIDv7 generator sequence exhausted")`).
pub fn uuid_v7() -> Option<String> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let mut bytes = random_bytes::<16>();
    let (timestamp, sequence) = {
        let mut state = V7.lock().unwrap_or_else(|e| e.into_inner());
        let timestamp = now.max(state.0);
        let sequence = match state.1 {
            None => bytes[1..6].iter().fold(0u64, |s, &b| (s << 8) | b as u64),
            Some(MAX_SEQUENCE) => return None,
            Some(s) => s + 1,
        };
        *state = (timestamp, Some(sequence));
        (timestamp, sequence)
    };
    bytes[..6].copy_from_slice(&timestamp.to_be_bytes()[2..]);
    bytes[6] = 0x70 | ((sequence >> 37) & 0x0f) as u8;
    bytes[7] = (sequence >> 29) as u8;
    bytes[8] = 0x80 | ((sequence >> 23) & 0x3f) as u8;
    bytes[9] = (sequence >> 15) as u8;
    bytes[10] = (sequence >> 7) as u8;
    bytes[11] = (((sequence & 0x7f) << 1) as u8) | (bytes[11] & 1);
    let mut out = String::with_capacity(36);
    for (i, part) in [0..4, 4..6, 6..8, 8..10, 10..16].into_iter().enumerate() {
        if i > 0 {
            out.push('-');
        }
        hex(&bytes[part], &mut out);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_are_8_hex_digits_and_vary() {
        let ids: std::collections::HashSet<String> = (0..2000).map(|_| short_id()).collect();
        assert!(ids.iter().all(|id| id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit())));
        assert!(ids.len() > 1990);
    }

    #[test]
    fn generate_id_skips_taken_ids_then_gives_a_uuid() {
        assert_eq!(generate_id(|_| false).len(), 8);
        let full = generate_id(|_| true);
        assert_eq!((full.len(), &full[14..15]), (36, "4"));
    }

    #[test]
    fn reserved_ids_skip_the_index_and_each_other() {
        let mut r = Reserved::default();
        let text = r.take(500, |id| id.starts_with('0'));
        let ids: Vec<&str> = text.split(' ').collect();
        assert!(ids.iter().all(|id| id.len() == 8 && !id.starts_with('0')));
        let distinct: std::collections::HashSet<&&str> = ids.iter().collect();
        assert_eq!(distinct.len(), 500);
        // Every short id taken: whole UUIDs, as `generateId` gives after 100 tries.
        assert!(r.take(2, |_| true).split(' ').all(|id| id.len() == 36));
        r.release(ids[0]);
        assert!(!r.contains(ids[0]) && r.contains(ids[1]));
    }

    #[test]
    fn uuid_v7_is_time_ordered_and_monotonic() {
        let ids: Vec<String> = (0..1000).map(|_| uuid_v7().unwrap()).collect();
        for w in ids.windows(2) {
            assert!(w[0] < w[1], "{} then {}", w[0], w[1]);
        }
        let id = &ids[0];
        assert_eq!((id.len(), &id[14..15]), (36, "7"));
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
        let ms = u64::from_str_radix(&id[..8], 16).unwrap() << 16 | u64::from_str_radix(&id[9..13], 16).unwrap();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
        assert!(now.abs_diff(ms) < 60_000);
    }
}
