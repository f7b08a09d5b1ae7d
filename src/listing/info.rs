//! Session discovery and `SessionInfo` scanning for `list`/`listAll`, `findById` and
//! `continueRecent`.
//!
//! `buildSessionInfo` reads a file with `readline` (lines end at `\n`, `\r\n` or `\r`),
//! and any `TypeError` on odd content makes the whole file `null`. The scan here computes
//! the common case in one pass over the bytes and reports `Fallback` for the rare shapes
//! whose JS semantics (e.g. `Array.prototype.join` of non-strings) are not worth copying;
//! the facade then runs the reference algorithm for that one file.

use std::fs::{self, File};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::entry::parse_iso_ms;
use crate::json::{self, Decoded, Kind, Value};

/// The result of scanning one file.
#[derive(Debug, PartialEq)]
pub enum InfoScan {
    /// `buildSessionInfo` returns `null`.
    Null,
    /// Shapes the fast path does not model: the facade runs the reference algorithm.
    Fallback,
    Info(Info),
}

/// Raw material of a `SessionInfo`. Strings are kept escaped, exactly as in the file,
/// so lone surrogates survive the trip to JS.
#[derive(Debug, PartialEq, Default)]
pub struct Info {
    pub header: String,
    /// Raw JSON of the latest session_info `name` (`None`: undefined).
    pub name: Option<String>,
    pub message_count: u64,
    /// `Math.max(0, …activity times)`; `None` when no message had an activity time.
    pub last_activity: Option<f64>,
    /// Entry timestamps that need `new Date(x).getTime()` in JS (raw JSON).
    pub pending_times: Vec<String>,
    pub first_message: String,
    pub all_text: String,
    pub mtime_ms: f64,
}

/// Node's `stats.mtimeMs`.
pub fn mtime_ms(meta: &fs::Metadata) -> f64 {
    crate::platform::mtime_ms(meta)
}

/// Scans one session file. `abort` is polled between chunks. Lines are processed in place
/// in 1 MiB reads (a longer line grows the buffer), so memory stays bounded.
pub fn scan_info(path: &Path, abort: &AtomicBool) -> InfoScan {
    scan_info_and_header(path, abort).0
}

/// `scan_info`, and the file's `header::read_header` from the same first read (`None` when
/// the file could not be read).
pub fn scan_info_and_header(path: &Path, abort: &AtomicBool) -> (InfoScan, Option<crate::header::HeaderScan>) {
    let mut header = None;
    let Ok(meta) = fs::metadata(path) else { return (InfoScan::Null, header) };
    let Ok(mut file) = crate::platform::open_read(path) else { return (InfoScan::Null, header) };
    let info = scan_file(&mut file, &meta, abort, &mut header);
    (info, header)
}

fn scan_file(
    file: &mut File,
    meta: &fs::Metadata,
    abort: &AtomicBool,
    header: &mut Option<crate::header::HeaderScan>,
) -> InfoScan {
    use crate::header::{MAX_HEADER_SCAN_BYTES, header_in};
    use std::io::Read;
    let mut state =
        Scan { info: Info { mtime_ms: mtime_ms(meta), ..Info::default() }, has_header: false, first_text: false };
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut start = 0; // first unprocessed byte in buf
    loop {
        if abort.load(Ordering::Relaxed) {
            return InfoScan::Null;
        }
        if start > 0 {
            buf.drain(..start);
        }
        let old = buf.len();
        // `read_to_end` reads into the spare capacity without zeroing it first (a `resize`
        // would memset a whole MiB for every file, however small).
        let n = match (&mut *file).take(1 << 20).read_to_end(&mut buf) {
            Ok(n) => n,
            Err(_) => return InfoScan::Null,
        };
        if header.is_none() {
            // The first read holds the first MiB (or the whole file): all `read_header` reads.
            let more = buf.len() >= MAX_HEADER_SCAN_BYTES && meta.len() > MAX_HEADER_SCAN_BYTES as u64;
            *header = Some(header_in(&buf, more));
        }
        let eof = n == 0;
        // Complete lines (all the rest at EOF).
        let end = if eof { buf.len() } else { memchr::memrchr(b'\n', &buf[old..]).map_or(0, |i| old + i + 1) };
        let mut i = 0;
        while i < end {
            let nl = memchr::memchr(b'\n', &buf[i..end]).map_or(end, |p| i + p);
            if let Step::Stop(result) = state.physical_line(&buf[i..nl]) {
                return result;
            }
            i = nl + 1;
        }
        start = end.min(buf.len());
        if eof {
            break;
        }
    }
    if !state.has_header {
        return InfoScan::Null;
    }
    InfoScan::Info(state.info)
}

