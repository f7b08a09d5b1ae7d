//! The session file: load, header discovery, append and whole-file writes.
//!
//! Loading follows `loadEntriesFromFile`: only `\n` splits lines, invalid UTF-8 decodes to
//! U+FFFD (as `StringDecoder` does), blank and malformed lines are skipped, and a file whose
//! first parsed entry is not a header with a string id is "not a session" and is left untouched.
//!
//! Writing goes beyond the reference: appends that fail are truncated back so no torn line is
//! left, and whole-file writes go through a temp file, fsync and an atomic rename or link.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::entry::{EntryType, Skeleton};
use crate::error::{Error, Result};
use crate::json::{self, Kind};

/// One parsed line of a file: its skeleton and where its (UTF-8) text lives in `Text`.
#[derive(Clone, Debug)]
pub struct Line {
    pub sk: Skeleton,
    pub start: usize,
    pub len: usize,
}

/// The bytes of a loaded file, plus the U+FFFD-repaired copies of lines that were not UTF-8.
#[derive(Default, Debug)]
pub struct Text {
    pub buf: Vec<u8>,
}

impl Text {
    pub fn line(&self, l: &Line) -> &[u8] {
        &self.buf[l.start..l.start + l.len]
    }
}

/// Result of reading a file the way `loadEntriesFromFile` does.
#[derive(Debug)]
pub enum Loaded {
    /// The path does not exist.
    Missing,
    /// Exists, but holds no parsed entry or its first entry is not a session header.
    NotSession,
    /// `len`: the file's length after the newline repair.
    Session { text: Text, lines: Vec<Line>, len: u64 },
}

/// Reads and indexes a session file. Repairs a missing final newline of a valid session.
pub fn load(path: &Path) -> Result<Loaded> {
    if fs::symlink_metadata(path).is_err() && fs::metadata(path).is_err() {
        return Ok(Loaded::Missing);
    }
    let mut file = File::open(path).map_err(|e| Error::io(e, "open", Some(path)))?;
    let mut buf = Vec::new();
    file.read_to_end(&mut buf).map_err(|e| Error::io(e, "read", None))?;
    drop(file);
    let mut len = buf.len() as u64;
    let (text, lines, pending) = parse_lines(buf);
    match lines.first() {
        None => return Ok(Loaded::NotSession),
        Some(first) if !is_header(&first.sk) => return Ok(Loaded::NotSession),
        _ => {}
    }
    if pending {
        len = append_bytes(path, b"\n", false)?;
    }
    Ok(Loaded::Session { text, lines, len })
}

/// `header.type === "session" && typeof header.id === "string"`.
pub fn is_header(sk: &Skeleton) -> bool {
    sk.ty == EntryType::Session && sk.id.is_string()
}

/// Splits on `\n`, decodes, parses. Returns the text, the parsed lines, and whether bytes
/// follow the last newline (the reference then appends a newline). Large files are parsed
/// on two threads, split at a newline; the result is the same as one pass.
pub fn parse_lines(buf: Vec<u8>) -> (Text, Vec<Line>, bool) {
    parse_lines_from(buf, 4 << 20, 0)
}

/// `parse_lines` with object-id keys numbered from `unique_base`, so lines parsed later
/// (appends by other processes) never share a key with earlier ones.
pub fn parse_more_lines(buf: Vec<u8>, unique_base: u64) -> (Text, Vec<Line>) {
    let (text, lines, _) = parse_lines_from(buf, usize::MAX, unique_base);
    (text, lines)
}

