//! Integration tests of the `pi-sessions` commands that read a session's messages (`context`,
//! `stats`, `export`), of old versions migrated in memory, and of JSON numbers.
//!
//! Run: `cargo test -p pi-sessions` (the unit tests and these); the fixtures are in
//! `common/fixtures.rs`.

use std::fs;

mod common;
use common::Tmp;
use common::fixtures::*;

// ---------------------------------------------------------------------------
// context
// ---------------------------------------------------------------------------

#[test]
fn context_applies_compaction_summaries_and_edits() {
    let a = Agent::new();
    let o = a.run(&["context", "abc1234", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let msgs = o.json().items();
    let roles: Vec<String> = msgs.iter().map(|m| s(*m, "role")).collect();
    assert_eq!(roles, ["compactionSummary", "toolResult", "branchSummary", "user", "assistant", "custom"]);
    assert_eq!(
        msgs[0].raw_str(),
        format!(
            r#"{{"role":"compactionSummary","summary":"Summary of the work so far","tokensBefore":1234,"timestamp":{}}}"#,
            ms(8)
        )
    );
    assert_eq!(
        msgs[1].raw_str(),
        r#"{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"fn parse() {}"}],"isError":false,"timestamp":1735808403000}"#,
        "raw from the file"
    );
    assert_eq!(
        msgs[2].raw_str(),
        format!(
            r#"{{"role":"branchSummary","summary":"Tried approach A, it failed","fromId":"a2","timestamp":{}}}"#,
            ms(6)
        )
    );
    assert_eq!(
        msgs[4].get("content").unwrap().raw_str(),
        r#"[{"type":"text","text":"edited B"}]"#,
        "context edit applied"
    );
    assert_eq!(s(msgs[4], "model"), "gpt-x");
    assert_eq!(
        msgs[5].raw_str(),
        format!(
            r#"{{"role":"custom","customType":"note","content":"remember the tests","display":true,"timestamp":{}}}"#,
            ms(10)
        )
    );
    let human = a.run(&["context", "abc1234"]);
    assert!(human.stdout.contains("6 messages") && human.stdout.contains("model openai/gpt-x"), "{}", human.stdout);
}

#[test]
fn context_retained_tail_is_a_checkpoint() {
    let t = Tmp::new("tail");
    let f = t.0.join("s.jsonl");
    write(
        &f,
        &[
            header("tail-1", "/w", &ts(0)),
            user("u1", None, 1, "old question"),
            assistant("a1", Some("u1"), 2, "old answer", "p", "m", 1, 1, 0.0),
            r#"{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2025-01-02T09:00:03.000Z","summary":"S","firstKeptEntryId":"u1","tokensBefore":9,"retainedTail":[{"role":"user","content":"kept","timestamp":1}],"systemMessage":{"role":"system","content":"sys"}}"#.into(),
            user("u2", Some("c1"), 4, "new question"),
        ],
    );
    let o = run(&["context", f.to_str().unwrap(), "--json"], &[]);
    let msgs = o.json().items();
    let texts: Vec<String> =
        msgs.iter().map(|m| m.get("content").or(m.get("summary")).unwrap().raw_str().into_owned()).collect();
    assert_eq!(texts, [r#""sys""#, r#""S""#, r#""kept""#, r#""new question""#]);
}

// ---------------------------------------------------------------------------
// stats, export
// ---------------------------------------------------------------------------

#[test]
fn stats_by_model_and_day() {
    let a = Agent::new();
    let o = a.run(&["stats", "--cwd", "/work/demo", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let j = o.json();
    assert_eq!((n(j, "sessions"), n(j, "messages")), (3.0, 9.0));
    let u = j.get("usage").unwrap();
    assert_eq!((n(u, "input"), n(u, "totalTokens"), n(u, "records")), (650.0, 774.0, 5.0));
    assert!((n(u, "cost") - 1.13).abs() < 1e-9);
    let models = j.get("byModel").unwrap();
    assert_eq!(strs(models, "model"), ["claude-x", "gpt-x"]);
    assert_eq!(n(models.items()[0], "records"), 4.0);
    let days = j.get("byDay").unwrap();
    assert_eq!(strs(days, "day"), ["2025-01-02", "2025-01-03"]);
    assert_eq!(n(days.items()[1], "sessions"), 1.0);
    assert_eq!(n(days.items()[0], "messages"), 7.0);
    let all = a.run(&["stats", "--all", "--json"]);
    assert_eq!(n(all.json(), "sessions"), 4.0);
    let human = a.run(&["stats", "--cwd", "/work/demo"]);
    assert!(human.stdout.contains("anthropic/claude-x") && human.stdout.contains("2025-01-03"));
}

#[test]
fn export_markdown_and_json() {
    let a = Agent::new();
    let md = a.run(&["export", "abc1234"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    let t = &md.stdout;
    assert!(t.starts_with("# Rich session\n"), "{t}");
    for want in [
        "## User",
        "Please fix the parser",
        "**Tool call:** `read`",
        "## Compaction",
        "Try approach A",
        "<details><summary>Thinking</summary>",
    ] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
    assert!(t.contains("continues from entry r1"), "branch jump marked");
    let branch = a.run(&["export", "abc1234", "--branch"]);
    assert!(!branch.stdout.contains("Try approach A") && branch.stdout.contains("Try approach B"));
    let j = a.run(&["export", "abc1234", "--format", "json"]);
    let doc = j.json();
    assert_eq!(s(doc.get("header").unwrap(), "id"), "abc12345-rich");
    assert_eq!(doc.get("entries").unwrap().items().len(), 14);
    assert_eq!(doc.get("entries").unwrap().items()[1].raw_str(), rich_lines()[2], "entries are the file's lines");
    let jb = a.run(&["export", "abc1234", "-f", "json", "-b"]);
    assert_eq!(strs(jb.json().get("entries").unwrap(), "id").len(), 12);
}

#[test]
fn old_versions_are_migrated_in_memory_only() {
    let t = Tmp::new("v1");
    damaged(&t.0);
    let f = t.0.join("v1.jsonl");
    let before = fs::read(&f).unwrap();
    let ctx = run(&["context", f.to_str().unwrap(), "--json"], &[]);
    assert_eq!(ctx.code, 0, "{}", ctx.stderr);
    assert_eq!(strs(ctx.json(), "role"), ["user", "custom"], "v2→v3: hookMessage becomes custom");
    let tree = run(&["tree", f.to_str().unwrap()], &[]);
    assert!(tree.stdout.contains("v1-2") && tree.stdout.contains("← leaf"), "{}", tree.stdout);
    assert_eq!(fs::read(&f).unwrap(), before, "read-only commands never write");
    // The torn file is not repaired by reading it either (pi would append a newline).
    let torn = t.0.join("torn.jsonl");
    let torn0 = fs::read(&torn).unwrap();
    assert_eq!(run(&["show", torn.to_str().unwrap()], &[]).code, 0);
    assert_eq!(fs::read(&torn).unwrap(), torn0);
}

// ---------------------------------------------------------------------------
// Migration (the core's `migrate`), JSON numbers, argument forms
// ---------------------------------------------------------------------------

#[test]
fn v1_compaction_keeps_entries_from_its_index() {
    let t = Tmp::new("v1comp");
    let f = t.0.join("v1.jsonl");
    write(
        &f,
        &[
            r#"{"type":"session","id":"v1c","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}"#.into(),
            r#"{"type":"message","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"first"}}"#.into(),
            r#"{"type":"message","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"assistant","content":"kept"}}"#.into(),
            r#"{"type":"compaction","timestamp":"2024-01-01T00:00:03.000Z","summary":"S","firstKeptEntryIndex":2,"tokensBefore":5}"#.into(),
            r#"{"type":"message","timestamp":"2024-01-01T00:00:04.000Z","message":{"role":"hookMessage","customType":"h","content":"hook"}}"#.into(),
        ],
    );
    let before = fs::read(&f).unwrap();
    let ctx = run(&["context", f.to_str().unwrap(), "--json"], &[]);
    assert_eq!(ctx.code, 0, "{}", ctx.stderr);
    let msgs = ctx.json().items();
    let roles: Vec<String> = msgs.iter().map(|m| s(*m, "role")).collect();
    assert_eq!(roles, ["compactionSummary", "assistant", "custom"], "kept from index 2, hookMessage as custom");
    assert_eq!(msgs[1].get("content").unwrap().raw_str(), r#""kept""#);

    let show = run(&["show", f.to_str().unwrap(), "--json"], &[]);
    let j = show.json();
    let comp = j.get("compactions").unwrap().items();
    assert_eq!(s(comp[0], "id"), "v1-3", "ids in file order after the header");
    assert_eq!(s(comp[0], "firstKeptEntryId"), "v1-2");
    assert_eq!(s(j.get("activeBranch").unwrap(), "leafId"), "v1-4");
    assert_eq!(n(j.get("activeBranch").unwrap(), "length"), 4.0, "one parent chain");
    assert_eq!(fs::read(&f).unwrap(), before, "migrated in memory only");
}

#[test]
fn json_numbers_are_written_as_json_stringify_does() {
    let a = Agent::new();
    let show = a.run(&["show", "abc1234", "--json"]);
    assert!(show.stdout.contains(r#""version":3,"#), "an integer, not 3.0: {}", show.stdout);
    assert!(show.stdout.contains(r#""entryCount":14,"#), "{}", show.stdout);
    let ls = a.run(&["ls", "--cwd", "/work/demo", "--json"]);
    assert!(
        ls.stdout.starts_with("[\n{\"id\":") && ls.stdout.ends_with("}\n]\n"),
        "one record per line: {}",
        ls.stdout
    );
}
