//! Where sessions live (pi 1.6.0's `config.js`/`utils/paths.js` rules) and which files a
//! command looks at.

use std::fs;
use std::path::{Component, Path, PathBuf};

use pi_session_core::header::{self, HeaderScan};
use pi_session_core::json::Kind;

use super::args::ScopeArgs;
use super::jv;
use super::{CliError, Ctx};

pub fn home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"))
}

/// `normalizePath`: `~` and `~/…` expansion, `file://` URLs.
pub fn normalize(input: &str) -> PathBuf {
    if input == "~" {
        return home();
    }
    if let Some(rest) = input.strip_prefix("~/") {
        return home().join(rest);
    }
    if let Some(rest) = input.strip_prefix("file://") {
        return PathBuf::from(percent_decode(rest));
    }
    PathBuf::from(input)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(v) = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Node's `path.resolve(base, p)` on POSIX: absolute, `.`/`..` folded, no trailing slash.
pub fn resolve_from(base: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for c in joined.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    let mut r = PathBuf::from("/");
    for n in out {
        r.push(n);
    }
    r
}

/// `resolvePath(input)`: normalise, then resolve against the process cwd.
pub fn resolve(input: &str, cwd: &Path) -> PathBuf {
    resolve_from(cwd, &normalize(input))
}

/// `--<cwd without its leading slash, with / \ : replaced by ->--`.
pub fn encode_cwd(resolved: &Path) -> String {
    let s = resolved.to_string_lossy();
    let s = s.strip_prefix(['/', '\\']).unwrap_or(&s);
    format!("--{}--", s.replace(['/', '\\', ':'], "-"))
}

/// The agent dir: `--agent-dir`, else `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`; resolved.
pub fn agent_dir(flag: Option<&str>, cwd: &Path) -> PathBuf {
    if let Some(d) = flag {
        return resolve(d, cwd);
    }
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(d) if !d.is_empty() => resolve(&d, cwd),
        _ => home().join(".pi").join("agent"),
    }
}

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

/// `--cwd PATH | --all`, with `--dir` pointing at one folder (then `--cwd` filters by header cwd).
pub fn scope(ctx: &Ctx, p: &ScopeArgs) -> Result<Scope, CliError> {
    let cwd = p.cwd.as_deref().map(|c| resolve(c, &ctx.cwd));
    if let Some(dir) = &ctx.dir {
        return Ok(Scope::Dir { dir: dir.clone(), cwd_filter: cwd });
    }
    if p.all {
        return Ok(Scope::All { sessions: sessions_dir(ctx) });
    }
    let cwd = cwd.unwrap_or_else(|| ctx.cwd.clone());
    Ok(Scope::Dir { dir: sessions_dir(ctx).join(encode_cwd(&cwd)), cwd_filter: None })
}

fn jsonl_in(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut names: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    // Newest first by name (`<iso>_<id>.jsonl`), like `list()`'s pre-sort.
    names.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
    out.extend(names);
}

/// Project folders under a sessions dir (directories and symlinks to them).
pub fn project_dirs(sessions: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(sessions) else { return Vec::new() };
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
        Some(c) if !c.is_empty() => resolve(c, cwd) == want,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_and_encode() {
        let base = Path::new("/home/u/x");
        assert_eq!(resolve_from(base, Path::new("../y/./z/")), PathBuf::from("/home/u/y/z"));
        assert_eq!(resolve_from(base, Path::new("/a//b/..")), PathBuf::from("/a"));
        assert_eq!(encode_cwd(Path::new("/home/dev/src/demo-app")), "--home-dev-src-demo-app--");
        assert_eq!(encode_cwd(Path::new("/")), "----");
        assert_eq!(percent_decode("/a%20b"), "/a b");
    }
}