fn parse_lines_from(buf: Vec<u8>, parallel_min: usize, unique_base: u64) -> (Text, Vec<Line>, bool) {
    let len = buf.len();
    let pending = len > 0 && buf[len - 1] != b'\n';
    let split = if len >= parallel_min { memchr::memchr(b'\n', &buf[len / 2..]).map(|i| len / 2 + i + 1) } else { None };
    let Some(mid) = split else {
        let (extra, lines) = parse_range(&buf, 0, len, unique_base);
        return (Text::with_extra(buf, extra), lines, pending);
    };
    let ((extra_a, mut lines_a), (extra_b, lines_b)) = std::thread::scope(|sc| {
        let second = sc.spawn(|| parse_range(&buf, mid, len, unique_base + (1 << 47)));
        let first = parse_range(&buf, 0, mid, unique_base);
        (first, second.join().unwrap_or_else(|_| (Vec::new(), Vec::new())))
    });
    // Lines repaired to U+FFFD live after the file bytes: first half's, then second half's.
    let base_a = len;
    let base_b = len + extra_a.len();
    for l in lines_a.iter_mut().filter(|l| l.start >= EXTRA_FLAG) {
        l.start = l.start - EXTRA_FLAG + base_a;
    }
    lines_a.extend(lines_b.into_iter().map(|mut l| {
        if l.start >= EXTRA_FLAG {
            l.start = l.start - EXTRA_FLAG + base_b;
        }
        l
    }));
    let mut extra = extra_a;
    extra.extend_from_slice(&extra_b);
    (Text::with_extra(buf, extra), lines_a, pending)
}

/// Marks a line start as an offset into the repaired-lines side buffer.
const EXTRA_FLAG: usize = 1 << 62;

impl Text {
    fn with_extra(mut buf: Vec<u8>, extra: Vec<u8>) -> Text {
        buf.extend_from_slice(&extra);
        Text { buf }
    }
}

/// Parses the lines in `buf[from..to]`. Invalid UTF-8 lines are repaired into a side
/// buffer (their `start` is `EXTRA_FLAG + offset` there, or a plain offset when the side
/// buffer is appended at `buf.len()` by a single-range parse).
fn parse_range(buf: &[u8], from: usize, to: usize, unique_base: u64) -> (Vec<u8>, Vec<Line>) {
    let mut extra = Vec::new();
    let mut lines = Vec::new();
    let mut unique = unique_base;
    let single = from == 0 && to == buf.len();
    let mut start = from;
    while start < to {
        let end = memchr::memchr(b'\n', &buf[start..to]).map_or(to, |i| start + i);
        add_line(buf, start, end, &mut extra, &mut lines, &mut unique, if single { buf.len() } else { EXTRA_FLAG });
        start = end + 1;
    }
    (extra, lines)
}

fn add_line(
    buf: &[u8],
    start: usize,
    end: usize,
    extra: &mut Vec<u8>,
    lines: &mut Vec<Line>,
    unique: &mut u64,
    extra_base: usize,
) {
    let raw = &buf[start..end];
    let (line, start) = match std::str::from_utf8(raw) {
        Ok(_) => (raw, start),
        Err(_) => {
            let fixed = String::from_utf8_lossy(raw).into_owned().into_bytes();
            let s = extra.len();
            extra.extend_from_slice(&fixed);
            (&extra[s..], extra_base + s)
        }
    };
    // `if (entry)`: malformed lines and null, false, 0 and "" are skipped.
    let Some(sk) = Skeleton::parse_line(line, unique) else { return };
    lines.push(Line { sk, start, len: line.len() });
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
    let mut file = File::open(path).map_err(|e| Error::io(e, "open", Some(path)))?;
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut chunk = vec![0u8; 16 * 1024];
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
        let name = if k.contains(&b'\\') { json::decode_string(k).ok() } else { std::str::from_utf8(k).ok().map(str::to_owned) };
        if name.as_deref() == Some(field) {
            out = Some((val.kind, String::from_utf8_lossy(val.text(line.as_bytes())).into_owned()));
        }
    });
    out
}

