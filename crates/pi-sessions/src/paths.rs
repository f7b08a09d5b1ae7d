//! Paths as pi reads them, for the command line: Node's answers done in Rust (`os.homedir`,
//! `path.resolve`, POSIX's or win32's, `fileURLToPath`), over pi's rules in the core
//! (`pi_session_core::paths`: the project folder name, Windows shell paths, the agent dir's
//! names): `~` and `file://` paths, and the agent dir.

use std::path::{Component, MAIN_SEPARATOR_STR, Path, PathBuf};

use pi_session_core::paths;

/// `os.homedir()` as libuv answers it: `HOME` on POSIX, `USERPROFILE` on Windows.
pub fn home() -> PathBuf {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(MAIN_SEPARATOR_STR))
}

/// `normalizePath`: on Windows, shell paths first (`normalizeWindowsShellPath`); then `~`, `~/…`
/// (and `~\…` on Windows) expansion, and `file://` URLs.
pub fn normalize(input: &str) -> PathBuf {
    let shell = if cfg!(windows) { paths::windows_shell_path(input) } else { None };
    let input = shell.as_deref().unwrap_or(input);
    if input == "~" {
        return home();
    }
    if let Some(rest) = input.strip_prefix("~/").or_else(|| input.strip_prefix("~\\").filter(|_| cfg!(windows))) {
        return home().join(rest);
    }
    if let Some(rest) = input.strip_prefix("file://") {
        let path = percent_decode(rest);
        // `fileURLToPath("file:///C:/x")` is `C:\x` on Windows.
        if cfg!(windows) && path.len() >= 3 && path.starts_with('/') && path.as_bytes()[2] == b':' {
            return PathBuf::from(&path[1..]);
        }
        return PathBuf::from(path);
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

/// Node's `path.resolve(base, p)`: absolute, `.`/`..` folded, no trailing separator; on Windows
/// the drive (or UNC share) is kept as written and the separators are `\`.
pub fn resolve_from(base: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
    let mut prefix = None;
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for c in joined.components() {
        match c {
            Component::Prefix(pre) => prefix = Some(pre.as_os_str()),
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    let mut r = PathBuf::from(prefix.unwrap_or_default());
    r.push(MAIN_SEPARATOR_STR);
    for n in out {
        r.push(n);
    }
    r
}

/// pi's `pathsEqual` of two resolved paths: equal, or on Windows equal but for case.
pub fn same_path(a: &Path, b: &Path) -> bool {
    if cfg!(windows) { a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase() } else { a == b }
}

/// `resolvePath(input)`: normalise, then resolve against the process cwd.
pub fn resolve(input: &str, cwd: &Path) -> PathBuf {
    resolve_from(cwd, &normalize(input))
}

/// `--<cwd without its leading slash, with / \ : replaced by ->--` (the core's rule).
pub fn encode_cwd(resolved: &Path) -> String {
    paths::session_folder_name(&resolved.to_string_lossy())
}

/// The agent dir: `--agent-dir`, else `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`; resolved.
pub fn agent_dir(flag: Option<&str>, cwd: &Path) -> PathBuf {
    if let Some(d) = flag {
        return resolve(d, cwd);
    }
    match std::env::var(paths::ENV_AGENT_DIR) {
        Ok(d) if !d.is_empty() => resolve(&d, cwd),
        _ => home().join(paths::CONFIG_DIR_NAME).join("agent"),
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

    /// Run under wine by `npm run test:win32` (scripts/win32.mjs).
    #[cfg(windows)]
    #[test]
    fn windows_paths_keep_their_drive() {
        let base = Path::new("C:\\work\\app");
        assert_eq!(resolve_from(base, Path::new("D:\\a\\..\\b\\")), PathBuf::from("D:\\b"));
        assert_eq!(resolve_from(base, Path::new("x/y")), PathBuf::from("C:\\work\\app\\x\\y"));
        assert_eq!(resolve_from(base, Path::new("\\top")), PathBuf::from("C:\\top"));
        assert_eq!(resolve(&"/d/proj".to_string(), base), PathBuf::from("D:\\proj"));
        assert_eq!(resolve("file:///E:/a%20b", base), PathBuf::from("E:\\a b"));
        assert_eq!(encode_cwd(&resolve("C:\\Users\\me\\proj", base)), "--C--Users-me-proj--");
        assert!(same_path(Path::new("C:\\Work"), Path::new("c:\\work")));
        let home = home();
        assert_eq!(resolve("~\\x", base), resolve_from(base, &home.join("x")));
    }
}
