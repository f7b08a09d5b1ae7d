//! `ls`: sessions newest first, with the fields of pi's `SessionInfo`.

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use pi_session_native::json::Kind;
use pi_session_native::listing::rows::{Row as ScanRow, Units};
use pi_session_native::listing::{self, index};

use super::args::LsArgs;
use super::fmt::{self, date_value};
use serde::Serialize;
use serde_json::value::RawValue;

use super::jout;
use super::jv::J;
use super::{CliError, Ctx, Out, paths};

/// One listed session (pi's `SessionInfo`, plus size).
pub struct Listed {
    pub path: PathBuf,
    pub id: String,
    /// Raw JSON of `header.id` (a string in every valid session).
    pub id_raw: String,
    pub cwd: String,
    pub name: Option<String>,
    pub parent_raw: Option<String>,
    pub first_message: String,
    pub message_count: u64,
    pub created: f64,
    pub modified: f64,
    pub size: u64,
}

/// One `ls --json` element (docs/cli.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Row<'a> {
    id: Box<RawValue>,
    path: Cow<'a, str>,
    cwd: &'a str,
    name: Option<&'a str>,
    first_message: &'a str,
    message_count: u64,
    created: Option<String>,
    modified: Option<String>,
    size: u64,
    parent_session_path: Box<RawValue>,
}

/// `buildSessionInfo` for one file (`None`: not a session / unreadable), through the
/// listing index the addon keeps (`listing::index`): an unchanged file is not read again, by
/// this command or by pi.
pub fn info(path: &Path) -> Option<Listed> {
    let row = listing::scanner::row_of(&path.to_string_lossy(), &AtomicBool::new(false));
    let basic = match &*row {
        ScanRow::Null => return None,
        ScanRow::Info { head, first, .. } => Basic::from_row(head, first.units())?,
    };
    let meta = fs::metadata(path).ok()?;
    let size = meta.len();
    listed(path, basic, &meta, size)
}

/// `info` of an archived session (`sessions-archive/…/*.jsonl.zst`), read through the zstd
/// stream with the reference's steps (`slow_info_from`); `size` is the original file's, the mtime
/// the archive file's (the session's, kept by `archive`).
pub fn archived_info(path: &Path) -> Option<Listed> {
    let mut counted = Counted { inner: super::cmd_archive::open_archived(path).ok()?, n: 0 };
    let basic = slow_info_from(std::io::BufReader::with_capacity(1 << 20, &mut counted))?;
    let meta = fs::metadata(path).ok()?;
    let size = counted.n;
    listed(path, basic, &meta, size)
}

/// A reader that counts the bytes it hands out.
struct Counted<R> {
    inner: R,
    n: u64,
}

impl<R: std::io::Read> std::io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n += k as u64;
        Ok(k)
    }
}

fn listed(path: &Path, basic: Basic, meta: &fs::Metadata, size: u64) -> Option<Listed> {
    let h = J::parse(basic.header.as_bytes())?;
    let [id, cwd, ts, parent] = h.pick(["id", "cwd", "timestamp", "parentSession"]);
    let header_time = match ts {
        Some(t) if t.kind() == Kind::String => date_value(Some(t)),
        _ => f64::NAN,
    };
    let modified = match basic.last_activity {
        Some(a) if a > 0.0 => a,
        _ if !header_time.is_nan() => header_time,
        _ => listing::info::mtime_ms(meta),
    };
    Some(Listed {
        path: path.to_path_buf(),
        id: id.map(|i| i.str().map(Cow::into_owned).unwrap_or_else(|| i.raw_str().into_owned())).unwrap_or_default(),
        id_raw: id.map_or("null".into(), |i| i.raw_str().into_owned()),
        cwd: cwd.and_then(|c| c.str()).map(Cow::into_owned).unwrap_or_default(),
        name: basic.name,
        parent_raw: parent.map(|p| p.raw_str().into_owned()),
        first_message: if basic.first_message.is_empty() { "(no messages)".into() } else { basic.first_message },
        message_count: basic.count,
        created: date_value(ts),
        modified,
        size,
    })
}

/// The decoded essentials of a `SessionInfo` scan.
struct Basic {
    header: String,
    name: Option<String>,
    count: u64,
    last_activity: Option<f64>,
    first_message: String,
}

