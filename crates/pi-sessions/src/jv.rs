//! A lazy view over JSON text scanned by the core (`json::parse_document`), and a small
//! writer for `--json` output. No value tree is built: members are found by scanning.

use std::borrow::Cow;

use pi_session_native::json::{self, Kind, Value};

/// A validated JSON value inside `src`.
#[derive(Clone, Copy, Debug)]
pub struct J<'a> {
    pub src: &'a [u8],
    pub v: Value,
}

/// Whether a raw (escaped) member name is `key`.
pub fn key_eq(raw: &[u8], key: &str) -> bool {
    if raw.contains(&b'\\') { decode(raw) == key } else { raw == key.as_bytes() }
}

impl<'a> J<'a> {
    /// Parses a whole JSON text (`JSON.parse` grammar).
    pub fn parse(src: &'a [u8]) -> Option<J<'a>> {
        json::parse_document(src).map(|v| J { src, v })
    }

    pub fn kind(&self) -> Kind {
        self.v.kind
    }

    pub fn is_obj(&self) -> bool {
        self.v.kind == Kind::Object
    }

    pub fn is_null(&self) -> bool {
        self.v.kind == Kind::Null
    }

    /// The value's JSON text.
    pub fn raw(&self) -> &'a [u8] {
        self.v.text(self.src)
    }

    pub fn raw_str(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.raw())
    }

    pub fn truthy(&self) -> bool {
        self.v.truthy(self.src)
    }

    /// Member of an object (`obj[key]`; the last duplicate wins, as in `JSON.parse`).
    pub fn get(&self, key: &str) -> Option<J<'a>> {
        if self.v.kind != Kind::Object {
            return None;
        }
        let mut out = None;
        json::for_each_member(self.src, self.v, |k, v| {
            if key_eq(k, key) {
                out = Some(v);
            }
        });
        out.map(|v| J { src: self.src, v })
    }

    /// Several members in one pass.
    pub fn pick<const N: usize>(&self, keys: [&str; N]) -> [Option<J<'a>>; N] {
        let mut out = [None; N];
        if self.v.kind != Kind::Object {
            return out;
        }
        json::for_each_member(self.src, self.v, |k, v| {
            if let Some(i) = keys.iter().position(|key| key_eq(k, key)) {
                out[i] = Some(J { src: self.src, v });
            }
        });
        out
    }

    /// Members in order, keys decoded (duplicates kept).
    pub fn members(&self) -> Vec<(Cow<'a, str>, J<'a>)> {
        let mut out = Vec::new();
        if self.v.kind == Kind::Object {
            json::for_each_member(self.src, self.v, |k, v| out.push((decode(k), J { src: self.src, v })));
        }
        out
    }

    /// Elements of an array (empty for other kinds).
    pub fn items(&self) -> Vec<J<'a>> {
        let mut out = Vec::new();
        if self.v.kind == Kind::Array {
            json::for_each_element(self.src, self.v, |v| out.push(J { src: self.src, v }));
        }
        out
    }

    /// For each element of an array: the element and the chosen members (for objects),
    /// read in one pass per element.
    pub fn each_pick<const N: usize>(&self, keys: [&str; N], mut f: impl FnMut(J<'a>, [Option<J<'a>>; N])) {
        if self.v.kind != Kind::Array {
            return;
        }
        let src = self.src;
        let mut i = json::skip_whitespace(src, self.v.start + 1);
        if src[i] == b']' {
            return;
        }
        loop {
            let mut out = [None; N];
            let v = if src[i] == b'{' {
                let end = json::scan_object_members(src, i, |k, at| {
                    let v = json::scan_value(src, at)?;
                    if let Some(n) = keys.iter().position(|key| key_eq(k, key)) {
                        out[n] = Some(J { src, v });
                    }
                    Some(v)
                })
                .expect("validated");
                Value { kind: Kind::Object, start: i, end }
            } else {
                json::scan_value(src, i).expect("validated")
            };
            f(J { src, v }, out);
            i = json::skip_whitespace(src, v.end);
            if src[i] == b']' {
                return;
            }
            i = json::skip_whitespace(src, i + 1);
        }
    }

    /// Whether this is the string `s` (compared on the raw text when it has no escapes).
    pub fn is_str(&self, s: &str) -> bool {
        if self.v.kind != Kind::String {
            return false;
        }
        let raw = &self.src[self.v.start + 1..self.v.end - 1];
        if raw.contains(&b'\\') { decode(raw) == s } else { raw == s.as_bytes() }
    }

    /// The decoded string, when this is a string (lone surrogates become U+FFFD).
    pub fn str(&self) -> Option<Cow<'a, str>> {
        (self.v.kind == Kind::String).then(|| decode(&self.src[self.v.start + 1..self.v.end - 1]))
    }

    pub fn num(&self) -> Option<f64> {
        (self.v.kind == Kind::Number).then(|| json::number_value(self.raw()))
    }
}

