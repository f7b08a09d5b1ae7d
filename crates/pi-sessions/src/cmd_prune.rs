//! `prune`: keep only the path from the root to the leaf, byte for byte.
//!
//! What pi 1.6.0's class reads from a session, and so what must survive (session-manager.js):
//! - `getBranch()`, `buildSessionContext()` and the leaf come from `byId` and the parent links
//!   of the entries on the path, and `leafId` is the last entry of the file. Compactions
//!   (`firstKeptEntryId`, `retainedTail`) and `context_edit`s only look at path entries, so
//!   the path's lines, unchanged, with the leaf's line last, give the same results.
//! - `getLabel(id)` is `labelsById`, built over *every* label entry in file order (the last
//!   one for a target wins; an empty label deletes). So for each path entry the last label
//!   entry targeting it is kept when it is off the path and it sets a label, or clears one
//!   that a path label sets.
//! - `getSessionName()` is the last `session_info` entry of the file, on any branch. It is
//!   kept when it is off the path and its name differs from the path's last one.
//!
//! Entries kept off the path are re-linked, as `createBranchedSession` re-links labels: the
//! parent becomes the nearest ancestor on the path (`null` when there is none). Only their
//! `parentId` value is rewritten; every other byte of every kept line stays as it was.
//! Before anything is written the result is checked on the core's tree (the same index the
//! addon answers pi with): same branch, labels of path entries and name, or nothing happens.
//!
//! The file is streamed, never held: one pass indexes it, the kept lines are then copied from
//! it. Memory grows with the number of entries, not with their bytes.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::path::Path;

use pi_session_core::entry::{EntryType, Key, Skeleton};
use pi_session_core::json;
use pi_session_core::platform::{self, read_exact_at};
use pi_session_core::store;
use pi_session_core::tree::Tree;
use serde::Serialize;

use super::args::PruneArgs;
use super::ctx::{CliError, Ctx, Out};
use super::jv::J;
use super::safe;
use super::session::{CURRENT_VERSION, Session, chunk};
use super::{fmt, folder, held, jout};