impl Basic {
    /// From the core's row: `head` is `[header,name|null,count,lastActivity|null,[pendingTimes],`
    /// (see `listing::rows::Row`), `first` the decoded first message.
    fn from_row(head: &str, first: Units) -> Option<Basic> {
        let array = format!("{head}0]");
        let row = J::parse(array.as_bytes())?;
        let items = row.items();
        let [header, name, count, last, pending] = [0, 1, 2, 3, 4].map(|i| items.get(i).copied());
        let mut last = last.and_then(|l| l.num());
        for raw in pending.map(|p| p.items()).unwrap_or_default() {
            let t = date_value(Some(raw));
            if !t.is_nan() {
                last = Some(last.unwrap_or(0.0).max(t));
            }
        }
        let name = name.and_then(|j| j.str()).map(|s| s.trim().to_string());
        Some(Basic {
            header: header?.raw_str().into_owned(),
            name: name.filter(|n| !n.is_empty()),
            count: count?.num()? as u64,
            last_activity: last,
            first_message: match first {
                Units::Latin1(b) => b.iter().map(|&c| char::from(c)).collect(),
                Units::Utf16(u) => String::from_utf16_lossy(u),
            },
        })
    }
}

/// The reference's `buildSessionInfo` on JSON views, over a stream a line at a time, for an
/// archived session (zstd: the core's scan reads plain files). A line's bytes decoded alone are
/// decoded as in the whole text: `\n` never falls inside a UTF-8 sequence. A listing for the
/// terminal needs only the row it shows, decoded: `js_string` does the coercions, and
/// `allMessagesText` is left out.
fn slow_info_from(mut reader: impl std::io::BufRead) -> Option<Basic> {
    let mut out =
        Basic { header: String::new(), name: None, count: 0, last_activity: None, first_message: String::new() };
    let mut have_header = false;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        if reader.read_until(b'\n', &mut raw).ok()? == 0 {
            break;
        }
        if raw.last() == Some(&b'\n') {
            raw.pop();
        }
        let text = String::from_utf8_lossy(&raw);
        // readline: lines end at \n, \r\n or \r.
        for line in text.split('\r') {
            let Some(e) = J::parse(line.as_bytes()) else { continue };
            if !e.truthy() {
                continue;
            }
            let [ty, name, message, ts] = e.pick(["type", "name", "message", "timestamp"]);
            let ty = ty.and_then(|t| t.str()).unwrap_or_default();
            if !have_header {
                if ty != "session" {
                    return None;
                }
                have_header = true;
                out.header = line.to_string();
                continue;
            }
            if ty == "session_info" {
                out.name = match name {
                    None => None,
                    Some(n) if n.is_null() => None,
                    Some(n) => Some(n.str()?.trim().to_string()).filter(|s| !s.is_empty()),
                };
            }
            if ty != "message" {
                continue;
            }
            out.count += 1;
            let m = message.filter(|m| !m.is_null())?;
            let [role, content, mts] = m.pick(["role", "content", "timestamp"]);
            let Some(role) = role.and_then(|r| r.str()) else { continue };
            let Some(content) = content else { continue };
            if role != "user" && role != "assistant" {
                continue;
            }
            let t = match mts.and_then(|t| t.num()) {
                Some(n) => n,
                None => date_value(ts),
            };
            if !t.is_nan() {
                out.last_activity = Some(out.last_activity.unwrap_or(0.0).max(t));
            }
            let text = match content.str() {
                Some(s) => s.into_owned(),
                None if content.kind() == Kind::Array => {
                    let parts: Option<Vec<String>> = content
                        .items()
                        .iter()
                        .filter(|b| b.get("type").and_then(|t| t.str()).as_deref() == Some("text") || b.is_null())
                        .map(|b| if b.is_null() { None } else { Some(js_string(b.get("text"))) })
                        .collect();
                    parts?.join(" ")
                }
                None => return None,
            };
            if text.is_empty() {
                continue;
            }
            if out.first_message.is_empty() && role == "user" {
                out.first_message = text;
            }
        }
    }
    have_header.then_some(out)
}

/// `String(value)` as `Array.prototype.join` applies it (undefined and null are empty).
fn js_string(v: Option<J>) -> String {
    let Some(v) = v else { return String::new() };
    match v.kind() {
        Kind::Null => String::new(),
        Kind::String => v.str().unwrap_or_default().into_owned(),
        Kind::Number => jout::num_text(v.num().unwrap_or(f64::NAN)),
        Kind::True => "true".into(),
        Kind::False => "false".into(),
        Kind::Object => "[object Object]".into(),
        Kind::Array => v.items().iter().map(|i| js_string(Some(*i))).collect::<Vec<_>>().join(","),
    }
}

/// Lists a scope: infos of every session file, filtered and sorted newest first.
pub fn list(ctx: &Ctx, scope: &paths::Scope) -> Vec<Listed> {
    let mut files = paths::files(scope);
    if scope.is_all() {
        files.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
    }
    let infos = super::work::map(&files, ctx.jobs, "scanning", |p| info(p));
    // Every session file of the scope's folders was seen: their indexes can be written.
    index::finish_listing(&files.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>());
    let mut out: Vec<Listed> = infos.into_iter().flatten().collect();
    if let Some(want) = scope.cwd_filter() {
        out.retain(|s| paths::cwd_matches(Some(&s.cwd), want, &ctx.cwd));
    }
    out.sort_by(|a, b| b.modified.total_cmp(&a.modified));
    out
}

