//! The scan of the files of a listing (`Scanner`), running ahead of its reader, with the
//! rows of unchanged files from the listing index.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::storage::listing::index;
use crate::storage::listing::info::{LineBreaks, scan_info_and_header};
use crate::storage::listing::rows::{Row, Rows};

/// A scan of many files that runs ahead of its reader: threads scan the files in order
/// while the caller takes the rows of one batch after another (`take`), so listing a
/// folder with progress costs about what one scan of all its files does.
///
/// Rows of files that have not changed since they were last scanned come from the
/// listing index (`listing::index`): a session's `SessionInfo` depends only on its bytes, and
/// `/resume` lists the same folders again and again, in this process and the next.
///
/// `paths` must be every session file of the folders they are in (as `list` and `listAll`
/// pass them): when the last row is scanned, the index forgets the files of those folders
/// that are not among them.
pub struct Scanner {
    pub(super) shared: std::sync::Arc<Shared>,
}

pub(super) struct Shared {
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
    breaks: LineBreaks,
}

pub(super) struct State {
    pub(super) rows: Vec<Option<std::sync::Arc<Row>>>,
    /// Threads still scanning.
    pub(super) running: usize,
    /// The end of the furthest batch taken.
    taken: usize,
}

/// Files the scan may run ahead of the batches taken.
const LOOKAHEAD: usize = 1024;

impl Scanner {
    /// Starts scanning `paths`; `abort` stops the scan early (rows not scanned are `null`).
    pub fn start(paths: Vec<String>, abort: std::sync::Arc<AtomicBool>) -> Scanner {
        Scanner::start_with(paths, abort, LOOKAHEAD, LineBreaks::Node)
    }

    /// `start`, lines ending at `breaks`. The listing index keeps rows of Node's lines only:
    /// with other breaks it is neither read nor written.
    pub fn start_in(paths: Vec<String>, abort: std::sync::Arc<AtomicBool>, breaks: LineBreaks) -> Scanner {
        Scanner::start_with(paths, abort, LOOKAHEAD, breaks)
    }

    pub(super) fn start_with(
        paths: Vec<String>,
        abort: std::sync::Arc<AtomicBool>,
        lookahead: usize,
        breaks: LineBreaks,
    ) -> Scanner {
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
            breaks,
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
    /// (see `index::finish_listing`; it may compress and write for a while, so the
    /// facade runs it after handing out the listing). Nothing when the scan did not finish.
    pub fn finish(&self) {
        let sh = &self.shared;
        if sh.done.load(Ordering::Acquire) == sh.paths.len() && !sh.cancelled() && sh.breaks == LineBreaks::Node {
            index::finish_listing(&sh.paths);
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
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
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
        let row = std::panic::catch_unwind(|| match self.breaks {
            LineBreaks::Node => row_of(path, &self.abort),
            breaks => std::sync::Arc::new(Row::new(&scan_info_and_header(Path::new(path), &self.abort, breaks).0)),
        })
        .unwrap_or_else(|_| std::sync::Arc::new(Row::Null));
        // Counted before it is published: whoever takes the last row sees them all done.
        self.done.fetch_add(1, Ordering::AcqRel);
        self.lock().rows[i] = Some(row);
        self.changed.notify_all();
        true
    }
}

/// Forgets every row kept in memory (the benchmark times listings with nothing cached).
pub fn clear_cache() {
    index::clear_memory();
}

/// The row of one file: from the listing index (see `listing::index`), or scanned (and
/// recorded there, with its header, unless the scan was aborted). After rows of every
/// session file of a folder, `index::finish_listing` writes its index.
pub fn row_of(path: &str, abort: &AtomicBool) -> std::sync::Arc<Row> {
    let path = Path::new(path);
    let before = crate::storage::platform::stamp(path);
    if let Some(row) = before.as_ref().and_then(|st| index::row(path, st)) {
        return row;
    }
    let (info, header) = scan_info_and_header(path, abort, LineBreaks::Node);
    let row = std::sync::Arc::new(Row::new(&info));
    if let (false, Some(before)) = (abort.load(Ordering::Relaxed), before) {
        // The header too: discovery (`findById`) then reads no file the listing has seen.
        if let Some(after) = crate::storage::platform::stamp(path) {
            index::record(path, &before, &after, Some(row.clone()), header.as_ref());
        }
    }
    row
}

/// The rows of all `paths` at once (see `Scanner`), for the tests.
#[cfg(test)]
pub fn scan_rows(paths: &[String], abort: &AtomicBool) -> Rows {
    let flag = std::sync::Arc::new(AtomicBool::new(abort.load(Ordering::Relaxed)));
    let scanner = Scanner::start(paths.to_vec(), flag);
    let rows = scanner.take(0..paths.len());
    scanner.finish();
    rows
}
