//! `search`: full-text search of message text across sessions.
//!
//! Each file is streamed in blocks of whole lines (bounded memory) and searched as raw bytes
//! with `memchr::memmem`; only lines with a raw hit are parsed, and the hit is confirmed on
//! the decoded message text. Files are spread over worker threads.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use memchr::memmem;
use pi_session_native::entry::EntryType;

use super::args::{flag, opt, Parsed};
use super::fmt::{self, Paint};
use super::jv::{self, J, W};
use super::lines::{each_line, Blocks};
use super::{cmd_ls, paths, session, Command, CliError, Ctx, Out};

pub const ROLES: &[&str] =
    &["user", "assistant", "toolResult", "system", "custom", "bashExecution", "branchSummary", "compactionSummary"];

pub const COMMAND: Command = Command {
    name: "search",
    summary: "full-text search of message text across sessions",
    opts: &[
        opt("cwd", None),
        flag("all", Some('a')),
        opt("role", Some('r')),
        flag("json", None),
        flag("ignore-case", Some('i')),
        opt("limit", Some('n')),
        opt("context", Some('C')),
    ],
    help: "\
Usage: pi-sessions search <text> [--cwd PATH | --all] [--role ROLE] [-i] [--limit N] [--json]

Find <text> (a plain substring, no regex) in the text of messages: text blocks of user,
assistant, toolResult, system and custom messages, bashExecution commands and output,
custom_message content, and branch/compaction summaries (tool-call arguments and thinking
are not searched). Sessions are searched newest first; each hit shows the entry and a
snippet. Files are read as a stream and searched as raw bytes first, so only matching
lines are parsed.

Options:
  --cwd PATH       sessions of this project (default: the current directory)
  -a, --all        sessions of every project
  -r, --role ROLE  only messages of this role: user, assistant, toolResult, system,
                   custom, bashExecution, branchSummary, compactionSummary
  -i, --ignore-case
                   case-insensitive (Unicode lower case)
  -n, --limit N    stop after N hits (newest sessions first)
  -C, --context N  characters of snippet context on each side (default 60)
  --json           a JSON array of hits (see docs/cli.md)

Exit code 0 when something matched, 1 when nothing did.",
    run,
};

/// What to look for.
struct Needle {
    /// Raw-byte prefilter (ASCII-folded when case-insensitive); empty: every line is a candidate.
    pre: Vec<u8>,
    /// The text to confirm (lower-cased when case-insensitive).
    text: String,
    ci: bool,
}

impl Needle {
    fn new(text: &str, ci: bool) -> Needle {
        // The longest piece that is stored verbatim in JSON text (no quote, backslash or
        // control character; ASCII only when folding case, since only ASCII is folded).
        let mut best: &str = "";
        let mut start = None;
        for (i, c) in text.char_indices().chain(std::iter::once((text.len(), '\0'))) {
            let plain = c != '\0' && c != '"' && c != '\\' && (c as u32) >= 0x20 && (!ci || c.is_ascii());
            match (plain, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    if i - s > best.len() {
                        best = &text[s..i];
                    }
                    start = None;
                }
                _ => {}
            }
        }
        let pre = if ci { best.to_ascii_lowercase().into_bytes() } else { best.as_bytes().to_vec() };
        Needle { pre, text: if ci { text.to_lowercase() } else { text.to_string() }, ci }
    }

    /// Byte ranges of matches in `hay` (non-overlapping).
    fn find_all(&self, hay: &str) -> Vec<(usize, usize)> {
        if !self.ci {
            return memmem::find_iter(hay.as_bytes(), self.text.as_bytes()).map(|i| (i, i + self.text.len())).collect();
        }
        // Lower-case the haystack keeping a map back to original byte offsets.
        let mut low = String::with_capacity(hay.len());
        let mut map: Vec<usize> = Vec::with_capacity(hay.len() + 1);
        for (i, c) in hay.char_indices() {
            for l in c.to_lowercase() {
                let before = low.len();
                low.push(l);
                map.extend(std::iter::repeat_n(i, low.len() - before));
            }
        }
        map.push(hay.len());
        let mut out = Vec::new();
        for i in memmem::find_iter(low.as_bytes(), self.text.as_bytes()) {
            let (s, e) = (map[i], map[i + self.text.len()]);
            // A match ending inside a character's lower-case expansion extends to its end.
            let e = if e == s { hay[s..].chars().next().map_or(s, |c| s + c.len_utf8()) } else { e };
            if out.last().is_none_or(|&(_, pe)| s >= pe) {
                out.push((s, e));
            }
        }
        out
    }
}

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

