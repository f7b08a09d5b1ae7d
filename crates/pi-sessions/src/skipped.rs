//! Files a command could not read. Each is named once on stderr when it is met
//! (`pi-sessions: <path>: Permission denied`), as ripgrep and fd do, and the run ends with a
//! count and exit code 2. Every listing command gets its files through `folder::files` /
//! `archive::archived_files`, which check each file here, so they all count the same set.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static SEEN: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// The error's text without Rust's ` (os error N)` suffix.
pub fn reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

/// Names `path` on stderr (once per run) as skipped.
pub fn note(path: &Path, e: &io::Error) {
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if seen.get_or_insert_with(HashSet::new).insert(path.to_path_buf()) {
        eprintln!("pi-sessions: {}: {}", path.display(), reason(e));
    }
}

/// Files skipped so far.
pub fn count() -> usize {
    SEEN.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map_or(0, HashSet::len)
}

/// Whether a directory entry named like a session is one to read: a regular file (through
/// symlinks) that opens. Directories, FIFOs, sockets and devices are passed over without a word
/// (opening a FIFO would wait for a writer); a file that does not open, or a symlink that leads
/// nowhere, is noted.
pub fn readable_file(path: &Path) -> bool {
    match fs::metadata(path) {
        Ok(m) if m.is_file() => match File::open(path) {
            Ok(_) => true,
            Err(e) => {
                note(path, &e);
                false
            }
        },
        Ok(_) => false,
        Err(e) => {
            note(path, &e);
            false
        }
    }
}

/// `read_dir` of a folder the scope names; a folder that is gone is empty, one that does not
/// open is noted.
pub fn read_dir(dir: &Path) -> Option<fs::ReadDir> {
    match fs::read_dir(dir) {
        Ok(rd) => Some(rd),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            note(dir, &e);
            None
        }
    }
}
