//! Golden human output of every table command at 80 and 200 columns (`$COLUMNS`), on the sample
//! agent dir: rows fit the width, long cells are cut with `…` (paths from the left, so the file
//! name stays), paths are relative to the session folder, sizes are decimal, counts agree in
//! number. The goldens were written from the fixtures (`common/fixtures.rs`), not copied.
//!
//! Run: `cargo test -p pi-sessions --test cli_width`.
#![cfg(unix)]

mod common;
use common::fixtures::*;
use common::{hours_ago, set_mtime};

/// The sample agent dir with every session modified two hours ago (not "in use"), plus a
/// session with a long cwd and a long title.
fn agent() -> Agent {
    let a = Agent::new();
    let cwd = "/home/someone/projects/a-rather-long-project-name/packages/core";
    let long = a.dir().join("sessions").join(project(cwd)).join("2025-03-01T00-00-00-000Z_long-session-1.jsonl");
    write(
        &long,
        &[
            header("long-session-1", cwd, "2025-03-01T00:00:00.000Z"),
            r#"{"type":"message","id":"q1","parentId":null,"timestamp":"2025-03-01T00:00:01.000Z","message":{"role":"user","content":"Refactor the session listing so that every table fits the width of the terminal"}}"#.into(),
        ],
    );
    for f in walk(a.dir()) {
        set_mtime(&f, hours_ago(2));
    }
    a
}

/// The size `ls` shows for a file under 1000 bytes: `N B`.
fn bytes(a: &Agent, rel: &str) -> String {
    let n = std::fs::metadata(a.dir().join("sessions").join(rel)).unwrap().len();
    assert!(n < 1000);
    format!("{n} B")
}

/// stdout of `args` at `width` columns, the temp root as `<T>`; every line fits the width.
fn at(a: &Agent, width: usize, args: &[&str]) -> String {
    let mut full = vec!["--agent-dir", a.dir().to_str().unwrap()];
    full.extend_from_slice(args);
    let w = width.to_string();
    let o = run(&full, &[("COLUMNS", w.as_str())]);
    assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
    for l in o.stdout.lines() {
        let cols = unicode_width::UnicodeWidthStr::width(l);
        assert!(cols <= width, "{args:?} at {width}: {cols} columns:\n{l}");
    }
    o.stdout.replace(a.dir().to_str().unwrap(), "<T>")
}

fn check(got: &str, want: &str) {
    let want = want.strip_prefix('\n').unwrap_or(want);
    assert_eq!(got, want, "\n--- got ---\n{got}\n--- want ---\n{want}");
}

