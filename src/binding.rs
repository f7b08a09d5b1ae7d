//! The napi binding: argument conversion, one core call, result conversion.
//! Every entry point runs under `guard`, so a Rust panic becomes a JS `Error`
//! instead of aborting Node.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::entry::{EntryType, Key, Role, Skeleton};
use crate::error::Error as CoreError;
use crate::listing;
use crate::session::{Commit, Opened, Session};
use crate::store::{self, HeaderScan, Loaded, WriteMode};
use crate::tree::Tree;

/// Marker that tells the facade an error is a system-call failure to rebuild Node-style.
const IO_MARK: &str = "\u{0}io:";

fn to_napi(e: CoreError) -> napi::Error {
    match e {
        CoreError::Io { errno, syscall, path, message } => {
            let p = path.map(|p| format!("{p:?}")).unwrap_or_else(|| "null".into());
            napi::Error::from_reason(format!(
                "{IO_MARK}{{\"errno\":{errno},\"syscall\":\"{syscall}\",\"path\":{p},\"message\":{message:?}}}"
            ))
        }
        other => napi::Error::from_reason(other.to_string()),
    }
}

fn guard<T>(f: impl FnOnce() -> std::result::Result<T, CoreError>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(to_napi),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(napi::Error::from_reason(format!("pi-session-native internal error: {msg}")))
        }
    }
}

/// A JS string read as UTF-8: its UTF-16 units copied out (a plain copy in V8), then
/// encoded by `text::utf16_to_utf8`, several times faster than V8's `WriteUtf8` behind
/// napi-rs's `String` (which also measures the UTF-8 length first, a full extra pass).
pub struct Text(Vec<u8>);

impl Text {
    fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text with a newline after it (room for it is reserved: no copy).
    fn into_line(mut self) -> Vec<u8> {
        self.0.push(b'\n');
        self.0
    }
}

impl TypeName for Text {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for Text {}

impl FromNapiValue for Text {
    unsafe fn from_napi_value(env: napi::sys::napi_env, value: napi::sys::napi_value) -> Result<Self> {
        let expected = || napi::Error::new(napi::Status::StringExpected, "expected a string");
        let mut units = 0usize;
        // SAFETY: a null buffer asks only for the length (in UTF-16 units), per Node-API.
        let status = unsafe { napi::sys::napi_get_value_string_utf16(env, value, std::ptr::null_mut(), 0, &mut units) };
        if status != napi::sys::Status::napi_ok {
            return Err(expected());
        }
        let mut utf16: Vec<u16> = Vec::with_capacity(units + 1);
        let mut copied = 0usize;
        // SAFETY: `utf16` has room for `units + 1` units; Node writes the string and a NUL
        // and reports how many units (without the NUL) in `copied`.
        let status =
            unsafe { napi::sys::napi_get_value_string_utf16(env, value, utf16.as_mut_ptr(), units + 1, &mut copied) };
        if status != napi::sys::Status::napi_ok {
            return Err(expected());
        }
        // SAFETY: the first `copied` units were initialised by the call above.
        unsafe { utf16.set_len(copied.min(units)) };
        // Room for mostly ASCII and the newline `into_line` adds.
        let mut buf = Vec::with_capacity(utf16.len() + utf16.len() / 8 + 2);
        crate::text::utf16_to_utf8(&utf16, &mut buf);
        Ok(Text(buf))
    }
}

/// A typed array whose storage V8 allocates, the values copied in. napi-rs's typed arrays
/// wrap Rust memory as an external buffer with a finalizer, which costs the GC work for
/// every array: the index returns one per call (`getBranch`, context plans).
pub struct Copied<T>(Vec<T>);

macro_rules! copied_typed_array {
    ($t:ty, $kind:expr) => {
        impl ToNapiValue for Copied<$t> {
            unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
                use napi::sys;
                let len = val.0.len();
                let bytes = std::mem::size_of_val(val.0.as_slice());
                let mut data = std::ptr::null_mut();
                let mut buffer = std::ptr::null_mut();
                // SAFETY: plain Node-API calls on the current env; `data` points to `bytes`
                // writable bytes of the new ArrayBuffer when the call succeeds.
                unsafe {
                    if sys::napi_create_arraybuffer(env, bytes, &mut data, &mut buffer) != sys::Status::napi_ok {
                        return Err(napi::Error::from_reason("failed to allocate an ArrayBuffer"));
                    }
                    if bytes > 0 {
                        std::ptr::copy_nonoverlapping(val.0.as_ptr().cast::<u8>(), data.cast::<u8>(), bytes);
                    }
                    let mut out = std::ptr::null_mut();
                    if sys::napi_create_typedarray(env, $kind, len, buffer, 0, &mut out) != sys::Status::napi_ok {
                        return Err(napi::Error::from_reason("failed to create a typed array"));
                    }
                    Ok(out)
                }
            }
        }
    };
}

