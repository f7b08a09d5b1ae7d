//! The failpoint matrix: every write path of the core × every failpoint, each failed once,
//! then the path run on (`cargo test -p pi-session-core --lib --features failpoints matrix`).
//!
//! After each fault: an operation that returned success left its entry in the file; one that
//! failed returned EIO and left the files as they were (no torn line, no half-written session,
//! no stray temp file); run again without the fault, it succeeds and the file reopens with the
//! entries it should hold. The table it prints is `docs/safety.md`'s, which must match it.

use std::fs;
use std::path::{Path, PathBuf};

use super::{POINTS, arm, disarm};
use crate::error::{Error, Result};
use crate::model::entry::Key;
use crate::storage::session::{Commit, Opened, Session};
use crate::storage::store::WriteMode;

const HEADER: &str =
    "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n";

fn line(id: &str, parent: &str) -> String {
    format!(
        "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":\"{parent}\",\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{id}\"}}}}\n"
    )
}

/// The header, e1 and e2: what each path's file holds once it succeeded.
fn session_e2() -> String {
    format!("{HEADER}{}{}", line("e1", "x"), line("e2", "e1"))
}

fn skeleton(l: &str) -> crate::model::entry::Skeleton {
    crate::model::entry::Skeleton::parse_line(l.trim_end().as_bytes(), &mut 0).expect("a message line")
}

fn open(p: &Path) -> Session {
    match Session::open(p).expect("opens") {
        Opened::Session(s) => *s,
        _ => panic!("{} is not a session", p.display()),
    }
}

/// The ids in a session file as the loader reads it (`None`: missing or not a session).
fn ids(p: &Path) -> Option<Vec<String>> {
    match Session::open(p).ok()? {
        Opened::Session(s) => Some(
            (0..s.tree().len() as u32)
                .map(|i| match &s.tree().get(i).id {
                    Key::Str(k) => k.to_string(),
                    k => format!("{k:?}"),
                })
                .collect(),
        ),
        _ => None,
    }
}

/// An operation under test, ready to run (again).
type Run = Box<dyn FnMut() -> Result<()>>;

/// One write path: `setup` makes the files in a folder, `run` is the operation under test,
/// `before` and `after` the ids the file at `target` must hold when it failed or succeeded.
struct WritePath {
    name: &'static str,
    setup: fn(&Path) -> Run,
    target: &'static str,
    before: Option<&'static [&'static str]>,
    after: &'static [&'static str],
}

fn with_session(dir: &Path) -> (PathBuf, Session) {
    let p = dir.join("s.jsonl");
    fs::write(&p, format!("{HEADER}{}", line("e1", "x"))).unwrap();
    let s = open(&p);
    (p, s)
}

/// Commits `e2` to the session at `p`, the facade holding nothing.
fn commit_e2(s: &mut Session, p: &Path) -> Result<()> {
    let l = line("e2", "e1");
    let c = s.commit(skeleton(&l), l.as_bytes(), p, true, &mut |_| Ok(Vec::new()))?;
    assert_eq!(c, Commit::Written);
    Ok(())
}

const E1: &[&str] = &["s1", "e1"];
const E2: &[&str] = &["s1", "e1", "e2"];

fn paths() -> Vec<WritePath> {
    vec![
        WritePath {
            name: "append",
            setup: |dir| {
                let (p, mut s) = with_session(dir);
                Box::new(move || commit_e2(&mut s, &p))
            },
            target: "s.jsonl",
            before: Some(E1),
            after: E2,
        },
        WritePath {
            name: "append after an editor's save (file~)",
            setup: |dir| {
                let (p, mut s) = with_session(dir);
                let text = fs::read(&p).unwrap();
                fs::rename(&p, dir.join("s.jsonl~")).unwrap();
                fs::write(&p, text).unwrap();
                Box::new(move || commit_e2(&mut s, &p))
            },
            target: "s.jsonl",
            before: Some(E1),
            after: E2,
        },
        WritePath {
            name: "append after a delete (whole session)",
            setup: |dir| {
                let (p, mut s) = with_session(dir);
                fs::remove_file(&p).unwrap();
                Box::new(move || commit_e2(&mut s, &p))
            },
            target: "s.jsonl",
            before: None,
            after: E2,
        },
        WritePath {
            name: "first write",
            setup: |dir| {
                let p = dir.join("s.jsonl");
                let text = session_e2();
                Box::new(move || Session::from_text(text.as_bytes(), Some(&p), WriteMode::Exclusive).map(|_| ()))
            },
            target: "s.jsonl",
            before: None,
            after: E2,
        },
        WritePath {
            name: "migration (rewrite)",
            setup: |dir| {
                let (p, mut s) = with_session(dir);
                let text = session_e2();
                Box::new(move || s.write_all(&p, text.as_bytes(), WriteMode::Replace))
            },
            target: "s.jsonl",
            before: Some(E1),
            after: E2,
        },
        WritePath {
            name: "torn tail repaired on open",
            setup: |dir| {
                let p = dir.join("s.jsonl");
                let text = session_e2();
                fs::write(&p, text.trim_end()).unwrap();
                Box::new(move || Session::open(&p).map(|_| ()))
            },
            target: "s.jsonl",
            before: Some(E2),
            after: E2,
        },
        WritePath {
            name: "forkFrom",
            setup: |dir| {
                let (p, _) = with_session(dir);
                let out = dir.join("fork.jsonl");
                let header = HEADER.to_string();
                Box::new(move || Session::fork(&p, &mut || Some((out.clone(), header.as_bytes().to_vec()))).map(|_| ()))
            },
            target: "fork.jsonl",
            before: None,
            after: E1,
        },
        WritePath {
            name: "createBranchedSession",
            setup: |dir| {
                let (_, s) = with_session(dir);
                let out = dir.join("branch.jsonl");
                Box::new(move || {
                    s.branch_session(&Key::Str("e1".into()), &mut |_| Some((out.clone(), HEADER.as_bytes().to_vec())))
                        .map(|_| ())
                })
            },
            target: "branch.jsonl",
            before: None,
            after: E1,
        },
    ]
}

