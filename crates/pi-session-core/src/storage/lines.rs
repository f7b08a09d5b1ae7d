//! Where each entry's line text lives: in the session file itself (read back with `pread`
//! when JS first needs the entry), or in memory (small files, repaired lines, lines read
//! from other writers). A multi-GB session is never held whole in memory.

use std::fs::File;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::storage::platform::Mapping;
use crate::storage::splice::Extracted;

/// Location of one item's line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// The item was built in JS; the facade holds its object.
    None,
    File {
        off: u64,
        len: u64,
    },
    Mem {
        off: u64,
        len: u64,
    },
}

/// A long plain string of a line: `(start, end)` in the line, quotes included.
pub type Plain = (u32, u32);

/// Line texts by item position.
#[derive(Debug, Default)]
pub struct LineStore {
    file: Option<File>,
    mem: Vec<u8>,
    spans: Vec<Span>,
    /// The long plain strings of file lines (`json::collect_plain`), by position (sorted):
    /// read around, never read, while `map` is set.
    plain: Vec<(u32, Box<[Plain]>)>,
    /// The file mapped, when it has such strings: JS strings point into it.
    map: Option<Arc<Mapping>>,
    /// The file's bytes in memory, read from instead of `file` (a large session read into
    /// memory where no private snapshot could be made: `store::load`).
    memory: Option<Arc<Mapping>>,
    /// This store is the session's (not a piece thread's copy): when it lets go of `map`,
    /// the snapshot keeps only the bytes strings hold (`Mapping::let_go`).
    owner: bool,
}

impl Drop for LineStore {
    fn drop(&mut self) {
        self.let_go_of_map();
    }
}

/// Reads that are closer than this are merged into one `pread`.
const MERGE_GAP: u64 = 64 * 1024;
/// Largest merged read.
const MAX_RUN: u64 = 16 * 1024 * 1024;

impl LineStore {
    pub fn new() -> LineStore {
        LineStore::default()
    }

    /// Keeps `file` open to read `Span::File` lines from. Reads go to this descriptor, so a
    /// file renamed or unlinked later still reads back the bytes that were loaded.
    pub fn set_file(&mut self, file: File) {
        self.set_mapped_file(file, None);
    }

    /// `set_file`, with the file's mapping made by the loader: kept if the file has long
    /// plain strings (`add_plain`), which JS strings then point into; else let go.
    pub fn set_mapped_file(&mut self, file: File, map: Option<Arc<Mapping>>) {
        self.let_go_of_map();
        self.owner = true;
        self.map = map.filter(|_| !self.plain.is_empty());
        if self.map.is_none() {
            self.plain = Vec::new();
        }
        self.file = Some(file);
    }

    /// `set_mapped_file` for a file read into memory: `Span::File` lines are read from
    /// `bytes`, which the long plain strings also point into.
    pub fn set_memory_file(&mut self, bytes: Arc<Mapping>) {
        self.let_go_of_map();
        self.owner = true;
        self.map = Some(bytes.clone()).filter(|_| !self.plain.is_empty());
        if self.map.is_none() {
            self.plain = Vec::new();
        }
        self.memory = Some(bytes);
    }

    /// Lets go of the session's mapping: the strings over it keep their bytes, the rest of
    /// the snapshot is given back.
    fn let_go_of_map(&mut self) {
        if let (true, Some(map)) = (self.owner, self.map.take()) {
            map.let_go();
        }
    }

    /// True when the file's lines are read from memory (`set_memory_file`).
    pub fn is_in_memory(&self) -> bool {
        self.memory.is_some()
    }

    /// Reads `buf.len()` bytes of the file's at `off` (from memory when it was read there).
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<()> {
        if let Some(file) = &self.file {
            return crate::storage::platform::read_exact_at(file, buf, off);
        }
        let memory = self.memory.as_ref().ok_or_else(|| io::Error::other("session file is not open"))?;
        let bytes = usize::try_from(off)
            .ok()
            .and_then(|off| memory.bytes(off, buf.len()))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(bytes);
        Ok(())
    }

