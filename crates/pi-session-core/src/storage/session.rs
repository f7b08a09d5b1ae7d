//! One open session: its index (`Tree`), where its lines live (`LineStore`) and the
//! protocol for writing its file.
//!
//! Appends follow the reference (`appendFileSync` of one line) and add what it lacks:
//! - each append is one `write` on an append descriptor (on Windows under a byte-range lock,
//!   `platform::AppendLock`), so two processes never interleave bytes within a line, and a
//!   failed write is truncated back (no torn line);
//! - before writing, the lines that *other processes* appended since this session last read
//!   or wrote the file are indexed, so the tree matches the file;
//! - the lines that other sessions *of this process* wrote are not: the reference's managers
//!   each keep their own `fileEntries` and never see each other's appends, and inside one
//!   process ours behave the same. A process-wide record of the byte ranges this process
//!   wrote to each file (`own_writes`) tells them apart.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::entry::{Key, Skeleton};
use crate::model::ids;
use crate::model::tree::Tree;
use crate::storage::lines::{LineStore, Span};
use crate::storage::platform;
use crate::storage::store::{self, AppendHandle, Appended, Loaded, WriteMode};

/// What `Session::open` found at a path (`loadEntriesFromFile`'s cases).
pub enum Opened {
    Missing,
    NotSession,
    Session(Box<Session>),
}

/// The outcome of `Session::commit`.
#[derive(Debug, PartialEq, Eq)]
pub enum Commit {
    /// The entry is in the file and indexed.
    Written,
    /// Its id is taken (by an entry another process appended): nothing was written, and the
    /// caller builds the entry again with another id, as `generateId` would have.
    IdTaken,
}

/// One session's entries, index and loaded text.
#[derive(Default)]
pub struct Session {
    tree: Tree,
    store: LineStore,
    /// The session file this session last read or wrote, and its length then: appends to
    /// that file first read what other processes added after it.
    known: Option<(PathBuf, u64)>,
    /// The session file kept open for appends (on Windows only during one).
    append: Option<AppendHandle>,
    /// Batches of lines read from other writers (numbers their object-id keys).
    ingests: u64,
    /// The session file this session last read or wrote: an append there finds a file, or
    /// writes the whole session again (see `write_line`).
    wrote: Option<PathBuf>,
    /// Ids handed out for entries the facade is about to add (`reserve_ids`).
    reserved: ids::Reserved,
}

/// The lines (without newlines) of the items at the given positions, which the facade holds
/// as objects: asked for only when a whole session must be written again.
pub type HeldLines<'a> = dyn FnMut(&[u32]) -> Result<Vec<Vec<u8>>> + 'a;

/// The target of `path` when it is a symbolic link to nothing (followed link by link, at most
/// 40 deep, as the kernel does).
fn dangling_target(path: &Path) -> Option<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        let link = std::fs::read_link(&at).ok()?;
        at = at.parent().map_or(link.clone(), |dir| dir.join(&link));
        if std::fs::symlink_metadata(&at).is_err() {
            return Some(at);
        }
    }
    None
}

/// Where an appended line landed.
struct Landed {
    start: u64,
    end: u64,
    /// In another file than the one this session last read or wrote (nothing to pick up).
    elsewhere: bool,
}

impl Session {
    /// An empty session (the facade pushes the entries it builds).
    pub fn new() -> Session {
        Session::default()
    }

    /// Loads a file like `loadEntriesFromFile`.
    pub fn open(path: &Path) -> Result<Opened> {
        Ok(match store::load(path)? {
            Loaded::Missing => Opened::Missing,
            Loaded::NotSession => Opened::NotSession,
            Loaded::Session { skeletons, store, len } => {
                Opened::Session(Box::new(Session::indexed(path, skeletons, store, len)))
            }
        })
    }

