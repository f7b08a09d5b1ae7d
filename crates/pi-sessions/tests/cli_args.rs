//! Integration tests of the `pi-sessions` arguments: bad ones exit 2, help exits 0, and the
//! argument forms (aliases, inline values, global options first, `--`).
//!
//! Run: `cargo test -p pi-sessions` (the unit tests and these); the fixtures are in
//! `common/fixtures.rs`.

mod common;
use common::fixtures::*;

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

#[test]
fn bad_arguments_exit_2_and_help_exits_0() {
    let a = Agent::new();
    for args in [
        &["ls", "--bogus"][..],
        &["show"],
        &["frobnicate"],
        &["search", "x", "--role", "nobody"],
        &["ls", "--all", "--cwd", "/x"],
        &["context", "a", "b"],
        &["ls", "--limit", "many"],
        &["export", "abc1234", "--format", "pdf"],
        &["ls", "--json=yes"],
        &[],
    ] {
        let o = a.run(args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(!o.stderr.is_empty(), "{args:?} explains itself");
    }
    for cmd in ["ls", "show", "tree", "context", "search", "check", "stats", "export"] {
        let o = run(&[cmd, "--help"], &[]);
        assert_eq!(o.code, 0);
        assert!(o.stdout.contains(&format!("Usage: pi-sessions {cmd}")), "{cmd}: {}", o.stdout);
        assert_eq!(run(&["help", cmd], &[]).stdout, o.stdout);
    }
    let top = run(&["--help"], &[]);
    assert_eq!(top.code, 0);
    assert!(top.stdout.contains("Commands:"));
    assert!(run(&["--version"], &[]).stdout.starts_with("pi-sessions "));
}

#[test]
fn argument_forms() {
    let a = Agent::new();
    let list = a.run(&["list", "--cwd", "/work/demo", "-n1", "--json"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert_eq!(strs(list.json(), "id"), ["abc12399-other"], "`list` is `ls`; -n1 takes its value inline");
    let global_first =
        run(&["--agent-dir", a.dir().to_str().unwrap(), "-j", "1", "ls", "--cwd", "/work/demo", "--json"], &[]);
    assert_eq!(global_first.json().items().len(), 3, "global options before the command");
    let dash = a.run(&["search", "--all", "--json", "--", "-approach"]);
    assert_eq!(dash.code, 1, "text after -- is the text, not an option: {}", dash.stderr);
    for bad in [&["ls", "-j", "0"][..], &["help", "frobnicate"], &["ls", "--color", "sometimes"]] {
        let o = a.run(bad);
        assert_eq!(o.code, 2, "{bad:?}: {}", o.stderr);
    }
    let help = run(&["help"], &[]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("Commands:") && help.stdout.contains("Exit codes"), "{}", help.stdout);
}
