//! `createBranchedSession` on loaded lines, without parsing entries into JS objects: the
//! lines of the kept path with `parentId` (and a compaction's `firstKeptEntryId`) rewritten
//! as bytes. The result equals `JSON.stringify({ ...entry, parentId, … })` of the reference
//! for canonical lines; anything else (`None`) is left to the facade's JS path.

use std::collections::HashMap;
use std::io;

use crate::entry::{EntryType, Role};
use crate::json::{self, Kind, Value};
use crate::lines::LineStore;
use crate::tree::Tree;

/// The rewritten path.
pub struct Branched {
    /// One line per kept entry, each ending in `\n`.
    pub text: Vec<u8>,
    /// JSON array of the kept entries' ids.
    pub ids_json: String,
    /// `_hasConversation()` over the kept entries.
    pub conversation: bool,
}

/// Rewrites the lines of `path` (root first) for a branched session, or `None` when a line is
/// not canonical, has a non-string id, or needs JS semantics (missing messages).
pub fn branched_lines(tree: &Tree, store: &LineStore, path: &[u32]) -> io::Result<Option<Branched>> {
    let mut lines: Vec<Option<Vec<u8>>> = Vec::with_capacity(path.len());
    store.for_each(path, |_, l| lines.push(l.map(<[u8]>::to_vec)))?;
    let mut text = Vec::new();
    let mut ids: Vec<&[u8]> = Vec::new();
    let mut prev: Option<&[u8]> = None;
    let mut pending_labels: Vec<&[u8]> = Vec::new();
    let mut replacement: HashMap<&[u8], &[u8]> = HashMap::new();
    let mut conversation = false;
    for (k, &pos) in path.iter().enumerate() {
        let Some(line) = lines[k].as_deref() else { return Ok(None) };
        if !json::is_canonical(line) {
            return Ok(None);
        }
        let members = top_members(line);
        let Some(id) = members.get("id").filter(|v| v.kind == Kind::String) else { return Ok(None) };
        let id_raw = id.text(line);
        let sk = tree.get(pos);
        if sk.ty == EntryType::Label {
            pending_labels.push(id_raw);
            continue;
        }
        for label in pending_labels.drain(..) {
            replacement.insert(label, id_raw);
        }
        if sk.ty == EntryType::Message {
            match sk.role {
                Role::NoMessage => return Ok(None),
                r if r.is_conversation() => conversation = true,
                _ => {}
            }
        }
        // (span to replace, new bytes), applied from the end of the line backwards.
        let mut edits: Vec<(usize, usize, &[u8])> = Vec::new();
        let parent: &[u8] = prev.unwrap_or(b"null");
        match members.get("parentId") {
            Some(v) => edits.push((v.start, v.end, parent)),
            None => return Ok(None), // the spread would add the key at the end: leave it to JS
        }
        if sk.ty == EntryType::Compaction {
            let Some(fk) = members.get("firstKeptEntryId").filter(|v| v.kind == Kind::String) else {
                return Ok(None);
            };
            let fk_raw = fk.text(line);
            if fk_raw != id_raw
                && let Some(r) = replacement.get(fk_raw)
            {
                edits.push((fk.start, fk.end, r));
            }
        }
        edits.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut out = line.to_vec();
        for (start, end, with) in edits {
            out.splice(start..end, with.iter().copied());
        }
        text.extend_from_slice(&out);
        text.push(b'\n');
        ids.push(id_raw);
        prev = Some(id_raw);
    }
    let ids_json = format!("[{}]", ids.iter().map(|i| String::from_utf8_lossy(i)).collect::<Vec<_>>().join(","));
    Ok(Some(Branched { text, ids_json, conversation }))
}

/// Top-level members of a canonical object line by (plain) key name; the last duplicate wins.
fn top_members(line: &[u8]) -> HashMap<&str, Value> {
    let mut out = HashMap::new();
    if let Some(v) = json::parse_document(line).filter(|v| v.kind == Kind::Object) {
        json::for_each_member(line, v, |k, val| {
            if let Ok(name) = std::str::from_utf8(k) {
                out.insert(name, val);
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store;

    fn branched(text: &str, path: &[u32]) -> Option<(String, String, bool)> {
        let parsed = store::parse_text(text.as_bytes(), 1);
        let mut tree = Tree::new();
        for sk in parsed.skeletons {
            tree.push(sk);
        }
        branched_lines(&tree, &parsed.store, path)
            .unwrap()
            .map(|b| (String::from_utf8(b.text).unwrap(), b.ids_json, b.conversation))
    }

    #[test]
    fn rewrites_parents_and_skips_labels() {
        let text = concat!(
            "{\"type\":\"session\",\"id\":\"s\"}\n",
            "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{\"role\":\"user\"}}\n",
            "{\"type\":\"label\",\"id\":\"l\",\"parentId\":\"a\",\"targetId\":\"a\",\"label\":\"x\"}\n",
            "{\"type\":\"compaction\",\"id\":\"c\",\"parentId\":\"l\",\"firstKeptEntryId\":\"l\",\"tokensBefore\":1}\n",
        );
        let (out, ids, conv) = branched(text, &[1, 2, 3]).unwrap();
        assert_eq!(
            out,
            concat!(
                "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{\"role\":\"user\"}}\n",
                "{\"type\":\"compaction\",\"id\":\"c\",\"parentId\":\"a\",\"firstKeptEntryId\":\"c\",\"tokensBefore\":1}\n",
            )
        );
        assert_eq!(ids, "[\"a\",\"c\"]");
        assert!(conv);
    }

    #[test]
    fn defers_to_js_when_bytes_are_not_canonical() {
        let text = "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\", \"id\":\"a\",\"parentId\":null}\n";
        assert!(branched(text, &[1]).is_none());
        let no_parent = "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"custom\",\"id\":\"a\"}\n";
        assert!(branched(no_parent, &[1]).is_none());
    }
}