    /// `forkFrom`: copies the session at `source` to the file `prepare` names, after its
    /// header line, in one read of the source (see `store::fork`). `None` when the source is
    /// missing or not a session, or `prepare` stopped; else the new file as `open` finds it
    /// (not a session when the given header is not one: the reference's load then refuses it).
    pub fn fork(source: &Path, prepare: &mut dyn FnMut() -> store::NewFile) -> Result<Option<Opened>> {
        Ok(match store::fork(source, prepare)? {
            store::Forked::Missing | store::Forked::NotSession | store::Forked::Stopped => None,
            store::Forked::Written { path, skeletons, store, len } => {
                own_writes::replaced(&path, len);
                if !skeletons.first().is_some_and(crate::model::header::is_header) {
                    return Ok(Some(Opened::NotSession));
                }
                Some(Opened::Session(Box::new(Session::indexed(&path, skeletons, store, len))))
            }
        })
    }

    /// A session indexed from JSONL text the facade built (one entry per line), which is also
    /// written to `path` when given (atomically).
    pub fn from_text(text: &[u8], path: Option<&Path>, mode: WriteMode) -> Result<Session> {
        let mut s = Session::new();
        if let Some(path) = path {
            s.write_all(path, text, mode)?;
        }
        s.ingest(text);
        Ok(s)
    }

    fn indexed(path: &Path, skeletons: Vec<Skeleton>, store: LineStore, len: u64) -> Session {
        let tree = Tree::from_items(skeletons);
        Session {
            tree,
            store,
            known: Some((path.to_path_buf(), len)),
            wrote: Some(path.to_path_buf()),
            ..Session::default()
        }
    }

    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    pub fn store(&self) -> &LineStore {
        &self.store
    }

    /// Adds an entry the facade built and holds (no line of its own here).
    pub fn push(&mut self, sk: Skeleton) {
        if let Key::Str(id) = &sk.id {
            self.reserved.release(id);
        }
        self.store.push(Span::None);
        self.tree.push(sk);
    }

    /// `n` ids for the entries the facade appends next, space-separated, in order:
    /// `generateId(byId)` for each, with the entries before it in the index (see
    /// `ids::Reserved`).
    pub fn reserve_ids(&mut self, n: usize) -> String {
        let tree = &self.tree;
        let empty = tree.entry_count() == 0;
        self.reserved.take(n, |id| !empty && tree.lookup(&Key::Str(id.into())).is_some())
    }

    /// An id handed out whose entry was taken back (its write failed): free again, as it is
    /// for `generateId` once the entry leaves `byId`.
    pub fn release_id(&mut self, id: &str) {
        self.reserved.release(id);
    }

    /// Removes the last item (rollback of a failed append).
    pub fn pop(&mut self) {
        self.store.pop();
        self.tree.pop();
    }

    /// Indexes lines held in memory; returns how many entries they held.
    fn ingest(&mut self, text: &[u8]) -> usize {
        self.ingests += 1;
        let parsed = store::parse_text(text, self.ingests + 1);
        let all: Vec<u32> = (0..parsed.skeletons.len() as u32).collect();
        let mut added = 0;
        let _ = parsed.store.for_each(&all, |i, line| {
            let span = self.store.keep(line.unwrap_or(b"null"));
            self.store.push(span);
            self.tree.push(parsed.skeletons[i].clone());
            added += 1;
        });
        added
    }

    /// Appends one entry the facade built to the session file at `path`: checks that its id
    /// is unused, writes `line` (which ends with its newline) with one `write`, indexes the
    /// lines other processes appended before it since this session last read or wrote the
    /// file, then the entry. A failed write indexes nothing and returns the error (the
    /// reference's rollback). `held` gives the lines of entries the facade holds, should the
    /// whole session have to be written again (see `write_line`).
    pub fn commit(
        &mut self,
        sk: Skeleton,
        line: &[u8],
        path: &Path,
        sync: bool,
        held: &mut HeldLines,
    ) -> Result<Commit> {
        if self.tree.lookup(&sk.id).is_some() {
            return Ok(Commit::IdTaken);
        }
        let known = self.known_len(path);
        let landed = self.write_line(path, line, sync, held)?;
        if let Some(known) = known
            && !landed.elsewhere
            && landed.start > known
        {
            self.pick_up(known, landed.start);
        }
        self.let_go_after_append();
        self.push(sk);
        self.set_known(path, landed.end);
        Ok(Commit::Written)
    }

    /// Appends `line` to `path` without indexing anything (the facade's `_persist`, kept
    /// public as in the reference).
    pub fn append_line(&mut self, path: &Path, line: &[u8], sync: bool, held: &mut HeldLines) -> Result<()> {
        let landed = self.write_line(path, line, sync, held)?;
        self.let_go_after_append();
        self.set_known(path, landed.end);
        Ok(())
    }

