//! The command line's contract (issue 46): exit codes command by command (0 found or done,
//! 1 nothing found, 2 a usage or I/O error), unreadable files named on stderr and counted,
//! the same files counted by every listing command, and the flags (`-n` is `--dry-run`,
//! `-l` is `--limit`, `rm --dry-run`, `tree --json`, `-h` / `--help`).
//!
//! Run: `cargo test -p pi-sessions --test cli_contract`.

use std::fs;
use std::path::Path;

mod common;
use common::Tmp;
use common::fixtures::*;

/// Exit code, and the first line of stderr, of `args` in the sample agent dir.
fn code(a: &Agent, args: &[&str]) -> (i32, String) {
    let o = a.run(args);
    (o.code, o.stderr.lines().next().unwrap_or_default().to_string())
}

// ---------------------------------------------------------------------------
// Exit codes
// ---------------------------------------------------------------------------

#[test]
fn found_or_done_is_0() {
    let a = Agent::new();
    // Not "in use" (modified in the last minute), so that `rm --dry-run` would remove it.
    common::set_mtime(&a.demo().join("2025-01-03T10-00-00-000Z_abc12399-other.jsonl"), common::hours_ago(2));
    for args in [
        &["ls", "--cwd", "/work/demo"][..],
        &["ls", "--all"],
        &["show", "abc12345"],
        &["tree", "abc12345"],
        &["tree", "abc12345", "--json"],
        &["context", "abc12345"],
        &["export", "abc12345"],
        &["search", "approach", "--all"],
        &["stats", "--all"],
        &["rm", "abc12399", "--dry-run"],
    ] {
        let (c, err) = code(&a, args);
        assert_eq!(c, 0, "{args:?}: {err}");
    }
}

#[test]
fn nothing_found_is_1_and_says_what() {
    let a = Agent::new();
    let dir_arg = a.demo();
    let dir_arg = dir_arg.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // A session, id or file that does not exist, in every command that takes one.
        (vec!["show", "nope"], "nope"),
        (vec!["tree", "nope"], "nope"),
        (vec!["context", "nope"], "nope"),
        (vec!["export", "nope"], "nope"),
        (vec!["prune", "nope"], "nope"),
        (vec!["prune", "nope", "-n"], "nope"),
        (vec!["archive", "nope"], "nope"),
        (vec!["restore", "nope"], "nope"),
        (vec!["rm", "nope"], "nope"),
        (vec!["rm", "nope", "--dry-run"], "nope"),
        (vec!["show", "/no/such/file.jsonl"], "/no/such/file.jsonl"),
        (vec!["check", "/no/such/dir"], "/no/such/dir"),
        // A directory given as a session says so.
        (vec!["show", dir_arg], "is a directory"),
        (vec!["tree", dir_arg], "is a directory"),
        (vec!["rm", dir_arg], "is a directory"),
        // A project folder that does not exist, in every listing command.
        (vec!["ls", "--cwd", "/work/nowhere"], "does not exist"),
        (vec!["stats", "--cwd", "/work/nowhere"], "does not exist"),
        (vec!["search", "x", "--cwd", "/work/nowhere"], "does not exist"),
        (vec!["archive", "--older-than", "1", "--cwd", "/work/nowhere"], "does not exist"),
        // A search without a match; nothing archived to restore.
        (vec!["search", "no such words anywhere", "--all"], "no match"),
        (vec!["restore", "--all"], "no archived sessions"),
        // `--dir` that does not exist.
        (vec!["--dir", "/no/such/folder", "ls"], "/no/such/folder"),
        (vec!["--dir", "/no/such/folder", "show", "abc"], "/no/such/folder"),
    ];
    for (args, says) in cases {
        let (c, err) = code(&a, &args);
        assert_eq!(c, 1, "{args:?}: {err}");
        // Windows resolves `/no/such/…` onto a drive: the message names it so.
        if cfg!(unix) || !says.starts_with('/') {
            assert!(err.contains(says), "{args:?} says {says:?}: {err}");
        }
    }
    // An empty folder lists nothing: 1 (and `--json` still prints its empty array).
    let empty = Tmp::new("empty");
    let o = run(&["--dir", empty.0.to_str().unwrap(), "ls", "--json"], &[]);
    assert_eq!((o.code, o.json().items().len()), (1, 0));
    let o = run(&["--dir", empty.0.to_str().unwrap(), "stats"], &[]);
    assert_eq!(o.code, 1, "no sessions: {}", o.stderr);
    // `--limit 0` found sessions and shows none: 0, without "no sessions".
    let o = a.run(&["ls", "--all", "--limit", "0"]);
    assert_eq!((o.code, o.stdout.as_str(), o.stderr.as_str()), (0, "", ""));
}