/// Appends bytes with one `write` on an `O_APPEND` descriptor. If the write fails part-way
/// (ENOSPC, EFBIG, EIO), the file is truncated back to its previous length, so the next
/// append never continues a torn line. Returns the file's length afterwards.
pub fn append_bytes(path: &Path, bytes: &[u8], sync: bool) -> Result<u64> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o666)
        .open(path)
        .map_err(|e| Error::io(e, "open", Some(path)))?;
    write_appending(&file, bytes, sync)
}

fn write_appending(mut file: &File, bytes: &[u8], sync: bool) -> Result<u64> {
    let before = file.metadata().map(|m| m.len()).ok();
    let result = file.write_all(bytes).and_then(|_| if sync { file.sync_data() } else { Ok(()) });
    if let Err(e) = result {
        if let Some(len) = before {
            let _ = file.set_len(len);
        }
        return Err(Error::io(e, "write", None));
    }
    Ok(file.metadata().map(|m| m.len()).unwrap_or(0))
}

/// A session file opened for one append under an exclusive advisory lock (`flock`), so
/// that cooperating writers (two pi processes on one session) never interleave and each
/// can first read what the other appended. Dropping it releases the lock.
pub struct LockedFile {
    file: File,
    /// Length when the lock was taken.
    pub len: u64,
}

impl LockedFile {
    pub fn open(path: &Path) -> std::io::Result<LockedFile> {
        let file = OpenOptions::new().read(true).append(true).create(true).mode(0o666).open(path)?;
        file.lock()?;
        let len = file.metadata()?.len();
        Ok(LockedFile { file, len })
    }

    /// The complete lines between `from` and the current end (a trailing partial line of a
    /// writer that does not lock is left for later).
    pub fn read_new(&self, from: u64) -> std::io::Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        if self.len <= from {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; (self.len - from) as usize];
        self.file.read_exact_at(&mut buf, from)?;
        let keep = memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1);
        buf.truncate(keep);
        Ok(buf)
    }

    /// Appends like `append_bytes`, through the locked descriptor.
    pub fn append(&self, bytes: &[u8], sync: bool) -> Result<u64> {
        write_appending(&self.file, bytes, sync)
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

/// Writes a whole file atomically: a temp file beside it, fsync, then rename (Replace)
/// or link (Exclusive, which keeps the EEXIST check). Readers see the old file or the
/// new one, never a mix; a crash leaves at most a stray temp file.
pub fn write_file(path: &Path, parts: &[&[u8]], mode: WriteMode) -> Result<()> {
    if mode == WriteMode::Exclusive && fs::symlink_metadata(path).is_ok() {
        return Err(eexist(path));
    }
    let tmp = temp_path(path);
    let write = || -> std::io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).mode(0o666).open(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut f);
        for p in parts {
            w.write_all(p)?;
        }
        w.flush()?;
        drop(w);
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&tmp);
        // Report it as the reference would: on the target path.
        return Err(Error::io(e, "open", Some(path)));
    }
    let done = match mode {
        WriteMode::Replace => fs::rename(&tmp, path),
        WriteMode::Exclusive => fs::hard_link(&tmp, path),
    };
    let _ = if mode == WriteMode::Exclusive { fs::remove_file(&tmp) } else { Ok(()) };
    match done {
        Ok(()) => {
            sync_dir(path);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let _ = fs::remove_file(&tmp);
            Err(eexist(path))
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            if mode == WriteMode::Exclusive {
                // Filesystems without hard links: fall back to an exclusive create.
                return write_direct_exclusive(path, parts);
            }
            Err(Error::io(e, "rename", Some(path)))
        }
    }
}

fn write_direct_exclusive(path: &Path, parts: &[&[u8]]) -> Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(path)
        .map_err(|e| Error::io(e, "open", Some(path)))?;
    for p in parts {
        f.write_all(p).map_err(|e| Error::io(e, "write", None))?;
    }
    Ok(())
}