    /// Writes the whole file atomically (`Exclusive`: like `openSync(path, "wx")`).
    pub fn write_all(&mut self, path: &Path, text: &[u8], mode: WriteMode) -> Result<()> {
        match store::write_file(path, &[text], mode) {
            // A rewrite of the file this session has open (its append handle, the lines it reads
            // back): where open files block a rename over them, let go and retry; where the
            // rename is refused still, write in place as the reference does (`replace_with`).
            Err(Error::Io { syscall: "rename", .. }) if mode == WriteMode::Replace => {
                self.let_go_of_file()?;
                let mut write = |f: &File| std::io::Write::write_all(&mut &*f, text);
                store::replace_with(path, &mut write, &mut || Ok(()))?;
            }
            r => r?,
        }
        own_writes::replaced(path, text.len() as u64);
        self.known = Some((path.to_path_buf(), text.len() as u64));
        self.wrote = Some(path.to_path_buf());
        Ok(())
    }

    /// Lets go of the session file where open files block a rename over them
    /// (`platform::OPEN_FILES_BLOCK_RENAME`), before the file is rewritten from outside this
    /// session (a migration indexes the new text in another session): the append handle is
    /// closed and the lines still read from the file are read into memory. Elsewhere nothing
    /// changes.
    pub fn release_file(&mut self) -> Result<()> {
        if platform::OPEN_FILES_BLOCK_RENAME {
            self.let_go_of_file()?;
        }
        Ok(())
    }

    /// Closes the append handle and reads the lines still read from the file into memory.
    fn let_go_of_file(&mut self) -> Result<()> {
        self.append = None;
        self.store.into_memory().map_err(|e| Error::io(e, "read", None))
    }

    /// How long this session believes `path` is: what it last read or wrote there. Only the
    /// file this session holds can have entries to pick up (after a failed `setSessionFile`,
    /// the reference appends to a file it never read: so do we).
    /// Records that this session's file at `path` is `len` bytes long (without a new path
    /// buffer per append).
    fn set_known(&mut self, path: &Path, len: u64) {
        match &mut self.known {
            Some((p, l)) if p == path => *l = len,
            known => *known = Some((path.to_path_buf(), len)),
        }
    }

    fn known_len(&self, path: &Path) -> Option<u64> {
        self.known.as_ref().filter(|(p, _)| p == path).map(|(_, len)| *len)
    }

    /// Indexes the lines in `from..to` of the open file that other processes wrote. Read
    /// problems are not reported (the lines are picked up by a later append, or on reopen).
    /// Closes the append handle where a session does not keep its file open between appends
    /// (`platform::HOLD_APPEND_HANDLE`), once the lines other processes wrote are picked up.
    fn let_go_after_append(&mut self) {
        if !platform::HOLD_APPEND_HANDLE {
            self.append = None;
        }
    }

    fn pick_up(&mut self, from: u64, to: u64) {
        let Some(h) = self.append.as_ref() else { return };
        let Ok(bytes) = h.read_new(from, to) else { return };
        let end = from + bytes.len() as u64;
        let mut text = Vec::new();
        for (a, b) in own_writes::foreign(h.id(), from, end) {
            text.extend_from_slice(&bytes[(a - from) as usize..(b - from) as usize]);
        }
        if !text.is_empty() {
            self.ingest(&text);
        }
    }

