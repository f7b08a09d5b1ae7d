//! Writing a session file: appends that land whole (a failed write is truncated back, so no
//! torn line is left) and whole-file writes through a temp file, fsync and an atomic rename
//! or link.

use std::fs::{self, File};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::storage::{faults, platform};

/// Appends bytes with one `write` on an `O_APPEND` descriptor. If the write fails part-way
/// (ENOSPC, EFBIG, EIO), the file is truncated back to its previous length, so the next
/// append never continues a torn line. Returns the file's length afterwards.
pub fn append_bytes(path: &Path, bytes: &[u8], sync: bool) -> Result<u64> {
    let file = faults::hit("append.open")
        .and_then(|()| platform::open_append(path, false, true))
        .map_err(|e| Error::io_creating(e, path))?;
    write_appending(&file, bytes, sync)
}

fn write_appending(mut file: &File, bytes: &[u8], sync: bool) -> Result<u64> {
    let before = file.metadata().map(|m| m.len()).ok();
    let result = faults::hit("append.write")
        .and_then(|()| file.write_all(bytes))
        .and_then(|_| if sync { faults::hit("append.fsync").and_then(|()| file.sync_data()) } else { Ok(()) });
    if let Err(e) = result {
        if let Some(len) = before {
            let _ = faults::hit("append.ftruncate").and_then(|()| file.set_len(len));
        }
        return Err(Error::io(e, "write", None));
    }
    Ok(file.metadata().map(|m| m.len()).unwrap_or(0))
}

/// A session file kept open for appends.
///
/// Each append is one `write` on an `O_APPEND` descriptor, as the reference's
/// `appendFileSync` is: the kernel puts it whole at the end of the file, whatever other
/// writers do at the same moment (on a local file system, concurrent writes to one file
/// never interleave their bytes). A `stat` of the path afterwards tells whether the path
/// still names the file written to (by identity: device and inode, on Windows volume serial
/// number and file index), and where the line landed.
pub struct AppendHandle {
    path: PathBuf,
    file: File,
    /// Device and inode, where the platform has them.
    id: Option<(u64, u64)>,
    /// Opened from the path just now: the first append needs no check that the path still
    /// names it.
    fresh: bool,
}

/// Where an append landed.
#[derive(Debug, PartialEq, Eq)]
pub enum Appended {
    /// The bytes are at `start..end`; `len` is the file's length just after the write (more
    /// than `end` when another writer appended right after).
    At { start: u64, end: u64, len: u64 },
    /// The path no longer names the file written to: another program renamed a file over it
    /// (an editor's save that keeps `file~`, a repair that keeps a hard-linked `.bak`), moved
    /// it away or deleted it, before or during the write. The bytes were taken back out of
    /// the old file (where nothing followed them); the caller appends again to what is at the
    /// path now, as the reference (which opens the path for every append) does.
    Moved,
}

impl AppendHandle {
    /// Opens `path` for appends and reads; `create`: creating it, as `appendFileSync` does
    /// (without it, a missing file is `NotFound`).
    pub fn open(path: &Path, create: bool) -> std::io::Result<AppendHandle> {
        faults::hit("append.open")?;
        let file = platform::open_append(path, true, create)?;
        let id = platform::file_id(&file);
        Ok(AppendHandle { path: path.to_path_buf(), file, id, fresh: true })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Device and inode of the open file, where the platform has them.
    pub fn id(&self) -> Option<(u64, u64)> {
        self.id
    }

    /// The complete lines in `from..to` (a trailing partial line, one another writer is
    /// still writing, is left for later).
    pub fn read_new(&self, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
        if to <= from {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; (to - from) as usize];
        platform::read_exact_at(&self.file, &mut buf, from)?;
        let keep = memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1);
        buf.truncate(keep);
        Ok(buf)
    }

