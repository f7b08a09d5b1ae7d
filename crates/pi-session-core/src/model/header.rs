//! The session header: the first parsed entry of a session file, found by a bounded scan
//! (`readSessionHeader`), and its fields.
//!
//! Below `store` (which loads whole files) and `listing` (which takes the header from the
//! same first read as a file's `SessionInfo`, and keeps it in the listing index).

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};
use crate::model::entry::{EntryType, Skeleton};
use crate::storage::json::{self, Kind};
use crate::storage::platform;

/// `header.type === "session" && typeof header.id === "string"`.
pub fn is_header(sk: &Skeleton) -> bool {
    sk.ty == EntryType::Session && sk.id.is_string()
}

/// What the bounded header scan (`readSessionHeader`) found.
#[derive(Debug)]
pub enum HeaderScan {
    /// The first parsed entry is a header; its raw line.
    Header(String),
    /// The first parsed entry is not a header, or nothing parsed.
    NotHeader,
    /// No entry was found within the first 1 MiB.
    LimitExceeded,
}

pub const MAX_HEADER_SCAN_BYTES: usize = 1024 * 1024;

/// Reads at most 1 MiB (plus a one-byte EOF probe) looking for the first parsed entry,
/// in small chunks so that discovery over many files reads little of each.
pub fn read_header(path: &Path) -> Result<HeaderScan> {
    read_header_of(platform::open_read(path).map_err(|e| Error::io(e, "open", Some(path)))?)
}

/// `read_header` of a file opened already.
pub fn read_header_of(mut file: std::fs::File) -> Result<HeaderScan> {
    let mut buf: Vec<u8> = Vec::with_capacity(4 * 1024);
    let mut chunk = vec![0u8; 4 * 1024];
    let mut line_start = 0;
    let mut eof = false;
    while buf.len() < MAX_HEADER_SCAN_BYTES {
        let want = chunk.len().min(MAX_HEADER_SCAN_BYTES - buf.len());
        let n = file.read(&mut chunk[..want]).map_err(|e| Error::io(e, "read", None))?;
        if n == 0 {
            eof = true;
            break;
        }
        let scan_from = buf.len();
        buf.extend_from_slice(&chunk[..n]);
        let mut from = scan_from;
        while let Some(i) = memchr::memchr(b'\n', &buf[from..]) {
            let end = from + i;
            if let Some(found) = header_candidate(&buf[line_start..end]) {
                return Ok(found);
            }
            line_start = end + 1;
            from = line_start;
        }
    }
    if !eof {
        let mut probe = [0u8; 1];
        if file.read(&mut probe).map_err(|e| Error::io(e, "read", None))? != 0 {
            return Ok(HeaderScan::LimitExceeded);
        }
    }
    Ok(header_candidate(&buf[line_start..]).unwrap_or(HeaderScan::NotHeader))
}

/// `read_header` of a file whose first `min(len, MAX_HEADER_SCAN_BYTES)` bytes are `prefix`
/// (`more`: the file is longer than that), for a caller that read them anyway (the listing).
pub fn header_in(prefix: &[u8], more: bool) -> HeaderScan {
    let prefix = &prefix[..prefix.len().min(MAX_HEADER_SCAN_BYTES)];
    let mut line_start = 0;
    while let Some(i) = memchr::memchr(b'\n', &prefix[line_start..]) {
        let end = line_start + i;
        if let Some(found) = header_candidate(&prefix[line_start..end]) {
            return found;
        }
        line_start = end + 1;
    }
    if more {
        return HeaderScan::LimitExceeded;
    }
    header_candidate(&prefix[line_start..]).unwrap_or(HeaderScan::NotHeader)
}

/// `parseSessionHeaderCandidate`: `None` to keep scanning.
fn header_candidate(raw: &[u8]) -> Option<HeaderScan> {
    let line = String::from_utf8_lossy(raw);
    let v = json::parse_document(line.as_bytes())?;
    if !v.truthy(line.as_bytes()) {
        return None;
    }
    let sk = Skeleton::from_value(line.as_bytes(), v, &mut 0);
    Some(if is_header(&sk) { HeaderScan::Header(line.into_owned()) } else { HeaderScan::NotHeader })
}

/// The `cwd` of a header line when it is a string (`getSessionHeaderCwd`), as raw JSON text.
pub fn header_field_raw(line: &str, field: &str) -> Option<(Kind, String)> {
    let v = json::parse_document(line.as_bytes())?;
    if v.kind != Kind::Object {
        return None;
    }
    let mut out = None;
    json::for_each_member(line.as_bytes(), v, |k, val| {
        let name = if k.contains(&b'\\') {
            json::decode_string(k).ok()
        } else {
            std::str::from_utf8(k).ok().map(str::to_owned)
        };
        if name.as_deref() == Some(field) {
            out = Some((val.kind, String::from_utf8_lossy(val.text(line.as_bytes())).into_owned()));
        }
    });
    out
}