/// Length of the shortest prefix (at least 8) that tells the given ids apart.
pub fn short_len(ids: &[&str]) -> usize {
    let mut sorted: Vec<&str> = ids.to_vec();
    sorted.sort_unstable();
    let mut need = 8;
    for w in sorted.windows(2) {
        let common = w[0].chars().zip(w[1].chars()).take_while(|(a, b)| a == b).count();
        if w[0] != w[1] {
            need = need.max(common + 1);
        }
    }
    need
}

pub fn short(id: &str, n: usize) -> String {
    id.chars().take(n).collect()
}

/// Lists the archived sessions of a scope (`ls --archived`), newest first.
pub fn list_archived(ctx: &Ctx, scope: &paths::Scope) -> Vec<Listed> {
    let files = super::cmd_archive::archived_files(ctx, super::cmd_archive::scope_folder(scope).as_deref());
    let infos = super::work::map(&files, ctx.jobs, "scanning", |p| archived_info(p));
    let mut out: Vec<Listed> = infos.into_iter().flatten().collect();
    if let Some(want) = scope.cwd_filter() {
        out.retain(|s| paths::cwd_matches(Some(&s.cwd), want, &ctx.cwd));
    }
    out.sort_by(|a, b| b.modified.total_cmp(&a.modified));
    out
}

pub fn run(ctx: &Ctx, a: &LsArgs, out: Out) -> Result<i32, CliError> {
    let scope = paths::scope(ctx, &a.scope)?;
    let limit = a.limit;
    let mut sessions = if a.archived { list_archived(ctx, &scope) } else { list(ctx, &scope) };
    if let Some(n) = limit {
        sessions.truncate(n);
    }
    if a.json {
        let rows = sessions.iter().map(|s| Row {
            id: jout::raw(&s.id_raw),
            path: s.path.to_string_lossy(),
            cwd: &s.cwd,
            name: s.name.as_deref(),
            first_message: &s.first_message,
            message_count: s.message_count,
            created: fmt::iso(s.created),
            modified: fmt::iso(s.modified),
            size: s.size,
            parent_session_path: s.parent_raw.as_deref().map_or_else(jout::null, jout::raw),
        });
        writeln!(out, "{}", jout::lines(rows, true))?;
        return Ok(0);
    }
    if sessions.is_empty() {
        eprintln!("pi-sessions: no sessions in {}", scope.describe());
        return Ok(0);
    }
    let paint = ctx.paint();
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    let n = short_len(&ids);
    let all = scope.is_all();
    let home = paths::home();
    let cwd_of = |c: &str| -> String {
        let h = home.to_string_lossy();
        match c.strip_prefix(h.as_ref()) {
            Some(rest) if !h.is_empty() && h != "/" && (rest.is_empty() || rest.starts_with('/')) => format!("~{rest}"),
            _ => c.to_string(),
        }
    };
    let cwd_w =
        if all { sessions.iter().map(|s| fmt::width(&cwd_of(&s.cwd)).min(40)).max().unwrap_or(3).max(3) } else { 0 };
    let mut head = format!("{:<16}  {:>6}  {:>7}  {:<n$}", "MODIFIED (UTC)", "MSGS", "SIZE", "ID");
    if all {
        head.push_str(&format!("  {:<cwd_w$}", "CWD"));
    }
    head.push_str("  TITLE");
    writeln!(out, "{}", paint.dim(&head))?;
    let fixed = 16 + 2 + 6 + 2 + 7 + 2 + n + 2 + if all { cwd_w + 2 } else { 0 };
    let room = ctx.width.saturating_sub(fixed).max(20);
    for s in &sessions {
        let mut line = format!(
            "{:<16}  {:>6}  {:>7}  {}",
            fmt::short_time(s.modified),
            s.message_count,
            fmt::size(s.size),
            paint.cyan(&fmt::pad_right(&short(&s.id, n), n))
        );
        if all {
            line.push_str(&format!("  {}", fmt::pad_right(&fmt::trunc(&cwd_of(&s.cwd), 40), cwd_w)));
        }
        let title = match &s.name {
            Some(name) => paint.bold(&fmt::trunc(&fmt::one_line(name), room)),
            None => fmt::trunc(&fmt::one_line(&s.first_message), room),
        };
        line.push_str("  ");
        line.push_str(&title);
        writeln!(out, "{line}")?;
    }
    Ok(0)
}
