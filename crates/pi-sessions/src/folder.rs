//! The session folder: where a scope's session files are (`Scope`, `files`), which file a
//! session argument names (`find_session`), and what a listing shows of each (`Listed`,
//! `info`, `list`: pi's `SessionInfo`). The commands use it; it uses no command.

use std::borrow::Cow;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use pi_session_core::header::{self, HeaderScan};
use pi_session_core::json::Kind;
use pi_session_core::listing::{self, Row as ScanRow, Units};

use super::args::ScopeArgs;
use super::ctx::{CliError, Ctx};
use super::fmt::date_value;
use super::jv::{self, J};
use super::paths::{encode_cwd, resolve};
use super::{jout, skipped, work};

pub fn sessions_dir(ctx: &Ctx) -> PathBuf {
    ctx.agent_dir.join("sessions")
}

/// The files a listing command scans.
#[derive(Debug)]
pub enum Scope {
    /// One folder; `cwd_filter` keeps sessions whose header cwd resolves to it.
    Dir { dir: PathBuf, cwd_filter: Option<PathBuf> },
    /// Every project folder under `<agent dir>/sessions`.
    All { sessions: PathBuf },
}

impl Scope {
    pub fn describe(&self) -> String {
        match self {
            Scope::Dir { dir, .. } => dir.display().to_string(),
            Scope::All { sessions } => format!("{} (all projects)", sessions.display()),
        }
    }

    pub fn cwd_filter(&self) -> Option<&Path> {
        match self {
            Scope::Dir { cwd_filter, .. } => cwd_filter.as_deref(),
            Scope::All { .. } => None,
        }
    }

    pub fn is_all(&self) -> bool {
        matches!(self, Scope::All { .. })
    }
}

/// The agent dir, or "not found" naming it when it does not exist: a typo in `--agent-dir`
/// is not an empty folder.
pub fn require_agent_dir(ctx: &Ctx) -> Result<(), CliError> {
    if ctx.agent_dir.is_dir() {
        return Ok(());
    }
    Err(CliError::NotFound(format!(
        "agent dir {}: no such directory (from --agent-dir, else $PI_CODING_AGENT_DIR, else ~/.pi/agent)",
        ctx.agent_dir.display()
    )))
}

/// The scope's folder, or "not found" naming it when it does not exist (exit 1).
pub fn require(scope: &Scope) -> Result<(), CliError> {
    let dir = match scope {
        Scope::Dir { dir, .. } | Scope::All { sessions: dir } => dir,
    };
    if dir.is_dir() {
        return Ok(());
    }
    Err(CliError::NotFound(format!("no sessions: {} does not exist", dir.display())))
}

/// `--cwd PATH | --all`, with `--dir` pointing at one folder (then `--cwd` filters by header cwd).
pub fn scope(ctx: &Ctx, p: &ScopeArgs) -> Result<Scope, CliError> {
    let cwd = p.cwd.as_deref().map(|c| resolve(c, &ctx.cwd));
    if let Some(dir) = &ctx.dir {
        return Ok(Scope::Dir { dir: dir.clone(), cwd_filter: cwd });
    }
    require_agent_dir(ctx)?;
    if p.all {
        return Ok(Scope::All { sessions: sessions_dir(ctx) });
    }
    let cwd = cwd.unwrap_or_else(|| ctx.cwd.clone());
    Ok(Scope::Dir { dir: sessions_dir(ctx).join(encode_cwd(&cwd)), cwd_filter: None })
}

fn jsonl_in(dir: &Path, out: &mut Vec<PathBuf>) {
    let Some(rd) = skipped::read_dir(dir) else { return };
    let mut names: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .map(|e| e.path())
        .filter(|p| skipped::readable_file(p))
        .collect();
    // Newest first by name (`<iso>_<id>.jsonl`), like `list()`'s pre-sort.
    names.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
    out.extend(names);
}

