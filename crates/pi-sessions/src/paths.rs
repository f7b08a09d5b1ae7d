//! pi 1.6.0's path rules (`config.js`/`utils/paths.js`): `~` and `file://` paths, Windows shell
//! paths (`/c/…`), Node's `path.resolve` (POSIX's, or win32's on Windows), the encoded project
//! folder name, and the agent dir (the only place in the Rust code that knows it; the JS side's
//! is `lib/paths.js`' `getAgentDir`).

use std::path::{Component, MAIN_SEPARATOR_STR, Path, PathBuf};

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
    let shell = if cfg!(windows) { windows_shell_path(input) } else { None };
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

/// pi's `normalizeWindowsShellPath`: `/c/x`, `/mnt/c/x` and `/cygdrive/c/x` (any case) are
/// `C:\x`; None for any other path (one starting with `//` or holding a `\` among them).
fn windows_shell_path(p: &str) -> Option<String> {
    if !p.starts_with('/') || p.starts_with("//") || p.contains('\\') {
        return None;
    }
    let rest = &p[1..];
    let lower = rest.to_ascii_lowercase();
    // The regex's optional `mnt/` or `cygdrive/` is tried first, then none.
    let candidates = [("mnt/", true), ("cygdrive/", true), ("", false)];
    candidates.iter().find_map(|(pre, needed)| {
        if *needed && !lower.starts_with(pre) {
            return None;
        }
        let after = &rest[pre.len()..];
        let mut chars = after.chars();
        let drive = chars.next().filter(char::is_ascii_alphabetic)?;
        let tail = chars.as_str();
        let suffix = match tail {
            "" => "",
            t => t.strip_prefix('/')?,
        };
        Some(format!("{}:\\{}", drive.to_ascii_uppercase(), suffix.replace('/', "\\")))
    })
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

    #[test]
    fn windows_shell_paths_as_pi_reads_them() {
        assert_eq!(windows_shell_path("/c/Users/me").as_deref(), Some("C:\\Users\\me"));
        assert_eq!(windows_shell_path("/mnt/d/x/y").as_deref(), Some("D:\\x\\y"));
        assert_eq!(windows_shell_path("/CYGDRIVE/e").as_deref(), Some("E:\\"));
        assert_eq!(windows_shell_path("/m").as_deref(), Some("M:\\"));
        assert_eq!(windows_shell_path("/mnt").as_deref(), None);
        assert_eq!(windows_shell_path("/home/me").as_deref(), None);
        assert_eq!(windows_shell_path("//server/share").as_deref(), None);
        assert_eq!(windows_shell_path("/c\\x").as_deref(), None);
        assert_eq!(windows_shell_path("C:\\x").as_deref(), None);
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
