//! The command line's rewrites under one fault at a time: `prune`, `check --repair`,
//! `archive`, `restore` and `rm --permanent`, each run with every failpoint of the core's
//! atomic writes and of the command line's own steps armed in turn
//! (`PI_SESSION_NATIVE_FAILPOINT`), then run again without it.
//!
//! Run: `cargo test -p pi-sessions --features failpoints --test faults` (`npm test` does).
//! After each fault: a command that failed said so (exit code not 0) and left every file as it
//! was, or (`archive`/`restore`, a failed removal of the original) kept both copies intact; one
//! that succeeded did its work; no temp file is left; run again, it succeeds.
#![cfg(feature = "failpoints")]

use std::fs;
use std::path::{Path, PathBuf};

mod common;
use common::fixtures::*;

/// The command line's own failpoints (`safe::fault`).
const CLI_POINTS: &[&str] = &["cli.open", "cli.fsync", "cli.link", "cli.unlink"];

/// The core's atomic-write points (the rewrites go through it), then the command line's.
fn points() -> Vec<&'static str> {
    pi_session_core::faults::POINTS
        .iter()
        .copied()
        .filter(|p| p.starts_with("write."))
        .chain(CLI_POINTS.iter().copied())
        .collect()
}

/// Every file under `dir`, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<_> =
        walk(dir).into_iter().filter(|p| p.is_file()).map(|p| (p.clone(), fs::read(&p).unwrap())).collect();
    out.sort();
    out
}

fn temps(dir: &Path) -> Vec<PathBuf> {
    walk(dir).into_iter().filter(|p| p.to_string_lossy().ends_with(".tmp")).collect()
}

struct Cmd {
    name: &'static str,
    /// Arguments, given the agent dir.
    args: fn(&Agent) -> Vec<String>,
    /// Brings the agent dir to the state the command starts from.
    prepare: fn(&Agent),
    /// Whether the command's work is done.
    done: fn(&Agent) -> bool,
}

fn rich(a: &Agent) -> PathBuf {
    a.demo().join("2025-01-02T09-00-00-000Z_abc12345-rich.jsonl")
}

fn torn(a: &Agent) -> PathBuf {
    a.demo().join("torn.jsonl")
}

fn archived(a: &Agent) -> PathBuf {
    a.dir()
        .join("sessions-archive")
        .join(project("/work/demo"))
        .join("2025-01-02T09-00-00-000Z_abc12345-rich.jsonl.zst")
}

fn agent_run(a: &Agent, args: &[String], env: &[(&str, &str)]) -> Out {
    let mut full = vec!["--agent-dir".to_string(), a.dir().to_string_lossy().into_owned()];
    full.extend(args.iter().cloned());
    let full: Vec<&str> = full.iter().map(String::as_str).collect();
    run(&full, &[&[("PI_SESSION_NATIVE_CLI_RECENT_SECS", "0")], env].concat())
}

fn commands() -> Vec<Cmd> {
    vec![
        Cmd {
            name: "prune",
            args: |a| vec!["prune".into(), rich(a).to_string_lossy().into_owned()],
            prepare: |_| {},
            done: |a| {
                let text = fs::read_to_string(rich(a)).unwrap_or_default();
                !text.contains("\"id\":\"a2\"") && text.contains("\"id\":\"a3\"")
            },
        },
        Cmd {
            name: "check --repair",
            args: |a| vec!["check".into(), torn(a).to_string_lossy().into_owned(), "--repair".into()],
            prepare: |a| damaged(&a.demo()),
            done: |a| fs::read_to_string(torn(a)).is_ok_and(|t| t.ends_with("\"timestamp\":1735808402000}}\n")),
        },
        Cmd {
            name: "archive",
            args: |a| vec!["archive".into(), rich(a).to_string_lossy().into_owned()],
            prepare: |_| {},
            done: |a| !rich(a).exists() && archived(a).exists(),
        },
        Cmd {
            name: "restore",
            args: |_| vec!["restore".into(), "abc12345-rich".into()],
            prepare: |a| {
                let o = agent_run(a, &["archive".into(), rich(a).to_string_lossy().into_owned()], &[]);
                assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
            },
            done: |a| rich(a).exists() && !archived(a).exists(),
        },
        Cmd {
            name: "rm --permanent",
            args: |a| vec!["rm".into(), rich(a).to_string_lossy().into_owned(), "--permanent".into()],
            prepare: |_| {},
            done: |a| !rich(a).exists(),
        },
    ]
}

