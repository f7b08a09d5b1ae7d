//! Integration tests of `pi-sessions check` (and `--repair`) on a folder of damaged files.
//!
//! Run: `cargo test -p pi-sessions` (the unit tests and these); the fixtures are in
//! `common/fixtures.rs`.

use std::fs;
use std::path::{Path, PathBuf};

mod common;
use common::Tmp;
use common::fixtures::*;

// ---------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------

/// Files written a moment ago count as in use (pi may be writing them): the repair tests that
/// are not about that rule turn it off.
const FREE: (&str, &str) = ("PI_SESSION_NATIVE_CLI_RECENT_SECS", "0");

/// `--repair` leaves a session in use as it is, as `prune`, `archive` and `rm` do: one written
/// a moment ago, and one another process holds open for appends (as pi does), whatever its age.
#[test]
fn check_repair_refuses_sessions_in_use() {
    let t = Tmp::new("repair-in-use");
    damaged(&t.0);
    let torn = t.0.join("torn.jsonl");
    let torn0 = fs::read(&torn).unwrap();
    let o = run(&["check", torn.to_str().unwrap(), "--repair"], &[]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stdout.contains("in use: modified"), "{}", o.stdout);
    assert_eq!(fs::read(&torn).unwrap(), torn0, "not repaired");
    assert!(!t.0.join("torn.jsonl.bak").exists(), "no backup made");
    if cfg!(target_os = "linux") {
        let _held = fs::OpenOptions::new().append(true).open(&torn).unwrap();
        let o = run(&["check", torn.to_str().unwrap(), "--repair"], &[FREE]);
        assert!(o.stdout.contains("in use: "), "{}", o.stdout);
        assert_eq!(fs::read(&torn).unwrap(), torn0, "not repaired while held");
    }
    let o = run(&["check", torn.to_str().unwrap(), "--repair"], &[FREE]);
    assert_eq!(o.code, 0, "free again: repaired: {}", o.stdout);
}