#[test]
fn a_missing_agent_dir_names_the_path_and_is_not_no_sessions() {
    for args in [&["ls"][..], &["ls", "--all"], &["stats"], &["search", "x", "--all"], &["show", "abc"], &["rm", "abc"]]
    {
        let mut full = vec!["--agent-dir", "/no/such/agent"];
        full.extend_from_slice(args);
        let o = run(&full, &[]);
        assert_eq!(o.code, 1, "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(if cfg!(unix) { "/no/such/agent" } else { "agent" }), "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains("no such directory"), "{args:?}: {}", o.stderr);
        assert!(!o.stderr.contains("no sessions"), "{args:?} is not an empty folder: {}", o.stderr);
    }
    // Through the environment as well.
    let o = run(&["ls"], &[("PI_CODING_AGENT_DIR", "/no/such/env-agent")]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("env-agent"), "{}", o.stderr);
}

#[test]
fn usage_errors_are_2() {
    let a = Agent::new();
    let file = a.demo().join("2025-01-02T09-00-00-000Z_abc12345-rich.jsonl");
    for args in [
        &["ls", "--bogus"][..],
        &["ls", "-l", "x"],
        &["ls", "-l", "1", "-n", "1"],
        &["rm"],
        &["archive"],
        &["show", "abc"],
        &["--dir", file.to_str().unwrap(), "ls"],
    ] {
        let (c, err) = code(&a, args);
        assert_eq!(c, 2, "{args:?}: {err}");
    }
}

// ---------------------------------------------------------------------------
// Unreadable files, and the same files in every command
// ---------------------------------------------------------------------------

/// `ls`, `stats` and `search` with each unreadable file named once on stderr, the readable
/// ones still listed, a count at the end, and exit code 2.
#[cfg(unix)]
fn assert_skipped(agent: &Path, names: &[&Path], why: &str, listed: usize) {
    let ag = agent.to_str().unwrap();
    for args in [
        &["ls", "--all", "--json"][..],
        &["stats", "--all", "--json"],
        &["search", "e", "--all", "--json"],
        &["check", "--json"],
    ] {
        let mut full = vec!["--agent-dir", ag];
        full.extend_from_slice(args);
        let o = run(&full, &[]);
        assert_eq!(o.code, 2, "{args:?}: an unreadable file is an I/O error: {}", o.stderr);
        for n in names {
            let line = format!("pi-sessions: {}: {why}", n.display());
            assert_eq!(o.stderr.lines().filter(|l| *l == line).count(), 1, "{args:?}: {line:?} once in\n{}", o.stderr);
        }
        let summary = format!(
            "pi-sessions: {} skipped (could not be read)",
            if names.len() == 1 { "1 file".to_string() } else { format!("{} files", names.len()) }
        );
        assert_eq!(o.stderr.lines().last(), Some(summary.as_str()), "{args:?}: the count comes last");
        let j = o.json();
        match args[0] {
            "ls" => assert_eq!(j.items().len(), listed, "{args:?}: the others are still listed"),
            "stats" => assert_eq!(n(j, "sessions") as usize, listed, "{args:?}"),
            _ => {}
        }
    }
}

