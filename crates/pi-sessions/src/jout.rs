//! `--json` output with serde_json: records are `Serialize` types, numbers are written the
//! way `JSON.stringify` writes them (ryu-js: `3`, not `3.0`; `1e+21`; `null` for NaN), values
//! the CLI passes through from a session file are raw JSON text, and arrays of records put
//! one element per line.

use std::io;

use pi_session_core::json::Kind;
use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter, Serializer};
use serde_json::value::RawValue;

use super::jv::J;

/// serde_json's compact output with `JSON.stringify`'s numbers. Strings are escaped alike
/// (`\"`, `\\`, `\b\f\n\r\t`, other control characters as lowercase `\u00xx`).
struct JsFormatter;

impl Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        // serde_json writes `null` for non-finite values before asking the formatter.
        w.write_all(num_text(v).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(v))
    }
}

/// A number the way `JSON.stringify` writes it (`null` for NaN and infinities).
pub fn num_text(v: f64) -> String {
    if !v.is_finite() {
        return "null".into();
    }
    ryu_js::Buffer::new().format_finite(v).to_owned()
}

/// The JSON text of a value.
pub fn to_string<T: Serialize + ?Sized>(v: &T) -> String {
    let mut out = Vec::with_capacity(128);
    v.serialize(&mut Serializer::with_formatter(&mut out, JsFormatter)).expect("serialising to memory");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A string as a JSON string literal.
pub fn quote(s: &str) -> String {
    to_string(s)
}

/// JSON text written as it is (the CLI passes values through from validated session
/// lines; serde_json only checks the grammar here, so lone surrogates and long numbers
/// survive). Invalid text becomes `null`.
pub fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).unwrap_or_else(|_| null())
}

pub fn null() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("null is JSON")
}

/// An array with each element on a line of its own: `[\n{…},\n{…}` then `\n]` (`close_on_line`)
/// or `]`.
pub fn lines<T: Serialize>(items: impl IntoIterator<Item = T>, close_on_line: bool) -> Box<RawValue> {
    let mut s = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        s.push_str(&to_string(&item));
    }
    if close_on_line {
        s.push('\n');
    }
    s.push(']');
    RawValue::from_string(s).expect("serialised elements")
}

/// Indented JSON for reading (two spaces, serde_json's pretty layout) of a value scanned
/// from a file: objects and arrays are laid out, every other value is written as in the file.
pub fn pretty(j: J<'_>) -> String {
    struct Tree<'a>(J<'a>);
    impl Serialize for Tree<'_> {
        fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
            match self.0.kind() {
                Kind::Object => ser.collect_map(self.0.members().into_iter().map(|(k, v)| (k, Tree(v)))),
                Kind::Array => ser.collect_seq(self.0.items().into_iter().map(Tree)),
                _ => raw(&self.0.raw_str()).serialize(ser),
            }
        }
    }
    let mut out = Vec::with_capacity(256);
    let fmt = PrettyFormatter::with_indent(b"  ");
    Tree(j).serialize(&mut Serializer::with_formatter(&mut out, fmt)).expect("serialising to memory");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_strings_as_json_stringify() {
        assert_eq!(to_string(&[3.0, 0.1, 1e21, -0.0, f64::NAN, 2.5e-7]), "[3,0.1,1e+21,0,null,2.5e-7]");
        assert_eq!(quote("a\"b\\\n\u{1}é\u{7f}"), "\"a\\\"b\\\\\\n\\u0001é\u{7f}\"");
    }

    #[test]
    fn raw_values_pass_through() {
        let kept = [r#"{"a":"\ud800","n":1e400}"#, r#"[1.50,"x"]"#];
        for text in kept {
            assert_eq!(to_string(&raw(text)), text);
        }
        assert_eq!(to_string(&raw("{oops")), "null");
        assert_eq!(lines([1, 2], true).get(), "[\n1,\n2\n]");
        assert_eq!(lines([1, 2], false).get(), "[\n1,\n2]");
        assert_eq!(lines(Vec::<u8>::new(), true).get(), "[\n]");
        let j = J::parse(br#"{"a":[1.50,{}],"b":{"c":"\u00e9","c":[]},"d":[]}"#).unwrap();
        assert_eq!(
            pretty(j),
            "{\n  \"a\": [\n    1.50,\n    {}\n  ],\n  \"b\": {\n    \"c\": \"\\u00e9\",\n    \"c\": []\n  },\n  \"d\": []\n}"
        );
    }
}