copied_typed_array!(u32, napi::sys::TypedarrayType::uint32_array);
copied_typed_array!(i32, napi::sys::TypedarrayType::int32_array);
copied_typed_array!(f64, napi::sys::TypedarrayType::float64_array);

fn pos_or_minus(p: Option<u32>) -> i32 {
    p.map_or(-1, |p| p as i32)
}

/// One session (see `session::Session`), as the facade's `NativeSession`.
#[napi]
pub struct NativeSession {
    s: Session,
    /// What `load` found: 0 missing, 1 not a session, 2 a session (or built in memory).
    status: u32,
}

impl NativeSession {
    fn wrap(s: Session) -> NativeSession {
        NativeSession { s, status: 2 }
    }

    fn tree(&self) -> &Tree {
        self.s.tree()
    }
}

fn write_mode(exclusive: bool) -> WriteMode {
    if exclusive { WriteMode::Exclusive } else { WriteMode::Replace }
}

#[napi]
impl NativeSession {
    /// An empty session (entries are pushed by the facade).
    #[napi(constructor)]
    pub fn new() -> Self {
        NativeSession::wrap(Session::new())
    }

    /// Loads a file like `loadEntriesFromFile`. `status`: 0 missing, 1 not a session, 2 loaded.
    #[napi(factory)]
    pub fn load(path: String) -> Result<NativeSession> {
        guard(|| {
            Ok(match Session::open(Path::new(&path))? {
                Opened::Missing => NativeSession { s: Session::new(), status: 0 },
                Opened::NotSession => NativeSession { s: Session::new(), status: 1 },
                Opened::Session(s) => NativeSession::wrap(*s),
            })
        })
    }

    #[napi(getter)]
    pub fn status(&self) -> u32 {
        self.status
    }

    /// Number of items (`fileEntries.length`).
    #[napi]
    pub fn count(&self) -> u32 {
        self.tree().len() as u32
    }

    /// The raw lines at `positions`, one per line, as pure ASCII (non-ASCII characters
    /// escaped as `\uXXXX`), in pieces of about 1 MiB (see `LineStore::ascii_pieces`): a large
    /// text is read and escaped on another thread while JS parses the pieces before it.
    #[napi]
    pub fn lines_ascii_pieces(&self, positions: Uint32Array) -> Result<AsciiPieces> {
        guard(|| {
            let pieces =
                self.s.store().ascii_pieces(&positions, PIECE_BYTES).map_err(|e| CoreError::io(e, "read", None))?;
            Ok(AsciiPieces { pieces })
        })
    }

    /// Raw line of one item, or null.
    #[napi]
    pub fn line(&self, pos: u32) -> Result<Option<String>> {
        guard(|| {
            let line = self.s.store().line(pos).map_err(|e| CoreError::io(e, "read", None))?;
            Ok(line.map(|l| String::from_utf8_lossy(&l).into_owned()))
        })
    }

    /// Adds entries built by the facade (which keeps the objects), in one call. Per entry:
    /// `flags` = type | role << 4 | label truthy << 8 | retainedTail << 9, and four strings
    /// in `fields_json` (a JSON array): the id, parentId and target keys, and the timestamp
    /// when it is a string ("" otherwise: JS computes its time when needed).
    #[napi]
    pub fn push_batch(&mut self, flags: Uint32Array, fields_json: String) -> Result<()> {
        guard(|| {
            let fields = decode_strings(&fields_json)?;
            if fields.len() != flags.len() * 4 {
                return Err(CoreError::Msg("pushBatch: mismatched lengths".into()));
            }
            for (i, &f) in flags.iter().enumerate() {
                let [id, parent, target, ts] = &fields[i * 4..i * 4 + 4] else { break };
                self.s.push(skeleton_from_flags(f, Key::decode(id), Key::decode(parent), Key::decode(target), ts));
            }
            Ok(())
        })
    }

    /// A session indexed from JSONL text built by the facade (one entry per line), which is
    /// also written to `path` when given (atomically; `exclusive` as `openSync(path, "wx")`).
    #[napi(factory)]
    pub fn from_text(text: Text, path: Option<String>, exclusive: bool) -> Result<NativeSession> {
        guard(|| {
            let path = path.as_deref().map(Path::new);
            Ok(NativeSession::wrap(Session::from_text(text.as_bytes(), path, write_mode(exclusive))?))
        })
    }

