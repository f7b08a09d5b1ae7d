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

/// Opens a file for reading as Node's `fs` does. On Windows libuv opens every file with
/// `FILE_FLAG_BACKUP_SEMANTICS`, so a directory opens and the read that follows fails
/// (`EISDIR: illegal operation on a directory, read`); without it the open itself fails with
/// ERROR_ACCESS_DENIED, which Node never reports for a directory.
pub fn open_read(path: &std::path::Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        options.share_mode(win::FILE_SHARE_ALL).custom_flags(win::FILE_FLAG_BACKUP_SEMANTICS);
    }
    options.open(path)
}

/// Opens a file for appends as `appendFileSync` (`"a"`) does, creating it, and for reads too
/// when `read` (an append handle reads back what other processes appended) and the system
/// allows it: where read access is refused (a file that grants writes only), it opens for
/// appends alone, as Node does. On Windows with libuv's `fs__open` parameters for `"a"`: the
/// append right without the write-data right, sharing read, write and delete (the file can be
/// deleted or renamed over while it is open), OPEN_ALWAYS, and FILE_FLAG_BACKUP_SEMANTICS, so a
/// folder opens and the write fails (EBADF), where Node's fails.
pub fn open_append(path: &std::path::Path, read: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    default_mode(options.read(read).append(true).create(true));
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        options.share_mode(win::FILE_SHARE_ALL).custom_flags(win::FILE_FLAG_BACKUP_SEMANTICS);
    }
    match options.open(path) {
        Err(e) if read && e.kind() == io::ErrorKind::PermissionDenied => options.read(false).open(path),
        r => r,
    }
}

/// Creates a file that must not exist, for writes, as `openSync(path, "wx")` does (on Windows
/// CREATE_NEW with libuv's sharing and flags).
pub fn open_new(path: &std::path::Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    default_mode(options.write(true).create_new(true));
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        options.share_mode(win::FILE_SHARE_ALL).custom_flags(win::FILE_FLAG_BACKUP_SEMANTICS);
    }
    options.open(path)
}

/// Opens a file as `openSync(path, "w")` does: created, or emptied, for writes. On Unix
/// `O_WRONLY | O_CREAT | O_TRUNC` (a folder is EISDIR). On Windows libuv asks CreateFileW for
/// CREATE_ALWAYS, sharing everything, with FILE_FLAG_BACKUP_SEMANTICS; a folder there fails
/// with ERROR_FILE_EXISTS, which `fs__open` reports as EISDIR. std emulates CREATE_ALWAYS with
/// OPEN_ALWAYS and a truncation (which would open the folder), so the folder is told apart here
/// and given CreateFileW's error.
pub fn open_truncate(path: &std::path::Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    default_mode(options.write(true).create(true).truncate(true));
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        const ERROR_FILE_EXISTS: i32 = 80;
        options.truncate(false).share_mode(win::FILE_SHARE_ALL).custom_flags(win::FILE_FLAG_BACKUP_SEMANTICS);
        let file = options.open(path)?;
        if file.metadata()?.is_dir() {
            return Err(io::Error::from_raw_os_error(ERROR_FILE_EXISTS));
        }
        file.set_len(0)?;
        Ok(file)
    }
    #[cfg(not(windows))]
    {
        options.open(path)
    }
}

/// The identity of an open file: device and inode on Unix, volume serial number and file
/// index on Windows. `None` where it is not available: callers then treat every check as a
/// change, which is correct but slower.
pub fn file_id(file: &File) -> Option<(u64, u64)> {
    FileStamp::of_file(file).ok().and_then(|s| s.id)
}

/// Whether an open file has been unlinked or replaced by a rename (`nlink == 0`; on Windows
/// also a delete that waits for the last handle to close). `meta` is `file`'s.
pub fn is_unlinked(file: &File, meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = file;
        meta.nlink() == 0
    }
    #[cfg(windows)]
    {
        let _ = meta;
        win::standard(file).is_ok_and(|(links, delete_pending)| links == 0 || delete_pending)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, meta);
        false
    }
}

/// Held around one append so that two writers never mix their bytes. On Unix nothing is
/// needed: one `write` on an `O_APPEND` descriptor lands whole at the end of the file. On
/// Windows an append-only handle is meant to do the same, but that is the file system's
/// promise, not the API's (wine emulates it with a size query and a positioned write, and two
/// processes overwrite each other's lines): appends take an exclusive byte-range lock far past
/// any end of file, so readers and writers of the data are never blocked by it, only other
/// appends of ours.
pub struct AppendLock<'a> {
    #[cfg(windows)]
    file: Option<&'a File>,
    #[cfg(not(windows))]
    _file: std::marker::PhantomData<&'a File>,
}

impl<'a> AppendLock<'a> {
    pub fn take(file: &'a File) -> AppendLock<'a> {
        #[cfg(windows)]
        {
            AppendLock { file: win::lock(file, true).then_some(file) }
        }
        #[cfg(not(windows))]
        {
            let _ = file;
            AppendLock { _file: std::marker::PhantomData }
        }
    }
}

impl Drop for AppendLock<'_> {
    fn drop(&mut self) {
        #[cfg(windows)]
        if let Some(f) = self.file {
            win::lock(f, false);
        }
    }
}

