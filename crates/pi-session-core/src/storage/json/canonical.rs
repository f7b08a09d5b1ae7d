//! What `JSON.stringify` writes: a string from its UTF-16 units (`stringify_utf16`), and
//! whether a text is already exactly that (`is_canonical`), so it can be written as it is.

use crate::storage::json::scan::{parse_document, scan_number, scan_string};
use crate::storage::json::value::number_value;

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
/// non-canonical (V8 would order them first). The fuzz target and the tests check the fast paths against it.
#[cfg(any(test, feature = "fuzz"))]
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

/// `JSON.stringify(JSON.parse(text))` of a JSON text (valid UTF-8), the bytes the reference
/// writes when it re-serialises a parsed line (`forkFrom`, `createBranchedSession`):
/// whitespace dropped, numbers as ECMAScript prints them (`Infinity` as `null`), strings
/// with minimal escapes, and in each object the array-index keys first in ascending order,
/// then the others in order, a repeated key keeping its first place and its last value.
/// One pass over the tokens, like the scanner (no nesting depth overflows the stack); an
/// object is rebuilt only when it has a repeated or array-index key. `None` when the text
/// is not valid JSON.
pub fn stringify_parsed(text: &[u8]) -> Option<Vec<u8>> {
    stringify_parsed_lossy(text).map(|(out, _)| out)
}

/// `stringify_parsed`, and whether parsing the result gives other values than parsing
/// `text` does: a number that is `-0` or beyond the doubles (`Infinity`) prints as `0` or
/// `null`, where the object of `text` holds `-0` or `Infinity`.
pub fn stringify_parsed_lossy(text: &[u8]) -> Option<(Vec<u8>, bool)> {
    let mut lossy = false;
    /// An object being written: where it starts in `out`, and per member the ranges of
    /// its key text and its value (`usize::MAX` until the value ends).
    struct Obj {
        start: usize,
        members: Vec<(Vec<u16>, usize, usize, usize)>,
    }
    parse_document(text)?;
    let mut out = Vec::with_capacity(text.len());
    let mut stack: Vec<Option<Obj>> = Vec::new();
    let mut expect_key = false;
    let mut string = String::new();
    let mut units = Vec::new();
    // The value just written ends a member of the object around it.
    let value_done = |stack: &mut Vec<Option<Obj>>, at: usize| {
        if let Some(Some(o)) = stack.last_mut()
            && let Some(m) = o.members.last_mut()
            && m.3 == usize::MAX
        {
            m.3 = at;
        }
    };
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'{' => {
                stack.push(Some(Obj { start: out.len(), members: Vec::new() }));
                out.push(b'{');
                expect_key = true;
                i += 1;
            }
            b'[' => {
                stack.push(None);
                out.push(b'[');
                expect_key = false;
                i += 1;
            }
            b']' => {
                stack.pop();
                out.push(b']');
                value_done(&mut stack, out.len());
                i += 1;
            }
            b'}' => {
                if let Some(Some(o)) = stack.pop() {
                    finish_object(o.start, o.members, &mut out);
                }
                value_done(&mut stack, out.len());
                i += 1;
            }
            b',' => {
                out.push(b',');
                expect_key = matches!(stack.last(), Some(Some(_)));
                i += 1;
            }
            b':' => {
                out.push(b':');
                i += 1;
            }
            b'"' => {
                let end = scan_string(text, i)?;
                units.clear();
                crate::storage::json::decode_utf16_into(&text[i + 1..end - 1], &mut units);
                string.clear();
                stringify_utf16(&units, &mut string);
                let at = out.len();
                out.extend_from_slice(string.as_bytes());
                if expect_key {
                    if let Some(Some(o)) = stack.last_mut() {
                        // The value starts after the `:`.
                        o.members.push((units.clone(), at, out.len() + 1, usize::MAX));
                    }
                    expect_key = false;
                } else {
                    value_done(&mut stack, out.len());
                }
                i = end;
            }
            b't' | b'n' | b'f' => {
                let len = if text[i] == b'f' { 5 } else { 4 };
                out.extend_from_slice(&text[i..i + len]);
                value_done(&mut stack, out.len());
                i += len;
            }
            _ => {
                let end = scan_number(text, i)?;
                let n = number_value(&text[i..end]);
                if n == 0.0 {
                    out.push(b'0'); // -0 prints as 0
                    lossy |= n.is_sign_negative();
                } else if n.is_finite() {
                    out.extend_from_slice(ryu_js::Buffer::new().format_finite(n).as_bytes());
                } else {
                    out.extend_from_slice(b"null");
                    lossy = true;
                }
                value_done(&mut stack, out.len());
                i = end;
            }
        }
    }
    Some((out, lossy))
}

/// Closes the object written at `start..` in `out`; rebuilds it when V8 would order or
/// merge its keys: array-index keys first, ascending; a repeated key at its first place
/// with its last value.
fn finish_object(start: usize, members: Vec<(Vec<u16>, usize, usize, usize)>, out: &mut Vec<u8>) {
    let mut seen = std::collections::HashSet::new();
    let plain = members.iter().all(|(k, ..)| index_key(k).is_none() && seen.insert(k.as_slice()));
    if plain {
        out.push(b'}');
        return;
    }
    // (key text range, value range) per distinct key, in first-seen order.
    /// Per distinct key: its array index, where its key text and its value are in `out`.
    type Kept = (Option<u64>, (usize, usize), (usize, usize));
    let mut kept: Vec<Kept> = Vec::new();
    let mut at: std::collections::HashMap<&[u16], usize> = std::collections::HashMap::new();
    for (k, key_start, value_start, value_end) in &members {
        let value = (*value_start, *value_end);
        match at.get(k.as_slice()) {
            Some(&i) => kept[i].2 = value,
            None => {
                at.insert(k, kept.len());
                kept.push((index_key(k), (*key_start, value_start - 1), value));
            }
        }
    }
    kept.sort_by_key(|(index, ..)| index.map_or((1, 0), |n| (0, n)));
    let mut text = Vec::with_capacity(out.len() - start + 1);
    text.push(b'{');
    for (i, (_, key, value)) in kept.iter().enumerate() {
        if i > 0 {
            text.push(b',');
        }
        text.extend_from_slice(&out[key.0..key.1]);
        text.push(b':');
        text.extend_from_slice(&out[value.0..value.1]);
    }
    text.push(b'}');
    out.truncate(start);
    out.extend_from_slice(&text);
}

/// The value of an array-index key ("0" or [1-9][0-9]* below 2^32 - 1), given as UTF-16 units.
fn index_key(k: &[u16]) -> Option<u64> {
    if k.is_empty() || k.len() > 10 || (k.len() > 1 && k[0] == u16::from(b'0')) {
        return None;
    }
    let mut n = 0u64;
    for &u in k {
        if !(u16::from(b'0')..=u16::from(b'9')).contains(&u) {
            return None;
        }
        n = n * 10 + u64::from(u - u16::from(b'0'));
    }
    (n < 4_294_967_295).then_some(n)
}