/// Project folders under a sessions dir (directories and symlinks to them).
pub fn project_dirs(sessions: &Path) -> Vec<PathBuf> {
    let Some(rd) = skipped::read_dir(sessions) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs
}

/// Session files of a scope.
pub fn files(scope: &Scope) -> Vec<PathBuf> {
    let mut out = Vec::new();
    match scope {
        Scope::Dir { dir, .. } => jsonl_in(dir, &mut out),
        Scope::All { sessions } => {
            for d in project_dirs(sessions) {
                jsonl_in(&d, &mut out);
            }
        }
    }
    out
}

/// `sessionCwdMatches`.
pub fn cwd_matches(header_cwd: Option<&str>, want: &Path, cwd: &Path) -> bool {
    match header_cwd {
        Some(c) if !c.is_empty() => super::paths::same_path(&resolve(c, cwd), want),
        _ => false,
    }
}

/// The session id in a header line, when it is a string.
pub fn header_id(header: &str) -> Option<String> {
    match header::header_field_raw(header, "id") {
        Some((Kind::String, raw)) => Some(jv::decode(&raw.as_bytes()[1..raw.len() - 1]).into_owned()),
        _ => None,
    }
}

/// Resolves `<id|path|prefix>` to one session file.
///
/// An existing file path wins. Otherwise session ids (from headers) are matched in `--dir`
/// or in every project folder: an exact id first, then a unique prefix. Ambiguous → exit 2.
pub fn find_session(ctx: &Ctx, arg: &str) -> Result<PathBuf, CliError> {
    let as_path = resolve(arg, &ctx.cwd);
    if as_path.is_file() {
        return Ok(as_path);
    }
    if arg.is_empty() {
        return Err(CliError::Usage("empty session id".into()));
    }
    if as_path.is_dir() {
        return Err(CliError::NotFound(format!("{} is a directory, not a session file", as_path.display())));
    }
    if ctx.dir.is_none() {
        require_agent_dir(ctx)?;
    }
    let looks_like_path = arg.contains('/') || arg.ends_with(".jsonl");
    let scope = match &ctx.dir {
        Some(d) => Scope::Dir { dir: d.clone(), cwd_filter: None },
        None => Scope::All { sessions: sessions_dir(ctx) },
    };
    let candidates = files(&scope);
    let mut exact = Vec::new();
    let mut prefix = Vec::new();
    for path in candidates {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let Ok(HeaderScan::Header(h)) = header::read_header(&path) else { continue };
        let Some(id) = header_id(&h) else { continue };
        if id == arg || stem == arg {
            exact.push((id, path));
        } else if id.starts_with(arg) {
            prefix.push((id, path));
        }
    }
    let pool = if exact.is_empty() { prefix } else { exact };
    match pool.len() {
        0 if looks_like_path => Err(CliError::NotFound(format!("no such session file: {}", as_path.display()))),
        0 => Err(CliError::NotFound(format!("no session matches {arg:?} in {}", scope.describe()))),
        1 => Ok(pool.into_iter().next().map(|(_, p)| p).unwrap_or_default()),
        n => {
            let mut msg = format!("{arg:?} is ambiguous: {n} sessions match\n");
            for (id, p) in pool.iter().take(20) {
                msg.push_str(&format!("  {id}  {}\n", p.display()));
            }
            if n > 20 {
                msg.push_str(&format!("  … and {} more\n", n - 20));
            }
            msg.push_str("use a longer prefix or the file path");
            Err(CliError::Ambiguous(msg))
        }
    }
}

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

/// `buildSessionInfo` for one file (`None`: not a session / unreadable), through the
/// listing index the addon keeps (`listing::index`): an unchanged file is not read again, by
/// this command or by pi.
pub fn info(path: &Path) -> Option<Listed> {
    if path.to_str().is_none() {
        // The core's scan (and its index) take a path as text: a name that is not UTF-8 is
        // read here, with the same steps, so `ls` lists what `stats` and `search` count.
        let file = fs::File::open(path).ok()?;
        return info_of_stream(path, file);
    }
    let row = listing::row_of(&path.to_string_lossy(), &AtomicBool::new(false));
    let basic = match &*row {
        ScanRow::Null => return None,
        ScanRow::Info { head, first, .. } => Basic::from_row(head, first.units())?,
    };
    let meta = fs::metadata(path).ok()?;
    let size = meta.len();
    listed(path, basic, &meta, size)
}