    /// Appends one entry the facade built to a session already on disk (see
    /// `Session::commit`). Returns the item count afterwards; `-(count + 1)` when the id is
    /// taken (nothing written: the facade retries with another id).
    #[napi]
    #[allow(clippy::too_many_arguments)] // the skeleton's fields plus the write
    pub fn commit_line(
        &mut self,
        flags: u32,
        id: String,
        parent: String,
        target: String,
        timestamp: String,
        json: Text,
        path: String,
        sync: bool,
    ) -> Result<i64> {
        guard(|| {
            let sk =
                skeleton_from_flags(flags, Key::Str(id.into()), Key::decode(&parent), Key::decode(&target), &timestamp);
            let commit = self.s.commit(sk, &json.into_line(), Path::new(&path), sync)?;
            let count = self.tree().len() as i64;
            Ok(if commit == Commit::Written { count } else { -count - 1 })
        })
    }

    /// Appends `json` and a newline to `path` (the reference's `_persist`).
    #[napi]
    pub fn append_line(&mut self, path: String, json: Text, sync: bool) -> Result<()> {
        guard(|| self.s.append_line(Path::new(&path), &json.into_line(), sync))
    }

    /// Writes the whole file atomically (`exclusive`: like `openSync(path, "wx")`).
    #[napi]
    pub fn write_all(&mut self, path: String, text: Text, exclusive: bool) -> Result<()> {
        guard(|| self.s.write_all(Path::new(&path), text.as_bytes(), write_mode(exclusive)))
    }

    /// Removes the last item (rollback of a failed append).
    #[napi]
    pub fn pop(&mut self) {
        self.s.pop();
    }

    #[napi]
    pub fn lookup(&self, key: String) -> i32 {
        pos_or_minus(self.tree().lookup(&Key::decode(&key)))
    }

    #[napi]
    pub fn entry_count(&self) -> u32 {
        self.tree().entry_count() as u32
    }

    #[napi]
    pub fn header(&self) -> i32 {
        pos_or_minus(self.tree().header())
    }

    #[napi]
    pub fn last_entry(&self) -> i32 {
        pos_or_minus(self.tree().last_entry())
    }

    #[napi]
    pub fn last_session_info(&self) -> i32 {
        pos_or_minus(self.tree().last_session_info())
    }

    /// 1 or 0; -1 when the reference would throw (the facade replays it).
    #[napi]
    pub fn has_conversation(&self) -> i32 {
        match self.tree().has_conversation() {
            Some(true) => 1,
            Some(false) => 0,
            None => -1,
        }
    }

    #[napi(ts_return_type = "Uint32Array")]
    pub fn entries(&self) -> Copied<u32> {
        Copied(self.tree().entries())
    }

    #[napi(ts_return_type = "Uint32Array")]
    pub fn children(&self, parent: String) -> Copied<u32> {
        Copied(self.tree().children(&Key::decode(&parent)))
    }

    #[napi]
    pub fn label(&self, target: String) -> i32 {
        pos_or_minus(self.tree().label(&Key::decode(&target)))
    }

    #[napi(ts_return_type = "Uint32Array")]
    pub fn labels(&self) -> Copied<u32> {
        Copied(self.tree().labels())
    }

    #[napi(ts_return_type = "Uint32Array")]
    pub fn branch(&self, start: String) -> Result<Copied<u32>> {
        guard(|| self.tree().branch(&Key::decode(&start))).map(Copied)
    }

    /// Flat plan `[thinking, model, (pos, edit, noMessages)…]`, or null to replay in JS.
    #[napi(ts_return_type = "Int32Array | null")]
    pub fn context_plan(&self, leaf: String) -> Result<Option<Copied<i32>>> {
        guard(|| {
            let Some(plan) = self.tree().context_plan(&Key::decode(&leaf))? else { return Ok(None) };
            let mut out = Vec::with_capacity(2 + plan.entries.len() * 3);
            out.push(pos_or_minus(plan.thinking));
            out.push(pos_or_minus(plan.model));
            for (p, edit, skip) in plan.entries {
                out.push(p as i32);
                out.push(pos_or_minus(edit));
                out.push(skip as i32);
            }
            Ok(Some(out))
        })
        .map(|o| o.map(Copied))
    }