fn check_line(line: &[u8], line_no: u64, o: &Opts, fh: &mut FileHits) {
    // Strings are decoded (and invalid UTF-8 replaced) one by one, so the line is not
    // validated as UTF-8 as a whole.
    let Some((_, [ty, id, ts, message, content, summary])) =
        J::parse_pick(line, ["type", "id", "timestamp", "message", "content", "summary"])
    else {
        return;
    };
    let Some(ty) = ty.and_then(|t| t.str()) else { return };
    let et = EntryType::from_name(&ty);
    if o.role.is_some_and(|r| !role_may_match(et, r)) {
        return;
    }
    let Some((role, body)) = session::entry_text_of(et, message, content, summary) else { return };
    if o.role.is_some_and(|r| r != role) {
        return;
    }
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
    let time = match message.and_then(|m| m.get("timestamp")).and_then(|t| t.num()) {
        Some(t) => t,
        None => fmt::date_value(ts),
    };
    fh.hits.push(Hit {
        line: line_no,
        entry_id: id.map(|i| i.str().map(Cow::into_owned).unwrap_or_else(|| i.raw_str().into_owned())).unwrap_or_default(),
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
    let mut blocks = Blocks::open(path, 1 << 20).ok()?;
    let mut fh = FileHits::default();
    let mut header_seen = false;
    let finder = memmem::Finder::new(&o.needle.pre);
    let mut folded: Vec<u8> = Vec::new();
    let mut lines_before: u64 = 0;
    while let Some(block) = blocks.next_block().ok()? {
        let mut counted = 0usize;
        let mut block_lines = 0u64;
        if !header_seen {
            // The first parsed entry must be a session header (as pi requires).
            let mut verdict = None;
            each_line(block, |l| {
                let t = String::from_utf8_lossy(l);
                let Some(j) = J::parse(t.as_bytes()).filter(|j| j.truthy()) else { return true };
                let [ty, id, cwd, ts] = j.pick(["type", "id", "cwd", "timestamp"]);
                let ok = ty.and_then(|t| t.str()).as_deref() == Some("session") && id.is_some_and(|i| i.str().is_some());
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
            if let Some(want) = o.cwd_filter {
                if !paths::cwd_matches(Some(&fh.cwd), want, o.cwd) {
                    return None;
                }
            }
        }
        let hay: &[u8] = if o.needle.ci {
            folded.clear();
            folded.extend(block.iter().map(u8::to_ascii_lowercase));
            &folded
        } else {
            block
        };
        let mut pos = 0;
        while pos < block.len() {
            let Some(i) = finder.find(&hay[pos..]) else { break };
            let at = pos + i;
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

fn run(ctx: &Ctx, p: &Parsed, out: Out) -> Result<i32, CliError> {
    let [query] = super::positionals(p, &["text"], "search")?[..] else { unreachable!() };
    if query.is_empty() {
        return Err(CliError::Usage("the search text is empty".into()));
    }
    let role = p.choice("role", ROLES)?;
    let scope = paths::scope(ctx, p)?;
    let limit = p.num("limit")?;
    let context = p.num("context")?.unwrap_or(60);
    let needle = Needle::new(query, p.has("ignore-case"));
    let mut files: Vec<PathBuf> = paths::files(&scope);
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
    };
    let results = super::par::map(&files, ctx.jobs, "searching", |path| search_file(path, &o));
    let mut total = 0usize;
    let mut groups: Vec<(&PathBuf, FileHits)> = Vec::new();
    for (path, r) in files.iter().zip(results) {
        let Some(mut fh) = r else { continue };
        if fh.hits.is_empty() {
            continue;
        }
        if let Some(n) = limit {
            fh.hits.truncate(n - total);
        }
        total += fh.hits.len();
        groups.push((path, fh));
        if limit.is_some_and(|n| total >= n) {
            break;
        }
    }
    if p.has("json") {
        let mut w = W::new();
        w.arr();
        for (path, fh) in &groups {
            for h in &fh.hits {
                w.nl().obj();
                w.key("sessionId").str(&fh.session_id);
                w.key("path").str(&path.to_string_lossy());
                w.key("cwd").str(&fh.cwd);
                w.key("line").int(h.line);
                w.key("entryId").str(&h.entry_id);
                w.key("type").str(&h.entry_type);
                w.key("role").str(&h.role);
                w.key("timestamp").opt_str(fmt::iso(h.time).as_deref());
                w.key("matches").int(h.matches as u64);
                w.key("snippet").str(&format!("{}{}{}", h.before, h.matched, h.after));
                w.key("match").str(&h.matched);
                w.end();
            }
        }
        w.nl();
        w.end();
        writeln!(out, "{}", w.s)?;
        return Ok(if total > 0 { 0 } else { 1 });
    }
    let paint: Paint = ctx.paint();
    let ids: Vec<&str> = groups.iter().map(|(_, f)| f.session_id.as_str()).collect();
    let n = cmd_ls::short_len(&ids);
    let mut o = String::new();
    for (path, fh) in &groups {
        o.push_str(&format!(
            "{}  {}  {}  {}\n",
            paint.cyan(&cmd_ls::short(&fh.session_id, n)),
            fmt::short_time(fh.created),
            paint.dim(&fh.cwd),
            paint.dim(&format!("{} hit{} · {}", fh.hits.len(), if fh.hits.len() == 1 { "" } else { "s" }, path.display()))
        ));
        for h in &fh.hits {
            let more = if h.matches > 1 { paint.dim(&format!(" (+{})", h.matches - 1)) } else { String::new() };
            o.push_str(&format!(
                "  {} {:<10} {}  {}{}{}{}\n",
                paint.dim(&fmt::trunc(&h.entry_id, 12)),
                h.role,
                paint.dim(&fmt::short_time(h.time)),
                h.before,
                paint.hit(&h.matched),
                h.after,
                more
            ));
        }
        out.write_all(o.as_bytes())?;
        o.clear();
    }
    if total == 0 {
        eprintln!("pi-sessions: no match for {query:?} in {}", scope.describe());
        return Ok(1);
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needle_prefilter_and_matching() {
        let n = Needle::new("say \"hi\" now", false);
        assert_eq!(n.pre, b"say ");
        let n = Needle::new("Größe", true);
        assert_eq!(n.pre, b"gr");
        assert_eq!(n.find_all("eine GRÖSSE und GRÖßE"), vec![(17, 24)]);
        let n = Needle::new("abc", false);
        assert_eq!(n.find_all("abcabc"), vec![(0, 3), (3, 6)]);
    }

    #[test]
    fn snippets_cut_on_chars() {
        assert_eq!(tail_chars("héllo world", 6, 3), (true, "llo"));
        assert_eq!(tail_chars("ab", 2, 5), (false, "ab"));
        assert_eq!(head_chars("héllo", 0, 2), (true, "hé"));
    }
}
