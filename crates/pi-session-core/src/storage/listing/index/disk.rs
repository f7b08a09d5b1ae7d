//! The listing index on disk: one file per folder, its format, and reading and writing it.
//!
//! The file format. All integers little-endian.
//!
//!   magic "PSNLIDX\0" | format u32 | producer: u16 len + bytes | folder: u32 len + bytes
//!   | frame count u32 | per frame: raw length u64, compressed length u64, Latin-1 units
//!     u64, UTF-16 units u64 | the frames
//!
//! Each frame is one zstd frame with a content checksum, of about `FRAME_BYTES` of records
//! (frames are read and decompressed in parallel; smaller ones also decompress faster in
//! cache). A frame's records: count u32, then per file:
//!   name: u32 len + bytes | dev u64 | ino u64 | size u64 | mtime i64 + u32 ns
//!   | ctime i64 + u32 ns
//!   | header: u8 0 unknown / 1 not a header / 2 header + str / 3 none in the first MiB
//!   | row: u8 0 unknown / 1 null / 2 (from older versions: scanned again) / 3 info + str head + text first
//!     + text all + str tail
//!   str: u32 byte length + UTF-8; text: u8 0 Latin-1 + u32 length + the bytes, or
//!   u8 1 UTF-16 + u32 units + u32 length + the units as WTF-8 (half the bytes of UTF-16
//!   for the mostly ASCII texts of sessions, so half the decompression).
//!
//! The table's unit counts are the frame's texts, end to end: a reader sizes one block per
//! kind for all frames up front and each frame decodes its texts straight into its part
//! (no copy, no growing; the blocks are what JS reads, see `listing::rows::Block`).

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::storage::listing::index::entry::{Entry, Head};
use crate::storage::listing::rows::{Block, Row, Text, Units};
use crate::storage::platform::FileState;

const MAGIC: &[u8; 8] = b"PSNLIDX\0";
const FORMAT: u32 = 2;
/// A different build may scan differently: its index is not ours to trust.
const PRODUCER: &str = concat!("pi-session-native ", env!("CARGO_PKG_VERSION"));
const ZSTD_LEVEL: i32 = 3;
/// A damaged length must not make a reader allocate without bound.
const MAX_RAW_BYTES: u64 = 4 << 30;

const FRAME_BYTES: usize = 1 << 20;
/// Units per block at most (`max_block_units`): V8's longest string, which JS gets each block as. A frame's
/// texts fit one block (`encode` starts a new frame before they would not), and a row whose
/// texts alone would not is kept without its row (its file is scanned each time).
fn max_block_units() -> u64 {
    crate::storage::text::max_js_string_units() as u64
}

/// The Latin-1 and UTF-16 units of an entry's row texts, or `None` when they cannot go in
/// one frame.
fn row_units(e: &Entry) -> Option<(u64, u64)> {
    let (mut l, mut u) = (0u64, 0u64);
    if let Some(Row::Info { first, all, .. }) = e.row.as_deref() {
        for t in [first, all] {
            match t.units() {
                Units::Latin1(b) => l += b.len() as u64,
                Units::Utf16(w) => u += w.len() as u64,
            }
        }
    }
    (l <= max_block_units() && u <= max_block_units()).then_some((l, u))
}

fn put_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&(v as u32).to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u32(out, b.len());
    out.extend_from_slice(b);
}

/// A frame being written, with its text unit counts.
#[derive(Default)]
struct RawFrame {
    bytes: Vec<u8>,
    count: usize,
    latin1: u64,
    utf16: u64,
}

impl RawFrame {
    fn put_text(&mut self, t: &Text) {
        let out = &mut self.bytes;
        match t.units() {
            Units::Latin1(b) => {
                out.push(0);
                put_bytes(out, b);
                self.latin1 += b.len() as u64;
            }
            Units::Utf16(u) => {
                out.push(1);
                put_u32(out, u.len());
                let at = out.len();
                put_u32(out, 0);
                crate::storage::text::utf16_to_wtf8(u, out);
                let len = out.len() - at - 4;
                out[at..at + 4].copy_from_slice(&(len as u32).to_le_bytes());
                self.utf16 += u.len() as u64;
            }
        }
    }

