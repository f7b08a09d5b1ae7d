//! The session file: load, append and whole-file writes (its header scan is `header`'s).
//!
//! Loading follows `loadEntriesFromFile`: only `\n` splits lines, invalid UTF-8 decodes to
//! U+FFFD (as `StringDecoder` does), blank and malformed lines are skipped, and a file whose
//! first parsed entry is not a header with a string id is "not a session" and is left untouched.
//!
//! Writing (`write`) goes beyond the reference: appends that fail are truncated back so no torn line is
//! left, and whole-file writes go through a temp file, fsync and an atomic rename or link.

use std::fs::{self, File};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::entry::Skeleton;
use crate::model::header::is_header;
use crate::storage::blocks::Blocks;
use crate::storage::lines::{LineStore, Span};
use crate::storage::platform::{self, Mapping};

mod write;
pub use write::{AppendHandle, Appended, WriteMode, append_bytes, replace_with, write_file, write_file_with};

/// One parsed line: its skeleton and its byte range (in the parsed slice, or in the side
/// buffer of U+FFFD-repaired lines when `start >= EXTRA_FLAG`).
#[derive(Clone, Debug)]
struct Line {
    sk: Skeleton,
    start: usize,
    len: usize,
    /// The long plain string values of a file-backed line (`json::collect_plain`).
    plain: Vec<(u32, u32)>,
}

/// Result of reading a file the way `loadEntriesFromFile` does.
#[derive(Debug)]
pub enum Loaded {
    /// The path does not exist.
    Missing,
    /// Exists, but holds no parsed entry or its first entry is not a session header.
    NotSession,
    /// The parsed entries; `len` is the file's length after the newline repair.
    Session { skeletons: Vec<Skeleton>, store: LineStore, len: u64 },
}

/// Files at least this large keep their lines on disk (read back on demand).
pub const FILE_BACKED_MIN: u64 = 1 << 20;
/// Read size of the streaming load.
const CHUNK: usize = 8 << 20;
/// Chunks at least this large are parsed on two threads.
const PARALLEL_MIN: usize = 2 << 20;

/// Reads and indexes a session file in bounded memory. Repairs a missing final newline of
/// a valid session (as the reference does).
pub fn load(path: &Path) -> Result<Loaded> {
    if fs::symlink_metadata(path).is_err() && fs::metadata(path).is_err() {
        return Ok(Loaded::Missing);
    }
    let file = platform::open_read(path).map_err(|e| Error::io(e, "open", Some(path)))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    // A large file keeps its lines out of memory, in a private snapshot of its bytes (no
    // other process can change them: see `platform::snapshot`); where none can be made, it
    // is read into memory, as the reference reads it.
    let (snap, arriving) = match size >= FILE_BACKED_MIN {
        true => snapshot_of(&file, path, size).map_or((None, None), |(s, a)| (Some(s), a)),
        false => (None, None),
    };
    // Where none can be made, a large file is read into memory once, and served from there
    // as a snapshot's mapping is (its lines and its long strings: no second copy).
    let memory = match &snap {
        None if size >= FILE_BACKED_MIN => {
            Some(std::sync::Arc::new(Mapping::in_memory(read_prefix(&file, size, path)?)))
        }
        _ => None,
    };
    let file_backed = snap.is_some() || memory.is_some();
    let mut parsed = Parsed::new(file_backed);
    // The end of the last complete line, and the last line if it has no newline.
    let mut complete = 0u64;
    let mut tail: Option<(u64, Vec<u8>)> = None;
    let mut take = |off: u64, block: &[u8]| {
        if block.ends_with(b"\n") {
            parsed.add(block, off);
            complete = off + block.len() as u64;
        } else {
            tail = Some((off, block.to_vec()));
        }
    };
    // A snapshot is read through its mapping where there is one (no copy into a buffer:
    // `read` spent as long copying 2.6 GB as the scan spent reading it), which the strings
    // that stay in it then keep (`LineStore::set_mapped_file`). The scan reads the
    // snapshot, so what is parsed is exactly what later reads find.
    let map = snap.as_ref().and_then(|s| Mapping::new(&s.file, s.len)).map(std::sync::Arc::new);
    let lines_file = if let Some(map) = map.as_ref().or(memory.as_ref()) {
        for_each_mapped_block(map, CHUNK, arriving.as_ref(), &mut take).map_err(|e| Error::io(e, "read", None))?;
        snap.map(|s| s.file)
    } else {
        // No mapping: the copy is read once it is whole.
        let snap = match (snap, &arriving) {
            (Some(mut s), Some(a)) => {
                s.len = a.wait(u64::MAX).map_err(|e| Error::io(e, "read", None))?.0;
                Some(s)
            }
            (snap, _) => snap,
        };
        let (reader, len) = match &snap {
            Some(s) => (s.file.try_clone(), s.len),
            None => (file.try_clone(), size),
        };
        let mut reader = reader.map_err(|e| Error::io(e, "open", Some(path)))?;
        // From the start (a failed snapshot may have read part of the session).
        reader.seek(std::io::SeekFrom::Start(0)).map_err(|e| Error::io(e, "read", None))?;
        // Sized to the file, so a small one takes one read; each block is parsed where it lies.
        let mut blocks = Blocks::new(reader, CHUNK, (len as usize).saturating_add(1).min(CHUNK));
        while let Some((off, block)) = blocks.next_block().map_err(|e| Error::io(e, "read", None))? {
            take(off, block);
        }
        snap.map(|_| blocks.into_file())
    };
    // A last line without its newline was torn by a crash, or another process is writing
    // it right now (a reader can see part of a write in progress). If the file grew since
    // it was read, a writer is live: its line is left out (a later append of ours picks it
    // up whole) and the file is not touched; otherwise the line is repaired as the
    // reference repairs it, with a newline.
    let torn = match &tail {
        Some((off, line)) => !file.metadata().is_ok_and(|m| m.len() > off + line.len() as u64),
        None => false,
    };
    if let (true, Some((off, line))) = (torn, &tail) {
        parsed.add(line, *off);
    }
    match parsed.skeletons.first() {
        None => return Ok(Loaded::NotSession),
        Some(first) if !is_header(first) => return Ok(Loaded::NotSession),
        _ => {}
    }
    let len = if torn { append_bytes(path, b"\n", false)? } else { complete };
    let Parsed { skeletons, mut store, .. } = parsed;
    store.shrink_to_fit();
    if let Some(lines_file) = lines_file {
        store.set_mapped_file(lines_file, map);
    } else if let Some(memory) = memory {
        store.set_memory_file(memory);
    }
    Ok(Loaded::Session { skeletons, store, len })
}

