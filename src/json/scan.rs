//! JSON scanning with exactly the grammar of ECMAScript `JSON.parse`.
//!
//! The core never builds a value tree for a whole entry. It validates a line,
//! finds the byte spans of the few top-level fields it needs, and leaves the
//! rest as raw text for JS to `JSON.parse` on demand. Scanning is iterative,
//! so nesting depth is unbounded (as in V8) and no input can overflow the stack.

/// What kind of JSON value starts at a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    False,
    True,
    Number,
    String,
    Array,
    Object,
}

/// A scanned value: its kind and byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

impl Value {
    pub fn text<'a>(&self, src: &'a [u8]) -> &'a [u8] {
        &src[self.start..self.end]
    }

    /// ECMAScript truthiness of the value (`NaN` cannot come from JSON).
    pub fn truthy(&self, src: &[u8]) -> bool {
        match self.kind {
            Kind::Null | Kind::False => false,
            Kind::True | Kind::Array | Kind::Object => true,
            Kind::String => self.end - self.start > 2,
            Kind::Number => number_value(self.text(src)) != 0.0,
        }
    }
}

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
fn find_string_special(s: &[u8]) -> Option<usize> {
    let end = memchr::memchr2(b'"', b'\\', s);
    let region = &s[..end.unwrap_or(s.len())];
    if region.iter().fold(false, |acc, &b| acc | (b < 0x20)) {
        return region.iter().position(|&b| b < 0x20);
    }
    end
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
fn scan_string_blocks(s: &[u8], start: usize) -> Option<usize> {
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
            return Some(i + first.trailing_zeros() as usize + 1);
        }
    }
    // Whether the first byte of the next block is escaped by a run of backslashes that
    // ends the block before.
    let mut carry = 0u64;
    while i + 64 <= s.len() {
        if let Some(end) = string_block(s, i, &s[i..i + 64], &mut carry) {
            return end;
        }
        i += 64;
    }
    // The tail, padded with spaces (not special): a string that does not end in it has
    // no closing quote.
    let mut padded = [b' '; 64];
    padded[..s.len() - i].copy_from_slice(&s[i..]);
    string_block(s, i, &padded, &mut carry).flatten()
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
fn string_block(s: &[u8], i: usize, block: &[u8], carry: &mut u64) -> Option<Option<usize>> {
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8};
    debug_assert_eq!(block.len(), 64);
    let (mut quote, mut backslash, mut control) = (0u64, 0u64, 0u64);
    for k in 0..4 {
        // SAFETY: SSE2 is part of x86_64; `block` holds 64 bytes, so the load reads
        // `block[16 * k..16 * k + 16]`.
        unsafe {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            let mask = |m: __m128i| u64::from(_mm_movemask_epi8(m) as u16) << (16 * k);
            quote |= mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
            backslash |= mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
            control |= mask(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v));
        }
    }
    let escaped = if backslash == 0 && *carry == 0 { 0 } else { escaped_bytes(backslash, carry) };
    let stop = (quote & !escaped) | control;
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
fn escape_len(s: &[u8], i: usize) -> Option<usize> {
    match *s.get(i + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' if s.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) => Some(6),
        _ => None,
    }
}

