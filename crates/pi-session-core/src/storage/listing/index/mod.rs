//! The listing index: what `list`/`listAll` need of each session file (its `SessionInfo`
//! row) and what discovery needs (its header line), kept in memory for this process and
//! on disk for the next one. A fresh `pi --resume` then stats each file and reads one small
//! file per folder instead of every byte of every session.
//!
//! It can never give a wrong answer, by three rules:
//! 1. **A row is used only for the file state it was made from.** Each row carries the
//!    file's device, inode, size, mtime and ctime to the nanosecond ([`FileState`]); a
//!    lookup with any other state misses, and the file is scanned again.
//! 2. **A row is recorded only when that state is settled.** The file is stat'ed before
//!    and after it is read, and the row is kept only when both agree and the file's ctime
//!    is more than [`SETTLE_NS`] in the past: a change within the same timestamp tick
//!    would otherwise leave the state as it was (the "racy git" problem). The file being
//!    written right now is simply scanned each time.
//! 3. **An index file is trusted whole or not at all.** It is read only when its magic,
//!    format version, producer version, folder path and owner match, and its zstd frame
//!    decodes with a valid checksum to exactly the recorded length, and every record
//!    parses within bounds. Anything else (missing, damaged, truncated, another version,
//!    another user's file) is ignored and rebuilt. Writes go to a temp file renamed over
//!    the old one, so a reader sees one whole index or the previous one; when two processes
//!    list at once the last rename wins, and either index holds only rule-1 rows.
//!
//! A folder's index is `<cache dir>/<hash of the folder path>.idx`; see [`index_dir`].
//! Failing to write it (read-only, full disk) costs speed, never an answer.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::model::header::HeaderScan;
use crate::storage::listing::index::disk::{read_index, write_index};
use crate::storage::listing::index::entry::{Entry, Head};
use crate::storage::listing::rows::Row;
use crate::storage::platform::{FileStamp, FileState};

pub(super) mod disk;
mod entry;

/// How long after its last change (ctime) a file's row may be recorded: longer than any
/// file system's timestamp granularity, with room for some clock skew. Tests shorten it
/// with `PI_SESSION_NATIVE_INDEX_SETTLE_MS` (a file's ctime cannot be set back).
pub const SETTLE_NS: i128 = 2_000_000_000;

/// The in-memory rows kept between listings, over all folders (the disk index keeps all).
const MAX_MEMORY_BYTES: usize = 64 << 20;

/// One folder's entries, by file name.
#[derive(Default)]
struct Folder {
    entries: HashMap<OsString, Entry>,
    /// Its disk index was read in this process (or there was none to read).
    loaded: bool,
    /// Entries changed since the disk index was read or written.
    dirty: bool,
    bytes: usize,
    /// Held while the disk index is read.
    gate: Arc<Mutex<()>>,
}

impl Folder {
    fn insert(&mut self, name: OsString, entry: Entry) {
        self.bytes += entry.bytes();
        if let Some(old) = self.entries.insert(name, entry) {
            self.bytes -= old.bytes();
        }
        self.dirty = true;
    }
}

fn folders() -> MutexGuard<'static, HashMap<PathBuf, Folder>> {
    static FOLDERS: OnceLock<Mutex<HashMap<PathBuf, Folder>>> = OnceLock::new();
    FOLDERS.get_or_init(|| Mutex::new(HashMap::new())).lock().unwrap_or_else(|e| e.into_inner())
}

/// A path's folder (absolute: the same folder from another working directory is the
/// same index) and file name.
fn split(path: &Path) -> Option<(PathBuf, OsString)> {
    let folder = path.parent()?;
    let folder = if folder.is_absolute() { folder.to_path_buf() } else { std::path::absolute(folder).ok()? };
    Some((folder, path.file_name()?.to_os_string()))
}

/// Where the disk index lives: `PI_SESSION_NATIVE_INDEX_DIR`, else the OS cache folder
/// (`$XDG_CACHE_HOME` or `~/.cache` on Linux, `~/Library/Caches` on macOS, `%LOCALAPPDATA%`
/// on Windows) joined with `pi-session-native`. `None` when `PI_SESSION_NATIVE_INDEX=0` or
/// no such folder is known: the in-memory rows still work.
pub fn index_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if var("PI_SESSION_NATIVE_INDEX").is_some_and(|v| v == "0") {
        return None;
    }
    if let Some(dir) = var("PI_SESSION_NATIVE_INDEX_DIR") {
        return Some(PathBuf::from(dir));
    }
    if cfg!(test) {
        // Unit tests never write to the user's cache.
        return Some(std::env::temp_dir().join(format!("psn-index-test-{}", std::process::id())));
    }
    let absolute = |v: OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let base = if cfg!(windows) {
        var("LOCALAPPDATA").and_then(absolute)
    } else if cfg!(target_os = "macos") {
        var("HOME").and_then(absolute).map(|h| h.join("Library").join("Caches"))
    } else {
        var("XDG_CACHE_HOME").and_then(absolute).or_else(|| var("HOME").and_then(absolute).map(|h| h.join(".cache")))
    };
    base.map(|b| b.join("pi-session-native"))
}

