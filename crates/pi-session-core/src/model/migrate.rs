//! Old session versions brought up to the current one, on parsed entries in memory
//! (`migrateSessionEntries` of pi 1.6.0: v1 → v2 gives entries ids and a parent chain,
//! v2 → v3 renames the `hookMessage` role to `custom`).
//!
//! These functions change skeletons only; they never touch a file. pi rewrites the file
//! after migrating it, which is the caller's decision (the `pi-sessions` CLI never does).

use crate::model::entry::{EntryType, Key, Role, Skeleton};
use crate::storage::json::{self, Kind};
use crate::storage::lines::LineStore;

/// The session format version pi 1.6.0 writes.
pub const CURRENT_VERSION: f64 = 3.0;

/// `header.version ?? 1` of a header line as pi's `version < 2` compares it: JS's `Number()`
/// of the value (a boolean as 0 or 1, a string by JS's own grammar: trimmed, hex, `Infinity`,
/// empty as 0; an array by its `join(",")`), `1` when missing or `null`, NaN for an object
/// (and for a line that is no object).
pub fn header_version(header: &[u8]) -> f64 {
    let Some(v) = json::parse_document(header).filter(|v| v.kind == Kind::Object) else { return f64::NAN };
    let mut version = None;
    json::for_each_member(header, v, |k, val| {
        if k == b"version" || (k.contains(&b'\\') && json::decode_string(k).ok().as_deref() == Some("version")) {
            version = Some(val);
        }
    });
    match version {
        None => 1.0,
        Some(v) if v.kind == Kind::Null => 1.0,
        Some(v) if v.kind == Kind::Number => json::number_value(v.text(header)),
        Some(v) if v.kind == Kind::True => 1.0,
        Some(v) if v.kind == Kind::False => 0.0,
        Some(v) => js_string(header, v).map_or(f64::NAN, |s| string_to_number(&s)),
    }
}

/// JS's `String()` of a JSON value, as `Number()` takes it (an object is NaN: `None`).
fn js_string(doc: &[u8], v: json::Value) -> Option<String> {
    let raw = v.text(doc);
    match v.kind {
        Kind::Null => Some(String::new()), // only inside an array: `[null].join()` is ""
        Kind::True => Some("true".into()), // inside an array: `Number("true")` is NaN
        Kind::False => Some("false".into()),
        Kind::Number => Some(json::number_value(raw).to_string()),
        Kind::String => json::decode_string(&raw[1..raw.len() - 1]).ok(),
        Kind::Array => {
            let mut parts = Vec::new();
            let mut ok = true;
            json::for_each_element(doc, v, |e| match js_string(doc, e) {
                Some(s) => parts.push(s),
                None => ok = false,
            });
            ok.then(|| parts.join(","))
        }
        _ => None,
    }
}

/// JS's `StringToNumber`: white space trimmed (JS's own, with U+FEFF), empty is 0, `0x`/`0o`/`0b`
/// integers, `Infinity` with a sign, else a decimal literal; anything else NaN.
fn string_to_number(s: &str) -> f64 {
    // Unicode's White_Space less U+0085 (not JS's), with U+FEFF (JS's).
    let js_space = |c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}';
    let t = s.trim_matches(js_space);
    if t.is_empty() {
        return 0.0;
    }
    let radix = match t.get(..2) {
        Some("0x" | "0X") => 16,
        Some("0o" | "0O") => 8,
        Some("0b" | "0B") => 2,
        _ => 0,
    };
    if radix != 0 {
        let digits = &t[2..];
        if digits.is_empty() {
            return f64::NAN;
        }
        return digits
            .chars()
            .try_fold(0.0f64, |n, c| c.to_digit(radix).map(|d| n * radix as f64 + d as f64))
            .unwrap_or(f64::NAN);
    }
    match t.strip_prefix(['+', '-']).unwrap_or(t) {
        "Infinity" => return if t.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY },
        rest if !rest.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) => {
            return f64::NAN;
        }
        _ => {}
    }
    t.parse().unwrap_or(f64::NAN)
}

/// What the migration reads of one entry (`entries[i]`), as the reference reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fact {
    /// `null` or `undefined`: reading its `type` throws.
    Nullish,
    /// Another falsy value (`0`, `""`, `false`): no type, and never a `targetEntry`.
    Falsy,
    Session,
    /// A compaction and its `firstKeptEntryIndex`: `None` when that is not a number, else the
    /// array index it names (`None` inside: a number that names none, such as 1.5 or -1).
    Compaction(Option<Option<usize>>),
    /// A message whose `message.role` is `hookMessage`.
    HookMessage,
    Other,
}