    /// `createBranchedSession`, step 1 (see `Session::prepare_branch`). Returns
    /// `[idsJson, conversation]`, or null when the facade must build the branch in JS.
    #[napi]
    pub fn branched_lines(&mut self, path: Uint32Array) -> Result<Option<(String, bool)>> {
        guard(|| self.s.prepare_branch(&path))
    }

    /// `createBranchedSession`, step 2 (see `Session::commit_branch`).
    #[napi]
    pub fn commit_branched(&mut self, path: String, prefix: String, suffix: String) -> Result<NativeSession> {
        guard(|| {
            Ok(NativeSession::wrap(self.s.commit_branch(Path::new(&path), prefix.as_bytes(), suffix.as_bytes())?))
        })
    }

    /// Flat `[node, parent (-1: root)]` per non-header item, in order.
    #[napi(ts_return_type = "Int32Array")]
    pub fn tree_links(&self) -> Result<Copied<i32>> {
        guard(|| {
            Ok(self
                .tree()
                .tree_links()
                .into_iter()
                .flat_map(|(n, p)| [n as i32, pos_or_minus(p)])
                .collect::<Vec<i32>>())
        })
        .map(Copied)
    }

    /// `new Date(timestamp).getTime()` per item; `Infinity` where only JS can compute it.
    #[napi(ts_return_type = "Float64Array")]
    pub fn times(&self) -> Copied<f64> {
        Copied((0..self.tree().len() as u32).map(|p| self.tree().get(p).time.unwrap_or(f64::INFINITY)).collect())
    }
}

/// The skeleton of an entry the facade built; `timestamp` is "" when it is not a string.
fn skeleton_from_flags(flags: u32, id: Key, parent: Key, target: Key, timestamp: &str) -> Skeleton {
    Skeleton {
        ty: EntryType::from_code(flags & 15),
        id,
        parent,
        target,
        label_truthy: flags & (1 << 8) != 0,
        role: Role::from_code((flags >> 4) & 15),
        retained_tail: flags & (1 << 9) != 0,
        time: crate::entry::parse_iso_ms(timestamp.as_bytes()),
    }
}

/// A JSON array of strings from the facade.
fn decode_strings(json_text: &str) -> std::result::Result<Vec<String>, CoreError> {
    let src = json_text.as_bytes();
    let bad = || CoreError::Msg("pushBatch: fields must be a JSON array of strings".into());
    let v = crate::json::parse_document(src).filter(|v| v.kind == crate::json::Kind::Array).ok_or_else(bad)?;
    let mut out = Vec::new();
    let mut ok = true;
    crate::json::for_each_element(src, v, |e| match crate::json::decode_string(&src[e.start + 1..e.end - 1]) {
        Ok(s) if e.kind == crate::json::Kind::String => out.push(s),
        _ => ok = false,
    });
    if ok { Ok(out) } else { Err(bad()) }
}

impl Default for NativeSession {
    fn default() -> Self {
        Self::new()
    }
}

/// `loadEntriesFromFile`: the entries' lines, one per line, as ASCII (see `lines_ascii`);
/// null when the file is missing or not a session (the reference returns `[]`).
#[napi]
pub fn load_entries_ascii(path: String) -> Result<Option<Buffer>> {
    guard(|| match store::load(Path::new(&path))? {
        Loaded::Session { skeletons, store, .. } => {
            let all: Vec<u32> = (0..skeletons.len() as u32).collect();
            Ok(Some(store.joined_ascii(&all).map_err(|e| CoreError::io(e, "read", None))?.into()))
        }
        _ => Ok(None),
    })
}

/// `readSessionHeader`: `"H" + line`, `"N"` (not a header) or `"L"` (scan limit exceeded).
#[napi]
pub fn read_header(path: String) -> Result<String> {
    guard(|| {
        Ok(match store::read_header_cached(Path::new(&path))? {
            HeaderScan::Header(line) => format!("H{line}"),
            HeaderScan::NotHeader => "N".into(),
            HeaderScan::LimitExceeded => "L".into(),
        })
    })
}

/// Whether each line is already what `JSON.stringify(JSON.parse(line))` would write.
#[napi]
pub fn canonical_lines(session: &NativeSession, positions: Uint32Array) -> Result<Vec<bool>> {
    guard(|| {
        let mut out = vec![false; positions.len()];
        session
            .s
            .store()
            .for_each(&positions, |i, line| out[i] = line.is_some_and(crate::json::is_canonical))
            .map_err(|e| CoreError::io(e, "read", None))?;
        Ok(out)
    })
}

