//! pi 1.6.0's path rules (`config.js`/`utils/paths.js`): `~` and `file://` paths, Node's
//! `path.resolve`, the encoded project folder name, and the agent dir (the only place in the
//! Rust code that knows it; the JS side's is `lib/paths.js`' `getAgentDir`).

use std::path::{Component, Path, PathBuf};

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
