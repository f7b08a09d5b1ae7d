//! The careful file steps of the commands that change session folders (`prune`, `archive`,
//! `restore`, `rm`): whether a file changed (on the core's `FileStamp`), backups, the core's
//! atomic replace, aborted when the file changed under it, no-overwrite placement, folder fsyncs.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use pi_session_core::platform;
pub use pi_session_core::platform::FileStamp;
use pi_session_core::store::{self, WriteMode};

/// A failpoint of the command line's own write steps (`cli.open`, `cli.fsync`, `cli.link`,
/// `cli.unlink`; the core's `faults`): an empty call in a build without the `failpoints` feature.
pub fn fault(name: &'static str) -> io::Result<()> {
    pi_session_core::faults::hit(name)
}

/// The core's stamp of the file at `path` (identity, size, mtime; `platform::stamp`).
pub fn stamp(path: &Path) -> io::Result<FileStamp> {
    platform::stamp(path).ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "cannot stat"))
}

/// Whether `path` is still the file that was read: the same identity, size and mtime as
/// `before`. Not the ctime the stamp's `state` holds: a hard link (the backup) moves it without
/// touching the bytes.
pub fn unchanged(path: &Path, before: &FileStamp) -> bool {
    stamp(path).is_ok_and(|now| now.id == before.id && now.size == before.size && now.mtime_ms == before.mtime_ms)
}

/// `<file>.bak`, or `<file>.bak.1`, `.bak.2`, … when it exists.
pub fn backup_path(path: &Path) -> PathBuf {
    let base = format!("{}.bak", path.display());
    let mut candidate = PathBuf::from(&base);
    let mut i = 1;
    while fs::symlink_metadata(&candidate).is_ok() {
        candidate = PathBuf::from(format!("{base}.{i}"));
        i += 1;
    }
    candidate
}

/// Keeps the original bytes of `path` as a backup before it is replaced: a hard link (the
/// original inode stays as it is, since the replacement is a rename over the path; no byte
/// is copied), else a copy, fsynced.
pub fn backup(path: &Path) -> io::Result<PathBuf> {
    let to = backup_path(path);
    if fault("cli.link").and_then(|()| fs::hard_link(path, &to)).is_err() {
        let mut from = File::open(path)?;
        let mut f = OpenOptions::new().write(true).create_new(true).open(&to)?;
        io::copy(&mut from, &mut f)?;
        f.sync_all()?;
    }
    sync_dir(&to);
    Ok(to)
}

/// A temp file name beside `path` (hidden, so no listing sees it).
pub fn temp_beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    path.with_file_name(format!(".{name}.{:x}-{n}-{nanos:x}.tmp", std::process::id()))
}

/// Replaces `path` with what `write` writes, by the core's atomic replace
/// (`store::write_file_with`, `Replace`: a temp file beside it, fsynced, renamed over it, the
/// folder fsynced), with the original's permissions and `mtime`; and only if `path` still has
/// the stamp `before` once the new bytes are durable. Any failure or change leaves `path` as
/// it was. (Not `store::replace_with`: where the rename is refused it writes in place, which
/// would write through the backup, a hard link to the same inode.)
pub fn replace(
    path: &Path,
    before: &FileStamp,
    mtime: Option<SystemTime>,
    write: impl FnOnce(&File) -> io::Result<()>,
) -> Result<(), String> {
    let permissions = fs::metadata(path).map(|m| m.permissions()).ok();
    let mut write = Some(write);
    let mut changed = false;
    let done = store::write_file_with(path, WriteMode::Replace, &mut |f| {
        // `Replace` calls it once (only `Exclusive` writes again where links are missing).
        let write = write.take().ok_or_else(|| io::Error::other("written twice"))?;
        if let Some(p) = &permissions {
            let _ = f.set_permissions(p.clone());
        }
        write(f)?;
        if let Some(t) = mtime {
            f.set_modified(t)?;
        }
        // Durable before the last look (the core's own fsync after it has nothing left to do).
        f.sync_all()?;
        changed = !unchanged(path, before);
        if changed { Err(io::Error::other("changed")) } else { Ok(()) }
    });
    match done {
        Ok(_) => Ok(()),
        Err(_) if changed => {
            Err("the file changed while it was being rewritten (pi may be writing it); left untouched".into())
        }
        Err(e) => Err(format!("cannot replace {}: {e}", path.display())),
    }
}

