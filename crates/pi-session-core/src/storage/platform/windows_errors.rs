//! The `errno` Node's `fs` reports for a failed call: the OS errno on Unix, libuv's
//! translation of the Windows error on Windows (docs/windows-errors.md).

use std::io;

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
/// The raw OS error that Node reports as EIO (Windows: ERROR_IO_DEVICE): what a failpoint fails with.
#[cfg(feature = "failpoints")]
pub const RAW_EIO: i32 = if cfg!(windows) { 1117 } else { 5 };

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