    /// Appends `bytes` with one `write`. `expected` is where the caller believes the file
    /// ends (its own last read or write): when the length after the write confirms it, no
    /// further call is needed to know where the bytes landed. A write that fails part-way
    /// (ENOSPC, EFBIG, EIO) is truncated back while nothing follows it, so the next append
    /// never continues a torn line, and the error is returned.
    pub fn append(&mut self, bytes: &[u8], expected: Option<u64>, sync: bool) -> Result<Appended> {
        let _lock = platform::AppendLock::take(&self.file);
        // Where the path points, before the write: a file set aside since the last append
        // (`file~`, a `.bak`) gets no byte. Other processes may hold it open too, and a line
        // of theirs after ours would keep ours from being cut back out.
        if !std::mem::take(&mut self.fresh) && !self.still_here()? {
            return Ok(Appended::Moved);
        }
        let first = loop {
            match faults::hit("append.write").and_then(|()| (&self.file).write(bytes)) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r,
            }
        };
        let n = first.map_err(|e| Error::io(e, "write", None))?;
        let total = bytes.len() as u64;
        let start = if n == bytes.len() {
            None
        } else {
            // A short write: find where it began, then finish it or roll it back.
            let start = platform::append_position(&self.file).map_err(|e| Error::io(e, "write", None))? - n as u64;
            if let Err(e) = (&self.file).write_all(&bytes[n..]) {
                self.truncate_if_last(start, start + n as u64);
                return Err(Error::io(e, "write", None));
            }
            Some(start)
        };
        if sync && let Err(e) = faults::hit("append.fsync").and_then(|()| self.file.sync_data()) {
            self.roll_back(start, total);
            return Err(Error::io(e, "write", None));
        }
        // And after it: a rename over the path while the write was in flight sent the line to
        // the file set aside; it is cut back out of it (where nothing followed it).
        let here = match faults::hit("append.stat").map(|()| platform::stamp(&self.path)) {
            Ok(here) => here,
            Err(e) => {
                self.roll_back(start, total);
                return Err(Error::io(e, "write", None));
            }
        };
        let Some(meta) = here.filter(|h| self.is_this(h)) else {
            self.roll_back(start, total);
            return Ok(Appended::Moved);
        };
        let len = meta.size;
        let start = match (start, expected) {
            (Some(s), _) => s,
            (None, Some(e)) if e + total == len => e,
            // Another writer appended before or after us: ask where ours ended.
            _ => platform::append_position(&self.file).map_err(|e| Error::io(e, "write", None))? - total,
        };
        Ok(Appended::At { start, end: start + total, len })
    }

    /// Whether the path still names this handle's file. Not the handle's link count: a
    /// rename of the file to `file~` or a hard-linked backup keeps it above 0 while the path
    /// names another file.
    fn still_here(&self) -> Result<bool> {
        let here = faults::hit("append.stat")
            .map(|()| platform::stamp(&self.path))
            .map_err(|e| Error::io(e, "write", None))?;
        Ok(here.is_some_and(|h| self.is_this(&h)))
    }

    /// Whether the path's stamp is this handle's file (and, on Windows, not one waiting for
    /// its deletion). Without identities on the platform, only an unlinked file is told apart.
    fn is_this(&self, here: &platform::FileStamp) -> bool {
        match (here.id, self.id) {
            (Some(a), Some(b)) if a != b => false,
            // The same identity settles it where a deleted file leaves its path at once (an
            // open file's inode number is not reused); on Windows a file waiting for its
            // deletion still answers at its path.
            (Some(_), Some(_)) if !platform::DELETE_MAY_PEND => true,
            _ => !self.file.metadata().map_or(true, |m| platform::is_unlinked(&self.file, &m)),
        }
    }

    /// Takes a write of `total` bytes back out of the file (it began at `start`, or ended at
    /// the cursor), if nothing was appended after it.
    fn roll_back(&self, start: Option<u64>, total: u64) {
        let start = match start {
            Some(s) => s,
            None => match platform::append_position(&self.file) {
                Ok(end) if end >= total => end - total,
                _ => return,
            },
        };
        self.truncate_if_last(start, start + total);
    }

    /// Cuts a failed write's bytes `start..end` off the file if nothing was appended after them.
    fn truncate_if_last(&self, start: u64, end: u64) {
        if self.file.metadata().is_ok_and(|m| m.len() == end) {
            let _ = faults::hit("append.ftruncate").and_then(|()| self.file.set_len(start));
        }
    }
}

/// How a whole-file write treats an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// `openSync(path, "wx")`: fail with EEXIST if the file exists.
    Exclusive,
    /// `openSync(path, "w")`: replace the file.
    Replace,
}

/// Whether `PI_SESSION_NATIVE_FSYNC=1` asks for fsync on every write.
pub fn durable() -> bool {
    static DURABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DURABLE.get_or_init(|| std::env::var("PI_SESSION_NATIVE_FSYNC").is_ok_and(|v| v == "1"))
}

/// Writes a whole file atomically: a temp file beside it, then rename (Replace) or link
/// (Exclusive, which keeps the EEXIST check). Readers see the old file or the new one,
/// never a mix; a crash leaves at most a stray temp file. When an existing file is
/// replaced (a migration), the new bytes are fsynced before the rename, so even a power
/// loss cannot leave the session empty; new files are fsynced only in durable mode.
pub fn write_file(path: &Path, parts: &[&[u8]], mode: WriteMode) -> Result<()> {
    write_file_with(path, mode, &mut |f| {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        for p in parts {
            w.write_all(p)?;
        }
        w.flush()
    })
    .map(|_| ())
}