fn eexist(path: &Path) -> Error {
    Error::io(std::io::Error::from_raw_os_error(17), "open", Some(path))
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    path.with_file_name(format!(".{name}.{}.tmp", &nonce[..12]))
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

    fn tmpdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("psn-store-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn load_skips_malformed_and_repairs_tail() {
        let d = tmpdir();
        let p = d.join("a.jsonl");
        fs::write(&p, b"{\"type\":\"session\",\"id\":\"s\"}\n\nnot json\nnull\n{\"type\":\"message\",\"id\":\"a\"}").unwrap();
        let Loaded::Session { lines, .. } = load(&p).unwrap() else { panic!() };
        assert_eq!(lines.len(), 2);
        assert!(fs::read(&p).unwrap().ends_with(b"}\n"));
    }

    #[test]
    fn non_session_is_untouched() {
        let d = tmpdir();
        let p = d.join("b.jsonl");
        fs::write(&p, b"{\"type\":\"message\",\"id\":\"a\"}").unwrap();
        assert!(matches!(load(&p).unwrap(), Loaded::NotSession));
        assert_eq!(fs::read(&p).unwrap(), b"{\"type\":\"message\",\"id\":\"a\"}");
        assert!(matches!(load(&d.join("none")).unwrap(), Loaded::Missing));
    }

    #[test]
    fn invalid_utf8_becomes_replacement() {
        let (text, lines, _) = parse_lines(b"{\"type\":\"session\",\"id\":\"s\",\"x\":\"\xff\"}\n".to_vec());
        assert_eq!(text.line(&lines[0]), "{\"type\":\"session\",\"id\":\"s\",\"x\":\"\u{fffd}\"}".as_bytes());
    }

    #[test]
    fn parallel_parse_equals_sequential() {
        let mut buf = Vec::new();
        for i in 0..200 {
            buf.extend_from_slice(format!("{{\"type\":\"message\",\"id\":{{\"o\":{i}}},\"x\":\"").as_bytes());
            if i % 7 == 0 {
                buf.extend_from_slice(b"\xff\xfe");
            }
            buf.extend_from_slice(b"\"}\nnot json\n");
        }
        buf.extend_from_slice(b"{\"tail\":1}");
        let (ta, la, pa) = parse_lines_from(buf.clone(), usize::MAX, 0);
        let (tb, lb, pb) = parse_lines_from(buf, 1, 0);
        assert_eq!(pa, pb);
        assert_eq!(la.len(), lb.len());
        let mut ids = std::collections::HashSet::new();
        for (a, b) in la.iter().zip(&lb) {
            assert_eq!(ta.line(a), tb.line(b));
            assert!(ids.insert(b.sk.id.clone()), "object ids stay distinct across threads");
        }
    }

    #[test]
    fn header_scan() {
        let d = tmpdir();
        let p = d.join("c.jsonl");
        fs::write(&p, b"\ngarbage\n{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/x\"}").unwrap();
        let HeaderScan::Header(h) = read_header(&p).unwrap() else { panic!() };
        assert_eq!(header_field_raw(&h, "cwd"), Some((Kind::String, "\"/x\"".into())));
        let big = d.join("d.jsonl");
        fs::write(&big, vec![b'x'; MAX_HEADER_SCAN_BYTES + 1]).unwrap();
        assert!(matches!(read_header(&big).unwrap(), HeaderScan::LimitExceeded));
    }

    #[test]
    fn locked_append_sees_other_writers() {
        let d = tmpdir();
        let p = d.join("f.jsonl");
        fs::write(&p, b"{\"a\":1}\n").unwrap();
        let known = 8;
        append_bytes(&p, b"{\"b\":2}\n{\"par", false).unwrap();
        let lf = LockedFile::open(&p).unwrap();
        assert_eq!(lf.read_new(known).unwrap(), b"{\"b\":2}\n");
        // A second locker waits: try_lock on another descriptor fails while held.
        let other = OpenOptions::new().read(true).open(&p).unwrap();
        assert!(other.try_lock().is_err());
        drop(lf);
        assert!(other.try_lock().is_ok());
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
