//! `createBranchedSession` on loaded lines, without parsing entries into JS objects: the
//! lines of the kept path with `parentId` (and a compaction's `firstKeptEntryId`) rewritten
//! as bytes. The result equals `JSON.stringify({ ...entry, parentId, … })` of the reference
//! for canonical lines; anything else (`None`) is left to the facade's JS path.

use std::collections::HashMap;
use std::io;

use crate::entry::{EntryType, Role};
use crate::json;
use crate::lines::LineStore;
use crate::tree::Tree;

/// The rewritten path.
pub struct Branched {
    /// The kept entries' positions (the path without its labels), root first.
    pub kept: Vec<u32>,
    /// The new text of each kept line that changes (without its `\n`); every other kept
    /// line is written as it is in the file.
    pub rewritten: HashMap<u32, Vec<u8>>,
    /// JSON array of the kept entries' ids.
    pub ids_json: String,
    /// `_hasConversation()` over the kept entries.
    pub conversation: bool,
}

/// Rewrites the lines of `path` (root first) for a branched session, or `None` when a line is
/// not canonical, has a non-string id, or needs JS semantics (missing messages).
///
/// Two passes: the lines' top-level members are found (with the canonical check) on
/// threads (`LineStore::map_lines`), then the path is walked in order. Only a line whose
/// parent was a label (or whose `firstKeptEntryId` names one) changes; it is read again
/// to be rewritten, and the rest can go file to file (`LineStore::write_to`).
pub fn branched_lines(tree: &Tree, store: &LineStore, path: &[u32]) -> io::Result<Option<Branched>> {
    let Some(members) = store.map_lines(path, Members::of)?.into_iter().collect::<Option<Option<Vec<_>>>>().flatten()
    else {
        return Ok(None);
    };
    let mut kept = Vec::with_capacity(path.len());
    let mut rewritten = HashMap::new();
    let mut ids: Vec<&[u8]> = Vec::with_capacity(path.len());
    let mut pending_labels: Vec<&[u8]> = Vec::new();
    let mut replacement: HashMap<&[u8], usize> = HashMap::new();
    let mut conversation = false;
    for (&p, m) in path.iter().zip(&members) {
        let sk = tree.get(p);
        if sk.ty == EntryType::Label {
            pending_labels.push(&m.id);
            continue;
        }
        for label in pending_labels.drain(..) {
            replacement.insert(label, ids.len());
        }
        if sk.ty == EntryType::Message {
            match sk.role {
                Role::NoMessage => return Ok(None),
                r if r.is_conversation() => conversation = true,
                _ => {}
            }
        }
        // (span to replace, new bytes), in line order.
        let parent_now: &[u8] = ids.last().copied().unwrap_or(b"null");
        // Without the key the spread would add it at the end: leave it to JS.
        let Some((p_start, p_end, parent_was)) = &m.parent else {
            return Ok(None);
        };
        let mut edits: Vec<(usize, usize, &[u8])> = Vec::new();
        if parent_was[..] != *parent_now {
            edits.push((*p_start, *p_end, parent_now));
        }
        if sk.ty == EntryType::Compaction {
            let Some((f_start, f_end, fk_raw)) = &m.first_kept else {
                return Ok(None);
            };
            if fk_raw.first() != Some(&b'"') {
                return Ok(None);
            }
            if *fk_raw != m.id
                && let Some(&at) = replacement.get(&fk_raw[..])
            {
                // The entry after the label: an earlier one, or this compaction itself.
                let with = ids.get(at).copied().unwrap_or(&m.id);
                if *with != fk_raw[..] {
                    edits.push((*f_start, *f_end, with));
                }
            }
        }
        if !edits.is_empty() {
            let line = store.line(p)?.ok_or_else(|| io::Error::other("a loaded line went missing"))?;
            rewritten.insert(p, edited(&line, &mut edits));
        }
        kept.push(p);
        ids.push(&m.id);
    }
    let mut ids_json = String::from("[");
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            ids_json.push(',');
        }
        ids_json.push_str(&String::from_utf8_lossy(id));
    }
    ids_json.push(']');
    Ok(Some(Branched { kept, rewritten, ids_json, conversation }))
}

/// What the branch needs of one line: its raw `id` (a JSON string), and the span and raw
/// value of `parentId` and `firstKeptEntryId` where it has them.
struct Members {
    id: Vec<u8>,
    parent: Option<(usize, usize, Vec<u8>)>,
    first_kept: Option<(usize, usize, Vec<u8>)>,
}

impl Members {
    /// `None` when the line is not canonical or its id is not a string.
    fn of(line: &[u8]) -> Option<Members> {
        let (mut id, mut parent, mut first_kept) = (None, None, None);
        let canonical = json::canonical_members(line, |key, start, end| match key {
            b"id" => id = Some(&line[start..end]),
            b"parentId" => parent = Some((start, end, line[start..end].to_vec())),
            b"firstKeptEntryId" => first_kept = Some((start, end, line[start..end].to_vec())),
            _ => {}
        });
        let id = id.filter(|id| canonical && id.first() == Some(&b'"'))?;
        Some(Members { id: id.to_vec(), parent, first_kept })
    }
}

/// `line` with each `(start, end, with)` span replaced.
fn edited(line: &[u8], edits: &mut [(usize, usize, &[u8])]) -> Vec<u8> {
    edits.sort_by_key(|e| e.0);
    let mut text = Vec::with_capacity(line.len() + 64);
    let mut from = 0;
    for (start, end, with) in edits.iter() {
        text.extend_from_slice(&line[from..*start]);
        text.extend_from_slice(with);
        from = *end;
    }
    text.extend_from_slice(&line[from..]);
    text
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
        let b = branched_lines(&tree, &parsed.store, path).unwrap()?;
        let text = parsed.store.render(&b.kept, |p| b.rewritten.get(&p).map(Vec::as_slice)).unwrap().unwrap();
        Some((String::from_utf8(text).unwrap(), b.ids_json, b.conversation))
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