/// `write_file` of what `write` writes to the cursor of the new file (called again, on a
/// fresh file, where the file system has no hard links); its length.
pub fn write_file_with(
    path: &Path,
    mode: WriteMode,
    write: &mut dyn FnMut(&File) -> std::io::Result<()>,
) -> Result<u64> {
    let exists = fs::symlink_metadata(path).is_ok();
    if mode == WriteMode::Exclusive && exists {
        return Err(eexist(path));
    }
    let sync = (mode == WriteMode::Replace && exists) || durable();
    let tmp = temp_path(path);
    let mut write_tmp = || -> std::io::Result<u64> {
        let f = faults::hit("write.open").and_then(|()| platform::open_new(&tmp))?;
        faults::hit("write.write").and_then(|()| write(&f))?;
        if sync {
            faults::hit("write.fsync").and_then(|()| f.sync_all())?;
        }
        (&f).stream_position()
    };
    let len = match write_tmp() {
        Ok(len) => len,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            // Report it as the reference would: on the target path.
            return Err(Error::io(e, "open", Some(path)));
        }
    };
    let done = match mode {
        WriteMode::Replace => faults::hit("write.rename").and_then(|()| fs::rename(&tmp, path)),
        WriteMode::Exclusive => faults::hit("write.link").and_then(|()| fs::hard_link(&tmp, path)),
    };
    if mode == WriteMode::Exclusive {
        remove_temp(&tmp);
    }
    match done {
        Ok(()) => {
            if sync {
                sync_dir(path);
            }
            Ok(len)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let _ = fs::remove_file(&tmp);
            Err(eexist(path))
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            if mode == WriteMode::Exclusive {
                // Filesystems without hard links: fall back to an exclusive create.
                return write_direct_exclusive(path, write);
            }
            Err(Error::io(e, "rename", Some(path)))
        }
    }
}

/// `write_file_with(path, Replace, write)`; where the rename over `path` is refused (a folder
/// is there; on Windows also a read-only file, or one another process holds open), the
/// reference's own way instead: `let_go` (the caller stops reading `path`), then the file is
/// emptied and written in place, as `openSync(path, "w")` and its writes do. So a write the
/// reference makes is made, and one it fails, fails with its error (`EISDIR ... open` for a
/// folder). Not atomic: used only where the atomic way is refused.
pub fn replace_with(
    path: &Path,
    write: &mut dyn FnMut(&File) -> std::io::Result<()>,
    let_go: &mut dyn FnMut() -> Result<()>,
) -> Result<u64> {
    match write_file_with(path, WriteMode::Replace, write) {
        Err(Error::Io { syscall: "rename", .. }) => {
            let_go()?;
            let f = platform::open_truncate(path).map_err(|e| Error::io_creating(e, path))?;
            write(&f).and_then(|()| (&f).stream_position()).map_err(|e| Error::io(e, "write", None))
        }
        r => r,
    }
}

fn write_direct_exclusive(path: &Path, write: &mut dyn FnMut(&File) -> std::io::Result<()>) -> Result<u64> {
    let f = platform::open_new(path).map_err(|e| Error::io(e, "open", Some(path)))?;
    write(&f).and_then(|()| (&f).stream_position()).map_err(|e| Error::io(e, "write", None))
}

fn eexist(path: &Path) -> Error {
    Error::io(std::io::Error::from_raw_os_error(platform::RAW_EEXIST), "open", Some(path))
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    path.with_file_name(format!(".{name}.{}.tmp", &nonce[..12]))
}

/// Removes a temp file; where the first try fails (a failpoint, a transient error), once more.
fn remove_temp(tmp: &Path) {
    if faults::hit("write.unlink").and_then(|()| fs::remove_file(tmp)).is_err() {
        let _ = fs::remove_file(tmp);
    }
}

fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir() -> crate::testutil::TempPath {
        crate::testutil::TempPath::dir("write")
    }

    #[test]
    fn appends_land_whole_and_say_where() {
        let d = tmpdir();
        let p = d.join("f.jsonl");
        fs::write(&p, b"{\"a\":1}\n").unwrap();
        let mut h = AppendHandle::open(&p, true).unwrap();
        // Where the caller expected: no further question.
        assert_eq!(h.append(b"x\n", Some(8), false).unwrap(), Appended::At { start: 8, end: 10, len: 10 });
        // Another writer appended first (a partial line too): ours still lands whole, at the end.
        append_bytes(&p, b"{\"b\":2}\n{\"par", false).unwrap();
        assert_eq!(h.append(b"y\n", Some(10), false).unwrap(), Appended::At { start: 23, end: 25, len: 25 });
        assert_eq!(h.read_new(10, 25).unwrap(), b"{\"b\":2}\n{\"pary\n");
        assert_eq!(h.read_new(10, 22).unwrap(), b"{\"b\":2}\n", "a partial line is left for later");
        if cfg!(windows) {
            // The rename below is refused where a file is open (wine; Windows without POSIX
            // rename semantics): the replacement is the Unix case.
            return;
        }
        // A replaced file is noticed.
        fs::write(d.join("g.jsonl"), b"").unwrap();
        fs::rename(d.join("g.jsonl"), &p).unwrap();
        assert_eq!(h.append(b"z\n", Some(25), false).unwrap(), Appended::Moved);
        assert_eq!(fs::read(&p).unwrap(), b"");
    }

    #[test]
    fn exclusive_write_refuses_existing() {
        let d = tmpdir();
        let p = d.join("e.jsonl");
        write_file(&p, &[b"a\n"], WriteMode::Exclusive).unwrap();
        assert!(write_file(&p, &[b"b\n"], WriteMode::Exclusive).is_err());
        write_file(&p, &[b"c\n"], WriteMode::Replace).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"c\n");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1, "no temp files left");
    }
}