    /// Records the long plain strings of the file line at `pos` (positions in order).
    pub fn add_plain(&mut self, pos: u32, strings: Vec<Plain>) {
        self.plain.push((pos, strings.into_boxed_slice()));
    }

    /// The long plain strings of the line at `pos` that stay in the mapped file.
    pub fn mapped_strings(&self, pos: u32) -> Option<&[Plain]> {
        self.map.as_ref()?;
        self.plain.binary_search_by_key(&pos, |p| p.0).ok().map(|k| &*self.plain[k].1)
    }

    /// Reads every line still in the file into memory and closes the file, so that this
    /// process holds it open no more (see `platform::OPEN_FILES_BLOCK_RENAME`).
    pub fn into_memory(&mut self) -> io::Result<()> {
        if self.file.is_none() && self.memory.is_none() {
            return Ok(());
        }
        let positions: Vec<u32> =
            (0..self.spans.len() as u32).filter(|&p| matches!(self.span(p), Span::File { .. })).collect();
        let mut moved = Vec::new();
        let mut lens = Vec::with_capacity(positions.len());
        self.for_each(&positions, |_, line| {
            let line = line.unwrap_or_default();
            moved.extend_from_slice(line);
            lens.push(line.len() as u64);
        })?;
        let mut off = self.mem.len() as u64;
        self.mem.extend_from_slice(&moved);
        for (&p, len) in positions.iter().zip(lens) {
            self.spans[p as usize] = Span::Mem { off, len };
            off += len;
        }
        self.file = None;
        self.memory = None;
        // Live strings keep their own hold on the mapping.
        self.let_go_of_map();
        self.map = None;
        self.plain = Vec::new();
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Gives back what the spans' growth reserved (a loaded file's are complete).
    pub fn shrink_to_fit(&mut self) {
        self.spans.shrink_to_fit();
        self.mem.shrink_to_fit();
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    pub fn push(&mut self, span: Span) {
        self.spans.push(span);
    }

    /// Stores `bytes` in memory and returns its span (not yet pushed).
    pub fn keep(&mut self, bytes: &[u8]) -> Span {
        let off = self.mem.len() as u64;
        self.mem.extend_from_slice(bytes);
        Span::Mem { off, len: bytes.len() as u64 }
    }

    pub fn pop(&mut self) {
        self.spans.pop();
    }

    pub fn span(&self, pos: u32) -> Span {
        self.spans.get(pos as usize).copied().unwrap_or(Span::None)
    }

    /// Calls `f(index, line)` for each position (`None` when it has no line), in order.
    /// File lines that lie close together are read with one `pread`.
    pub fn for_each(&self, positions: &[u32], f: impl FnMut(usize, Option<&[u8]>)) -> io::Result<()> {
        self.for_each_in(positions, &mut Vec::new(), f)
    }

    /// `for_each`, reading file lines into `buf` (kept by callers that read many times:
    /// a buffer that is already mapped costs no page faults).
    fn for_each_in(
        &self,
        positions: &[u32],
        buf: &mut Vec<u8>,
        mut f: impl FnMut(usize, Option<&[u8]>),
    ) -> io::Result<()> {
        let mut i = 0;
        while i < positions.len() {
            match self.span(positions[i]) {
                Span::None => {
                    f(i, None);
                    i += 1;
                }
                Span::Mem { off, len } => {
                    f(i, Some(&self.mem[off as usize..(off + len) as usize]));
                    i += 1;
                }
                Span::File { off, len } => {
                    // Extend the run while the next file span follows closely.
                    let (start, mut end, mut j) = (off, off + len, i + 1);
                    while j < positions.len() {
                        match self.span(positions[j]) {
                            Span::File { off: o, len: l }
                                if o >= end && o - end <= MERGE_GAP && o + l - start <= MAX_RUN =>
                            {
                                end = o + l;
                                j += 1;
                            }
                            _ => break,
                        }
                    }
                    let n = (end - start) as usize;
                    if buf.len() < n {
                        buf.resize(n, 0);
                    }
                    let buf = &mut buf[..n];
                    self.read_at(buf, start)?;
                    for (k, &p) in positions[i..j].iter().enumerate() {
                        if let Span::File { off: o, len: l } = self.span(p) {
                            f(i + k, Some(&buf[(o - start) as usize..(o - start + l) as usize]));
                        }
                    }
                    i = j;
                }
            }
        }
        Ok(())
    }

    /// The lines at `positions` joined by `\n` (an item without a line gives an empty one),
    /// with every non-ASCII character written as a `\uXXXX` escape: the text is
    /// pure ASCII, so JS can take it as a one-byte string (a plain copy) and `JSON.parse`
    /// decodes the escapes only inside the strings that need them. Valid because non-ASCII
    /// characters can only occur inside JSON strings.
    pub fn joined_ascii(&self, positions: &[u32]) -> io::Result<Vec<u8>> {
        // Room for every line and separator (escapes may add a little more): growing a
        // 20 MB text by doubling would copy it several times.
        let total = self.text_len(positions);
        let mut out = Vec::with_capacity(usize::try_from(total + total / 64).unwrap_or(usize::MAX));
        self.for_each(positions, |i, line| {
            if i > 0 {
                out.push(b'\n');
            }
            crate::storage::text::escape_to_ascii(line.unwrap_or(b""), &mut out);
        })?;
        Ok(out)
    }

    /// `joined_ascii`, with long escaped strings taken out of the lines (see `splice`):
    /// the text to parse and the strings to put back (patches number lines from 0).
    pub fn joined_spliced(&self, positions: &[u32]) -> io::Result<Piece> {
        let mut piece = Piece::default();
        self.splice_into(positions, &mut Vec::new(), &mut piece)?;
        Ok(piece)
    }

    /// `joined_spliced` into the buffers of `piece` (cleared first), reading through `buf`.
    /// Lines with long plain strings in a mapped file are read around those strings, which
    /// go to `piece.ex.mapped` (`limits::MAPPED_MIN`).
    fn splice_into(&self, positions: &[u32], buf: &mut Vec<u8>, piece: &mut Piece) -> io::Result<()> {
        piece.clear();
        piece.map = self.map.clone();
        let Piece { text: out, ex, .. } = piece;
        out.reserve(usize::try_from(self.text_len(positions) / 4).unwrap_or(0));
        let mut spliced = Vec::new();
        let mut add = |i: usize, line: &[u8], holes: &[(u32, u32)], ex: &mut Extracted| {
            spliced.clear();
            if crate::storage::splice::splice_line(line, i as u32, &mut spliced, ex, holes) {
                if i > 0 {
                    out.push(b'\n');
                }
                crate::storage::text::escape_to_ascii(&spliced, out);
                true
            } else if holes.is_empty() {
                if i > 0 {
                    out.push(b'\n');
                }
                crate::storage::text::escape_to_ascii(line, out);
                true
            } else {
                false
            }
        };
        let (mut reduced, mut holes) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < positions.len() {
            let j =
                (i..positions.len()).find(|&k| self.mapped_strings(positions[k]).is_some()).unwrap_or(positions.len());
            self.for_each_in(&positions[i..j], buf, |k, line| {
                add(i + k, line.unwrap_or(b""), &[], ex);
            })?;
            if j == positions.len() {
                break;
            }
            let mapped_at = ex.mapped.len();
            if !(self.read_around(positions[j], &mut reduced, &mut holes, ex)? && add(j, &reduced, &holes, ex)) {
                // Not spliceable (see `splice_line`): the whole line, its strings copied.
                ex.mapped.truncate(mapped_at);
                self.for_each_in(&positions[j..=j], buf, |_, line| {
                    add(j, line.unwrap_or(b""), &[], ex);
                })?;
            }
            i = j + 1;
        }
        Ok(())
    }

    /// The file line at `pos` with each of its mapped strings replaced by `""` (at
    /// `holes`, their places in `ex.mapped`), read around them; false when a string is
    /// outside the mapping.
    fn read_around(
        &self,
        pos: u32,
        reduced: &mut Vec<u8>,
        holes: &mut Vec<(u32, u32)>,
        ex: &mut Extracted,
    ) -> io::Result<bool> {
        reduced.clear();
        holes.clear();
        let (Span::File { off, len }, Some(strings), Some(map)) =
            (self.span(pos), self.mapped_strings(pos), self.map.as_ref())
        else {
            return Ok(false);
        };
        let read = |from: u64, to: u64, reduced: &mut Vec<u8>| {
            let at = reduced.len();
            reduced.resize(at + (to - from) as usize, 0);
            self.read_at(&mut reduced[at..], off + from)
        };
        let mut from = 0u64;
        for &(start, end) in strings {
            let (units_at, units) = (off + u64::from(start) + 1, end - start - 2);
            if u64::from(end) > len || map.at(units_at, units as usize).is_none() {
                return Ok(false);
            }
            read(from, u64::from(start), reduced)?;
            holes.push((reduced.len() as u32, ex.mapped.len() as u32));
            reduced.extend_from_slice(b"\"\"");
            ex.mapped.push((units_at, units));
            from = u64::from(end);
        }
        read(from, len, reduced)?;
        Ok(true)
    }

    /// The bytes of the lines at `positions` with a newline after each.
    pub fn text_len(&self, positions: &[u32]) -> u64 {
        positions
            .iter()
            .map(|&p| match self.span(p) {
                Span::None => 1,
                Span::File { len, .. } | Span::Mem { len, .. } => len + 1,
            })
            .sum()
    }

    /// `joined_ascii(positions)` in pieces of about `chunk` bytes, each the lines of
    /// consecutive positions (joined by `\n`, no separator between pieces). Small texts
    /// come as one piece made now; larger ones are made on a thread of their own, so the
    /// caller can parse one piece while the next is read and escaped. Pieces arrive in
    /// order; an error ends the sequence.
    pub fn ascii_pieces(&self, positions: &[u32], chunk: usize) -> io::Result<Pieces> {
        self.ascii_pieces_with(positions, chunk, piece_workers())
    }

    /// `ascii_pieces` made by at most `workers` threads.
    pub(crate) fn ascii_pieces_with(&self, positions: &[u32], chunk: usize, workers: usize) -> io::Result<Pieces> {
        let mut sizes = Vec::with_capacity(positions.len());
        let mut total = 0usize;
        for &p in positions {
            let len = match self.span(p) {
                Span::None => 0,
                Span::File { len, .. } | Span::Mem { len, .. } => len as usize,
            };
            sizes.push(len);
            total = total.saturating_add(len + 1);
        }
        if total <= chunk.saturating_mul(2) {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            let _ = tx.send(self.joined_spliced(positions));
            return Ok(Pieces { rx: vec![rx], recycle: Vec::new(), next: AtomicUsize::new(0) });
        }
        // A store of just these lines that the thread owns: the same file (a duplicate
        // descriptor: reads are positioned) and copies of the in-memory lines.
        let mut own = LineStore::default();
        own.file = self.file.as_ref().map(File::try_clone).transpose()?;
        own.map = self.map.clone();
        own.memory = self.memory.clone();
        for (i, &p) in positions.iter().enumerate() {
            let span = match self.span(p) {
                Span::Mem { off, len } => own.keep(&self.mem[off as usize..(off + len) as usize]),
                other => other,
            };
            own.push(span);
            if let Some(strings) = self.mapped_strings(p) {
                own.add_plain(i as u32, strings.to_vec());
            }
        }
        let mut bounds = vec![0u32];
        let mut acc = 0usize;
        for (i, len) in sizes.into_iter().enumerate() {
            acc += len + 1;
            if acc >= chunk {
                bounds.push(i as u32 + 1);
                acc = 0;
            }
        }
        if *bounds.last().unwrap_or(&0) != positions.len() as u32 {
            bounds.push(positions.len() as u32);
        }
        // Piece `i` is made by worker `i % workers`; each works two pieces ahead at most, so
        // memory stays bounded if the caller is slow.
        let own = Arc::new(own);
        let workers = workers.clamp(1, bounds.len() - 1);
        let (mut rxs, mut recycles) = (Vec::with_capacity(workers), Vec::with_capacity(workers));
        for k in 0..workers {
            let (tx, rx) = std::sync::mpsc::sync_channel(2);
            // Pieces the caller is done with come back to be filled again.
            let (recycle, used) = std::sync::mpsc::channel::<Piece>();
            let (own, bounds) = (Arc::clone(&own), bounds.clone());
            let spawned = std::thread::Builder::new().name("pi-session-pieces".into()).spawn(move || {
                let mut buf = Vec::new();
                for w in bounds.windows(2).skip(k).step_by(workers) {
                    let ids: Vec<u32> = (w[0]..w[1]).collect();
                    let mut piece = used.try_recv().unwrap_or_default();
                    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        own.splice_into(&ids, &mut buf, &mut piece)
                    }))
                    .unwrap_or_else(|_| Err(io::Error::other("internal error while reading lines")));
                    piece.worker = k;
                    let failed = made.is_err();
                    // The receiver is gone (the caller stopped early): stop too.
                    if tx.send(made.map(|()| piece)).is_err() || failed {
                        break;
                    }
                }
            });
            // (Threads already started stop at their first piece: nobody receives it.)
            spawned?;
            rxs.push(rx);
            recycles.push(recycle);
        }
        Ok(Pieces { rx: rxs, recycle: recycles, next: AtomicUsize::new(0) })
    }

    /// The text of a line held in memory, borrowed (`None` for file-backed or absent lines).
    pub fn mem_line(&self, pos: u32) -> Option<&[u8]> {
        match self.span(pos) {
            Span::Mem { off, len } => Some(&self.mem[off as usize..(off + len) as usize]),
            Span::None | Span::File { .. } => None,
        }
    }

    /// One line, if the item has one.
    pub fn line(&self, pos: u32) -> io::Result<Option<Vec<u8>>> {
        let mut out = None;
        self.for_each(&[pos], |_, l| out = l.map(<[u8]>::to_vec))?;
        Ok(out)
    }
}

