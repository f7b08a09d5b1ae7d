//! `createBranchedSession` on loaded lines, without parsing entries into JS objects: the
//! lines of the kept path with `parentId` (and a compaction's `firstKeptEntryId`) rewritten
//! as bytes. The result equals `JSON.stringify({ ...entry, parentId, … })` of the reference
//! for canonical lines; anything else (`None`) is left to the facade's JS path.

use std::collections::HashMap;
use std::io;

use crate::entry::{EntryType, Role, Skeleton};
use crate::json;
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
///
/// One pass per line: the canonical check also finds the top-level members, and the line
/// is copied once, straight into the output with its edits.
pub fn branched_lines(tree: &Tree, store: &LineStore, path: &[u32]) -> io::Result<Option<Branched>> {
    let total = store.text_len(path);
    let mut text = Vec::with_capacity(usize::try_from(total + total / 64).unwrap_or(0));
    let mut ids: Vec<Vec<u8>> = Vec::with_capacity(path.len());
    let mut pending_labels: Vec<Vec<u8>> = Vec::new();
    let mut replacement: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut conversation = false;
    let mut ok = true;
    store.for_each(path, |k, line| {
        if !ok {
            return;
        }
        ok = rewrite_line(tree.get(path[k]), line, &mut text, &mut ids, &mut pending_labels, &mut replacement)
            .map(|conv| conversation |= conv)
            .is_some();
    })?;
    if !ok {
        return Ok(None);
    }
    let mut ids_json = String::from("[");
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            ids_json.push(',');
        }
        ids_json.push_str(&String::from_utf8_lossy(id));
    }
    ids_json.push(']');
    Ok(Some(Branched { text, ids_json, conversation }))
}

/// Appends one rewritten line to `text` (a label only joins `pending`); `None` when the
/// line must be left to JS. Returns whether the entry is conversation.
fn rewrite_line(
    sk: &Skeleton,
    line: Option<&[u8]>,
    text: &mut Vec<u8>,
    ids: &mut Vec<Vec<u8>>,
    pending: &mut Vec<Vec<u8>>,
    replacement: &mut HashMap<Vec<u8>, usize>,
) -> Option<bool> {
    let line = line?;
    let (mut id, mut parent, mut first_kept) = (None, None, None);
    let canonical = json::canonical_members(line, |key, start, end| match key {
        b"id" => id = Some((start, end)),
        b"parentId" => parent = Some((start, end)),
        b"firstKeptEntryId" => first_kept = Some((start, end)),
        _ => {}
    });
    if !canonical {
        return None;
    }
    let (id_start, id_end) = id?;
    let id_raw = &line[id_start..id_end];
    if id_raw.first() != Some(&b'"') {
        return None;
    }
    if sk.ty == EntryType::Label {
        pending.push(id_raw.to_vec());
        return Some(false);
    }
    for label in pending.drain(..) {
        replacement.insert(label, ids.len());
    }
    let mut conversation = false;
    if sk.ty == EntryType::Message {
        match sk.role {
            Role::NoMessage => return None,
            r if r.is_conversation() => conversation = true,
            _ => {}
        }
    }
    // (span to replace, new bytes), in line order.
    let parent_now: Vec<u8> = ids.last().cloned().unwrap_or_else(|| b"null".to_vec());
    // Without the key the spread would add it at the end: leave it to JS.
    let (p_start, p_end) = parent?;
    let mut edits: Vec<(usize, usize, Vec<u8>)> = vec![(p_start, p_end, parent_now)];
    if sk.ty == EntryType::Compaction {
        let (f_start, f_end) = first_kept?;
        let fk_raw = &line[f_start..f_end];
        if fk_raw.first() != Some(&b'"') {
            return None;
        }
        if fk_raw != id_raw
            && let Some(&at) = replacement.get(fk_raw)
        {
            // The entry after the label: an earlier one, or this compaction itself.
            edits.push((f_start, f_end, ids.get(at).map_or_else(|| id_raw.to_vec(), Clone::clone)));
        }
    }
    edits.sort_by_key(|e| e.0);
    let mut from = 0;
    for (start, end, with) in &edits {
        text.extend_from_slice(&line[from..*start]);
        text.extend_from_slice(with);
        from = *end;
    }
    text.extend_from_slice(&line[from..]);
    text.push(b'\n');
    ids.push(id_raw.to_vec());
    Some(conversation)
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
