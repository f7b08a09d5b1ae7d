//! What the integration tests share: a temp folder per test, the binary run in an agent dir
//! of its own, and the seeded session generator.
// Each test file is a crate of its own and uses a part of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

/// The fixtures of the command tests (`cli_*.rs`).
pub mod fixtures;

pub const BIN: &str = env!("CARGO_BIN_EXE_pi-sessions");

pub struct Tmp(pub PathBuf);

impl Tmp {
    pub fn new(name: &str) -> Tmp {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "pis-test-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

pub fn run_env(agent: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    // `PI_SESSIONS_TEST_BIN`: another build to run the same tests on (an older one, to compare).
    let mut c = Command::new(std::env::var_os("PI_SESSIONS_TEST_BIN").unwrap_or_else(|| BIN.into()));
    c.arg("--agent-dir").arg(agent).args(args);
    c.env_remove("PI_CODING_AGENT_DIR");
    c.env("PI_SESSION_NATIVE_INDEX_DIR", agent.join(".index"));
    c.env("XDG_DATA_HOME", agent.join(".xdg"));
    for (k, v) in env {
        c.env(k, v);
    }
    let o = output(&mut c);
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs the binary to its end. Under wine, starting a process now and then fails with
/// ERROR_INTERNAL_ERROR (1359) when the machine is loaded (seen in CI, once in 55 tests); that is
/// wine's, not the binary's, so the start is tried again. Any other failure to start panics.
pub fn output(c: &mut Command) -> std::process::Output {
    const WINE_INTERNAL_ERROR: i32 = 1359;
    let mut tries = 0;
    loop {
        match c.output() {
            Err(e) if cfg!(windows) && e.raw_os_error() == Some(WINE_INTERNAL_ERROR) && tries < 5 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(200 * tries));
            }
            r => return r.expect("run pi-sessions"),
        }
    }
}

pub fn run(agent: &Path, args: &[&str]) -> Out {
    run_env(agent, args, &[])
}

/// A small xorshift: the same sessions on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

pub fn ts(i: usize) -> String {
    format!("2025-03-04T10:{:02}:{:02}.000Z", (i / 60) % 60, i % 60)
}

pub fn pid(p: &Option<String>) -> String {
    p.as_deref().map_or("null".into(), q)
}

/// A session as pi writes it, with a random history: turns, branches back to earlier
/// entries, labels set and cleared (on whatever branch is current), names, compactions
/// (some with `retainedTail`), context edits, model changes, custom messages and summaries.
pub fn gen_session(seed: u64, n: usize) -> (String, Vec<String>) {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let id = format!("gen-{seed:04}-0000-4000-8000-000000000000");
    let mut lines = vec![format!(
        r#"{{"type":"session","version":3,"id":{},"timestamp":{},"cwd":"/work/gen"}}"#,
        q(&id),
        q(&ts(0))
    )];
    let mut all: Vec<String> = Vec::new();
    let mut msgs: Vec<String> = Vec::new();
    let mut parent_of: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut leaf: Option<String> = None;
    for i in 1..=n {
        let eid = format!("e{i:04}");
        let p = leaf.clone();
        let t = ts(i);
        let roll = r.below(100);
        let line = if roll < 12 && !msgs.is_empty() {
            // Branch: go back to an earlier message and continue from there.
            leaf = Some(msgs[r.below(msgs.len())].clone());
            let p = leaf.clone();
            format!(
                r#"{{"type":"message","id":"{eid}","parentId":{},"timestamp":"{t}","message":{{"role":"user","content":"branch {i} from {}","timestamp":{}}}}}"#,
                pid(&p),
                p.as_deref().unwrap_or("-"),
                1_741_082_400_000u64 + i as u64 * 1000
            )
        } else if roll < 22 && !all.is_empty() {
            let target = &all[r.below(all.len())];
            let label = if r.below(5) == 0 { String::new() } else { format!("mark {i}") };
            format!(
                r#"{{"type":"label","id":"{eid}","parentId":{},"timestamp":"{t}","targetId":"{target}","label":{}}}"#,
                pid(&p),
                q(&label)
            )
        } else if roll < 27 {
            let name = if r.below(4) == 0 { "  ".to_string() } else { format!("Name {i}") };
            format!(
                r#"{{"type":"session_info","id":"{eid}","parentId":{},"timestamp":"{t}","name":{}}}"#,
                pid(&p),
                q(&name)
            )
        } else if roll < 32 && !msgs.is_empty() {
            // firstKeptEntryId: an ancestor on the current path.
            let mut path = Vec::new();
            let mut c = p.clone();
            while let Some(x) = c {
                path.push(x.clone());
                c = parent_of.get(&x).cloned().flatten();
            }
            let kept = if path.is_empty() { "none".to_string() } else { path[r.below(path.len())].clone() };
            let tail = if r.below(2) == 0 {
                format!(r#","retainedTail":[{{"role":"user","content":"tail {i}","timestamp":1}}]"#)
            } else {
                String::new()
            };
            format!(
                r#"{{"type":"compaction","id":"{eid}","parentId":{},"timestamp":"{t}","summary":"summary {i}","firstKeptEntryId":"{kept}","tokensBefore":{}{tail}}}"#,
                pid(&p),
                1000 + i
            )
        } else if roll < 38 && !msgs.is_empty() {
            let target = &msgs[r.below(msgs.len())];
            let rep = if r.below(3) == 0 { "null".to_string() } else { format!(r#"{{"content":"edited {i}"}}"#) };
            format!(
                r#"{{"type":"context_edit","id":"{eid}","parentId":{},"timestamp":"{t}","targetId":"{target}","replacement":{rep}}}"#,
                pid(&p)
            )
        } else if roll < 41 {
            format!(
                r#"{{"type":"model_change","id":"{eid}","parentId":{},"timestamp":"{t}","provider":"p{}","modelId":"m{i}"}}"#,
                pid(&p),
                r.below(3)
            )
        } else if roll < 44 {
            format!(
                r#"{{"type":"custom_message","id":"{eid}","parentId":{},"timestamp":"{t}","customType":"note","content":"note {i}","display":true}}"#,
                pid(&p)
            )
        } else if roll < 47 && !msgs.is_empty() {
            format!(
                r#"{{"type":"branch_summary","id":"{eid}","parentId":{},"timestamp":"{t}","fromId":"{}","summary":"left branch {i}"}}"#,
                pid(&p),
                msgs[r.below(msgs.len())]
            )
        } else if roll < 75 {
            format!(
                r#"{{"type":"message","id":"{eid}","parentId":{},"timestamp":"{t}","message":{{"role":"user","content":[{{"type":"text","text":"question {i} \"quoted\" é"}}],"timestamp":{}}}}}"#,
                pid(&p),
                1_741_082_400_000u64 + i as u64 * 1000
            )
        } else {
            format!(
                r#"{{"type":"message","id":"{eid}","parentId":{},"timestamp":"{t}","message":{{"role":"assistant","content":[{{"type":"text","text":"answer {i}"}}],"provider":"anthropic","model":"m","usage":{{"input":{i},"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"total":0.5}}}},"stopReason":"stop","timestamp":{}}}}}"#,
                pid(&p),
                i + 2,
                1_741_082_400_000u64 + i as u64 * 1000
            )
        };
        let v: Value = serde_json::from_str(&line).unwrap();
        let parent = v["parentId"].as_str().map(str::to_string);
        parent_of.insert(eid.clone(), parent);
        if v["type"] == "message" {
            msgs.push(eid.clone());
        }
        all.push(eid.clone());
        leaf = Some(eid);
        lines.push(line);
    }
    (id, lines)
}

pub fn hours_ago(h: u64) -> SystemTime {
    SystemTime::now() - Duration::from_secs(h * 3600)
}

pub fn set_mtime(p: &Path, t: SystemTime) {
    fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
}

/// Writes a session file (mtime two hours ago, so it is not "in use").
pub fn put(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    fs::write(&p, lines.join("\n") + "\n").unwrap();
    set_mtime(&p, hours_ago(2));
    p
}