/// The position of an append descriptor's cursor: just after its last write, which
/// `O_APPEND` put at the end of the file (`lseek(fd, 0, SEEK_CUR)`).
/// On Windows, inside the `AppendLock`, the end of the file instead: an append-only handle's
/// cursor does not follow the data there (wine leaves it where it was), and no other append of
/// ours can land between the write and this call.
pub fn append_position(mut file: &File) -> io::Result<u64> {
    #[cfg(windows)]
    {
        let _ = &mut file;
        Ok(file.metadata()?.len())
    }
    #[cfg(not(windows))]
    {
        use std::io::Seek;
        file.stream_position()
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

/// Copies `len` bytes of `from` at `offset` to the cursor of `to`, without moving `from`'s
/// cursor. On Linux the kernel copies them (`copy_file_range`: no pass through this process,
/// a reflink where the file system shares extents); elsewhere, or where the kernel refuses
/// (another file system, an old kernel), through `buf` in chunks.
pub fn copy_range(from: &File, offset: u64, len: u64, to: &File, buf: &mut Vec<u8>) -> io::Result<()> {
    let (mut offset, mut left) = (offset, len);
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        while left > 0 {
            // `off64_t` (glibc) and `off_t` (musl) are both 64 bits on Linux.
            let mut off_in = offset as i64;
            let chunk = left.min(1 << 30) as usize;
            // SAFETY: two open descriptors; `off_in` is a valid pointer and the out offset null
            // (the cursor of `to` advances).
            let n = unsafe {
                libc::copy_file_range(from.as_raw_fd(), &mut off_in, to.as_raw_fd(), std::ptr::null_mut(), chunk, 0)
            };
            match n {
                0 => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                n if n > 0 => {
                    offset += n as u64;
                    left -= n as u64;
                }
                _ => {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    let unsupported = matches!(
                        e.raw_os_error(),
                        Some(libc::ENOSYS | libc::EXDEV | libc::EINVAL | libc::EOPNOTSUPP | libc::EPERM)
                    );
                    if !unsupported {
                        return Err(e);
                    }
                    break;
                }
            }
        }
    }
    while left > 0 {
        let n = left.min(1 << 20) as usize;
        if buf.len() < n {
            buf.resize(n, 0);
        }
        read_exact_at(from, &mut buf[..n], offset)?;
        io::Write::write_all(&mut &*to, &buf[..n])?;
        offset += n as u64;
        left -= n as u64;
    }
    Ok(())
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
    /// The stamp of an open file (`fstat`; on Windows its handle's file information).
    pub fn of_file(file: &File) -> io::Result<FileStamp> {
        #[cfg(windows)]
        {
            Ok(win::info(file)?.stamp())
        }
        #[cfg(not(windows))]
        {
            Ok(FileStamp::of_meta(&file.metadata()?))
        }
    }

    #[cfg(not(windows))]
    fn of_meta(meta: &Metadata) -> FileStamp {
        let state = FileState::of_meta(meta);
        FileStamp { id: state.map(|s| (s.dev, s.ino)), size: meta.len(), mtime_ms: mtime_ms(meta), state }
    }

    fn of_state(state: FileState) -> FileStamp {
        let (s, ns) = state.mtime;
        FileStamp {
            id: Some((state.dev, state.ino)),
            size: state.size,
            mtime_ms: s as f64 * 1000.0 + ns as f64 / 1_000_000.0,
            state: Some(state),
        }
    }
}

/// `statSync(path)` as a stamp (symlinks followed), `None` where it fails. On Windows the file
/// is opened for its attributes only (sharing read, write and delete, as libuv's stat does), so
/// the identity and the change time come from its handle.
pub fn stamp(path: &std::path::Path) -> Option<FileStamp> {
    #[cfg(windows)]
    {
        win::open_attributes(path).and_then(|f| FileStamp::of_file(&f)).ok()
    }
    #[cfg(not(windows))]
    {
        std::fs::metadata(path).ok().map(|m| FileStamp::of_meta(&m))
    }
}

/// A file's identity and state to the nanosecond: device, inode, size, mtime and ctime
/// (`(seconds, nanoseconds)`). Any write, truncation, replacement or rename over the
/// path changes at least one of them; ctime also catches a same-size rewrite whose mtime
/// was set back (`utimes` sets ctime to now). On Windows the device is the volume serial
/// number, the inode the file index and ctime the handle's ChangeTime, which NTFS moves on
/// the same events. `None` where the platform has neither: what depends on it (the
/// persistent listing index) is off there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileState {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
}

