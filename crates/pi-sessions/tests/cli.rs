//! Integration tests of the `pi-sessions` binary: generated session folders (including
//! damaged files) in a temp dir, the real binary, stdout / --json content and exit codes.
//!
//! Run: `cargo test -p pi-sessions` (the unit tests and these).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::value::RawValue;

/// A view of `--json` output over serde_json's raw values: members and elements keep the
/// exact text the CLI wrote, so tests compare bytes where they need to.
#[derive(Clone, Copy)]
struct J<'a>(&'a RawValue);

impl<'a> J<'a> {
    fn parse(s: &'a str) -> Option<J<'a>> {
        serde_json::from_str::<&RawValue>(s).ok().map(J)
    }

    fn get(&self, k: &str) -> Option<J<'a>> {
        let m: BTreeMap<String, &'a RawValue> = serde_json::from_str(self.0.get()).ok()?;
        m.get(k).copied().map(J)
    }

    fn items(&self) -> Vec<J<'a>> {
        serde_json::from_str::<Vec<&'a RawValue>>(self.0.get())
            .map(|v| v.into_iter().map(J).collect())
            .unwrap_or_default()
    }

    fn str(&self) -> Option<Cow<'a, str>> {
        serde_json::from_str::<String>(self.0.get()).ok().map(Cow::Owned)
    }

    fn num(&self) -> Option<f64> {
        serde_json::from_str::<f64>(self.0.get()).ok()
    }

    fn is_null(&self) -> bool {
        self.0.get() == "null"
    }

    fn raw_str(&self) -> Cow<'a, str> {
        Cow::Borrowed(self.0.get())
    }
}

mod common;
use common::{BIN, Tmp};

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn ts(sec: u32) -> String {
    format!("2025-01-02T09:{:02}:{:02}.000Z", sec / 60, sec % 60)
}

fn ms(sec: u32) -> u64 {
    1_735_808_400_000 + sec as u64 * 1000
}

fn header(id: &str, cwd: &str, time: &str) -> String {
    format!(r#"{{"type":"session","version":3,"id":{},"timestamp":{},"cwd":{}}}"#, q(id), q(time), q(cwd))
}

fn parent(p: Option<&str>) -> String {
    p.map_or("null".into(), q)
}

fn user(id: &str, p: Option<&str>, sec: u32, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":{},"parentId":{},"timestamp":{},"message":{{"role":"user","content":{},"timestamp":{}}}}}"#,
        q(id),
        parent(p),
        q(&ts(sec)),
        q(text),
        ms(sec)
    )
}

#[allow(clippy::too_many_arguments)]
fn assistant(
    id: &str,
    p: Option<&str>,
    sec: u32,
    text: &str,
    provider: &str,
    model: &str,
    input: u32,
    output: u32,
    cost: f64,
) -> String {
    format!(
        r#"{{"type":"message","id":{},"parentId":{},"timestamp":{},"message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"hmm let me think"}},{{"type":"text","text":{}}}],"provider":{},"model":{},"usage":{{"input":{input},"output":{output},"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"total":{cost}}}}},"stopReason":"stop","timestamp":{}}}}}"#,
        q(id),
        parent(p),
        q(&ts(sec)),
        q(text),
        q(provider),
        q(model),
        input + output,
        ms(sec)
    )
}