/// `scan_string` with a SIMD search for the delimiters (other architectures, and x86-64
/// with the `portable` feature).
#[cfg_attr(all(target_arch = "x86_64", not(feature = "portable")), allow(dead_code))]
fn scan_string_portable(s: &[u8], mut i: usize) -> Option<usize> {
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
fn scan_number(s: &[u8], mut i: usize) -> Option<usize> {
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
        Kind::String => scan_string(s, i)?,
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
            b'"' => i = scan_string(s, i)?,
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

/// The f64 value of a validated number token (same rounding as JS).
pub fn number_value(raw: &[u8]) -> f64 {
    // A validated JSON number is ASCII and a valid Rust float literal.
    std::str::from_utf8(raw).ok().and_then(|t| t.parse::<f64>().ok()).unwrap_or(f64::NAN)
}

/// Decodes the escaped contents of a JSON string into UTF-16 code units (invalid UTF-8
/// decoded lossily first).
pub fn decode_utf16(raw: &[u8]) -> Vec<u16> {
    let text = String::from_utf8_lossy(raw);
    let mut out = Vec::new();
    decode_utf16_into(text.as_bytes(), &mut out);
    out
}

/// Decodes the raw contents of a valid JSON string (valid UTF-8) into UTF-16 code units,
/// as `JSON.parse` does: escapes give their unit (lone surrogates included).
pub fn decode_utf16_into(raw: &[u8], out: &mut Vec<u16>) {
    // Each byte gives at most one unit (a 4-byte character gives two), so this covers
    // the whole string and the 16 units the block copy may write past its end.
    out.reserve(raw.len() + 16);
    let mut i = 0;
    loop {
        i = copy_plain::<u16, false>(raw, i, out);
        let Some(&b) = raw.get(i) else { return };
        if b == b'\\' {
            let (unit, len) = escape_unit(raw, i);
            out.push(unit);
            i += len;
        } else {
            let (c, len) = utf8_char(raw, i);
            push_char(c, out);
            i += len;
        }
    }
}

/// `decode_utf16_into` for strings whose code units all fit in a byte (Latin-1). At the
/// first unit above 0xFF it stops and returns `Err(at)`: `out` then holds the units of
/// `raw[..at]`, and `raw[at..]` starts with that unit's escape or character.
pub fn decode_latin1_into(raw: &[u8], out: &mut Vec<u8>) -> Result<(), usize> {
    out.reserve(raw.len() + 16);
    let mut i = 0;
    loop {
        i = copy_plain::<u8, false>(raw, i, out);
        let Some(&b) = raw.get(i) else { return Ok(()) };
        let (unit, len) = if b == b'\\' {
            let (unit, len) = escape_unit(raw, i);
            (u32::from(unit), len)
        } else {
            utf8_char(raw, i)
        };
        let Ok(byte) = u8::try_from(unit) else { return Err(i) };
        out.push(byte);
        i += len;
    }
}

/// A decoded string, as the narrowest JS string that holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

impl Decoded {
    /// Decodes the raw contents of a valid JSON string (valid UTF-8).
    pub fn new(raw: &[u8]) -> Decoded {
        let mut latin1 = Vec::new();
        match decode_latin1_into(raw, &mut latin1) {
            Ok(()) => Decoded::Latin1(latin1),
            Err(stop) => {
                let mut units: Vec<u16> = Vec::with_capacity(raw.len());
                units.extend(latin1.iter().map(|&b| u16::from(b)));
                decode_utf16_into(&raw[stop..], &mut units);
                Decoded::Utf16(units)
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        match self {
            Decoded::Latin1(b) => b.len(),
            Decoded::Utf16(u) => u.len() * 2,
        }
    }
}

/// A code unit type the decoders write: ASCII bytes widen to it.
trait Unit: Copy {
    fn ascii(b: u8) -> Self;
    /// Stores the 16 bytes of `v` as 16 units at `dst`.
    ///
    /// # Safety
    /// `dst` is writable for 16 units.
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    unsafe fn store16(v: std::arch::x86_64::__m128i, dst: *mut Self);
}

impl Unit for u8 {
    fn ascii(b: u8) -> Self {
        b
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    unsafe fn store16(v: std::arch::x86_64::__m128i, dst: *mut Self) {
        // SAFETY: the caller guarantees 16 writable bytes at `dst`.
        unsafe { std::arch::x86_64::_mm_storeu_si128(dst.cast(), v) }
    }
}

impl Unit for u16 {
    fn ascii(b: u8) -> Self {
        u16::from(b)
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    unsafe fn store16(v: std::arch::x86_64::__m128i, dst: *mut Self) {
        use std::arch::x86_64::{_mm_setzero_si128, _mm_storeu_si128, _mm_unpackhi_epi8, _mm_unpacklo_epi8};
        // SAFETY: the caller guarantees 16 writable units at `dst`; SSE2 is part of x86_64.
        unsafe {
            let zero = _mm_setzero_si128();
            _mm_storeu_si128(dst.cast(), _mm_unpacklo_epi8(v, zero));
            _mm_storeu_si128(dst.add(8).cast(), _mm_unpackhi_epi8(v, zero));
        }
    }
}

/// Copies the ASCII bytes from `raw[i]` up to the next backslash or non-ASCII byte (and,
/// with `IN_JSON`, quote or control byte: `raw` is JSON text and the string's end is not
/// known yet) as units to `out`; returns the index of that byte (`raw.len()` if none).
#[inline]
fn copy_plain<U: Unit, const IN_JSON: bool>(raw: &[u8], i: usize, out: &mut Vec<U>) -> usize {
    // x86-64: 16 bytes at a time while 16 are left; the rest (and everything elsewhere, or
    // with the `portable` feature) a byte at a time below.
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    let i = {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        };
        let mut i = i;
        while i + 16 <= raw.len() {
            // 16 bytes are loaded and stored whatever the mask says; only the plain ones
            // are kept (the length moves past them alone).
            if out.capacity() - out.len() < 16 {
                out.reserve(16);
            }
            // SAFETY: SSE2 is part of x86_64; the load reads `raw[i..i + 16]`, and the
            // store writes 16 units of the spare capacity reserved just above.
            let mask = unsafe {
                let v = _mm_loadu_si128(raw.as_ptr().add(i).cast::<__m128i>());
                U::store16(v, out.as_mut_ptr().add(out.len()));
                let mut stop = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
                if IN_JSON {
                    let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
                    // Bytes <= 0x1f (unsigned): min(v, 0x1f) == v.
                    let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
                    stop = _mm_or_si128(stop, _mm_or_si128(quote, control));
                }
                // A byte's high bit is set exactly when it is not ASCII.
                (_mm_movemask_epi8(stop) | _mm_movemask_epi8(v)) as u32
            };
            let n = if mask == 0 { 16 } else { mask.trailing_zeros() as usize };
            // SAFETY: the first `n` of the 16 units written above are initialised.
            unsafe { out.set_len(out.len() + n) };
            i += n;
            if mask != 0 {
                return i;
            }
        }
        i
    };
    let end = raw[i..]
        .iter()
        .position(|&c| c == b'\\' || c >= 0x80 || (IN_JSON && (c == b'"' || c < 0x20)))
        .map_or(raw.len(), |p| i + p);
    out.extend(raw[i..end].iter().map(|&b| U::ascii(b)));
    end
}

/// `scan_string` that also decodes: the string at `s[start] == '"'` is appended to
/// `latin1` when all its code units fit in a byte, to `utf16` otherwise (the other left
/// as it was). Returns the index after the closing quote and whether it went to `utf16`;
/// `None` (both left as they were) where `scan_string` fails.
pub fn scan_decode(s: &[u8], start: usize, latin1: &mut Vec<u8>, utf16: &mut Vec<u16>) -> Option<(usize, bool)> {
    debug_assert_eq!(s[start], b'"');
    let at = latin1.len();
    let mut i = start + 1;
    loop {
        i = copy_plain::<u8, true>(s, i, latin1);
        let unit = match s.get(i) {
            Some(b'"') => return Some((i + 1, false)),
            Some(b'\\') => match escape_len(s, i) {
                Some(len) => (u32::from(escape_unit(s, i).0), len),
                None => break,
            },
            Some(&c) if c >= 0x80 => utf8_char(s, i),
            _ => break, // a control byte, or no closing quote
        };
        if let Ok(byte) = u8::try_from(unit.0) {
            latin1.push(byte);
            i += unit.1;
            continue;
        }
        // A unit above 0xFF: widen what is decoded so far and go on in UTF-16.
        let at16 = utf16.len();
        utf16.extend(latin1[at..].iter().map(|&b| u16::from(b)));
        latin1.truncate(at);
        match scan_decode_utf16(s, i, utf16) {
            Some(end) => return Some((end, true)),
            None => {
                utf16.truncate(at16);
                return None;
            }
        }
    }
    latin1.truncate(at);
    None
}

/// The UTF-16 part of `scan_decode`, from `s[i]` inside the string.
fn scan_decode_utf16(s: &[u8], mut i: usize, out: &mut Vec<u16>) -> Option<usize> {
    loop {
        i = copy_plain::<u16, true>(s, i, out);
        match *s.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => {
                let len = escape_len(s, i)?;
                out.push(escape_unit(s, i).0);
                i += len;
            }
            c if c >= 0x80 => {
                let (c, len) = utf8_char(s, i);
                push_char(c, out);
                i += len;
            }
            _ => return None, // a control byte
        }
    }
}

/// Appends a character's UTF-16 units.
#[inline]
fn push_char(c: u32, out: &mut Vec<u16>) {
    if c >= 0x1_0000 {
        let c = c - 0x1_0000;
        out.extend_from_slice(&[0xd800 | (c >> 10) as u16, 0xdc00 | (c & 0x3ff) as u16]);
    } else {
        out.push(c as u16);
    }
}

/// The character of the UTF-8 sequence at `raw[i]` and its length; U+FFFD and 1 for an
/// invalid sequence (callers pass valid UTF-8).
#[inline]
fn utf8_char(raw: &[u8], i: usize) -> (u32, usize) {
    let b0 = u32::from(raw[i]);
    let (len, mut c) = match b0 {
        0xc2..=0xdf => (2, b0 & 0x1f),
        0xe0..=0xef => (3, b0 & 0x0f),
        0xf0..=0xf4 => (4, b0 & 0x07),
        _ => return (0xfffd, 1),
    };
    let Some(rest) = raw.get(i + 1..i + len) else { return (0xfffd, 1) };
    for &b in rest {
        if b & 0xc0 != 0x80 {
            return (0xfffd, 1);
        }
        c = (c << 6) | u32::from(b & 0x3f);
    }
    (c, len)
}

/// The code unit of the escape at `raw[at]` (a backslash) and the escape's length in
/// bytes. Scanned JSON strings only hold valid escapes; a truncated one gives U+FFFD and
/// the rest of the text, never a panic.
#[inline]
pub fn escape_unit(raw: &[u8], at: usize) -> (u16, usize) {
    match raw.get(at + 1) {
        Some(b'b') => (0x08, 2),
        Some(b'f') => (0x0c, 2),
        Some(b'n') => (0x0a, 2),
        Some(b'r') => (0x0d, 2),
        Some(b't') => (0x09, 2),
        Some(b'u') => match raw.get(at + 2..at + 6) {
            Some(hex) => {
                let unit = hex.iter().try_fold(0u16, |u, &c| Some(u << 4 | (c as char).to_digit(16)? as u16));
                (unit.unwrap_or(0xfffd), 6)
            }
            None => (0xfffd, raw.len() - at),
        },
        Some(&other) => (u16::from(other), 2), // `"`, `\\` and `/`
        None => (0xfffd, 1),
    }
}

/// Decodes a JSON string's escaped contents. `Err` carries the code units when the
/// string holds a lone surrogate (not representable as a Rust `String`).
pub fn decode_string(raw: &[u8]) -> Result<String, Vec<u16>> {
    if !raw.contains(&b'\\') {
        return Ok(String::from_utf8_lossy(raw).into_owned());
    }
    let units = decode_utf16(raw);
    String::from_utf16(&units).map_err(|_| units)
}

/// `JSON.stringify` of a string given as UTF-16 code units (well-formed stringify:
/// lone surrogates become lowercase `\udxxx`).
pub fn stringify_utf16(units: &[u16], out: &mut String) {
    out.push('"');
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        match u {
            0x22 => out.push_str("\\\""),
            0x5c => out.push_str("\\\\"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            0x0a => out.push_str("\\n"),
            0x0d => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            0..=0x1f => out.push_str(&format!("\\u{u:04x}")),
            0xd800..=0xdbff if i + 1 < units.len() && (0xdc00..=0xdfff).contains(&units[i + 1]) => {
                let c = 0x10000 + (((u as u32) - 0xd800) << 10) + ((units[i + 1] as u32) - 0xdc00);
                out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                i += 1;
            }
            0xd800..=0xdfff => out.push_str(&format!("\\u{u:04x}")),
            _ => out.push(char::from_u32(u as u32).unwrap_or('\u{fffd}')),
        }
        i += 1;
    }
    out.push('"');
}

/// True when `JSON.stringify(JSON.parse(text)) === text` for a valid JSON text, i.e. the
/// bytes can be written as they are instead of being re-serialised.
///
/// One pass over the tokens. Conservative: objects with integer-like keys count as
/// non-canonical (V8 would order them first).
pub fn is_canonical(s: &[u8]) -> bool {
    parse_document(s).is_some() && canonical_scan(s, |_, _, _| {})
}

/// `is_canonical` for a text already known to be valid JSON (a loaded entry line), which
/// also reports each top-level member of an object as (raw key, value start, value end).
pub fn canonical_members<'a>(s: &'a [u8], mut member: impl FnMut(&'a [u8], usize, usize)) -> bool {
    canonical_scan(s, &mut member)
}

/// The token pass of `is_canonical` over a valid JSON text.
fn canonical_scan<'a>(s: &'a [u8], mut member: impl FnMut(&'a [u8], usize, usize)) -> bool {
    // Per open container: the keys seen so far (objects) or `None` (arrays).
    let mut stack: Vec<Option<Keys>> = Vec::new();
    let mut expect_key = false;
    // The top-level member being read: its key and where its value starts.
    let mut top: Option<(&'a [u8], usize)> = None;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b' ' | b'\t' | b'\n' | b'\r' => return false, // JSON.stringify writes no whitespace
            b'{' => {
                stack.push(Some(Keys::default()));
                expect_key = true;
                i += 1;
            }
            b'[' => {
                stack.push(None);
                expect_key = false;
                i += 1;
            }
            b'}' | b']' => {
                if stack.len() == 1
                    && let Some((k, start)) = top.take()
                {
                    member(k, start, i);
                }
                stack.pop();
                expect_key = false;
                i += 1;
            }
            b',' => {
                if stack.len() == 1
                    && let Some((k, start)) = top.take()
                {
                    member(k, start, i);
                }
                expect_key = matches!(stack.last(), Some(Some(_)));
                i += 1;
            }
            b':' => {
                expect_key = false;
                i += 1;
                if stack.len() == 1
                    && let Some((_, start)) = &mut top
                {
                    *start = i;
                }
            }
            b'"' => {
                let Some(end) = scan_string(s, i) else { return false };
                let raw = &s[i + 1..end - 1];
                if !canonical_string(raw) {
                    return false;
                }
                if expect_key {
                    let Some(Some(keys)) = stack.last_mut() else { return false };
                    if is_array_index(raw) || !keys.insert(raw) {
                        return false;
                    }
                    if stack.len() == 1 {
                        top = Some((raw, end));
                    }
                    expect_key = false;
                }
                i = end;
            }
            b't' | b'n' => i += 4,
            b'f' => i += 5,
            _ => {
                let Some(end) = scan_number(s, i) else { return false };
                if !canonical_number(&s[i..end]) {
                    return false;
                }
                i = end;
            }
        }
    }
    true
}

/// The keys of one object, for duplicate detection (a set once there are many).
#[derive(Default)]
struct Keys<'a> {
    few: Vec<&'a [u8]>,
    many: Option<std::collections::HashSet<&'a [u8]>>,
}

impl<'a> Keys<'a> {
    /// False when `k` was already present.
    fn insert(&mut self, k: &'a [u8]) -> bool {
        if let Some(set) = &mut self.many {
            return set.insert(k);
        }
        if self.few.contains(&k) {
            return false;
        }
        self.few.push(k);
        if self.few.len() > 16 {
            self.many = Some(self.few.drain(..).collect());
        }
        true
    }
}

/// Keys that V8 orders first (array indices): "0" or [1-9][0-9]* below 2^32 - 1.
fn is_array_index(k: &[u8]) -> bool {
    if k.is_empty() || !k.iter().all(u8::is_ascii_digit) || (k.len() > 1 && k[0] == b'0') {
        return false;
    }
    k.len() <= 10 && std::str::from_utf8(k).ok().and_then(|t| t.parse::<u64>().ok()).is_some_and(|n| n < 4_294_967_295)
}

fn canonical_number(raw: &[u8]) -> bool {
    let simple = raw.len() <= 15 && raw.iter().enumerate().all(|(i, b)| b.is_ascii_digit() || (i == 0 && *b == b'-'));
    if simple {
        // Plain integers are canonical unless they have a leading zero or are -0.
        let digits = if raw[0] == b'-' { &raw[1..] } else { raw };
        return !(digits.len() > 1 && digits[0] == b'0') && raw != b"-0";
    }
    let v = number_value(raw);
    if !v.is_finite() {
        return false; // Infinity serialises as null
    }
    let mut buf = ryu_js::Buffer::new();
    buf.format(v).as_bytes() == raw
}

fn canonical_string(raw: &[u8]) -> bool {
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &raw[i..]) {
        i += at;
        match raw[i + 1] {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
            b'u' => {
                let hex = &raw[i + 2..i + 6];
                let u = u16::from_str_radix(std::str::from_utf8(hex).unwrap_or("x"), 16).unwrap_or(0);
                let lower = hex.iter().all(|b| !b.is_ascii_uppercase());
                let short = matches!(u, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
                let control = u < 0x20 && !short;
                let lone_high = (0xd800..=0xdbff).contains(&u) && !next_is_low_escape(raw, i + 6);
                let lone_low = (0xdc00..=0xdfff).contains(&u);
                if !lower || !(control || lone_high || lone_low) {
                    return false;
                }
                i += 6;
            }
            _ => return false, // `\/` is not produced by JSON.stringify
        }
    }
    true
}

fn next_is_low_escape(raw: &[u8], i: usize) -> bool {
    raw.get(i..i + 2) == Some(b"\\u")
        && raw
            .get(i + 2..i + 6)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u16::from_str_radix(h, 16).ok())
            .is_some_and(|u| (0xdc00..=0xdfff).contains(&u))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> bool {
        parse_document(s.as_bytes()).is_some()
    }

    #[test]
    fn accepts_what_json_parse_accepts() {
        for s in [
            "{}",
            " {} ",
            "\t[1,2]\r",
            "null",
            "0",
            "-0",
            "1e400",
            "1E+2",
            "-0.5e-3",
            "\"\\ud800\"",
            "\"\\u00e9\"",
            "{\"a\":{\"b\":[true,false,null]}}",
            "[[],{}]",
            "\"/\\/\"",
        ] {
            assert!(ok(s), "{s}");
        }
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for s in [
            "",
            " ",
            "{",
            "}",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "tru",
            "nul",
            "\"\\x\"",
            "\"a\tb\"",
            "{a:1}",
            "[1 2]",
            "\u{feff}{}",
            "NaN",
            "Infinity",
            "{} x",
            "\"\\u12g4\"",
            "[\"a\"]]",
        ] {
            assert!(!ok(s), "{s:?}");
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 200_000;
        let s = "[".repeat(depth) + &"]".repeat(depth);
        assert!(ok(&s));
        let bad = "[".repeat(depth) + &"]".repeat(depth - 1);
        assert!(!ok(&bad));
    }

    #[test]
    fn canonical_members_are_the_top_level_ones() {
        let line = r#"{"id":"a","m":{"id":"x","parentId":[1,{"k":2}]},"parentId":null,"n":-1.5,"t":true,"s":"q\"z"}"#;
        let mut got = Vec::new();
        assert!(canonical_members(line.as_bytes(), |k, a, b| got
            .push((String::from_utf8(k.to_vec()).unwrap(), line[a..b].to_string()))));
        let want = [
            ("id", r#""a""#),
            ("m", r#"{"id":"x","parentId":[1,{"k":2}]}"#),
            ("parentId", "null"),
            ("n", "-1.5"),
            ("t", "true"),
            ("s", r#""q\"z""#),
        ];
        assert_eq!(got, want.map(|(k, v)| (k.to_string(), v.to_string())));
        assert!(!canonical_members(br#"{"a":1, "b":2}"#, |_, _, _| {}));
        assert!(!canonical_members(br#"{"a":1,"a":2}"#, |_, _, _| {}));
    }

    #[test]
    fn canonical_detection() {
        for s in [
            "{\"a\":1,\"b\":[1,2,{\"c\":\"x\"}]}",
            "{}",
            "[]",
            "{\"a\":\"\\ud800\"}",
            "{\"a\":\"\\u0001\\n\"}",
            "1e+21",
            "0.1",
            "-5",
            "{\"a\":null}",
        ] {
            assert!(is_canonical(s.as_bytes()), "{s}");
        }
        for s in [
            "{\"a\": 1}",
            "{\"a\":1.0}",
            "{\"a\":1e2}",
            "{\"a\":-0}",
            "{\"a\":1,\"a\":2}",
            "{\"b\":1,\"2\":0}",
            "{\"a\":\"\\u00e9\"}",
            "{\"a\":\"\\/\"}",
            "{\"a\":\"\\uD800\"}",
            "{\"a\":\"\\ud83d\\ude00\"}",
            "[1, 2]",
            "{} ",
            "{\"a\":1E400}",
        ] {
            assert!(!is_canonical(s.as_bytes()), "{s}");
        }
    }

    #[test]
    fn members_and_truthiness() {
        let s = br#"{"a":"","b":0,"c":-0.0,"d":"x","e":[],"a":1}"#;
        let v = parse_document(s).unwrap();
        let mut seen = Vec::new();
        for_each_member(s, v, |k, v| seen.push((String::from_utf8_lossy(k).into_owned(), v.truthy(s))));
        let want: Vec<(String, bool)> =
            [("a", false), ("b", false), ("c", false), ("d", true), ("e", true), ("a", true)]
                .iter()
                .map(|(k, b)| (k.to_string(), *b))
                .collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn string_round_trip() {
        let mut out = String::new();
        stringify_utf16(&decode_utf16(br"a\u00e9\ud800\ud83d\ude00\u0001\/"), &mut out);
        assert_eq!(out, "\"aé\\ud800😀\\u0001/\"");
        assert!(decode_string(br"\ud800").is_err());
        assert_eq!(decode_string(br"x\u0041").unwrap(), "xA");
    }
}

#[cfg(test)]
mod swar_tests {
    use super::*;

    /// `scan_string` one byte at a time, straight from the grammar: the reference every
    /// scanner compiled for the target is compared with.
    fn naive_scan(s: &[u8], start: usize) -> Option<usize> {
        let mut i = start + 1;
        loop {
            match *s.get(i)? {
                b'"' => return Some(i + 1),
                b'\\' => i += escape_len(s, i)?,
                c if c < 0x20 => return None,
                _ => i += 1,
            }
        }
    }

    /// `scan_string` (the path this build takes), and each scanner compiled here, against
    /// `naive_scan`: on x86-64 both the SSE2 blocks and the portable scanner, whichever the
    /// `portable` feature makes `scan_string` use.
    fn check_scanners(bytes: &[u8], start: usize) {
        let want = naive_scan(bytes, start);
        let text = || String::from_utf8_lossy(&bytes[start..]).into_owned();
        assert_eq!(scan_string(bytes, start), want, "scan_string {:?}", text());
        assert_eq!(scan_string_portable(bytes, start), want, "portable {:?}", text());
        #[cfg(target_arch = "x86_64")]
        assert_eq!(scan_string_blocks(bytes, start), want, "blocks {:?}", text());
    }

    #[test]
    fn scan_string_matches_naive() {
        let mut seed = 0x2545f4914f6cdd1du64;
        let pieces: [&[u8]; 12] = [
            b"a",
            b"bc",
            b"\\n",
            b"\\\"",
            b"\\u00e9",
            b"\\uZZ12",
            b"\\q",
            b"\x01",
            b"\xc3\xa9",
            b"\"",
            b"\\",
            b"xxxxxxxxxxxxxxx",
        ];
        for _ in 0..200_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let n = (seed % 24) as usize;
            let mut bytes = vec![b'"'];
            let mut r = seed;
            for _ in 0..n {
                r = r.rotate_left(7) ^ 0x9e37_79b9_7f4a_7c15;
                // Mostly plain runs, so the 16-byte blocks and the tail both get exercised.
                let k = (r % 40) as usize;
                bytes.extend_from_slice(if k < 12 { pieces[k] } else { pieces[11] });
            }
            check_scanners(&bytes, 0);
        }
    }

    /// Long strings (the 64-byte blocks): runs of backslashes of every length, across
    /// block edges, escaped quotes, `\u` escapes cut by the end of the text, control
    /// bytes, no closing quote; text after the string; against the naive scanner.
    #[test]
    fn long_strings_scan_as_naive() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..300_000 {
            let mut bytes = b"{\"k\":".to_vec();
            let start = bytes.len();
            bytes.push(b'"');
            let target = (next() % 400) as usize;
            while bytes.len() < start + target {
                let r = next();
                match r % 10 {
                    0..=3 => bytes.extend(std::iter::repeat_n(b'a' + (r >> 8) as u8 % 26, 1 + (r >> 16) as usize % 70)),
                    4..=6 => {
                        // A run of backslashes, then what follows it.
                        bytes.extend(std::iter::repeat_n(b'\\', 1 + (r >> 8) as usize % 9));
                        bytes.extend_from_slice(
                            [&b"n"[..], b"\"", b"u00e9", b"u12", b"q", b"/", b"\x01", b"x"][(r >> 20) as usize % 8],
                        );
                    }
                    7 => bytes.push([0x01, 0x1f, b'\t', 0xc3, 0xa9][(r >> 8) as usize % 5]),
                    _ => bytes.extend_from_slice("é😀 ".as_bytes()),
                }
            }
            let r = next();
            if r % 4 != 0 {
                bytes.push(b'"');
            }
            if r % 3 == 0 {
                bytes.extend_from_slice(b",\"more\":\"text\\\" after\"}");
            }
            check_scanners(&bytes, start);
        }
    }

    /// The decoders against a plain one (runs between escapes via `str`), on random mixes
    /// of ASCII runs of every length, escapes and 2-, 3- and 4-byte characters.
    #[test]
    fn block_decoders_match_a_plain_decoder() {
        fn plain(raw: &[u8]) -> Vec<u16> {
            let text = std::str::from_utf8(raw).unwrap();
            let mut out = Vec::new();
            let mut rest = text;
            while let Some(at) = rest.find('\\') {
                out.extend(rest[..at].encode_utf16());
                let (unit, len) = escape_unit(rest.as_bytes(), at);
                out.push(unit);
                rest = &rest[at + len..];
            }
            out.extend(rest.encode_utf16());
            out
        }
        let pieces: [&str; 14] = [
            "a",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\u00e9",
            "\\u20AC",
            "\\ud83d\\ude00",
            "\\udc00",
            "\u{e9}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{4e2d}",
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        ];
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        for _ in 0..100_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut raw = String::new();
            let mut r = seed;
            for _ in 0..(seed % 20) {
                r = r.rotate_left(9) ^ 0x9e37_79b9_7f4a_7c15;
                let k = (r % 28) as usize;
                raw.push_str(if k < 14 { pieces[k] } else { &pieces[13][..k - 13] });
            }
            let want = plain(raw.as_bytes());
            let mut got = vec![7u16]; // appends after what is there
            decode_utf16_into(raw.as_bytes(), &mut got);
            assert_eq!(got[1..], want[..], "{raw:?}");
            let mut latin1 = vec![7u8];
            match decode_latin1_into(raw.as_bytes(), &mut latin1) {
                Ok(()) => assert!(latin1[1..].iter().map(|&b| u16::from(b)).eq(want.iter().copied()), "{raw:?}"),
                Err(at) => {
                    // Stopped at the first unit above 0xFF, with the units before it.
                    let stop = want.iter().position(|&u| u > 0xff).unwrap();
                    assert!(latin1[1..].iter().map(|&b| u16::from(b)).eq(want[..stop].iter().copied()), "{raw:?}");
                    assert_eq!(plain(&raw.as_bytes()[at..]), want[stop..], "{raw:?}");
                }
            }
            match Decoded::new(raw.as_bytes()) {
                Decoded::Latin1(b) => {
                    assert!(want.iter().all(|&u| u <= 0xff) && b.iter().map(|&b| u16::from(b)).eq(want.iter().copied()))
                }
                Decoded::Utf16(u) => assert!(want.iter().any(|&u| u > 0xff) && u == want, "{raw:?}"),
            }
            // Scanned and decoded in one pass, from inside a line.
            let line = format!("[\"{raw}\",1]");
            let (mut latin1, mut utf16) = (vec![7u8], vec![7u16]);
            let (end, wide) = scan_decode(line.as_bytes(), 1, &mut latin1, &mut utf16).expect(&raw);
            assert_eq!(end, raw.len() + 3, "{raw:?}");
            assert_eq!(wide, want.iter().any(|&u| u > 0xff), "{raw:?}");
            if wide {
                assert_eq!((&utf16[1..], latin1.len()), (&want[..], 1), "{raw:?}");
            } else {
                assert!(latin1[1..].iter().map(|&b| u16::from(b)).eq(want.iter().copied()), "{raw:?}");
                assert_eq!(utf16.len(), 1);
            }
            // A control byte or a stray backslash: it ends (or fails) where the scanner
            // does, and a failure leaves both outputs as they were.
            let mut bad = line.clone().into_bytes();
            let cut = 2 + (seed as usize >> 8) % (raw.len() + 1);
            bad[cut] = [0x01, b'\\'][(seed >> 3) as usize & 1];
            let lens = (latin1.len(), utf16.len());
            let got = scan_decode(&bad, 1, &mut latin1, &mut utf16);
            assert_eq!(got.map(|g| g.0), scan_string(&bad, 1), "{:?}", String::from_utf8_lossy(&bad));
            if got.is_none() {
                assert_eq!((latin1.len(), utf16.len()), lens);
            }
        }
    }

    #[test]
    fn find_string_special_matches_naive() {
        let mut seed = 0x9e3779b97f4a7c15u64;
        for len in 0..200 {
            for _ in 0..50 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        // Mostly plain bytes, sometimes specials and high bytes.
                        match seed % 23 {
                            0 => b'"',
                            1 => b'\\',
                            2 => (seed >> 8) as u8 % 0x20,
                            3 => 0x80 | (seed >> 8) as u8,
                            _ => b'a' + (seed >> 8) as u8 % 26,
                        }
                    })
                    .collect();
                let naive = bytes.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
                assert_eq!(find_string_special(&bytes), naive, "{bytes:?}");
            }
        }
    }
}
