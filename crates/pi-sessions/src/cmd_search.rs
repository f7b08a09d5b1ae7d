//! `search`: full-text search of message text across sessions.
//!
//! Each file is streamed in blocks of whole lines (bounded memory) and searched as raw bytes
//! with `memchr::memmem`; only lines with a raw hit are parsed, and the hit is confirmed on
//! the decoded message text. Files are spread over worker threads.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use memchr::memmem;
use pi_session_core::blocks::{Blocks, each_line};
use pi_session_core::entry::EntryType;
use pi_session_core::json::{self, Kind, Value};

use super::args::SearchArgs;
use super::fmt::{self, Paint};
use serde::Serialize;

use super::ctx::{CliError, Ctx, Out};
use super::jout;
use super::jv::{self, J};
use super::needle::Needle;
use super::{archive, folder};

pub struct Hit {
    pub line: u64,
    pub entry_id: String,
    pub entry_type: String,
    pub role: String,
    pub time: f64,
    pub matches: usize,
    pub before: String,
    pub matched: String,
    pub after: String,
}

#[derive(Default)]
pub struct FileHits {
    pub session_id: String,
    pub cwd: String,
    pub created: f64,
    pub hits: Vec<Hit>,
}

struct Opts<'a> {
    needle: &'a Needle,
    role: Option<&'a str>,
    context: usize,
    per_file_cap: usize,
    cwd_filter: Option<&'a Path>,
    cwd: &'a Path,
    /// The files are `sessions-archive/` zstd files.
    archived: bool,
}

/// The cut of `s` ending at byte `end` with at most `n` characters.
fn tail_chars(s: &str, end: usize, n: usize) -> (bool, &str) {
    let head = &s[..end];
    match head.char_indices().rev().nth(n.saturating_sub(1)) {
        Some((i, _)) if n > 0 => (i > 0, &head[i..]),
        _ => (false, if n == 0 { "" } else { head }),
    }
}

fn head_chars(s: &str, start: usize, n: usize) -> (bool, &str) {
    let rest = &s[start..];
    match rest.char_indices().nth(n) {
        Some((i, _)) => (true, &rest[..i]),
        None => (false, rest),
    }
}

/// Text parts of a `content` value: the string, or the `text` of each text block.
#[derive(Default)]
struct Content<'a> {
    parts: Vec<J<'a>>,
}

impl Content<'_> {
    fn joined(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&p.str().unwrap_or_default());
        }
        out
    }
}

/// The members of an entry that search reads.
#[derive(Default)]
struct Fields<'a> {
    ty: Option<J<'a>>,
    id: Option<J<'a>>,
    ts: Option<J<'a>>,
    summary: Option<J<'a>>,
    /// Top-level `content` (custom_message).
    content: Content<'a>,
    message: bool,
    role: Option<J<'a>>,
    msg_ts: Option<J<'a>>,
    command: Option<J<'a>>,
    output: Option<J<'a>>,
    msg_content: Content<'a>,
}

/// Scans a `content` value at `at`, collecting its text parts, validating as it goes.
fn scan_content<'a>(src: &'a [u8], at: usize, out: &mut Content<'a>) -> Option<Value> {
    *out = Content { parts: Vec::new() };
    if src.get(at) != Some(&b'[') {
        let v = json::scan_value(src, at)?;
        if v.kind == Kind::String {
            out.parts.push(J { src, v });
        }
        return Some(v);
    }
    let mut i = json::skip_whitespace(src, at + 1);
    if src.get(i) == Some(&b']') {
        return Some(Value { kind: Kind::Array, start: at, end: i + 1 });
    }
    loop {
        let v = if src.get(i) == Some(&b'{') {
            let (mut ty, mut text) = (None, None);
            let end = json::scan_object_members(src, i, |k, a| {
                let v = json::scan_value(src, a)?;
                if jv::key_eq(k, "type") {
                    ty = Some(J { src, v });
                } else if jv::key_eq(k, "text") {
                    text = Some(J { src, v });
                }
                Some(v)
            })?;
            if let (Some(t), Some(x)) = (ty, text)
                && t.is_str("text")
                && x.kind() == Kind::String
            {
                out.parts.push(x);
            }
            Value { kind: Kind::Object, start: i, end }
        } else {
            let v = json::scan_value(src, i)?;
            if v.kind == Kind::String {
                out.parts.push(J { src, v });
            }
            v
        };
        i = json::skip_whitespace(src, v.end);
        match src.get(i)? {
            b',' => i = json::skip_whitespace(src, i + 1),
            b']' => return Some(Value { kind: Kind::Array, start: at, end: i + 1 }),
            _ => return None,
        }
    }
}

