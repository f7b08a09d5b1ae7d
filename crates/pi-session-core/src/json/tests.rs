//! Tests of the grammar, the walks, canonical detection and string round trips.

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
    let want: Vec<(String, bool)> = [("a", false), ("b", false), ("c", false), ("d", true), ("e", true), ("a", true)]
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