#[test]
fn ls_at_80_and_200() {
    let a = agent();
    let demo = "\
MODIFIED (UTC)      MSGS     SIZE  ID        TITLE
2025-01-03 10:01       2    551 B  abc12399  Write the docs
2025-01-02 09:00       7   3.3 kB  abc12345  Rich session
2025-01-01 08:00       0    106 B  zzz-empt  (no messages)
";
    check(&at(&a, 80, &["ls", "--cwd", "/work/demo"]), demo);
    check(&at(&a, 200, &["ls", "--cwd", "/work/demo"]), demo);

    // --all: the cwd column gives way first (13 columns at 80, cut from the left), then the
    // title is cut to what is left (20).
    let long = bytes(
        &a,
        "--home-someone-projects-a-rather-long-project-name-packages-core--/2025-03-01T00-00-00-000Z_long-session-1.jsonl",
    );
    assert_eq!(long, "366 B", "the long session's size (measured), for the rows below");
    check(
        &at(&a, 80, &["ls", "--all"]),
        "
MODIFIED (UTC)      MSGS     SIZE  ID        CWD            TITLE
2025-03-01 00:00       1    366 B  long-ses  …ackages/core  Refactor the sessio…
2025-02-01 00:00       1    247 B  other-1   /work/other    Deploy the approach
2025-01-03 10:01       2    551 B  abc12399  /work/demo     Write the docs
2025-01-02 09:00       7   3.3 kB  abc12345  /work/demo     Rich session
2025-01-01 08:00       0    106 B  zzz-empt  /work/demo     (no messages)
",
    );
    check(
        &at(&a, 200, &["ls", "--all"]),
        "
MODIFIED (UTC)      MSGS     SIZE  ID        CWD                                       TITLE
2025-03-01 00:00       1    366 B  long-ses  …-rather-long-project-name/packages/core  Refactor the session listing so that every table fits the width of the terminal
2025-02-01 00:00       1    247 B  other-1   /work/other                               Deploy the approach
2025-01-03 10:01       2    551 B  abc12399  /work/demo                                Write the docs
2025-01-02 09:00       7   3.3 kB  abc12345  /work/demo                                Rich session
2025-01-01 08:00       0    106 B  zzz-empt  /work/demo                                (no messages)
",
    );
    // A title in a wide script: cut by columns (two per character), not by characters: the
    // title gets 80 - 45 = 35 columns, 17 characters (34) and `…`.
    let wide = a.dir().join("sessions").join(project("/work/wide")).join("2025-04-01T00-00-00-000Z_wide-1.jsonl");
    write(
        &wide,
        &[
            header("wide-1", "/work/wide", "2025-04-01T00:00:00.000Z"),
            user("w1", None, 1, "セッション一覧の表が端末の幅に収まるようにリファクタリングする"),
        ],
    );
    check(
        &at(&a, 80, &["ls", "--cwd", "/work/wide"]),
        "
MODIFIED (UTC)      MSGS     SIZE  ID        TITLE
2025-01-02 09:00       1    345 B  wide-1    セッション一覧の表が端末の幅に収ま…
",
    );
    // Archived sessions: the same table.
    let o = a.run(&["archive", "--older-than", "0", "--cwd", "/work/other"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    check(
        &at(&a, 80, &["ls", "--cwd", "/work/other", "--archived"]),
        "
MODIFIED (UTC)      MSGS     SIZE  ID        TITLE
2025-02-01 00:00       1    247 B  other-1   Deploy the approach
",
    );
}

#[test]
fn stats_at_80_and_200() {
    let a = agent();
    let top = "\
Sessions   3
Messages   9 (assistant 4, user 4, toolResult 1)
Tokens     774 (input 650, output 109, cache read 10, cache write 5)
Cost       $1.1300
";
    let days = "
DAY (UTC)   SESSIONS  MESSAGES  TURNS  INPUT  OUTPUT  TOTAL     COST
2025-01-02         1         7      4    640     104    759  $1.1200
2025-01-03         1         2      1     10       5     15  $0.0100
";
    // At 80 the widest column that matters least (CACHE WRITE) goes.
    let models_80 = "
MODEL               TURNS  INPUT  OUTPUT  CACHE READ  TOTAL     COST
anthropic/claude-x      4    350      79          10    444  $0.8800
openai/gpt-x            1    300      30           0    330  $0.2500
";
    let models_200 = "
MODEL               TURNS  INPUT  OUTPUT  CACHE READ  CACHE WRITE  TOTAL     COST
anthropic/claude-x      4    350      79          10            5    444  $0.8800
openai/gpt-x            1    300      30           0            0    330  $0.2500
";
    let scope = "Scope      <T>/sessions/--work-demo--\n";
    check(&at(&a, 80, &["stats", "--cwd", "/work/demo"]), &format!("{scope}{top}{models_80}{days}"));
    check(&at(&a, 200, &["stats", "--cwd", "/work/demo"]), &format!("{scope}{top}{models_200}{days}"));
    // Narrower still: the cache and turn columns go, the model names are cut.
    let narrow = at(&a, 50, &["stats", "--cwd", "/work/demo"]);
    assert!(narrow.contains("\nMODEL               INPUT  OUTPUT  TOTAL     COST\n"), "{narrow}");
}

#[test]
fn search_at_80_and_200() {
    let a = agent();
    check(
        &at(&a, 80, &["search", "approach", "--cwd", "/work/demo"]),
        r#"
abc12345  2025-01-02 09:00  /work/demo  3 hits · …00-00-000Z_abc12345-rich.jsonl
  u2 user          2025-01-02 09:00  Try approach A
  b1 branchSummary 2025-01-02 09:00  Tried approach A, it failed
  u3 user          2025-01-02 09:00  Try approach B with "quotes"
"#,
    );
    check(
        &at(&a, 200, &["search", "approach", "--cwd", "/work/demo"]),
        r#"
abc12345  2025-01-02 09:00  /work/demo  3 hits · --work-demo--/2025-01-02T09-00-00-000Z_abc12345-rich.jsonl
  u2 user          2025-01-02 09:00  Try approach A
  b1 branchSummary 2025-01-02 09:00  Tried approach A, it failed
  u3 user          2025-01-02 09:00  Try approach B with "quotes"
"#,
    );
    // A long cwd (cut to 40 from the left) leaves no room for the file at 80; a long text keeps
    // the match in sight: the context before it gets half of what is left (38 / 2 = 19).
    let long = at(&a, 80, &["search", "width", "--all", "-C", "200"]);
    check(
        &long,
        "
long-ses  2025-03-01 00:00  …-rather-long-project-name/packages/core  1 hit
  q1 user          2025-03-01 00:00  …ry table fits the width of the terminal
",
    );
}

#[test]
fn tree_at_80_and_200() {
    let a = agent();
    let want = r#"
abc12345-rich --work-demo--/2025-01-02T09-00-00-000Z_abc12345-rich.jsonl
* u1 user [start]: Please fix the parser
* a1 assistant: Looking at it → read({"path":"src/parser.rs"})
* r1 toolResult: read: fn parse() {}
  ├─ u2 user: Try approach A
  │  a2 assistant: Approach A failed
* └─ b1 branch_summary: Tried approach A, it failed
*    u3 user: Try approach B with "quotes"
*    c1 compaction: 1,234 tokens → Summary of the work so far
*    a3 assistant: Approach B works
*    cm1 custom_message: note: remember the tests
*    e1 context_edit: a3 ← edited B
*    l1 label: u1 = start
*    n1 session_info: Rich session
*    g1 usage: compaction anthropic/claude-x 44 tokens  ← leaf
"#;
    check(&at(&a, 80, &["tree", "abc12345"]), want);
    check(&at(&a, 200, &["tree", "abc12345"]), want);
    // `context`'s short view cuts its lines at the width too (6 messages: the compaction summary,
    // the kept r1, b1, u3, then a3 and cm1).
    let context = at(&a, 80, &["context", "abc12345"]);
    assert!(context.starts_with("abc12345-rich 6 messages, model openai/gpt-x, thinking off,"), "{context}");
    // --full-paths: the file as it is.
    let full = at(&a, 200, &["tree", "abc12345", "--full-paths"]);
    assert!(
        full.starts_with("abc12345-rich <T>/sessions/--work-demo--/2025-01-02T09-00-00-000Z_abc12345-rich.jsonl\n")
    );
}

#[test]
fn show_at_80_and_200() {
    let a = agent();
    let head = |file: &str| {
        format!(
            "\
Session      abc12345-rich
Name         Rich session
File         {file} (3.3 kB, 15 lines)
Cwd          /work/demo
Version      3
Created      2025-01-02T09:00:00.000Z
Modified     2025-01-02T09:00:09.000Z
First msg    Please fix the parser

"
        )
    };
    let tail = "
Compactions (1)
  c1  2025-01-02 09:00  tokensBefore 1,234  firstKept r1

Branch points (1)
  r1  2 children: u2, b1

Labels (1)
  u1  start
";
    let body_80 = "\
Entries      14 (message 7, branch_summary 1, compaction 1, context_edit 1,
             custom_message 1, label 1, session_info 1, usage 1)
Messages     7 (assistant 3, user 3, toolResult 1)
Active path  12 entries, leaf g1
Tokens       759 total (input 640, output 104, cache read 10, cache write 5)
Cost         $1.1200
Models       anthropic/claude-x (3 turns, $0.8700), openai/gpt-x (1 turn,
             $0.2500)
";
    let body_200 = "\
Entries      14 (message 7, branch_summary 1, compaction 1, context_edit 1, custom_message 1, label 1, session_info 1, usage 1)
Messages     7 (assistant 3, user 3, toolResult 1)
Active path  12 entries, leaf g1
Tokens       759 total (input 640, output 104, cache read 10, cache write 5)
Cost         $1.1200
Models       anthropic/claude-x (3 turns, $0.8700), openai/gpt-x (1 turn, $0.2500)
";
    // At 80 the file is cut from the left to 80 - 13 - " (3.3 kB, 15 lines)".len() = 48.
    let file_80 = "…--/2025-01-02T09-00-00-000Z_abc12345-rich.jsonl";
    assert_eq!(file_80.chars().count(), 48);
    check(&at(&a, 80, &["show", "abc12345"]), &format!("{}{body_80}{tail}", head(file_80)));
    let file_200 = "--work-demo--/2025-01-02T09-00-00-000Z_abc12345-rich.jsonl";
    check(&at(&a, 200, &["show", "abc12345"]), &format!("{}{body_200}{tail}", head(file_200)));
}

#[test]
fn archive_and_restore_at_80_and_200() {
    let a = agent();
    let dry = |w| at(&a, w, &["archive", "--older-than", "0", "--cwd", "/work/demo", "-n"]);
    // "would archive " (14) + path + " (551 B)" (8): the path gets 58 columns at 80.
    check(
        &dry(80),
        "
would archive …work-demo--/2025-01-03T10-00-00-000Z_abc12399-other.jsonl (551 B)
would archive …work-demo--/2025-01-02T09-00-00-000Z_abc12345-rich.jsonl (3.3 kB)
would archive --work-demo--/2025-01-01T08-00-00-000Z_zzz-empty.jsonl (106 B)
would archive 3 sessions (3.9 kB) into sessions-archive/ (dry run)
",
    );
    check(
        &dry(200),
        "
would archive --work-demo--/2025-01-03T10-00-00-000Z_abc12399-other.jsonl (551 B)
would archive --work-demo--/2025-01-02T09-00-00-000Z_abc12345-rich.jsonl (3.3 kB)
would archive --work-demo--/2025-01-01T08-00-00-000Z_zzz-empty.jsonl (106 B)
would archive 3 sessions (3.9 kB) into sessions-archive/ (dry run)
",
    );
    let o = a.run(&["archive", "--older-than", "0", "--cwd", "/work/demo"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let restore = "
would restore --work-demo--/2025-01-03T10-00-00-000Z_abc12399-other.jsonl
would restore --work-demo--/2025-01-02T09-00-00-000Z_abc12345-rich.jsonl
would restore --work-demo--/2025-01-01T08-00-00-000Z_zzz-empty.jsonl
";
    check(&at(&a, 80, &["restore", "--all", "-n"]), restore);
    check(&at(&a, 200, &["restore", "--all", "-n"]), restore);
}