/// `info` of a session read from a stream (an archived session through its zstd stream),
/// with the reference's steps (`slow_info`); `size` is the bytes the stream gave, the mtime
/// `path`'s.
pub fn info_of_stream(path: &Path, stream: impl Read) -> Option<Listed> {
    let mut counted = Counted { inner: stream, n: 0 };
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

impl<R: Read> Read for Counted<R> {
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
        _ => listing::mtime_ms(meta),
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
pub fn list(ctx: &Ctx, scope: &Scope) -> Vec<Listed> {
    let mut files = files(scope);
    if scope.is_all() {
        files.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
    }
    let infos = work::map(&files, ctx.jobs, "scanning", |p| info(p));
    // Every session file of the scope's folders was seen: their indexes can be written.
    listing::finish_listing(&files.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>());
    let mut out: Vec<Listed> = infos.into_iter().flatten().collect();
    if let Some(want) = scope.cwd_filter() {
        out.retain(|s| cwd_matches(Some(&s.cwd), want, &ctx.cwd));
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

/// The session id of a file, or why it is not a session.
pub fn session_id(path: &Path) -> Result<String, String> {
    match header::read_header(path) {
        Ok(HeaderScan::Header(h)) => header_id(&h).ok_or_else(|| "not a session file".to_string()),
        Ok(_) => Err("not a session file (its first entry is not a session header)".into()),
        Err(e) => Err(format!("cannot read: {e}")),
    }
}

/// Re-lists the folders whose files were removed or added, so the listing index (rows keyed by
/// file state: a gone file is never listed from it anyway) drops their rows and is written.
pub fn refresh_index(ctx: &Ctx, folders: &[PathBuf]) {
    let mut seen: Vec<&PathBuf> = folders.iter().collect();
    seen.sort();
    seen.dedup();
    for dir in seen {
        let _ = list(ctx, &Scope::Dir { dir: dir.clone(), cwd_filter: None });
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An agent dir in a temp folder, removed at the end.
    pub(crate) struct Agent(pub PathBuf);

    impl Agent {
        pub(crate) fn new(name: &str) -> Agent {
            let d = std::env::temp_dir().join(format!("pis-folder-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&d);
            fs::create_dir_all(&d).unwrap();
            Agent(d)
        }

        pub(crate) fn ctx(&self, dir: Option<PathBuf>) -> Ctx {
            Ctx {
                agent_dir: self.0.clone(),
                dir,
                cwd: PathBuf::from("/work/app"),
                color: false,
                jobs: 2,
                io_jobs: 2,
                width: 120,
                full_paths: false,
            }
        }

        /// A session file `<project>/<name>` with this header id and one message.
        pub(crate) fn put(&self, project: &str, name: &str, id: &str) -> PathBuf {
            let dir = self.0.join("sessions").join(project);
            fs::create_dir_all(&dir).unwrap();
            let p = dir.join(name);
            fs::write(
                &p,
                format!(
                    "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/work/app\"}}\n\
                     {{\"type\":\"message\",\"id\":\"m\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi {id}\"}}}}\n"
                ),
            )
            .unwrap();
            p
        }
    }

    impl Drop for Agent {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn scopes_and_their_files() {
        let a = Agent::new("scope");
        let x = a.put("--work-app--", "2025-01-01_aaaa.jsonl", "aaaa");
        let y = a.put("--work-app--", "2025-01-02_bbbb.jsonl", "bbbb");
        let z = a.put("--work-other--", "2025-01-03_cccc.jsonl", "cccc");
        fs::write(a.0.join("sessions/--work-app--/notes.txt"), "x").unwrap();
        let ctx = a.ctx(None);
        let here = scope(&ctx, &ScopeArgs { cwd: None, all: false }).unwrap();
        assert_eq!(files(&here), vec![y.clone(), x.clone()], "the cwd's project folder, newest name first");
        let all = scope(&ctx, &ScopeArgs { cwd: None, all: true }).unwrap();
        assert!(all.is_all());
        assert_eq!(files(&all), vec![y, x, z]);
        let other = scope(&ctx, &ScopeArgs { cwd: Some("/work/other".into()), all: false }).unwrap();
        assert_eq!(scope_folder_name(&other), "--work-other--");
    }

    fn scope_folder_name(s: &Scope) -> String {
        match s {
            Scope::Dir { dir, .. } => dir.file_name().unwrap().to_string_lossy().into_owned(),
            Scope::All { .. } => String::new(),
        }
    }

    #[test]
    fn a_session_argument_is_a_path_an_id_or_a_unique_prefix() {
        let a = Agent::new("find");
        let x = a.put("--p--", "2025-01-01_x.jsonl", "0197aaaa-1111");
        let y = a.put("--q--", "2025-01-02_y.jsonl", "0197aaab-2222");
        let z = a.put("--q--", "2025-01-03_z.jsonl", "0197aaab");
        let ctx = a.ctx(None);
        assert_eq!(find_session(&ctx, x.to_str().unwrap()).unwrap(), x, "a path");
        assert_eq!(find_session(&ctx, "0197aaaa").unwrap(), x, "a unique prefix");
        assert_eq!(find_session(&ctx, "0197aaab").unwrap(), z, "an exact id wins over prefixes");
        assert_eq!(find_session(&ctx, "0197aaab-2").unwrap(), y);
        assert_eq!(find_session(&ctx, "2025-01-02_y").unwrap(), y, "a file stem");
        assert!(matches!(find_session(&ctx, "0197"), Err(CliError::Ambiguous(m)) if m.contains("3 sessions")));
        assert!(matches!(find_session(&ctx, "nope"), Err(CliError::NotFound(_))));
        assert!(matches!(find_session(&ctx, ""), Err(CliError::Usage(_))));
        // `--dir`: only that folder.
        let only_p = a.ctx(Some(a.0.join("sessions/--p--")));
        assert!(matches!(find_session(&only_p, "0197aaab"), Err(CliError::NotFound(_))));
        assert_eq!(find_session(&only_p, "0197").unwrap(), x);
    }

    #[test]
    fn session_ids_and_short_prefixes() {
        let a = Agent::new("ids");
        let x = a.put("--p--", "x.jsonl", "abc\\u0064");
        assert_eq!(session_id(&x).unwrap(), "abcd", "decoded from the header");
        let not = a.0.join("sessions/--p--/n.jsonl");
        fs::write(&not, "{\"type\":\"message\"}\n").unwrap();
        assert!(session_id(&not).unwrap_err().contains("not a session"));
        assert_eq!(short_len(&["0197aaaa-1", "0197aaab-2"]), 8);
        assert_eq!(short_len(&["0197aaaa-1111", "0197aaaa-1122"]), 12);
        assert_eq!(short("0197aaaa-1111", 8), "0197aaaa");
    }

    #[test]
    fn info_of_a_stream_follows_pi() {
        let a = Agent::new("stream");
        let x = a.put("--p--", "x.jsonl", "s1");
        let bytes = fs::read(&x).unwrap();
        let l = info_of_stream(&x, &bytes[..]).unwrap();
        assert_eq!((l.id.as_str(), l.first_message.as_str(), l.message_count), ("s1", "hi s1", 1));
        assert_eq!(l.size, bytes.len() as u64);
        assert!(info_of_stream(&x, &b"{\"type\":\"message\"}\n"[..]).is_none(), "not a session");
    }
}