impl FileState {
    #[cfg(not(windows))]
    fn of_meta(meta: &Metadata) -> Option<FileState> {
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

/// The Win32 calls behind file identity, change time and delete-pending state, which `std`
/// keeps unstable (`windows_by_handle`) or does not expose.
#[cfg(windows)]
mod win {
    use std::ffi::c_void;
    use std::fs::{File, OpenOptions};
    use std::io;
    use std::os::windows::fs::OpenOptionsExt;
    use std::os::windows::io::AsRawHandle;

    use super::{FileStamp, FileState};

    /// `BY_HANDLE_FILE_INFORMATION` (FILETIMEs as two DWORDs).
    #[repr(C)]
    #[derive(Default)]
    struct ByHandleFileInformation {
        attributes: u32,
        creation: [u32; 2],
        access: [u32; 2],
        write: [u32; 2],
        volume_serial: u32,
        size_high: u32,
        size_low: u32,
        links: u32,
        index_high: u32,
        index_low: u32,
    }

    /// `FILE_BASIC_INFO`.
    #[repr(C)]
    #[derive(Default)]
    struct FileBasicInfo {
        creation: i64,
        access: i64,
        write: i64,
        change: i64,
        attributes: u32,
    }

    /// `FILE_STANDARD_INFO`.
    #[repr(C)]
    #[derive(Default)]
    struct FileStandardInfo {
        allocation: i64,
        end_of_file: i64,
        links: u32,
        delete_pending: u8,
        directory: u8,
    }

    const FILE_BASIC_INFO_CLASS: i32 = 0;
    const FILE_STANDARD_INFO_CLASS: i32 = 1;
    const FILE_READ_ATTRIBUTES: u32 = 0x80;
    /// FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, as libuv shares every file.
    pub const FILE_SHARE_ALL: u32 = 0x7;
    /// Lets CreateFileW open a folder, as libuv opens every file.
    pub const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;

    /// `OVERLAPPED`, for the lock's offset.
    #[repr(C)]
    struct Overlapped {
        internal: usize,
        internal_high: usize,
        offset: u32,
        offset_high: u32,
        event: *mut c_void,
    }

    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetFileInformationByHandle(file: *mut c_void, info: *mut ByHandleFileInformation) -> i32;
        fn GetFileInformationByHandleEx(file: *mut c_void, class: i32, info: *mut c_void, size: u32) -> i32;
        fn LockFileEx(file: *mut c_void, flags: u32, reserved: u32, low: u32, high: u32, o: *mut Overlapped) -> i32;
        fn UnlockFileEx(file: *mut c_void, reserved: u32, low: u32, high: u32, o: *mut Overlapped) -> i32;
    }

    const LOCKFILE_EXCLUSIVE_LOCK: u32 = 0x2;

    /// Takes (waiting for it) or releases the append lock: one byte at 2^63 - 1, past any data.
    pub fn lock(file: &File, take: bool) -> bool {
        let mut o = Overlapped {
            internal: 0,
            internal_high: 0,
            offset: u32::MAX,
            offset_high: 0x7FFF_FFFF,
            event: std::ptr::null_mut(),
        };
        // SAFETY: a live handle owned by `file`, and a valid OVERLAPPED for a synchronous call.
        unsafe {
            if take {
                LockFileEx(file.as_raw_handle(), LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &mut o) != 0
            } else {
                UnlockFileEx(file.as_raw_handle(), 0, 1, 0, &mut o) != 0
            }
        }
    }

    /// 100 ns ticks since 1601 as Unix `(seconds, nanoseconds)`, as libuv converts them.
    fn unix_time(ticks: i64) -> (i64, u32) {
        let t = ticks - 116_444_736_000_000_000;
        // `as`: rem_euclid is in 0..1e7, times 100 below 1e9.
        (t.div_euclid(10_000_000), (t.rem_euclid(10_000_000) * 100) as u32)
    }

    pub struct Info(FileState);

    impl Info {
        pub fn stamp(self) -> FileStamp {
            FileStamp::of_state(self.0)
        }
    }

    pub fn info(file: &File) -> io::Result<Info> {
        let h = file.as_raw_handle();
        let mut by = ByHandleFileInformation::default();
        let mut basic = FileBasicInfo::default();
        // SAFETY: `h` is a live handle owned by `file`; both out-pointers are valid, writable and
        // sized as the calls expect.
        let ok = unsafe {
            GetFileInformationByHandle(h, &mut by) != 0
                && GetFileInformationByHandleEx(
                    h,
                    FILE_BASIC_INFO_CLASS,
                    (&mut basic as *mut FileBasicInfo).cast(),
                    std::mem::size_of::<FileBasicInfo>() as u32,
                ) != 0
        };
        if !ok {
            return Err(io::Error::last_os_error());
        }
        Ok(Info(FileState {
            dev: u64::from(by.volume_serial),
            ino: (u64::from(by.index_high) << 32) | u64::from(by.index_low),
            size: (u64::from(by.size_high) << 32) | u64::from(by.size_low),
            mtime: unix_time(basic.write),
            ctime: unix_time(basic.change),
        }))
    }

    /// The link count and whether a delete waits for the last handle to close.
    pub fn standard(file: &File) -> io::Result<(u32, bool)> {
        let mut info = FileStandardInfo::default();
        // SAFETY: as in `info`.
        let ok = unsafe {
            GetFileInformationByHandleEx(
                file.as_raw_handle(),
                FILE_STANDARD_INFO_CLASS,
                (&mut info as *mut FileStandardInfo).cast(),
                std::mem::size_of::<FileStandardInfo>() as u32,
            ) != 0
        };
        if !ok {
            return Err(io::Error::last_os_error());
        }
        Ok((info.links, info.delete_pending != 0))
    }

    /// Opens `path` (symlinks followed, directories too) for its attributes only.
    pub fn open_attributes(path: &std::path::Path) -> io::Result<File> {
        OpenOptions::new()
            .access_mode(FILE_READ_ATTRIBUTES)
            .share_mode(FILE_SHARE_ALL)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
            .open(path)
    }
}

/// The `.jsonl` names in `dir` with their `statSync(join(dir, name))` (symlinks followed;
/// `None` where the stat fails), in Node's `readdirSync` order: libuv's scandir sorts names by
/// their bytes (`strcmp`) on Unix, and returns them in the file system's enumeration order on
/// Windows (NTFS's, or under wine the host's). The directory is read on this thread while
/// other threads stat the names already read, so the two costs overlap; on Unix each stat is
/// an `fstatat` relative to one directory descriptor, which skips resolving the directory's
/// path for every file.
pub fn jsonl_stats(dir: &std::path::Path) -> io::Result<Vec<(std::ffi::OsString, Option<FileStamp>)>> {
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
                let m = stat(&name);
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
    if cfg!(windows) {
        found.sort_unstable_by_key(|f| f.0);
    } else {
        found.sort_unstable_by(|a, b| name_bytes(&a.1).cmp(&name_bytes(&b.1)));
    }
    Ok(found.into_iter().map(|(_, name, st)| (name, st)).collect())
}

/// Puts names read from one directory in Node's `readdir` order (see `jsonl_stats`).
pub fn sort_as_readdir(names: &mut [(std::ffi::OsString, bool)]) {
    if !cfg!(windows) {
        names.sort_unstable_by(|a, b| name_bytes(&a.0).cmp(&name_bytes(&b.0)));
    }
}

/// The `.jsonl` names in `dir` in Node's `readdirSync` order (see `jsonl_stats`), without
/// their stats.
pub fn jsonl_names(dir: &std::path::Path) -> io::Result<Vec<std::ffi::OsString>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let name = e?.file_name();
        if name_bytes(&name).ends_with(b".jsonl") {
            names.push(name);
        }
    }
    if !cfg!(windows) {
        names.sort_unstable_by(|a, b| name_bytes(a).cmp(&name_bytes(b)));
    }
    Ok(names)
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