/// Moves a finished temp file to `to` without ever replacing an existing file (a hard link,
/// then the temp removed; where the file system has no links, an exclusive create and copy).
pub fn place_new(tmp: &Path, to: &Path) -> io::Result<()> {
    match fault("cli.link").and_then(|()| fs::hard_link(tmp, to)) {
        Ok(()) => {
            let _ = fs::remove_file(tmp);
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(e),
        Err(_) => {
            let mut from = File::open(tmp)?;
            let mut f = OpenOptions::new().write(true).create_new(true).open(to)?;
            io::copy(&mut from, &mut f)?;
            if let Ok(t) = from.metadata().and_then(|m| m.modified()) {
                f.set_modified(t)?;
            }
            f.sync_all()?;
            let _ = fs::remove_file(tmp);
        }
    }
    sync_dir(to);
    Ok(())
}

/// Writes a new file from spans of an old one, and bytes of its own, in bounded memory: spans
/// that lie next to each other in the old file are copied as one run by `io::copy` (on Linux a
/// `copy_file_range`: the kernel copies the pages, nothing passes through this process;
/// elsewhere through the buffer).
pub struct SpanCopy<'a> {
    from: &'a File,
    out: io::BufWriter<&'a File>,
    /// The current run, `start..end` of the old file.
    run: Option<(u64, u64)>,
}

impl<'a> SpanCopy<'a> {
    /// `buffer`: the write buffer's size (for the bytes of its own and copies that go through it).
    pub fn new(from: &'a File, to: &'a File, buffer: usize) -> SpanCopy<'a> {
        SpanCopy { from, out: io::BufWriter::with_capacity(buffer.max(4096), to), run: None }
    }

    /// Bytes `start..end` of the old file.
    pub fn span(&mut self, start: u64, end: u64) -> io::Result<()> {
        match &mut self.run {
            Some((_, e)) if *e == start => *e = end,
            _ => {
                self.flush_run()?;
                self.run = Some((start, end));
            }
        }
        Ok(())
    }

    /// Bytes of its own.
    pub fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.flush_run()?;
        self.out.write_all(b)
    }

    fn flush_run(&mut self) -> io::Result<()> {
        if let Some((a, b)) = self.run.take() {
            let mut from = self.from;
            from.seek(io::SeekFrom::Start(a))?;
            if io::copy(&mut from.take(b - a), &mut self.out)? != b - a {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file is shorter than it was read"));
            }
        }
        Ok(())
    }

    /// Writes what is left; the new file is complete (not yet fsynced).
    pub fn finish(mut self) -> io::Result<()> {
        self.flush_run()?;
        self.out.flush()
    }
}

/// fsyncs the folder of `path`, so a rename, link or unlink in it survives a power loss.
pub fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replace_keeps_mode_and_mtime_and_aborts_on_a_change() {
        let dir = std::env::temp_dir().join(format!("pis-safe-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s.jsonl");
        fs::write(&p, b"old\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let before = stamp(&p).unwrap();
        // A hard link (the backup) changes the ctime only: still unchanged.
        let bak = backup(&p).unwrap();
        assert!(unchanged(&p, &before));
        replace(&p, &before, Some(t), |f| (&*f).write_all(b"new\n")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new\n");
        assert_eq!(fs::read(&bak).unwrap(), b"old\n", "the backup is the old inode");
        let m = fs::metadata(&p).unwrap();
        assert_eq!((m.permissions().mode() & 0o777, m.modified().unwrap()), (0o640, t));
        // A writer appends while the new bytes are written: nothing replaced, no temp left.
        let before = stamp(&p).unwrap();
        let e = replace(&p, &before, None, |f| {
            OpenOptions::new().append(true).open(&p)?.write_all(b"late\n")?;
            (&*f).write_all(b"newer\n")
        })
        .unwrap_err();
        assert!(e.contains("changed"), "{e}");
        assert_eq!(fs::read(&p).unwrap(), b"new\nlate\n");
        let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        let _ = fs::remove_dir_all(&dir);
    }
}
