//! The scanner: validates JSON text with the grammar of `JSON.parse`, iteratively, and finds
//! the spans of values; and walks over the members and elements of scanned values.

use crate::storage::json::value::{Kind, Value};

/// JSON.parse whitespace: tab, line feed, carriage return, space. Nothing else.
#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

#[inline]
fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && is_ws(s[i]) {
        i += 1;
    }
    i
}

/// Index of the first `"`, `\\` or control byte in `s`: a SIMD search for the two
/// delimiters, then a branch-free (vectorised) check of the bytes before it for control
/// bytes, which are rare (they make the line invalid).
#[inline]
pub(super) fn find_string_special(s: &[u8]) -> Option<usize> {
    let end = memchr::memchr2(b'"', b'\\', s);
    let region = &s[..end.unwrap_or(s.len())];
    if region.iter().fold(false, |acc, &b| acc | (b < 0x20)) {
        return region.iter().position(|&b| b < 0x20);
    }
    end
}

thread_local! {
    /// Where `scan_value_string` puts the long plain string values it meets while a loader
    /// collects them (`collect_plain`).
    static PLAIN_SINK: std::cell::RefCell<Option<Vec<(u32, u32)>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` (a scan of one line) and returns its result with the line's string values of
/// at least `limits::MAPPED_MIN` raw bytes that are plain (ASCII, no escape: the
/// bytes are the string's Latin-1 units): `(start, end)`, quotes included. Found by the
/// scan itself, in the same pass (no second read of the bytes). Keys are not values.
pub fn collect_plain<T>(f: impl FnOnce() -> T) -> (T, Vec<(u32, u32)>) {
    PLAIN_SINK.with(|sink| *sink.borrow_mut() = Some(Vec::new()));
    let out = f();
    let found = PLAIN_SINK.with(|sink| sink.borrow_mut().take()).unwrap_or_default();
    (out, found)
}

/// `scan_string` for a string in value position: records it with `collect_plain` when it
/// is long and plain.
#[inline]
fn scan_value_string(s: &[u8], i: usize) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    let (end, plain) = scan_string_blocks_flagged(s, i)?;
    #[cfg(not(all(target_arch = "x86_64", not(feature = "portable"))))]
    let (end, plain) = (scan_string_portable(s, i)?, true);
    if end - i >= crate::storage::limits::MAPPED_MIN + 2 && plain {
        let raw = &s[i + 1..end - 1];
        // The portable scanner does not tell: checked here (long strings only).
        #[cfg(not(all(target_arch = "x86_64", not(feature = "portable"))))]
        if !raw.is_ascii() || memchr::memchr(b'\\', raw).is_some() {
            return Some(end);
        }
        let _ = raw;
        PLAIN_SINK.with(|sink| {
            if let (Some(found), Ok(start), Ok(end)) = (&mut *sink.borrow_mut(), u32::try_from(i), u32::try_from(end)) {
                found.push((start, end));
            }
        });
    }
    Some(end)
}

/// Scans a string starting at the opening quote; returns the index after the closing quote.
pub fn scan_string(s: &[u8], i: usize) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    {
        scan_string_blocks(s, i)
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "portable"))))]
    {
        scan_string_portable(s, i)
    }
}

/// `scan_string` for x86-64 (SSE2, part of every x86-64 CPU): the first 16 bytes at once
/// (most strings are short keys and values without escapes), then 64 bytes at a time: the quote,
/// backslash and control-byte masks of a block, the escaped positions worked out from the
/// runs of backslashes (simdjson's method, carried across blocks), and the first quote
/// not escaped. An escape costs no branch of its own: code and tool output have one every
/// few dozen bytes, where a search for the next special byte mispredicts each time.
/// Compiled on every x86-64 build, so the tests compare it with the portable scanner also
/// when the `portable` feature makes `scan_string` take the other one.
#[cfg(target_arch = "x86_64")]
#[cfg_attr(feature = "portable", allow(dead_code))]
pub(super) fn scan_string_blocks(s: &[u8], start: usize) -> Option<usize> {
    scan_string_blocks_flagged(s, start).map(|(end, _)| end)
}

/// `scan_string_blocks`, and whether the string is plain: no backslash, no byte above
/// ASCII (computed from the same loads; unused flags cost nothing once inlined). Strings
/// of 16 bytes or fewer may say false.
#[cfg(target_arch = "x86_64")]
#[cfg_attr(feature = "portable", allow(dead_code))]
#[inline(always)]
pub(super) fn scan_string_blocks_flagged(s: &[u8], start: usize) -> Option<(usize, bool)> {
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8};
    debug_assert_eq!(s[start], b'"');
    let mut i = start + 1;
    if i + 16 <= s.len() {
        // SAFETY: SSE2 is part of x86_64; the load reads `s[i..i + 16]`.
        let (quote, other) = unsafe {
            let v = _mm_loadu_si128(s.as_ptr().add(i).cast::<__m128i>());
            let quote = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8))) as u32;
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
            (quote, (_mm_movemask_epi8(backslash) | _mm_movemask_epi8(control)) as u32)
        };
        let first = quote | other;
        if first != 0 && first & quote & first.wrapping_neg() != 0 {
            // The first special byte is a quote: the string ends there.
            return Some((i + first.trailing_zeros() as usize + 1, false));
        }
    }
    // Whether the first byte of the next block is escaped by a run of backslashes that
    // ends the block before.
    let mut carry = 0u64;
    // Any backslash or non-ASCII byte in the string so far.
    let mut impure = false;
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        i = unsafe { skip_clean_avx2(s, i) };
    }
    while i + 64 <= s.len() {
        if let Some(end) = string_block(s, i, &s[i..i + 64], &mut carry, &mut impure) {
            return end.map(|e| (e, !impure));
        }
        i += 64;
    }
    // The tail, padded with spaces (not special): a string that does not end in it has
    // no closing quote.
    let mut padded = [b' '; 64];
    padded[..s.len() - i].copy_from_slice(&s[i..]);
    string_block(s, i, &padded, &mut carry, &mut impure).flatten().map(|e| (e, !impure))
}

/// The first 64-byte block from `i` on that holds a quote, a backslash, a control byte or
/// a byte above ASCII (`i` itself if none of the blocks is whole): the long run of plain
/// bytes in a base64 image, skipped 64 bytes at a time with AVX2 (2.6 GB of images load
/// with a fraction of the SSE2 block loop's work; that loop takes the rest).
#[cfg(target_arch = "x86_64")]
#[cfg_attr(feature = "portable", allow(dead_code))]
#[target_feature(enable = "avx2")]
unsafe fn skip_clean_avx2(s: &[u8], mut i: usize) -> usize {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_min_epu8, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let control = _mm256_set1_epi8(0x1f);
    // High bit set where a byte is special, or above ASCII (the byte's own high bit).
    let special = |v: __m256i| {
        _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
            _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_min_epu8(v, control), v), v),
        )
    };
    while i + 64 <= s.len() {
        // SAFETY: `i + 64 <= s.len()`: both loads read inside `s`.
        let (a, b) = unsafe {
            (_mm256_loadu_si256(s.as_ptr().add(i).cast()), _mm256_loadu_si256(s.as_ptr().add(i + 32).cast()))
        };
        if _mm256_movemask_epi8(_mm256_or_si256(special(a), special(b))) != 0 {
            break;
        }
        i += 64;
    }
    i
}

/// Escape characters: 1 where `\\c` is a valid escape, 2 for `u` (four hex digits follow).
#[cfg(target_arch = "x86_64")]
const ESCAPES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut k = 0;
    let valid = *b"\"\\/bfnrt";
    while k < valid.len() {
        t[valid[k] as usize] = 1;
        k += 1;
    }
    t[b'u' as usize] = 2;
    t
};

/// One 64-byte block of `scan_string_blocks`: `block` holds `s[i..i + 64]` (padded at the
/// end of `s`). `Some(result)` when the string ends in it (or is invalid), `None` to go on.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn string_block(s: &[u8], i: usize, block: &[u8], carry: &mut u64, impure: &mut bool) -> Option<Option<usize>> {
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8};
    debug_assert_eq!(block.len(), 64);
    let (mut quote, mut backslash, mut control, mut high) = (0u64, 0u64, 0u64, 0u64);
    for k in 0..4 {
        // SAFETY: SSE2 is part of x86_64; `block` holds 64 bytes, so the load reads
        // `block[16 * k..16 * k + 16]`.
        unsafe {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            let mask = |m: __m128i| u64::from(_mm_movemask_epi8(m) as u16) << (16 * k);
            quote |= mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
            backslash |= mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
            control |= mask(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v));
            high |= mask(v);
        }
    }
    let escaped = if backslash == 0 && *carry == 0 { 0 } else { escaped_bytes(backslash, carry) };
    let stop = (quote & !escaped) | control;
    // Backslashes and non-ASCII bytes before the end (`stop & stop.wrapping_neg()` is the
    // first stop; every byte of the block when there is none).
    *impure |= (backslash | high) & (stop & stop.wrapping_neg()).wrapping_sub(1) != 0;
    // Every escape before the end must be a valid one.
    let mut escapes = if stop == 0 { escaped } else { escaped & stop.wrapping_sub(1) & !stop };
    while escapes != 0 {
        let k = escapes.trailing_zeros() as usize;
        match ESCAPES[block[k] as usize] {
            1 => {}
            2 if s.get(i + k + 1..i + k + 5).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) => {}
            _ => return Some(None),
        }
        escapes &= escapes - 1;
    }
    if stop == 0 {
        return None;
    }
    let k = stop.trailing_zeros() as usize;
    // The first stop is the closing quote, or a raw control byte (invalid).
    Some((control & (1 << k) == 0).then_some(i + k + 1))
}

/// The bytes of a 64-byte block escaped by a backslash, given its backslashes and whether
/// its first byte is escaped (`carry`, updated for the next block). A run of backslashes
/// escapes every other byte after its start, so the byte after a run of odd length is
/// escaped, and a backslash escaped by the one before it escapes nothing.
#[cfg(target_arch = "x86_64")]
#[inline]
fn escaped_bytes(backslash: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let backslash = backslash & !*carry;
    let follows_escape = (backslash << 1) | *carry;
    // Runs starting on an odd bit; adding the backslashes carries each run's start past its end.
    let odd_starts = backslash & !EVEN & !follows_escape;
    let (sequences_on_even, overflow) = odd_starts.overflowing_add(backslash);
    *carry = u64::from(overflow);
    let invert = sequences_on_even << 1;
    (EVEN ^ invert) & follows_escape
}

/// The length of the valid escape at `s[i] == '\\'`.
#[inline]
pub(super) fn escape_len(s: &[u8], i: usize) -> Option<usize> {
    match *s.get(i + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' if s.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) => Some(6),
        _ => None,
    }
}

/// `scan_string` with a SIMD search for the delimiters (other architectures, and x86-64
/// with the `portable` feature).
#[cfg_attr(all(target_arch = "x86_64", not(feature = "portable")), allow(dead_code))]
pub(super) fn scan_string_portable(s: &[u8], mut i: usize) -> Option<usize> {
    debug_assert_eq!(s[i], b'"');
    i += 1;
    loop {
        i += find_string_special(&s[i..])?;
        match s[i] {
            b'"' => return Some(i + 1),
            b'\\' => {
                let e = *s.get(i + 1)?;
                match e {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => {
                        let hex = s.get(i + 2..i + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        i += 6;
                    }
                    _ => return None,
                }
            }
            _ => return None, // raw control character
        }
    }
}

fn scan_digits(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// Scans a number; returns the index after it.
pub(super) fn scan_number(s: &[u8], mut i: usize) -> Option<usize> {
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    match s.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = scan_digits(s, i + 1),
        _ => return None,
    }
    if s.get(i) == Some(&b'.') {
        let j = scan_digits(s, i + 1);
        if j == i + 1 {
            return None;
        }
        i = j;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let j = scan_digits(s, i);
        if j == i {
            return None;
        }
        i = j;
    }
    Some(i)
}

fn scan_literal(s: &[u8], i: usize, lit: &[u8]) -> Option<usize> {
    if s.get(i..i + lit.len())? == lit { Some(i + lit.len()) } else { None }
}

/// Scans one value (no surrounding whitespace) starting at `i`.
pub fn scan_value(s: &[u8], i: usize) -> Option<Value> {
    let start = i;
    let kind = match *s.get(i)? {
        b'{' => Kind::Object,
        b'[' => Kind::Array,
        b'"' => Kind::String,
        b't' => Kind::True,
        b'f' => Kind::False,
        b'n' => Kind::Null,
        b'-' | b'0'..=b'9' => Kind::Number,
        _ => return None,
    };
    let end = match kind {
        Kind::String => scan_value_string(s, i)?,
        Kind::Number => scan_number(s, i)?,
        Kind::True => scan_literal(s, i, b"true")?,
        Kind::False => scan_literal(s, i, b"false")?,
        Kind::Null => scan_literal(s, i, b"null")?,
        Kind::Array | Kind::Object => scan_container(s, i)?,
    };
    Some(Value { kind, start, end })
}

/// Iterative scan of a nested object/array starting at `i`.
fn scan_container(s: &[u8], mut i: usize) -> Option<usize> {
    let mut stack: Vec<u8> = Vec::new();
    // `expect_value`: the next token must be a value (after `[`, `:` or `,`).
    'value: loop {
        i = skip_ws(s, i);
        match *s.get(i)? {
            b'{' => {
                i = skip_ws(s, i + 1);
                if s.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    stack.push(b'{');
                    i = scan_key_colon(s, i)?;
                    continue 'value;
                }
            }
            b'[' => {
                i = skip_ws(s, i + 1);
                if s.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    stack.push(b'[');
                    continue 'value;
                }
            }
            b'"' => i = scan_value_string(s, i)?,
            b't' => i = scan_literal(s, i, b"true")?,
            b'f' => i = scan_literal(s, i, b"false")?,
            b'n' => i = scan_literal(s, i, b"null")?,
            b'-' | b'0'..=b'9' => i = scan_number(s, i)?,
            _ => return None,
        }
        // A value ended: close containers or move to the next element.
        loop {
            let Some(&top) = stack.last() else { return Some(i) };
            i = skip_ws(s, i);
            match *s.get(i)? {
                b',' => {
                    i += 1;
                    if top == b'{' {
                        i = scan_key_colon(s, skip_ws(s, i))?;
                    }
                    continue 'value;
                }
                b'}' if top == b'{' => {
                    stack.pop();
                    i += 1;
                }
                b']' if top == b'[' => {
                    stack.pop();
                    i += 1;
                }
                _ => return None,
            }
        }
    }
}

fn scan_key_colon(s: &[u8], i: usize) -> Option<usize> {
    if s.get(i) != Some(&b'"') {
        return None;
    }
    let i = skip_ws(s, scan_string(s, i)?);
    if s.get(i) != Some(&b':') {
        return None;
    }
    Some(i + 1)
}

/// Validates the object starting at `i` in one pass. For each member, `value(raw_key, at)`
/// must scan the value starting at `at` (so callers can look inside chosen members
/// without a second pass). Returns the index after the closing brace.
pub fn scan_object_members<'a>(
    s: &'a [u8],
    i: usize,
    mut value: impl FnMut(&'a [u8], usize) -> Option<Value>,
) -> Option<usize> {
    debug_assert_eq!(s[i], b'{');
    let mut i = skip_ws(s, i + 1);
    if s.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        if s.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = scan_string(s, i)?;
        let raw_key = &s[i + 1..key_end - 1];
        i = skip_ws(s, key_end);
        if s.get(i) != Some(&b':') {
            return None;
        }
        let v = value(raw_key, skip_ws(s, i + 1))?;
        i = skip_ws(s, v.end);
        match s.get(i)? {
            b',' => i = skip_ws(s, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Skips JSON.parse whitespace from `i`.
pub fn skip_whitespace(s: &[u8], i: usize) -> usize {
    skip_ws(s, i)
}

/// Parses a whole JSON text the way `JSON.parse` does: one value with optional whitespace.
pub fn parse_document(s: &[u8]) -> Option<Value> {
    let i = skip_ws(s, 0);
    let v = scan_value(s, i)?;
    if skip_ws(s, v.end) != s.len() {
        return None;
    }
    Some(v)
}

/// Calls `f(raw_key, value)` for each member of the object at `obj` (a scanned, valid object).
/// `raw_key` is the key's text between the quotes, still escaped.
pub fn for_each_member<'a>(s: &'a [u8], obj: Value, mut f: impl FnMut(&'a [u8], Value)) {
    debug_assert_eq!(obj.kind, Kind::Object);
    let mut i = skip_ws(s, obj.start + 1);
    if s[i] == b'}' {
        return;
    }
    loop {
        let key_end = scan_string(s, i).expect("validated");
        let raw_key = &s[i + 1..key_end - 1];
        i = skip_ws(s, key_end) + 1; // past ':'
        i = skip_ws(s, i);
        let v = scan_value(s, i).expect("validated");
        f(raw_key, v);
        i = skip_ws(s, v.end);
        if s[i] == b'}' {
            return;
        }
        i = skip_ws(s, i + 1); // past ','
    }
}

/// Calls `f(value)` for each element of the array at `arr` (a scanned, valid array).
pub fn for_each_element(s: &[u8], arr: Value, mut f: impl FnMut(Value)) {
    debug_assert_eq!(arr.kind, Kind::Array);
    let mut i = skip_ws(s, arr.start + 1);
    if s[i] == b']' {
        return;
    }
    loop {
        let v = scan_value(s, i).expect("validated");
        f(v);
        i = skip_ws(s, v.end);
        if s[i] == b']' {
            return;
        }
        i = skip_ws(s, i + 1);
    }
}