/// The first `size` bytes of `file` (fewer if it is shorter by now), from its start.
fn read_prefix(file: &File, size: u64, path: &Path) -> Result<Vec<u8>> {
    let mut reader = file.try_clone().map_err(|e| Error::io(e, "open", Some(path)))?;
    reader.seek(std::io::SeekFrom::Start(0)).map_err(|e| Error::io(e, "read", None))?;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    std::io::Read::read_to_end(&mut std::io::Read::take(reader, size), &mut bytes)
        .map_err(|e| Error::io(e, "read", None))?;
    Ok(bytes)
}

/// A private snapshot of the session file's first `size` bytes, with its copy still arriving
/// (`platform::snapshot_streaming`), or `None` (traced once) when none can be made.
fn snapshot_of(file: &File, path: &Path, size: u64) -> Option<(platform::Snapshot, Option<platform::Arriving>)> {
    #[cfg(test)]
    if tests::NO_SNAPSHOT.with(std::cell::Cell::get) {
        return None;
    }
    match platform::snapshot_streaming(file, path, size) {
        Ok(snap) => Some(snap),
        Err(e) => {
            platform::trace_once("snapshot", &|| {
                format!("no private snapshot of a large session ({e}): it is read into memory")
            });
            None
        }
    }
}

/// The mapped file as blocks of whole lines of about `chunk` bytes (the last may lack its
/// newline), each handed to `f` with its offset, then dropped from the process (its pages
/// stay in the page cache). Where its bytes are still `arriving`, each block waits for its
/// own, and the file ends where the copy ended.
fn for_each_mapped_block(
    map: &Mapping,
    chunk: usize,
    arriving: Option<&platform::Arriving>,
    f: &mut dyn FnMut(u64, &[u8]),
) -> std::io::Result<()> {
    let mut have = |want: usize| -> std::io::Result<(usize, bool)> {
        let Some(a) = arriving else { return Ok((map.len(), true)) };
        let (copied, ended) = a.wait(want as u64)?;
        Ok((usize::try_from(copied).unwrap_or(usize::MAX).min(map.len()), ended))
    };
    blocks_as_they_arrive(map, chunk, &mut have, f)
}

/// `for_each_mapped_block`'s walk; `have(want)` gives the bytes there are so far (at least
/// `want`, unless that is all) and whether that is all.
fn blocks_as_they_arrive(
    map: &Mapping,
    chunk: usize,
    have: &mut dyn FnMut(usize) -> std::io::Result<(usize, bool)>,
    f: &mut dyn FnMut(u64, &[u8]),
) -> std::io::Result<()> {
    let (mut len, mut all) = have(0)?;
    let mut off = 0;
    loop {
        let window = off + chunk;
        // Until the window and a byte past it are there, or the copy has ended.
        while window >= len && !all {
            (len, all) = have(window + 1)?;
        }
        if off >= len {
            break;
        }
        let end = if window >= len {
            len
        } else {
            // The end of the line that crosses the window's end, waiting for it as it arrives.
            let mut from = window;
            loop {
                let found = match map.bytes(from, len - from) {
                    Some(bytes) => memchr::memchr(b'\n', bytes),
                    None if from == len => None,
                    None => return Ok(()),
                };
                if let Some(i) = found {
                    break from + i + 1;
                }
                if all {
                    break len;
                }
                from = len;
                (len, all) = have(len + chunk)?;
            }
        };
        let Some(block) = map.bytes(off, end - off) else { return Ok(()) };
        f(off as u64, block);
        map.release(off, end);
        off = end;
    }
    Ok(())
}