    fn put_entry(&mut self, name: &OsString, e: &Entry) {
        self.count += 1;
        let raw = &mut self.bytes;
        put_bytes(raw, &crate::storage::platform::name_bytes(name));
        let s = &e.state;
        for v in [s.dev, s.ino, s.size] {
            raw.extend_from_slice(&v.to_le_bytes());
        }
        for (sec, ns) in [s.mtime, s.ctime] {
            raw.extend_from_slice(&sec.to_le_bytes());
            raw.extend_from_slice(&ns.to_le_bytes());
        }
        match &e.header {
            None => raw.push(0),
            Some(Head::NotHeader) => raw.push(1),
            Some(Head::Line(line)) => {
                raw.push(2);
                put_bytes(raw, line.as_bytes());
            }
            Some(Head::LimitExceeded) => raw.push(3),
        }
        match e.row.as_deref() {
            None => raw.push(0),
            Some(Row::Null) => raw.push(1),
            Some(Row::Info { head, first, all, tail }) => {
                raw.push(3);
                put_bytes(raw, head.as_bytes());
                self.put_text(first);
                self.put_text(all);
                put_bytes(&mut self.bytes, tail.as_bytes());
            }
        }
    }
}

/// `f` over a few heavy `items` (frames) on up to `available_parallelism` threads, each
/// taking the next item when it is done; results in order.
fn parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8).min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                }
            });
        }
    });
    slots.into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every item is done")).collect()
}

fn encode(folder: &Path, entries: &[(OsString, Entry)]) -> std::io::Result<Vec<u8>> {
    // Records into frames of about FRAME_BYTES, each starting with its count.
    let mut frames: Vec<RawFrame> = Vec::new();
    for (name, e) in entries {
        // A row too long for a block is left out (the header stays).
        let units = row_units(e);
        let e = &match units {
            Some(_) => std::borrow::Cow::Borrowed(e),
            None => std::borrow::Cow::Owned(Entry { row: None, ..e.clone() }),
        };
        let (l, u) = units.unwrap_or((0, 0));
        let full = |f: &RawFrame| {
            f.bytes.len() >= FRAME_BYTES || f.latin1 + l > max_block_units() || f.utf16 + u > max_block_units()
        };
        if frames.last().is_none_or(full) {
            frames.push(RawFrame { bytes: vec![0; 4], ..RawFrame::default() });
        }
        frames.last_mut().expect("a frame").put_entry(name, e);
    }
    for f in &mut frames {
        f.bytes[..4].copy_from_slice(&(f.count as u32).to_le_bytes());
    }
    let compressed = parallel(&frames, |f| -> std::io::Result<Vec<u8>> {
        let mut enc = zstd::Encoder::new(Vec::with_capacity(f.bytes.len() / 4), ZSTD_LEVEL)?;
        enc.include_checksum(true)?;
        enc.set_pledged_src_size(Some(f.bytes.len() as u64))?;
        enc.write_all(&f.bytes)?;
        enc.finish()
    });
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&(PRODUCER.len() as u16).to_le_bytes());
    out.extend_from_slice(PRODUCER.as_bytes());
    put_bytes(&mut out, &crate::storage::platform::name_bytes(folder.as_os_str()));
    put_u32(&mut out, frames.len());
    let compressed = compressed.into_iter().collect::<std::io::Result<Vec<_>>>()?;
    for (f, z) in frames.iter().zip(&compressed) {
        for v in [f.bytes.len() as u64, z.len() as u64, f.latin1, f.utf16] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for z in &compressed {
        out.extend_from_slice(z);
    }
    Ok(out)
}