/// The index file of `folder` inside `dir`; `None` when `dir` is the folder or inside it
/// (the index never goes where pi and other tools look for sessions).
pub(super) fn index_file(dir: &Path, folder: &Path) -> Option<PathBuf> {
    if dir.starts_with(folder) {
        return None;
    }
    // FNV-1a: stable across builds and platforms (the folder path inside the file
    // settles collisions).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in crate::storage::platform::name_bytes(folder.as_os_str()).iter() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    Some(dir.join(format!("{h:016x}.idx")))
}

/// Unit tests settle files at once (`-1`: as configured).
#[cfg(test)]
pub(super) static TEST_SETTLE_NS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(-1);

fn settle_ns() -> i128 {
    #[cfg(test)]
    if let n @ 0.. = TEST_SETTLE_NS.load(std::sync::atomic::Ordering::Relaxed) {
        return i128::from(n);
    }
    std::env::var("PI_SESSION_NATIVE_INDEX_SETTLE_MS")
        .ok()
        .and_then(|v| v.parse::<i128>().ok())
        .map_or(SETTLE_NS, |ms| ms * 1_000_000)
}

fn settled(state: &FileState) -> bool {
    let settle = settle_ns();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
    let ctime = i128::from(state.ctime.0) * 1_000_000_000 + i128::from(state.ctime.1);
    now - ctime > settle
}

/// Runs `f` on the entry of `path` if it has `state`, reading the folder's disk index
/// first when `load` and this process has not read it yet.
fn with_entry<R>(path: &Path, state: &FileState, load: bool, f: impl FnOnce(&Entry) -> Option<R>) -> Option<R> {
    let (folder, name) = split(path)?;
    if load {
        ensure_loaded(&folder);
    }
    folders().get(&folder)?.entries.get(&name).filter(|e| e.state == *state).and_then(f)
}

/// Reads `folder`'s disk index into memory unless this process has. One thread reads a
/// folder's index while others that need it wait; not under the global lock, so other
/// folders' indexes are read at the same time.
fn ensure_loaded(folder: &Path) {
    let gate = {
        let mut all = folders();
        if all.get(folder).is_some_and(|f| f.loaded) {
            return;
        }
        all.entry(folder.to_path_buf()).or_default().gate.clone()
    };
    let _reading = gate.lock().unwrap_or_else(|e| e.into_inner());
    if folders().get(folder).is_some_and(|f| f.loaded) {
        return;
    }
    let read = index_dir().and_then(|d| index_file(&d, folder)).and_then(|f| read_index(&f, folder));
    let mut all = folders();
    let slot = all.entry(folder.to_path_buf()).or_default();
    slot.loaded = true;
    for (name, entry) in read.unwrap_or_default() {
        // Entries made in this process meanwhile are as good, and newer.
        if !slot.entries.contains_key(&name) {
            slot.bytes += entry.bytes();
            slot.entries.insert(name, entry);
        }
    }
}

/// Starts reading the disk indexes of `folders` on a thread of its own, so that a listing
/// finds them read (or being read) when its scan starts: the caller lists the folders
/// meanwhile.
pub fn preload(folders: Vec<PathBuf>) {
    if index_dir().is_none() {
        return;
    }
    let spawned = std::thread::Builder::new().name("pi-session-index".into()).spawn(move || {
        for f in folders {
            let f = if f.is_absolute() { f } else { std::path::absolute(&f).unwrap_or(f) };
            let _ = std::panic::catch_unwind(|| ensure_loaded(&f));
        }
    });
    // Without a thread the scan reads the index itself.
    drop(spawned);
}

/// Whether this process has read (or found no) disk index of `folder`.
#[cfg(test)]
pub fn loaded(folder: &Path) -> bool {
    folders().get(folder).is_some_and(|f| f.loaded)
}

/// Whether this process knows anything of the files of `folder` (rows or headers, from a
/// listing, discovery or the folder's disk index).
pub fn knows_folder(folder: &Path) -> bool {
    let folder = if folder.is_absolute() { Some(folder.to_path_buf()) } else { std::path::absolute(folder).ok() };
    folder.is_some_and(|f| folders().get(&f).is_some_and(|slot| !slot.entries.is_empty()))
}

/// The listing row of `path` in `stamp`'s state, if known (from memory, or the folder's
/// disk index, which is read once per process).
pub fn row(path: &Path, stamp: &FileStamp) -> Option<Arc<Row>> {
    with_entry(path, stamp.state.as_ref()?, true, |e| e.row.clone())
}