/// Validates a line (`JSON.parse` grammar) and reads the search fields in the same single
/// pass, descending into `message` and `content` instead of rescanning them.
fn scan_entry(src: &[u8]) -> Option<Fields<'_>> {
    let start = json::skip_whitespace(src, 0);
    if src.get(start) != Some(&b'{') {
        return None; // not an entry object: nothing to search
    }
    let mut f = Fields::default();
    let end = json::scan_object_members(src, start, |k, at| {
        if jv::key_eq(k, "message") {
            f.message = true;
            (f.role, f.msg_ts, f.command, f.output) = (None, None, None, None);
            f.msg_content = Content::default();
            if src.get(at) != Some(&b'{') {
                return json::scan_value(src, at);
            }
            let end = json::scan_object_members(src, at, |k2, at2| {
                if jv::key_eq(k2, "content") {
                    return scan_content(src, at2, &mut f.msg_content);
                }
                let v = json::scan_value(src, at2)?;
                let j = Some(J { src, v });
                if jv::key_eq(k2, "role") {
                    f.role = j;
                } else if jv::key_eq(k2, "timestamp") {
                    f.msg_ts = j;
                } else if jv::key_eq(k2, "command") {
                    f.command = j;
                } else if jv::key_eq(k2, "output") {
                    f.output = j;
                }
                Some(v)
            })?;
            return Some(Value { kind: Kind::Object, start: at, end });
        }
        if jv::key_eq(k, "content") {
            return scan_content(src, at, &mut f.content);
        }
        let v = json::scan_value(src, at)?;
        let j = Some(J { src, v });
        if jv::key_eq(k, "type") {
            f.ty = j;
        } else if jv::key_eq(k, "id") {
            f.id = j;
        } else if jv::key_eq(k, "timestamp") {
            f.ts = j;
        } else if jv::key_eq(k, "summary") {
            f.summary = j;
        }
        Some(v)
    })?;
    (json::skip_whitespace(src, end) == src.len()).then_some(f)
}

fn check_line(line: &[u8], line_no: u64, o: &Opts, fh: &mut FileHits) {
    // Strings are decoded (and invalid UTF-8 replaced) one by one, so the line is not
    // validated as UTF-8 as a whole.
    let Some(f) = scan_entry(line) else { return };
    let Some(ty) = f.ty.and_then(|t| t.str()) else { return };
    let et = EntryType::from_name(&ty);
    if o.role.is_some_and(|r| !role_may_match(et, r)) {
        return;
    }
    let s_of = |j: Option<J>| j.and_then(|j| j.str()).map(Cow::into_owned);
    let (role, body) = match et {
        EntryType::Message if f.message => {
            let role = match f.role {
                Some(r) => r.str().map(Cow::into_owned).unwrap_or_else(|| r.raw_str().into_owned()),
                None => "(none)".into(),
            };
            if o.role.is_some_and(|r| r != role) {
                return;
            }
            let body = if role == "bashExecution" {
                format!("$ {}\n{}", s_of(f.command).unwrap_or_default(), s_of(f.output).unwrap_or_default())
            } else {
                f.msg_content.joined()
            };
            (role, body)
        }
        EntryType::CustomMessage => ("custom".to_string(), f.content.joined()),
        EntryType::BranchSummary => match s_of(f.summary) {
            Some(t) => ("branchSummary".to_string(), t),
            None => return,
        },
        EntryType::Compaction => match s_of(f.summary) {
            Some(t) => ("compactionSummary".to_string(), t),
            None => return,
        },
        _ => return,
    };
    let (id, ts) = (f.id, f.ts);
    let message_ts = f.msg_ts;
    let found = o.needle.find_all(&body);
    let Some(&(s, e)) = found.first() else { return };
    let (cut_before, before) = tail_chars(&body, s, o.context);
    let (cut_after, after) = head_chars(&body, e, o.context);
    let oneish = |t: &str, lead: bool, trail: bool| {
        let mut x = t.replace(['\n', '\r', '\t'], " ");
        if lead {
            x.insert(0, '…');
        }
        if trail {
            x.push('…');
        }
        x
    };
    let time = match message_ts.and_then(|t| t.num()) {
        Some(t) => t,
        None => fmt::date_value(ts),
    };
    fh.hits.push(Hit {
        line: line_no,
        entry_id: id
            .map(|i| i.str().map(Cow::into_owned).unwrap_or_else(|| i.raw_str().into_owned()))
            .unwrap_or_default(),
        entry_type: ty.into_owned(),
        role,
        time,
        matches: found.len(),
        before: oneish(before, cut_before, false),
        matched: oneish(&body[s..e], false, false),
        after: oneish(after, false, cut_after),
    });
}

