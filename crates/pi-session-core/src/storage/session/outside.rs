//! What other programs do to a session file while a session has it open, and where the
//! appends land afterwards (`docs/safety.md`, "The outside world"). The rule: every append
//! lands in the file at the session's path, as the reference's (which opens the path for
//! every append); where nothing is at the path, the whole session is written there (the
//! reference leaves one headerless line: pi's #8939), and where the folder is gone the
//! append fails as the reference's does (`ENOENT`), keeping nothing.

use std::fs;
use std::path::{Path, PathBuf};

use super::tests::{HEADER, msg, opened};
use super::*;

/// A session opened on `path`, with the entries it appended and their lines by position.
struct Live {
    s: Session,
    path: PathBuf,
    lines: Vec<Option<Vec<u8>>>,
    n: usize,
}

impl Live {
    fn open(path: &Path) -> Live {
        let s = opened(path);
        let lines = vec![None; s.tree().len()];
        let mut live = Live { s, path: path.to_path_buf(), lines, n: 0 };
        live.append().unwrap();
        live
    }

    /// Appends the next entry (`e1`, `e2`, …) as the facade does.
    fn append(&mut self) -> Result<Commit> {
        self.n += 1;
        let parent = if self.n == 1 { "x".to_string() } else { format!("e{}", self.n - 1) };
        let (sk, line) = msg(&format!("e{}", self.n), &parent);
        let lines = &self.lines;
        let mut held = |ps: &[u32]| -> Result<Vec<Vec<u8>>> {
            Ok(ps.iter().map(|&p| lines[p as usize].clone().expect("a line the facade holds")).collect())
        };
        let r = self.s.commit(sk, &line, &self.path, false, &mut held);
        if r.is_ok() {
            self.lines.push(Some(line[..line.len() - 1].to_vec()));
        } else {
            self.n -= 1;
        }
        r
    }
}

fn text(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_default()
}

/// The ids of the entries in a file, in order.
fn ids_in(p: &Path) -> Vec<String> {
    text(p)
        .lines()
        .filter_map(|l| l.split("\"id\":\"").nth(1).map(|r| r.split('"').next().unwrap_or("").to_string()))
        .collect()
}

/// Another program's replacement of `p` with `content`: a new file renamed over it.
fn rename_over(p: &Path, content: &str) {
    let tmp = p.with_extension("other");
    fs::write(&tmp, content).unwrap();
    fs::rename(&tmp, p).unwrap();
}