/// One cell: the command with `point` armed; its outcome for the table.
fn cell(cmd: &Cmd, point: &str) -> &'static str {
    let a = Agent::new();
    (cmd.prepare)(&a);
    // The session's bytes, in its file or in its archive.
    let session0 = fs::read(rich(&a)).ok().or_else(|| zstd::decode_all(fs::File::open(archived(&a)).ok()?).ok());
    let before = files(a.dir());
    let args = (cmd.args)(&a);
    let o = agent_run(&a, &args, &[("PI_SESSION_NATIVE_FAILPOINT", point)]);
    let what = format!("{} × {point}: exit {}\n{}{}", cmd.name, o.code, o.stdout, o.stderr);
    let fired = o.stderr.contains(&format!("failpoint {point} fired"));
    assert!(temps(a.dir()).is_empty(), "{what}: temp files left: {:?}", temps(a.dir()));
    let outcome = match (fired, o.code) {
        (false, 0) => {
            assert!((cmd.done)(&a), "{what}: not done");
            "—"
        }
        (false, _) => panic!("{what}: failed without a fault"),
        (true, 0) => {
            assert!((cmd.done)(&a), "{what}: said done, but is not");
            "ok"
        }
        (true, _) if files(a.dir()) == before => "refused",
        (true, _) => {
            // A removal that failed after the copy was made: both copies, each whole.
            assert!(o.stdout.contains("cannot remove") || o.stderr.contains("cannot remove"), "{what}: files changed");
            assert!(rich(&a).exists() && archived(&a).exists(), "{what}");
            let back = zstd::decode_all(fs::File::open(archived(&a)).unwrap()).unwrap();
            assert_eq!(Some(fs::read(rich(&a)).unwrap()), session0, "{what}: the session's bytes");
            assert_eq!(back, fs::read(rich(&a)).unwrap(), "{what}: the archive's bytes");
            return "both kept";
        }
    };
    // Run on, without the fault.
    if outcome == "refused" {
        let o = agent_run(&a, &args, &[]);
        assert_eq!(o.code, 0, "{what}: the run after the fault: {}{}", o.stdout, o.stderr);
        assert!((cmd.done)(&a), "{what}: not done after running on");
        assert!(temps(a.dir()).is_empty(), "{what}: temp files left after running on");
    }
    outcome
}

#[test]
fn every_fault_once_in_the_command_line_loses_nothing() {
    let points = points();
    let mut table = format!("| command | {} |\n|---|{}\n", points.join(" | "), "---|".repeat(points.len()));
    let mut reached = 0;
    for cmd in commands() {
        let cells: Vec<&str> = points.iter().map(|p| cell(&cmd, p)).collect();
        reached += cells.iter().filter(|c| **c != "—").count();
        table.push_str(&format!("| {} | {} |\n", cmd.name, cells.join(" | ")));
    }
    table.push_str(&format!(
        "\n{reached} faults injected ({} cells, {} commands × {} points).\n",
        commands().len() * points.len(),
        commands().len(),
        points.len()
    ));
    // Shown with `-- --nocapture`: the table for docs/safety.md.
    #[allow(clippy::print_stdout, reason = "the table is this test's output, for the docs")]
    {
        println!("{table}");
    }
    let doc = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/safety.md")).unwrap();
    let start =
        "<!-- command line failpoint matrix: cargo test -p pi-sessions --features failpoints --test faults -->\n";
    let shown = doc.split_once(start).and_then(|(_, rest)| rest.split_once("<!-- end -->")).map(|(t, _)| t);
    assert_eq!(shown, Some(table.as_str()), "docs/safety.md shows this table:\n{table}");
}
