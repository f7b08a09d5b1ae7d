//! `SessionInfo` scanning of one session file (`buildSessionInfo`).
//!
//! `buildSessionInfo` reads a file with `readline` (lines end at `\n`, `\r\n` or `\r`;
//! Bun's also at U+2028 and U+2029: [`LineBreaks`]), and any `TypeError` on odd content makes the whole file `null`. The scan here computes
//! it in one pass over the bytes, odd shapes included (escaped keys, `Array.prototype.join`
//! of text values that are not strings, an activity time of `Infinity`).

use std::fs::{self, File};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::model::entry::parse_iso_ms;
use crate::storage::json::{self, Kind, Value};

/// The result of scanning one file.
#[derive(Debug, PartialEq)]
pub enum InfoScan {
    /// `buildSessionInfo` returns `null`.
    Null,
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

/// Where the runtime's `readline` ends lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LineBreaks {
    /// Node's: at `\n`, `\r\n` and `\r`.
    #[default]
    Node,
    /// Bun's: also at U+2028 and U+2029 (bytes E2 80 A8 / E2 80 A9, which decode to them
    /// whatever precedes them: E2 is never a continuation byte). Splitting the line there
    /// gives Bun's lines but for empty ones (`"\r\u2028"` is two breaks there, one here),
    /// which the reference skips anyway.
    Unicode,
}

/// Node's `stats.mtimeMs`.
pub fn mtime_ms(meta: &fs::Metadata) -> f64 {
    crate::storage::platform::mtime_ms(meta)
}

/// Scans one session file. `abort` is polled between chunks. Lines are processed in place
/// in 1 MiB reads (a longer line grows the buffer), so memory stays bounded.
pub fn scan_info(path: &Path, abort: &AtomicBool) -> InfoScan {
    scan_info_and_header(path, abort, LineBreaks::Node).0
}

/// `scan_info`, and the file's `header::read_header` from the same first read (`None` when
/// the file could not be read).
pub fn scan_info_and_header(
    path: &Path,
    abort: &AtomicBool,
    breaks: LineBreaks,
) -> (InfoScan, Option<crate::model::header::HeaderScan>) {
    let mut header = None;
    let Ok(meta) = fs::metadata(path) else { return (InfoScan::Null, header) };
    // Only regular files (through symlinks) are read. A FIFO named `*.jsonl` would block the
    // open until a writer comes (pi 1.6.0's `list()` waits forever on one), and a device could
    // be read without end; what is not a regular file is not a session. A deliberate difference
    // from pi 1.6.0 (docs/fidelity.md); a folder named `*.jsonl` is `null` in both.
    if !meta.is_file() {
        return (InfoScan::Null, header);
    }
    let Ok(mut file) = crate::storage::platform::open_read(path) else { return (InfoScan::Null, header) };
    let info = scan_file(&mut file, &meta, abort, &mut header, breaks);
    (info, header)
}