/// A bounds-checked reader: every `None` means a damaged index.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> Option<usize> {
        Some(u32::from_le_bytes(self.array()?) as usize)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.array()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()?;
        self.take(n)
    }
    fn str(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
}

/// Where a frame's texts go: its parts of the blocks, filled from the start.
struct Fill<'b> {
    latin1: &'b mut [u8],
    utf16: &'b mut [u16],
    /// Where those parts start in their blocks.
    base: (usize, usize),
    at: (usize, usize),
}

impl Fill<'_> {
    /// The next text of `c`, written into this frame's part of its block:
    /// `(utf16, range in the block)`.
    fn text(&mut self, c: &mut Cursor) -> Option<(bool, std::ops::Range<usize>)> {
        match c.u8()? {
            0 => {
                let b = c.bytes()?;
                let start = self.at.0;
                self.latin1.get_mut(start..start + b.len())?.copy_from_slice(b);
                self.at.0 += b.len();
                Some((false, self.base.0 + start..self.base.0 + self.at.0))
            }
            1 => {
                let units = c.u32()?;
                let start = self.at.1;
                crate::storage::text::wtf8_to_utf16(c.bytes()?, self.utf16.get_mut(start..start + units)?)?;
                self.at.1 += units;
                Some((true, self.base.1 + start..self.base.1 + self.at.1))
            }
            _ => None,
        }
    }

    /// Whether the frame's texts filled its parts exactly (as its table entry said).
    fn full(&self) -> bool {
        self.at == (self.latin1.len(), self.utf16.len())
    }
}

fn os_name(b: &[u8]) -> Option<OsString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(std::ffi::OsStr::from_bytes(b).to_os_string())
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(b.to_vec()).ok().map(OsString::from)
    }
}

/// What an index is read from: its file, or (in tests) its bytes.
trait Source: Sync {
    fn len(&self) -> u64;
    /// Exactly `buf.len()` bytes at `at`.
    fn read_at(&self, at: u64, buf: &mut [u8]) -> Option<()>;
}

impl Source for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read_at(&self, at: u64, buf: &mut [u8]) -> Option<()> {
        let at = usize::try_from(at).ok()?;
        buf.copy_from_slice(self.get(at..at.checked_add(buf.len())?)?);
        Some(())
    }
}

struct IndexFile(fs::File, u64);

impl Source for IndexFile {
    fn len(&self) -> u64 {
        self.1
    }
    fn read_at(&self, at: u64, buf: &mut [u8]) -> Option<()> {
        crate::storage::platform::read_exact_at(&self.0, buf, at).ok()
    }
}

/// `len` bytes of `src` at `at`, into a fresh buffer.
fn read_vec(src: &(impl Source + ?Sized), at: u64, len: u64) -> Option<Vec<u8>> {
    let mut buf = vec![0; usize::try_from(len).ok()?];
    src.read_at(at, &mut buf)?;
    Some(buf)
}

/// One frame as the table describes it.
struct FrameAt {
    at: u64,
    raw: u64,
    z: u64,
    /// Its block, and its texts' units in it.
    block: usize,
    latin1: std::ops::Range<usize>,
    utf16: std::ops::Range<usize>,
}

/// A row before its blocks exist: an info row's head, texts and tail, or a simple row.
type Pending = Option<Result<(String, [(bool, std::ops::Range<usize>); 2], String), Row>>;
type Parsed = (OsString, FileState, Option<Head>, Pending);