/// `bytes` as text: borrowed when valid UTF-8 (a SIMD check), else decoded lossily as
/// `readFileSync(…, "utf8")` would.
fn utf8(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

enum Step {
    Continue,
    Stop(InfoScan),
}

struct Scan {
    info: Info,
    has_header: bool,
    first_text: bool,
}

impl Scan {
    /// A `\n`-terminated line; readline also ends lines at `\r` (`\r\n` is one break).
    fn physical_line(&mut self, raw: &[u8]) -> Step {
        if memchr::memchr(b'\r', raw).is_none() {
            return self.line(raw);
        }
        let mut pieces = raw.split(|&b| b == b'\r').peekable();
        while let Some(piece) = pieces.next() {
            // A trailing "\r" before "\n" ends the line without an empty extra line.
            if piece.is_empty() && pieces.peek().is_none() {
                break;
            }
            if let Step::Stop(r) = self.line(piece) {
                return Step::Stop(r);
            }
        }
        Step::Continue
    }

    fn line(&mut self, raw: &[u8]) -> Step {
        // A SIMD check; the lossy decoder only runs on broken lines.
        let text = utf8(raw);
        let src = text.as_bytes();
        // A line V8 cannot hold as one string: the reference's readline throws (outside
        // its `try`, and its process dies); this session drops out of the listing instead.
        if crate::text::over_js_string_limit(src) {
            return Step::Stop(InfoScan::Null);
        }
        let Some(fields) = scan_line(src) else { return Step::Continue };
        if !self.has_header {
            if fields.ty.as_deref() != Some("session") {
                return Step::Stop(InfoScan::Null);
            }
            self.has_header = true;
            self.info.header = text.into_owned();
            return Step::Continue;
        }
        match fields.ty.as_deref() {
            Some("session_info") => match fields.name {
                None => self.info.name = None,
                Some(n) if n.kind == Kind::Null => self.info.name = None,
                Some(n) if n.kind == Kind::String => self.info.name = Some(text[n.start..n.end].to_owned()),
                Some(_) => return Step::Stop(InfoScan::Null), // `.trim` of a non-string throws
            },
            Some("message") => return self.message(src, &fields),
            _ => {}
        }
        Step::Continue
    }

    fn message(&mut self, src: &[u8], fields: &TopFields) -> Step {
        self.info.message_count += 1;
        let Some(m) = fields.message else { return Step::Stop(InfoScan::Null) };
        if m.kind == Kind::Null {
            return Step::Stop(InfoScan::Null);
        }
        if m.kind != Kind::Object {
            return Step::Continue; // primitives and arrays have no role
        }
        if fields.escaped_message_key {
            return Step::Stop(InfoScan::Fallback);
        }
        // isMessageWithContent: typeof role === "string" && "content" in message
        let Some(role) = fields.role.filter(|r| r.kind == Kind::String) else { return Step::Continue };
        let Some(content) = fields.content else { return Step::Continue };
        // `"\u0061ssistant"` is the role `assistant` to `JSON.parse`.
        let role = &src[role.start + 1..role.end - 1];
        let role: std::borrow::Cow<'_, [u8]> = match role.contains(&b'\\') {
            true => json::decode_string(role).map_or(std::borrow::Cow::Borrowed(&b""[..]), |r| r.into_bytes().into()),
            false => role.into(),
        };
        let is_user = *role == *b"user";
        if !is_user && *role != *b"assistant" {
            return Step::Continue;
        }
        // Activity time.
        match fields.msg_timestamp {
            Some(t) if t.kind == Kind::Number => {
                let n = json::number_value(t.text(src));
                if !n.is_finite() {
                    return Step::Stop(InfoScan::Fallback);
                }
                self.activity(n);
            }
            _ => match fields.timestamp {
                None => {}
                Some(t) if t.kind == Kind::String => match parse_iso_ms(&src[t.start + 1..t.end - 1]) {
                    Some(ms) => self.activity(ms),
                    None => self.info.pending_times.push(utf8(t.text(src)).into_owned()),
                },
                Some(t) => self.info.pending_times.push(utf8(t.text(src)).into_owned()),
            },
        }
        // extractTextContent.
        let mut text = String::new();
        match content.kind {
            Kind::String => text.push_str(&utf8(&src[content.start + 1..content.end - 1])),
            Kind::Array => {
                let mut first = true;
                let mut outcome = None;
                json::for_each_element(src, content, |block| {
                    if outcome.is_some() {
                        return;
                    }
                    match block.kind {
                        Kind::Null => outcome = Some(InfoScan::Null), // null.type throws
                        Kind::Object => match text_block(src, block) {
                            Ok(None) => {}
                            Ok(Some(t)) => {
                                if !first {
                                    text.push(' ');
                                }
                                first = false;
                                text.push_str(&utf8(t));
                            }
                            Err(()) => outcome = Some(InfoScan::Fallback),
                        },
                        _ => {}
                    }
                });
                if let Some(o) = outcome {
                    return Step::Stop(o);
                }
            }
            _ => return Step::Stop(InfoScan::Null), // `.filter` of a non-array throws
        }
        if text.is_empty() {
            return Step::Continue;
        }
        if self.first_text {
            self.info.all_text.push(' ');
        }
        self.first_text = true;
        self.info.all_text.push_str(&text);
        if is_user && self.info.first_message.is_empty() {
            self.info.first_message = text;
        }
        Step::Continue
    }

    fn activity(&mut self, ms: f64) {
        self.info.last_activity = Some(self.info.last_activity.unwrap_or(0.0).max(ms));
    }
}

