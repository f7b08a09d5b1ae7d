//! pi's path rules (pi 1.6.0 `config.js`, `utils/paths.js`) that are text: the name of a
//! project's session folder, and Windows shell paths (`/c/…`). The answers of the platform
//! that these rules take (Node's `path.resolve`, `os.homedir`, `fileURLToPath`; the CLI's own
//! in `pi-sessions`) are the caller's.

/// pi's config folder in the home directory (`CONFIG_DIR_NAME`).
pub const CONFIG_DIR_NAME: &str = ".pi";
/// The variable that names the agent dir (`ENV_AGENT_DIR`).
pub const ENV_AGENT_DIR: &str = "PI_CODING_AGENT_DIR";

/// `getDefaultSessionDir`'s folder name for a resolved cwd: `--<cwd without its leading
/// separator, with / \ : replaced by ->--`.
pub fn session_folder_name(resolved_cwd: &str) -> String {
    let units: Vec<u16> = resolved_cwd.encode_utf16().collect();
    String::from_utf16_lossy(&session_folder_name_utf16(&units))
}

/// `session_folder_name` on UTF-16 code units (a JS string, lone surrogates and all).
pub fn session_folder_name_utf16(resolved_cwd: &[u16]) -> Vec<u16> {
    let separator = |u: u16| u == u16::from(b'/') || u == u16::from(b'\\');
    let rest = match resolved_cwd.first() {
        Some(&u) if separator(u) => &resolved_cwd[1..],
        _ => resolved_cwd,
    };
    let dashes = [u16::from(b'-'); 2];
    let mut out = Vec::with_capacity(rest.len() + 4);
    out.extend_from_slice(&dashes);
    out.extend(rest.iter().map(|&u| if separator(u) || u == u16::from(b':') { u16::from(b'-') } else { u }));
    out.extend_from_slice(&dashes);
    out
}

/// pi's `normalizeWindowsShellPath`: `/c/x`, `/mnt/c/x` and `/cygdrive/c/x` (any case) are
/// `C:\x`; `None` for any other path (one starting with `//` or holding a `\` among them).
pub fn windows_shell_path(p: &str) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_folder_names() {
        assert_eq!(session_folder_name("/home/dev/src/demo-app"), "--home-dev-src-demo-app--");
        assert_eq!(session_folder_name("/"), "----");
        assert_eq!(session_folder_name("C:\\Users\\me\\proj"), "--C--Users-me-proj--");
        assert_eq!(session_folder_name("\\\\server\\share\\x"), "---server-share-x--");
        assert_eq!(session_folder_name("//a:b"), "---a-b--");
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
}
