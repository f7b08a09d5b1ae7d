//! `createBranchedSession` in one pass over the kept path's lines: each is read once,
//! re-serialised where it is not canonical (`json::stringify_parsed`), gets its `parentId`
//! (and a compaction's `firstKeptEntryId`) rewritten as bytes, and is written to the new
//! file, followed by the re-created label entries. The result equals the reference's
//! `JSON.stringify({ ...entry, parentId, … })` of the entries as loaded; entries JS holds as
//! objects (possibly changed by a caller) are the facade's JS path (`lib/tree.js`).

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::model::entry::{EntryType, Key, Role, Skeleton};
use crate::model::ids;
use crate::model::tree::Tree;
use crate::storage::json;
use crate::storage::lines::LineStore;
use crate::storage::store::{self, IndexedCopy};

/// `createBranchedSession`'s rule on a path, in positions: which entries are kept (the path
/// without its labels, each re-parented onto the one before), which kept entry a
/// compaction's `firstKeptEntryId` names now, and which labels are re-created with what
/// ids. The byte path (`write_branch`) and the facade's copies of objects both follow it.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// The path's non-label positions, root first.
    pub kept: Vec<u32>,
    /// Per kept entry: for a compaction whose `firstKeptEntryId` named a label on the path
    /// (`replacementByLabelId`), the index in `kept` of the entry that label was followed
    /// by (possibly the compaction itself); `None` where the value stays.
    pub first_kept: Vec<Option<u32>>,
    /// The label entries to re-create (`labelsById` order, targets on the kept path), each
    /// with its new id (`generateId` against the kept ids and the labels' before it).
    pub labels: Vec<(u32, String)>,
}

/// The plan of `createBranchedSession` for `path` (positions, root first; see `Plan`).
pub fn plan(tree: &Tree, path: &[u32]) -> Plan {
    let mut plan = Plan::default();
    // Label id -> index in `kept` of the entry after it, as `replacementByLabelId`.
    let mut replacement: HashMap<&Key, u32> = HashMap::new();
    let mut pending: Vec<&Key> = Vec::new();
    for &p in path {
        let sk = tree.get(p);
        if sk.ty == EntryType::Label {
            pending.push(&sk.id);
            continue;
        }
        let at = plan.kept.len() as u32;
        for label in pending.drain(..) {
            replacement.insert(label, at);
        }
        let first_kept = match sk.ty {
            // `firstKeptEntryId === entry.id ? entry.id : …`
            EntryType::Compaction if sk.target.strict_eq(&sk.id) => Some(at),
            EntryType::Compaction => replacement.get(&sk.target).copied(),
            _ => None,
        };
        plan.kept.push(p);
        plan.first_kept.push(first_kept);
    }
    let kept_ids: HashSet<&Key> = plan.kept.iter().map(|&p| &tree.get(p).id).collect();
    let mut taken: HashSet<String> =
        kept_ids.iter().filter_map(|k| if let Key::Str(s) = k { Some(s.to_string()) } else { None }).collect();
    for lp in tree.labels() {
        if kept_ids.contains(&tree.get(lp).target) {
            let id = ids::generate_id(|id| taken.contains(id));
            taken.insert(id.clone());
            plan.labels.push((lp, id));
        }
    }
    plan
}

/// The branched session's file, written and indexed.
pub struct Written {
    pub path: PathBuf,
    pub len: u64,
    pub skeletons: Vec<Skeleton>,
    pub store: LineStore,
}