/// Whether an entry type can carry a message of `role` (skips parsing the rest early).
fn role_may_match(et: EntryType, role: &str) -> bool {
    match et {
        EntryType::Message => !matches!(role, "branchSummary" | "compactionSummary"),
        EntryType::CustomMessage => role == "custom",
        EntryType::BranchSummary => role == "branchSummary",
        EntryType::Compaction => role == "compactionSummary",
        _ => false,
    }
}

/// Searches one file. `None`: not a session file (or filtered out by cwd).
fn search_file(path: &Path, o: &Opts) -> Option<FileHits> {
    if o.archived {
        let dec = archive::open_archived(path).ok()?;
        return search_blocks(Blocks::new(dec, 1 << 20, 1 << 20), o);
    }
    search_blocks(Blocks::open(path, 1 << 20).ok()?, o)
}

fn search_blocks<R: std::io::Read>(mut blocks: Blocks<R>, o: &Opts) -> Option<FileHits> {
    let mut fh = FileHits::default();
    let mut header_seen = false;
    let finders: Vec<memmem::Finder> = o.needle.pre.iter().map(memmem::Finder::new).collect();
    let mut folded: Vec<u8> = Vec::new();
    let mut lines_before: u64 = 0;
    while let Some((_, block)) = blocks.next_block().ok()? {
        let mut counted = 0usize;
        let mut block_lines = 0u64;
        if !header_seen {
            // The first parsed entry must be a session header (as pi requires).
            let mut verdict = None;
            each_line(block, |l| {
                let t = String::from_utf8_lossy(l);
                let Some(j) = J::parse(t.as_bytes()).filter(|j| j.truthy()) else { return true };
                let [ty, id, cwd, ts] = j.pick(["type", "id", "cwd", "timestamp"]);
                let ok =
                    ty.and_then(|t| t.str()).as_deref() == Some("session") && id.is_some_and(|i| i.str().is_some());
                if ok {
                    fh.session_id = jv::get_str(id).map(Cow::into_owned).unwrap_or_default();
                    fh.cwd = jv::get_str(cwd).map(Cow::into_owned).unwrap_or_default();
                    fh.created = fmt::date_value(ts);
                }
                verdict = Some(ok);
                false
            });
            match verdict {
                Some(true) => header_seen = true,
                Some(false) => return None,
                None => {
                    lines_before += memchr::memchr_iter(b'\n', block).count() as u64;
                    continue;
                }
            }
            if let Some(want) = o.cwd_filter
                && !folder::cwd_matches(Some(&fh.cwd), want, o.cwd)
            {
                return None;
            }
        }
        let hay: &[u8] = if o.needle.ci {
            folded.clear();
            folded.extend(block.iter().map(u8::to_ascii_lowercase));
            &folded
        } else {
            block
        };
        // Candidate offsets: streamed for one pattern, merged for several.
        let mut merged: Vec<usize> = Vec::new();
        if finders.len() > 1 {
            for f in &finders {
                merged.extend(f.find_iter(hay));
            }
            merged.sort_unstable();
        }
        let mut next_merged = 0;
        let mut pos = 0;
        while pos < block.len() {
            let at = if finders.len() == 1 {
                match finders[0].find(&hay[pos..]) {
                    Some(i) => pos + i,
                    None => break,
                }
            } else {
                while next_merged < merged.len() && merged[next_merged] < pos {
                    next_merged += 1;
                }
                match merged.get(next_merged) {
                    Some(&at) => at,
                    None => break,
                }
            };
            let start = memchr::memrchr(b'\n', &block[..at]).map_or(0, |k| k + 1);
            let end = memchr::memchr(b'\n', &block[at..]).map_or(block.len(), |k| at + k);
            block_lines += memchr::memchr_iter(b'\n', &block[counted..start]).count() as u64;
            counted = start;
            check_line(&block[start..end], lines_before + block_lines + 1, o, &mut fh);
            if fh.hits.len() >= o.per_file_cap {
                return Some(fh);
            }
            pos = end + 1;
        }
        lines_before += block_lines + memchr::memchr_iter(b'\n', &block[counted..]).count() as u64;
    }
    header_seen.then_some(fh)
}