/// The new file a caller names (`fork`, `branch::write_branch`) and its header line (with
/// its newline); `None` to stop.
pub type NewFile = Option<(PathBuf, Vec<u8>)>;

/// `forkFrom`'s copy of a session file, made by `fork`.
pub enum Forked {
    Missing,
    NotSession,
    /// The source is a session, and `prepare` declined to go on (the caller knows why).
    Stopped,
    /// The copy at `path`, indexed as `load` would index it (`len` bytes).
    Written {
        path: PathBuf,
        skeletons: Vec<Skeleton>,
        store: LineStore,
        len: u64,
    },
}

/// Read size of `fork`'s scan for the first entry (kept small: those bytes are read once
/// more when the copy is written only where hard links are missing).
const FORK_FIRST_READ: usize = 64 << 10;

/// `forkFrom`'s copy in one read of the source: the source is read as `loadEntriesFromFile`
/// reads it (missing, not a session, the newline repair of a torn last line: before
/// anything else is written), then `prepare()` names the new file and gives its header
/// line (it runs the caller's steps between the load and the write, and returns `None` to
/// stop), then every parsed non-header entry of the source is written after the header as
/// `JSON.stringify(JSON.parse(line))`: canonical lines as they are, the others re-serialised
/// here (`json::stringify_parsed`). The new file is written atomically with `wx` semantics,
/// and indexed on the way (its lines stay in it when it is large, as after `load`).
pub fn fork(source: &Path, prepare: &mut dyn FnMut() -> NewFile) -> Result<Forked> {
    use std::io::{Read, SeekFrom};
    if fs::symlink_metadata(source).is_err() && fs::metadata(source).is_err() {
        return Ok(Forked::Missing);
    }
    let mut file = platform::open_read(source).map_err(|e| Error::io(e, "open", Some(source)))?;
    let read_err = |e| Error::io(e, "read", None);
    // The first parsed entry decides: read until it is complete.
    let mut buf = Vec::new();
    let mut unique = 1u64 << 40;
    let mut scanned = 0;
    let mut eof = false;
    let header_end = loop {
        if let Some(nl) = memchr::memchr(b'\n', &buf[scanned..]) {
            let line = &buf[scanned..scanned + nl];
            scanned += nl + 1;
            match parse_line_lossy(line, &mut unique) {
                Some((sk, _)) if is_header(&sk) => break scanned,
                Some(_) => return Ok(Forked::NotSession),
                None => continue,
            }
        }
        if eof {
            // A last line without its newline.
            return match parse_line_lossy(&buf[scanned..], &mut unique) {
                Some((sk, _)) if is_header(&sk) => break buf.len(),
                _ => Ok(Forked::NotSession),
            };
        }
        let at = buf.len();
        buf.resize(at + FORK_FIRST_READ, 0);
        let n = read_full(&mut file, &mut buf[at..]).map_err(read_err)?;
        buf.truncate(at + n);
        eof = n == 0;
    };
    // The reference's repair, before the caller's steps: a newline after a torn last line.
    let size = file.metadata().map_err(|e| Error::io(e, "fstat", None))?.len();
    let torn = size > 0 && {
        let mut last = [0u8];
        let mut probe = platform::open_read(source).map_err(|e| Error::io(e, "open", Some(source)))?;
        probe.seek(SeekFrom::Start(size - 1)).and_then(|_| probe.read_exact(&mut last)).map_err(read_err)?;
        last[0] != b'\n'
    };
    if torn {
        append_bytes(source, b"\n", false)?;
    }
    let Some((path, header)) = prepare() else { return Ok(Forked::Stopped) };
    let Some(header_sk) = header.strip_suffix(b"\n").and_then(|h| Skeleton::parse_line(h, &mut unique)) else {
        return Err(Error::Msg("fork: the new header is not one JSON line".into()));
    };
    let mut after = Some(buf.split_off(header_end.min(buf.len())));
    let mut copy = IndexedCopy::new(&path);
    let len = write_file_with(&path, WriteMode::Exclusive, &mut |f| {
        copy = IndexedCopy::new(&path);
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        copy.line(&mut w, &header[..header.len() - 1], Some(header_sk.clone()))?;
        // What was read already, then the rest (read again from the header's end only when
        // the file has to be written a second time).
        let mut pending = match after.take() {
            Some(bytes) => bytes,
            None => {
                file.seek(SeekFrom::Start(header_end as u64))?;
                Vec::new()
            }
        };
        let mut chunk = vec![0u8; CHUNK];
        loop {
            let mut start = 0;
            while let Some(nl) = memchr::memchr(b'\n', &pending[start..]) {
                copy.entry(&mut w, &pending[start..start + nl], &mut unique)?;
                start += nl + 1;
            }
            pending.drain(..start);
            let n = read_full(&mut file, &mut chunk)?;
            if n == 0 {
                break;
            }
            pending.extend_from_slice(&chunk[..n]);
        }
        // A torn last line that grew after the repair (a live writer): as the reference's
        // final `pending`.
        copy.entry(&mut w, &pending, &mut unique)?;
        w.flush()
    })?;
    let (skeletons, store) = copy.finish(&path)?;
    Ok(Forked::Written { path, skeletons, store, len })
}