/// Writes the branched session of `path` (positions, root first), or `None` where the
/// facade must build it in JS: an entry on the path without a string id or a message
/// without `message`, or no conversation (the reference keeps the branch in memory then).
/// `prepare(path)` names the file and gives its header line (`None`: the facade declines).
pub fn write_branch(
    tree: &Tree,
    lines: &LineStore,
    path: &[u32],
    prepare: &mut dyn FnMut(&[u32]) -> store::NewFile,
) -> Result<Option<Written>> {
    let plan = plan(tree, path);
    let mut conversation = false;
    for &p in &plan.kept {
        let sk = tree.get(p);
        if !matches!(sk.id, Key::Str(_)) {
            return Ok(None);
        }
        if sk.ty == EntryType::Message {
            match sk.role {
                Role::NoMessage => return Ok(None),
                r if r.is_conversation() => conversation = true,
                _ => {}
            }
        }
    }
    if !conversation {
        return Ok(None);
    }
    let Some((file, header)) = prepare(path) else { return Ok(None) };
    let read_err = |e| Error::io(e, "read", None);
    // The labels to re-create: (targetId, label, timestamp) as JSON.
    let mut labels = Vec::new();
    for &(lp, _) in &plan.labels {
        let line = lines.line(lp).map_err(read_err)?.ok_or_else(|| Error::Msg(format!("label {lp} has no line")))?;
        let line = canonical(&line)?.unwrap_or_else(|| json::stringify_parsed(&line).unwrap_or_default().into());
        let mut fields: [Option<Vec<u8>>; 3] = [None, None, None];
        members(&line, |k, a, b| {
            let slot = match k {
                b"targetId" => 0,
                b"label" => 1,
                b"timestamp" => 2,
                _ => return,
            };
            fields[slot] = Some(line[a..b].to_vec());
        });
        labels.push(fields);
    }
    let mut unique = 1u64 << 62;
    let header_sk = header.strip_suffix(b"\n").and_then(|h| Skeleton::parse_line(h, &mut unique));
    let Some(header_sk) = header_sk else { return Err(Error::Msg("branch: the header is not one JSON line".into())) };
    let mut copy = IndexedCopy::new(&file);
    let mut declined = false;
    let mut write = |f: &std::fs::File| -> io::Result<()> {
        copy = IndexedCopy::new(&file);
        let mut w = io::BufWriter::with_capacity(1 << 20, f);
        copy.line(&mut w, &header[..header.len() - 1], Some(header_sk.clone()))?;
        let mut failed = None;
        // The ids written so far (JSON text) and where each label id points (`replacementByLabelId`).
        let mut ids: Vec<(Vec<u8>, Key)> = Vec::with_capacity(plan.kept.len());
        lines.for_each(path, |i, line| {
            if failed.is_some() {
                return;
            }
            let p = path[i];
            let sk = tree.get(p);
            let Some(line) = line else {
                failed = Some(io::Error::other(format!("entry {p} has no stored line")));
                return;
            };
            if too_deep(line) {
                declined = true;
                failed = Some(io::Error::other("declined"));
                return;
            }
            // The members `id`, `parentId`, `firstKeptEntryId`, found in the canonical check's
            // own pass (a line that is not canonical is re-serialised, then scanned).
            let mut spans: [Option<(usize, usize)>; 3] = [None; 3];
            let line: std::borrow::Cow<[u8]> = if json::canonical_members(line, |k, a, b| record(&mut spans, k, a, b)) {
                line.into()
            } else {
                spans = [None; 3];
                match json::stringify_parsed_lossy(line) {
                    Some((text, false)) => {
                        members(&text, |k, a, b| record(&mut spans, k, a, b));
                        text.into()
                    }
                    Some((_, true)) => {
                        declined = true;
                        return failed = Some(io::Error::other("declined"));
                    }
                    None => return failed = Some(io::Error::other("a loaded line did not parse")),
                }
            };
            let [id, parent, first_kept] = spans;
            let id = id.map(|(a, b)| line[a..b].to_vec());
            let id = id.unwrap_or_default();
            if sk.ty == EntryType::Label {
                return;
            }
            let parent_now: &[u8] = ids.last().map_or(b"null", |(raw, _)| raw);
            let mut sk = sk.clone();
            sk.parent = ids.last().map_or(Key::Null, |(_, k)| k.clone());
            let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
            match parent {
                Some((a, b)) if line[a..b] != *parent_now => edits.push((a, b, parent_now.to_vec())),
                Some(_) => {}
                // The spread adds the key last.
                None => {
                    let at = line.len() - 1;
                    let mut member = b",\"parentId\":".to_vec();
                    member.extend_from_slice(parent_now);
                    edits.push((at, at, member));
                }
            }
            if let Some((a, b)) = first_kept
                && let Some(at) = plan.first_kept[ids.len()]
            {
                // The entry after the label: an earlier one, or this compaction itself.
                let (with, key) =
                    ids.get(at as usize).map_or((id.clone(), sk.id.clone()), |(r, k)| (r.clone(), k.clone()));
                if line[a..b] != *with {
                    edits.push((a, b, with));
                    sk.target = key;
                }
            }
            let text = if edits.is_empty() { line } else { edited(&line, &mut edits).into() };
            if let Err(e) = copy.line(&mut w, &text, Some(sk.clone())) {
                failed = Some(e);
            }
            ids.push((id, sk.id));
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        // The labels, after the last kept entry (`|| null`: an empty id counts as none).
        let mut parent = match ids.last() {
            Some((raw, _)) if raw.as_slice() != b"\"\"" => raw.clone(),
            _ => b"null".to_vec(),
        };
        for (fields, (_, label_id)) in labels.iter().zip(&plan.labels) {
            let mut text = format!("{{\"type\":\"label\",\"id\":\"{label_id}\",\"parentId\":").into_bytes();
            text.extend_from_slice(&parent);
            if let Some(ts) = &fields[2] {
                text.extend_from_slice(b",\"timestamp\":");
                text.extend_from_slice(ts);
            }
            text.extend_from_slice(b",\"targetId\":");
            text.extend_from_slice(fields[0].as_deref().unwrap_or(b"null"));
            text.extend_from_slice(b",\"label\":");
            text.extend_from_slice(fields[1].as_deref().unwrap_or(b"null"));
            text.push(b'}');
            let sk = Skeleton::parse_line(&text, &mut unique);
            copy.line(&mut w, &text, sk)?;
            parent = format!("\"{label_id}\"").into_bytes();
        }
        w.flush()
    };
    let len = match store::replace_with(&file, &mut write, &mut || Ok(())) {
        Err(_) if declined => return Ok(None),
        r => r?,
    };
    let (skeletons, store) = copy.finish(&file)?;
    Ok(Some(Written { path: file, len, skeletons, store }))
}

/// Nesting past which the facade's JS path takes the branch: V8's recursive
/// `JSON.stringify` (the reference's) overflows its stack on deep lines somewhere above
/// this, and the JS path then fails exactly as the reference does.
const JS_DEPTH: usize = 1000;

/// Whether `line` may nest deeper than `JS_DEPTH` (counted exactly only when it has that
/// many brackets).
fn too_deep(line: &[u8]) -> bool {
    if line.iter().filter(|&&b| b == b'[' || b == b'{').count() <= JS_DEPTH {
        return false;
    }
    let (mut depth, mut i) = (0usize, 0);
    while i < line.len() {
        match line[i] {
            b'"' => i = json::scan_string(line, i).unwrap_or(line.len()) - 1,
            b'[' | b'{' => {
                depth += 1;
                if depth > JS_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// Keeps the span of `id`, `parentId` or `firstKeptEntryId` (top-level members) in `spans`.
fn record(spans: &mut [Option<(usize, usize)>; 3], key: &[u8], start: usize, end: usize) {
    let slot = match key {
        b"id" => 0,
        b"parentId" => 1,
        b"firstKeptEntryId" => 2,
        _ => return,
    };
    spans[slot] = Some((start, end));
}

/// Each top-level member of the object `line` (valid JSON): raw key, value span.
fn members<'a>(line: &'a [u8], mut f: impl FnMut(&'a [u8], usize, usize)) {
    if let Some(v) = json::parse_document(line).filter(|v| v.kind == json::Kind::Object) {
        json::for_each_member(line, v, |k, value| f(k, value.start, value.end));
    }
}

/// A line as `JSON.stringify(JSON.parse(line))`: itself when already so; `None` when its
/// object would hold other values than that text gives (`-0`, `Infinity`): the reference
/// keeps the objects in memory, so the facade's JS path takes such a branch.
fn canonical(line: &[u8]) -> Result<Option<std::borrow::Cow<'_, [u8]>>> {
    if json::canonical_members(line, |_, _, _| {}) {
        return Ok(Some(line.into()));
    }
    match json::stringify_parsed_lossy(line) {
        Some((text, false)) => Ok(Some(text.into())),
        Some((_, true)) => Ok(None),
        None => Err(Error::Msg("a loaded line did not parse".into())),
    }
}

/// `line` with each `(start, end, with)` span replaced.
fn edited(line: &[u8], edits: &mut [(usize, usize, Vec<u8>)]) -> Vec<u8> {
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

    fn branched(text: &str, path: &[u32]) -> Option<String> {
        let dir = crate::testutil::TempPath::dir("branch");
        let parsed = store::parse_text(text.as_bytes(), 1);
        let mut tree = Tree::new();
        for sk in parsed.skeletons {
            tree.push(sk);
        }
        let file = dir.join("b.jsonl");
        let header = b"{\"type\":\"session\",\"id\":\"n\"}\n".to_vec();
        let written =
            write_branch(&tree, &parsed.store, path, &mut |_| Some((file.clone(), header.clone()))).unwrap()?;
        let out = std::fs::read_to_string(&file).unwrap();
        assert_eq!(written.len as usize, out.len());
        assert_eq!(written.skeletons.len(), out.lines().count());
        Some(out)
    }

    #[test]
    fn rewrites_parents_skips_labels_and_recreates_them() {
        let text = concat!(
            "{\"type\":\"session\",\"id\":\"s\"}\n",
            "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{\"role\":\"user\"}}\n",
            "{\"type\":\"label\",\"id\":\"l\",\"parentId\":\"a\",\"timestamp\":\"t\",\"targetId\":\"a\",\"label\":\"x\"}\n",
            "{\"type\":\"compaction\",\"id\":\"c\",\"parentId\":\"l\",\"firstKeptEntryId\":\"l\",\"tokensBefore\":1.0}\n",
            "{\"type\":\"custom\",\"id\":\"d\"}\n",
        );
        let out = branched(text, &[1, 2, 3, 4]).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "{\"type\":\"session\",\"id\":\"n\"}");
        assert_eq!(lines[1], "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{\"role\":\"user\"}}");
        assert_eq!(
            lines[2],
            "{\"type\":\"compaction\",\"id\":\"c\",\"parentId\":\"a\",\"firstKeptEntryId\":\"c\",\"tokensBefore\":1}"
        );
        assert_eq!(lines[3], "{\"type\":\"custom\",\"id\":\"d\",\"parentId\":\"c\"}");
        let label = lines[4];
        assert!(label.starts_with("{\"type\":\"label\",\"id\":\""), "{label}");
        assert!(
            label.ends_with("\",\"parentId\":\"d\",\"timestamp\":\"t\",\"targetId\":\"a\",\"label\":\"x\"}"),
            "{label}"
        );
        assert_eq!(lines.len(), 5);
    }

    #[test]
    fn re_serialises_lines_that_are_not_canonical() {
        let text = concat!(
            "{\"type\":\"session\",\"id\":\"s\"}\n",
            "{\"type\":\"message\",\"id\":\"a\",\"parentId\":\"x\",\"message\":{\"role\":\"user\"},\"data\":{\"b\":1,\"2\":0}}\n",
        );
        let out = branched(text, &[1]).unwrap();
        assert_eq!(
            out.lines().nth(1).unwrap(),
            "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{\"role\":\"user\"},\"data\":{\"2\":0,\"b\":1}}"
        );
        let deep = format!(
            "{{\"type\":\"session\",\"id\":\"s\"}}\n{{\"type\":\"message\",\"id\":\"a\",\"message\":{{\"role\":\"user\"}},\"d\":{}{}}}\n",
            "[".repeat(2000),
            "]".repeat(2000)
        );
        assert!(branched(&deep, &[1]).is_none(), "deep lines go to JS");
    }

    fn tree_of(text: &str) -> Tree {
        let mut tree = Tree::new();
        for sk in store::parse_text(text.as_bytes(), 1).skeletons {
            tree.push(sk);
        }
        tree
    }

    #[test]
    fn plan_keeps_the_path_without_labels_and_names_what_follows_a_label() {
        let text = concat!(
            "{\"type\":\"session\",\"id\":\"s\"}\n",
            "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n",
            "{\"type\":\"label\",\"id\":\"l\",\"parentId\":\"a\",\"targetId\":\"a\",\"label\":\"x\"}\n",
            "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"l\"}\n",
            "{\"type\":\"compaction\",\"id\":\"c\",\"parentId\":\"b\",\"firstKeptEntryId\":\"l\"}\n",
            "{\"type\":\"label\",\"id\":\"m\",\"parentId\":\"c\",\"targetId\":\"z\",\"label\":\"y\"}\n",
            "{\"type\":\"label\",\"id\":\"k\",\"parentId\":\"m\",\"targetId\":\"c\",\"label\":\"w\"}\n",
            "{\"type\":\"compaction\",\"id\":\"d\",\"parentId\":\"k\",\"firstKeptEntryId\":\"k\"}\n",
            "{\"type\":\"compaction\",\"id\":\"e\",\"parentId\":\"d\",\"firstKeptEntryId\":\"e\"}\n",
            "{\"type\":\"compaction\",\"id\":\"f\",\"parentId\":\"e\",\"firstKeptEntryId\":\"a\"}\n",
        );
        let tree = tree_of(text);
        let p = plan(&tree, &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(p.kept, [1, 3, 4, 7, 8, 9]);
        // c names l, followed by b (kept 1); d names k, followed by d itself; e names itself.
        assert_eq!(p.first_kept, [None, None, Some(1), Some(3), Some(4), None]);
        // Labels of kept targets (a, c), not of z; fresh ids, distinct.
        assert_eq!(p.labels.iter().map(|l| l.0).collect::<Vec<_>>(), [2, 6]);
        assert!(p.labels.iter().all(|(_, id)| id.len() == 8));
        assert_ne!(p.labels[0].1, p.labels[1].1);
    }

    #[test]
    fn leaves_odd_paths_to_js() {
        let no_conversation = "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"custom\",\"id\":\"a\"}\n";
        assert!(branched(no_conversation, &[1]).is_none());
        let number_id =
            "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"id\":1,\"message\":{\"role\":\"user\"}}\n";
        assert!(branched(number_id, &[1]).is_none());
    }
}