/// Whether a file that is open (by this process too) can make a rename over its path fail. On
/// Windows a rename that replaces a file fails while the file has open handles, unless the
/// system renames with POSIX semantics (NTFS on recent Windows 10 and 11 may; wine and other
/// file systems do not). Unix renames over open files.
pub const OPEN_FILES_BLOCK_RENAME: bool = cfg!(windows);

/// Whether a session keeps its file open between appends. On Windows it does not, as the
/// reference's `appendFileSync` does not: where deletes keep the old semantics (wine, FAT,
/// network shares, older Windows), a deleted file that is still open stays in its folder,
/// and cannot be created again, until its last handle closes.
pub const HOLD_APPEND_HANDLE: bool = !cfg!(windows);

/// The call that failed, for what Node reports: libuv words a few Windows errors by the call
/// that got them (`src/win/fs.c`). `Open { creating }`: an open with `O_CREAT` and without
/// `O_EXCL` (`"a"`, `"w"`); the exclusive create (`"wx"`) and the read open are `creating:
/// false`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsCall {
    Open { creating: bool },
    Read,
    Write,
    Other,
}

impl FsCall {
    /// The call behind a `syscall` name as Node's messages give it (`open` is a non-creating
    /// open: a creating one is named where it is made).
    pub fn of(syscall: &str) -> FsCall {
        match syscall {
            "open" => FsCall::Open { creating: false },
            "read" => FsCall::Read,
            "write" => FsCall::Write,
            _ => FsCall::Other,
        }
    }
}

/// The `errno` Node's `fs` reports for a failed system call, as a positive number (the facade
/// negates it and looks it up in `util.getSystemErrorMap()`). On Unix that is the OS errno
/// itself. On Windows Node reports libuv's own codes (ENOENT is −4058): the Windows error is
/// translated as libuv's `fs` calls translate it (`uv_fs_errno`).
pub fn node_errno(err: &io::Error, call: FsCall) -> i32 {
    let raw = err.raw_os_error().unwrap_or(0);
    #[cfg(windows)]
    {
        uv_fs_errno(raw, call)
    }
    #[cfg(not(windows))]
    {
        let _ = call;
        raw
    }
}

/// The OS error an exclusive create (`wx`) fails with when the path exists: EEXIST on Unix,
/// ERROR_FILE_EXISTS on Windows (both become Node's `EEXIST`).
pub const RAW_EEXIST: i32 = if cfg!(windows) { 80 } else { 17 };

/// libuv's Windows error codes (`include/uv/errno.h`, `UV__E*`), as positive numbers.
#[cfg(any(windows, test))]
mod uv {
    pub const EOF: i32 = 4095;
    pub const UNKNOWN: i32 = 4094;
    pub const E2BIG: i32 = 4093;
    pub const EACCES: i32 = 4092;
    pub const EADDRINUSE: i32 = 4091;
    pub const EADDRNOTAVAIL: i32 = 4090;
    pub const EAFNOSUPPORT: i32 = 4089;
    pub const EAGAIN: i32 = 4088;
    pub const EALREADY: i32 = 4084;
    pub const EBADF: i32 = 4083;
    pub const EBUSY: i32 = 4082;
    pub const ECANCELED: i32 = 4081;
    pub const ECHARSET: i32 = 4080;
    pub const ECONNABORTED: i32 = 4079;
    pub const ECONNREFUSED: i32 = 4078;
    pub const ECONNRESET: i32 = 4077;
    pub const EEXIST: i32 = 4075;
    pub const EFAULT: i32 = 4074;
    pub const EHOSTUNREACH: i32 = 4073;
    pub const EINVAL: i32 = 4071;
    pub const EIO: i32 = 4070;
    pub const EISCONN: i32 = 4069;
    pub const EISDIR: i32 = 4068;
    pub const ELOOP: i32 = 4067;
    pub const EMFILE: i32 = 4066;
    pub const EMSGSIZE: i32 = 4065;
    pub const ENAMETOOLONG: i32 = 4064;
    pub const ENETUNREACH: i32 = 4062;
    pub const ENOBUFS: i32 = 4060;
    pub const ENOENT: i32 = 4058;
    pub const ENOMEM: i32 = 4057;
    pub const ENOSPC: i32 = 4055;
    pub const ENOTCONN: i32 = 4053;
    pub const ENOTEMPTY: i32 = 4051;
    pub const ENOTSOCK: i32 = 4050;
    pub const ENOTSUP: i32 = 4049;
    pub const EPERM: i32 = 4048;
    pub const EPIPE: i32 = 4047;
    pub const EPROTONOSUPPORT: i32 = 4045;
    pub const EROFS: i32 = 4043;
    pub const ETIMEDOUT: i32 = 4039;
    pub const EXDEV: i32 = 4037;
    pub const EFTYPE: i32 = 4028;
    pub const ESOCKTNOSUPPORT: i32 = 4025;
}