/// A content block: `Ok(Some(text))` for a text block with a string text, `Ok(None)` for
/// other blocks, `Err` when the text is not a string (JS join semantics: fall back).
fn text_block(src: &[u8], block: Value) -> Result<Option<&[u8]>, ()> {
    let mut ty = None;
    let mut text = None;
    let mut escaped = false;
    json::for_each_member(src, block, |k, v| match k {
        b"type" => ty = Some(v),
        b"text" => text = Some(v),
        _ if k.contains(&b'\\') => escaped = true,
        _ => {}
    });
    if escaped {
        return Err(());
    }
    let ty = ty.filter(|t| t.kind == Kind::String).map(|t| &src[t.start + 1..t.end - 1]);
    if ty.is_some_and(|t| t.contains(&b'\\')) {
        return Err(()); // an escaped value (`"t\u0065xt"`): the reference algorithm decides
    }
    let is_text = ty == Some(b"text");
    if !is_text {
        return Ok(None);
    }
    match text {
        Some(t) if t.kind == Kind::String => Ok(Some(&src[t.start + 1..t.end - 1])),
        _ => Err(()),
    }
}

/// What a listing needs from one line, read in a single validating pass.
#[derive(Default)]
struct TopFields {
    ty: Option<String>,
    name: Option<Value>,
    message: Option<Value>,
    timestamp: Option<Value>,
    /// Members of the message object (when it is one).
    role: Option<Value>,
    content: Option<Value>,
    msg_timestamp: Option<Value>,
    escaped_message_key: bool,
}

fn key_is(k: &[u8], name: &str) -> bool {
    k == name.as_bytes() || (k.contains(&b'\\') && json::decode_string(k).ok().as_deref() == Some(name))
}

/// Validates a line (`JSON.parse` grammar) and picks the listing fields; `None` for lines
/// the reference skips (malformed, or falsy values).
fn scan_line(src: &[u8]) -> Option<TopFields> {
    let start = json::skip_whitespace(src, 0);
    let mut f = TopFields::default();
    if src.get(start) != Some(&b'{') {
        let v = json::parse_document(src)?;
        return v.truthy(src).then_some(f);
    }
    let end = json::scan_object_members(src, start, |k, at| {
        if key_is(k, "message") && src.get(at) == Some(&b'{') {
            let (mut role, mut content, mut ts, mut escaped) = (None, None, None, false);
            let end = json::scan_object_members(src, at, |k2, at2| {
                let v = json::scan_value(src, at2)?;
                match k2 {
                    b"role" => role = Some(v),
                    b"content" => content = Some(v),
                    b"timestamp" => ts = Some(v),
                    _ if k2.contains(&b'\\') => escaped = true,
                    _ => {}
                }
                Some(v)
            })?;
            let v = Value { kind: Kind::Object, start: at, end };
            f.message = Some(v);
            (f.role, f.content, f.msg_timestamp, f.escaped_message_key) = (role, content, ts, escaped);
            return Some(v);
        }
        let v = json::scan_value(src, at)?;
        if key_is(k, "type") {
            f.ty = if v.kind == Kind::String { json::decode_string(&src[v.start + 1..v.end - 1]).ok() } else { None };
        } else if key_is(k, "name") {
            f.name = Some(v);
        } else if key_is(k, "timestamp") {
            f.timestamp = Some(v);
        } else if key_is(k, "message") {
            f.message = Some(v);
            (f.role, f.content, f.msg_timestamp, f.escaped_message_key) = (None, None, None, false);
        }
        Some(v)
    })?;
    if json::skip_whitespace(src, end) != src.len() {
        return None;
    }
    Some(f)
}

/// `f` over `items` on a few threads (for I/O-bound work such as `stat`), results in order.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    if items.len() < 64 || threads == 1 {
        return items.iter().map(f).collect();
    }
    let per = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = items.chunks(per).map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

/// Scans many files on a few threads, results in input order.
pub fn scan_many(paths: &[String], abort: &AtomicBool) -> Vec<InfoScan> {
    scan_many_map(paths, abort, |r| r)
}

/// `scan_many`, each result passed through `f` on the scanning thread.
fn scan_many_map<R: Send>(paths: &[String], abort: &AtomicBool, f: impl Fn(InfoScan) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8).min(paths.len().max(1));
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<R>> = (0..paths.len()).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= paths.len() {
                        break;
                    }
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        f(scan_info(Path::new(&paths[i]), abort))
                    }))
                    .unwrap_or_else(|_| f(InfoScan::Null));
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
            });
        }
    });
    slots.into_iter().map(|r| r.unwrap_or_else(|| f(InfoScan::Null))).collect()
}

/// Texts of many rows end to end, shared: the listing index decodes each frame's texts
/// into one block per kind, which JS gets as one string (without a copy where the host
/// allows) and slices the rows' texts out of.
#[derive(Clone, Debug)]
pub enum Block {
    Latin1(std::sync::Arc<Vec<u8>>),
    Utf16(std::sync::Arc<Vec<u16>>),
}

