//! The few operating-system details the core needs, in one place: Unix is the primary
//! target; Windows builds use the equivalents (or a safe fallback, noted per function).

use std::ffi::OsStr;
use std::fs::{File, Metadata, OpenOptions};
use std::io;

/// `open(…, 0o666)` as Node's `fs` opens files (the umask applies).
pub fn default_mode(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o666)
    }
    #[cfg(not(unix))]
    {
        options
    }
}

/// The identity of a file (device and inode). `None` where it is not available: callers
/// then treat every check as a change, which is correct but slower.
pub fn file_id(meta: &Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Whether an open file has been unlinked or replaced by a rename (`nlink == 0`).
pub fn is_unlinked(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.nlink() == 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// The position of an append descriptor's cursor: just after its last write, which
/// `O_APPEND` put at the end of the file (`lseek(fd, 0, SEEK_CUR)`).
pub fn append_position(mut file: &File) -> io::Result<u64> {
    use std::io::Seek;
    file.stream_position()
}

/// Reads exactly `buf.len()` bytes at `offset`, without moving a shared cursor.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match file.seek_read(&mut buf[done..], offset + done as u64)? {
                0 => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                n => done += n,
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buf, offset);
        Err(io::Error::other("positioned reads are not supported on this platform"))
    }
}

/// Node's `stats.mtimeMs`: seconds × 1000 + nanoseconds / 1e6, as a double.
pub fn mtime_ms(meta: &Metadata) -> f64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.mtime() as f64 * 1000.0 + meta.mtime_nsec() as f64 / 1_000_000.0
    }
    #[cfg(not(unix))]
    {
        use std::time::UNIX_EPOCH;
        match meta.modified() {
            Ok(t) => match t.duration_since(UNIX_EPOCH) {
                Ok(d) => d.as_secs() as f64 * 1000.0 + d.subsec_nanos() as f64 / 1_000_000.0,
                Err(e) => -(e.duration().as_secs_f64() * 1000.0),
            },
            Err(_) => f64::NAN,
        }
    }
}

/// What a stat tells about a file: its identity (device, inode; `None` where not
/// available), size and `mtimeMs`, and its whole state where the platform has one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileStamp {
    pub id: Option<(u64, u64)>,
    pub size: u64,
    pub mtime_ms: f64,
    pub state: Option<FileState>,
}

impl FileStamp {
    pub fn of(meta: &Metadata) -> FileStamp {
        FileStamp { id: file_id(meta), size: meta.len(), mtime_ms: mtime_ms(meta), state: FileState::of(meta) }
    }
}

/// A file's identity and state to the nanosecond: device, inode, size, mtime and ctime
/// (`(seconds, nanoseconds)`). Any write, truncation, replacement or rename over the
/// path changes at least one of them; ctime also catches a same-size rewrite whose mtime
/// was set back (`utimes` sets ctime to now). `None` off Unix: Windows has no stable
/// file identity in `std`, so what depends on it (the persistent listing index) is off there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileState {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
}

impl FileState {
    pub fn of(meta: &Metadata) -> Option<FileState> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // `as`: the nanosecond fields are i64 but always in 0..1e9.
            Some(FileState {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime: (meta.mtime(), meta.mtime_nsec() as u32),
                ctime: (meta.ctime(), meta.ctime_nsec() as u32),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

/// The `.jsonl` names in `dir` with their `statSync(join(dir, name))` (symlinks followed;
/// `None` where the stat fails), in no particular order. The directory is read
/// on this thread while other threads stat the names already read, so the two costs
/// overlap; on Unix each stat is an `fstatat` relative to one directory descriptor, which
/// skips resolving the directory's path for every file.
pub fn jsonl_stats(dir: &std::path::Path) -> io::Result<Vec<(std::ffi::OsString, Option<FileStamp>)>> {
    use std::sync::{Mutex, mpsc};
    const BATCH: usize = 32;
    let stat = stat_in(dir)?;
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4) - 1;
    let (tx, rx) = mpsc::channel::<Vec<std::ffi::OsString>>();
    let rx = Mutex::new(rx);
    let drain = |out: &mut Vec<(std::ffi::OsString, Option<FileStamp>)>| {
        loop {
            let batch = match rx.lock() {
                Ok(r) => r.recv(),
                Err(e) => e.into_inner().recv(),
            };
            let Ok(batch) = batch else { break };
            for name in batch {
                let m = stat(&name);
                out.push((name, m));
            }
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    drain(&mut out);
                    out
                })
            })
            .collect();
        let read = (|| -> io::Result<()> {
            let mut batch = Vec::with_capacity(BATCH);
            for e in std::fs::read_dir(dir)? {
                let name = e?.file_name();
                if name_bytes(&name).ends_with(b".jsonl") {
                    batch.push(name);
                    if batch.len() == BATCH {
                        let _ = tx.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
                    }
                }
            }
            let _ = tx.send(batch);
            Ok(())
        })();
        drop(tx);
        let mut out = Vec::new();
        drain(&mut out);
        for h in handles {
            out.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        read.map(|_| out)
    })
}

/// A stat of names inside `dir`.
fn stat_in(dir: &std::path::Path) -> io::Result<impl Fn(&OsStr) -> Option<FileStamp> + Sync> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let dir_file = File::open(dir)?;
        Ok(move |name: &OsStr| {
            let c = std::ffi::CString::new(name.as_bytes()).ok()?;
            let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
            // SAFETY: the descriptor lives as long as this closure (it owns `dir_file`), `c`
            // is NUL-terminated and `st` is a valid out-pointer that fstatat fills on success.
            let rc = unsafe { libc::fstatat(dir_file.as_raw_fd(), c.as_ptr(), st.as_mut_ptr(), 0) };
            if rc != 0 {
                return None;
            }
            // SAFETY: fstatat returned 0, so it initialised `st`.
            let st = unsafe { st.assume_init() };
            // `as` widens: the field types differ between Unix targets.
            #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
            let state = FileState {
                dev: st.st_dev as u64,
                ino: st.st_ino as u64,
                size: st.st_size as u64,
                mtime: (st.st_mtime as i64, st.st_mtime_nsec as u32),
                ctime: (st.st_ctime as i64, st.st_ctime_nsec as u32),
            };
            Some(FileStamp {
                id: Some((state.dev, state.ino)),
                size: state.size,
                mtime_ms: st.st_mtime as f64 * 1000.0 + st.st_mtime_nsec as f64 / 1_000_000.0,
                state: Some(state),
            })
        })
    }
    #[cfg(not(unix))]
    {
        let dir = dir.to_path_buf();
        Ok(move |name: &OsStr| std::fs::metadata(dir.join(name)).ok().map(|m| FileStamp::of(&m)))
    }
}

/// A file name's bytes, for `strcmp` ordering (libuv's `scandir` order on Unix).
pub fn name_bytes(name: &OsStr) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::borrow::Cow::Borrowed(name.as_bytes())
    }
    #[cfg(not(unix))]
    {
        std::borrow::Cow::Owned(name.to_string_lossy().into_owned().into_bytes())
    }
}