fn write(path: &Path, lines: &[String]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// The rich session: a branch, a branch summary, a compaction, a custom message, a context
/// edit, a label, a name and a usage entry.
fn rich_lines() -> Vec<String> {
    vec![
        header("abc12345-rich", "/work/demo", &ts(0)),
        user("u1", None, 1, "Please fix the parser"),
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-02T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Looking at it"},{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"src/parser.rs"}}],"provider":"anthropic","model":"claude-x","usage":{"input":100,"output":50,"cacheRead":10,"cacheWrite":5,"totalTokens":165,"cost":{"input":0.1,"output":0.2,"cacheRead":0.01,"cacheWrite":0.02,"total":0.33}},"stopReason":"toolUse","timestamp":1735808402000}}"#.into(),
        r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-01-02T09:00:03.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"fn parse() {}"}],"isError":false,"timestamp":1735808403000}}"#.into(),
        user("u2", Some("r1"), 4, "Try approach A"),
        assistant("a2", Some("u2"), 5, "Approach A failed", "anthropic", "claude-x", 200, 20, 0.5),
        r#"{"type":"branch_summary","id":"b1","parentId":"r1","timestamp":"2025-01-02T09:00:06.000Z","fromId":"a2","summary":"Tried approach A, it failed"}"#.into(),
        user("u3", Some("b1"), 7, "Try approach B with \"quotes\""),
        r#"{"type":"compaction","id":"c1","parentId":"u3","timestamp":"2025-01-02T09:00:08.000Z","summary":"Summary of the work so far","firstKeptEntryId":"r1","tokensBefore":1234}"#.into(),
        assistant("a3", Some("c1"), 9, "Approach B works", "openai", "gpt-x", 300, 30, 0.25),
        r#"{"type":"custom_message","id":"cm1","parentId":"a3","timestamp":"2025-01-02T09:00:10.000Z","customType":"note","content":"remember the tests","display":true}"#.into(),
        r#"{"type":"context_edit","id":"e1","parentId":"cm1","timestamp":"2025-01-02T09:00:11.000Z","targetId":"a3","replacement":{"content":"edited B"}}"#.into(),
        r#"{"type":"label","id":"l1","parentId":"e1","timestamp":"2025-01-02T09:00:12.000Z","targetId":"u1","label":"start"}"#.into(),
        r#"{"type":"session_info","id":"n1","parentId":"l1","timestamp":"2025-01-02T09:00:13.000Z","name":"Rich session"}"#.into(),
        r#"{"type":"usage","id":"g1","parentId":"n1","timestamp":"2025-01-02T09:00:14.000Z","kind":"compaction","provider":"anthropic","model":"claude-x","usage":{"input":40,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":44,"cost":{"total":0.04}}}"#.into(),
    ]
}

/// An agent dir: `/work/demo` with the rich session, a newer plain one, an empty one and a
/// non-session file; `/work/other` with one session.
struct Agent {
    tmp: Tmp,
}

impl Agent {
    fn new() -> Agent {
        let tmp = Tmp::new("agent");
        let demo = tmp.0.join("sessions/--work-demo--");
        write(&demo.join("2025-01-02T09-00-00-000Z_abc12345-rich.jsonl"), &rich_lines());
        write(
            &demo.join("2025-01-03T10-00-00-000Z_abc12399-other.jsonl"),
            &[
                header("abc12399-other", "/work/demo", "2025-01-03T10:00:00.000Z"),
                r#"{"type":"message","id":"p1","parentId":null,"timestamp":"2025-01-03T10:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"Write the docs"}]}}"#.into(),
                r#"{"type":"message","id":"p2","parentId":"p1","timestamp":"2025-01-03T10:01:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Docs written"}],"provider":"anthropic","model":"claude-x","usage":{"input":10,"output":5,"totalTokens":15,"cost":{"total":0.01}}}}"#.into(),
            ],
        );
        write(
            &demo.join("2025-01-01T08-00-00-000Z_zzz-empty.jsonl"),
            &[header("zzz-empty", "/work/demo", "2025-01-01T08:00:00.000Z")],
        );
        write(&demo.join("notes.jsonl"), &[user("x", None, 1, "not a session")]);
        fs::write(demo.join("readme.txt"), "ignored").unwrap();
        let other = tmp.0.join("sessions/--work-other--");
        write(
            &other.join("2025-02-01T00-00-00-000Z_other-1.jsonl"),
            &[
                header("other-1", "/work/other", "2025-02-01T00:00:00.000Z"),
                r#"{"type":"message","id":"o1","parentId":null,"timestamp":"2025-02-01T00:00:01.000Z","message":{"role":"user","content":"Deploy the approach"}}"#.into(),
            ],
        );
        Agent { tmp }
    }

    fn dir(&self) -> &Path {
        &self.tmp.0
    }

    fn demo(&self) -> PathBuf {
        self.tmp.0.join("sessions/--work-demo--")
    }