pub fn run(ctx: &Ctx, a: &SearchArgs, out: Out) -> Result<i32, CliError> {
    let query = a.text.as_str();
    if query.is_empty() {
        return Err(CliError::Usage("the search text is empty".into()));
    }
    let role = a.role.clone();
    let scope = folder::scope(ctx, &a.scope)?;
    if !a.archived {
        folder::require(&scope)?;
    }
    let limit = super::args::limit(a.limit, a.old_limit);
    let context = a.context;
    let needle = Needle::new(query, a.ignore_case);
    let mut files: Vec<PathBuf> = if a.archived {
        archive::archived_files(ctx, archive::scope_folder(&scope).as_deref())
    } else {
        folder::files(&scope)
    };
    if scope.is_all() {
        files.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
    }
    let o = Opts {
        needle: &needle,
        role: role.as_deref(),
        context,
        per_file_cap: limit.unwrap_or(usize::MAX),
        cwd_filter: scope.cwd_filter(),
        cwd: &ctx.cwd,
        archived: a.archived,
    };
    let json = a.json;
    let paint: Paint = ctx.paint();
    // Session ids for the shortest unique prefix, from the file names (`<time>_<id>.jsonl`).
    let name_ids: Vec<String> = files
        .iter()
        .map(|f| {
            let name = f.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let stem = name.strip_suffix(".zst").unwrap_or(&name);
            let stem = stem.strip_suffix(".jsonl").unwrap_or(stem).to_string();
            stem.rsplit_once('_').map_or(stem.clone(), |(_, id)| id.to_string())
        })
        .collect();
    let short = folder::short_len(&name_ids.iter().map(String::as_str).collect::<Vec<_>>());
    let mut total = 0usize;
    let mut failed: Option<std::io::Error> = None;
    if json {
        out.write_all(b"[")?;
    }
    super::work::run_ordered(
        &files,
        ctx.jobs,
        "searching",
        |path| search_file(path, &o),
        |i, r| {
            let Some(mut fh) = r else { return true };
            if fh.hits.is_empty() {
                return true;
            }
            if let Some(n) = limit {
                fh.hits.truncate(n - total);
            }
            let text = if json {
                json_hits(&files[i], &fh, total == 0)
            } else {
                human_hits(ctx, &files[i], &fh, short, &paint)
            };
            total += fh.hits.len();
            if let Err(e) = out.write_all(text.as_bytes()) {
                failed = Some(e);
                return false;
            }
            limit.is_none_or(|n| total < n)
        },
    );
    if let Some(e) = failed {
        return Err(e.into());
    }
    if json {
        out.write_all(b"\n]\n")?;
        return Ok(if total > 0 { 0 } else { 1 });
    }
    if total == 0 {
        eprintln!("pi-sessions: no match for {query:?} in {}", scope.describe());
        return Ok(1);
    }
    Ok(0)
}

/// One `search --json` hit (docs/cli.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HitJson<'a> {
    session_id: &'a str,
    path: Cow<'a, str>,
    cwd: &'a str,
    line: u64,
    entry_id: &'a str,
    r#type: &'a str,
    role: &'a str,
    timestamp: Option<String>,
    matches: u64,
    snippet: String,
    r#match: &'a str,
}