/// Copies a session file to a backup path before a migration rewrite.
#[napi]
pub fn backup_file(from: String, to: String) -> Result<()> {
    guard(|| std::fs::copy(&from, &to).map(|_| ()).map_err(|e| CoreError::io(e, "copyfile", Some(Path::new(&to)))))
}

/// `stat(path).mtimeMs` per path; NaN where stat fails.
#[napi]
pub fn mtimes(paths: Vec<String>) -> Vec<f64> {
    paths.iter().map(|p| std::fs::metadata(p).map(|m| listing::mtime_ms(&m)).unwrap_or(f64::NAN)).collect()
}

/// Text per piece of `linesAsciiPieces`: big enough that a piece costs far more to parse
/// than to hand over, small enough that the first one is ready at once.
const PIECE_BYTES: usize = 1 << 20;

/// `Ok` when a Node-API call succeeded, else an error saying what failed.
fn napi_ok(status: napi::sys::napi_status, what: &str) -> Result<()> {
    if status == napi::sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!("failed to {what}")))
    }
}

/// `null`.
///
/// # Safety
/// `env` is the current Node-API environment.
unsafe fn js_null(env: napi::sys::napi_env) -> Result<napi::sys::napi_value> {
    let mut out = std::ptr::null_mut();
    // SAFETY: per this function's contract.
    napi_ok(unsafe { napi::sys::napi_get_null(env, &mut out) }, "get null")?;
    Ok(out)
}

/// A JS array of `values`.
///
/// # Safety
/// `env` is the current Node-API environment; `values` are live handles in it.
unsafe fn js_array(env: napi::sys::napi_env, values: &[napi::sys::napi_value]) -> Result<napi::sys::napi_value> {
    let mut array = std::ptr::null_mut();
    // SAFETY: per this function's contract.
    unsafe {
        napi_ok(napi::sys::napi_create_array_with_length(env, values.len(), &mut array), "create an array")?;
        for (i, &v) in values.iter().enumerate() {
            napi_ok(napi::sys::napi_set_element(env, array, i as u32, v), "fill an array")?;
        }
    }
    Ok(array)
}

/// A piece on its way to JS: `[text, latin1, utf16, patches]` as JS strings (the UTF-16
/// one external where the host allows: see `external_string`), after which its buffers go
/// back to the thread that makes the pieces.
pub struct PieceJs<'a> {
    piece: crate::lines::Piece,
    pieces: &'a crate::lines::Pieces,
}

impl ToNapiValue for PieceJs<'_> {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        let PieceJs { mut piece, pieces } = val;
        let latin1 = |bytes: &[u8]| {
            let mut out = std::ptr::null_mut();
            // SAFETY: the current env and a live buffer of the given length, which V8 copies.
            let status = unsafe {
                napi::sys::napi_create_string_latin1(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut out)
            };
            napi_ok(status, "create a string").map(|()| out)
        };
        // SAFETY: Node-API calls on the current env (this conversion's contract).
        unsafe {
            let null = js_null(env)?;
            let mut out = [latin1(&piece.text)?, null, null, null];
            if !piece.ex.is_empty() {
                out[1] = latin1(&piece.ex.latin1)?;
                out[3] = latin1(&piece.ex.patches)?;
                if !piece.ex.utf16.is_empty() {
                    out[2] = external_string(env, std::mem::take(&mut piece.ex.utf16))?;
                }
            }
            let array = js_array(env, &out)?;
            pieces.recycle(piece);
            Ok(array)
        }
    }
}

/// `node_api_create_external_string_latin1` / `_utf16` (Node-API 10; exported, as
/// experimental, since Node 18.18 and 20.4), with the string's code unit type.
type CreateExternal<T> = unsafe extern "C" fn(
    env: napi::sys::napi_env,
    units: *const T,
    length: isize,
    finalize: Option<unsafe extern "C" fn(napi::sys::napi_env, *mut std::ffi::c_void, *mut std::ffi::c_void)>,
    hint: *mut std::ffi::c_void,
    result: *mut napi::sys::napi_value,
    copied: *mut bool,
) -> napi::sys::napi_status;

/// The code units of a JS string: Latin-1 bytes or UTF-16.
trait JsUnit: Copy + Send + 'static {
    /// The running Node's external-string function for this unit, if it has one.
    fn create_external() -> Option<CreateExternal<Self>>;
    /// Creates a JS string from a copy of the units.
    ///
    /// # Safety
    /// `env` is current; `units` is live.
    unsafe fn create_copy(env: napi::sys::napi_env, units: &[Self], out: *mut napi::sys::napi_value) -> bool;
}

