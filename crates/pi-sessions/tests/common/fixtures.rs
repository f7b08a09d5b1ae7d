//! The `pi-sessions` command tests' fixtures: the `--json` view, the sample agent dir, the
//! damaged folder, and running the binary.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::value::RawValue;

use super::{BIN, Tmp};

/// A view of `--json` output over serde_json's raw values: members and elements keep the
/// exact text the CLI wrote, so tests compare bytes where they need to.
#[derive(Clone, Copy)]
pub struct J<'a>(pub &'a RawValue);

impl<'a> J<'a> {
    pub fn parse(s: &'a str) -> Option<J<'a>> {
        serde_json::from_str::<&RawValue>(s).ok().map(J)
    }

    pub fn get(&self, k: &str) -> Option<J<'a>> {
        let m: BTreeMap<String, &'a RawValue> = serde_json::from_str(self.0.get()).ok()?;
        m.get(k).copied().map(J)
    }

    pub fn items(&self) -> Vec<J<'a>> {
        serde_json::from_str::<Vec<&'a RawValue>>(self.0.get())
            .map(|v| v.into_iter().map(J).collect())
            .unwrap_or_default()
    }

    pub fn str(&self) -> Option<Cow<'a, str>> {
        serde_json::from_str::<String>(self.0.get()).ok().map(Cow::Owned)
    }

    pub fn num(&self) -> Option<f64> {
        serde_json::from_str::<f64>(self.0.get()).ok()
    }

    pub fn is_null(&self) -> bool {
        self.0.get() == "null"
    }

    pub fn raw_str(&self) -> Cow<'a, str> {
        Cow::Borrowed(self.0.get())
    }
}

pub fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

pub fn ts(sec: u32) -> String {
    format!("2025-01-02T09:{:02}:{:02}.000Z", sec / 60, sec % 60)
}

pub fn ms(sec: u32) -> u64 {
    1_735_808_400_000 + sec as u64 * 1000
}

pub fn header(id: &str, cwd: &str, time: &str) -> String {
    format!(r#"{{"type":"session","version":3,"id":{},"timestamp":{},"cwd":{}}}"#, q(id), q(time), q(cwd))
}

pub fn parent(p: Option<&str>) -> String {
    p.map_or("null".into(), q)
}

pub fn user(id: &str, p: Option<&str>, sec: u32, text: &str) -> String {
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
pub fn assistant(
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

pub fn write(path: &Path, lines: &[String]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// The rich session: a branch, a branch summary, a compaction, a custom message, a context
/// edit, a label, a name and a usage entry.
pub fn rich_lines() -> Vec<String> {
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
pub struct Agent {
    pub tmp: Tmp,
}

impl Agent {
    pub fn new() -> Agent {
        let tmp = Tmp::new("agent");
        let demo = tmp.0.join("sessions").join(project("/work/demo"));
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
        let other = tmp.0.join("sessions").join(project("/work/other"));
        write(
            &other.join("2025-02-01T00-00-00-000Z_other-1.jsonl"),
            &[
                header("other-1", "/work/other", "2025-02-01T00:00:00.000Z"),
                r#"{"type":"message","id":"o1","parentId":null,"timestamp":"2025-02-01T00:00:01.000Z","message":{"role":"user","content":"Deploy the approach"}}"#.into(),
            ],
        );
        Agent { tmp }
    }

    pub fn dir(&self) -> &Path {
        &self.tmp.0
    }

    pub fn demo(&self) -> PathBuf {
        self.tmp.0.join("sessions").join(project("/work/demo"))
    }

    pub fn run(&self, args: &[&str]) -> Out {
        let mut full = vec!["--agent-dir", self.dir().to_str().unwrap()];
        full.extend_from_slice(args);
        run(&full, &[])
    }
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn json(&self) -> J<'_> {
        J::parse(&self.stdout).unwrap_or_else(|| panic!("stdout is not JSON:\n{}", self.stdout))
    }
}

pub fn run(args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(BIN);
    c.args(args).env_remove("PI_CODING_AGENT_DIR").env_remove("NO_COLOR").env_remove("COLUMNS");
    // The listing index of these runs stays out of the user's cache dir.
    c.env("PI_SESSION_NATIVE_INDEX_DIR", std::env::temp_dir().join(format!("psn-cli-index-{}", std::process::id())));
    for (k, v) in env {
        c.env(k, v);
    }
    let o: Output = super::output(&mut c);
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

pub fn s<'a>(j: J<'a>, k: &str) -> String {
    j.get(k).and_then(|v| v.str()).map(|c| c.into_owned()).unwrap_or_else(|| panic!("no string {k} in {}", j.raw_str()))
}

pub fn n(j: J, k: &str) -> f64 {
    j.get(k).and_then(|v| v.num()).unwrap_or_else(|| panic!("no number {k} in {}", j.raw_str()))
}

pub fn strs(j: J, k: &str) -> Vec<String> {
    j.items().iter().map(|i| s(*i, k)).collect()
}

pub fn damaged(dir: &Path) {
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

/// The project folder pi names for `cwd` (`--<resolved cwd, / \\ : as ->--`); on Windows a
/// POSIX-looking cwd such as `/work/demo` resolves onto the current drive (`Z:\\work\\demo`).
pub fn project(cwd: &str) -> String {
    let resolved =
        if cfg!(windows) { std::path::absolute(cwd).unwrap().to_string_lossy().into_owned() } else { cwd.into() };
    let s = resolved.strip_prefix(['/', '\\']).unwrap_or(&resolved);
    format!("--{}--", s.replace(['/', '\\', ':'], "-"))
}

pub fn kinds(report: J, file: &str) -> Vec<String> {
    let f = report
        .get("files")
        .unwrap()
        .items()
        .into_iter()
        .find(|f| Path::new(&s(*f, "path")).file_name().is_some_and(|n| n == file))
        .unwrap_or_else(|| panic!("{file} not in report"));
    let mut k: Vec<String> = f.get("problems").unwrap().items().iter().map(|p| s(*p, "kind")).collect();
    k.dedup();
    k
}

pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}