#[cfg(unix)]
#[test]
fn unreadable_files_are_named_on_stderr_and_counted() {
    use std::os::unix::fs::symlink;
    let a = Agent::new();
    let demo = a.demo();
    // What a root-run test can make unreadable: a link to nowhere and a link loop.
    let dangling = demo.join("2025-05-05T00-00-00-000Z_dangling.jsonl");
    symlink("/no/such/target.jsonl", &dangling).unwrap();
    let looped = demo.join("2025-05-06T00-00-00-000Z_loop.jsonl");
    symlink(&looped, &looped).unwrap();
    // Not regular files: passed over without a word (a FIFO would block a reader).
    fs::create_dir(demo.join("folder.jsonl")).unwrap();
    let fifo = demo.join("pipe.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // Opening a FIFO waits for a writer: a run that does must fail here, not hang.
    for cmd in [&["ls", "--all"][..], &["stats", "--all"], &["search", "x", "--all"]] {
        let mut c = std::process::Command::new(common::BIN);
        c.arg("--agent-dir").arg(a.dir()).args(cmd);
        c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                let _ = child.wait();
                panic!("{cmd:?} hangs on a FIFO named *.jsonl");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let o = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!stderr.contains("folder.jsonl") && !stderr.contains("pipe.jsonl"), "{cmd:?}: {stderr}");
    }
    let o = a.run(&["ls", "--all"]);
    assert!(o.stderr.contains(&format!("{}: No such file or directory", dangling.display())), "{}", o.stderr);
    assert!(o.stderr.contains(&format!("{}: Too many levels of symbolic links", looped.display())), "{}", o.stderr);
    fs::remove_file(&looped).unwrap();
    assert_skipped(a.dir(), &[&dangling], "No such file or directory", 4);
}

/// The real case: a file its reader has no permission for. As root (where mode 000 does not
/// stop reads) the binary runs as `nobody` through `setpriv`; skipped where neither works.
#[cfg(unix)]
#[test]
fn a_file_without_read_permission_is_named_with_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let a = Agent::new();
    let secret = a.demo().join("2025-06-06T00-00-00-000Z_secret.jsonl");
    write(&secret, &[header("secret", "/work/demo", &ts(0)), user("s1", None, 1, "hidden")]);
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();
    let root = unsafe_euid() == 0;
    if root && !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("skipped: root without setpriv");
        return;
    }
    let mut dirs = vec![a.dir().to_path_buf()];
    dirs.extend(walk_dirs(a.dir()));
    for d in &dirs {
        fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let index = Tmp::new("perm-index");
    fs::set_permissions(&index.0, fs::Permissions::from_mode(0o777)).unwrap();
    let ag = a.dir().to_str().unwrap();
    for args in [&["ls", "--all"][..], &["stats", "--all"], &["search", "e", "--all"]] {
        let mut c = if root {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid", "65534", "--regid", "65534", "--clear-groups", common::BIN]);
            c
        } else {
            std::process::Command::new(common::BIN)
        };
        c.arg("--agent-dir").arg(ag).args(args).env_remove("COLUMNS").env("PI_SESSION_NATIVE_INDEX_DIR", &index.0);
        let o = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        let line = format!("pi-sessions: {}: Permission denied", secret.display());
        assert_eq!(stderr.lines().filter(|l| *l == line).count(), 1, "{args:?}: {stderr}");
        assert!(stderr.ends_with("pi-sessions: 1 file skipped (could not be read)\n"), "{args:?}: {stderr}");
    }
    // Named as a session, it is an I/O error too (2), with the same line.
    let mut c = if root {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid", "65534", "--regid", "65534", "--clear-groups", common::BIN]);
        c
    } else {
        std::process::Command::new(common::BIN)
    };
    let o = c.args(["--agent-dir", ag, "show"]).arg(&secret).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&o.stderr), format!("pi-sessions: {}: Permission denied\n", secret.display()));
}

#[cfg(unix)]
fn unsafe_euid() -> u32 {
    // `id -u`: no libc dependency for one number.
    let o = std::process::Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap_or(1)
}

#[cfg(unix)]
fn walk_dirs(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push(p.clone());
            out.extend(walk_dirs(&p));
        }
    }
    out
}