/// The JSON objects of one file's hits, each on its own line after a comma (none before
/// the very first).
fn json_hits(path: &Path, fh: &FileHits, first: bool) -> String {
    let mut out = String::new();
    for (k, h) in fh.hits.iter().enumerate() {
        out.push_str(if first && k == 0 { "\n" } else { ",\n" });
        let hit = HitJson {
            session_id: &fh.session_id,
            path: path.to_string_lossy(),
            cwd: &fh.cwd,
            line: h.line,
            entry_id: &h.entry_id,
            r#type: &h.entry_type,
            role: &h.role,
            timestamp: fmt::iso(h.time),
            matches: h.matches as u64,
            snippet: format!("{}{}{}", h.before, h.matched, h.after),
            r#match: &h.matched,
        };
        out.push_str(&jout::to_string(&hit));
    }
    out
}

/// A session line, then one line per hit.
fn human_hits(ctx: &Ctx, path: &Path, fh: &FileHits, short: usize, paint: &Paint) -> String {
    // The session's line: id, time, cwd, hits, then its file (relative to the session folder)
    // cut from the left to what is left of the width, or left out when little is.
    let id = folder::short(&fh.session_id, short);
    let time = fmt::short_time(fh.created);
    let hits = fmt::count(fh.hits.len() as u64, "hit", "hits");
    let cwd = fmt::trunc_left(&fh.cwd, 40);
    let used = fmt::width(&id) + 2 + fmt::width(&time) + 2 + fmt::width(&cwd) + 2 + fmt::width(&hits);
    let room = ctx.width.saturating_sub(used + 3);
    let file = if room >= 16 {
        format!(" · {}", fmt::trunc_left(&ctx.shown(&path.to_string_lossy()), room))
    } else {
        String::new()
    };
    let head = format!("{}  {time}  {}  {}", paint.cyan(&id), paint.dim(&cwd), paint.dim(&format!("{hits}{file}")));
    let mut o = fmt::fit(&head, ctx.width);
    o.push('\n');
    for h in &fh.hits {
        let more = if h.matches > 1 { paint.dim(&format!(" (+{})", h.matches - 1)) } else { String::new() };
        // The match stays in sight: the context before it gets at most half of what the line
        // has left after the id, role and time; the line is then cut at the width.
        let lead = 2 + fmt::width(&fmt::trunc(&h.entry_id, 12)) + 1 + fmt::width(&h.role).max(13) + 1 + 16 + 2;
        let room = ctx.width.saturating_sub(lead + fmt::width(&h.matched) + fmt::visible_width(&more));
        let before = fmt::trunc_left(&h.before, (room / 2).max(8));
        o.push_str(&format!(
            "{}\n",
            fmt::fit(
                &format!(
                    "  {} {:<13} {}  {}{}{}{}",
                    paint.dim(&fmt::trunc(&h.entry_id, 12)),
                    h.role,
                    paint.dim(&fmt::short_time(h.time)),
                    before,
                    paint.hit(&h.matched),
                    h.after,
                    more
                ),
                ctx.width
            )
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_pass_fields() {
        let line = br#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"one"},"two",{"type":"text","text":"thr\u0065e"}],"timestamp":5},"timestamp":"t"}"#;
        let f = scan_entry(line).unwrap();
        assert_eq!(f.msg_content.joined(), "one\ntwo\nthree");
        assert_eq!(f.role.unwrap().str().unwrap(), "assistant");
        assert_eq!(f.msg_ts.unwrap().num(), Some(5.0));
        assert!(scan_entry(br#"{"type":"message","message":{"content":[1,]}}"#).is_none());
        assert!(scan_entry(br#"{"type":"message"} x"#).is_none());
        let c = scan_entry(br#"{"type":"custom_message","content":"hello"}"#).unwrap();
        assert_eq!(c.content.joined(), "hello");
    }

    #[test]
    fn snippets_cut_on_chars() {
        assert_eq!(tail_chars("héllo world", 6, 3), (true, "llo"));
        assert_eq!(tail_chars("ab", 2, 5), (false, "ab"));
        assert_eq!(head_chars("héllo", 0, 2), (true, "hé"));
    }
}
