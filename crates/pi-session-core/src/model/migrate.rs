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

/// `header.version ?? 1` of a header line: a number as written, a numeric string as its
/// number, `1` when missing or `null`, NaN otherwise (and for a line that is no object).
pub fn header_version(header: &[u8]) -> f64 {
    let Some(v) = json::parse_document(header).filter(|v| v.kind == Kind::Object) else { return f64::NAN };
    let mut version = None;
    json::for_each_member(header, v, |k, val| {
        if k == b"version" || (k.contains(&b'\\') && json::decode_string(k).ok().as_deref() == Some("version")) {
            version = Some(val);
        }
    });
    let Some(v) = version else { return 1.0 };
    let raw = v.text(header);
    match v.kind {
        Kind::Null => 1.0,
        Kind::Number => json::number_value(raw),
        Kind::String => {
            json::decode_string(&raw[1..raw.len() - 1]).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(f64::NAN)
        }
        _ => f64::NAN,
    }
}

/// `migrateV1ToV2`: every entry after the header gets the id `new_id(n)` (n = 1, 2, … in
/// file order) and the previous entry as its parent; a compaction's `firstKeptEntryIndex`
/// (read by `first_kept_index(position)`) becomes its `firstKeptEntryId` when it names an
/// earlier non-header entry, as pi assigns ids in one pass.
pub fn v1_to_v2(
    entries: &mut [Skeleton],
    mut new_id: impl FnMut(usize) -> Key,
    first_kept_index: impl Fn(usize) -> Option<f64>,
) {
    let mut prev = Key::Null;
    let mut n = 0;
    for i in 0..entries.len() {
        if entries[i].ty == EntryType::Session {
            continue;
        }
        n += 1;
        let id = new_id(n);
        entries[i].id = id.clone();
        entries[i].parent = std::mem::replace(&mut prev, id);
        if entries[i].ty != EntryType::Compaction {
            continue;
        }
        let index = first_kept_index(i).filter(|x| *x >= 0.0 && x.fract() == 0.0 && *x < i as f64);
        if let Some(target) = index.map(|x| x as usize).filter(|&t| entries[t].ty != EntryType::Session) {
            entries[i].target = entries[target].id.clone();
        }
    }
}

/// `migrateV2ToV3`: messages with the role `hookMessage` become `custom` messages.
pub fn v2_to_v3(entries: &mut [Skeleton]) {
    for e in entries.iter_mut().filter(|e| e.ty == EntryType::Message && e.role == Role::HookMessage) {
        e.role = Role::Custom;
    }
}

/// Brings parsed entries (header first, lines in `lines` by position) up to the current
/// version in memory; v1 ids come from `new_id`. Returns the header's version as read.
pub fn in_memory(entries: &mut [Skeleton], lines: &LineStore, new_id: impl FnMut(usize) -> Key) -> f64 {
    let line = |pos: usize| lines.line(pos as u32).ok().flatten();
    let version = line(0).map_or(f64::NAN, |h| header_version(&h));
    if version < 2.0 {
        let first_kept_index = |pos: usize| {
            let text = line(pos)?;
            let raw = crate::model::header::header_field_raw(std::str::from_utf8(&text).ok()?, "firstKeptEntryIndex")?;
            (raw.0 == Kind::Number).then(|| json::number_value(raw.1.as_bytes()))
        };
        v1_to_v2(entries, new_id, first_kept_index);
    }
    if version < CURRENT_VERSION {
        v2_to_v3(entries);
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
    fn header_versions() {
        assert_eq!(header_version(br#"{"type":"session","version":3}"#), 3.0);
        assert_eq!(header_version(br#"{"type":"session"}"#), 1.0);
        assert_eq!(header_version(br#"{"type":"session","version":null}"#), 1.0);
        assert_eq!(header_version(br#"{"type":"session","version":" 2 "}"#), 2.0);
        assert_eq!(header_version(br#"{"type":"session","v\u0065rsion":2}"#), 2.0);
        assert!(header_version(br#"{"type":"session","version":true}"#).is_nan());
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
