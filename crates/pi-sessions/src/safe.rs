//! The careful file steps of the commands that change session folders (`prune`, `archive`,
//! `restore`, `rm`): a stamp that tells whether a file changed, backups, an atomic replace
//! that aborts when the file changed under it, no-overwrite placement, folder fsyncs.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use pi_session_core::platform;

/// What tells that a file is the one that was read: identity, size and mtime. Not ctime: a
/// hard link (the backup) moves it without touching the bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stamp {
    id: Option<(u64, u64)>,
    size: u64,
    mtime_ms: f64,
}

impl Stamp {
    pub fn of_path(path: &Path) -> io::Result<Stamp> {
        let s = platform::stamp(path).ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "cannot stat"))?;
        Ok(Stamp { id: s.id, size: s.size, mtime_ms: s.mtime_ms })
    }

    pub fn of_file(file: &File) -> io::Result<Stamp> {
        let s = platform::FileStamp::of_file(file)?;
        Ok(Stamp { id: s.id, size: s.size, mtime_ms: s.mtime_ms })
    }

    pub fn size(&self) -> u64 {
        self.size
    }
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
    if fs::hard_link(path, &to).is_err() {
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

/// Replaces `path` with what `write` writes: a temp file beside it, its mtime set to
/// `mtime`, fsynced; then, only if `path` still has the stamp `before`, renamed over it and
/// the folder fsynced. Any failure or change removes the temp file and leaves `path` as it
/// was.
pub fn replace(
    path: &Path,
    before: &Stamp,
    mtime: Option<SystemTime>,
    write: impl FnOnce(&File) -> io::Result<()>,
) -> Result<(), String> {
    let tmp = temp_beside(path);
    let result = (|| -> io::Result<()> {
        let f = platform::default_mode(OpenOptions::new().write(true).create_new(true)).open(&tmp)?;
        if let Ok(meta) = fs::metadata(path) {
            let _ = fs::set_permissions(&tmp, meta.permissions());
        }
        write(&f)?;
        if let Some(t) = mtime {
            f.set_modified(t)?;
        }
        f.sync_all()
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(format!("cannot write {}: {e}", tmp.display()));
    }
    match Stamp::of_path(path) {
        Ok(now) if now == *before => {}
        _ => {
            let _ = fs::remove_file(&tmp);
            return Err("the file changed while it was being rewritten (pi may be writing it); left untouched".into());
        }
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(format!("cannot rename over {}: {e}", path.display()));
    }
    sync_dir(path);
    Ok(())
}

/// Moves a finished temp file to `to` without ever replacing an existing file (a hard link,
/// then the temp removed; where the file system has no links, an exclusive create and copy).
pub fn place_new(tmp: &Path, to: &Path) -> io::Result<()> {
    match fs::hard_link(tmp, to) {
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

/// fsyncs the folder of `path`, so a rename, link or unlink in it survives a power loss.
pub fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}