/// What libuv's `fs` calls report for a Windows error (libuv 1.51.0, the one Node 22.23
/// bundles; the same code in 1.52.1): `uv_translate_sys_error`, except where `src/win/fs.c`
/// words it by the call:
/// - `fs__open`: ERROR_FILE_EXISTS from a creating open (`O_CREAT` without `O_EXCL`) means the
///   path is a folder: EISDIR.
/// - `fs__read`, `fs__write`: ERROR_ACCESS_DENIED becomes ERROR_INVALID_FLAGS (EBADF: the
///   handle is not open for that), as a write to a folder opened for appends gives.
/// - `fs__write` translates with `uv_translate_write_sys_error`: ERROR_BROKEN_PIPE and
///   ERROR_NO_DATA are EPIPE.
#[cfg(any(windows, test))]
fn uv_fs_errno(win: i32, call: FsCall) -> i32 {
    const ERROR_ACCESS_DENIED: i32 = 5;
    const ERROR_INVALID_FLAGS: i32 = 1004;
    const ERROR_FILE_EXISTS: i32 = 80;
    const ERROR_BROKEN_PIPE: i32 = 109;
    const ERROR_NO_DATA: i32 = 232;
    match (call, win) {
        (FsCall::Open { creating: true }, ERROR_FILE_EXISTS) => uv::EISDIR,
        (FsCall::Read | FsCall::Write, ERROR_ACCESS_DENIED) => uv_errno(ERROR_INVALID_FLAGS),
        (FsCall::Write, ERROR_BROKEN_PIPE | ERROR_NO_DATA) => uv::EPIPE,
        _ => uv_errno(win),
    }
}

