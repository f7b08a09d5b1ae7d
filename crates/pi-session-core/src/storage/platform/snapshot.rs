//! A private snapshot of a session file: a file of our own that holds the bytes a load
//! scans, so that strings over its mapping and lines read from it later never change,
//! whatever another process does to the session file (`docs/safety.md`, "What JS holds
//! never changes").
//!
//! The snapshot is a file no other process can name: an unlinked `O_TMPFILE` in the
//! session's folder (same file system: a reflink clone works, and the space is taken where
//! the session lives), else a file made `0600` in a `0700` folder of ours under the temp dir
//! and unlinked at once. Its bytes are a reflink clone (`FICLONE`: O(1) on btrfs and XFS)
//! or a kernel copy (`copy_file_range`, through `std::io::copy`). Nothing else holds its
//! inode, so it can be neither truncated nor rewritten, and its space is freed when the last
//! descriptor and mapping of it close, even after `kill -9`.
//!
//! Unix only. Elsewhere (and when a snapshot cannot be made: ENOSPC, a read-only folder and
//! temp dir) the caller keeps the session in memory, as the reference does.

use std::fs::File;
use std::io;
use std::path::Path;

/// A private copy of a file's bytes.
#[derive(Debug)]
pub struct Snapshot {
    /// Open for reading and writing (an `O_TMPFILE` must be); nothing writes it after
    /// `snapshot` returns.
    pub file: File,
    /// Its length: the bytes of the source when it was copied, at most the length asked.
    pub len: u64,
}

/// What `PI_SESSION_NATIVE_SNAPSHOT` asks for (tests and diagnostics): `memory` makes no
/// snapshot, `private` skips `O_TMPFILE` in the session's folder, `copy` skips the clone.
fn forced(what: &str) -> bool {
    std::env::var("PI_SESSION_NATIVE_SNAPSHOT").is_ok_and(|v| v.split(',').any(|w| w == what))
}

/// Whether this system makes private snapshots (Unix); elsewhere (Windows) a large session is
/// read into memory instead (the tests' expectation; the code itself branches on `cfg(unix)`).
#[cfg(test)]
pub const SNAPSHOTS: bool = cfg!(unix);

/// A new empty file for a snapshot of the session file at `path`, that no other process can
/// name (see the module docs). Errors when none can be made.
pub fn snapshot_file(path: &Path) -> io::Result<File> {
    if forced("memory") {
        return Err(io::Error::other("PI_SESSION_NATIVE_SNAPSHOT=memory"));
    }
    #[cfg(unix)]
    return private_file(path.parent());
    #[cfg(not(unix))]
    return {
        let _ = path;
        Err(io::Error::new(io::ErrorKind::Unsupported, "no private snapshot on this system"))
    };
}

/// A private snapshot of the first `len` bytes of `source` (fewer if it is shorter by now),
/// the session file at `path`. Errors when none can be made.
pub fn snapshot(source: &File, path: &Path, len: u64) -> io::Result<Snapshot> {
    let file = snapshot_file(path)?;
    #[cfg(unix)]
    {
        #[cfg(target_os = "linux")]
        if !forced("copy") && clone(source, &file) {
            let size = file.metadata()?.len();
            if size > len {
                file.set_len(len)?;
            }
            return Ok(Snapshot { len: size.min(len), file });
        }
        let mut from = io::Read::take(source.try_clone()?, len);
        // `std::io::copy` between files copies in the kernel (`copy_file_range`) on Linux.
        let mut to = &file;
        let copied = io::copy(&mut from, &mut to)?;
        io::Seek::rewind(&mut to)?;
        Ok(Snapshot { file, len: copied })
    }
    #[cfg(not(unix))]
    {
        let _ = (source, len, file);
        Err(io::Error::new(io::ErrorKind::Unsupported, "no private snapshot on this system"))
    }
}

/// A reflink clone of `source` into `dest` (whole file); false where the file system cannot.
#[cfg(target_os = "linux")]
fn clone(source: &File, dest: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: FICLONE takes the source descriptor as its argument; both are open files.
    unsafe { libc::ioctl(dest.as_raw_fd(), libc::FICLONE, source.as_raw_fd()) == 0 }
}