/// Runs `change` on an open session's file, appends 3 entries, and checks that they are in
/// the file at the path, that this file is a whole session, and what `check` says of the rest.
fn case(name: &str, change: impl FnOnce(&Path), check: impl FnOnce(&Path)) {
    let dir = crate::testutil::TempPath::dir(&format!("outside-{name}"));
    let p = dir.join("s.jsonl");
    fs::write(&p, HEADER).unwrap();
    let mut live = Live::open(&p);
    change(&p);
    for _ in 0..3 {
        live.append().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let ids = ids_in(&p);
    assert_eq!(
        ids.first().map(String::as_str),
        Some("s1"),
        "{name}: the file at the path starts with the header: {ids:?}"
    );
    for e in ["e2", "e3", "e4"] {
        assert_eq!(ids.iter().filter(|i| *i == e).count(), 1, "{name}: {e} once in the file at the path: {ids:?}");
    }
    check(&p);
    // The session reopens with them.
    assert!(opened(&p).tree().lookup(&crate::model::entry::Key::Str("e4".into())).is_some(), "{name}");
}

#[test]
fn an_editor_save_that_keeps_a_backup() {
    // Emacs' default (and vim's with `backupcopy=no`): the file renamed to `file~`, a new one written.
    case(
        "emacs",
        |p| {
            let before = text(p);
            fs::rename(p, p.with_extension("jsonl~")).unwrap();
            fs::write(p, before).unwrap();
        },
        |p| {
            let backup = ids_in(&p.with_extension("jsonl~"));
            assert_eq!(backup, ["s1", "e1"], "the backup keeps what it had: no line went to it");
            assert_eq!(ids_in(p), ["s1", "e1", "e2", "e3", "e4"]);
        },
    );
}

#[test]
fn a_repair_that_keeps_a_hard_linked_backup() {
    // As `pi-sessions check --repair` does: `.bak` a hard link to the old file, the new one renamed over.
    case(
        "bak",
        |p| {
            let before = text(p);
            fs::hard_link(p, p.with_extension("bak")).unwrap();
            rename_over(p, &before);
        },
        |p| assert_eq!(ids_in(&p.with_extension("bak")), ["s1", "e1"]),
    );
}

#[test]
fn a_file_moved_away_is_written_whole_at_the_path() {
    case(
        "mv",
        |p| fs::rename(p, p.with_extension("moved")).unwrap(),
        |p| {
            assert_eq!(ids_in(&p.with_extension("moved")), ["s1", "e1"], "the moved file is left alone");
            assert_eq!(ids_in(p), ["s1", "e1", "e2", "e3", "e4"], "the whole session, not headerless lines");
        },
    );
}

#[test]
fn a_deleted_file_is_written_whole_at_the_path() {
    case(
        "rm",
        |p| fs::remove_file(p).unwrap(),
        |p| {
            assert_eq!(ids_in(p), ["s1", "e1", "e2", "e3", "e4"]);
            assert_eq!(text(p).lines().next(), Some(HEADER.trim_end()), "the header's own bytes");
        },
    );
}

#[test]
fn a_copy_over_or_a_rewrite_in_place() {
    case(
        "cp",
        |p| {
            let src = p.with_extension("src");
            fs::write(&src, text(p)).unwrap();
            fs::copy(&src, p).unwrap();
        },
        |p| assert_eq!(ids_in(p), ["s1", "e1", "e2", "e3", "e4"]),
    );
    case("in-place", |p| fs::write(p, HEADER).unwrap(), |p| assert_eq!(ids_in(p), ["s1", "e2", "e3", "e4"]));
}

#[test]
fn a_replacement_by_rename() {
    case(
        "rename",
        |p| rename_over(p, HEADER),
        |p| assert_eq!(ids_in(p), ["s1", "e2", "e3", "e4"], "the new file gets the lines, after its own"),
    );
}

#[test]
fn a_symlinked_session_path() {
    if cfg!(windows) {
        return; // Symbolic links need a privilege there.
    }
    let dir = crate::testutil::TempPath::dir("outside-symlink");
    let real = dir.join("real.jsonl");
    let p = dir.join("s.jsonl");
    fs::write(&real, HEADER).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&real, &p).unwrap();
    let mut live = Live::open(&p);
    // The target saved by an editor that keeps a backup.
    let before = text(&real);
    fs::rename(&real, real.with_extension("jsonl~")).unwrap();
    fs::write(&real, before).unwrap();
    live.append().unwrap();
    assert_eq!(ids_in(&real), ["s1", "e1", "e2"]);
    assert_eq!(ids_in(&real.with_extension("jsonl~")), ["s1", "e1"]);
    assert!(fs::symlink_metadata(&p).unwrap().file_type().is_symlink(), "the link stays a link");
}

#[test]
fn a_symlinked_session_path_whose_target_is_deleted() {
    if cfg!(windows) {
        return; // Symbolic links need a privilege there.
    }
    let dir = crate::testutil::TempPath::dir("outside-dangling");
    let real = dir.join("real.jsonl");
    let p = dir.join("s.jsonl");
    fs::write(&real, HEADER).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("real.jsonl", &p).unwrap();
    let mut live = Live::open(&p);
    fs::remove_file(&real).unwrap();
    live.append().unwrap();
    assert_eq!(ids_in(&real), ["s1", "e1", "e2"], "the whole session, at the link's target");
    assert!(fs::symlink_metadata(&p).unwrap().file_type().is_symlink(), "the link stays a link");
    // Still the session's file through the link: deleted again, written whole again.
    fs::remove_file(&real).unwrap();
    live.append().unwrap();
    assert_eq!(ids_in(&real), ["s1", "e1", "e2", "e3"]);
}