/// A file name that is not UTF-8 is listed by `ls` as it is counted by `stats` and `search`.
#[cfg(target_os = "linux")]
#[test]
fn every_command_counts_the_same_files() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let a = Agent::new();
    let odd = a.demo().join(OsStr::from_bytes(b"2025-07-07T00-00-00-000Z_\xff-odd.jsonl"));
    write(&odd, &[header("odd-name", "/work/demo", &ts(0)), user("o1", None, 1, "an odd name")]);
    let ls = a.run(&["ls", "--all", "--json"]);
    assert_eq!(ls.code, 0, "{}", ls.stderr);
    let ids = strs(ls.json(), "id");
    assert!(ids.contains(&"odd-name".to_string()), "{ids:?}");
    let stats = a.run(&["stats", "--all", "--json"]);
    assert_eq!(n(stats.json(), "sessions") as usize, ids.len(), "stats counts what ls lists");
    let found = a.run(&["search", "an odd name", "--all", "--json"]);
    assert_eq!(strs(found.json(), "sessionId"), ["odd-name"]);
}

// ---------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------

#[test]
fn dash_n_is_dry_run_where_something_changes_and_l_is_limit() {
    let a = Agent::new();
    let other = a.demo().join("2025-01-03T10-00-00-000Z_abc12399-other.jsonl");
    common::set_mtime(&other, common::hours_ago(2));
    // rm -n / --dry-run: says what it would do, removes nothing.
    for dry in ["-n", "--dry-run"] {
        let o = a.run(&["rm", "abc12399", dry]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let want = format!(
            "would move to the trash: --work-demo--{}2025-01-03T10-00-00-000Z_abc12399-other.jsonl\n",
            std::path::MAIN_SEPARATOR
        );
        if cfg!(unix) {
            assert_eq!(o.stdout, want);
        } else {
            assert!(o.stdout.starts_with("would move to the trash: ") && o.stdout.contains("abc12399-other.jsonl"));
        }
        assert!(other.exists());
    }
    let o = a.run(&["rm", "abc12399", "-n", "--permanent", "--json"]);
    let j = o.json();
    assert_eq!(j.get("dryRun").unwrap().raw_str(), "true");
    assert_eq!(s(j.get("removed").unwrap().items()[0], "how"), "deleted");
    assert!(other.exists());
    // A dry run says what a real run would refuse: a session modified just now is in use.
    let rich = a.demo().join("2025-01-02T09-00-00-000Z_abc12345-rich.jsonl");
    for args in [&["rm", "abc12345", "-n"][..], &["archive", "abc12345", "-n"], &["prune", "abc12345", "-n"]] {
        let o = a.run(args);
        assert_eq!(o.code, 1, "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains("in use"), "{args:?}: {}", o.stderr);
        let verb = if args[0] == "rm" {
            "removed"
        } else if args[0] == "archive" {
            "archived"
        } else {
            "pruned"
        };
        assert!(
            o.stderr.trim_end().ends_with(&format!("not {verb}")),
            "{args:?} ends with what was not done: {}",
            o.stderr
        );
        assert!(rich.exists());
    }
    // Listing: -l / --limit; the old -n N still works, with a deprecation line.
    for lim in [&["-l", "1"][..], &["--limit", "1"], &["-l1"]] {
        let mut args = vec!["ls", "--all", "--json"];
        args.extend_from_slice(lim);
        let o = a.run(&args);
        assert_eq!((o.json().items().len(), o.stderr.as_str()), (1, ""), "{lim:?}");
    }
    let o = a.run(&["ls", "--all", "--json", "-n", "1"]);
    assert_eq!(o.json().items().len(), 1);
    assert!(o.stderr.contains("-n N is deprecated") && o.stderr.contains("--limit"), "{}", o.stderr);
    let o = a.run(&["search", "approach", "--all", "--json", "-n", "1"]);
    assert_eq!(o.json().items().len(), 1);
    assert!(o.stderr.contains("deprecated"), "{}", o.stderr);
    let o = a.run(&["search", "approach", "--all", "--json", "-l", "2"]);
    assert_eq!((o.json().items().len(), o.stderr.as_str()), (2, ""));
}

#[test]
fn tree_json_lists_every_entry_in_drawing_order() {
    let a = Agent::new();
    let o = a.run(&["tree", "abc12345", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let j = o.json();
    let ids = strs(j, "id");
    assert_eq!(ids, ["u1", "a1", "r1", "u2", "a2", "b1", "u3", "c1", "a3", "cm1", "e1", "l1", "n1", "g1"]);
    let items = j.items();
    let depth: Vec<f64> = items.iter().map(|i| n(*i, "depth")).collect();
    assert_eq!(depth, [0., 0., 0., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1.]);
    assert_eq!(s(items[0], "label"), "start");
    assert_eq!(items[13].get("leaf").unwrap().raw_str(), "true");
    assert_eq!(items[3].get("active").unwrap().raw_str(), "false", "u2 is off the active path");
    assert_eq!(s(items[1], "text"), r#"Looking at it → read({"path":"src/parser.rs"})"#);
    let active = a.run(&["tree", "abc12345", "--json", "--active"]);
    assert_eq!(active.json().items().len(), 12);
    // Branches within branches: depth is the number of branchings above the entry.
    let nested = a.demo().join("2025-08-08T00-00-00-000Z_nested.jsonl");
    write(
        &nested,
        &[
            header("nested-1", "/work/demo", &ts(0)),
            user("u1", None, 1, "root"),
            user("a1", Some("u1"), 2, "chain"),
            user("b1", Some("a1"), 3, "first branch"),
            user("c1", Some("a1"), 6, "second branch"),
            user("d1", Some("b1"), 4, "first of first"),
            user("e1", Some("b1"), 5, "second of first"),
        ],
    );
    let j = a.run(&["tree", nested.to_str().unwrap(), "--json"]);
    let items = j.json().items();
    let got: Vec<(String, f64)> = items.iter().map(|i| (s(*i, "id"), n(*i, "depth"))).collect();
    let want = [("u1", 0.), ("a1", 0.), ("b1", 1.), ("d1", 2.), ("e1", 2.), ("c1", 1.)];
    assert_eq!(got, want.map(|(i, d)| (i.to_string(), d)));
}

#[test]
fn dash_h_is_a_summary_and_help_the_full_text() {
    for cmd in [None, Some("ls"), Some("rm"), Some("search"), Some("tree")] {
        let args = |flag: &'static str| -> Vec<&str> { cmd.into_iter().chain([flag]).collect() };
        let short = run(&args("-h"), &[]);
        let long = run(&args("--help"), &[]);
        assert_eq!((short.code, long.code), (0, 0));
        assert!(short.stdout.len() < long.stdout.len(), "{cmd:?}: -h is shorter than --help");
    }
    let top = run(&["--help"], &[]);
    assert!(top.stdout.contains("0  found or done"), "{}", top.stdout);
    // Usage lines come from the definitions: every option is in the help.
    let ls = run(&["ls", "--help"], &[]).stdout;
    for opt in ["--archived", "--limit", "-l,", "--cwd", "--all", "--json", "--full-paths"] {
        assert!(ls.contains(opt), "ls --help names {opt}");
    }
    let search = run(&["search", "--help"], &[]).stdout;
    for opt in ["-C, --context", "--archived", "--role", "--limit"] {
        assert!(search.contains(opt), "search --help names {opt}");
    }
    assert!(run(&["rm", "--help"], &[]).stdout.contains("-n, --dry-run"));
    // The help names only docs that ship: docs/cli.md is in the npm package's files.
    assert!(
        top.stdout.contains("docs/cli.md in the\nnpm package") || top.stdout.contains("npm package"),
        "{}",
        top.stdout
    );
    let pkg = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../package.json")).unwrap();
    assert!(pkg.contains("\"docs/cli.md\""), "package.json ships docs/cli.md");
}