    fn run(&self, args: &[&str]) -> Out {
        let mut full = vec!["--agent-dir", self.dir().to_str().unwrap()];
        full.extend_from_slice(args);
        run(&full, &[])
    }
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> J<'_> {
        J::parse(&self.stdout).unwrap_or_else(|| panic!("stdout is not JSON:\n{}", self.stdout))
    }
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(BIN);
    c.args(args).env_remove("PI_CODING_AGENT_DIR").env_remove("NO_COLOR").env_remove("COLUMNS");
    // The listing index of these runs stays out of the user's cache dir.
    c.env("PI_SESSION_NATIVE_INDEX_DIR", std::env::temp_dir().join(format!("psn-cli-index-{}", std::process::id())));
    for (k, v) in env {
        c.env(k, v);
    }
    let o: Output = c.output().expect("run pi-sessions");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn s<'a>(j: J<'a>, k: &str) -> String {
    j.get(k).and_then(|v| v.str()).map(|c| c.into_owned()).unwrap_or_else(|| panic!("no string {k} in {}", j.raw_str()))
}

fn n(j: J, k: &str) -> f64 {
    j.get(k).and_then(|v| v.num()).unwrap_or_else(|| panic!("no number {k} in {}", j.raw_str()))
}

fn strs(j: J, k: &str) -> Vec<String> {
    j.items().iter().map(|i| s(*i, k)).collect()
}

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
    let rich = a.dir().join("sessions/--work-demo--/2025-01-02T09-00-00-000Z_abc12345-rich.jsonl");
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
    let agent_in_home = home.0.join(".pi/agent/sessions/--work-other--");
    fs::create_dir_all(&agent_in_home).unwrap();
    fs::copy(
        a.dir().join("sessions/--work-other--/2025-02-01T00-00-00-000Z_other-1.jsonl"),
        agent_in_home.join("x.jsonl"),
    )
    .unwrap();
    let h = run(&["ls", "--cwd", "/work/other", "--json"], &[("HOME", home.0.to_str().unwrap())]);
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

// ---------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------

fn damaged(dir: &Path) {
    let ok = |id: &str| vec![header(id, "/w", &ts(0)), user("m1", None, 1, "hi"), user("m2", Some("m1"), 2, "there")];
    write(&dir.join("clean.jsonl"), &ok("clean"));
    let mut torn = ok("torn").join("\n") + "\n";
    torn.push_str(r#"{"type":"message","id":"m3","parentId":"m2","message":{"role":"us"#);
    fs::write(dir.join("torn.jsonl"), torn).unwrap();
    let mut mal = ok("mal");
    mal.insert(2, "this is not json".into());
    mal.insert(3, "".into());
    write(&dir.join("malformed.jsonl"), &mal);
    write(&dir.join("notsession.jsonl"), &[user("m1", None, 1, "hi"), "garbage".into()]);
    let mut orphan = ok("orphan");
    orphan.push(user("m3", Some("ghost"), 3, "lost"));
    write(&dir.join("orphan.jsonl"), &orphan);
    let mut dup = ok("dup");
    dup.push(user("m2", Some("m1"), 3, "again"));
    write(&dir.join("dup.jsonl"), &dup);
    write(
        &dir.join("v1.jsonl"),
        &[
            r#"{"type":"session","id":"v1s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}"#.into(),
            r#"{"type":"message","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"old"}}"#.into(),
            r#"{"type":"message","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"hook"}}"#.into(),
        ],
    );
    write(
        &dir.join("cycle.jsonl"),
        &[header("cyc", "/w", &ts(0)), user("x", Some("y"), 1, "a"), user("y", Some("x"), 2, "b")],
    );
    fs::write(dir.join("nonl.jsonl"), ok("nonl").join("\n")).unwrap();
}

fn kinds(report: J, file: &str) -> Vec<String> {
    let f = report
        .get("files")
        .unwrap()
        .items()
        .into_iter()
        .find(|f| s(*f, "path").ends_with(&format!("/{file}")))
        .unwrap_or_else(|| panic!("{file} not in report"));
    let mut k: Vec<String> = f.get("problems").unwrap().items().iter().map(|p| s(*p, "kind")).collect();
    k.dedup();
    k
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
    let o = run(&["check", t.0.to_str().unwrap(), "--repair", "--json"], &[]);
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
    let again = run(&["check", t.0.join("torn.jsonl").to_str().unwrap(), "--repair"], &[]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert!(t.0.join("torn.jsonl.bak.1").exists());
    assert_eq!(fs::read(t.0.join("torn.jsonl.bak")).unwrap(), torn0);
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

/// Writes the fixtures to `$PIS_FIXTURES_OUT` for checks against pi itself:
/// `PIS_FIXTURES_OUT=/tmp/fx cargo test -p pi-sessions --test cli -- --ignored write_fixtures`, then
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

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

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