impl Block {
    /// Its identity (the shared allocation).
    fn key(&self) -> usize {
        match self {
            Block::Latin1(a) => std::sync::Arc::as_ptr(a) as usize,
            Block::Utf16(u) => std::sync::Arc::as_ptr(u) as usize,
        }
    }

    /// A text of its own, as a block: JS gets it as a string without a copy per batch.
    pub fn of(d: Decoded) -> Text {
        let (len, block) = match d {
            Decoded::Latin1(b) => (b.len(), Block::Latin1(std::sync::Arc::new(b))),
            Decoded::Utf16(u) => (u.len(), Block::Utf16(std::sync::Arc::new(u))),
        };
        Text { block, range: 0..len }
    }
}

/// A row's text: a range of a block (its own, or one shared by many rows).
#[derive(Clone)]
pub struct Text {
    pub block: Block,
    pub range: std::ops::Range<usize>,
}

/// A text's code units, wherever they are kept.
#[derive(Debug, PartialEq)]
pub enum Units<'a> {
    Latin1(&'a [u8]),
    Utf16(&'a [u16]),
}

impl Text {
    pub fn units(&self) -> Units<'_> {
        // The ranges were made within their blocks; empty if not.
        match &self.block {
            Block::Latin1(b) => Units::Latin1(b.get(self.range.clone()).unwrap_or_default()),
            Block::Utf16(u) => Units::Utf16(u.get(self.range.clone()).unwrap_or_default()),
        }
    }

    fn bytes(&self) -> usize {
        match self.units() {
            Units::Latin1(b) => b.len(),
            Units::Utf16(u) => u.len() * 2,
        }
    }
}

/// Equal when the units are: where they are kept does not matter.
impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.units() == other.units()
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.units().fmt(f)
    }
}

/// One file's scan result as the facade takes it: the JSON of the row around its two
/// texts, and the texts decoded (JS gets them as strings, not JSON to parse).
#[derive(Debug, PartialEq)]
pub enum Row {
    Null,
    Fallback,
    Info {
        /// `[header,name|null,count,lastActivity|null,[pendingTimes],`
        head: String,
        first: Text,
        all: Text,
        /// `mtimeMs]`
        tail: String,
    },
}

impl Row {
    pub fn new(r: &InfoScan) -> Row {
        let InfoScan::Info(info) = r else {
            return if *r == InfoScan::Fallback { Row::Fallback } else { Row::Null };
        };
        let mut head = String::with_capacity(info.header.len() + 64);
        head.push('[');
        head.push_str(&info.header);
        head.push(',');
        head.push_str(info.name.as_deref().unwrap_or("null"));
        head.push_str(&format!(",{},", info.message_count));
        match info.last_activity {
            Some(a) => head.push_str(&js_number(a)),
            None => head.push_str("null"),
        }
        head.push_str(",[");
        head.push_str(&info.pending_times.join(","));
        head.push_str("],");
        let all = Block::of(Decoded::new(info.all_text.as_bytes()));
        if all.range.len() > crate::text::max_js_string_units() {
            // `allMessages.join(" ")` throws a RangeError inside the reference's `try`: the
            // file is `null`, and the rest of the folder is listed.
            return Row::Null;
        }
        Row::Info {
            head,
            first: Block::of(Decoded::new(info.first_message.as_bytes())),
            all,
            tail: format!("{}]", js_number(info.mtime_ms)),
        }
    }

    /// Bytes held (for the cache's bound).
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Row::Info { head, first, all, tail } => head.len() + first.bytes() + all.bytes() + tail.len(),
            _ => 1,
        }
    }
}

/// The rows of one `scan_rows` call.
#[derive(Debug, Default)]
pub struct Rows {
    /// A JSON array with one item per file: `null` (not a session), `0` (the facade runs
    /// the reference algorithm) or `[header, name|null, count, lastActivity|null,
    /// [pendingTimes], fw, fs, fe, aw, as, ae, mtimeMs]`, where `firstMessage` is `fs..fe`
    /// of `blocks[fw]` (empty when `fs == fe`), and `allMessagesText` likewise.
    pub json: String,
    /// The blocks the rows' texts are in, each once.
    pub blocks: Vec<Block>,
    /// `blocks` by identity.
    block_at: std::collections::HashMap<usize, usize>,
    /// How many rows.
    pub len: usize,
    /// Each row with its texts in place (tests compare rows wherever their texts are kept).
    #[cfg(test)]
    pub rendered: Vec<String>,
}

