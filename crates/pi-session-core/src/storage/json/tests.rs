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

#[test]
fn stringify_parsed_is_json_stringify_of_json_parse() {
    // (text, what node prints for JSON.stringify(JSON.parse(text)))
    for (text, want) in [
        (r#"{"a": 1}"#, r#"{"a":1}"#),
        (r#"{"a":1.0}"#, r#"{"a":1}"#),
        (r#"{"a":1e2}"#, r#"{"a":100}"#),
        (r#"{"a":-0}"#, r#"{"a":0}"#),
        (r#"{"a":1,"b":3,"a":2}"#, r#"{"a":2,"b":3}"#),
        (r#"{"b":1,"2":0,"10":1,"1":2,"4294967295":5,"01":6}"#, r#"{"1":2,"2":0,"10":1,"b":1,"4294967295":5,"01":6}"#),
        (r#"{"a":"\u00e9"}"#, r#"{"a":"é"}"#),
        (r#"{"a":"\/"}"#, r#"{"a":"/"}"#),
        (r#"{"a":"\uD800x"}"#, r#"{"a":"\ud800x"}"#),
        (r#"{"a":"\ud83d\ude00"}"#, r#"{"a":"😀"}"#),
        (r#"[1, 2 ,{ "x" : [ ] } ]"#, r#"[1,2,{"x":[]}]"#),
        (r#"{} "#, r#"{}"#),
        (
            r#"{"a":1E400,"b":-1e-400,"c":1e21,"d":123456789012345678901234567890}"#,
            r#"{"a":null,"b":0,"c":1e+21,"d":1.2345678901234568e+29}"#,
        ),
        (r#"{"\u0031":1,"a":{"\u0062":"\u0001\t\u007f"}}"#, r#"{"1":1,"a":{"b":"\u0001\t"}}"#),
        (r#""\uDC00\uD800""#, r#""\udc00\ud800""#),
        (r#"{"__proto__":1}"#, r#"{"__proto__":1}"#),
        (r#"{"a":0.1e1,"b":5e-7,"c":1.5e-7}"#, r#"{"a":1,"b":5e-7,"c":1.5e-7}"#),
    ] {
        assert_eq!(String::from_utf8(stringify_parsed(text.as_bytes()).unwrap()).unwrap(), want, "{text}");
    }
    let deep = "[ ".repeat(100_000) + &"]".repeat(100_000);
    assert_eq!(stringify_parsed(deep.as_bytes()).unwrap(), ("[".repeat(100_000) + &"]".repeat(100_000)).into_bytes());
    assert!(stringify_parsed(b"{").is_none());
}
