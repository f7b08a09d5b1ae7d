//! Whole-file operations of the facade: `loadEntriesFromFile`, header discovery, the
//! migration backup, and writing a session's lines as a new file (`forkFrom`).

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::ffi::guard;
use crate::native_session::NativeSession;
use pi_session_core::Error as CoreError;
use pi_session_core::header::HeaderScan;
use pi_session_core::session::{Opened, Session};

/// `loadEntriesFromFile`: the entries' lines, one per line, as ASCII (see
/// `Session::all_lines_ascii`); null when the file is missing or not a session (the
/// reference returns `[]`).
#[napi]
pub fn load_entries_ascii(path: String) -> Result<Option<Buffer>> {
    guard(|| match Session::open(Path::new(&path))? {
        Opened::Session(s) => Ok(Some(s.all_lines_ascii()?.into())),
        Opened::Missing | Opened::NotSession => Ok(None),
    })
}

/// What the bounded header scan of a file found.
#[napi(string_enum = "camelCase")]
pub enum HeaderKind {
    /// The first parsed line is a header (`line`).
    Header,
    /// The first parsed line is not a session header.
    NotHeader,
    /// No complete line within the scan limit: a full load decides.
    LimitExceeded,
}

#[napi(object)]
pub struct HeaderRead {
    pub kind: HeaderKind,
    pub line: Option<String>,
}

/// `readSessionHeader`: the bounded scan for a file's header line.
#[napi]
pub fn read_header(path: String) -> Result<HeaderRead> {
    guard(|| {
        Ok(match pi_session_core::listing::read_header_cached(Path::new(&path))? {
            HeaderScan::Header(line) => HeaderRead { kind: HeaderKind::Header, line: Some(line) },
            HeaderScan::NotHeader => HeaderRead { kind: HeaderKind::NotHeader, line: None },
            HeaderScan::LimitExceeded => HeaderRead { kind: HeaderKind::LimitExceeded, line: None },
        })
    })
}

/// `open`'s read of a session file: the file loaded (see `NativeSession.load`) and, when it
/// is a session, its header line, in one read.
#[napi(ts_return_type = "[NativeSession, string | null]")]
pub fn open_session(path: String) -> Result<(NativeSession, Option<String>)> {
    let native = NativeSession::load(path)?;
    let header = guard(|| native.session().store().line(0).map_err(|e| CoreError::io(e, "read", None)))?;
    let header =
        header.filter(|_| !native.session().tree().is_empty()).map(|l| String::from_utf8_lossy(&l).into_owned());
    Ok((native, header))
}

/// `forkFrom`: the session at `source` copied after the header line `prepare()` gives, to
/// the file it names (`[file, headerLine]`), in one read of the source (see
/// `Session::fork`). `prepare` runs the reference's steps between its load and its write
/// (it may throw; its exception is this call's). Null when the source is missing or not a
/// session.
#[napi(ts_args_type = "source: string, prepare: () => [string, string]")]
pub fn fork_session(source: String, prepare: Function<(), (String, String)>) -> Result<Option<NativeSession>> {
    let mut thrown = None;
    let forked = guard(|| {
        Session::fork(Path::new(&source), &mut || match prepare.call(()) {
            Ok((file, header)) => Some((file.into(), header.into_bytes())),
            Err(e) => {
                thrown = Some(e);
                None
            }
        })
    });
    if let Some(e) = thrown {
        return Err(e);
    }
    Ok(forked?.map(NativeSession::opened))
}

/// Copies a session file to a backup path before a migration rewrite.
#[napi]
pub fn backup_file(from: String, to: String) -> Result<()> {
    guard(|| std::fs::copy(&from, &to).map(|_| ()).map_err(|e| CoreError::io(e, "copyfile", Some(Path::new(&to)))))
}
