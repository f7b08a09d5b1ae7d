//! Whether a session file is in use: open for writing by another process, locked, or written
//! to moments ago. The commands that rewrite, move or delete sessions (`prune`, `archive`,
//! `rm`) refuse such a file.
//!
//! pi's own class opens the file, appends one line and closes it again, so a running pi is
//! usually not visible as an open descriptor: the recent-change rule (`RECENT`) catches it.
//! Where the OS tells about open files, a writer that keeps the file open is caught too.
//!
//! OS facts, one arm per platform, side by side (as `platform/` does in the core; they
//! live here because only the command line needs them):
//! - Linux: `/proc/<pid>/fd/*` links to the file with `/proc/<pid>/fdinfo/<fd>` flags that
//!   open it for writing (`O_WRONLY` or `O_RDWR`), or a line of `/proc/locks` naming the
//!   file's device and inode.
//! - Windows: opening the file with no sharing fails while any other handle is open.
//! - Everywhere: a `<file>.lock` folder or file (proper-lockfile's convention).
//! - Elsewhere (macOS, the BSDs): no cheap, unprivileged view of other processes' descriptors
//!   (`lsof` walks them all): only the recent-change rule applies.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A session changed more recently than this is taken to be in use.
pub const RECENT: Duration = Duration::from_secs(60);

/// `RECENT`, or `PI_SESSION_NATIVE_CLI_RECENT_SECS` (the tests set it to 0 to race a writer
/// against the change checks that come after this one; `PI_SESSIONS_RECENT_SECS`, its old
/// name, still works).
fn recent() -> Duration {
    let var = |name| std::env::var(name).ok().and_then(|v| v.parse().ok());
    var("PI_SESSION_NATIVE_CLI_RECENT_SECS")
        .or_else(|| var("PI_SESSIONS_RECENT_SECS"))
        .map_or(RECENT, Duration::from_secs)
}

/// Why a session is taken to be in use, for the error message; `None` when it is free.
pub fn why_held(path: &Path) -> Option<String> {
    if let Some(who) = os_holder(path) {
        return Some(who);
    }
    // proper-lockfile's convention (pi locks its settings and auth files that way): a
    // `<file>.lock` folder beside the file, on every OS.
    let lock = std::path::PathBuf::from(format!("{}.lock", path.display()));
    if fs::symlink_metadata(&lock).is_ok() {
        return Some(format!("locked ({} exists)", lock.display()));
    }
    let meta = fs::metadata(path).ok()?;
    let age = SystemTime::now().duration_since(meta.modified().ok()?).unwrap_or_default();
    (age < recent()).then(|| format!("modified {}s ago (pi may be writing it; try again in a minute)", age.as_secs()))
}

#[cfg(target_os = "linux")]
fn os_holder(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(path).ok()?;
    linux::holders().get(&(meta.dev(), meta.ino())).cloned()
}

/// One look at every process's descriptors and at the lock table per run (a command may look
/// at a thousand sessions; a writer that opens a file later is caught by the change checks).
#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::fs;
    use std::os::unix::fs::MetadataExt;
    use std::sync::OnceLock;

    pub fn holders() -> &'static HashMap<(u64, u64), String> {
        static H: OnceLock<HashMap<(u64, u64), String>> = OnceLock::new();
        H.get_or_init(scan)
    }

    pub(super) fn scan() -> HashMap<(u64, u64), String> {
        let mut out = HashMap::new();
        let me = std::process::id().to_string();
        let Ok(procs) = fs::read_dir("/proc") else { return out };
        for p in procs.flatten() {
            let pid = p.file_name();
            let Some(pid) = pid.to_str().filter(|s| s.bytes().all(|b| b.is_ascii_digit())) else { continue };
            if pid == me {
                continue;
            }
            let Ok(fds) = fs::read_dir(p.path().join("fd")) else { continue };
            for fd in fds.flatten() {
                // stat through the link: the same file whatever path it was opened by.
                let Ok(m) = fs::metadata(fd.path()) else { continue };
                if !m.is_file() {
                    continue;
                }
                let info = fs::read_to_string(p.path().join("fdinfo").join(fd.file_name())).unwrap_or_default();
                let flags = info
                    .lines()
                    .find_map(|l| l.strip_prefix("flags:"))
                    .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
                    .unwrap_or(0);
                // O_ACCMODE: 1 = O_WRONLY, 2 = O_RDWR.
                if flags & 3 != 0 {
                    out.entry((m.dev(), m.ino())).or_insert_with(|| format!("open for writing by process {pid}"));
                }
            }
        }
        // /proc/locks: `1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF` (device numbers in hex;
        // a waiter's line has `->` after the number).
        let locks = fs::read_to_string("/proc/locks").unwrap_or_default();
        for line in locks.lines() {
            let fields: Vec<&str> = line.split_whitespace().filter(|f| *f != "->").collect();
            let (Some(kind), Some(pid), Some(id)) = (fields.get(1), fields.get(4), fields.get(5)) else { continue };
            if *pid == me {
                continue;
            }
            let mut parts = id.split(':');
            let (Some(ma), Some(mi), Some(ino)) = (parts.next(), parts.next(), parts.next()) else { continue };
            let (Ok(ma), Ok(mi), Ok(ino)) = (u64::from_str_radix(ma, 16), u64::from_str_radix(mi, 16), ino.parse())
            else {
                continue;
            };
            // glibc's makedev.
            let dev = ((ma & 0xffff_f000) << 32) | ((ma & 0xfff) << 8) | ((mi & 0xffff_ff00) << 12) | (mi & 0xff);
            out.entry((dev, ino)).or_insert_with(|| format!("locked by process {pid} ({kind})"));
        }
        out
    }
}

#[cfg(windows)]
fn os_holder(path: &Path) -> Option<String> {
    use std::os::windows::fs::OpenOptionsExt;
    const ERROR_SHARING_VIOLATION: i32 = 32;
    match fs::OpenOptions::new().read(true).share_mode(0).open(path) {
        Err(e) if e.raw_os_error() == Some(ERROR_SHARING_VIOLATION) => Some("open in another process".into()),
        _ => None,
    }
}

#[cfg(not(any(target_os = "linux", windows)))]
fn os_holder(_path: &Path) -> Option<String> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn writers_and_lockers_in_other_processes_are_seen() {
        let dir = std::env::temp_dir().join(format!("pi-held-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s.jsonl");
        fs::write(&f, b"x\n").unwrap();
        // Our own descriptors do not count.
        let _mine = fs::OpenOptions::new().append(true).open(&f).unwrap();
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec 3>>'{}'; exec sleep 5", f.display()))
            .spawn()
            .unwrap();
        let m = fs::metadata(&f).unwrap();
        let mut seen = None;
        for _ in 0..100 {
            seen = linux::scan().remove(&(m.dev(), m.ino()));
            if seen.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(seen, Some(format!("open for writing by process {}", child.id())));
        // A lock (flock(1), where installed) shows in /proc/locks.
        let Ok(mut locker) = std::process::Command::new("flock").arg(&f).arg("sleep").arg("5").spawn() else { return };
        let mut locked = None;
        for _ in 0..100 {
            locked = linux::scan().remove(&(m.dev(), m.ino()));
            if locked.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = locker.kill();
        let _ = locker.wait();
        assert!(locked.is_some_and(|l| l.contains("locked by process") || l.contains("open for writing")));
        let _ = fs::remove_dir_all(&dir);
    }
}