/// How many threads make the pieces of a large text: one per CPU, up to 4 (the caller's thread
/// parses them meanwhile, and on a 100 MB session two threads halve the wait).
fn piece_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4)
}

/// One piece of `LineStore::ascii_pieces`: its lines (joined by `\n`, ASCII) and the
/// strings taken out of them.
#[derive(Default, Debug)]
pub struct Piece {
    pub text: Vec<u8>,
    pub ex: Extracted,
    /// The mapping that `ex.mapped` points into (set when there is one).
    pub map: Option<Arc<Mapping>>,
    /// The thread that made it, which gets it back to fill again.
    worker: usize,
}

impl Piece {
    fn clear(&mut self) {
        self.text.clear();
        self.ex.latin1.clear();
        self.ex.utf16.clear();
        self.ex.patches.clear();
        self.ex.mapped.clear();
        self.map = None;
    }
}

/// The pieces of `LineStore::ascii_pieces`, in order; `None` after the last.
pub struct Pieces {
    /// Piece `i` comes from `rx[i % rx.len()]`.
    rx: Vec<std::sync::mpsc::Receiver<io::Result<Piece>>>,
    /// Where each worker takes pieces back (none when the pieces were made at once).
    recycle: Vec<std::sync::mpsc::Sender<Piece>>,
    /// The index of the next piece.
    next: AtomicUsize,
}

