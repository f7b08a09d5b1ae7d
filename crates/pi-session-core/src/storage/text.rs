//! UTF-16 to UTF-8, for text that crosses from JS (appended lines); UTF-16 to WTF-8 and
//! back, for texts the listing index stores (`listing::index`); and UTF-8 to ASCII with
//! `\uXXXX` escapes, for the lines handed to JS (`lines`, `splice`).
//!
//! Node-API hands a string over as UTF-8 through V8's `WriteUtf8`, which encodes one
//! character at a time (~0.5 ns each on Node 20: 2 us for a 3.6 KB line, a tenth of an
//! append). Copying the string's UTF-16 units out is a plain copy, and encoding them here
//! takes ASCII 8 units at a time. JSON text is mostly ASCII even when it is not all ASCII.

/// Appends the UTF-8 of `units` to `out`, with U+FFFD for each lone surrogate (as
/// `napi_get_value_string_utf8` and `Buffer.from(string)` write them).
pub fn utf16_to_utf8(units: &[u16], out: &mut Vec<u8>) {
    encode::<false>(units, out);
}

/// Appends the WTF-8 of `units` (UTF-8, with each lone surrogate as its own three bytes),
/// which `wtf8_to_utf16` turns back into exactly `units`.
pub fn utf16_to_wtf8(units: &[u16], out: &mut Vec<u8>) {
    encode::<true>(units, out);
}

/// Writes the UTF-16 units of WTF-8 `bytes` into `out`, which must be exactly as long as
/// they are (the listing index records the count). `None` at a sequence `utf16_to_wtf8`
/// does not write, or when the count is not `out.len()`; `out` is then partly written.
pub fn wtf8_to_utf16(bytes: &[u8], out: &mut [u16]) -> Option<()> {
    let cont = |b: Option<&u8>| b.filter(|&&b| b & 0xC0 == 0x80).map(|&b| u32::from(b & 0x3F));
    let (mut i, mut o) = (0, 0);
    while i < bytes.len() {
        // A run of ASCII, found a word at a time and widened in a loop the compiler
        // vectorises.
        let run = first_non_ascii(&bytes[i..]).unwrap_or(bytes.len() - i);
        let dst = out.get_mut(o..o + run)?;
        for (d, &b) in dst.iter_mut().zip(&bytes[i..i + run]) {
            *d = u16::from(b);
        }
        i += run;
        o += run;
        // A byte of 0x80 or more (the run ended there), or the end.
        let Some(&b) = bytes.get(i) else { break };
        let b0 = u32::from(b);
        let (unit, len) = match b {
            0xC2..0xE0 => (((b0 & 0x1F) << 6) | cont(bytes.get(i + 1))?, 2),
            0xE0..0xF0 => {
                let c = ((b0 & 0x0F) << 12) | (cont(bytes.get(i + 1))? << 6) | cont(bytes.get(i + 2))?;
                if c < 0x800 {
                    return None;
                }
                (c, 3)
            }
            0xF0..0xF5 => {
                let c = ((b0 & 0x07) << 18)
                    | (cont(bytes.get(i + 1))? << 12)
                    | (cont(bytes.get(i + 2))? << 6)
                    | cont(bytes.get(i + 3))?;
                if !(0x10000..=0x10FFFF).contains(&c) {
                    return None;
                }
                let c = c - 0x10000;
                *out.get_mut(o)? = 0xD800 | (c >> 10) as u16;
                o += 1;
                (0xDC00 | (c & 0x3FF), 4)
            }
            _ => return None,
        };
        *out.get_mut(o)? = unit as u16;
        o += 1;
        i += len;
    }
    (o == out.len()).then_some(())
}

/// The index of the first byte that is not ASCII, 32 bytes at a time.
pub fn first_non_ascii(b: &[u8]) -> Option<usize> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    for c in b.chunks_exact(32) {
        let (w0, rest) = c.split_at(8);
        let (w1, rest) = rest.split_at(8);
        let (w2, w3) = rest.split_at(8);
        let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().unwrap_or([0; 8]));
        if (word(w0) | word(w1) | word(w2) | word(w3)) & HIGH != 0 {
            break;
        }
        i += 32;
    }
    b[i..].iter().position(|&c| c >= 0x80).map(|p| i + p)
}