/// libuv's `uv_translate_sys_error` (`src/win/error.c`), every entry: the Win32 errors, and
/// the Winsock ones for completeness (the core opens no sockets). What it does not list is
/// UNKNOWN.
#[cfg(any(windows, test))]
fn uv_errno(win: i32) -> i32 {
    match win {
        0 => 0,
        1 => uv::EISDIR, // INVALID_FUNCTION
        2 | 3 | 15 | 123 | 126 | 161 | 203 | 267 | 4392 | 11001 | 11004 => uv::ENOENT, // FILE_NOT_FOUND, PATH_NOT_FOUND, INVALID_DRIVE, INVALID_NAME, MOD_NOT_FOUND, BAD_PATHNAME, ENVVAR_NOT_FOUND, DIRECTORY, INVALID_REPARSE_DATA, WSAHOST_NOT_FOUND, WSANO_DATA
        4 | 10024 => uv::EMFILE,                                                       // TOO_MANY_OPEN_FILES, WSAEMFILE
        5 | 1314 => uv::EPERM,                              // ACCESS_DENIED, PRIVILEGE_NOT_HELD
        6 | 1004 => uv::EBADF,                              // INVALID_HANDLE, INVALID_FLAGS
        8 | 14 => uv::ENOMEM,                               // NOT_ENOUGH_MEMORY, OUTOFMEMORY
        13 | 87 | 122 | 1464 | 10022 | 10046 => uv::EINVAL, // INVALID_DATA, INVALID_PARAMETER, INSUFFICIENT_BUFFER, SYMLINK_NOT_SUPPORTED, WSAEINVAL, WSAEPFNOSUPPORT
        17 => uv::EXDEV,                                    // NOT_SAME_DEVICE
        19 => uv::EROFS,                                    // WRITE_PROTECT
        23 | 31 | 110 | 156 | 205 | 1101 | 1102 | 1103 | 1104 | 1106 | 1111 | 1117 | 1129 | 1165 | 1166 | 1393 => {
            uv::EIO
        } // CRC, GEN_FAILURE, OPEN_FAILED, SIGNAL_REFUSED, NO_SIGNAL_SENT, FILEMARK_DETECTED, BEGINNING_OF_MEDIA, SETMARK_DETECTED, NO_DATA_DETECTED, INVALID_BLOCK_LENGTH, BUS_RESET, IO_DEVICE, EOM_OVERFLOW, DEVICE_REQUIRES_CLEANING, DEVICE_DOOR_OPEN, DISK_CORRUPT
        32 | 33 | 231 => uv::EBUSY, // SHARING_VIOLATION, LOCK_VIOLATION, PIPE_BUSY
        39 | 82 | 112 | 277 | 1100 => uv::ENOSPC, // HANDLE_DISK_FULL, CANNOT_MAKE, DISK_FULL, EA_TABLE_FULL, END_OF_MEDIA
        50 => uv::ENOTSUP,                        // NOT_SUPPORTED
        64 | 10054 => uv::ECONNRESET,             // NETNAME_DELETED, WSAECONNRESET
        80 | 183 => uv::EEXIST,                   // FILE_EXISTS, ALREADY_EXISTS
        109 => uv::EOF,                           // BROKEN_PIPE
        111 | 206 => uv::ENAMETOOLONG,            // BUFFER_OVERFLOW, FILENAME_EXCED_RANGE
        121 | 10060 => uv::ETIMEDOUT,             // SEM_TIMEOUT, WSAETIMEDOUT
        145 => uv::ENOTEMPTY,                     // DIR_NOT_EMPTY
        193 => uv::EFTYPE,                        // BAD_EXE_FORMAT
        208 => uv::E2BIG,                         // META_EXPANSION_TOO_LONG
        230 | 233 | 10058 => uv::EPIPE,           // BAD_PIPE, PIPE_NOT_CONNECTED, WSAESHUTDOWN
        232 | 10035 => uv::EAGAIN,                // NO_DATA, WSAEWOULDBLOCK
        740 | 1920 | 10013 => uv::EACCES,         // ELEVATION_REQUIRED, CANT_ACCESS_FILE, WSAEACCES
        995 | 10004 => uv::ECANCELED,             // OPERATION_ABORTED, WSAEINTR
        998 | 10014 => uv::EFAULT,                // NOACCESS, WSAEFAULT
        1113 => uv::ECHARSET,                     // NO_UNICODE_TRANSLATION
        1225 | 10061 => uv::ECONNREFUSED,         // CONNECTION_REFUSED, WSAECONNREFUSED
        1227 | 10048 => uv::EADDRINUSE,           // ADDRESS_ALREADY_ASSOCIATED, WSAEADDRINUSE
        1231 | 10051 => uv::ENETUNREACH,          // NETWORK_UNREACHABLE, WSAENETUNREACH
        1232 | 10065 => uv::EHOSTUNREACH,         // HOST_UNREACHABLE, WSAEHOSTUNREACH
        1236 | 10053 => uv::ECONNABORTED,         // CONNECTION_ABORTED, WSAECONNABORTED
        1921 => uv::ELOOP,                        // CANT_RESOLVE_FILENAME
        2250 | 10057 => uv::ENOTCONN,             // NOT_CONNECTED, WSAENOTCONN
        10037 => uv::EALREADY,                    // WSAEALREADY
        10038 => uv::ENOTSOCK,                    // WSAENOTSOCK
        10040 => uv::EMSGSIZE,                    // WSAEMSGSIZE
        10043 => uv::EPROTONOSUPPORT,             // WSAEPROTONOSUPPORT
        10044 => uv::ESOCKTNOSUPPORT,             // WSAESOCKTNOSUPPORT
        10047 => uv::EAFNOSUPPORT,                // WSAEAFNOSUPPORT
        10049 => uv::EADDRNOTAVAIL,               // WSAEADDRNOTAVAIL
        10055 => uv::ENOBUFS,                     // WSAENOBUFS
        10056 => uv::EISCONN,                     // WSAEISCONN
        _ => uv::UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `copy_range` into a file (the kernel's copy on Linux) and into a pipe (which the
    /// kernel refuses, so the bytes go through the buffer), more than one chunk long.
    #[test]
    fn copy_range_copies_the_range() {
        let dir = std::env::temp_dir();
        let src = dir.join(format!("psn-copy-{}", uuid::Uuid::new_v4()));
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&src, &data).unwrap();
        let from = File::open(&src).unwrap();
        let (at, len) = (12_345u64, 2_500_000u64);
        let want = &data[at as usize..(at + len) as usize];
        let dst = dir.join(format!("psn-copy-{}", uuid::Uuid::new_v4()));
        let to = File::create(&dst).unwrap();
        io::Write::write_all(&mut &to, b"ab").unwrap();
        copy_range(&from, at, len, &to, &mut Vec::new()).unwrap();
        drop(to);
        let got = std::fs::read(&dst).unwrap();
        assert!(got[..2] == *b"ab" && got[2..] == *want, "file copy differs");
        #[cfg(unix)]
        {
            use std::os::fd::FromRawFd;
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors.
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
            // SAFETY: both descriptors were just opened and are owned here alone.
            let (mut r, w) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
            let reader = std::thread::spawn(move || {
                let mut got = Vec::new();
                io::Read::read_to_end(&mut r, &mut got).unwrap();
                got
            });
            copy_range(&from, at, len, &w, &mut Vec::new()).unwrap();
            drop(w);
            assert!(reader.join().unwrap() == *want, "pipe copy differs");
        }
        for f in [src, dst] {
            std::fs::remove_file(f).unwrap();
        }
    }

    /// Every entry of libuv's `uv_translate_sys_error`, as Node 22 bundles it: libuv 1.51.0
    /// (`process.versions.uv` of node.exe 22.23.3), `src/win/error.c`, in the file's order
    /// (the function is the same in 1.52.1, whose source this was read from). The Windows
    /// numbers are mingw-w64's `winerror.h` (ERROR_ELEVATION_REQUIRED, which it lacks, is
    /// Microsoft's 740); the libuv numbers `include/uv/errno.h`'s. ERROR_ACCESS_DENIED is EPERM
    /// on libuv's v1.x branch, which Node uses (only libuv's master maps it to EACCES).
    #[test]
    fn windows_errors_are_libuv_1_51_uv_translate_sys_error() {
        const UV_ERRNO_H: [(&str, i32); 44] = [
            ("E2BIG", -4093),
            ("EACCES", -4092),
            ("EADDRINUSE", -4091),
            ("EADDRNOTAVAIL", -4090),
            ("EAFNOSUPPORT", -4089),
            ("EAGAIN", -4088),
            ("EALREADY", -4084),
            ("EBADF", -4083),
            ("EBUSY", -4082),
            ("ECANCELED", -4081),
            ("ECHARSET", -4080),
            ("ECONNABORTED", -4079),
            ("ECONNREFUSED", -4078),
            ("ECONNRESET", -4077),
            ("EEXIST", -4075),
            ("EFAULT", -4074),
            ("EHOSTUNREACH", -4073),
            ("EINVAL", -4071),
            ("EIO", -4070),
            ("EISCONN", -4069),
            ("EISDIR", -4068),
            ("ELOOP", -4067),
            ("EMFILE", -4066),
            ("EMSGSIZE", -4065),
            ("ENAMETOOLONG", -4064),
            ("ENETUNREACH", -4062),
            ("ENOBUFS", -4060),
            ("ENOENT", -4058),
            ("ENOMEM", -4057),
            ("ENOSPC", -4055),
            ("ENOTCONN", -4053),
            ("ENOTEMPTY", -4051),
            ("ENOTSOCK", -4050),
            ("ENOTSUP", -4049),
            ("EPERM", -4048),
            ("EPIPE", -4047),
            ("EPROTONOSUPPORT", -4045),
            ("EROFS", -4043),
            ("ETIMEDOUT", -4039),
            ("EXDEV", -4037),
            ("EFTYPE", -4028),
            ("ESOCKTNOSUPPORT", -4025),
            ("EOF", -4095),
            ("UNKNOWN", -4094),
        ];
        let code = |name: &str| -UV_ERRNO_H.iter().find(|(n, _)| *n == name).unwrap().1;
        let table: [(i32, &str, &str); 100] = [
            (10013, "WSAEACCES", "EACCES"),
            (740, "ERROR_ELEVATION_REQUIRED", "EACCES"),
            (1920, "ERROR_CANT_ACCESS_FILE", "EACCES"),
            (1227, "ERROR_ADDRESS_ALREADY_ASSOCIATED", "EADDRINUSE"),
            (10048, "WSAEADDRINUSE", "EADDRINUSE"),
            (10049, "WSAEADDRNOTAVAIL", "EADDRNOTAVAIL"),
            (10047, "WSAEAFNOSUPPORT", "EAFNOSUPPORT"),
            (10035, "WSAEWOULDBLOCK", "EAGAIN"),
            (232, "ERROR_NO_DATA", "EAGAIN"),
            (10037, "WSAEALREADY", "EALREADY"),
            (1004, "ERROR_INVALID_FLAGS", "EBADF"),
            (6, "ERROR_INVALID_HANDLE", "EBADF"),
            (33, "ERROR_LOCK_VIOLATION", "EBUSY"),
            (231, "ERROR_PIPE_BUSY", "EBUSY"),
            (32, "ERROR_SHARING_VIOLATION", "EBUSY"),
            (995, "ERROR_OPERATION_ABORTED", "ECANCELED"),
            (10004, "WSAEINTR", "ECANCELED"),
            (1113, "ERROR_NO_UNICODE_TRANSLATION", "ECHARSET"),
            (1236, "ERROR_CONNECTION_ABORTED", "ECONNABORTED"),
            (10053, "WSAECONNABORTED", "ECONNABORTED"),
            (1225, "ERROR_CONNECTION_REFUSED", "ECONNREFUSED"),
            (10061, "WSAECONNREFUSED", "ECONNREFUSED"),
            (64, "ERROR_NETNAME_DELETED", "ECONNRESET"),
            (10054, "WSAECONNRESET", "ECONNRESET"),
            (183, "ERROR_ALREADY_EXISTS", "EEXIST"),
            (80, "ERROR_FILE_EXISTS", "EEXIST"),
            (998, "ERROR_NOACCESS", "EFAULT"),
            (10014, "WSAEFAULT", "EFAULT"),
            (1232, "ERROR_HOST_UNREACHABLE", "EHOSTUNREACH"),
            (10065, "WSAEHOSTUNREACH", "EHOSTUNREACH"),
            (122, "ERROR_INSUFFICIENT_BUFFER", "EINVAL"),
            (13, "ERROR_INVALID_DATA", "EINVAL"),
            (87, "ERROR_INVALID_PARAMETER", "EINVAL"),
            (1464, "ERROR_SYMLINK_NOT_SUPPORTED", "EINVAL"),
            (10022, "WSAEINVAL", "EINVAL"),
            (10046, "WSAEPFNOSUPPORT", "EINVAL"),
            (1102, "ERROR_BEGINNING_OF_MEDIA", "EIO"),
            (1111, "ERROR_BUS_RESET", "EIO"),
            (23, "ERROR_CRC", "EIO"),
            (1166, "ERROR_DEVICE_DOOR_OPEN", "EIO"),
            (1165, "ERROR_DEVICE_REQUIRES_CLEANING", "EIO"),
            (1393, "ERROR_DISK_CORRUPT", "EIO"),
            (1129, "ERROR_EOM_OVERFLOW", "EIO"),
            (1101, "ERROR_FILEMARK_DETECTED", "EIO"),
            (31, "ERROR_GEN_FAILURE", "EIO"),
            (1106, "ERROR_INVALID_BLOCK_LENGTH", "EIO"),
            (1117, "ERROR_IO_DEVICE", "EIO"),
            (1104, "ERROR_NO_DATA_DETECTED", "EIO"),
            (205, "ERROR_NO_SIGNAL_SENT", "EIO"),
            (110, "ERROR_OPEN_FAILED", "EIO"),
            (1103, "ERROR_SETMARK_DETECTED", "EIO"),
            (156, "ERROR_SIGNAL_REFUSED", "EIO"),
            (10056, "WSAEISCONN", "EISCONN"),
            (1921, "ERROR_CANT_RESOLVE_FILENAME", "ELOOP"),
            (4, "ERROR_TOO_MANY_OPEN_FILES", "EMFILE"),
            (10024, "WSAEMFILE", "EMFILE"),
            (10040, "WSAEMSGSIZE", "EMSGSIZE"),
            (111, "ERROR_BUFFER_OVERFLOW", "ENAMETOOLONG"),
            (206, "ERROR_FILENAME_EXCED_RANGE", "ENAMETOOLONG"),
            (1231, "ERROR_NETWORK_UNREACHABLE", "ENETUNREACH"),
            (10051, "WSAENETUNREACH", "ENETUNREACH"),
            (10055, "WSAENOBUFS", "ENOBUFS"),
            (161, "ERROR_BAD_PATHNAME", "ENOENT"),
            (267, "ERROR_DIRECTORY", "ENOENT"),
            (203, "ERROR_ENVVAR_NOT_FOUND", "ENOENT"),
            (2, "ERROR_FILE_NOT_FOUND", "ENOENT"),
            (123, "ERROR_INVALID_NAME", "ENOENT"),
            (15, "ERROR_INVALID_DRIVE", "ENOENT"),
            (4392, "ERROR_INVALID_REPARSE_DATA", "ENOENT"),
            (126, "ERROR_MOD_NOT_FOUND", "ENOENT"),
            (3, "ERROR_PATH_NOT_FOUND", "ENOENT"),
            (11001, "WSAHOST_NOT_FOUND", "ENOENT"),
            (11004, "WSANO_DATA", "ENOENT"),
            (8, "ERROR_NOT_ENOUGH_MEMORY", "ENOMEM"),
            (14, "ERROR_OUTOFMEMORY", "ENOMEM"),
            (82, "ERROR_CANNOT_MAKE", "ENOSPC"),
            (112, "ERROR_DISK_FULL", "ENOSPC"),
            (277, "ERROR_EA_TABLE_FULL", "ENOSPC"),
            (1100, "ERROR_END_OF_MEDIA", "ENOSPC"),
            (39, "ERROR_HANDLE_DISK_FULL", "ENOSPC"),
            (2250, "ERROR_NOT_CONNECTED", "ENOTCONN"),
            (10057, "WSAENOTCONN", "ENOTCONN"),
            (145, "ERROR_DIR_NOT_EMPTY", "ENOTEMPTY"),
            (10038, "WSAENOTSOCK", "ENOTSOCK"),
            (50, "ERROR_NOT_SUPPORTED", "ENOTSUP"),
            (109, "ERROR_BROKEN_PIPE", "EOF"),
            (5, "ERROR_ACCESS_DENIED", "EPERM"),
            (1314, "ERROR_PRIVILEGE_NOT_HELD", "EPERM"),
            (230, "ERROR_BAD_PIPE", "EPIPE"),
            (233, "ERROR_PIPE_NOT_CONNECTED", "EPIPE"),
            (10058, "WSAESHUTDOWN", "EPIPE"),
            (10043, "WSAEPROTONOSUPPORT", "EPROTONOSUPPORT"),
            (19, "ERROR_WRITE_PROTECT", "EROFS"),
            (121, "ERROR_SEM_TIMEOUT", "ETIMEDOUT"),
            (10060, "WSAETIMEDOUT", "ETIMEDOUT"),
            (17, "ERROR_NOT_SAME_DEVICE", "EXDEV"),
            (1, "ERROR_INVALID_FUNCTION", "EISDIR"),
            (208, "ERROR_META_EXPANSION_TOO_LONG", "E2BIG"),
            (10044, "WSAESOCKTNOSUPPORT", "ESOCKTNOSUPPORT"),
            (193, "ERROR_BAD_EXE_FORMAT", "EFTYPE"),
        ];
        for (win, win_name, uv_name) in table {
            assert_eq!(uv_errno(win), code(uv_name), "{win_name} ({win}) is {uv_name} in libuv 1.51.0");
        }
        // `default: return UV_UNKNOWN;`, and 0 is no error.
        for win in [7, 38, 1005, 999_999] {
            assert_eq!(uv_errno(win), code("UNKNOWN"), "{win} is not in libuv's table");
        }
        assert_eq!(uv_errno(0), 0);
        assert_eq!(RAW_EEXIST, if cfg!(windows) { 80 } else { 17 });
    }

    /// The errors libuv 1.51.0's `src/win/fs.c` words by the call (`fs__open`, `fs__read`,
    /// `fs__write` with `uv_translate_write_sys_error` from `src/win/error.c`).
    #[test]
    fn windows_errors_libuv_fs_words_by_call() {
        let creating = FsCall::Open { creating: true };
        let opening = FsCall::Open { creating: false };
        for (win, call, uv, why) in [
            (80, creating, 4068, "fs__open: ERROR_FILE_EXISTS with O_CREAT and without O_EXCL is EISDIR"),
            (80, opening, 4075, "ERROR_FILE_EXISTS of an exclusive create (wx) is EEXIST"),
            (5, opening, 4048, "ERROR_ACCESS_DENIED of an open is EPERM"),
            (5, creating, 4048, "ERROR_ACCESS_DENIED of a creating open is EPERM"),
            (5, FsCall::Other, 4048, "ERROR_ACCESS_DENIED of a rename is EPERM"),
            (5, FsCall::Write, 4083, "fs__write: ERROR_ACCESS_DENIED is ERROR_INVALID_FLAGS, EBADF"),
            (5, FsCall::Read, 4083, "fs__read: ERROR_ACCESS_DENIED is ERROR_INVALID_FLAGS, EBADF"),
            (1, FsCall::Read, 4068, "a read of a folder (ERROR_INVALID_FUNCTION) is EISDIR"),
            (109, FsCall::Write, 4047, "uv_translate_write_sys_error: ERROR_BROKEN_PIPE is EPIPE"),
            (232, FsCall::Write, 4047, "uv_translate_write_sys_error: ERROR_NO_DATA is EPIPE"),
            (232, FsCall::Read, 4088, "ERROR_NO_DATA elsewhere is EAGAIN"),
            (109, FsCall::Read, 4095, "ERROR_BROKEN_PIPE elsewhere is EOF"),
        ] {
            assert_eq!(uv_fs_errno(win, call), uv, "{why}");
        }
        assert_eq!(FsCall::of("open"), opening);
        assert_eq!(FsCall::of("write"), FsCall::Write);
        assert_eq!(FsCall::of("rename"), FsCall::Other);
    }
}