    /// Appends `line` to the file at `path`, whatever another program did to it since this
    /// session last read or wrote it (`docs/safety.md`, "The outside world"), and records it
    /// as this process's. The reference opens the path for every append, so its line always
    /// lands in the file the path names now; so does ours:
    /// - the held descriptor is used while the path still names its file (by identity, checked
    ///   before the write, and after it: a line that went to a file renamed away meanwhile is
    ///   taken back out of it and written again at the path);
    /// - a file that replaced it at the path (an editor's save, a repair) gets the line;
    /// - where nothing is at the path any more (deleted, moved away), the whole session is
    ///   written there: every entry this session holds, then the line (the reference, pi's
    ///   #8939, leaves one headerless line). Its folder gone, that write fails with the
    ///   reference's `ENOENT ... open` and nothing is kept.
    ///
    /// A path this session never read or wrote is created by the append, as the reference's.
    fn write_line(&mut self, path: &Path, line: &[u8], sync: bool, held: &mut HeldLines) -> Result<Landed> {
        let mut elsewhere = false;
        for _ in 0..4 {
            if self.append.as_ref().is_none_or(|h| h.path() != path) {
                let ours = self.wrote.as_deref() == Some(path);
                match AppendHandle::open(path, !ours) {
                    Ok(h) => self.append = Some(h),
                    Err(e) if ours && e.kind() == std::io::ErrorKind::NotFound => {
                        // A symbolic link whose target is gone: the target is written, as the
                        // reference's append would create it.
                        let target = dangling_target(path);
                        match self.write_whole(path, target.as_deref().unwrap_or(path), line, held)? {
                            Some((start, end)) => return Ok(Landed { start, end, elsewhere: true }),
                            // Another program made a file there meanwhile: append to it.
                            None => {
                                elsewhere = true;
                                continue;
                            }
                        }
                    }
                    Err(e) => return Err(Error::io_creating(e, path)),
                }
            }
            let expected = self.known_len(path);
            let Some(h) = self.append.as_mut() else { unreachable!("opened above") };
            match h.append(line, expected, sync)? {
                Appended::At { start, end, .. } => {
                    own_writes::appended(h.id(), start, end);
                    if self.wrote.as_deref() != Some(path) {
                        self.wrote = Some(path.to_path_buf());
                    }
                    return Ok(Landed { start, end, elsewhere });
                }
                Appended::Moved => {
                    self.append = None;
                    self.known = None;
                    elsewhere = true;
                }
            }
        }
        Err(Error::Msg(format!(
            "the session file was replaced during every attempt to append to it: {}",
            path.display()
        )))
    }