/// One step of the migration at one position, in the order the reference takes them.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Read `entry.type` (it throws: the reference's TypeError) and stop.
    Throw,
    /// `entry.version = n` (a header).
    Version(u8),
    /// `entry.id = id; entry.parentId = parent` (the previous entry's new id); then, for a
    /// compaction with a numeric `firstKeptEntryIndex`, `firstKeptEntryId` is set to the id
    /// `entries[target].id` has at that moment (when it names an entry that is no header) and
    /// `firstKeptEntryIndex` deleted.
    Ids { id: String, parent: Option<String>, first_kept: Option<Option<usize>> },
    /// `entry.message.role = "custom"`.
    Custom,
}

/// `migrateSessionEntries` as a plan: `version` is `header?.version ?? 1` as a number
/// (`Number(…)`, which the reference's comparisons apply), `facts` one per entry. Returns
/// whether the reference migrates (`!(version >= 3)`, NaN included) and its steps in order
/// (v1 → v2 over every position, then v2 → v3). `new_id(n)` gives the n-th new id (1, 2, …):
/// pi's is `generateId` against an id set it never fills (`random_id`).
pub fn plan(version: f64, facts: &[Fact], mut new_id: impl FnMut(usize) -> String) -> (bool, Vec<(usize, Step)>) {
    let mut steps = Vec::new();
    if version >= CURRENT_VERSION {
        return (false, steps);
    }
    if version < 2.0 {
        let mut prev: Option<String> = None;
        let mut n = 0;
        for (i, fact) in facts.iter().enumerate() {
            let first_kept = match fact {
                Fact::Nullish => {
                    steps.push((i, Step::Throw));
                    return (true, steps);
                }
                Fact::Session => {
                    steps.push((i, Step::Version(2)));
                    continue;
                }
                Fact::Compaction(Some(index)) => Some(
                    index
                        .filter(|&t| !matches!(facts.get(t), None | Some(Fact::Session | Fact::Nullish | Fact::Falsy))),
                ),
                _ => None,
            };
            n += 1;
            let id = new_id(n);
            let parent = prev.replace(id.clone());
            steps.push((i, Step::Ids { id, parent, first_kept }));
        }
    }
    if version < CURRENT_VERSION {
        for (i, fact) in facts.iter().enumerate() {
            match fact {
                Fact::Nullish => {
                    steps.push((i, Step::Throw));
                    return (true, steps);
                }
                Fact::Session => steps.push((i, Step::Version(3))),
                Fact::HookMessage => steps.push((i, Step::Custom)),
                _ => {}
            }
        }
    }
    (true, steps)
}

/// pi's new ids in a migration: `generateId` against a set that stays empty.
pub fn random_id(_: usize) -> String {
    crate::ids::generate_id(|_| false)
}