/// A Node-API function looked up at run time (not linked), so the addon still loads, and
/// copies instead, on hosts without it. `PI_SESSION_NATIVE_COPY_STRINGS=1` makes it copy
/// everywhere (a way out should a host mishandle external strings; tests use it too).
fn lookup<T>(name: &std::ffi::CStr) -> Option<CreateExternal<T>> {
    if std::env::var_os("PI_SESSION_NATIVE_COPY_STRINGS").is_some_and(|v| v == "1") {
        return None;
    }
    #[cfg(unix)]
    {
        // SAFETY: dlsym with a NUL-terminated name; the symbol, when the host exports it,
        // is the Node-API function with the signature of `CreateExternal` (the Latin-1
        // one takes `const char*`, passed the same way as `*const u8`).
        unsafe {
            let f = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
            (!f.is_null()).then(|| std::mem::transmute_copy::<*mut libc::c_void, CreateExternal<T>>(&f))
        }
    }
    #[cfg(not(unix))]
    {
        let _ = name;
        None
    }
}

impl JsUnit for u8 {
    fn create_external() -> Option<CreateExternal<u8>> {
        static FOUND: std::sync::OnceLock<Option<CreateExternal<u8>>> = std::sync::OnceLock::new();
        *FOUND.get_or_init(|| lookup(c"node_api_create_external_string_latin1"))
    }
    unsafe fn create_copy(env: napi::sys::napi_env, units: &[u8], out: *mut napi::sys::napi_value) -> bool {
        // SAFETY: per the trait; V8 copies the bytes before returning.
        let status =
            unsafe { napi::sys::napi_create_string_latin1(env, units.as_ptr().cast(), units.len() as isize, out) };
        status == napi::sys::Status::napi_ok
    }
}

impl JsUnit for u16 {
    fn create_external() -> Option<CreateExternal<u16>> {
        static FOUND: std::sync::OnceLock<Option<CreateExternal<u16>>> = std::sync::OnceLock::new();
        *FOUND.get_or_init(|| lookup(c"node_api_create_external_string_utf16"))
    }
    unsafe fn create_copy(env: napi::sys::napi_env, units: &[u16], out: *mut napi::sys::napi_value) -> bool {
        // SAFETY: per the trait; V8 copies the units before returning.
        let status = unsafe { napi::sys::napi_create_string_utf16(env, units.as_ptr(), units.len() as isize, out) };
        status == napi::sys::Status::napi_ok
    }
}

/// Bytes of external strings not yet finalized (a diagnostic: see `externalStringBytes`).
static EXTERNAL_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Frees the units of an external string once V8 no longer needs them (`hint` is the
/// `Box<Vec<T>>`). `env` may be null (the environment is shutting down): unused.
unsafe extern "C" fn free_external<T>(
    _env: napi::sys::napi_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: `hint` is the box `external_string` leaked for this string; Node calls this once.
    let units = unsafe { Box::from_raw(hint.cast::<Vec<T>>()) };
    EXTERNAL_BYTES.fetch_sub(std::mem::size_of_val(units.as_slice()), Ordering::Relaxed);
}

/// Bytes held by the strings handed to V8 without a copy (`linesAsciiPieces`, `InfoScanner.take`)
/// that V8 has not collected yet (for tests: they must all be freed once collected). V8
/// accounts for them itself, as external memory (`process.memoryUsage().external`).
#[napi]
pub fn external_string_bytes() -> f64 {
    EXTERNAL_BYTES.load(Ordering::Relaxed) as f64
}

/// A JS string of `units`. V8 reads them where they are when the host allows (an
/// external string: a large text costs V8 no copy, and no fresh pages to copy it to),
/// and copies them otherwise.
///
/// # Safety
/// `env` is the current Node-API environment.
unsafe fn external_string<T: JsUnit>(env: napi::sys::napi_env, units: Vec<T>) -> Result<napi::sys::napi_value> {
    let mut out = std::ptr::null_mut();
    let failed = || Err(napi::Error::from_reason("failed to create a string"));
    let Some(create) = T::create_external().filter(|_| !units.is_empty()) else {
        // SAFETY: per this function's contract.
        return if unsafe { T::create_copy(env, &units, &mut out) } { Ok(out) } else { failed() };
    };
    let (ptr, len, bytes) = (units.as_ptr(), units.len(), std::mem::size_of_val(units.as_slice()));
    // Counted before: the finalizer runs at once if Node copies the units instead.
    EXTERNAL_BYTES.fetch_add(bytes, Ordering::Relaxed);
    let hint = Box::into_raw(Box::new(units));
    let mut copied = false;
    // SAFETY: `ptr..ptr + len` stays allocated (owned by `hint`) until the finalizer runs,
    // which Node calls exactly once on success, at once if it copied instead.
    let status =
        unsafe { create(env, ptr, len as isize, Some(free_external::<T>), hint.cast(), &mut out, &mut copied) };
    if status != napi::sys::Status::napi_ok {
        // No finalizer will run: the units are still ours.
        // SAFETY: `hint` came from `Box::into_raw` above and was not handed over.
        drop(unsafe { Box::from_raw(hint) });
        EXTERNAL_BYTES.fetch_sub(bytes, Ordering::Relaxed);
        return failed();
    }
    Ok(out)
}

/// The pieces of one `linesAsciiPieces` call.
#[napi]
pub struct AsciiPieces {
    pieces: crate::lines::Pieces,
}

#[napi]
impl AsciiPieces {
    /// The next piece, or null after the last: `[text, latin1, utf16, patches]`. `text`
    /// holds one line per entry (ASCII). When long strings were taken out of the lines
    /// (see `splice`), `latin1` and `utf16` hold them end to end (`utf16` null when
    /// empty) and `patches` (JSON text without brackets) lists `line, path, which, start,
    /// end` for each; otherwise all three are null.
    #[napi(ts_return_type = "[string, string | null, string | null, string | null] | null")]
    pub fn next(&self) -> Result<Option<PieceJs<'_>>> {
        guard(|| {
            let piece = self.pieces.next_piece().map_err(|e| CoreError::io(e, "read", None))?;
            Ok(piece.map(|piece| PieceJs { piece, pieces: &self.pieces }))
        })
    }
}

