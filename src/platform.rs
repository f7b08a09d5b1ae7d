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
