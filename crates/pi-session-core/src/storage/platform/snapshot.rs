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
/// the session file at `path`, copied whole before it returns (for tests: the load reads
/// behind the copy, `snapshot_streaming`). Errors when none can be made.
#[cfg(test)]
pub fn snapshot(source: &File, path: &Path, len: u64) -> io::Result<Snapshot> {
    let (mut snap, arriving) = snapshot_streaming(source, path, len)?;
    if let Some(arriving) = arriving {
        let (copied, _) = arriving.wait(u64::MAX)?;
        snap.file.set_len(copied)?;
        snap.len = copied;
    }
    Ok(snap)
}

/// A private snapshot of the first `len` bytes of `source`, the session file at `path`, whose
/// bytes may still be arriving: where they are copied (not cloned) on Linux, a thread copies
/// them in pieces while the caller reads those copied already (`Arriving::wait`); the load
/// scans the copy behind it instead of after it. The file is `len` long from the start (its
/// space taken at once, so a full disk fails here, before anything is read); a source that
/// is shorter by now leaves the rest as zeros that `wait` never reports. `Snapshot::len` is
/// `len` until the copy ends. Errors when none can be made.
pub fn snapshot_streaming(source: &File, path: &Path, len: u64) -> io::Result<(Snapshot, Option<Arriving>)> {
    streaming_in_steps(source, path, len, STEP)
}

/// `snapshot_streaming`, copying `step` bytes at a time (tests take small ones).
pub(crate) fn streaming_in_steps(
    source: &File,
    path: &Path,
    len: u64,
    step: u64,
) -> io::Result<(Snapshot, Option<Arriving>)> {
    let file = snapshot_file(path)?;
    #[cfg(target_os = "linux")]
    {
        if !forced("copy") && clone(source, &file) {
            let size = file.metadata()?.len();
            if size > len {
                file.set_len(len)?;
            }
            return Ok((Snapshot { len: size.min(len), file }, None));
        }
        reserve(&file, len)?;
        let arriving = Arriving::start(source.try_clone()?, file.try_clone()?, len, step);
        Ok((Snapshot { file, len }, Some(arriving)))
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        let _ = step;
        let mut from = io::Read::take(source.try_clone()?, len);
        // `std::io::copy` between files copies in the kernel where it can.
        let mut to = &file;
        let copied = io::copy(&mut from, &mut to)?;
        io::Seek::rewind(&mut to)?;
        Ok((Snapshot { file, len: copied }, None))
    }
    #[cfg(not(unix))]
    {
        let _ = (source, len, file, step);
        Err(io::Error::new(io::ErrorKind::Unsupported, "no private snapshot on this system"))
    }
}

/// Takes the space of `len` bytes for `file` and makes it that long (`ENOSPC` here, not
/// half-way through the copy); where the file system cannot allocate ahead, only the length.
#[cfg(target_os = "linux")]
fn reserve(file: &File, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let Ok(size) = libc::off_t::try_from(len) else { return Err(io::Error::from(io::ErrorKind::InvalidInput)) };
    // SAFETY: fallocate on our own open descriptor; no memory is passed.
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size) } == 0 {
        return Ok(());
    }
    match io::Error::last_os_error() {
        e if e.raw_os_error() == Some(libc::EOPNOTSUPP) => file.set_len(len),
        e => Err(e),
    }
}

/// Bytes copied per step of `Arriving`'s thread: what a waiting reader gets at once.
const STEP: u64 = 4 << 20;