fn decode(src: &(impl Source + ?Sized), folder: &Path) -> Option<Vec<(OsString, Entry)>> {
    let len = src.len();
    // The header and the frame table; a folder path is far shorter than the first read.
    let mut head = read_vec(src, 0, len.min(64 << 10))?;
    let mut c = Cursor(&head);
    if c.take(8)? != MAGIC || u32::from_le_bytes(c.array()?) != FORMAT {
        return None;
    }
    let producer_len = u16::from_le_bytes(c.array()?) as usize;
    if c.take(producer_len)? != PRODUCER.as_bytes() {
        return None;
    }
    if c.bytes()? != &*crate::storage::platform::name_bytes(folder.as_os_str()) {
        return None;
    }
    let count = c.u32()?;
    let table_end = (head.len() - c.0.len()) as u64 + count as u64 * 32;
    if table_end > len {
        return None;
    }
    if table_end > head.len() as u64 {
        head = read_vec(src, 0, table_end)?;
    }
    let mut c = Cursor(&head[table_end as usize - count * 32..table_end as usize]);
    // Frames, end to end after the table, to the end of the file; each block below
    // max_block_units() of either kind.
    let (mut frames, mut blocks) = (Vec::with_capacity(count.min(1 << 12)), vec![(0usize, 0usize)]);
    let (mut at, mut raw_total) = (table_end, 0u64);
    for _ in 0..count {
        let (raw, z, latin1, utf16) = (c.u64()?, c.u64()?, c.u64()?, c.u64()?);
        // Each unit comes from at least one byte of the frame.
        raw_total = raw_total.checked_add(raw)?;
        if latin1.checked_add(utf16)? > raw || raw_total > MAX_RAW_BYTES || latin1.max(utf16) > max_block_units() {
            return None;
        }
        let (latin1, utf16) = (latin1 as usize, utf16 as usize);
        let last = blocks.last_mut().expect("a block");
        if (last.0 + latin1) as u64 > max_block_units() || (last.1 + utf16) as u64 > max_block_units() {
            blocks.push((0, 0));
        }
        let block = blocks.len() - 1;
        let b = &mut blocks[block];
        frames.push(FrameAt { at, raw, z, block, latin1: b.0..b.0 + latin1, utf16: b.1..b.1 + utf16 });
        *b = (b.0 + latin1, b.1 + utf16);
        at = at.checked_add(z)?;
    }
    if at != len {
        return None;
    }
    // The blocks, zeroed by the kernel as they are first written (each frame writes its
    // own part, at once). A table that claims more than can be had is a damaged index, not
    // an abort.
    let mut kept = Vec::with_capacity(blocks.len());
    for &(l, u) in &blocks {
        kept.push((zeroed::<u8>(l)?, zeroed::<u16>(u)?));
    }
    let mut jobs = Vec::with_capacity(frames.len());
    {
        let mut rest: Vec<(&mut [u8], &mut [u16])> = kept.iter_mut().map(|(l, u)| (&mut l[..], &mut u[..])).collect();
        for f in &frames {
            let (l, u) = &mut rest[f.block];
            let (latin1, l_rest) = std::mem::take(l).split_at_mut(f.latin1.len());
            let (utf16, u_rest) = std::mem::take(u).split_at_mut(f.utf16.len());
            (*l, *u) = (l_rest, u_rest);
            let fill = Fill { latin1, utf16, base: (f.latin1.start, f.utf16.start), at: (0, 0) };
            jobs.push(Mutex::new(Some((f, fill))));
        }
    }
    let decoded = parallel(&jobs, |job| {
        let (f, fill) = job.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        decode_frame(src, f, fill)
    });
    drop(jobs);
    let parsed = decoded.into_iter().collect::<Option<Vec<_>>>()?;
    let kept: Vec<[Block; 2]> =
        kept.into_iter().map(|(l, u)| [Block::Latin1(Arc::new(l)), Block::Utf16(Arc::new(u))]).collect();
    let mut out = Vec::with_capacity(parsed.iter().map(Vec::len).sum());
    for (frame, part) in frames.iter().zip(parsed) {
        let blocks = &kept[frame.block];
        let text =
            |(wide, range): (bool, std::ops::Range<usize>)| Text { block: blocks[usize::from(wide)].clone(), range };
        out.extend(part.into_iter().map(|(name, state, header, row)| {
            let row = row.map(|row| match row {
                Err(simple) => simple,
                Ok((head, [first, all], tail)) => Row::Info { head, first: text(first), all: text(all), tail },
            });
            (name, Entry { state, row: row.map(Arc::new), header })
        }));
    }
    Some(out)
}