impl Rows {
    fn push(&mut self, row: &Row) {
        self.len += 1;
        #[cfg(test)]
        self.rendered.push(match row {
            Row::Info { head, first, all, tail } => {
                let text = |t: &Text| match t.units() {
                    Units::Latin1(b) => b.iter().map(|&c| char::from(c)).collect::<String>(),
                    Units::Utf16(u) => String::from_utf16_lossy(u),
                };
                format!("{head}«{}»«{}»{tail}", text(first), text(all))
            }
            other => format!("{other:?}"),
        });
        self.json.push(if self.json.is_empty() { '[' } else { ',' });
        match row {
            Row::Null => self.json.push_str("null"),
            Row::Fallback => self.json.push('0'),
            Row::Info { head, first, all, tail } => {
                self.json.push_str(head);
                for text in [first, all] {
                    let (which, start, end) = if text.range.is_empty() {
                        (0, 0, 0)
                    } else {
                        let next = self.blocks.len();
                        let k = *self.block_at.entry(text.block.key()).or_insert(next);
                        if k == next {
                            self.blocks.push(text.block.clone());
                        }
                        (k, text.range.start, text.range.end)
                    };
                    self.json.push_str(&format!("{which},{start},{end},"));
                }
                self.json.push_str(tail);
            }
        }
    }

    fn finish(mut self) -> Rows {
        if self.json.is_empty() {
            self.json.push('[');
        }
        self.json.push(']');
        self
    }
}

/// A scan of many files that runs ahead of its reader: threads scan the files in order
/// while the caller takes the rows of one batch after another (`take`), so listing a
/// folder with progress costs about what one scan of all its files does.
///
/// Rows of files that have not changed since they were last scanned come from the
/// listing index (`list_index`): a session's `SessionInfo` depends only on its bytes, and
/// `/resume` lists the same folders again and again, in this process and the next.
///
/// `paths` must be every session file of the folders they are in (as `list` and `listAll`
/// pass them): when the last row is scanned, the index forgets the files of those folders
/// that are not among them.
pub struct Scanner {
    shared: std::sync::Arc<Shared>,
}

struct Shared {
    paths: Vec<String>,
    /// The next path to scan.
    next: AtomicUsize,
    /// Rows scanned (all of them: `finish` may update the listing index).
    done: AtomicUsize,
    state: std::sync::Mutex<State>,
    changed: std::sync::Condvar,
    abort: std::sync::Arc<AtomicBool>,
    /// Set when the scanner is dropped: its threads stop.
    stop: AtomicBool,
    /// How many files past the last batch taken the threads may scan: rows wait in memory
    /// until taken, so a slow reader (a slow progress callback) does not let them pile up.
    lookahead: usize,
}

struct State {
    rows: Vec<Option<std::sync::Arc<Row>>>,
    /// Threads still scanning.
    running: usize,
    /// The end of the furthest batch taken.
    taken: usize,
}

/// Files the scan may run ahead of the batches taken.
const LOOKAHEAD: usize = 1024;

impl Scanner {
    /// Starts scanning `paths`; `abort` stops the scan early (rows not scanned are `null`).
    pub fn start(paths: Vec<String>, abort: std::sync::Arc<AtomicBool>) -> Scanner {
        Scanner::start_with(paths, abort, LOOKAHEAD)
    }

    fn start_with(paths: Vec<String>, abort: std::sync::Arc<AtomicBool>, lookahead: usize) -> Scanner {
        let wanted = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8).min(paths.len());
        let shared = std::sync::Arc::new(Shared {
            state: std::sync::Mutex::new(State { rows: vec![None; paths.len()], running: wanted, taken: 0 }),
            paths,
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            changed: std::sync::Condvar::new(),
            abort,
            stop: AtomicBool::new(false),
            lookahead,
        });
        for _ in 0..wanted {
            let worker = shared.clone();
            let spawned = std::thread::Builder::new().name("pi-session-scan".into()).spawn(move || {
                while worker.scan_next() {}
                worker.lock().running -= 1;
                worker.changed.notify_all();
            });
            if spawned.is_err() {
                // With no thread at all, `take` scans.
                shared.lock().running -= 1;
            }
        }
        Scanner { shared }
    }

    /// The rows of `range` (within the paths), waiting for them. After an abort the rows
    /// not scanned are `null`.
    pub fn take(&self, range: std::ops::Range<usize>) -> Rows {
        self.take_from(range, false)
    }

    /// `take(range)`, and the rows after it that are ready too (rows from the listing index
    /// are ready at once: a listing of unchanged files is one call, not one per batch).
    pub fn take_ready(&self, range: std::ops::Range<usize>) -> Rows {
        self.take_from(range, true)
    }

    /// After the last row was taken: updates the listing index with the rows of this scan
    /// (see `list_index::finish_listing`; it may compress and write for a while, so the
    /// facade runs it after handing out the listing). Nothing when the scan did not finish.
    pub fn finish(&self) {
        let sh = &self.shared;
        if sh.done.load(Ordering::Acquire) == sh.paths.len() && !sh.cancelled() {
            crate::listing::index::finish_listing(&sh.paths);
        }
    }

    fn take_from(&self, range: std::ops::Range<usize>, more: bool) -> Rows {
        let sh = &self.shared;
        let len = sh.paths.len();
        let end = range.end.min(len);
        let start = range.start.min(end);
        {
            let mut state = sh.lock();
            state.taken = state.taken.max(end);
        }
        sh.changed.notify_all();
        if sh.lock().running == 0 {
            while sh.scan_next_before(end) {}
        }
        let mut state = sh.lock();
        let stop = loop {
            let gave_up = state.running == 0 || sh.cancelled();
            if gave_up || state.rows[start..end].iter().all(Option::is_some) {
                // Every row that is ready, also once the workers are done.
                let mut stop = end;
                while more && stop < len && state.rows[stop].is_some() {
                    stop += 1;
                }
                break stop;
            }
            state = sh.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        };
        state.taken = state.taken.max(stop);
        let mut out = Rows::default();
        for slot in &mut state.rows[start..stop] {
            // Taken: the batch's rows are not needed again, so their memory goes with them.
            out.push(slot.take().as_deref().unwrap_or(&Row::Null));
        }
        drop(state);
        sh.changed.notify_all();
        out.finish()
    }
}