/// The copy of a snapshot's bytes, made by a thread of its own (`snapshot_streaming`).
#[cfg(target_os = "linux")]
pub struct Arriving {
    state: std::sync::Arc<(std::sync::Mutex<Progress>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Where `Arriving`'s copy is.
#[cfg(target_os = "linux")]
#[derive(Default)]
struct Progress {
    copied: u64,
    ended: bool,
    error: Option<io::Error>,
    /// Set when nobody waits for the rest any more (the `Arriving` was dropped).
    stop: bool,
}

#[cfg(target_os = "linux")]
impl Arriving {
    fn start(source: File, dest: File, len: u64, step: u64) -> Arriving {
        let state = std::sync::Arc::new((std::sync::Mutex::new(Progress::default()), std::sync::Condvar::new()));
        let files = std::sync::Arc::new((source, dest));
        let (shared, theirs) = (state.clone(), files.clone());
        let spawned = std::thread::Builder::new()
            .name("pi-snapshot-copy".into())
            .spawn(move || copy_all(&theirs.0, &theirs.1, len, step, &shared));
        match spawned {
            Ok(thread) => Arriving { state, thread: Some(thread) },
            // No thread to be had: the copy is made here, before the caller reads.
            Err(_) => {
                copy_all(&files.0, &files.1, len, step, &state);
                Arriving { state, thread: None }
            }
        }
    }

    /// Waits until at least `want` bytes are copied or the copy has ended; returns the bytes
    /// copied, and whether the copy has ended (then they are all there will be). The copy's
    /// error, if it failed.
    pub fn wait(&self, want: u64) -> io::Result<(u64, bool)> {
        let (lock, ready) = &*self.state;
        let mut p = lock.lock().unwrap_or_else(|e| e.into_inner());
        while p.copied < want && !p.ended {
            p = ready.wait(p).unwrap_or_else(|e| e.into_inner());
        }
        match &p.error {
            Some(e) => Err(io::Error::new(e.kind(), e.to_string())),
            None => Ok((p.copied, p.ended)),
        }
    }
}

/// No copy arrives in pieces here: `snapshot_streaming` copies before it returns.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub enum Arriving {}

#[cfg(not(target_os = "linux"))]
impl Arriving {
    pub fn wait(&self, _want: u64) -> io::Result<(u64, bool)> {
        match *self {}
    }
}

#[cfg(target_os = "linux")]
impl Drop for Arriving {
    fn drop(&mut self) {
        self.state.0.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `Arriving`'s copy: `len` bytes of `source` to `dest`, step by step, each step told to the
/// waiting reader; stops early when nobody waits any more.
#[cfg(target_os = "linux")]
fn copy_all(source: &File, dest: &File, len: u64, step: u64, state: &(std::sync::Mutex<Progress>, std::sync::Condvar)) {
    let (lock, ready) = state;
    let mut at = 0u64;
    let result = loop {
        if at >= len || lock.lock().unwrap_or_else(|e| e.into_inner()).stop {
            break Ok(());
        }
        match copy_range(source, dest, at, step.min(len - at)) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                at += n;
                lock.lock().unwrap_or_else(|e| e.into_inner()).copied = at;
                ready.notify_all();
            }
            Err(e) => break Err(e),
        }
    };
    let mut p = lock.lock().unwrap_or_else(|e| e.into_inner());
    p.ended = true;
    p.error = result.err();
    ready.notify_all();
}

/// Copies up to `len` bytes at `at` of `source` to the same place of `dest`, in the kernel
/// (`copy_file_range`) where it can, else through a buffer; 0 at the end of `source`.
#[cfg(target_os = "linux")]
fn copy_range(source: &File, dest: &File, at: u64, len: u64) -> io::Result<u64> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;
    let (Ok(mut off_in), Ok(want)) = (libc::off64_t::try_from(at), usize::try_from(len)) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    let mut off_out = off_in;
    // SAFETY: both descriptors are open; the offsets are ours, passed by pointer.
    let n = unsafe { libc::copy_file_range(source.as_raw_fd(), &mut off_in, dest.as_raw_fd(), &mut off_out, want, 0) };
    if n >= 0 {
        return Ok(n as u64);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL | libc::EPERM) => {
            let mut buf = vec![0u8; want.min(1 << 20)];
            let n = source.read_at(&mut buf, at)?;
            dest.write_all_at(&buf[..n], at)?;
            Ok(n as u64)
        }
        Some(libc::EINTR) => copy_range(source, dest, at, len),
        _ => Err(e),
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