#[test]
fn check_reports_each_kind_of_damage() {
    let t = Tmp::new("check");
    damaged(&t.0);
    let o = run(&["check", t.0.to_str().unwrap(), "--json"], &[]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    let r = o.json();
    assert!(kinds(r, "clean.jsonl").is_empty());
    assert_eq!(kinds(r, "torn.jsonl"), ["torn_last_line"]);
    assert_eq!(kinds(r, "malformed.jsonl"), ["malformed_line"]);
    assert_eq!(kinds(r, "notsession.jsonl"), ["missing_header"]);
    assert_eq!(kinds(r, "orphan.jsonl"), ["orphan"]);
    assert_eq!(kinds(r, "dup.jsonl"), ["duplicate_id"]);
    assert_eq!(kinds(r, "v1.jsonl"), ["old_version"], "v1 entries get ids on migration: no orphan/missing_id");
    assert_eq!(kinds(r, "cycle.jsonl"), ["cycle"]);
    assert_eq!(kinds(r, "nonl.jsonl"), ["missing_newline"]);
    let summary = r.get("summary").unwrap();
    assert_eq!((n(summary, "files"), n(summary, "clean")), (9.0, 1.0));

    let clean = run(&["check", t.0.join("clean.jsonl").to_str().unwrap()], &[]);
    assert_eq!(clean.code, 0);
    assert!(clean.stdout.contains("ok"));
    let human = run(&["check", t.0.join("orphan.jsonl").to_str().unwrap()], &[]);
    assert_eq!(human.code, 1);
    assert!(human.stdout.contains("parent ghost not found"), "{}", human.stdout);
    let dup = run(&["check", t.0.join("dup.jsonl").to_str().unwrap()], &[]);
    assert!(dup.stdout.contains("id used on lines 3, 4"), "{}", dup.stdout);
    assert_eq!(run(&["check", "/no/such/dir"], &[]).code, 1);
}

/// `check` reads each file once in blocks of whole lines: 4 KiB blocks (lines longer than a
/// block, damage cut at block ends) give the same report and the same repair as one block.
#[test]
fn check_reads_in_blocks() {
    let long = |id: &str, p: Option<&str>, sec| user(id, p, sec, &"y".repeat(5000));
    let t = Tmp::new("check-blocks");
    damaged(&t.0);
    let mut big = vec![header("big", "/w", &ts(0)), long("m1", None, 1), "not json".into(), long("m2", Some("m1"), 2)];
    big.push(user("m3", Some("ghost"), 3, "lost"));
    big.push("\u{1}\u{fffd}".into());
    big.push(long("m4", Some("m2"), 4));
    let mut text = big.join("\n");
    text.push_str("\n{\"type\":\"message\",\"id\":\"m5\",\"parentId\":\"m4\",\"message\":{\"role\":\"us");
    fs::write(t.0.join("big.jsonl"), text).unwrap();
    let dir = t.0.to_str().unwrap();
    let one = run(&["check", dir, "--json"], &[]);
    let small = run(&["check", dir, "--json"], &[("PI_SESSION_NATIVE_CLI_READ_CHUNK", "4096")]);
    assert_eq!(one.code, 1);
    assert_eq!(one.stdout, small.stdout);
    assert_eq!(kinds(small.json(), "big.jsonl"), ["malformed_line", "torn_last_line", "orphan"]);
    let copy = Tmp::new("check-blocks-copy");
    for f in ["big.jsonl", "torn.jsonl", "malformed.jsonl"] {
        fs::copy(t.0.join(f), copy.0.join(f)).unwrap();
    }
    let repaired = run(&["check", dir, "--repair", "--json"], &[("PI_SESSION_NATIVE_CLI_READ_CHUNK", "4096"), FREE]);
    let again = run(&["check", copy.0.to_str().unwrap(), "--repair", "--json"], &[FREE]);
    assert_eq!(repaired.code, again.code);
    for f in ["big.jsonl", "torn.jsonl", "malformed.jsonl"] {
        assert!(fs::read(t.0.join(f)).unwrap() == fs::read(copy.0.join(f)).unwrap(), "{f} repaired differently");
    }
    let kept = String::from_utf8(fs::read(t.0.join("big.jsonl")).unwrap()).unwrap();
    assert_eq!(kept.lines().count(), 5, "header, m1, m2, m3 and m4 stay: {kept}");
}

#[test]
fn check_repair_backs_up_and_rewrites_only_sessions() {
    let t = Tmp::new("repair");
    damaged(&t.0);
    let before = |f: &str| fs::read(t.0.join(f)).unwrap();
    let (torn0, mal0, not0, orphan0, nonl0) = (
        before("torn.jsonl"),
        before("malformed.jsonl"),
        before("notsession.jsonl"),
        before("orphan.jsonl"),
        before("nonl.jsonl"),
    );
    let o = run(&["check", t.0.to_str().unwrap(), "--repair", "--json"], &[FREE]);
    assert_eq!(o.code, 1, "orphans, duplicates, cycles and old versions remain");
    let r = o.json();
    assert!(
        kinds(r, "torn.jsonl").is_empty()
            && kinds(r, "malformed.jsonl").is_empty()
            && kinds(r, "nonl.jsonl").is_empty()
    );

    // Backups hold the original bytes; the files keep every entry line byte for byte.
    assert_eq!(fs::read(t.0.join("torn.jsonl.bak")).unwrap(), torn0);
    assert_eq!(fs::read(t.0.join("malformed.jsonl.bak")).unwrap(), mal0);
    let torn = String::from_utf8(fs::read(t.0.join("torn.jsonl")).unwrap()).unwrap();
    assert_eq!(torn.lines().count(), 3);
    assert!(torn.ends_with("\"timestamp\":1735808402000}}\n"));
    let mal = String::from_utf8(fs::read(t.0.join("malformed.jsonl")).unwrap()).unwrap();
    let want: String =
        String::from_utf8(mal0).unwrap().lines().filter(|l| l.starts_with('{')).map(|l| format!("{l}\n")).collect();
    assert_eq!(mal, want);
    let mut nonl = nonl0;
    nonl.push(b'\n');
    assert_eq!(fs::read(t.0.join("nonl.jsonl")).unwrap(), nonl);

    // Never touched: a non-session file, and damage that dropping lines cannot fix.
    assert_eq!(fs::read(t.0.join("notsession.jsonl")).unwrap(), not0);
    assert_eq!(fs::read(t.0.join("orphan.jsonl")).unwrap(), orphan0);
    assert!(!t.0.join("notsession.jsonl.bak").exists() && !t.0.join("orphan.jsonl.bak").exists());
    let leftovers: Vec<String> = fs::read_dir(&t.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");

    // Repaired files are now clean; a second repair keeps the first backup.
    assert_eq!(run(&["check", t.0.join("torn.jsonl").to_str().unwrap()], &[]).code, 0);
    fs::write(t.0.join("torn.jsonl"), [torn.as_bytes(), b"{broken"].concat()).unwrap();
    let again = run(&["check", t.0.join("torn.jsonl").to_str().unwrap(), "--repair"], &[FREE]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert!(t.0.join("torn.jsonl.bak.1").exists());
    assert_eq!(fs::read(t.0.join("torn.jsonl.bak")).unwrap(), torn0);
}

/// Writes the fixtures to `$PIS_FIXTURES_OUT` for checks against pi itself:
/// `PIS_FIXTURES_OUT=/tmp/fx cargo test -p pi-sessions --test cli_check -- --ignored write_fixtures`, then
/// `node bench/cli.mjs --dir /tmp/fx/agent/sessions/--work-demo--`.
#[test]
#[ignore]
fn write_fixtures() {
    let out = PathBuf::from(std::env::var("PIS_FIXTURES_OUT").expect("set PIS_FIXTURES_OUT"));
    let a = Agent::new();
    let copy = |from: &Path, to: &Path| {
        for e in walk(from) {
            let dest = to.join(e.strip_prefix(from).unwrap());
            fs::create_dir_all(dest.parent().unwrap()).unwrap();
            fs::copy(&e, dest).unwrap();
        }
    };
    copy(a.dir(), &out.join("agent"));
    let d = Tmp::new("fx");
    damaged(&d.0);
    copy(&d.0, &out.join("damaged"));
}