/// A new file that no other process can name, open for reading and writing.
#[cfg(unix)]
fn private_file(folder: Option<&Path>) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    if let Some(folder) = folder.filter(|_| !forced("private")) {
        use std::os::unix::fs::OpenOptionsExt;
        let folder = if folder.as_os_str().is_empty() { Path::new(".") } else { folder };
        let made =
            std::fs::OpenOptions::new().read(true).write(true).mode(0o600).custom_flags(libc::O_TMPFILE).open(folder);
        if let Ok(file) = made {
            return Ok(file);
        }
    }
    let _ = folder;
    unlinked_in_private_folder()
}

/// A file made `0600` (exclusively) in our `0700` folder of the temp dir, unlinked at once.
#[cfg(unix)]
fn unlinked_in_private_folder() -> io::Result<File> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
    use std::sync::atomic::{AtomicU64, Ordering};
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let folder = std::env::temp_dir().join(format!("pi-session-native-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&folder) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    // Ours and private, not a link someone else planted.
    let meta = std::fs::symlink_metadata(&folder)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, "the snapshot folder is not private"));
    }
    static NEXT: AtomicU64 = AtomicU64::new(0);
    for _ in 0..16 {
        let name = folder.join(format!(
            "snap-{}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos())
        ));
        match std::fs::OpenOptions::new().read(true).write(true).create_new(true).mode(0o600).open(&name) {
            Ok(file) => {
                std::fs::remove_file(&name)?;
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "no fresh snapshot name"))
}

/// Gives `len` bytes at `off` of a snapshot back to the file system (a hole that reads as
/// zeros; the file keeps its length). Best effort: where holes cannot be punched the space
/// stays taken until the snapshot is closed.
pub fn punch_hole(file: &File, off: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let (Ok(off), Ok(len)) = (libc::off_t::try_from(off), libc::off_t::try_from(len)) else { return };
        // SAFETY: fallocate on our own open descriptor; no memory is passed.
        unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, off, len) };
    }
    let _ = (file, off, len);
}

/// Writes `message` once per `key` when `PI_SESSION_NATIVE_TRACE` is set: to stderr for
/// `1`, else appended to the file it names.
pub fn trace_once(key: &'static str, message: &dyn Fn() -> String) {
    static SEEN: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let Some(to) = std::env::var_os("PI_SESSION_NATIVE_TRACE").filter(|v| !v.is_empty()) else { return };
    {
        let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
        if seen.contains(&key) {
            return;
        }
        seen.push(key);
    }
    let line = format!("pi-session-native: {}\n", message());
    if to == "1" {
        eprint!("{line}");
    } else if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(to) {
        let _ = io::Write::write_all(&mut f, line.as_bytes());
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_snapshot_keeps_the_bytes_whatever_happens_to_the_file() {
        let p = crate::testutil::TempPath::file("snapshot", "s.jsonl");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&p, &bytes).unwrap();
        let source = File::open(&p).unwrap();
        let snap = snapshot(&source, &p, 2_000_000).unwrap();
        assert_eq!(snap.len, 2_000_000, "at most the length asked");
        // Truncated, rewritten in place, then deleted: the snapshot does not see it.
        let mut w = std::fs::OpenOptions::new().write(true).truncate(true).open(&p).unwrap();
        w.write_all(&[b'Z'; 100]).unwrap();
        drop(w);
        std::fs::remove_file(&p).unwrap();
        let mut got = vec![0u8; snap.len as usize];
        crate::storage::platform::read_exact_at(&snap.file, &mut got, 0).unwrap();
        assert_eq!(got, bytes[..2_000_000]);
        // Nothing named is left in the session's folder.
        assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 0);
    }

    #[test]
    fn a_source_shorter_than_asked_gives_its_bytes() {
        let p = crate::testutil::TempPath::file("snapshot", "short.jsonl");
        std::fs::write(&p, b"0123456789").unwrap();
        let snap = snapshot(&File::open(&p).unwrap(), &p, 1 << 20).unwrap();
        assert_eq!(snap.len, 10);
    }

    #[test]
    fn the_private_folder_fallback_leaves_no_name() {
        let file = unlinked_in_private_folder().unwrap();
        (&file).write_all(b"x").unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(file.metadata().unwrap().nlink(), 0);
    }
}
