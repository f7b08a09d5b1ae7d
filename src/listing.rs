//! Listing: the `SessionInfo` scanner (off the main thread, cancellable), and finding
//! session files in a folder (newest first, by header id).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::ffi::{SharedUnits, external_string, guard, js_array};
use pi_session_core::entry::Key;
use pi_session_core::listing;

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
    /// `unicodeLineBreaks`: lines also end at U+2028 and U+2029, as Bun's readline ends them
    /// (see `listing::LineBreaks`; no listing index then).
    #[napi(constructor)]
    pub fn new(paths: Vec<String>, abort: &AbortFlag, unicode_line_breaks: Option<bool>) -> Self {
        let breaks =
            if unicode_line_breaks == Some(true) { listing::LineBreaks::Unicode } else { listing::LineBreaks::Node };
        InfoScanner { scanner: Arc::new(listing::Scanner::start_in(paths, abort.flag.clone(), breaks)) }
    }

    /// The rows of paths `start..end` and of those after it that are ready too (see
    /// `listing::Scanner::take_ready`, `listing::Rows`), off the main thread.
    #[napi(ts_return_type = "Promise<[string, ...string[]]>")]
    pub fn take(&self, start: u32, end: u32) -> AsyncTask<ScanTake> {
        AsyncTask::new(ScanTake { scanner: self.scanner.clone(), start: start as usize, end: end as usize })
    }

    /// After the last take: updates the listing index (see `listing::Scanner::finish`), off
    /// the main thread. The pending task keeps Node running until the index is written, so a
    /// process that exits right after its listing still leaves it for the next one.
    #[napi]
    pub fn finish(&self) -> AsyncTask<ScanFinish> {
        AsyncTask::new(ScanFinish { scanner: self.scanner.clone() })
    }
}

/// `InfoScanner.finish`: updates the listing index once the listing is handed out.
pub struct ScanFinish {
    scanner: Arc<listing::Scanner>,
}

impl Task for ScanFinish {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        guard(|| {
            self.scanner.finish();
            Ok(())
        })
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> Result<()> {
        Ok(())
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
        guard(|| Ok(self.scanner.take_ready(self.start..self.end)))
    }

    fn resolve(&mut self, _env: Env, output: listing::Rows) -> Result<ScanJs> {
        Ok(ScanJs(output))
    }
}

/// A task that does nothing off the main thread: awaiting it lets Node's event loop run
/// (timers, I/O, a TUI's rendering) between slices of a listing's progress callbacks,
/// without a timer that fake timers could hold back.
#[napi(ts_return_type = "Promise<void>")]
pub fn yield_to_loop() -> AsyncTask<Noop> {
    AsyncTask::new(Noop)
}

pub struct Noop;

impl Task for Noop {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> Result<()> {
        Ok(())
    }
}

/// Forgets the rows `InfoScanner` keeps of files it scanned (for the benchmark: a listing
/// with nothing cached, as on the first `/resume` of a process).
#[napi]
pub fn clear_scan_cache() {
    listing::clear_cache();
}

/// `[rows, ...blocks]` of an `InfoScanner.take` call (see `listing::Rows`): the row JSON, and
/// the blocks of texts as strings, without a copy where the host allows.
pub struct ScanJs(listing::Rows);

impl TypeName for ScanJs {
    fn type_name() -> &'static str {
        "[string, ...string[]]"
    }
    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for ScanJs {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        let listing::Rows { json, blocks, .. } = val.0;
        // SAFETY: Node-API calls on the current env (this conversion's contract).
        unsafe {
            let mut out = vec![String::to_napi_value(env, json)?];
            for block in blocks {
                out.push(match block {
                    listing::Block::Latin1(b) => external_string(env, SharedUnits(b))?,
                    listing::Block::Utf16(u) => external_string(env, SharedUnits(u))?,
                });
            }
            js_array(env, &out)
        }
    }
}

/// Starts reading the listing index of `dirs` in the background (see `listing::preload`),
/// while the facade reads and sorts the folders.
#[napi]
pub fn preload_index(dirs: Vec<String>) {
    listing::preload(dirs.into_iter().map(std::path::PathBuf::from).collect());
}

/// `.jsonl` paths of `dir` sorted by mtime, newest first, the first `limit` of them, equal
/// times in readdir order (`raw`: the directory's own, Bun's; see
/// `listing::files_by_mtime`); null when listing or any stat fails.
#[napi]
pub fn files_by_mtime(dir: String, limit: Option<u32>, raw: bool) -> Result<Option<Vec<String>>> {
    guard(|| {
        let files = listing::files_by_mtime(Path::new(&dir), limit.map_or(usize::MAX, |l| l as usize), raw);
        Ok(files.map(|f| f.into_iter().map(|p| p.to_string_lossy().into_owned()).collect()))
    })
}

/// The `.jsonl` names of `dir`, sorted as the facade's `localeCompare` would sort them
/// under an English default locale; null when that order needs ICU, or on any error (see
/// `listing::jsonl_names_descending`).
#[napi]
pub fn jsonl_names_descending(dir: String) -> Result<Option<Vec<String>>> {
    guard(|| Ok(listing::jsonl_names_descending(Path::new(&dir))))
}

/// `listAll`'s discovery in one call (see `listing::all_sessions`).
#[napi(object)]
pub struct Discovered {
    /// The session files under `root`, in the order the reference scans them but for `ties`.
    pub paths: Vec<String>,
    /// Flat `[start, end, …]`: runs of `paths` with equal mtimes, in readdir order, that the
    /// facade sorts by name with `localeCompare`.
    pub ties: Vec<u32>,
}

/// See [`Discovered`]; `raw`: readdir's order is the directory's own (Bun's); `preloadIndex`:
/// the listing that follows uses the listing index (not with Bun's line breaks).
#[napi]
pub fn discover_all(
    root: String,
    prefix: String,
    sep: String,
    collate_known: bool,
    raw: bool,
    preload_index: bool,
) -> Result<Discovered> {
    guard(|| {
        let found = listing::all_sessions(Path::new(&root), &prefix, &sep, collate_known, raw, preload_index);
        let ties = found.ties.into_iter().flat_map(|(a, b)| [a as u32, b as u32]).collect();
        Ok(Discovered { paths: found.paths, ties })
    })
}

/// `a.localeCompare(b)` as -1, 0 or 1 for printable ASCII names under the locales the facade
/// allows (see `listing::collate_ascii`): `listAll`'s ties.
#[napi]
pub fn collate_names(a: String, b: String) -> i32 {
    listing::collate_ascii(a.as_bytes(), b.as_bytes()) as i32
}

/// `listing::headers_with_id`: the files from `from` on in `dir` whose header id is `id`,
/// as far as the first batch that has one.
#[napi(object)]
pub struct HeadersWithId {
    /// Flat `[path, headerLine, …]`, in directory order.
    pub found: Vec<String>,
    /// Where to go on, or null at the end of the folder.
    pub next: Option<u32>,
}

/// See [`HeadersWithId`]; null when the directory cannot be read. `raw`: in the directory's
/// own order (Bun's readdir), not Node's.
#[napi]
pub fn headers_with_id(dir: String, id: String, from: u32, raw: bool) -> Result<Option<HeadersWithId>> {
    guard(|| {
        let Some(found) = listing::headers_with_id(Path::new(&dir), &Key::decode(&id), from as usize, raw) else {
            return Ok(None);
        };
        Ok(Some(HeadersWithId {
            found: found.files.into_iter().flat_map(|(p, line)| [p.to_string_lossy().into_owned(), line]).collect(),
            next: found.next.map(|n| n as u32),
        }))
    })
}
