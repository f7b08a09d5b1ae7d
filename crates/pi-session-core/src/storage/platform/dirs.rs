//! Directory listing: the `.jsonl` names of a folder in Node's `readdirSync` order, their
//! stats, and opens relative to the folder.

use std::ffi::OsStr;
use std::fs::File;
use std::io;

use super::files::FileStamp;
#[cfg(unix)]
use super::files::FileState;
#[cfg(not(unix))]
use super::files::{open_read, stamp};

/// The `.jsonl` names in `dir` with their `statSync(join(dir, name))` (symlinks followed;
/// `None` where the stat fails), in Node's `readdirSync` order: libuv's scandir sorts names by
/// their bytes (`strcmp`) on Unix, and returns them in the file system's enumeration order on
/// Windows (NTFS's, or under wine the host's); `raw`: that order everywhere (Bun's). Names
/// are as `readdir` decodes them ([`readdir_name`]), and so are stat'ed. The directory is read on this thread while
/// other threads stat the names already read, so the two costs overlap; on Unix each stat is
/// an `fstatat` relative to one directory descriptor, which skips resolving the directory's
/// path for every file.
pub fn jsonl_stats(dir: &std::path::Path, raw: bool) -> io::Result<Vec<(std::ffi::OsString, Option<FileStamp>)>> {
    use std::sync::{Mutex, mpsc};
    const BATCH: usize = 32;
    type Found = (usize, std::ffi::OsString, Option<FileStamp>);
    let stat = stat_in(dir)?;
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4) - 1;
    let (tx, rx) = mpsc::channel::<Vec<(usize, std::ffi::OsString)>>();
    let rx = Mutex::new(rx);
    let drain = |out: &mut Vec<Found>| {
        loop {
            let batch = match rx.lock() {
                Ok(r) => r.recv(),
                Err(e) => e.into_inner().recv(),
            };
            let Ok(batch) = batch else { break };
            for (seq, name) in batch {
                let m = stat(&readdir_name(&name));
                out.push((seq, name, m));
            }
        }
    };
    let mut found = std::thread::scope(|s| {
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
            for (seq, e) in std::fs::read_dir(dir)?.enumerate() {
                let name = e?.file_name();
                if name_bytes(&name).ends_with(b".jsonl") {
                    batch.push((seq, name));
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
    })?;
    if cfg!(windows) || raw {
        found.sort_unstable_by_key(|f| f.0);
    } else {
        found.sort_unstable_by(|a, b| name_bytes(&a.1).cmp(&name_bytes(&b.1)));
    }
    Ok(found.into_iter().map(|(_, name, st)| (readdir_name_owned(name), st)).collect())
}

/// A name as `readdir` gives it to JS (Node's and Bun's alike): bytes that are not UTF-8
/// become U+FFFD per maximal invalid subpart, as `from_utf8_lossy` decodes them, and that
/// name is what the reference then stats and opens. On Windows the bytes are WTF-8, as
/// libuv's `scandir` gives them (`uv_utf16_to_wtf8`): a lone surrogate becomes three U+FFFD.
pub fn readdir_name(name: &OsStr) -> std::borrow::Cow<'_, OsStr> {
    if name.to_str().is_some() {
        return std::borrow::Cow::Borrowed(name);
    }
    std::borrow::Cow::Owned(String::from_utf8_lossy(name.as_encoded_bytes()).into_owned().into())
}

/// [`readdir_name`] of an owned name.
pub fn readdir_name_owned(name: std::ffi::OsString) -> std::ffi::OsString {
    match readdir_name(&name) {
        std::borrow::Cow::Borrowed(_) => name,
        std::borrow::Cow::Owned(n) => n,
    }
}

/// Puts names read from one directory in Node's `readdir` order (see `jsonl_stats`; `raw`:
/// as read, Bun's order).
pub fn sort_as_readdir(names: &mut [(std::ffi::OsString, bool)], raw: bool) {
    if !cfg!(windows) && !raw {
        names.sort_unstable_by(|a, b| name_bytes(&a.0).cmp(&name_bytes(&b.0)));
    }
}

/// The `.jsonl` names in `dir` in Node's `readdirSync` order (`raw`: as read; see
/// `jsonl_stats`), without their stats.
pub fn jsonl_names(dir: &std::path::Path, raw: bool) -> io::Result<Vec<std::ffi::OsString>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let name = e?.file_name();
        if name_bytes(&name).ends_with(b".jsonl") {
            names.push(name);
        }
    }
    if !cfg!(windows) && !raw {
        names.sort_unstable_by(|a, b| name_bytes(a).cmp(&name_bytes(b)));
    }
    Ok(names.into_iter().map(readdir_name_owned).collect())
}

/// Opens names inside `dir` for reading, as `open_read(dir.join(name))` does; on Unix with
/// `openat` relative to one directory descriptor, which skips resolving the directory's path
/// for every file (discovery opens thousands).
pub fn open_in(dir: &std::path::Path) -> io::Result<impl Fn(&OsStr) -> io::Result<File> + Sync> {
    #[cfg(unix)]
    {
        use std::os::fd::{AsRawFd, FromRawFd};
        use std::os::unix::ffi::OsStrExt;
        let dir_file = File::open(dir)?;
        Ok(move |name: &OsStr| {
            let c = std::ffi::CString::new(name.as_bytes()).map_err(io::Error::other)?;
            // SAFETY: the descriptor lives as long as this closure (it owns `dir_file`) and `c`
            // is NUL-terminated.
            let fd = unsafe { libc::openat(dir_file.as_raw_fd(), c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` was just opened and is owned by nothing else.
            Ok(unsafe { File::from_raw_fd(fd) })
        })
    }
    #[cfg(not(unix))]
    {
        let dir = dir.to_path_buf();
        Ok(move |name: &OsStr| open_read(&dir.join(name)))
    }
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
            Some(FileStamp::of_state(state))
        })
    }
    #[cfg(not(unix))]
    {
        let dir = dir.to_path_buf();
        Ok(move |name: &OsStr| stamp(&dir.join(name)))
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn readdir_names_decode_as_node_decodes_their_bytes() {
        let name = |b: &[u8]| readdir_name(OsStr::from_bytes(b)).to_str().unwrap().to_owned();
        assert_eq!(name(b"plain.jsonl"), "plain.jsonl");
        // `Buffer.from([0x61, 0xff, 0x62]).toString()`: one U+FFFD per maximal invalid subpart.
        assert_eq!(name(b"a\xffb"), "a\u{FFFD}b");
        assert_eq!(name(b"c\xc3.jsonl"), "c\u{FFFD}.jsonl");
        // A lone surrogate as libuv's WTF-8 gives a Windows name: three U+FFFD, as Node decodes it.
        assert_eq!(name(b"a\xed\xa0\x80b"), "a\u{FFFD}\u{FFFD}\u{FFFD}b");
    }
}