/// What a prune keeps and how.
struct Plan {
    /// Tree positions in output order (the header first, the leaf last).
    order: Vec<u32>,
    /// Off-path entries whose `parentId` is rewritten, with the new parent (`None`: null).
    relink: HashMap<u32, Option<u32>>,
    /// Off-path entries kept (labels and session_info).
    extras: Vec<u32>,
    leaf: u32,
    path_len: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KeptJson {
    id: String,
    r#type: &'static str,
    /// The new parent (`null`: a root); absent when the line is kept as it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    relinked_to: Option<Box<serde_json::value::RawValue>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report<'a> {
    path: &'a str,
    leaf: String,
    dry_run: bool,
    changed: bool,
    entries_before: usize,
    entries_after: usize,
    path_entries: usize,
    bytes_before: u64,
    bytes_after: u64,
    kept_off_path: Vec<KeptJson>,
    skipped_lines: usize,
    backup: Option<String>,
    forwarded_bytes: u64,
}

fn name_of(s: &Session, pos: Option<u32>) -> Option<String> {
    let line = s.line(pos?);
    let n = J::parse(&line)?.get("name")?.str()?.trim().to_string();
    (!n.is_empty()).then_some(n)
}

fn label_text(s: &Session, pos: Option<u32>) -> Option<String> {
    let line = s.line(pos?);
    let j = J::parse(&line).or_else(|| J::parse(b"null"))?;
    Some(j.get("label").map_or_else(|| "undefined".into(), |l| l.raw_str().into_owned()))
}

/// The raw JSON of an entry's `id` (`null` for none).
fn raw_id(s: &Session, to: Option<u32>) -> String {
    to.and_then(|c| {
        let line = s.line(c);
        J::parse(&line)?.get("id").map(|v| v.raw_str().into_owned())
    })
    .unwrap_or_else(|| "null".into())
}

/// Decides what to keep. `Err` when the leaf is unknown or the result would differ.
fn plan(s: &Session, leaf_arg: Option<&str>) -> Result<Option<Plan>, CliError> {
    let t = &s.tree;
    let leaf = match leaf_arg {
        Some(id) => t
            .lookup(&Key::Str(id.into()))
            .filter(|&p| p != 0)
            .ok_or_else(|| CliError::NotFound(format!("no entry with id {id:?} in {}", s.path.display())))?,
        None => match t.last_entry() {
            Some(l) => l,
            None => return Ok(None),
        },
    };
    let path = t.branch(&t.get(leaf).id).map_err(|e| CliError::Fail(format!("{}: {e}", s.path.display())))?;
    if path.last() != Some(&leaf) {
        return Err(CliError::Fail(format!("{}: the leaf's id does not find it (a duplicate id?)", s.path.display())));
    }
    let n = t.len();
    let mut on_path = vec![false; n];
    for &p in &path {
        on_path[p as usize] = true;
    }
    // Labels: the last label entry for each target, and the targets path labels set.
    let mut last_label: HashMap<&Key, u32> = HashMap::new();
    let mut path_label_targets: HashSet<&Key> = HashSet::new();
    for pos in 1..n as u32 {
        let sk = t.get(pos);
        if sk.ty == EntryType::Label {
            last_label.insert(&sk.target, pos);
            if on_path[pos as usize] {
                path_label_targets.insert(&sk.target);
            }
        }
    }
    let mut extras = Vec::new();
    for &p in &path {
        let id = &t.get(p).id;
        if let Some(&w) = last_label.get(id)
            && !on_path[w as usize]
            && (t.get(w).label_truthy || path_label_targets.contains(id))
        {
            extras.push(w);
        }
    }
    if let Some(info) = t.last_session_info()
        && !on_path[info as usize]
    {
        let path_info = path.iter().rev().copied().find(|&p| t.get(p).ty == EntryType::SessionInfo);
        if name_of(s, Some(info)) != name_of(s, path_info) {
            extras.push(info);
        }
    }
    extras.sort_unstable();
    extras.dedup();
    // Re-link: the nearest ancestor on the path, when the parent itself is dropped.
    let mut relink = HashMap::new();
    for &e in &extras {
        let Some(first) = t.lookup(&t.get(e).parent) else { continue };
        if on_path[first as usize] {
            continue;
        }
        let mut cur = Some(first);
        let mut steps = 0;
        let to = loop {
            match cur {
                Some(c) if on_path[c as usize] => break Some(c),
                Some(c) if steps <= n => {
                    cur = t.lookup(&t.get(c).parent);
                    steps += 1;
                }
                _ => break None,
            }
        };
        relink.insert(e, to);
    }
    let mut order: Vec<u32> = Vec::with_capacity(path.len() + extras.len() + 1);
    order.push(0);
    let mut body: Vec<u32> = path.iter().copied().chain(extras.iter().copied()).filter(|&p| p != leaf).collect();
    body.sort_unstable();
    order.extend(body);
    order.push(leaf);
    let plan = Plan { order, relink, extras, leaf, path_len: path.len() };
    verify(s, &plan, &path)?;
    Ok(Some(plan))
}

/// The pruned file as the core's tree reads it must answer as the original does.
fn verify(s: &Session, plan: &Plan, path: &[u32]) -> Result<(), CliError> {
    let t = &s.tree;
    let items: Vec<Skeleton> = plan
        .order
        .iter()
        .map(|&p| {
            let mut sk = t.get(p).clone();
            if let Some(to) = plan.relink.get(&p) {
                sk.parent = to.map_or(Key::Null, |c| t.get(c).id.clone());
            }
            sk
        })
        .collect();
    let nt = Tree::from_items(items);
    let fail = |what: &str| {
        Err(CliError::Fail(format!(
            "{}: pruning to {} would change {what}; nothing written",
            s.path.display(),
            s.entry_id(plan.leaf)
        )))
    };
    let Some(new_leaf) = nt.last_entry() else { return fail("the leaf") };
    let new_path = nt.branch(&nt.get(new_leaf).id).map_err(|e| CliError::Fail(e.to_string()))?;
    let mapped: Vec<u32> = new_path.iter().map(|&i| plan.order[i as usize]).collect();
    if mapped != path {
        return fail("the branch");
    }
    for &p in path {
        let id = &t.get(p).id;
        let old = label_text(s, t.label(id));
        let new = label_text(s, nt.label(id).map(|i| plan.order[i as usize]));
        if old != new {
            return fail(&format!("the label of {}", s.entry_id(p)));
        }
    }
    let new_info = nt.last_session_info().map(|i| plan.order[i as usize]);
    if name_of(s, t.last_session_info()) != name_of(s, new_info) {
        return fail("the session name");
    }
    Ok(())
}

/// `line` with its top-level `parentId` value(s) replaced by `raw` (inserted first when
/// missing). Everything else stays byte for byte.
pub fn set_parent(line: &[u8], raw: &str) -> Vec<u8> {
    let start = json::skip_whitespace(line, 0);
    let mut spans = Vec::new();
    let scanned = line.get(start) == Some(&b'{')
        && json::scan_object_members(line, start, |k, at| {
            let v = json::scan_value(line, at)?;
            if k == b"parentId" {
                spans.push((v.start, v.end));
            }
            Some(v)
        })
        .is_some();
    let mut out = Vec::with_capacity(line.len() + raw.len());
    if !scanned || spans.is_empty() {
        let brace = start + 1;
        out.extend_from_slice(&line[..brace]);
        out.extend_from_slice(b"\"parentId\":");
        out.extend_from_slice(raw.as_bytes());
        let rest = &line[brace..];
        if rest.iter().find(|b| !b" \t\r\n".contains(b)) != Some(&b'}') {
            out.push(b',');
        }
        out.extend_from_slice(rest);
        return out;
    }
    let mut at = 0;
    for (s, e) in spans {
        out.extend_from_slice(&line[at..s]);
        out.extend_from_slice(raw.as_bytes());
        at = e;
    }
    out.extend_from_slice(&line[at..]);
    out
}

/// Whether the file ends in a line cut short: no final newline and a last line that does not
/// parse (a write cut short, or one in progress).
pub fn run(ctx: &Ctx, a: &PruneArgs, out: Out) -> Result<i32, CliError> {
    let path = folder::find_session(ctx, &a.session)?;
    let shown = ctx.shown(&path.display().to_string());
    // Every refusal says what was not done; a dry run says what a real run would refuse.
    let not = if a.dry_run { "a real run would refuse it; not pruned" } else { "not pruned" };
    if let Some(why) = held::why_held(&path) {
        return Err(CliError::Fail(format!("{shown} is in use: {why}; {not}")));
    }
    let before = safe::stamp(&path)?;
    // Kept open: read through it, and bytes another writer adds to it after the rename are
    // carried over.
    let original = File::open(&path)?;
    let mut s = Session::scan(&path, &original)?;
    let mut original = Some(original);
    if !safe::unchanged(&path, &before) || s.size != before.size {
        return Err(CliError::Fail(format!("{shown} changed while it was read; not pruned")));
    }
    if s.version != CURRENT_VERSION {
        return Err(CliError::Fail(format!(
            "{shown} is a version {} session; open it in pi once (pi migrates the file) before pruning; {not}",
            s.version
        )));
    }
    if s.torn {
        return Err(CliError::Fail(format!(
            "{shown} ends with an incomplete line (a write cut short, or in progress); run `pi-sessions check --repair` first; {not}"
        )));
    }
    let Some(plan) = plan(&s, a.leaf.as_deref())? else {
        return Err(CliError::Fail(format!("{shown} has no entries; nothing to prune; {not}")));
    };
    let spans = original_spans(&s)?;
    // Read before the rewrite: on Windows the file is closed before it is replaced.
    let new_parents: HashMap<u32, String> = plan.relink.iter().map(|(&p, &to)| (p, raw_id(&s, to))).collect();
    let mut relinked: HashMap<u32, Vec<u8>> = HashMap::new();
    for (&p, parent) in &new_parents {
        let (off, len) = spans[p as usize];
        relinked.insert(p, set_parent(&s.read(off, off + len)?, parent));
    }
    let bytes_after: u64 =
        plan.order.iter().map(|&p| relinked.get(&p).map_or(spans[p as usize].1, |l| l.len() as u64) + 1).sum();
    let entries_before = s.kept() - 1;
    let skipped = s.physical.saturating_sub(s.kept());
    let changed = bytes_after != s.size || plan.order.len() != s.kept() || !plan.relink.is_empty();
    let mut backup = None;
    let mut forwarded = 0;
    if changed && !a.dry_run {
        if !a.no_backup {
            backup = Some(safe::backup(&path).map_err(|e| CliError::Fail(format!("cannot back up {shown}: {e}")))?);
        }
        let mtime = original.as_ref().and_then(|f| f.metadata().and_then(|m| m.modified()).ok());
        let written = safe::replace(&path, &before, mtime, |to| {
            write_kept(to, &s, &plan, &spans, &relinked)?;
            // Windows refuses a rename over a file that is open: every handle goes first.
            if platform::OPEN_FILES_BLOCK_RENAME {
                s.let_go_of_file();
                original = None;
            }
            Ok(())
        });
        if let Err(e) = written {
            if let Some(b) = &backup {
                let _ = std::fs::remove_file(b);
            }
            return Err(CliError::Fail(format!("{shown}: {e}")));
        }
        // Lines appended meanwhile are in the old file: still open here, or (where it had to be
        // closed) reachable through the backup, a hard link to it.
        let old = match (original, &backup) {
            (Some(f), _) => Some(f),
            (None, Some(b)) => File::open(b).ok(),
            (None, None) => None,
        };
        if let Some(old) = old {
            forwarded = forward_late_lines(&old, before.size, &path)?;
        }
    }
    let report = Report {
        path: &shown,
        leaf: s.entry_id(plan.leaf),
        dry_run: a.dry_run,
        changed,
        entries_before,
        entries_after: plan.order.len() - 1,
        path_entries: plan.path_len,
        bytes_before: s.size,
        bytes_after,
        kept_off_path: plan
            .extras
            .iter()
            .map(|&e| KeptJson {
                id: s.entry_id(e),
                r#type: if s.tree.get(e).ty == EntryType::Label { "label" } else { "session_info" },
                relinked_to: new_parents.get(&e).map(|parent| jout::raw(parent)),
            })
            .collect(),
        skipped_lines: skipped,
        backup: backup.as_ref().map(|b| b.display().to_string()),
        forwarded_bytes: forwarded,
    };
    if a.json {
        writeln!(out, "{}", jout::to_string(&report))?;
        return Ok(0);
    }
    let verb = if a.dry_run {
        "would keep"
    } else if changed {
        "kept"
    } else {
        "nothing to prune:"
    };
    writeln!(
        out,
        "{shown}: {verb} {} of {} ({} on the path to {}, {} off it), {} → {}",
        report.entries_after,
        fmt::count(report.entries_before as u64, "entry", "entries"),
        report.path_entries,
        report.leaf,
        report.kept_off_path.len(),
        fmt::size(report.bytes_before),
        fmt::size(report.bytes_after),
    )?;
    for k in &report.kept_off_path {
        let to = k.relinked_to.as_ref().map_or(String::new(), |r| format!(", re-linked to {}", r.get()));
        writeln!(out, "  kept off the path: {} {}{to}", k.r#type, k.id)?;
    }
    if skipped > 0 {
        writeln!(out, "  dropped {} pi skips (malformed)", fmt::count(skipped as u64, "line", "lines"))?;
    }
    if let Some(b) = &report.backup {
        writeln!(out, "  backup: {}", ctx.shown(b))?;
    }
    if forwarded > 0 {
        writeln!(out, "  carried over {} appended during the rewrite", fmt::count(forwarded, "byte", "bytes"))?;
    }
    Ok(0)
}

/// The original bytes of every kept line, `(offset, length)` without the `\n`, by position.
/// The core keeps a repaired copy of a line with invalid UTF-8; such lines are found again in
/// the gap between their neighbours (read again from the file), by the same rule (a line that
/// parses once repaired).
fn original_spans(s: &Session) -> io::Result<Vec<(u64, u64)>> {
    let n = s.kept();
    let size = s.size;
    let mut out = vec![(0u64, 0u64); n];
    let mut pos = 0;
    while pos < n {
        if let Some(span) = s.file_span(pos as u32) {
            out[pos] = span;
            pos += 1;
            continue;
        }
        let mut q = pos;
        while q < n && s.file_span(q as u32).is_none() {
            q += 1;
        }
        let from = if pos == 0 { 0 } else { out[pos - 1].0 + out[pos - 1].1 + 1 };
        let to = if q < n { s.file_span(q as u32).map_or(size, |(o, _)| o) } else { size };
        let gap = s.read(from.min(to), to)?;
        let mut k = pos;
        let mut at = from;
        for line in gap.split(|&b| b == b'\n') {
            let fixed = String::from_utf8_lossy(line);
            if k < q && Skeleton::parse_line(fixed.as_bytes(), &mut 0).is_some() {
                out[k] = (at, line.len() as u64);
                k += 1;
            }
            at += line.len() as u64 + 1;
        }
        pos = q;
    }
    Ok(out)
}

/// Writes the kept lines in order: runs of lines that lie next to each other in the original
/// are copied from it (`safe::SpanCopy`), the re-linked lines written as rewritten. Memory stays
/// bounded either way.
fn write_kept(
    to: &File,
    s: &Session,
    plan: &Plan,
    spans: &[(u64, u64)],
    relinked: &HashMap<u32, Vec<u8>>,
) -> io::Result<()> {
    let size = s.size;
    let mut out = safe::SpanCopy::new(s.file()?, to, chunk().min(size as usize));
    for &p in &plan.order {
        if let Some(line) = relinked.get(&p) {
            out.bytes(line)?;
            out.bytes(b"\n")?;
            continue;
        }
        let (off, len) = spans[p as usize];
        if off + len >= size {
            // The last line of a file without a final newline: end it.
            out.span(off, off + len)?;
            out.bytes(b"\n")?;
        } else {
            out.span(off, off + len + 1)?;
        }
    }
    out.finish()
}

/// Lines another process appended to the old file between the last check and the rename
/// (it wrote through a descriptor opened before): appended to the new file, so nothing is
/// lost. They continue the leaf, which the pruned file ends with.
fn forward_late_lines(original: &File, read: u64, path: &Path) -> Result<u64, CliError> {
    let len = original.metadata().map(|m| m.len()).unwrap_or(read);
    if len <= read {
        return Ok(0);
    }
    let mut extra = vec![0u8; (len - read) as usize];
    read_exact_at(original, &mut extra, read)?;
    store::append_bytes(path, &extra, true)
        .map_err(|e| CliError::Fail(format!("{}: cannot carry over late lines: {e}", path.display())))?;
    Ok(extra.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_parent_touches_only_the_value() {
        assert_eq!(
            set_parent(br#"{"type":"label","id":"l","parentId":"x","t":1}"#, "\"p\""),
            br#"{"type":"label","id":"l","parentId":"p","t":1}"#
        );
        assert_eq!(set_parent(br#"{"parentId" : "x" ,"a":[1]}"#, "null"), br#"{"parentId" : null ,"a":[1]}"#);
        assert_eq!(set_parent(br#"{"id":"l"}"#, "\"p\""), br#"{"parentId":"p","id":"l"}"#);
        assert_eq!(set_parent(b"{}", "null"), b"{\"parentId\":null}");
    }
}