    /// Writes the whole session to `dest` (the session's `path`, or the target of a link there
    /// to nothing), where nothing is: every item's line (the stored
    /// ones from this session's store, as `JSON.stringify(JSON.parse(line))`; the facade's
    /// from `held`), then `line`; atomically and
    /// exclusively (a temp file linked into place). `None` when a file appeared at the path
    /// meanwhile. Returns where `line` landed.
    fn write_whole(
        &mut self,
        path: &Path,
        dest: &Path,
        line: &[u8],
        held: &mut HeldLines,
    ) -> Result<Option<(u64, u64)>> {
        let all: Vec<u32> = (0..self.tree.len() as u32).collect();
        let facade: Vec<u32> = all.iter().copied().filter(|&p| self.store.span(p) == Span::None).collect();
        let facade_lines = if facade.is_empty() { Vec::new() } else { held(&facade)? };
        if facade_lines.len() != facade.len() {
            return Err(Error::Msg("the facade's lines do not match its entries".into()));
        }
        let store = &self.store;
        let written = store::write_file_with(dest, WriteMode::Exclusive, &mut |f| {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            let mut next = facade_lines.iter();
            let mut failed = None;
            store.for_each(&all, |_, stored| {
                // As `JSON.stringify` of the parsed entry, as the reference's whole-file writes
                // are: canonical lines as they are, the others re-serialised.
                let text: std::borrow::Cow<[u8]> = match stored {
                    Some(text) if crate::storage::json::canonical_members(text, |_, _, _| {}) => text.into(),
                    Some(text) => crate::storage::json::stringify_parsed(text).map_or(text.into(), Into::into),
                    None => next.next().map_or(&b""[..], |l| l.as_slice()).into(),
                };
                if failed.is_none()
                    && let Err(e) =
                        std::io::Write::write_all(&mut w, &text).and_then(|()| std::io::Write::write_all(&mut w, b"\n"))
                {
                    failed = Some(e);
                }
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            std::io::Write::write_all(&mut w, line)?;
            std::io::Write::flush(&mut w)
        });
        match written {
            Ok(len) => {
                own_writes::replaced(dest, len);
                self.wrote = Some(path.to_path_buf());
                self.known = Some((path.to_path_buf(), len));
                Ok(Some((len - line.len() as u64, len)))
            }
            Err(e) if e.is_exists() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `createBranchedSession` of the path from the entry `leaf` (see `branch::write_branch`):
    /// the new file's session, or `None` where the facade builds the branch in JS.
    pub fn branch_session(
        &self,
        leaf: &crate::model::entry::Key,
        prepare: &mut dyn FnMut(&[u32]) -> store::NewFile,
    ) -> Result<Option<Session>> {
        let path = self.tree.branch(leaf)?;
        if path.is_empty() {
            return Ok(None);
        }
        let Some(w) = crate::model::branch::write_branch(&self.tree, &self.store, &path, prepare)? else {
            return Ok(None);
        };
        own_writes::replaced(&w.path, w.len);
        Ok(Some(Session::indexed(&w.path, w.skeletons, w.store, w.len)))
    }

    /// The lines of every entry, one per line, as ASCII (non-ASCII escaped as `\uXXXX`):
    /// `loadEntriesFromFile`'s material.
    pub fn all_lines_ascii(&self) -> Result<Vec<u8>> {
        let all: Vec<u32> = (0..self.tree.len() as u32).collect();
        self.store.joined_ascii(&all).map_err(|e| Error::io(e, "read", None))
    }
}

/// The byte ranges this process wrote to each file, by device and inode. Adjacent ranges
/// merge, so one process writing a session alone keeps one range per file.
mod own_writes {
    use std::collections::HashMap;
    use std::path::Path;
    use std::sync::{Mutex, OnceLock};

    type FileId = (u64, u64);
    /// Per file, its ranges in order (`from..to`).
    type Table = HashMap<FileId, Vec<(u64, u64)>>;

    fn table() -> std::sync::MutexGuard<'static, Table> {
        static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
        // A panic while holding the lock cannot leave the table half-updated in a way that
        // matters (each update is one push or one field store), so a poisoned lock is used as is.
        TABLE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
    }

    /// This process appended `from..to` to the file `id`.
    pub fn appended(id: Option<FileId>, from: u64, to: u64) {
        let Some(id) = id else { return };
        let mut t = table();
        let ranges = t.entry(id).or_default();
        // A range reaching past this one belongs to an earlier file with the same inode
        // number (deleted, then the number reused): forget it.
        ranges.retain(|r| r.1 <= from);
        match ranges.last_mut() {
            Some(last) if last.1 == from => last.1 = to,
            _ => ranges.push((from, to)),
        }
    }

    /// This process wrote the whole file at `path` (`len` bytes, a new inode).
    pub fn replaced(path: &Path, len: u64) {
        let Some(id) = crate::storage::platform::stamp(path).and_then(|s| s.id) else { return };
        table().insert(id, vec![(0, len)]);
    }

    /// The parts of `from..to` of file `id` that this process did not write.
    pub fn foreign(id: Option<FileId>, from: u64, to: u64) -> Vec<(u64, u64)> {
        let t = table();
        let Some(ranges) = id.and_then(|id| t.get(&id)) else { return vec![(from, to)] };
        let mut out = Vec::new();
        let mut at = from;
        for &(a, b) in ranges {
            if b <= at || a >= to {
                continue;
            }
            if a > at {
                out.push((at, a));
            }
            at = at.max(b);
        }
        if at < to {
            out.push((at, to));
        }
        out
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn foreign_is_what_the_process_did_not_write() {
            let raw = (u64::MAX, 1);
            let id = Some(raw);
            assert_eq!(foreign(id, 0, 10), vec![(0, 10)]);
            appended(id, 10, 20);
            appended(id, 20, 30); // merges
            appended(id, 40, 50);
            assert_eq!(table().get(&raw).unwrap(), &vec![(10, 30), (40, 50)]);
            assert_eq!(foreign(id, 0, 60), vec![(0, 10), (30, 40), (50, 60)]);
            assert_eq!(foreign(id, 15, 45), vec![(30, 40)]);
            assert_eq!(foreign(id, 10, 30), vec![]);
            // A stale table (an inode number reused by a shorter file) is dropped past the write.
            appended(id, 5, 8);
            assert_eq!(foreign(id, 0, 20), vec![(0, 5), (8, 20)]);
        }
    }
}

#[cfg(test)]
mod outside;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::entry::{EntryType, Key, Role};
    use std::io::Write;

    fn tmp(name: &str) -> crate::testutil::TempPath {
        crate::testutil::TempPath::file(&format!("session-{name}"), "s.jsonl")
    }

    pub(super) fn none_held(_: &[u32]) -> Result<Vec<Vec<u8>>> {
        Ok(Vec::new())
    }

    pub(super) const HEADER: &str =
        "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n";

    pub(super) fn msg(id: &str, parent: &str) -> (Skeleton, Vec<u8>) {
        let line = format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":\"{parent}\",\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"x\"}}}}\n"
        );
        let sk = Skeleton {
            ty: EntryType::Message,
            id: Key::Str(id.into()),
            parent: Key::Str(parent.into()),
            target: Key::Undefined,
            label_truthy: false,
            role: Role::User,
            retained_tail: false,
            time: None,
        };
        (sk, line.into_bytes())
    }

    pub(super) fn opened(path: &Path) -> Session {
        match Session::open(path).unwrap() {
            Opened::Session(s) => *s,
            _ => panic!("not a session"),
        }
    }

    fn ids(s: &Session) -> Vec<String> {
        (0..s.tree().len() as u32).map(|p| format!("{:?}", s.tree().get(p).id)).collect()
    }

    #[test]
    fn sessions_of_one_process_ignore_each_other() {
        let p = tmp("one-process");
        std::fs::write(&p, HEADER).unwrap();
        let mut a = opened(&p);
        let mut b = opened(&p);
        let (sk, line) = msg("a1", "x");
        assert_eq!(a.commit(sk, &line, &p, false, &mut none_held).unwrap(), Commit::Written);
        let (sk, line) = msg("b1", "x");
        assert_eq!(b.commit(sk, &line, &p, false, &mut none_held).unwrap(), Commit::Written);
        let (sk, line) = msg("a2", "a1");
        a.commit(sk, &line, &p, false, &mut none_held).unwrap();
        // Each sees the header and its own entries, as the reference's managers do.
        assert_eq!(a.tree().len(), 3);
        assert_eq!(b.tree().len(), 2);
        assert!(ids(&a).iter().all(|i| !i.contains("b1")));
        // The file has every line, whole.
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 4);
        assert!(text.contains("\"a1\"") && text.contains("\"b1\"") && text.contains("\"a2\""));
        // A session opened afterwards sees them all.
        assert_eq!(opened(&p).tree().len(), 4);
    }

