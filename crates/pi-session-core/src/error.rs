//! Errors of the core. I/O errors keep the errno, the syscall and the path, so the
//! facade can rebuild the exact message Node's `fs` would have thrown
//! (`ENOENT: no such file or directory, open '/x'`).

use std::fmt;
use std::io;
use std::path::Path;

use crate::storage::platform::FsCall;

#[derive(Debug)]
pub enum Error {
    /// A failed system call, as Node reports it: `errno` is Node's (`platform::node_errno`).
    Io { errno: i32, syscall: &'static str, path: Option<String>, message: String },
    /// A parent chain that loops: the reference walks it forever; we stop.
    Cycle { id: String },
    /// Any other failure, with a message for the user.
    Msg(String),
}

impl Error {
    pub fn io(err: io::Error, syscall: &'static str, path: Option<&Path>) -> Error {
        Error::io_as(err, syscall, path, FsCall::of(syscall))
    }

    /// Whether this is the "file already exists" of an exclusive create (`openSync(p, "wx")`).
    pub fn is_exists(&self) -> bool {
        let exists = io::Error::from_raw_os_error(crate::storage::platform::RAW_EEXIST);
        matches!(self, Error::Io { errno, .. } if *errno == crate::storage::platform::node_errno(&exists, FsCall::of("open")))
    }

    /// A failed open that creates without `O_EXCL` (`"a"`, `"w"`): on Windows libuv words one
    /// of its errors apart (`platform::FsCall`).
    pub fn io_creating(err: io::Error, path: &Path) -> Error {
        Error::io_as(err, "open", Some(path), FsCall::Open { creating: true })
    }

    fn io_as(err: io::Error, syscall: &'static str, path: Option<&Path>, call: FsCall) -> Error {
        Error::Io {
            errno: crate::storage::platform::node_errno(&err, call),
            syscall,
            path: path.map(|p| p.to_string_lossy().into_owned()),
            message: err.to_string(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { syscall, path: Some(p), message, .. } => write!(f, "{message}, {syscall} '{p}'"),
            Error::Io { syscall, path: None, message, .. } => write!(f, "{message}, {syscall}"),
            Error::Cycle { id } => write!(f, "Session tree has a cycle in its parent chain at entry {id}"),
            Error::Msg(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