fn scan_file(
    file: &mut File,
    meta: &fs::Metadata,
    abort: &AtomicBool,
    header: &mut Option<crate::model::header::HeaderScan>,
    breaks: LineBreaks,
) -> InfoScan {
    use crate::model::header::{MAX_HEADER_SCAN_BYTES, header_in};
    use std::io::Read;
    let info = Info { mtime_ms: mtime_ms(meta), ..Info::default() };
    let mut state = Scan { info, has_header: false, first_text: false, breaks };
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
    breaks: LineBreaks,
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

    /// A line as Node's readline ends them, in the pieces `self.breaks` makes of it.
    fn line(&mut self, raw: &[u8]) -> Step {
        let mut rest = raw;
        if self.breaks == LineBreaks::Unicode {
            let at = |r: &[u8]| {
                memchr::memmem::find_iter(r, b"\xE2\x80").find(|&i| matches!(r.get(i + 2), Some(0xA8 | 0xA9)))
            };
            while let Some(i) = at(rest) {
                if let Step::Stop(r) = self.piece(&rest[..i]) {
                    return Step::Stop(r);
                }
                rest = &rest[i + 3..];
            }
        }
        self.piece(rest)
    }

    fn piece(&mut self, raw: &[u8]) -> Step {
        // A SIMD check; the lossy decoder only runs on broken lines.
        let text = utf8(raw);
        let src = text.as_bytes();
        // A line V8 cannot hold as one string: the reference's readline throws (outside
        // its `try`, and its process dies); this session drops out of the listing instead.
        if crate::storage::text::over_js_string_limit(src) {
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
                // `1e999` is `Infinity` to `JSON.parse`, a number like any other here.
                self.activity(json::number_value(t.text(src)));
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
                                text.push_str(&utf8(&t));
                            }
                            Err(()) => outcome = Some(InfoScan::Null), // `join` throws
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

/// A content block: `Ok(Some(text))` for a text block (its `text` as `Array.prototype.join`
/// turns it into a string, escaped as in the file), `Ok(None)` for other blocks, `Err` where
/// `join` throws.
fn text_block(src: &[u8], block: Value) -> Result<Option<std::borrow::Cow<'_, [u8]>>, ()> {
    let mut ty = None;
    let mut text = None;
    json::for_each_member(src, block, |k, v| match &*key_name(k) {
        b"type" => ty = Some(v),
        b"text" => text = Some(v),
        _ => {}
    });
    let is_text = ty.is_some_and(|t| {
        t.kind == Kind::String && json::decode_string(&src[t.start + 1..t.end - 1]).is_ok_and(|t| t == "text")
    });
    if !is_text {
        return Ok(None);
    }
    match text {
        Some(t) if t.kind == Kind::String => Ok(Some(src[t.start + 1..t.end - 1].into())),
        // `join` turns undefined and null into "".
        None => Ok(Some((&b""[..]).into())),
        Some(t) => {
            let mut out = Vec::new();
            join_string(src, t, &mut out)?;
            Ok(Some(out.into()))
        }
    }
}

/// Appends `String(v)` as `Array.prototype.join` makes it of an element (null: ""), in the
/// file's escaped form. `Err` for an object with its own `toString` member: not callable, so
/// ToPrimitive falls to `valueOf`, which returns the object, and throws a TypeError.
fn join_string(src: &[u8], v: Value, out: &mut Vec<u8>) -> Result<(), ()> {
    match v.kind {
        Kind::Null => {}
        Kind::True => out.extend_from_slice(b"true"),
        Kind::False => out.extend_from_slice(b"false"),
        Kind::String => out.extend_from_slice(&src[v.start + 1..v.end - 1]),
        Kind::Number => {
            let mut b = ryu_js::Buffer::new();
            out.extend_from_slice(b.format(json::number_value(v.text(src))).as_bytes());
        }
        Kind::Object => {
            let mut own_to_string = false;
            json::for_each_member(src, v, |k, _| own_to_string |= &*key_name(k) == b"toString");
            if own_to_string {
                return Err(());
            }
            out.extend_from_slice(b"[object Object]");
        }
        Kind::Array => {
            let mut result = Ok(());
            let mut first = true;
            json::for_each_element(src, v, |e| {
                if !first {
                    out.push(b',');
                }
                first = false;
                if result.is_ok() {
                    result = join_string(src, e, out);
                }
            });
            result?;
        }
    }
    Ok(())
}

/// A member name as `JSON.parse` makes it (escapes decoded; a name with a lone surrogate
/// matches none the scan looks for).
fn key_name(k: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !k.contains(&b'\\') {
        return k.into();
    }
    json::decode_string(k).map_or((&b"\\"[..]).into(), |k| k.into_bytes().into())
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
            let (mut role, mut content, mut ts) = (None, None, None);
            let end = json::scan_object_members(src, at, |k2, at2| {
                let v = json::scan_value(src, at2)?;
                match &*key_name(k2) {
                    b"role" => role = Some(v),
                    b"content" => content = Some(v),
                    b"timestamp" => ts = Some(v),
                    _ => {}
                }
                Some(v)
            })?;
            let v = Value { kind: Kind::Object, start: at, end };
            f.message = Some(v);
            (f.role, f.content, f.msg_timestamp) = (role, content, ts);
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
            (f.role, f.content, f.msg_timestamp) = (None, None, None);
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