/// A new session file being written (`fork`, `branch::write_branch`), indexed as it goes.
#[derive(Default)]
pub struct IndexedCopy {
    skeletons: Vec<Skeleton>,
    store: LineStore,
    off: u64,
    /// The bytes written, while the copy is smaller than `FILE_BACKED_MIN`.
    small: Option<Vec<u8>>,
    /// Where the copy goes (its snapshot goes to the same file system).
    path: PathBuf,
    /// Once the copy is large: a private snapshot of it, written as it is (its lines are
    /// read from there later, and the file at `path` is not read again).
    snap: Option<std::io::BufWriter<File>>,
}

impl IndexedCopy {
    /// A copy to be written at `path`.
    pub fn new(path: &Path) -> IndexedCopy {
        IndexedCopy { path: path.to_owned(), ..IndexedCopy::default() }
    }

    /// The skeletons and lines of the file written at `path`: a small file keeps its lines
    /// in memory, as `load` keeps a small file's; a large one reads them back from the file.
    pub fn finish(self, path: &Path) -> Result<(Vec<Skeleton>, LineStore)> {
        let IndexedCopy { skeletons, mut store, small, snap, .. } = self;
        if let Some(small) = small {
            let mut mem = LineStore::new();
            for p in 0..store.len() as u32 {
                let Span::File { off, len } = store.span(p) else { continue };
                let span = mem.keep(&small[off as usize..(off + len) as usize]);
                mem.push(span);
            }
            store = mem;
        } else if let Some(snap) = snap.and_then(|w| w.into_inner().ok()) {
            store.set_file(snap);
        } else {
            // Its lines are read later from a private snapshot (the file at `path` is
            // anyone's to change), or now into memory where none can be made.
            let file = platform::open_read(path).map_err(|e| Error::io(e, "open", Some(path)))?;
            let len = file.metadata().map_err(|e| Error::io(e, "fstat", None))?.len();
            match snapshot_of(&file, path, len) {
                Some((snap, arriving)) => {
                    // Its lines are read from the copy once it is whole.
                    if let Some(a) = arriving {
                        a.wait(u64::MAX).map_err(|e| Error::io(e, "read", None))?;
                    }
                    store.set_file(snap.file)
                }
                None => {
                    store.set_file(file);
                    store.into_memory().map_err(|e| Error::io(e, "read", None))?;
                }
            }
        }
        Ok((skeletons, store))
    }

    /// Writes one line of the copy (with its newline) and indexes it.
    pub fn line(&mut self, w: &mut impl Write, line: &[u8], sk: Option<Skeleton>) -> std::io::Result<()> {
        let Some(sk) = sk else { return Ok(()) };
        if self.off == 0 {
            self.small = Some(Vec::new());
        }
        w.write_all(line)?;
        w.write_all(b"\n")?;
        self.store.push(Span::File { off: self.off, len: line.len() as u64 });
        self.skeletons.push(sk);
        self.off += line.len() as u64 + 1;
        if let Some(small) = &mut self.small {
            small.extend_from_slice(line);
            small.push(b'\n');
            if small.len() as u64 >= FILE_BACKED_MIN {
                let bytes = self.small.take().unwrap_or_default();
                self.snap = platform::snapshot_file(&self.path).ok().and_then(|f| {
                    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
                    w.write_all(&bytes).ok().map(|()| w)
                });
            }
        } else if let Some(snap) = &mut self.snap {
            // A snapshot that fails (ENOSPC) is dropped: `finish` makes one, or reads the
            // lines into memory.
            if snap.write_all(line).and_then(|()| snap.write_all(b"\n")).is_err() {
                self.snap = None;
            }
        }
        Ok(())
    }