/// Cancels a running listing scan.
#[napi]
pub struct AbortFlag {
    flag: Arc<AtomicBool>,
}

#[napi]
impl AbortFlag {
    #[napi(constructor)]
    pub fn new() -> Self {
        AbortFlag { flag: Arc::new(AtomicBool::new(false)) }
    }

    #[napi]
    pub fn abort(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }
}

impl Default for AbortFlag {
    fn default() -> Self {
        Self::new()
    }
}

/// Scans `SessionInfo` material of many files ahead of the facade (see
/// `listing::Scanner`), which takes the rows batch by batch.
#[napi]
pub struct InfoScanner {
    scanner: Arc<listing::Scanner>,
}

#[napi]
impl InfoScanner {
    #[napi(constructor)]
    pub fn new(paths: Vec<String>, abort: &AbortFlag) -> Self {
        InfoScanner { scanner: Arc::new(listing::Scanner::start(paths, abort.flag.clone())) }
    }

    /// The rows of paths `start..end` (see `listing::Rows`), off the main thread.
    #[napi(ts_return_type = "Promise<[string, string | null, string | null]>")]
    pub fn take(&self, start: u32, end: u32) -> AsyncTask<ScanTake> {
        AsyncTask::new(ScanTake { scanner: self.scanner.clone(), start: start as usize, end: end as usize })
    }
}

pub struct ScanTake {
    scanner: Arc<listing::Scanner>,
    start: usize,
    end: usize,
}

impl Task for ScanTake {
    type Output = listing::Rows;
    type JsValue = ScanJs;

    fn compute(&mut self) -> Result<listing::Rows> {
        guard(|| Ok(self.scanner.take(self.start..self.end)))
    }

    fn resolve(&mut self, _env: Env, output: listing::Rows) -> Result<ScanJs> {
        Ok(ScanJs(output))
    }
}

/// Forgets the rows `InfoScanner` keeps of files it scanned (for the benchmark: a listing
/// with nothing cached, as on the first `/resume` of a process).
#[napi]
pub fn clear_scan_cache() {
    listing::clear_cache();
}

/// `[rows, latin1, utf16]` of an `InfoScanner.take` call (see `listing::Rows`): the row JSON, and
/// the texts as strings (null when empty), without a copy where the host allows.
pub struct ScanJs(listing::Rows);

impl TypeName for ScanJs {
    fn type_name() -> &'static str {
        "[string, string | null, string | null]"
    }
    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for ScanJs {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        let listing::Rows { json, latin1, utf16 } = val.0;
        // SAFETY: Node-API calls on the current env (this conversion's contract).
        unsafe {
            let null = js_null(env)?;
            let mut out = [String::to_napi_value(env, json)?, null, null];
            if !latin1.is_empty() {
                out[1] = external_string(env, latin1)?;
            }
            if !utf16.is_empty() {
                out[2] = external_string(env, utf16)?;
            }
            js_array(env, &out)
        }
    }
}