#[test]
fn a_folder_moved_away_fails_as_the_reference_and_keeps_nothing() {
    let dir = crate::testutil::TempPath::dir("outside-folder");
    let folder = dir.join("sessions");
    fs::create_dir(&folder).unwrap();
    let p = folder.join("s.jsonl");
    fs::write(&p, HEADER).unwrap();
    let mut live = Live::open(&p);
    let count = live.s.tree().len();
    let moved = dir.join("elsewhere");
    fs::rename(&folder, &moved).unwrap();
    let err = live.append().unwrap_err();
    match &err {
        Error::Io { syscall, path, .. } => {
            assert_eq!(*syscall, "open");
            assert_eq!(path.as_deref(), Some(p.to_string_lossy().as_ref()));
        }
        e => panic!("{e:?}"),
    }
    // ENOENT, as Node reports it (the raw error is 2 on Unix and Windows alike; on Windows a
    // missing folder is ERROR_PATH_NOT_FOUND, which libuv also reports as ENOENT).
    let enoent =
        |raw| platform::node_errno(&std::io::Error::from_raw_os_error(raw), platform::FsCall::Open { creating: true });
    match &err {
        Error::Io { errno, .. } => {
            assert!(*errno == enoent(2) || (platform::DELETE_MAY_PEND && *errno == enoent(3)), "{err}")
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(live.s.tree().len(), count, "nothing indexed");
    assert_eq!(ids_in(&moved.join("s.jsonl")), ["s1", "e1"], "nothing appended to the moved folder's file");
    assert!(!folder.exists(), "no folder made");
}

#[test]
fn a_line_written_to_a_file_renamed_away_is_taken_back_out() {
    // The rename lands between the open and the write (the handle is held): the line went to
    // the old file; it is cut back out of it and written at the path.
    if !platform::HOLD_APPEND_HANDLE {
        return;
    }
    let dir = crate::testutil::TempPath::dir("outside-inflight");
    let p = dir.join("s.jsonl");
    fs::write(&p, HEADER).unwrap();
    let mut h = AppendHandle::open(&p, false).unwrap();
    let old = text(&p);
    fs::rename(&p, p.with_extension("jsonl~")).unwrap();
    fs::write(&p, &old).unwrap();
    assert_eq!(h.append(b"{\"x\":1}\n", Some(old.len() as u64), false).unwrap(), Appended::Moved);
    assert_eq!(text(&p.with_extension("jsonl~")), old, "the old file as it was");
}

#[test]
fn a_replacement_that_keeps_a_backup() {
    // Windows' ReplaceFileW (elsewhere a hard link and a rename, as `check --repair` does).
    case(
        "replace-file",
        |p| {
            let new = p.with_extension("new");
            fs::write(&new, text(p)).unwrap();
            platform::replace_keeping_backup(p, &new, &p.with_extension("bak")).unwrap();
        },
        |p| assert_eq!(ids_in(&p.with_extension("bak")), ["s1", "e1"]),
    );
}

#[test]
fn a_file_deleted_while_another_program_holds_it() {
    // Where a delete waits for the holder's handle (Windows without POSIX delete semantics),
    // the name stays and cannot be opened: appends fail as the reference's would, keeping
    // nothing; once the holder lets go, the whole session is written at the path. Elsewhere the
    // path is free at once, and the whole session is written there at once.
    let dir = crate::testutil::TempPath::dir("outside-pending");
    let p = dir.join("s.jsonl");
    fs::write(&p, HEADER).unwrap();
    let mut live = Live::open(&p);
    let holder = fs::File::open(&p).unwrap();
    fs::remove_file(&p).unwrap();
    let count = live.s.tree().len();
    // Windows deletes with POSIX semantics where the file system allows it (NTFS on recent
    // Windows 10 and 11, and wine): the name is free at once, as on Unix.
    match (live.append(), platform::DELETE_MAY_PEND) {
        (Ok(_), _) => assert_eq!(ids_in(&p).first().map(String::as_str), Some("s1"), "a whole session"),
        (Err(_), true) => assert_eq!(live.s.tree().len(), count, "nothing kept"),
        (r, false) => panic!("the path is free at once here: {r:?}"),
    }
    drop(holder);
    live.append().unwrap();
    let ids = ids_in(&p);
    assert_eq!(ids.first().map(String::as_str), Some("s1"), "a whole session: {ids:?}");
    assert!(
        ids.contains(&"e1".to_string()) && ids.last().map(String::as_str) == Some(&*format!("e{}", live.n)),
        "{ids:?}"
    );
}
