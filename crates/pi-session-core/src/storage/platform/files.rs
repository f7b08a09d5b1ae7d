//! File primitives: opening as Node's `fs` does, identity and state stamps, positioned reads
//! and copies, the append lock; the Win32 calls behind them on Windows (`win`).

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

/// Opens a file for appends as `appendFileSync` (`"a"`) does, creating it (when `create`), and for reads too
/// when `read` (an append handle reads back what other processes appended) and the system
/// allows it: where read access is refused (a file that grants writes only), it opens for
/// appends alone, as Node does. On Windows with libuv's `fs__open` parameters for `"a"`: the
/// append right without the write-data right, sharing read, write and delete (the file can be
/// deleted or renamed over while it is open), OPEN_ALWAYS, and FILE_FLAG_BACKUP_SEMANTICS, so a
/// folder opens and the write fails (EBADF), where Node's fails.
pub fn open_append(path: &std::path::Path, read: bool, create: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    default_mode(options.read(read).append(true).create(create));
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

    pub(super) fn of_state(state: FileState) -> FileStamp {
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

    /// `ReplaceFileW(to, from, backup)`: `from` takes `to`'s place, and `to` becomes `backup`.
    #[cfg(test)]
    pub fn replace_file(to: &std::path::Path, from: &std::path::Path, backup: &std::path::Path) -> io::Result<()> {
        use std::os::windows::ffi::OsStrExt;
        let wide = |p: &std::path::Path| p.as_os_str().encode_wide().chain(Some(0)).collect::<Vec<u16>>();
        let (to, from, backup) = (wide(to), wide(from), wide(backup));
        // SAFETY: three NUL-terminated UTF-16 paths that outlive the call; no reserved pointers.
        let ok = unsafe {
            ReplaceFileW(to.as_ptr(), from.as_ptr(), backup.as_ptr(), 0, std::ptr::null_mut(), std::ptr::null_mut())
        };
        if ok == 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    #[link(name = "kernel32")]
    unsafe extern "system" {
        #[cfg(test)]
        fn ReplaceFileW(
            to: *const u16,
            from: *const u16,
            backup: *const u16,
            flags: u32,
            exclude: *mut c_void,
            reserved: *mut c_void,
        ) -> i32;
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

/// What a tool that saves with a backup does (Windows' `ReplaceFileW`, elsewhere a hard link
/// then a rename): `from` takes `path`'s place, and the old `path` becomes `backup`. For the
/// tests of what other programs do to an open session.
#[cfg(test)]
pub fn replace_keeping_backup(
    path: &std::path::Path,
    from: &std::path::Path,
    backup: &std::path::Path,
) -> io::Result<()> {
    #[cfg(windows)]
    {
        win::replace_file(path, from, backup)
    }
    #[cfg(not(windows))]
    {
        std::fs::hard_link(path, backup)?;
        std::fs::rename(from, path)
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

/// Whether a deleted file can stay at its path while it is open (Windows, where a delete waits
/// for the last handle to close unless the system deletes with POSIX semantics). On Unix the
/// path is free at once.
pub const DELETE_MAY_PEND: bool = cfg!(windows);
