//! The session file: load, append and whole-file writes (its header scan is `header`'s).
//!
//! Loading follows `loadEntriesFromFile`: only `\n` splits lines, invalid UTF-8 decodes to
//! U+FFFD (as `StringDecoder` does), blank and malformed lines are skipped, and a file whose
//! first parsed entry is not a header with a string id is "not a session" and is left untouched.
//!
//! Writing goes beyond the reference: appends that fail are truncated back so no torn line is
//! left, and whole-file writes go through a temp file, fsync and an atomic rename or link.

use std::fs::{self, File};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use crate::blocks::Blocks;
use crate::entry::Skeleton;
use crate::error::{Error, Result};
use crate::header::is_header;
use crate::lines::{LineStore, Span};
use crate::platform::{self, Mapping};

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
    let file_backed = size >= FILE_BACKED_MIN;
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
    // A large file is read through a mapping where there is one (no copy into a buffer:
    // `read` spent as long copying 2.6 GB as the scan spent reading it), which the strings
    // that stay in the file then keep (`LineStore::set_mapped_file`).
    let map = if file_backed { Mapping::new(&file, size).map(std::sync::Arc::new) } else { None };
    let file = if let Some(map) = &map {
        for_each_mapped_block(map, CHUNK, &mut take);
        file
    } else {
        // Sized to the file, so a small one takes one read; each block is parsed where it lies.
        let mut blocks = Blocks::new(file, CHUNK, (size as usize).saturating_add(1).min(CHUNK));
        while let Some((off, block)) = blocks.next_block().map_err(|e| Error::io(e, "read", None))? {
            take(off, block);
        }
        blocks.into_file()
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
    if file_backed {
        store.set_mapped_file(file, map);
    }
    Ok(Loaded::Session { skeletons, store, len })
}