    /// A source line: written as `JSON.stringify(JSON.parse(line))` if it parses to an
    /// entry that is not a header (as the reference's loop writes it).
    fn entry(&mut self, w: &mut impl Write, raw: &[u8], unique: &mut u64) -> std::io::Result<()> {
        let Some((sk, line)) = parse_line_lossy(raw, unique) else { return Ok(()) };
        if sk.ty == crate::model::entry::EntryType::Session {
            return Ok(());
        }
        if crate::storage::json::canonical_members(&line, |_, _, _| {}) {
            return self.line(w, &line, Some(sk));
        }
        let text = crate::storage::json::stringify_parsed(&line)
            .ok_or_else(|| std::io::Error::other("a parsed line did not parse"))?;
        self.line(w, &text, Some(sk))
    }
}

/// A line as the loader reads it: invalid UTF-8 decoded to U+FFFD, skipped (`None`) when
/// blank, malformed or falsy; its skeleton and (repaired) text.
fn parse_line_lossy<'a>(raw: &'a [u8], unique: &mut u64) -> Option<(Skeleton, std::borrow::Cow<'a, [u8]>)> {
    let line: std::borrow::Cow<[u8]> = match simdutf8::basic::from_utf8(raw) {
        Ok(_) => raw.into(),
        Err(_) => String::from_utf8_lossy(raw).into_owned().into_bytes().into(),
    };
    let sk = Skeleton::parse_line(&line, unique)?;
    Some((sk, line))
}

/// Reads until `buf` is full or the file ends; the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match std::io::Read::read(file, &mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Skeletons and line locations accumulated over the chunks of a file or text.
pub struct Parsed {
    pub skeletons: Vec<Skeleton>,
    pub store: LineStore,
    file_backed: bool,
    batches: u64,
}

impl Parsed {
    /// `file_backed`: lines stay in the file (their spans are file offsets); otherwise
    /// they are copied into memory.
    pub fn new(file_backed: bool) -> Parsed {
        Parsed { skeletons: Vec::new(), store: LineStore::new(), file_backed, batches: 0 }
    }

    /// Parses the lines of `work` (complete lines, the last one may lack its newline),
    /// which starts at offset `base` of the file.
    pub fn add(&mut self, work: &[u8], base: u64) {
        self.batches += 1;
        let unique_base = self.batches << 40;
        let split = if work.len() >= PARALLEL_MIN {
            memchr::memchr(b'\n', &work[work.len() / 2..]).map(|i| work.len() / 2 + i + 1)
        } else {
            None
        };
        let parts = match split {
            None => vec![parse_range(work, unique_base, self.file_backed)],
            Some(mid) => std::thread::scope(|sc| {
                let second = sc.spawn(|| parse_range(&work[mid..], unique_base + (1 << 39), self.file_backed));
                let first = parse_range(&work[..mid], unique_base, self.file_backed);
                let mut second = second.join().unwrap_or_default();
                for l in second.1.iter_mut().filter(|l| l.start < EXTRA_FLAG) {
                    l.start += mid;
                }
                vec![first, second]
            }),
        };
        for (extra, lines) in parts {
            for l in lines {
                let span = if l.start >= EXTRA_FLAG {
                    let s = l.start - EXTRA_FLAG;
                    self.store.keep(&extra[s..s + l.len])
                } else if self.file_backed {
                    if !l.plain.is_empty() {
                        self.store.add_plain(self.store.len() as u32, l.plain);
                    }
                    Span::File { off: base + l.start as u64, len: l.len as u64 }
                } else {
                    self.store.keep(&work[l.start..l.start + l.len])
                };
                self.store.push(span);
                self.skeletons.push(l.sk);
            }
        }
    }
}

/// Parses text held in memory (lines written by the facade, or read from other writers).
pub fn parse_text(text: &[u8], batch: u64) -> Parsed {
    let mut p = Parsed::new(false);
    p.batches = batch << 8;
    p.add(text, 0);
    p
}

/// Marks a line start as an offset into the repaired-lines side buffer.
const EXTRA_FLAG: usize = 1 << 62;