/// Code units, for which all-zero bytes are a value (zero).
trait Unit: Copy {}
impl Unit for u8 {}
impl Unit for u16 {}

/// `vec![0; n]` that fails instead of aborting when the memory cannot be had (and, as
/// `vec!` does, takes it zeroed from the allocator: fresh pages are not touched here).
fn zeroed<T: Unit>(n: usize) -> Option<Vec<T>> {
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    // SAFETY: `layout` has a non-zero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` was allocated by the global allocator with `Layout::array::<T>(n)`,
    // the layout a `Vec<T>` of capacity `n` has; all `n` elements are zero bytes, a valid
    // value of every `Unit`.
    Some(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// Reads, checks and decompresses one frame, and parses its records, writing their texts
/// into `fill`.
fn decode_frame(src: &(impl Source + ?Sized), f: &FrameAt, mut fill: Fill) -> Option<Vec<Parsed>> {
    // Into buffers each thread keeps: fresh pages for every frame would cost a page fault
    // per 4 KiB.
    type Scratch = (Vec<u8>, Vec<u8>, Option<zstd::bulk::Decompressor<'static>>);
    thread_local!(static SCRATCH: std::cell::RefCell<Scratch> = const { std::cell::RefCell::new((Vec::new(), Vec::new(), None)) });
    SCRATCH.with_borrow_mut(|(frame, raw, dctx)| {
        frame.resize(usize::try_from(f.z).ok()?, 0);
        src.read_at(f.at, frame)?;
        // Exactly one frame, announcing that length and carrying a content checksum
        // (Frame_Header_Descriptor bit 2), which the decoder verifies.
        if frame.len() < 5
            || frame[4] & 0x04 == 0
            || zstd::zstd_safe::find_frame_compressed_size(frame).ok()? != frame.len()
            || zstd::zstd_safe::get_frame_content_size(frame).ok()? != Some(f.raw)
        {
            return None;
        }
        raw.clear();
        raw.reserve(usize::try_from(f.raw).ok()?);
        if dctx.is_none() {
            *dctx = zstd::bulk::Decompressor::new().ok();
        }
        let n = dctx.as_mut()?.decompress_to_buffer(&frame[..], raw).ok()?;
        if n as u64 != f.raw || raw.len() != n {
            return None;
        }
        let parsed = frame_entries(raw, &mut fill)?;
        fill.full().then_some(parsed)
    })
}

/// The entries of one decompressed frame, their texts written into `fill`.
fn frame_entries(raw: &[u8], fill: &mut Fill) -> Option<Vec<Parsed>> {
    let mut r = Cursor(raw);
    let count = r.u32()?;
    let mut parsed = Vec::with_capacity(count.min(raw.len() / 40));
    for _ in 0..count {
        let name = os_name(r.bytes()?)?;
        let (dev, ino, size) = (r.u64()?, r.u64()?, r.u64()?);
        let mtime = (r.i64()?, r.u32()? as u32);
        let ctime = (r.i64()?, r.u32()? as u32);
        let header = match r.u8()? {
            0 => None,
            1 => Some(Head::NotHeader),
            2 => Some(Head::Line(Arc::from(r.str()?.as_str()))),
            3 => Some(Head::LimitExceeded),
            _ => return None,
        };
        let row = match r.u8()? {
            0 => None,
            1 => Some(Err(Row::Null)),
            // A row an older version left to the facade's JS copy: scanned again.
            2 => None,
            3 => {
                let head = r.str()?;
                let texts = [fill.text(&mut r)?, fill.text(&mut r)?];
                Some(Ok((head, texts, r.str()?)))
            }
            _ => return None,
        };
        parsed.push((name, FileState { dev, ino, size, mtime, ctime }, header, row));
    }
    r.0.is_empty().then_some(parsed)
}

pub(in super::super) fn read_index(file: &Path, folder: &Path) -> Option<Vec<(OsString, Entry)>> {
    let f = fs::File::open(file).ok()?;
    let meta = f.metadata().ok()?;
    if !owned_by_us(&meta) || meta.len() > MAX_RAW_BYTES {
        return None;
    }
    decode(&IndexFile(f, meta.len()), folder)
}

/// Another user's index is never trusted (a shared `PI_SESSION_NATIVE_INDEX_DIR`).
fn owned_by_us(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        meta.uid() == unsafe { libc::geteuid() }
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

pub(super) fn write_index(file: &Path, folder: &Path, entries: &[(OsString, Entry)]) -> std::io::Result<()> {
    let dir = file.parent().ok_or_else(|| std::io::Error::other("no parent"))?;
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let bytes = encode(folder, entries)?;
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!("{name}.{}-{}.tmp", std::process::id(), uuid::Uuid::new_v4().simple()));
    let written = (|| {
        // The index holds conversation text: readable by this user only.
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut out = options.open(&tmp)?;
        out.write_all(&bytes)?;
        drop(out);
        fs::rename(&tmp, file)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    remove_stale_temps(dir);
    written
}

/// Temp files of writers that died before their rename (an hour old or more).
fn remove_stale_temps(dir: &Path) {
    let Ok(read) = fs::read_dir(dir) else { return };
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for e in read.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".tmp")
            && name.contains(".idx.")
            && e.metadata().and_then(|m| m.modified()).is_ok_and(|t| t < hour_ago)
        {
            let _ = fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::json::Decoded;

    fn entry(ino: u64, row: Option<Row>, header: Option<Option<&str>>) -> Entry {
        let header = header.map(|h| h.map_or(Head::NotHeader, |l| Head::Line(Arc::from(l))));
        let state = FileState { dev: 7, ino, size: 100 + ino, mtime: (1_700_000_000, 5), ctime: (1_700_000_001, 999) };
        Entry { state, row: row.map(Arc::new), header }
    }

    fn sample() -> Vec<(OsString, Entry)> {
        let info = Row::Info {
            head: "[{\"type\":\"session\"},null,2,null,[],".into(),
            first: Block::of(Decoded::Latin1(b"caf\xe9".to_vec())),
            all: Block::of(Decoded::Utf16("\u{2192} x".encode_utf16().chain([0xd800]).collect())),
            tail: "1700000000000.5]".into(),
        };
        vec![
            ("a.jsonl".into(), entry(1, Some(info), Some(Some("{\"type\":\"session\"}")))),
            ("b.jsonl".into(), entry(2, Some(Row::Null), Some(None))),
            ("c.jsonl".into(), entry(3, Some(Row::Null), None)),
            ("d.jsonl".into(), entry(4, None, Some(Some("{}")))),
            ("e.jsonl".into(), Entry { header: Some(Head::LimitExceeded), ..entry(5, None, None) }),
        ]
    }

    fn debug(v: &Option<Vec<(OsString, Entry)>>) -> String {
        format!("{v:?}")
    }

    #[test]
    fn format_round_trips_and_never_accepts_damage() {
        let folder = Path::new("/home/u/.pi/agent/sessions/--p--");
        let entries = sample();
        let bytes = encode(folder, &entries).unwrap();
        let want = debug(&Some(entries));
        assert_eq!(debug(&decode(&bytes[..], folder)), want);
        // Another folder, a truncation anywhere, a byte more.
        assert!(decode(&bytes[..], Path::new("/other")).is_none());
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n], folder).is_none(), "truncated to {n}");
        }
        assert!(decode(&[&bytes[..], b"\0"].concat()[..], folder).is_none());
        // Any flipped bit: rejected, or (where the bit means nothing) the same entries.
        for i in 0..bytes.len() {
            for bit in [0x01u8, 0x10, 0x80] {
                let mut bad = bytes.clone();
                bad[i] ^= bit;
                let got = decode(&bad[..], folder);
                assert!(got.is_none() || debug(&got) == want, "byte {i} bit {bit:#x} gave {got:?}");
            }
        }
        // Several frames: big texts, decoded in parallel, in order.
        let big: Vec<(OsString, Entry)> = (0..5)
            .map(|i| {
                let text: Vec<u16> = format!("{i} \u{2192} ").repeat(90_000).encode_utf16().collect();
                let row = Row::Info {
                    head: "[".into(),
                    first: Block::of(Decoded::Latin1(vec![b'a'; 10])),
                    all: Block::of(Decoded::Utf16(text)),
                    tail: "1]".into(),
                };
                (OsString::from(format!("{i}.jsonl")), entry(i, Some(row), None))
            })
            .collect();
        let bytes_big = encode(folder, &big).unwrap();
        assert!(
            u32::from_le_bytes(
                bytes_big[MAGIC.len() + 6 + PRODUCER.len() + 4 + folder.as_os_str().len()..][..4].try_into().unwrap()
            ) >= 3
        );
        let want_big = debug(&Some(big));
        assert_eq!(debug(&decode(&bytes_big[..], folder)), want_big);
        for n in (0..bytes_big.len()).step_by(997) {
            assert!(decode(&bytes_big[..n], folder).is_none(), "truncated to {n}");
        }
        for i in (0..bytes_big.len()).step_by(1009) {
            let mut bad = bytes_big.clone();
            bad[i] ^= 0x20;
            let got = decode(&bad[..], folder);
            assert!(got.is_none() || debug(&got) == want_big, "byte {i}");
        }
        // Another producer version: the same length, other bytes.
        let at = bytes.windows(PRODUCER.len()).position(|w| w == PRODUCER.as_bytes()).unwrap();
        let mut other = bytes.clone();
        other[at + PRODUCER.len() - 1] ^= 1;
        assert!(decode(&other[..], folder).is_none());
    }

    #[test]
    fn rows_as_long_as_js_strings_split_frames_and_longer_ones_stay_out() {
        // The real limit needs GBs: this thread's is 1,000 units.
        crate::storage::text::TEST_JS_STRING_UNITS.with(|l| l.set(1000));
        let folder = Path::new("/s/sessions/--p--");
        let row = |first: usize, all: usize| Row::Info {
            head: "[".into(),
            first: Block::of(Decoded::Latin1(vec![b'f'; first])),
            all: Block::of(Decoded::Latin1(vec![b'a'; all])),
            tail: "1]".into(),
        };
        let entries: Vec<(OsString, Entry)> = [(10, 590), (10, 590), (400, 600), (10, 991), (0, 0)]
            .into_iter()
            .enumerate()
            .map(|(i, (f, a))| (OsString::from(format!("{i}.jsonl")), entry(i as u64, Some(row(f, a)), None)))
            .collect();
        let bytes = encode(folder, &entries).unwrap();
        // Rows of 600 and 1,000 units: a frame each, read back (one block would be over the
        // limit); the row of 1,001 is left out, its file is scanned again.
        let mut want = entries;
        want[3].1.row = None;
        let got = decode(&bytes[..], folder);
        crate::storage::text::TEST_JS_STRING_UNITS.with(|l| l.set(crate::storage::text::MAX_JS_STRING_UNITS));
        assert_eq!(debug(&got), debug(&Some(want)));
    }

    #[test]
    fn an_unwritable_index_costs_nothing_but_speed() {
        let file = crate::testutil::TempPath::file("index-file", "f");
        fs::write(&file, b"a file, not a folder").unwrap();
        assert!(write_index(&file.join("x.idx"), Path::new("/f"), &sample()).is_err());
        assert!(
            fs::read_dir(std::env::temp_dir())
                .unwrap()
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().starts_with("x.idx."))
        );
    }
}