/// Temp files left in a folder.
fn strays(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// Runs one cell; its outcome for the table.
fn cell(path: &WritePath, point: &'static str) -> &'static str {
    let dir = crate::testutil::TempPath::dir("faults");
    let mut run = (path.setup)(&dir);
    let target = dir.join(path.target);
    let backup = dir.join("s.jsonl~");
    let backup_before = fs::read(&backup).ok();
    arm(point, 0);
    let result = run();
    let fired = disarm();
    let what = format!("{} × {point}", path.name);
    let outcome = match (fired, &result) {
        (false, _) => {
            if let Err(e) = &result {
                panic!("{what}: failed without a fault: {e}");
            }
            "—"
        }
        (true, Ok(())) => {
            assert_eq!(ids(&target).as_deref(), Some(path.after_vec().as_slice()), "{what}: succeeded, so it is there");
            "ok"
        }
        (true, Err(e)) => {
            match e {
                Error::Io { errno, .. } => assert_eq!(
                    *errno,
                    crate::storage::platform::node_errno(
                        &std::io::Error::from_raw_os_error(crate::storage::platform::RAW_EIO),
                        crate::storage::platform::FsCall::of("write")
                    ),
                    "{what}: {e}"
                ),
                e => panic!("{what}: not the I/O error: {e:?}"),
            }
            let now = ids(&target);
            assert_eq!(
                now.as_deref(),
                path.before.map(|b| b.iter().map(|s| s.to_string()).collect::<Vec<_>>()).as_deref(),
                "{what}: failed, so the file is as it was"
            );
            "EIO"
        }
    };
    assert_eq!(strays(&dir), Vec::<String>::new(), "{what}: temp files left");
    assert_eq!(fs::read(&backup).ok(), backup_before, "{what}: the file aside is untouched");
    // Run on, without the fault.
    if fired && result.is_err() {
        run().unwrap_or_else(|e| panic!("{what}: the run after the fault failed: {e}"));
    }
    assert_eq!(ids(&target).as_deref(), Some(path.after_vec().as_slice()), "{what}: after running on");
    assert_eq!(strays(&dir), Vec::<String>::new(), "{what}: temp files left after running on");
    outcome
}

impl WritePath {
    fn after_vec(&self) -> Vec<String> {
        self.after.iter().map(|s| s.to_string()).collect()
    }
}

/// The table, as `docs/safety.md` shows it.
pub fn table() -> String {
    let mut out = format!("| write path | {} |\n|---|{}\n", POINTS.join(" | "), "---|".repeat(POINTS.len()));
    let (mut reached, mut total) = (0, 0);
    for path in paths() {
        let cells: Vec<&str> = POINTS.iter().map(|p| cell(&path, p)).collect();
        reached += cells.iter().filter(|c| **c != "—").count();
        total += cells.len();
        out.push_str(&format!("| {} | {} |\n", path.name, cells.join(" | ")));
    }
    out.push_str(&format!(
        "\n{reached} faults injected ({total} cells, {} paths × {} points).\n",
        total / POINTS.len(),
        POINTS.len()
    ));
    out
}

#[test]
fn every_fault_once_loses_nothing() {
    let table = table();
    // Shown with `-- --nocapture`: the table for docs/safety.md.
    #[allow(clippy::print_stdout, reason = "the table is this test's output, for the docs")]
    {
        println!("{table}");
    }
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/safety.md")).unwrap();
    let start = "<!-- failpoint matrix: cargo test -p pi-session-core --lib --features failpoints matrix -->\n";
    let shown = doc.split_once(start).and_then(|(_, rest)| rest.split_once("<!-- end -->")).map(|(t, _)| t);
    assert_eq!(shown, Some(table.as_str()), "docs/safety.md shows this table:\n{table}");
}