    #[test]
    fn lines_of_other_processes_are_picked_up_before_an_append() {
        let p = tmp("other-process");
        std::fs::write(&p, HEADER).unwrap();
        let mut a = opened(&p);
        let mut b = opened(&p);
        let (sk, line) = msg("a1", "x");
        a.commit(sk, &line, &p, false, &mut none_held).unwrap();
        // Another process (not recorded as ours) appends between our own lines.
        let (_, other) = msg("o1", "a1");
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(&other).unwrap();
        let (sk, line) = msg("b1", "x");
        b.commit(sk, &line, &p, false, &mut none_held).unwrap();
        let (sk, line) = msg("a2", "a1");
        a.commit(sk, &line, &p, false, &mut none_held).unwrap();
        let a_ids = ids(&a);
        assert_eq!(a_ids.len(), 4, "{a_ids:?}"); // header, a1, o1, a2: not b1
        assert!(a_ids[2].contains("o1") && a_ids[3].contains("a2"));
        let b_ids = ids(&b);
        assert_eq!(b_ids.len(), 3, "{b_ids:?}"); // header, o1, b1: not a1
        assert!(b_ids[1].contains("o1"));
    }

    #[test]
    fn a_known_id_is_refused() {
        let p = tmp("id-taken");
        std::fs::write(&p, HEADER).unwrap();
        let mut a = opened(&p);
        let (sk, line) = msg("same", "x");
        assert_eq!(a.commit(sk, &line, &p, false, &mut none_held).unwrap(), Commit::Written);
        let (sk, line) = msg("same", "x");
        assert_eq!(a.commit(sk, &line, &p, false, &mut none_held).unwrap(), Commit::IdTaken);
        assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 2, "nothing written");
        assert_eq!(a.tree().len(), 2);
    }

    #[test]
    fn a_replaced_file_gets_the_line_at_its_path() {
        let p = tmp("replaced");
        std::fs::write(&p, HEADER).unwrap();
        let mut a = opened(&p);
        let (sk, line) = msg("a1", "x");
        a.commit(sk, &line, &p, false, &mut none_held).unwrap();
        // Another process replaces the file (a rename over it), as a repair tool would.
        let other = p.with_extension("new");
        std::fs::write(&other, HEADER).unwrap();
        std::fs::rename(&other, &p).unwrap();
        let (sk, line) = msg("a2", "a1");
        a.commit(sk, &line, &p, false, &mut none_held).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.contains("\"a2\""));
        assert_eq!(a.tree().len(), 3, "the new file's header is not taken for another writer's line");
    }

    #[test]
    fn a_whole_file_write_is_this_process_s() {
        let p = tmp("whole-file");
        let mut a = Session::from_text(HEADER.as_bytes(), Some(&p), WriteMode::Exclusive).unwrap();
        let mut b = Session::new();
        b.known = Some((p.to_path_buf(), 0));
        let (sk, line) = msg("a1", "x");
        a.commit(sk, &line, &p, false, &mut none_held).unwrap();
        let (sk, line) = msg("b1", "x");
        b.commit(sk, &line, &p, false, &mut none_held).unwrap();
        assert_eq!(b.tree().len(), 1, "b ignores the header and a1 written by this process");
        // An exclusive write to an existing file fails and changes nothing.
        assert!(Session::from_text(HEADER.as_bytes(), Some(&p), WriteMode::Exclusive).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 3);
    }

    /// `fork`'s session of the new file is what loading that file gives: the same skeletons
    /// and lines, with lines re-serialised (not canonical), repaired (invalid UTF-8) and kept in
    /// memory among them.
    #[test]
    fn a_fork_indexes_its_file_as_a_load_would() {
        let src = tmp("fork-index");
        let mut text = HEADER.as_bytes().to_vec();
        let mut parent = "null".to_string();
        for i in 0..6000 {
            let id = format!("e{i}");
            let body = if i == 7 { "bad BAD utf-8".to_string() } else { "y".repeat(i % 300) };
            if i == 100 {
                // A label on the path: the branch below rewrites the next line's parent.
                text.extend_from_slice(format!("{{\"type\":\"label\",\"id\":\"l1\",\"parentId\":{parent},\"timestamp\":\"2024-01-01T00:00:02.000Z\",\"targetId\":\"e5\",\"label\":\"x\"}}\n").as_bytes());
                parent = "\"l1\"".to_string();
            }
            let line = format!(
                "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{body}\"}}}}\n"
            );
            // e3 is valid JSON but not canonical: the fork writes it re-serialised.
            let line = if i == 3 { line.replacen("\"type\":", "\"type\": ", 1) } else { line };
            let mut bytes = line.into_bytes();
            if let Some(at) = bytes.windows(3).position(|w| w == b"BAD") {
                bytes.splice(at..at + 3, [0xff]);
            }
            text.extend_from_slice(&bytes);
            parent = format!("\"{id}\"");
        }
        std::fs::write(&src, &text).unwrap();
        let prefix = HEADER.replace("\"s1\"", "\"s2\"");
        let out = src.with_file_name("fork.jsonl");
        let made = match Session::fork(&src, &mut || Some((out.clone(), prefix.as_bytes().to_vec()))).unwrap() {
            Some(Opened::Session(s)) => *s,
            _ => panic!("not forked"),
        };
        let loaded = opened(&out);
        assert_eq!(made.tree().len(), loaded.tree().len());
        let all: Vec<u32> = (0..loaded.tree().len() as u32).collect();
        for &p in &all {
            assert_eq!(made.tree().get(p), loaded.tree().get(p), "skeleton {p}");
        }
        assert_eq!(made.store().joined_ascii(&all).unwrap(), loaded.store().joined_ascii(&all).unwrap());
        assert_eq!(made.known, loaded.known);
        // The line that was not canonical is written as `JSON.stringify(JSON.parse(line))`.
        let written = std::fs::read_to_string(&out).unwrap();
        assert!(written.contains("{\"type\":\"message\",\"id\":\"e3\",\"parentId\":\"e2\""), "e3 re-serialised");
        assert!(!written.contains("\"type\": \"message\""));
    }
}