/// Parses the lines of `buf`. Invalid UTF-8 lines are repaired into a side buffer (their
/// `start` is `EXTRA_FLAG + offset` there). `file_backed`: also finds the long plain
/// strings of the lines that stay in the file.
fn parse_range(buf: &[u8], unique_base: u64, file_backed: bool) -> (Vec<u8>, Vec<Line>) {
    let mut extra = Vec::new();
    let mut lines = Vec::new();
    let mut unique = unique_base;
    let mut start = 0;
    while start < buf.len() {
        let end = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |i| start + i);
        let raw = &buf[start..end];
        // SIMD validation (std's is several times slower on non-ASCII text).
        let (line, at) = match simdutf8::basic::from_utf8(raw) {
            Ok(_) => (raw, start),
            Err(_) => {
                let fixed = String::from_utf8_lossy(raw).into_owned().into_bytes();
                let s = extra.len();
                extra.extend_from_slice(&fixed);
                (&extra[s..], EXTRA_FLAG + s)
            }
        };
        // `if (entry)`: malformed lines and null, false, 0 and "" are skipped.
        // The long plain strings of a line that stays in the file are found by its scan.
        let (sk, plain) = if file_backed && at < EXTRA_FLAG && line.len() >= crate::storage::limits::MAPPED_MIN {
            let (sk, plain) = crate::storage::json::collect_plain(|| Skeleton::parse_line(line, &mut unique));
            // Only an object's values (a bare string line is not spliced).
            let object = line.get(crate::storage::json::skip_whitespace(line, 0)) == Some(&b'{');
            (sk, if object { plain } else { Vec::new() })
        } else {
            (Skeleton::parse_line(line, &mut unique), Vec::new())
        };
        if let Some(sk) = sk {
            lines.push(Line { sk, start: at, len: line.len(), plain });
        }
        start = end + 1;
    }
    (extra, lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::header::{HeaderScan, MAX_HEADER_SCAN_BYTES, header_field_raw, read_header};
    use crate::storage::json::Kind;

    fn tmpdir() -> crate::testutil::TempPath {
        crate::testutil::TempPath::dir("store")
    }

    fn load_lines(p: &Path) -> Vec<String> {
        let Loaded::Session { skeletons, store, .. } = load(p).unwrap() else { panic!("not a session") };
        let all: Vec<u32> = (0..skeletons.len() as u32).collect();
        let mut out = Vec::new();
        store.for_each(&all, |_, l| out.push(String::from_utf8(l.unwrap().to_vec()).unwrap())).unwrap();
        out
    }

    #[test]
    fn load_skips_malformed_and_repairs_tail() {
        let d = tmpdir();
        let p = d.join("a.jsonl");
        fs::write(&p, b"{\"type\":\"session\",\"id\":\"s\"}\n\nnot json\nnull\n{\"type\":\"message\",\"id\":\"a\"}")
            .unwrap();
        assert_eq!(load_lines(&p).len(), 2);
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
        let d = tmpdir();
        let p = d.join("u.jsonl");
        fs::write(&p, b"{\"type\":\"session\",\"id\":\"s\",\"x\":\"\xff\"}\n").unwrap();
        assert_eq!(load_lines(&p), vec!["{\"type\":\"session\",\"id\":\"s\",\"x\":\"\u{fffd}\"}".to_string()]);
    }

    #[test]
    fn large_files_stream_in_chunks_and_match_a_single_pass() {
        // > CHUNK bytes with lines straddling chunk borders, repaired lines on both
        // threads' halves, a long line, and object ids that must stay distinct.
        let d = tmpdir();
        let p = d.join("big.jsonl");
        let mut buf = b"{\"type\":\"session\",\"id\":\"s\"}\n".to_vec();
        let mut expected = vec![String::from("{\"type\":\"session\",\"id\":\"s\"}")];
        let mut i = 0;
        while buf.len() < CHUNK * 2 + 12345 {
            let pad = "y".repeat((i * 7919) % 3000 + if i % 997 == 0 { 300_000 } else { 0 });
            let bad = i % 13 == 0;
            let line = format!(
                "{{\"type\":\"message\",\"id\":{{\"o\":{i}}},\"x\":\"{pad}{}\"}}",
                if bad { "\u{fffd}" } else { "" }
            );
            let raw = if bad { line.replace('\u{fffd}', "\u{0}").into_bytes() } else { line.clone().into_bytes() };
            let raw: Vec<u8> = raw.into_iter().map(|b| if b == 0 { 0xff } else { b }).collect();
            buf.extend_from_slice(&raw);
            buf.extend_from_slice(b"\nnot json\n");
            expected.push(line);
            i += 1;
        }
        fs::write(&p, &buf).unwrap();
        let Loaded::Session { skeletons, .. } = load(&p).unwrap() else { panic!() };
        let ids: std::collections::HashSet<_> = skeletons.iter().map(|s| s.id.clone()).collect();
        assert_eq!(ids.len(), skeletons.len(), "object ids stay distinct across chunks and threads");
        assert_eq!(load_lines(&p), expected);
    }

    /// The blocks `for_each_mapped_block` gives over a snapshot whose copy arrives `step` bytes
    /// at a time, asking `asked` bytes of a file of `bytes`.
    #[cfg(target_os = "linux")]
    fn blocks_while_arriving(bytes: &[u8], asked: u64, chunk: usize, step: u64) -> Vec<(u64, Vec<u8>)> {
        let d = tmpdir();
        let p = d.join("arriving.jsonl");
        fs::write(&p, bytes).unwrap();
        let source = File::open(&p).unwrap();
        let (snap, arriving) = platform::streaming_in_steps(&source, &p, asked, step).unwrap();
        let map = Mapping::new(&snap.file, snap.len).unwrap();
        let mut got = Vec::new();
        for_each_mapped_block(&map, chunk, arriving.as_ref(), &mut |off, b| got.push((off, b.to_vec()))).unwrap();
        got
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_scan_behind_the_copy_gives_whole_lines_and_every_byte() {
        let bytes = lines_around_the_sizes();
        for (chunk, step) in [(64 << 10, 1000), (64 << 10, 64 << 10), (1 << 20, 4096), (8 << 20, 4 << 20)] {
            let got = blocks_while_arriving(&bytes, bytes.len() as u64, chunk, step);
            assert_whole_lines(&got, &bytes, &format!("chunk {chunk}, step {step}"));
        }
        // A source shorter than the length asked (truncated since its length was read): the
        // scan ends where the copy ended, never in the zeros after it.
        let got = blocks_while_arriving(&bytes, bytes.len() as u64 + (1 << 20), 64 << 10, 5000);
        let whole: Vec<u8> = got.iter().flat_map(|(_, b)| b.iter().copied()).collect();
        assert_eq!(whole, bytes);
    }

    #[test]
    #[cfg(unix)]
    fn the_scan_waits_for_each_line_to_arrive_whole() {
        // The slowest copy there can be: `have` gives exactly the bytes asked for, or whole
        // steps of them, never more, and says the end only when asked past it.
        let bytes = lines_around_the_sizes();
        let d = tmpdir();
        let p = d.join("slow.jsonl");
        fs::write(&p, &bytes).unwrap();
        let map = Mapping::new(&File::open(&p).unwrap(), bytes.len() as u64).unwrap();
        for (chunk, step) in [(64 << 10, 1), (64 << 10, 1000), (64 << 10, 64 << 10), (1 << 20, 1 << 20), (4096, 4096)] {
            let mut have = |want: usize| {
                let copied = want.div_ceil(step) * step;
                Ok((copied.min(bytes.len()), copied >= bytes.len()))
            };
            let mut got = Vec::new();
            blocks_as_they_arrive(&map, chunk, &mut have, &mut |off, b| got.push((off, b.to_vec()))).unwrap();
            assert_whole_lines(&got, &bytes, &format!("chunk {chunk}, step {step}"));
        }
    }

    /// Lines of every length around the window and step sizes, some longer than both, and a
    /// torn last line.
    fn lines_around_the_sizes() -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut i = 0usize;
        while bytes.len() < 3_000_000 {
            let n = (i * 7919) % 9000 + if i.is_multiple_of(97) { 150_000 } else { 0 };
            bytes.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, n));
            bytes.push(b'\n');
            i += 1;
        }
        bytes.extend_from_slice(b"a torn last line");
        bytes
    }

    /// Blocks that follow each other, each ending at a line's end but the last, with every
    /// byte of `bytes` once, in order.
    fn assert_whole_lines(got: &[(u64, Vec<u8>)], bytes: &[u8], what: &str) {
        let mut at = 0u64;
        for (i, (off, block)) in got.iter().enumerate() {
            assert_eq!(*off, at, "blocks follow each other ({what})");
            assert!(i + 1 == got.len() || block.ends_with(b"\n"), "a block ends at a line's end ({what})");
            at += block.len() as u64;
        }
        let whole: Vec<u8> = got.iter().flat_map(|(_, b)| b.iter().copied()).collect();
        assert!(whole == bytes, "every byte, once, in order ({what})");
    }

    thread_local! {
        /// Makes `load` on this thread take the path where no snapshot can be made.
        pub static NO_SNAPSHOT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    #[test]
    fn lines_of_a_large_file_are_the_bytes_loaded_whatever_happens_to_it() {
        large_file_keeps_its_bytes(false);
    }

    #[test]
    fn without_a_snapshot_a_large_file_is_read_into_memory_and_keeps_its_bytes() {
        NO_SNAPSHOT.with(|c| c.set(true));
        large_file_keeps_its_bytes(true);
    }

    #[test]
    fn a_large_fork_reads_its_lines_from_a_snapshot_of_what_it_wrote() {
        // The new file is anyone's to change once written: its lines read later are the
        // ones written, whatever happens to it.
        let d = tmpdir();
        let src = d.join("src.jsonl");
        let mut buf = b"{\"type\":\"session\",\"id\":\"s\"}\n".to_vec();
        for i in 0..40 {
            let text = "x".repeat(100_000);
            buf.extend_from_slice(format!("{{\"type\":\"message\",\"id\":\"m{i}\",\"t\":\"{text}{i}\"}}\n").as_bytes());
        }
        fs::write(&src, &buf).unwrap();
        let dest = d.join("fork.jsonl");
        let header = b"{\"type\":\"session\",\"id\":\"f\"}\n".to_vec();
        let Forked::Written { skeletons, store, .. } =
            fork(&src, &mut || Some((dest.clone(), header.clone()))).unwrap()
        else {
            panic!("not written")
        };
        let expected: Vec<String> = fs::read_to_string(&dest).unwrap().lines().map(str::to_owned).collect();
        assert_eq!(expected.len(), 41);
        fs::write(&dest, vec![b'Z'; 10]).unwrap();
        let all: Vec<u32> = (0..skeletons.len() as u32).collect();
        let mut got = Vec::new();
        store.for_each(&all, |_, l| got.push(String::from_utf8(l.unwrap().to_vec()).unwrap())).unwrap();
        assert_eq!(got, expected);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_session_let_go_keeps_only_the_bytes_strings_hold() {
        // The session's store is dropped (replaced, or collected) while one string lives:
        // the snapshot gives back everything but that string's bytes, which stay intact.
        let d = tmpdir();
        let p = d.join("held.jsonl");
        let mut buf = b"{\"type\":\"session\",\"id\":\"s\"}\n".to_vec();
        for i in 0..8 {
            let image = format!("{i}").repeat(1 << 20);
            buf.extend_from_slice(
                format!("{{\"type\":\"message\",\"id\":\"m{i}\",\"data\":\"{image}\"}}\n").as_bytes(),
            );
        }
        fs::write(&p, &buf).unwrap();
        let Loaded::Session { skeletons, store, .. } = load(&p).unwrap() else { panic!() };
        let all: Vec<u32> = (0..skeletons.len() as u32).collect();
        let piece = store.joined_spliced(&all).unwrap();
        let map = piece.map.clone().unwrap();
        let Some(before) = map.allocated() else { return };
        assert!(before >= 8 << 20, "the snapshot holds the session: {before}");
        let (at, units) = piece.ex.mapped[3];
        let (at, units) = (at as usize, units as usize);
        assert!(map.hold(at, units));
        drop(piece);
        drop(store);
        let after = map.allocated().unwrap();
        assert!(after <= (1 << 20) + (64 << 10), "only the held string's bytes stay: {after}");
        assert!(map.bytes(at, units).unwrap().iter().all(|&b| b == b'3'), "the held string is intact");
        assert!(!map.hold(0, 10), "nothing new is held once the session let go");
        map.unhold(at, units);
        assert!(map.allocated().unwrap() <= 64 << 10);
    }

    /// A file-backed session (>= FILE_BACKED_MIN) with a long plain string per line (mapped
    /// where the system maps, or in memory): truncated, rewritten in place, then deleted
    /// after the load, its lines and strings read back as they were loaded.
    fn large_file_keeps_its_bytes(in_memory: bool) {
        let d = tmpdir();
        let p = d.join("big.jsonl");
        let mut buf = b"{\"type\":\"session\",\"id\":\"s\"}\n".to_vec();
        let mut i = 0;
        while (buf.len() as u64) < 3 * FILE_BACKED_MIN {
            let image = "ABCD".repeat(40_000 + i);
            buf.extend_from_slice(
                format!("{{\"type\":\"message\",\"id\":\"m{i}\",\"data\":\"{image}\"}}\n").as_bytes(),
            );
            i += 1;
        }
        fs::write(&p, &buf).unwrap();
        let expected = load_lines(&p);
        let Loaded::Session { skeletons, store, .. } = load(&p).unwrap() else { panic!() };
        let all: Vec<u32> = (0..skeletons.len() as u32).collect();
        let mapped: Vec<(u64, u32)> = all
            .iter()
            .filter_map(|&pos| {
                let Span::File { off, .. } = store.span(pos) else { return None };
                store.mapped_strings(pos).map(|s| (off + u64::from(s[0].0) + 1, s[0].1 - s[0].0 - 2))
            })
            .collect();
        fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(buf.len() as u64 / 3).unwrap();
        fs::write(&p, vec![b'Z'; buf.len()]).unwrap();
        fs::remove_file(&p).unwrap();
        let mut got = Vec::new();
        store.for_each(&all, |_, l| got.push(String::from_utf8(l.unwrap().to_vec()).unwrap())).unwrap();
        assert_eq!(got, expected);
        let piece = store.joined_spliced(&all).unwrap();
        for &(at, units) in &piece.ex.mapped {
            let bytes = piece.map.as_ref().unwrap().bytes(at as usize, units as usize).unwrap();
            assert!(bytes.iter().all(|b| b"ABCD".contains(b)), "a mapped string changed");
        }
        if in_memory || (cfg!(unix) && std::env::var_os("PI_SESSION_NATIVE_COPY_STRINGS").is_none()) {
            assert_eq!(mapped.len(), skeletons.len() - 1, "every image stays in the snapshot or memory");
            assert_eq!(piece.ex.mapped.len(), mapped.len());
        }
        assert_eq!(store.is_in_memory(), in_memory || !crate::storage::platform::SNAPSHOTS);
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
}