/// Brings parsed entries (header first, lines in `lines` by position) up to the current
/// version in memory, by `plan`; v1 ids come from `new_id`. Returns the header's version as
/// read.
pub fn in_memory(entries: &mut [Skeleton], lines: &LineStore, mut new_id: impl FnMut(usize) -> Key) -> f64 {
    let line = |pos: usize| lines.line(pos as u32).ok().flatten();
    let version = line(0).map_or(f64::NAN, |h| header_version(&h));
    let first_kept_index = |pos: usize| {
        let text = line(pos)?;
        let raw = crate::model::header::header_field_raw(std::str::from_utf8(&text).ok()?, "firstKeptEntryIndex")?;
        (raw.0 == Kind::Number).then(|| json::number_value(raw.1.as_bytes()))
    };
    let facts: Vec<Fact> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| match (e.ty, e.role) {
            (EntryType::Session, _) => Fact::Session,
            (EntryType::Compaction, _) if version < 2.0 => {
                Fact::Compaction(first_kept_index(i).map(|x| (x >= 0.0 && x.fract() == 0.0).then_some(x as usize)))
            }
            (EntryType::Message, Role::HookMessage) => Fact::HookMessage,
            _ => Fact::Other,
        })
        .collect();
    let mut keys = Vec::new();
    let (_, steps) = plan(version, &facts, |n| {
        let key = new_id(n);
        keys.push(key.clone());
        match key {
            Key::Str(s) => s.into(),
            other => format!("{other:?}"),
        }
    });
    let mut keys = keys.into_iter();
    let mut prev = Key::Null;
    for (i, step) in steps {
        match step {
            Step::Ids { first_kept, .. } => {
                let id = keys.next().unwrap_or(Key::Undefined);
                entries[i].id = id.clone();
                entries[i].parent = std::mem::replace(&mut prev, id);
                if let Some(Some(t)) = first_kept {
                    entries[i].target = entries[t].id.clone();
                }
            }
            Step::Custom => entries[i].role = Role::Custom,
            Step::Version(_) | Step::Throw => {}
        }
    }
    version
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store;

    fn parsed(text: &str) -> (Vec<Skeleton>, LineStore) {
        let p = store::parse_text(text.as_bytes(), 0);
        (p.skeletons, p.store)
    }

    fn synthetic(n: usize) -> Key {
        Key::Str(format!("v1-{n}").into())
    }

    #[test]
    fn a_header_version_is_what_js_number_makes_of_it() {
        // Each value as Node 20 gives `Number(String(v))` for it (`node -e`, 2026-12-07).
        let cases: &[(&str, f64)] = &[
            ("true", 1.0),
            ("false", 0.0),
            (r#""""#, 0.0),
            (r#"" 2 ""#, 2.0),
            (r#""0x10""#, 16.0),
            (r#""0b11""#, 3.0),
            (r#""Infinity""#, f64::INFINITY),
            (r#""-Infinity""#, f64::NEG_INFINITY),
            (r#""1e1""#, 10.0),
            (r#"".5""#, 0.5),
            (r#""+1""#, 1.0),
            (r#""1.""#, 1.0),
            (r#""\u00a02\ufeff""#, 2.0),
            ("[2]", 2.0),
            ("[]", 0.0),
            ("[[2]]", 2.0),
            (r#"["3"]"#, 3.0),
            ("[null]", 0.0),
            ("3.0", 3.0),
            ("null", 1.0),
        ];
        for &(v, want) in cases {
            let got = header_version(format!(r#"{{"type":"session","version":{v}}}"#).as_bytes());
            assert_eq!(got, want, "version {v}");
        }
        for v in [r#""inf""#, r#""1_0""#, r#""-0x10""#, r#""0x""#, "[1,2]", "[true]", "{}", r#""\u00852""#] {
            let got = header_version(format!(r#"{{"type":"session","version":{v}}}"#).as_bytes());
            assert!(got.is_nan(), "version {v}: {got}");
        }
        assert_eq!(header_version(br#"{"type":"session"}"#), 1.0);
    }

    #[test]
    fn header_versions() {
        assert_eq!(header_version(br#"{"type":"session","version":3}"#), 3.0);
        assert_eq!(header_version(br#"{"type":"session"}"#), 1.0);
        assert_eq!(header_version(br#"{"type":"session","version":null}"#), 1.0);
        assert_eq!(header_version(br#"{"type":"session","version":" 2 "}"#), 2.0);
        assert_eq!(header_version(br#"{"type":"session","v\u0065rsion":2}"#), 2.0);
        // pi's `true < 2` is `1 < 2`: such a session migrates (it was NaN here before).
        assert_eq!(header_version(br#"{"type":"session","version":true}"#), 1.0);
        assert!(header_version(b"[1]").is_nan());
    }

    #[test]
    fn v1_gets_ids_parents_and_kept_targets() {
        let (mut sks, lines) = parsed(concat!(
            "{\"type\":\"session\",\"id\":\"s\"}\n",
            "{\"type\":\"message\",\"message\":{\"role\":\"user\"}}\n",
            "{\"type\":\"message\",\"message\":{\"role\":\"assistant\"}}\n",
            "{\"type\":\"compaction\",\"firstKeptEntryIndex\":2}\n",
            "{\"type\":\"compaction\",\"firstKeptEntryIndex\":0}\n",
            "{\"type\":\"compaction\",\"firstKeptEntryIndex\":9}\n",
        ));
        assert_eq!(in_memory(&mut sks, &lines, synthetic), 1.0);
        let ids: Vec<&Key> = sks.iter().map(|s| &s.id).collect();
        assert_eq!(ids[0], &Key::Str("s".into()), "the header keeps its id");
        assert_eq!(ids[1..], [&synthetic(1), &synthetic(2), &synthetic(3), &synthetic(4), &synthetic(5)]);
        assert_eq!(sks[1].parent, Key::Null, "the first entry is a root");
        assert_eq!(sks[2].parent, synthetic(1));
        assert_eq!(sks[5].parent, synthetic(4));
        assert_eq!(sks[3].target, synthetic(2), "firstKeptEntryIndex 2 names the assistant message");
        assert_eq!(sks[4].target, Key::Undefined, "index 0 is the header: no target");
        assert_eq!(sks[5].target, Key::Undefined, "past the end: no target");
    }

    #[test]
    fn v2_hook_messages_become_custom_and_v3_is_untouched() {
        let text = "{\"type\":\"session\",\"version\":VERSION,\"id\":\"s\"}\n\
                    {\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{\"role\":\"hookMessage\"}}\n";
        let (mut v2, lines) = parsed(&text.replace("VERSION", "2"));
        assert_eq!(in_memory(&mut v2, &lines, synthetic), 2.0);
        assert_eq!(v2[1].role, Role::Custom);
        assert_eq!(v2[1].id, Key::Str("a".into()), "v2 ids stay");
        let (mut v3, lines) = parsed(&text.replace("VERSION", "3"));
        in_memory(&mut v3, &lines, synthetic);
        assert_eq!(v3[1].role, Role::HookMessage);
    }
}