/// Writes `prefix`, then each position's line (or its override text), one per line, as one
/// atomic file (`exclusive`: fail if it exists, like `openSync(path, "wx")`).
#[napi]
pub fn write_session_file(
    path: String,
    prefix: String,
    session: &NativeSession,
    positions: Uint32Array,
    override_pos: Uint32Array,
    override_text: Vec<String>,
    exclusive: bool,
) -> Result<()> {
    guard(|| {
        let overrides: std::collections::HashMap<u32, &str> =
            override_pos.iter().copied().zip(override_text.iter().map(String::as_str)).collect();
        let mut text: Vec<u8> = Vec::with_capacity(prefix.len() + positions.len() * 256);
        text.extend_from_slice(prefix.as_bytes());
        let mut missing = None;
        session
            .s
            .store()
            .for_each(&positions, |i, line| {
                let p = positions[i];
                match (overrides.get(&p), line) {
                    (Some(t), _) => text.extend_from_slice(t.as_bytes()),
                    (None, Some(l)) => text.extend_from_slice(l),
                    (None, None) => missing = Some(p),
                }
                text.push(b'\n');
            })
            .map_err(|e| CoreError::io(e, "read", None))?;
        if let Some(p) = missing {
            return Err(CoreError::Msg(format!("entry {p} has no stored line")));
        }
        let mode = if exclusive { WriteMode::Exclusive } else { WriteMode::Replace };
        store::write_file(Path::new(&path), &[&text], mode)
    })
}

/// `.jsonl` paths of `dir` sorted by mtime, newest first (stable over directory order), as
/// `findMostRecentSession` orders them, the first `limit` of them; null when listing or
/// any stat fails.
#[napi]
pub fn files_by_mtime(dir: String, limit: Option<u32>) -> Option<Vec<String>> {
    catch_unwind(|| files_by_mtime_inner(&dir, limit)).ok().flatten()
}

fn files_by_mtime_inner(dir: &str, limit: Option<u32>) -> Option<Vec<String>> {
    use crate::platform::name_bytes;
    let found = crate::platform::jsonl_stats(Path::new(dir)).ok()?;
    let mut files = Vec::with_capacity(found.len());
    for (name, st) in found {
        files.push((name, st?.mtime_ms));
    }
    // Newest first; equal times keep readdir's (name) order, as the reference's stable sort.
    files.sort_by(|a, b| {
        b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal).then_with(|| name_bytes(&a.0).cmp(&name_bytes(&b.0)))
    });
    let limit = limit.map_or(usize::MAX, |l| l as usize);
    Some(files.into_iter().take(limit).map(|f| Path::new(dir).join(f.0).to_string_lossy().into_owned()).collect())
}

/// Flat `[path, headerLine, …]` of the `.jsonl` files in `dir` (directory order) whose
/// header id equals `id` (`header?.id === id`); null when the directory cannot be read.
#[napi]
pub fn headers_with_id(dir: String, id: String) -> Option<Vec<String>> {
    catch_unwind(|| headers_with_id_inner(&dir, &id)).ok().flatten()
}

fn headers_with_id_inner(dir: &str, id: &str) -> Option<Vec<String>> {
    use crate::platform::name_bytes;
    // Names and stats come from one pipelined pass; headers of unchanged files from the cache.
    let mut files = crate::platform::jsonl_stats(Path::new(dir)).ok()?;
    // `readdir` order: libuv's scandir sorts names with `strcmp`, i.e. by bytes.
    files.sort_by(|a, b| name_bytes(&a.0).cmp(&name_bytes(&b.0)));
    let want = Key::decode(id);
    let paths: Vec<(std::path::PathBuf, Option<crate::platform::FileStamp>)> =
        files.into_iter().map(|(n, st)| (Path::new(dir).join(n), st)).collect();
    let found = listing::par_map(&paths, |(p, st)| {
        let Ok(HeaderScan::Header(line)) = store::read_header_stamped(p, *st) else { return None };
        let sk = Skeleton::parse_line(line.as_bytes(), &mut 0)?;
        sk.id.strict_eq(&want).then_some(line)
    });
    let mut out = Vec::new();
    for ((p, _), line) in paths.iter().zip(found) {
        if let Some(line) = line {
            out.push(p.to_string_lossy().into_owned());
            out.push(line);
        }
    }
    Some(out)
}