impl Pieces {
    /// The next piece, waiting for it if it is not ready yet.
    pub fn next_piece(&self) -> io::Result<Option<Piece>> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        // A worker with no piece left has hung up: the pieces are over.
        match self.rx[i % self.rx.len()].recv() {
            Ok(piece) => piece.map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Hands back a piece whose contents the caller has copied (or taken): its buffers are filled
    /// again for a later piece. Memory that is already mapped costs no page faults, and
    /// fresh memory costs one per 4 KiB (about a third of the time on a 20 MB session).
    pub fn recycle(&self, piece: Piece) {
        if let Some(tx) = self.recycle.get(piece.worker) {
            let _ = tx.send(piece);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn file_and_memory_lines() {
        let dir = crate::testutil::TempPath::dir("lines");
        let p = dir.join("a");
        let mut f = File::create(&p).unwrap();
        f.write_all(b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n").unwrap();
        let mut s = LineStore::new();
        s.set_file(File::open(&p).unwrap());
        s.push(Span::File { off: 0, len: 7 });
        s.push(Span::None);
        let kept = s.keep(b"{\"m\":0}");
        s.push(kept);
        s.push(Span::File { off: 16, len: 7 });
        s.push(Span::File { off: 8, len: 7 });
        assert_eq!(s.joined_ascii(&[0, 1, 2, 3, 4]).unwrap(), b"{\"a\":1}\n\n{\"m\":0}\n{\"c\":3}\n{\"b\":2}");
        assert_eq!(s.line(3).unwrap().unwrap(), b"{\"c\":3}");
        assert_eq!(s.joined_ascii(&[2]).unwrap(), b"{\"m\":0}");
        // Let go of the file (a rename over it on Windows): the same lines, from memory, even
        // once the file is gone.
        let mut moved = LineStore::new();
        moved.set_file(File::open(&p).unwrap());
        for span in [Span::File { off: 8, len: 7 }, Span::None, Span::File { off: 0, len: 7 }] {
            moved.push(span);
        }
        let kept = moved.keep(b"{\"m\":0}");
        moved.push(kept);
        moved.into_memory().unwrap();
        let copy = dir.join("b");
        std::fs::rename(&p, &copy).unwrap();
        assert!(moved.file.is_none());
        assert_eq!(moved.joined_ascii(&[0, 1, 2, 3]).unwrap(), b"{\"b\":2}\n\n{\"a\":1}\n{\"m\":0}");
        std::fs::rename(&copy, &p).unwrap();
        let mut out = Vec::new();
        crate::storage::text::escape_non_ascii("{\"é😀\":\"x\"}".as_bytes(), &mut out);
        assert_eq!(out, b"{\"\\u00e9\\ud83d\\ude00\":\"x\"}");
        // Non-ASCII before, inside and after the 32-byte blocks; invalid UTF-8 as U+FFFD.
        for at in [0, 1, 31, 32, 33, 63, 64, 100] {
            let mut line = vec![b'a'; 101];
            line[at] = 0xff;
            assert_eq!(crate::storage::text::first_non_ascii(&line), Some(at));
            let (mut got, mut want) = (Vec::new(), line[..at].to_vec());
            crate::storage::text::escape_non_ascii(&line, &mut got);
            want.extend_from_slice(b"\\ufffd");
            want.extend_from_slice(&line[at + 1..]);
            assert_eq!(got, want);
        }
        assert_eq!(crate::storage::text::first_non_ascii(&[b'a'; 200]), None);
        // In pieces (one made now, or many on a thread), the same text.
        for chunk in [1, 8, 16, 1000] {
            let pieces = s.ascii_pieces(&[0, 1, 2, 3, 4], chunk).unwrap();
            let mut got = Vec::new();
            while let Some(p) = pieces.next_piece().unwrap() {
                assert!(p.ex.is_empty());
                if !got.is_empty() {
                    got.push(b'\n');
                }
                got.extend_from_slice(&p.text);
                pieces.recycle(p);
            }
            assert_eq!(got, s.joined_ascii(&[0, 1, 2, 3, 4]).unwrap(), "chunk {chunk}");
        }
        // Unlinking the file does not lose the loaded lines.
        std::fs::remove_file(&p).unwrap();
        assert_eq!(s.joined_ascii(&[0, 4]).unwrap(), b"{\"a\":1}\n{\"b\":2}");
    }

    /// Pieces made on the thread into recycled buffers hold what a fresh `joined_spliced`
    /// of the same lines gives: nothing of an earlier piece is left in them.
    #[test]
    fn recycled_pieces_start_clean() {
        let p = crate::testutil::TempPath::file("pieces", "a");
        let mut f = File::create(&p).unwrap();
        let mut s = LineStore::new();
        let mut off = 0;
        for i in 0..60 {
            // Long strings that decode to Latin-1 or UTF-16, some lines without any, and
            // line lengths that vary so pieces hold different numbers of lines.
            let body = match i % 4 {
                0 => format!("{}\\n", "caf\u{e9} ".repeat(60 + i)),
                1 => format!("{}\\u2192", "x".repeat(300 + 7 * i)),
                2 => "short".to_string(),
                _ => format!("{}\u{1f600}", "\\\"q\\\" ".repeat(50)),
            };
            let line = format!(r#"{{"type":"message","i":{i},"message":{{"content":[{{"text":"{body}"}}]}}}}"#);
            f.write_all(line.as_bytes()).unwrap();
            f.write_all(b"\n").unwrap();
            s.push(Span::File { off, len: line.len() as u64 });
            off += line.len() as u64 + 1;
        }
        s.set_file(File::open(&p).unwrap());
        let all: Vec<u32> = (0..60).collect();
        // One thread, or several taking pieces in turn: the same pieces, in order.
        for workers in [1, 2, 3] {
            let mut from = 0;
            let mut spliced = 0;
            let pieces = s.ascii_pieces_with(&all, 1500, workers).unwrap();
            while let Some(got) = pieces.next_piece().unwrap() {
                let n = got.text.iter().filter(|&&b| b == b'\n').count() + 1;
                let want = s.joined_spliced(&all[from..from + n]).unwrap();
                assert_eq!(got.text, want.text, "piece at {from}, {workers} workers");
                assert_eq!(got.ex.latin1, want.ex.latin1, "piece at {from}");
                assert_eq!(got.ex.utf16, want.ex.utf16, "piece at {from}");
                assert_eq!(got.ex.patches, want.ex.patches, "piece at {from}");
                spliced += usize::from(!got.ex.is_empty());
                from += n;
                pieces.recycle(got);
            }
            assert_eq!(from, 60, "{workers} workers");
            assert!(spliced > 10, "{spliced} pieces had strings taken out");
            assert!(pieces.next_piece().unwrap().is_none(), "the end stays the end");
        }
        // A caller that stops early lets the threads go (nothing waits on them).
        let early = s.ascii_pieces_with(&all, 1500, 3).unwrap();
        assert!(early.next_piece().unwrap().is_some());
        drop(early);
        // A file cut short: the pieces before the cut, then its error, from whichever thread.
        f.set_len(off / 2).unwrap();
        for workers in [1, 3] {
            let pieces = s.ascii_pieces_with(&all, 1500, workers).unwrap();
            let mut good = 0;
            let err = loop {
                match pieces.next_piece() {
                    Ok(Some(_)) => good += 1,
                    Ok(None) => panic!("no error from a file cut short"),
                    Err(e) => break e,
                }
            };
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
            assert!(good > 2, "{good} pieces before the cut");
        }
    }
}
