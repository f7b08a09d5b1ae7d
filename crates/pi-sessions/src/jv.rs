//! A lazy view over JSON text scanned by the core (`json::parse_document`, the `JSON.parse`
//! grammar): no value tree is built, members are found by scanning. Session lines are read
//! this way, not with serde_json, because pi reads them with `JSON.parse`: lone surrogates,
//! numbers beyond f64 and duplicate keys must read as they do there.

use std::borrow::Cow;

use pi_session_core::json::{self, Kind, Value};

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

/// Decodes the contents of a validated JSON string (between the quotes) with the core's
/// decoder; lone surrogates become U+FFFD, as does invalid UTF-8. Copies only when there is
/// an escape.
pub fn decode(raw: &[u8]) -> Cow<'_, str> {
    if !raw.contains(&b'\\') {
        return String::from_utf8_lossy(raw);
    }
    Cow::Owned(json::decode_string(raw).unwrap_or_else(|units| String::from_utf16_lossy(&units)))
}

/// Member value as a string (decoded), if it is one.
pub fn get_str<'a>(j: Option<J<'a>>) -> Option<Cow<'a, str>> {
    j.and_then(|j| j.str())
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
    }
}