fn encode<const WTF8: bool>(units: &[u16], out: &mut Vec<u8>) {
    const BLOCK: usize = 16;
    // At most 3 bytes per unit (a surrogate pair is 2 units for 4 bytes).
    out.reserve(units.len() * 3);
    let base = out.len();
    let dst = &mut out.spare_capacity_mut()[..units.len() * 3];
    let mut o = 0;
    let mut i = 0;
    while i < units.len() {
        // A run of ASCII, a block at a time: fixed-size loops the compiler turns into an OR
        // reduction and a pack.
        while let (Some(src), Some(d)) = (units.get(i..i + BLOCK), dst.get_mut(o..o + BLOCK)) {
            let src: &[u16; BLOCK] = src.try_into().expect("block");
            if src.iter().fold(0, |acc, &u| acc | u) >= 0x80 {
                break;
            }
            for (d, &u) in d.iter_mut().zip(src) {
                d.write(u as u8);
            }
            i += BLOCK;
            o += BLOCK;
        }
        let Some(&u) = units.get(i) else { break };
        i += 1;
        let c = u32::from(u);
        let mut put = |bytes: &[u8]| {
            for (d, &b) in dst[o..o + bytes.len()].iter_mut().zip(bytes) {
                d.write(b);
            }
            o += bytes.len();
        };
        match c {
            0..0x80 => put(&[c as u8]),
            0x80..0x800 => put(&[0xC0 | (c >> 6) as u8, 0x80 | (c & 0x3F) as u8]),
            0xD800..0xDC00 if units.get(i).is_some_and(|&l| (0xDC00..0xE000).contains(&l)) => {
                let cp = 0x10000 + ((c - 0xD800) << 10) + (u32::from(units[i]) - 0xDC00);
                i += 1;
                put(&[
                    0xF0 | (cp >> 18) as u8,
                    0x80 | ((cp >> 12) & 0x3F) as u8,
                    0x80 | ((cp >> 6) & 0x3F) as u8,
                    0x80 | (cp & 0x3F) as u8,
                ]);
            }
            0xD800..0xE000 if !WTF8 => put("\u{FFFD}".as_bytes()),
            _ => put(&[0xE0 | (c >> 12) as u8, 0x80 | ((c >> 6) & 0x3F) as u8, 0x80 | (c & 0x3F) as u8]),
        }
    }
    // SAFETY: `dst[..o]`, the `o` bytes after `base`, were all written above.
    unsafe { out.set_len(base + o) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn via_std(units: &[u16]) -> Vec<u8> {
        String::from_utf16_lossy(units).into_bytes()
    }

    #[test]
    fn matches_std_lossy_conversion() {
        let samples = [
            "",
            "plain ascii that is longer than one block of eight",
            "é ü ß — → 😀 🎉 日本語 mixed with ascii runs of various lengths: abcdefgh abcdefghi",
            "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}",
        ];
        for s in samples {
            let units: Vec<u16> = s.encode_utf16().collect();
            let mut out = Vec::new();
            utf16_to_utf8(&units, &mut out);
            assert_eq!(out, s.as_bytes());
        }
        // Lone surrogates, at every position relative to an 8-unit block.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        // Mostly-ASCII strings too, so that blocks are taken and left at every offset.
        for round in 0..40_000 {
            let (len, other) = if round % 2 == 0 { (seed % 40, 8) } else { (seed % 200, 64) };
            let mut units = Vec::with_capacity(len as usize);
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                units.push(match seed % other {
                    0 => 0xD800 + (seed >> 8) as u16 % 0x400,
                    1 => 0xDC00 + (seed >> 8) as u16 % 0x400,
                    2 => 0x80 + (seed >> 8) as u16 % 0x780,
                    3 => 0x800 + (seed >> 8) as u16 % 0xD000,
                    _ => (seed >> 8) as u16 % 0x80,
                });
            }
            let mut out = Vec::new();
            utf16_to_utf8(&units, &mut out);
            assert_eq!(out, via_std(&units), "{units:x?}");
            let mut wtf8 = Vec::new();
            utf16_to_wtf8(&units, &mut wtf8);
            let mut back = vec![0; units.len()];
            assert!(wtf8_to_utf16(&wtf8, &mut back).is_some());
            assert_eq!(back, units, "WTF-8 round trip");
            // A count that is not the units' own is refused.
            assert!(wtf8_to_utf16(&wtf8, &mut vec![0; units.len() + 1]).is_none());
            if !units.is_empty() {
                assert!(wtf8_to_utf16(&wtf8, &mut vec![0; units.len() - 1]).is_none());
            }
        }
        // Overlong forms, stray continuation bytes, truncated sequences, beyond U+10FFFF.
        for bad in [&b"\xC0\x80"[..], b"\x80", b"a\xE2\x82", b"\xE0\x80\x80", b"\xF4\x90\x80\x80", b"\xF8"] {
            assert!(wtf8_to_utf16(bad, &mut [0; 4]).is_none(), "{bad:x?}");
        }
    }
}

