//! Decoding the contents of JSON strings to code units, as `JSON.parse` does (lone
//! surrogates included): UTF-16, Latin-1 when every unit fits in a byte, or a `String`.

use crate::storage::json::scan::escape_len;

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