/// The mapped file as blocks of whole lines of about `chunk` bytes (the last may lack its
/// newline), each handed to `f` with its offset, then dropped from the process (its pages
/// stay in the page cache).
fn for_each_mapped_block(map: &Mapping, chunk: usize, f: &mut dyn FnMut(u64, &[u8])) {
    let len = map.len();
    let Some(bytes) = map.bytes(0, len) else { return };
    let mut off = 0;
    while off < len {
        let window = (off + chunk).min(len);
        let end = if window == len {
            len
        } else {
            // The end of the line that crosses the window's end.
            memchr::memchr(b'\n', &bytes[window..]).map_or(len, |i| window + i + 1)
        };
        f(off as u64, &bytes[off..end]);
        map.release(off, end);
        off = end;
    }
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
    let mut copy = IndexedCopy::default();
    let len = write_file_with(&path, WriteMode::Exclusive, &mut |f| {
        copy = IndexedCopy::default();
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
}

impl IndexedCopy {
    /// The skeletons and lines of the file written at `path`: a small file keeps its lines
    /// in memory, as `load` keeps a small file's; a large one reads them back from the file.
    pub fn finish(self, path: &Path) -> Result<(Vec<Skeleton>, LineStore)> {
        let IndexedCopy { skeletons, mut store, small, .. } = self;
        if let Some(small) = small {
            let mut mem = LineStore::new();
            for p in 0..store.len() as u32 {
                let Span::File { off, len } = store.span(p) else { continue };
                let span = mem.keep(&small[off as usize..(off + len) as usize]);
                mem.push(span);
            }
            store = mem;
        } else {
            store.set_file(platform::open_read(path).map_err(|e| Error::io(e, "open", Some(path)))?);
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
                self.small = None;
            }
        }
        Ok(())
    }

    /// A source line: written as `JSON.stringify(JSON.parse(line))` if it parses to an
    /// entry that is not a header (as the reference's loop writes it).
    fn entry(&mut self, w: &mut impl Write, raw: &[u8], unique: &mut u64) -> std::io::Result<()> {
        let Some((sk, line)) = parse_line_lossy(raw, unique) else { return Ok(()) };
        if sk.ty == crate::entry::EntryType::Session {
            return Ok(());
        }
        if crate::json::canonical_members(&line, |_, _, _| {}) {
            return self.line(w, &line, Some(sk));
        }
        let text =
            crate::json::stringify_parsed(&line).ok_or_else(|| std::io::Error::other("a parsed line did not parse"))?;
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
        let (sk, plain) = if file_backed && at < EXTRA_FLAG && line.len() >= crate::splice::MAPPED_MIN {
            let (sk, plain) = crate::json::collect_plain(|| Skeleton::parse_line(line, &mut unique));
            // Only an object's values (a bare string line is not spliced).
            let object = line.get(crate::json::skip_whitespace(line, 0)) == Some(&b'{');
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

/// Appends bytes with one `write` on an `O_APPEND` descriptor. If the write fails part-way
/// (ENOSPC, EFBIG, EIO), the file is truncated back to its previous length, so the next
/// append never continues a torn line. Returns the file's length afterwards.
pub fn append_bytes(path: &Path, bytes: &[u8], sync: bool) -> Result<u64> {
    let file = platform::open_append(path, false).map_err(|e| Error::io_creating(e, path))?;
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

/// A session file kept open for appends.
///
/// Each append is one `write` on an `O_APPEND` descriptor, as the reference's
/// `appendFileSync` is: the kernel puts it whole at the end of the file, whatever other
/// writers do at the same moment (on a local file system, concurrent writes to one file
/// never interleave their bytes). An `fstat` afterwards tells whether the file was unlinked
/// or replaced meanwhile, and where the line landed.
pub struct AppendHandle {
    path: PathBuf,
    file: File,
    /// Device and inode, where the platform has them.
    id: Option<(u64, u64)>,
}

/// Where an append landed.
#[derive(Debug, PartialEq, Eq)]
pub enum Appended {
    /// The bytes are at `start..end`; `len` is the file's length just after the write (more
    /// than `end` when another writer appended right after).
    At { start: u64, end: u64, len: u64 },
    /// The file was unlinked or replaced (a rename over its path) before the write: the
    /// bytes went to the old file. Open the path again and repeat the append.
    Replaced,
}

impl AppendHandle {
    /// Opens (creating, like `appendFileSync`) `path` for appends and reads.
    pub fn open(path: &Path) -> std::io::Result<AppendHandle> {
        let file = platform::open_append(path, true)?;
        let id = platform::file_id(&file);
        Ok(AppendHandle { path: path.to_path_buf(), file, id })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Device and inode of the open file, where the platform has them.
    pub fn id(&self) -> Option<(u64, u64)> {
        self.id
    }

    /// The complete lines in `from..to` (a trailing partial line, one another writer is
    /// still writing, is left for later).
    pub fn read_new(&self, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
        if to <= from {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; (to - from) as usize];
        platform::read_exact_at(&self.file, &mut buf, from)?;
        let keep = memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1);
        buf.truncate(keep);
        Ok(buf)
    }

    /// Appends `bytes` with one `write`. `expected` is where the caller believes the file
    /// ends (its own last read or write): when the length after the write confirms it, no
    /// further call is needed to know where the bytes landed. A write that fails part-way
    /// (ENOSPC, EFBIG, EIO) is truncated back while nothing follows it, so the next append
    /// never continues a torn line, and the error is returned.
    pub fn append(&mut self, bytes: &[u8], expected: Option<u64>, sync: bool) -> Result<Appended> {
        let _lock = platform::AppendLock::take(&self.file);
        let first = loop {
            match (&self.file).write(bytes) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r,
            }
        };
        let n = first.map_err(|e| Error::io(e, "write", None))?;
        let total = bytes.len() as u64;
        let start = if n == bytes.len() {
            None
        } else {
            // A short write: find where it began, then finish it or roll it back.
            let start = platform::append_position(&self.file).map_err(|e| Error::io(e, "write", None))? - n as u64;
            if let Err(e) = (&self.file).write_all(&bytes[n..]) {
                self.truncate_if_last(start, start + n as u64);
                return Err(Error::io(e, "write", None));
            }
            Some(start)
        };
        if sync && let Err(e) = self.file.sync_data() {
            return Err(Error::io(e, "write", None));
        }
        let meta = self.file.metadata().map_err(|e| Error::io(e, "write", None))?;
        if platform::is_unlinked(&self.file, &meta) {
            return Ok(Appended::Replaced);
        }
        let len = meta.len();
        let start = match (start, expected) {
            (Some(s), _) => s,
            (None, Some(e)) if e + total == len => e,
            // Another writer appended before or after us: ask where ours ended.
            _ => platform::append_position(&self.file).map_err(|e| Error::io(e, "write", None))? - total,
        };
        Ok(Appended::At { start, end: start + total, len })
    }

    /// Cuts a failed write's bytes `start..end` off the file if nothing was appended after them.
    fn truncate_if_last(&self, start: u64, end: u64) {
        if self.file.metadata().is_ok_and(|m| m.len() == end) {
            let _ = self.file.set_len(start);
        }
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

/// Whether `PI_SESSION_NATIVE_FSYNC=1` asks for fsync on every write.
pub fn durable() -> bool {
    static DURABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DURABLE.get_or_init(|| std::env::var("PI_SESSION_NATIVE_FSYNC").is_ok_and(|v| v == "1"))
}

/// Writes a whole file atomically: a temp file beside it, then rename (Replace) or link
/// (Exclusive, which keeps the EEXIST check). Readers see the old file or the new one,
/// never a mix; a crash leaves at most a stray temp file. When an existing file is
/// replaced (a migration), the new bytes are fsynced before the rename, so even a power
/// loss cannot leave the session empty; new files are fsynced only in durable mode.
pub fn write_file(path: &Path, parts: &[&[u8]], mode: WriteMode) -> Result<()> {
    write_file_with(path, mode, &mut |f| {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        for p in parts {
            w.write_all(p)?;
        }
        w.flush()
    })
    .map(|_| ())
}

/// `write_file` of what `write` writes to the cursor of the new file (called again, on a
/// fresh file, where the file system has no hard links); its length.
pub fn write_file_with(
    path: &Path,
    mode: WriteMode,
    write: &mut dyn FnMut(&File) -> std::io::Result<()>,
) -> Result<u64> {
    let exists = fs::symlink_metadata(path).is_ok();
    if mode == WriteMode::Exclusive && exists {
        return Err(eexist(path));
    }
    let sync = (mode == WriteMode::Replace && exists) || durable();
    let tmp = temp_path(path);
    let mut write_tmp = || -> std::io::Result<u64> {
        let f = platform::open_new(&tmp)?;
        write(&f)?;
        if sync {
            f.sync_all()?;
        }
        (&f).stream_position()
    };
    let len = match write_tmp() {
        Ok(len) => len,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            // Report it as the reference would: on the target path.
            return Err(Error::io(e, "open", Some(path)));
        }
    };
    let done = match mode {
        WriteMode::Replace => fs::rename(&tmp, path),
        WriteMode::Exclusive => fs::hard_link(&tmp, path),
    };
    let _ = if mode == WriteMode::Exclusive { fs::remove_file(&tmp) } else { Ok(()) };
    match done {
        Ok(()) => {
            if sync {
                sync_dir(path);
            }
            Ok(len)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let _ = fs::remove_file(&tmp);
            Err(eexist(path))
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            if mode == WriteMode::Exclusive {
                // Filesystems without hard links: fall back to an exclusive create.
                return write_direct_exclusive(path, write);
            }
            Err(Error::io(e, "rename", Some(path)))
        }
    }
}

/// `write_file_with(path, Replace, write)`; where the rename over `path` is refused (a folder
/// is there; on Windows also a read-only file, or one another process holds open), the
/// reference's own way instead: `let_go` (the caller stops reading `path`), then the file is
/// emptied and written in place, as `openSync(path, "w")` and its writes do. So a write the
/// reference makes is made, and one it fails, fails with its error (`EISDIR ... open` for a
/// folder). Not atomic: used only where the atomic way is refused.
pub fn replace_with(
    path: &Path,
    write: &mut dyn FnMut(&File) -> std::io::Result<()>,
    let_go: &mut dyn FnMut() -> Result<()>,
) -> Result<u64> {
    match write_file_with(path, WriteMode::Replace, write) {
        Err(Error::Io { syscall: "rename", .. }) => {
            let_go()?;
            let f = platform::open_truncate(path).map_err(|e| Error::io_creating(e, path))?;
            write(&f).and_then(|()| (&f).stream_position()).map_err(|e| Error::io(e, "write", None))
        }
        r => r,
    }
}

fn write_direct_exclusive(path: &Path, write: &mut dyn FnMut(&File) -> std::io::Result<()>) -> Result<u64> {
    let f = platform::open_new(path).map_err(|e| Error::io(e, "open", Some(path)))?;
    write(&f).and_then(|()| (&f).stream_position()).map_err(|e| Error::io(e, "write", None))
}

fn eexist(path: &Path) -> Error {
    Error::io(std::io::Error::from_raw_os_error(platform::RAW_EEXIST), "open", Some(path))
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
    use crate::header::{HeaderScan, MAX_HEADER_SCAN_BYTES, header_field_raw, read_header};
    use crate::json::Kind;

    fn tmpdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("psn-store-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&d).unwrap();
        d
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
    fn appends_land_whole_and_say_where() {
        let d = tmpdir();
        let p = d.join("f.jsonl");
        fs::write(&p, b"{\"a\":1}\n").unwrap();
        let mut h = AppendHandle::open(&p).unwrap();
        // Where the caller expected: no further question.
        assert_eq!(h.append(b"x\n", Some(8), false).unwrap(), Appended::At { start: 8, end: 10, len: 10 });
        // Another writer appended first (a partial line too): ours still lands whole, at the end.
        append_bytes(&p, b"{\"b\":2}\n{\"par", false).unwrap();
        assert_eq!(h.append(b"y\n", Some(10), false).unwrap(), Appended::At { start: 23, end: 25, len: 25 });
        assert_eq!(h.read_new(10, 25).unwrap(), b"{\"b\":2}\n{\"pary\n");
        assert_eq!(h.read_new(10, 22).unwrap(), b"{\"b\":2}\n", "a partial line is left for later");
        // A replaced file is noticed.
        fs::write(d.join("g.jsonl"), b"").unwrap();
        fs::rename(d.join("g.jsonl"), &p).unwrap();
        assert_eq!(h.append(b"z\n", Some(25), false).unwrap(), Appended::Replaced);
        assert_eq!(fs::read(&p).unwrap(), b"");
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
