//! Integration tests of the `pi-sessions` browsing commands (`ls`, `show`, `tree`, `search`) on
//! a sample agent dir: stdout / --json content and exit codes.
//!
//! Run: `cargo test -p pi-sessions` (the unit tests and these); the fixtures are in
//! `common/fixtures.rs`.

use std::fs;

mod common;
use common::Tmp;
use common::fixtures::*;

// ---------------------------------------------------------------------------
// ls
// ---------------------------------------------------------------------------

#[test]
fn ls_lists_newest_first_with_session_info_fields() {
    let a = Agent::new();
    let o = a.run(&["ls", "--cwd", "/work/demo", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let j = o.json();
    assert_eq!(strs(j, "id"), ["abc12399-other", "abc12345-rich", "zzz-empty"]);
    let items = j.items();
    let rich = items[1];
    assert_eq!(s(rich, "name"), "Rich session");
    assert_eq!(s(rich, "firstMessage"), "Please fix the parser");
    assert_eq!(n(rich, "messageCount"), 7.0);
    assert_eq!(s(rich, "modified"), ts(9), "last user/assistant activity");
    assert_eq!(s(rich, "created"), ts(0));
    assert_eq!(s(rich, "cwd"), "/work/demo");
    assert!(s(rich, "path").ends_with("_abc12345-rich.jsonl"));
    assert!(n(rich, "size") > 1000.0);
    assert!(items[0].get("name").unwrap().is_null());
    assert_eq!(s(items[0], "firstMessage"), "Write the docs");
    assert_eq!(s(items[2], "firstMessage"), "(no messages)");
    assert_eq!(s(items[2], "modified"), "2025-01-01T08:00:00.000Z", "header time without messages");

    let all = a.run(&["ls", "--all", "--json"]);
    assert_eq!(strs(all.json(), "id"), ["other-1", "abc12399-other", "abc12345-rich", "zzz-empty"]);

    let limited = a.run(&["ls", "--all", "--json", "-n", "1"]);
    assert_eq!(strs(limited.json(), "id"), ["other-1"]);
}

#[test]
fn ls_writes_the_listing_index_and_answers_the_same_from_it() {
    let a = Agent::new();
    let index = Tmp::new("index");
    let env = [("PI_SESSION_NATIVE_INDEX_DIR", index.0.to_str().unwrap()), ("PI_SESSION_NATIVE_INDEX_SETTLE_MS", "0")];
    let ls = |env: &[(&str, &str)]| run(&["--agent-dir", a.dir().to_str().unwrap(), "ls", "--all", "--json"], env);
    let first = ls(&env);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let written: Vec<_> = fs::read_dir(&index.0).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(written.len(), 2, "one index per folder: {written:?}");
    let again = ls(&env);
    assert_eq!(again.stdout, first.stdout);
    // A session changed since: the index row is not used for it.
    let rich = a.demo().join("2025-01-02T09-00-00-000Z_abc12345-rich.jsonl");
    let mut text = fs::read_to_string(&rich).unwrap();
    text.push_str(&format!(
        "{}\n",
        r#"{"type":"session_info","id":"n9","parentId":"a6","timestamp":"2025-01-02T09:10:00.000Z","name":"Renamed"}"#
    ));
    fs::write(&rich, text).unwrap();
    let changed = ls(&env);
    assert!(changed.stdout.contains("\"Renamed\""), "{}", changed.stdout);
    assert_eq!(ls(&[]).stdout, changed.stdout, "the same without the index");
}

#[test]
fn ls_human_output_and_roots() {
    let a = Agent::new();
    let o = a.run(&["ls", "--cwd", "/work/demo"]);
    assert_eq!(o.code, 0);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert!(lines[0].starts_with("MODIFIED"), "{}", o.stdout);
    assert!(lines[1].contains("abc12399") && lines[1].contains("Write the docs"));
    assert!(lines[2].contains("Rich session") && lines[2].contains("   7 "));
    assert!(!o.stdout.contains('\x1b'), "no colour when not a terminal");
    // Ids share 5 characters: the shortest unique prefix is shown (at least 8).
    assert!(lines[1].contains("abc12399 "));

    // The default root comes from PI_CODING_AGENT_DIR, then ~/.pi/agent.
    let env = run(&["ls", "--cwd", "/work/other", "--json"], &[("PI_CODING_AGENT_DIR", a.dir().to_str().unwrap())]);
    assert_eq!(strs(env.json(), "id"), ["other-1"]);
    let home = Tmp::new("home");
    let agent_in_home = home.0.join(".pi/agent/sessions").join(project("/work/other"));
    fs::create_dir_all(&agent_in_home).unwrap();
    fs::copy(
        a.dir().join("sessions").join(project("/work/other")).join("2025-02-01T00-00-00-000Z_other-1.jsonl"),
        agent_in_home.join("x.jsonl"),
    )
    .unwrap();
    let home_env = [("HOME", home.0.to_str().unwrap()), ("USERPROFILE", home.0.to_str().unwrap())];
    let h = run(&["ls", "--cwd", "/work/other", "--json"], &home_env);
    assert_eq!(strs(h.json(), "id"), ["other-1"]);

    // --dir: one folder; with --cwd, only sessions whose header cwd matches.
    let d = run(&["ls", "--dir", a.demo().to_str().unwrap(), "--json"], &[]);
    assert_eq!(d.json().items().len(), 3);
    let f = run(&["ls", "--dir", a.demo().to_str().unwrap(), "--cwd", "/work/nowhere", "--json"], &[]);
    assert_eq!(f.json().items().len(), 0);

    // Colour on request.
    let c = a.run(&["ls", "--cwd", "/work/demo", "--color", "always"]);
    assert!(c.stdout.contains('\x1b'));
}

// ---------------------------------------------------------------------------
// show
// ---------------------------------------------------------------------------

#[test]
fn show_sums_usage_and_lists_structure() {
    let a = Agent::new();
    let o = a.run(&["show", "abc1234", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let j = o.json();
    assert_eq!(s(j, "id"), "abc12345-rich");
    assert_eq!(s(j, "name"), "Rich session");
    assert_eq!(n(j, "entryCount"), 14.0);
    assert_eq!(n(j, "messageCount"), 7.0);
    let by_type = j.get("byType").unwrap();
    assert_eq!(n(by_type, "message"), 7.0);
    assert_eq!(n(by_type, "compaction"), 1.0);
    assert_eq!(n(by_type, "usage"), 1.0);
    let by_role = j.get("byRole").unwrap();
    assert_eq!((n(by_role, "user"), n(by_role, "assistant"), n(by_role, "toolResult")), (3.0, 3.0, 1.0));
    let u = j.get("usage").unwrap();
    assert_eq!(n(u, "input"), 640.0);
    assert_eq!(n(u, "output"), 104.0);
    assert_eq!(n(u, "totalTokens"), 759.0);
    assert!((n(u, "cost") - 1.12).abs() < 1e-9);
    assert_eq!(n(u, "records"), 4.0);
    let models = j.get("byModel").unwrap().items();
    assert_eq!(strs(j.get("byModel").unwrap(), "model"), ["claude-x", "gpt-x"]);
    assert_eq!(n(models[0], "records"), 3.0);
    let comp = j.get("compactions").unwrap().items();
    assert_eq!(comp.len(), 1);
    assert_eq!(s(comp[0], "firstKeptEntryId"), "r1");
    assert_eq!(n(comp[0], "tokensBefore"), 1234.0);
    let bp = j.get("branchPoints").unwrap().items();
    assert_eq!(s(bp[0], "id"), "r1");
    assert_eq!(
        bp[0].get("children").unwrap().items().iter().map(|c| c.str().unwrap().into_owned()).collect::<Vec<_>>(),
        ["u2", "b1"]
    );
    assert_eq!(s(j.get("labels").unwrap().items()[0], "label"), "start");
    let active = j.get("activeBranch").unwrap();
    assert_eq!((s(active, "leafId"), n(active, "length")), ("g1".to_string(), 12.0));

    let human = a.run(&["show", "abc1234"]);
    assert!(human.stdout.contains("Rich session") && human.stdout.contains("$1.1200"), "{}", human.stdout);
}

#[test]
fn show_resolves_ids_prefixes_and_paths() {
    let a = Agent::new();
    let amb = a.run(&["show", "abc12"]);
    assert_eq!(amb.code, 2);
    assert!(
        amb.stderr.contains("ambiguous")
            && amb.stderr.contains("abc12345-rich")
            && amb.stderr.contains("abc12399-other")
    );
    let none = a.run(&["show", "nope"]);
    assert_eq!(none.code, 1);
    assert!(none.stderr.contains("no session matches"));
    assert_eq!(a.run(&["show", "abc12399-other", "--json"]).code, 0);
    let path = a.demo().join("2025-01-02T09-00-00-000Z_abc12345-rich.jsonl");
    let by_path = a.run(&["show", path.to_str().unwrap(), "--json"]);
    assert_eq!(s(by_path.json(), "id"), "abc12345-rich");
    let missing = a.run(&["show", "/no/such/file.jsonl"]);
    assert_eq!(missing.code, 1);
    let not_session = a.run(&["show", a.demo().join("notes.jsonl").to_str().unwrap()]);
    assert_eq!(not_session.code, 1);
    assert!(not_session.stderr.contains("not a session file"));
}

// ---------------------------------------------------------------------------
// tree
// ---------------------------------------------------------------------------

#[test]
fn tree_draws_branches_labels_and_leaf() {
    let a = Agent::new();
    let o = a.run(&["tree", "abc1234"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = &o.stdout;
    let line =
        |id: &str| out.lines().find(|l| l.contains(&format!(" {id} "))).unwrap_or_else(|| panic!("no {id} in\n{out}"));
    assert!(line("u1").contains("[start]"), "label shown");
    assert!(line("u2").contains("├─ "), "{out}");
    assert!(line("b1").contains("└─ "), "{out}");
    assert!(line("g1").contains("← leaf"));
    assert!(line("u3").starts_with('*'), "active path marked");
    assert!(!line("a2").starts_with('*'), "abandoned branch not marked");
    assert!(line("a1").contains("→ read("), "tool calls summarised: {}", line("a1"));
    let narrow = a.run(&["tree", "abc1234", "--width", "50"]);
    assert!(narrow.stdout.lines().skip(1).all(|l| l.chars().count() <= 50), "{}", narrow.stdout);
    let active = a.run(&["tree", "abc1234", "--active"]);
    assert_eq!(active.stdout.lines().count(), 13, "header + 12 entries on the path");
}

/// `show`, `tree`, `context` and `export` read the file in blocks and read lines again from it:
/// the smallest blocks (4 KiB; lines longer than a block, lines cut at block ends) give the same
/// output as one block, and `export --format json` gives the file's own lines.
#[test]
fn inspecting_commands_read_in_blocks() {
    let a = Agent::new();
    let mut lines = rich_lines();
    let long = "x".repeat(9000);
    lines.insert(2, user("big", Some("u1"), 1, &format!("long {long}")));
    lines[3] = lines[3].replace(r#""parentId":"u1""#, r#""parentId":"big""#);
    lines.insert(5, "{not json".into());
    lines.insert(6, "   ".into());
    let path = a.demo().join("2025-01-04T09-00-00-000Z_abc55555-blocks.jsonl");
    // No final newline: the last line is whole, so the session is not torn.
    fs::write(&path, lines.join("\n")).unwrap();
    let file = path.to_str().unwrap();
    let agent = a.dir().to_str().unwrap();
    let runs: [&[&str]; 6] = [
        &["show", file, "--json"],
        &["tree", file],
        &["context", file, "--json"],
        &["context", file, "--full"],
        &["export", file, "--format", "json"],
        &["export", file],
    ];
    for args in runs {
        let full: Vec<&str> = ["--agent-dir", agent].iter().chain(args.iter()).copied().collect();
        let one = run(&full, &[]);
        let small = run(&full, &[("PI_SESSION_NATIVE_CLI_READ_CHUNK", "4096")]);
        assert_eq!(one.code, 0, "{args:?}: {}", one.stderr);
        assert_eq!(one.stdout, small.stdout, "{args:?}: 4 KiB blocks differ");
    }
    let show = run(
        &["--agent-dir", agent, "show", file, "--json", "--no-color"],
        &[("PI_SESSION_NATIVE_CLI_READ_CHUNK", "4096")],
    );
    let show = show.json();
    assert_eq!(show.get("skippedLines").and_then(|v| v.num()), Some(1.0), "{}", show.raw_str());
    assert_eq!(show.get("trailingNewline").map(|v| v.raw_str().into_owned()), Some("false".into()));
    let export = run(
        &["--agent-dir", agent, "export", file, "--format", "json"],
        &[("PI_SESSION_NATIVE_CLI_READ_CHUNK", "4096")],
    );
    let kept: Vec<&String> = lines.iter().filter(|l| l.starts_with('{') && *l != "{not json").collect();
    let want = format!(
        "{{\"header\":{},\"entries\":[\n{}\n]}}\n",
        kept[0],
        kept[1..].iter().map(|l| l.as_str()).collect::<Vec<_>>().join(",\n")
    );
    assert_eq!(export.stdout, want);
}

// ---------------------------------------------------------------------------
// search
// ---------------------------------------------------------------------------

#[test]
fn search_finds_message_text_with_snippets() {
    let a = Agent::new();
    let o = a.run(&["search", "approach", "--cwd", "/work/demo", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let hits = o.json();
    assert_eq!(strs(hits, "entryId"), ["u2", "b1", "u3"], "case-sensitive, file order");
    assert_eq!(strs(hits, "role"), ["user", "branchSummary", "user"]);
    let h = hits.items()[0];
    assert_eq!(s(h, "sessionId"), "abc12345-rich");
    assert_eq!(s(h, "snippet"), "Try approach A");
    assert_eq!(s(h, "match"), "approach");
    assert_eq!(n(h, "line"), 5.0);
    assert_eq!(s(h, "timestamp"), ts(4));

    let ci = a.run(&["search", "APPROACH", "-i", "--all", "--json"]);
    assert_eq!(strs(ci.json(), "entryId"), ["o1", "u2", "a2", "b1", "u3", "a3"], "newest session first");
    let roles = a.run(&["search", "approach", "-i", "--cwd", "/work/demo", "--role", "assistant", "--json"]);
    assert_eq!(strs(roles.json(), "entryId"), ["a2", "a3"]);
    let quoted = a.run(&["search", "with \"quotes\"", "--cwd", "/work/demo", "--json"]);
    assert_eq!(strs(quoted.json(), "entryId"), ["u3"]);
    let tool = a.run(&["search", "fn parse()", "--cwd", "/work/demo", "--json"]);
    assert_eq!(strs(tool.json(), "role"), ["toolResult"]);
    let limit = a.run(&["search", "approach", "-i", "--all", "--limit", "2", "--json"]);
    assert_eq!(limit.json().items().len(), 2);

    // Thinking and tool-call arguments are not message text; non-session files are skipped.
    assert_eq!(a.run(&["search", "let me think", "--cwd", "/work/demo"]).code, 1);
    assert_eq!(a.run(&["search", "src/parser.rs", "--cwd", "/work/demo"]).code, 1);
    let none = a.run(&["search", "not a session", "--cwd", "/work/demo", "--json"]);
    assert_eq!((none.code, none.stdout.trim()), (1, "[\n]"));

    let human = a.run(&["search", "approach", "--cwd", "/work/demo"]);
    assert!(human.stdout.contains("abc12345") && human.stdout.contains("Try approach A"), "{}", human.stdout);
}