/// Decodes the contents of a validated JSON string (between the quotes). Lone surrogates
/// become U+FFFD, as does invalid UTF-8. Copies only when there is an escape.
pub fn decode(raw: &[u8]) -> Cow<'_, str> {
    let Some(first) = memchr::memchr(b'\\', raw) else { return String::from_utf8_lossy(raw) };
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut i = 0;
    let mut next = Some(first);
    while let Some(k) = next {
        out.extend_from_slice(&raw[i..k]);
        i = k + 2;
        match raw.get(k + 1) {
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'r') => out.push(b'\r'),
            Some(b'b') => out.push(0x08),
            Some(b'f') => out.push(0x0c),
            Some(b'u') => {
                let unit = |at: usize| {
                    raw.get(at..at + 4)
                        .and_then(|h| std::str::from_utf8(h).ok())
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                };
                let u = unit(k + 2).unwrap_or(0xfffd);
                i = k + 6;
                let c = if (0xd800..0xdc00).contains(&u) && raw.get(k + 6..k + 8) == Some(b"\\u") {
                    match unit(k + 8) {
                        Some(lo) if (0xdc00..0xe000).contains(&lo) => {
                            i = k + 12;
                            char::from_u32(0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00))
                        }
                        _ => None,
                    }
                } else {
                    char::from_u32(u)
                };
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.unwrap_or('\u{fffd}').encode_utf8(&mut buf).as_bytes());
            }
            Some(&c) => out.push(c), // \" \\ \/
            None => {}
        }
        next = memchr::memchr(b'\\', raw.get(i..).unwrap_or_default()).map(|x| x + i);
    }
    out.extend_from_slice(raw.get(i..).unwrap_or_default());
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// Member value as a string (decoded), if it is one.
pub fn get_str<'a>(j: Option<J<'a>>) -> Option<Cow<'a, str>> {
    j.and_then(|j| j.str())
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

/// Appends `s` as a JSON string, escaped the way `JSON.stringify` does.
pub fn esc(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let rep: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[from..i]);
        match rep {
            Some(r) => out.push_str(r),
            None => out.push_str(&format!("\\u{b:04x}")),
        }
        from = i + 1;
    }
    out.push_str(&s[from..]);
    out.push('"');
}

/// A number the way `JSON.stringify` writes it (`null` for NaN and infinities).
pub fn num_text(v: f64) -> String {
    if !v.is_finite() {
        return "null".into();
    }
    let mut b = ryu_js::Buffer::new();
    b.format(v).to_owned()
}

/// A streaming JSON writer with automatic commas.
#[derive(Default)]
pub struct W {
    pub s: String,
    /// One entry per open container: (is array, no element written yet).
    open: Vec<(bool, bool)>,
    after_key: bool,
    /// A line break requested before the next element or the closing bracket.
    pending_nl: bool,
}

impl W {
    pub fn new() -> W {
        W::default()
    }

    fn sep(&mut self) {
        if self.after_key {
            self.after_key = false;
            return;
        }
        if let Some((_, first)) = self.open.last_mut() {
            if !*first {
                self.s.push(',');
            }
            *first = false;
        }
        if self.pending_nl {
            self.s.push('\n');
            self.pending_nl = false;
        }
    }

    pub fn obj(&mut self) -> &mut W {
        self.sep();
        self.s.push('{');
        self.open.push((false, true));
        self
    }

    pub fn arr(&mut self) -> &mut W {
        self.sep();
        self.s.push('[');
        self.open.push((true, true));
        self
    }

    /// Closes the innermost object or array.
    pub fn end(&mut self) -> &mut W {
        if self.pending_nl {
            self.s.push('\n');
            self.pending_nl = false;
        }
        if let Some((is_arr, _)) = self.open.pop() {
            self.s.push(if is_arr { ']' } else { '}' });
        }
        self
    }

    pub fn key(&mut self, k: &str) -> &mut W {
        self.sep();
        esc(&mut self.s, k);
        self.s.push(':');
        self.after_key = true;
        self
    }

    pub fn str(&mut self, v: &str) -> &mut W {
        self.sep();
        esc(&mut self.s, v);
        self
    }

    pub fn num(&mut self, v: f64) -> &mut W {
        self.sep();
        self.s.push_str(&num_text(v));
        self
    }

    pub fn int(&mut self, v: u64) -> &mut W {
        self.sep();
        self.s.push_str(&v.to_string());
        self
    }

    pub fn bool(&mut self, v: bool) -> &mut W {
        self.sep();
        self.s.push_str(if v { "true" } else { "false" });
        self
    }

    pub fn null(&mut self) -> &mut W {
        self.sep();
        self.s.push_str("null");
        self
    }

    /// Raw JSON text (must be valid).
    pub fn raw(&mut self, json: &str) -> &mut W {
        self.sep();
        self.s.push_str(json);
        self
    }

    pub fn opt_str(&mut self, v: Option<&str>) -> &mut W {
        match v {
            Some(v) => self.str(v),
            None => self.null(),
        }
    }

    /// A line break before the next element (or the closing bracket): one element per line.
    pub fn nl(&mut self) -> &mut W {
        self.pending_nl = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_matches_json_parse() {
        assert_eq!(decode(br"plain"), "plain");
        assert_eq!(decode(br#"a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00 end"#), "a\nb\t\"q\" \\ / é😀 end");
        assert_eq!(decode(br"lone \ud800 x \udc00"), "lone \u{fffd} x \u{fffd}");
        assert_eq!(decode(br"\ud800\u0041"), "\u{fffd}A");
        let mut out = String::new();
        esc(&mut out, "a\"b\\\n\u{1}é");
        assert_eq!(out, "\"a\\\"b\\\\\\n\\u0001é\"");
    }
}