/// The header scan of `path` in `stamp`'s state, if known. `load`: read the folder's disk
/// index if this process has not (worth it when many headers of one folder are wanted).
pub fn header(path: &Path, stamp: &FileStamp, load: bool) -> Option<HeaderScan> {
    with_entry(path, stamp.state.as_ref()?, load, |e| e.header.as_ref().map(Head::scan))
}

/// Records what was found of `path`, read while its state was `before` and found `after`
/// (rule 2: kept only when both agree and the state is settled). Known parts of an entry
/// for the same state are kept.
pub fn record(path: &Path, before: &FileStamp, after: &FileStamp, row: Option<Arc<Row>>, header: Option<&HeaderScan>) {
    let (Some(state), Some((folder, name))) = (before.state, split(path)) else { return };
    if after.state != Some(state) || !settled(&state) {
        return;
    }
    let header = header.map(Head::of);
    let mut all = folders();
    let slot = all.entry(folder).or_default();
    let mut entry = match slot.entries.get(&name) {
        Some(old) if old.state == state => old.clone(),
        _ => Entry { state, row: None, header: None },
    };
    let changed = (row.is_some() && entry.row.is_none()) || (header.is_some() && entry.header.is_none());
    if !changed {
        return;
    }
    if row.is_some() {
        entry.row = row;
    }
    if header.is_some() {
        entry.header = header;
    }
    slot.insert(name, entry);
}

/// `header::read_header` through the listing index: a session's header never changes while
/// its file does not, and discovery (`findById`, `continueRecent`) re-reads the same
/// folders. A hit costs one `stat`.
pub fn read_header_cached(path: &Path) -> crate::error::Result<HeaderScan> {
    read_header_stamped(path, crate::storage::platform::stamp(path), false)
}

/// `read_header_cached` with the file's stat already taken (`None`: it failed). `load`: read
/// the folder's disk index first if this process has not (worth it for a whole folder).
pub fn read_header_stamped(path: &Path, stat: Option<FileStamp>, load: bool) -> crate::error::Result<HeaderScan> {
    if let Some(found) = stat.as_ref().and_then(|st| header(path, st, load)) {
        return Ok(found);
    }
    let scan = crate::model::header::read_header(path)?;
    if let (Some(before), Some(after)) = (stat, crate::storage::platform::stamp(path)) {
        record(path, &before, &after, None, Some(&scan));
    }
    Ok(scan)
}

/// After a listing of every session file of some folders (`paths`: all of them, no
/// others of those folders): drops entries of files that are gone and writes each changed
/// folder's disk index.
pub fn finish_listing(paths: &[String]) {
    let mut present: HashMap<PathBuf, std::collections::HashSet<OsString>> = HashMap::new();
    for p in paths {
        if let Some((folder, name)) = split(Path::new(p)) {
            present.entry(folder).or_default().insert(name);
        }
    }
    let dir = index_dir();
    for (folder, names) in present {
        let snapshot = {
            let mut all = folders();
            let Some(slot) = all.get_mut(&folder) else { continue };
            let before = slot.entries.len();
            slot.entries.retain(|n, _| names.contains(n));
            if slot.entries.len() != before {
                slot.dirty = true;
                slot.bytes = slot.entries.values().map(Entry::bytes).sum();
            }
            if !slot.dirty {
                continue;
            }
            slot.dirty = false;
            let mut entries: Vec<(OsString, Entry)> =
                slot.entries.iter().map(|(n, e)| (n.clone(), e.clone())).collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries
        };
        if let Some(file) = dir.as_deref().and_then(|d| index_file(d, &folder)) {
            // Speed only: an index that cannot be written is read from the files next time.
            let _ = write_index(&file, &folder, &snapshot);
        }
    }
    let mut all = folders();
    if all.values().map(|f| f.bytes).sum::<usize>() > MAX_MEMORY_BYTES {
        // The disk index has them: the next listing reads it again.
        all.retain(|_, f| f.dirty);
    }
}

/// Forgets every in-memory entry (the benchmark times listings with nothing cached, or
/// with the disk index only, as a fresh process has).
pub fn clear_memory() {
    folders().clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_is_never_inside_the_folder() {
        let folder = Path::new("/s/sessions/--p--");
        assert!(index_file(Path::new("/s/sessions/--p--"), folder).is_none());
        assert!(index_file(Path::new("/s/sessions/--p--/cache"), folder).is_none());
        let f = index_file(Path::new("/cache/psn"), folder).unwrap();
        assert_eq!(f.parent().unwrap(), Path::new("/cache/psn"));
        assert_ne!(f, index_file(Path::new("/cache/psn"), Path::new("/s/sessions/--q--")).unwrap());
    }
}