impl Drop for Scanner {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.changed.notify_all();
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cancelled(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }

    /// Scans the next pending file, once it is within the lookahead; false when there is
    /// none left (or the scan stopped).
    fn scan_next(&self) -> bool {
        let mut state = self.lock();
        while self.next.load(Ordering::Relaxed) >= state.taken.saturating_add(self.lookahead) && !self.cancelled() {
            // A timeout, so an abort (a flag, no notification) is noticed.
            let wait = self.changed.wait_timeout(state, std::time::Duration::from_millis(50));
            state = wait.unwrap_or_else(|e| e.into_inner()).0;
        }
        drop(state);
        self.scan_next_before(usize::MAX)
    }

    /// `scan_next` for a pending file before `end`.
    fn scan_next_before(&self, end: usize) -> bool {
        if self.cancelled() || self.next.load(Ordering::Relaxed) >= end {
            return false;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let Some(path) = self.paths.get(i) else { return false };
        let row =
            std::panic::catch_unwind(|| row_of(path, &self.abort)).unwrap_or_else(|_| std::sync::Arc::new(Row::Null));
        // Counted before it is published: whoever takes the last row sees them all done.
        self.done.fetch_add(1, Ordering::AcqRel);
        self.lock().rows[i] = Some(row);
        self.changed.notify_all();
        true
    }
}

/// Forgets every row kept in memory (the benchmark times listings with nothing cached).
pub fn clear_cache() {
    crate::listing::index::clear_memory();
}

/// The row of one file: from the listing index (see `list_index`), or scanned (and
/// recorded there, with its header, unless the scan was aborted). After rows of every
/// session file of a folder, `list_index::finish_listing` writes its index.
pub fn row_of(path: &str, abort: &AtomicBool) -> std::sync::Arc<Row> {
    let path = Path::new(path);
    let before = crate::platform::stamp(path);
    if let Some(row) = before.as_ref().and_then(|st| crate::listing::index::row(path, st)) {
        return row;
    }
    let (info, header) = scan_info_and_header(path, abort);
    let row = std::sync::Arc::new(Row::new(&info));
    if let (false, Some(before)) = (abort.load(Ordering::Relaxed), before) {
        // The header too: discovery (`findById`) then reads no file the listing has seen.
        if let Some(after) = crate::platform::stamp(path) {
            crate::listing::index::record(path, &before, &after, Some(row.clone()), header.as_ref());
        }
    }
    row
}

/// The rows of all `paths` at once (see `Scanner`).
pub fn scan_rows(paths: &[String], abort: &AtomicBool) -> Rows {
    let flag = std::sync::Arc::new(AtomicBool::new(abort.load(Ordering::Relaxed)));
    let scanner = Scanner::start(paths.to_vec(), flag);
    let rows = scanner.take(0..paths.len());
    scanner.finish();
    rows
}

fn js_number(v: f64) -> String {
    let mut b = ryu_js::Buffer::new();
    b.format(v).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(content: &str) -> InfoScan {
        let d = std::env::temp_dir().join(format!("psn-list-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&d).unwrap();
        let p = d.join("x.jsonl");
        fs::write(&p, content).unwrap();
        scan_info(&p, &AtomicBool::new(false))
    }

    /// Writes one file per text in a fresh temp dir; returns their paths, in order.
    fn write_files(label: &str, texts: impl IntoIterator<Item = String>) -> Vec<String> {
        let d = std::env::temp_dir().join(format!("psn-list-{label}-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&d).unwrap();
        texts
            .into_iter()
            .enumerate()
            .map(|(i, text)| {
                let p = d.join(format!("{i}.jsonl"));
                fs::write(&p, text).unwrap();
                p.to_string_lossy().into_owned()
            })
            .collect()
    }

    /// A session of `messages` user messages of `chars` ASCII characters each.
    fn big_session(messages: usize, chars: usize) -> String {
        let text = "a".repeat(chars);
        let mut s = String::from(
            "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
        );
        for i in 0..messages {
            s.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"m{i}\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n"
            ));
        }
        s
    }

    /// Runs `f` with the listing's JS string limit at `units` on this thread.
    fn with_limit<R>(units: usize, f: impl FnOnce() -> R) -> R {
        crate::text::TEST_JS_STRING_UNITS.with(|l| l.set(units));
        let r = f();
        crate::text::TEST_JS_STRING_UNITS.with(|l| l.set(crate::text::MAX_JS_STRING_UNITS));
        r
    }

    #[test]
    fn texts_over_the_js_string_limit_make_the_row_null() {
        assert_eq!(crate::text::MAX_JS_STRING_UNITS, 536_870_888);
        with_limit(1000, || {
            // Three messages of 400: each line fits in a JS string, the joined text does
            // not (the reference's `join` throws inside its `try`: that file alone is
            // `null`).
            let scanned = scan(&big_session(3, 400));
            let InfoScan::Info(i) = &scanned else { panic!("scanned: {scanned:?}") };
            assert_eq!(i.message_count, 3);
            assert_eq!(Row::new(&scanned), Row::Null);
            // Joined with its space, 999 units: a row.
            assert!(matches!(Row::new(&scan(&big_session(2, 499))), Row::Info { .. }));
            assert_eq!(Row::new(&scan(&big_session(2, 500))), Row::Null);
        });
    }

    #[test]
    fn a_line_over_the_js_string_limit_drops_the_session() {
        with_limit(1000, || {
            // One line longer than V8 can hold: the reference's readline throws outside its
            // `try` (its process dies); the session drops out here.
            let line = |s: &str| s.lines().nth(1).unwrap().len();
            let over = big_session(1, 1000 - line(&big_session(1, 0)) + 1);
            assert_eq!(line(&over), 1001);
            assert_eq!(scan(&over), InfoScan::Null);
            assert!(matches!(scan(&big_session(1, 1000 - line(&big_session(1, 0)))), InfoScan::Info(_)));
            // A line as long in bytes but not in UTF-16 units is no such line.
            let s = big_session(1, 0).replace("\"content\":\"\"", &format!("\"content\":\"{}\"", "é".repeat(480)));
            assert!(line(&s) > 1000);
            assert!(matches!(scan(&s), InfoScan::Info(_)));
        });
    }

    #[test]
    fn basic_info() {
        let InfoScan::Info(i) = scan(concat!(
            "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
            "{\"type\":\"message\",\"id\":\"a\",\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}\r\n",
            "{\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"thinking\"},{\"type\":\"text\",\"text\":\"\"}],\"timestamp\":5}}\n",
            "{\"type\":\"session_info\",\"name\":\" n \"}\n",
        )) else {
            panic!()
        };
        assert_eq!(i.message_count, 2);
        assert_eq!(i.first_message, "hello");
        assert_eq!(i.all_text, "hello x ");
        assert_eq!(i.name.as_deref(), Some("\" n \""));
        assert_eq!(i.last_activity, Some(1704067201000.0));
    }

    #[test]
    fn cached_rows_follow_file_changes() {
        let d = std::env::temp_dir().join(format!("psn-list-cache-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&d).unwrap();
        let p = d.join("s.jsonl");
        let head = "{\"type\":\"session\",\"id\":\"s\"}\n";
        let msg = "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
        fs::write(&p, format!("{head}{msg}")).unwrap();
        let paths = vec![p.to_string_lossy().into_owned()];
        let no = AtomicBool::new(false);
        let first = scan_rows(&paths, &no);
        assert!(first.json.contains(",1,"), "{first:?}");
        assert!(first.rendered[0].contains("«hi»«hi»"), "{first:?}"); // firstMessage, allMessagesText
        let again = scan_rows(&paths, &no);
        // (The texts may come back in a shared block: compare them, not where they are.)
        assert_eq!(again.rendered, first.rendered);
        fs::write(&p, format!("{head}{msg}{msg}")).unwrap();
        let second = scan_rows(&paths, &no);
        assert!(second.json.contains(",2,"), "an appended file is scanned again: {second:?}");
        assert!(second.rendered[0].contains("«hi»«hi hi»"), "{second:?}");
    }

    #[test]
    fn rows_carry_decoded_texts() {
        let head = "{\"type\":\"session\",\"id\":\"s\"}\n";
        let msg = |role: &str, text: &str| {
            format!("{{\"type\":\"message\",\"message\":{{\"role\":\"{role}\",\"content\":\"{text}\"}}}}\n")
        };
        let paths = write_files(
            "rows",
            [
                format!("{head}{}{}", msg("assistant", "caf\u{e9} \\n"), msg("user", "q\\\"")),
                "not a session\n".to_string(),
                format!("{head}{}", msg("user", "\u{2192} \\ud83d\\ude00")),
                head.to_string(),
            ],
        );
        let rows = scan_rows(&paths, &AtomicBool::new(false));
        // firstMessage and allMessagesText: `q"` and `café \n q"` (Latin-1), then `→ 😀`
        // twice (UTF-16), then two empty texts; the second file is not a session.
        let r = &rows.rendered;
        assert!(r[0].contains("«q\"»«café \n q\"»"), "{r:?}");
        assert_eq!(r[1], "Null");
        assert!(r[2].contains("«\u{2192} \u{1f600}»«\u{2192} \u{1f600}»"), "{r:?}");
        assert!(r[3].contains("«»«»"), "{r:?}");
        // Each text is a block of its own (`which` 0, 1, …: JS gets it as one string);
        // an empty one is no block.
        let json = rows.json;
        assert_eq!(rows.blocks.len(), 4);
        assert!(json.starts_with("[[{\"type\":\"session\",\"id\":\"s\"},null,2,null,[],0,0,2,1,0,9,"), "{json}");
        assert!(json.contains("],null,[{\"type\":\"session\",\"id\":\"s\"},null,1,null,[],2,0,4,3,0,4,"), "{json}");
        assert!(json.contains("],[{\"type\":\"session\",\"id\":\"s\"},null,0,null,[],0,0,0,0,0,0,"), "{json}");
        assert!(json.ends_with("]]"), "{json}");
    }

    #[test]
    fn scanner_batches_and_abort() {
        let paths = write_files(
            "scanner",
            (0..7).map(|i| {
                let msg =
                    format!("{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"m{i} \u{2192}\"}}}}");
                if i == 3 { "junk\n".to_string() } else { format!("{{\"type\":\"session\",\"id\":\"{i}\"}}\n{msg}\n") }
            }),
        );
        // Batch by batch, the same rows as all at once (each batch's texts start at 0).
        let whole = scan_rows(&paths, &AtomicBool::new(false));
        let scanner = Scanner::start(paths.clone(), std::sync::Arc::new(AtomicBool::new(false)));
        let kinds = |json: &str| {
            let v = json::parse_document(json.as_bytes()).unwrap();
            let mut kinds = Vec::new();
            json::for_each_element(json.as_bytes(), v, |e| kinds.push(e.kind));
            kinds
        };
        let (mut texts, mut rows) = (Vec::new(), Vec::new());
        for range in [0..3, 3..5, 5..7] {
            let batch = scanner.take(range.clone());
            texts.extend(batch.rendered);
            rows.extend(kinds(&batch.json));
        }
        assert_eq!(texts, whole.rendered);
        assert_eq!(rows, kinds(&whole.json));
        assert_eq!(rows.iter().filter(|&&k| k == Kind::Null).count(), 1, "{rows:?}"); // the junk file
        // Aborted before it starts: every row is null, and nothing waits forever.
        let rows = Scanner::start(paths.clone(), std::sync::Arc::new(AtomicBool::new(true))).take(0..7);
        assert_eq!(rows.json, "[null,null,null,null,null,null,null]");
        // Past the end, or empty.
        assert_eq!(scanner.take(6..100).json, "[null]");
        assert_eq!(Scanner::start(Vec::new(), std::sync::Arc::new(AtomicBool::new(false))).take(0..0).json, "[]");
    }

    #[test]
    fn scanner_stays_within_its_lookahead() {
        let paths = write_files("ahead", (0..60).map(|i| format!("{{\"type\":\"session\",\"id\":\"{i}\"}}\n")));
        let scanner = Scanner::start_with(paths.clone(), std::sync::Arc::new(AtomicBool::new(false)), 4);
        let scanned = || scanner.shared.lock().rows.iter().filter(|r| r.is_some()).count();
        std::thread::sleep(std::time::Duration::from_millis(100));
        // Up to the lookahead, plus a file per thread that claimed one as it was reached.
        assert!(scanned() <= 4 + 8, "{} rows scanned before any was taken", scanned());
        let first = scanner.take(0..10);
        assert_eq!(first.json.matches("\"type\":\"session\"").count(), 10);
        let rest = scanner.take(10..60);
        assert_eq!(rest.json.matches("\"type\":\"session\"").count(), 50);
        // Dropping a scanner whose threads wait for a reader ends them.
        let idle = Scanner::start_with(paths, std::sync::Arc::new(AtomicBool::new(false)), 1);
        let shared = idle.shared.clone();
        drop(idle);
        for _ in 0..100 {
            if shared.lock().running == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(shared.lock().running, 0);
    }

    #[test]
    fn a_greedy_take_gets_every_ready_row_also_once_the_workers_are_done() {
        let paths = write_files("greedy", (0..50).map(|i| format!("{{\"type\":\"session\",\"id\":\"{i}\"}}\n")));
        let scanner = Scanner::start(paths, std::sync::Arc::new(AtomicBool::new(false)));
        for _ in 0..500 {
            if scanner.shared.lock().running == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(scanner.shared.lock().running, 0, "the workers finished");
        // One call for all of them, not one per batch.
        let rows = scanner.take_ready(0..3);
        assert_eq!(rows.json.matches("\"type\":\"session\"").count(), 50);
        assert_eq!(scanner.take_ready(50..53).json, "[]");
    }

    #[test]
    fn odd_shapes() {
        assert_eq!(scan("{\"type\":\"message\"}\n"), InfoScan::Null);
        assert_eq!(scan(""), InfoScan::Null);
        assert_eq!(scan("{\"type\":\"session\"}\n{\"type\":\"message\",\"message\":null}\n"), InfoScan::Null);
        assert_eq!(scan("{\"type\":\"session\"}\n{\"type\":\"session_info\",\"name\":5}\n"), InfoScan::Null);
        assert_eq!(
            scan(
                "{\"type\":\"session\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":1}]}}\n"
            ),
            InfoScan::Fallback
        );
    }
}