/// V8's longest string, in UTF-16 units (`String::kMaxLength` on 64-bit hosts, Node 20 to
/// 24): building a longer one throws `RangeError: Invalid string length`.
pub const MAX_JS_STRING_UNITS: usize = (1 << 29) - 24;

#[cfg(test)]
thread_local! {
    /// Tests set a small limit on their own thread (scans at V8's real limit need GBs).
    pub static TEST_JS_STRING_UNITS: std::cell::Cell<usize> = const { std::cell::Cell::new(MAX_JS_STRING_UNITS) };
}

/// The limit the listing holds texts to: `MAX_JS_STRING_UNITS` (a test's own on its thread).
pub fn max_js_string_units() -> usize {
    #[cfg(test)]
    return TEST_JS_STRING_UNITS.with(|l| l.get());
    #[cfg(not(test))]
    MAX_JS_STRING_UNITS
}

/// The UTF-16 length of valid UTF-8 `b`: one unit per character, two for those beyond
/// U+FFFF (their lead byte is 0xF0 or above).
pub fn utf16_len(b: &[u8]) -> usize {
    b.iter().map(|&c| usize::from(c & 0xc0 != 0x80) + usize::from(c >= 0xf0)).sum()
}

/// Whether valid UTF-8 `b` is longer than V8's longest string (a bound first: a character
/// is at least one byte).
pub fn over_js_string_limit(b: &[u8]) -> bool {
    let max = max_js_string_units();
    b.len() > max && utf16_len(b) > max
}

/// Copies `src` to `out` as ASCII: each non-ASCII character as `\uXXXX` (see
/// `escape_non_ascii`).
pub fn escape_to_ascii(src: &[u8], out: &mut Vec<u8>) {
    match first_non_ascii(src) {
        None => out.extend_from_slice(src),
        Some(at) => {
            out.extend_from_slice(&src[..at]);
            escape_non_ascii(&src[at..], out);
        }
    }
}

/// Copies UTF-8 `src` to `out`, writing each non-ASCII character as `\uXXXX` (UTF-16).
/// Invalid sequences become U+FFFD, as `readFileSync(path, "utf8")` decodes them.
pub(crate) fn escape_non_ascii(src: &[u8], out: &mut Vec<u8>) {
    match simdutf8::basic::from_utf8(src) {
        Ok(text) => escape_str(text, out),
        // Rare: a line with invalid UTF-8 (the lossy decoder is several times slower).
        Err(_) => escape_str(&String::from_utf8_lossy(src), out),
    }
}

fn escape_str(text: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut rest = text;
    while let Some(pos) = first_non_ascii(rest.as_bytes()) {
        out.extend_from_slice(&rest.as_bytes()[..pos]);
        // A non-ASCII byte in valid UTF-8 starts a character.
        let Some(c) = rest[pos..].chars().next() else { break };
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            out.extend_from_slice(b"\\u");
            for shift in [12, 8, 4, 0] {
                out.push(HEX[((*u >> shift) & 0xf) as usize]);
            }
        }
        rest = &rest[pos + c.len_utf8()..];
    }
    out.extend_from_slice(rest.as_bytes());
}
