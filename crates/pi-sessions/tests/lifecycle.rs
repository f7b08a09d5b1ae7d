//! The commands that change session folders: `prune`, `archive`, `restore`, `rm`, on generated
//! sessions (seeded random trees with branches, labels, names, compactions with and without
//! `retainedTail`, context edits), with concurrent writers, torn tails, non-session files,
//! name collisions, dry runs and bad arguments. The real binary runs in a temp agent dir.
//!
//! pi 1.6.0's own class judges the pruned and restored files in `__test__/diff/lifecycle.test.mjs`;
//! here the CLI's reading commands are the oracle (`export --branch` gives the path's lines
//! byte for byte, `context --json` the model context, `show --json` the name and labels).

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_pi-sessions");

struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "pis-life-{name}-{}-{}",
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

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

fn run_env(agent: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    // `PI_SESSIONS_TEST_BIN`: another build to run the same tests on (an older one, to compare).
    let mut c = Command::new(std::env::var_os("PI_SESSIONS_TEST_BIN").unwrap_or_else(|| BIN.into()));
    c.arg("--agent-dir").arg(agent).args(args);
    c.env_remove("PI_CODING_AGENT_DIR");
    c.env("PI_SESSION_NATIVE_INDEX_DIR", agent.join(".index"));
    c.env("XDG_DATA_HOME", agent.join(".xdg"));
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("run pi-sessions");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn run(agent: &Path, args: &[&str]) -> Out {
    run_env(agent, args, &[])
}

/// A small xorshift: the same sessions on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn ts(i: usize) -> String {
    format!("2025-03-04T10:{:02}:{:02}.000Z", (i / 60) % 60, i % 60)
}

fn pid(p: &Option<String>) -> String {
    p.as_deref().map_or("null".into(), q)
}

/// A session as pi writes it, with a random history: turns, branches back to earlier
/// entries, labels set and cleared (on whatever branch is current), names, compactions
/// (some with `retainedTail`), context edits, model changes, custom messages and summaries.
fn gen_session(seed: u64, n: usize) -> (String, Vec<String>) {
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

fn hours_ago(h: u64) -> SystemTime {
    SystemTime::now() - Duration::from_secs(h * 3600)
}

fn set_mtime(p: &Path, t: SystemTime) {
    fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
}

/// Writes a session file (mtime two hours ago, so it is not "in use").
fn put(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    fs::write(&p, lines.join("\n") + "\n").unwrap();
    set_mtime(&p, hours_ago(2));
    p
}

/// What pi would read of a session, through the CLI's reading commands.
fn view(agent: &Path, f: &Path) -> (Value, String, Value, Value) {
    let f = f.to_str().unwrap();
    let branch = run(agent, &["export", f, "--format", "json", "--branch"]);
    assert_eq!(branch.code, 0, "{}", branch.stderr);
    let ctx = run(agent, &["context", f, "--json"]);
    assert_eq!(ctx.code, 0, "{}", ctx.stderr);
    let show = run(agent, &["show", f, "--json"]).json();
    let path: Vec<String> =
        branch.json()["entries"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_string()).collect();
    let labels: Vec<Value> = show["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| path.iter().any(|p| Some(p.as_str()) == l["targetId"].as_str()))
        .cloned()
        .collect();
    (branch.json()["entries"].clone(), ctx.stdout, show["name"].clone(), Value::Array(labels))
}

/// Every file under `dir` with its bytes and mtime.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".index") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let m = fs::metadata(&p).unwrap().modified().unwrap();
                out.insert(p.clone(), (fs::read(&p).unwrap(), m));
            }
        }
    }
    out
}

fn unzstd(p: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(fs::File::open(p).unwrap()).unwrap().read_to_end(&mut out).unwrap();
    out
}

// ---------------------------------------------------------------------------
// prune
// ---------------------------------------------------------------------------

#[test]
fn prune_keeps_what_pi_reads_on_random_sessions() {
    let t = Tmp::new("prune");
    let dir = t.0.join("sessions/--work-gen--");
    let mut relinked = 0;
    let mut shrunk = 0;
    for seed in 1..=40u64 {
        let (_, lines) = gen_session(seed, 30 + (seed as usize * 7) % 90);
        let f = put(&dir, &format!("s{seed}.jsonl"), &lines);
        let original = fs::read(&f).unwrap();
        let before = view(&t.0, &f);
        let o = run(&t.0, &["prune", f.to_str().unwrap(), "--json"]);
        assert_eq!(o.code, 0, "seed {seed}: {}", o.stderr);
        let r = o.json();
        let after = view(&t.0, &f);
        assert_eq!(before.0, after.0, "seed {seed}: the path's lines, byte for byte");
        assert_eq!(before.1, after.1, "seed {seed}: context");
        assert_eq!(before.2, after.2, "seed {seed}: name");
        assert_eq!(before.3, after.3, "seed {seed}: labels of path entries");
        // Every kept line is a line of the original, except re-linked ones, whose only change
        // is their parentId.
        let orig_lines: Vec<&str> = std::str::from_utf8(&original).unwrap().lines().collect();
        let now = fs::read_to_string(&f).unwrap();
        for line in now.lines() {
            if orig_lines.contains(&line) {
                continue;
            }
            let mut v: Value = serde_json::from_str(line).unwrap();
            let id = v["id"].as_str().unwrap().to_string();
            let old = orig_lines.iter().find(|l| l.contains(&format!("\"id\":\"{id}\""))).unwrap();
            let mut ov: Value = serde_json::from_str(old).unwrap();
            v["parentId"] = Value::Null;
            ov["parentId"] = Value::Null;
            assert_eq!(v, ov, "seed {seed}: only parentId changes");
            relinked += 1;
        }
        if r["changed"] == true {
            shrunk += 1;
            let bak = PathBuf::from(r["backup"].as_str().unwrap());
            assert_eq!(fs::read(&bak).unwrap(), original, "the backup holds the original bytes");
            assert!(r["bytesAfter"].as_u64() < r["bytesBefore"].as_u64());
        }
        // A second prune has nothing left to do.
        let again = run(&t.0, &["prune", f.to_str().unwrap(), "--json"]).json();
        assert_eq!(again["changed"], false, "seed {seed}");
    }
    assert!(shrunk > 30 && relinked > 3, "the corpus exercises pruning ({shrunk}) and re-linking ({relinked})");
}

#[test]
fn prune_to_an_explicit_leaf() {
    let t = Tmp::new("leaf");
    let (_, lines) = gen_session(7, 80);
    let f = put(&t.0.join("sessions/--w--"), "s.jsonl", &lines);
    // The path to an earlier message becomes the whole file, ending with it.
    let o = run(&t.0, &["prune", f.to_str().unwrap(), "--leaf", "e0010", "--no-backup", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["backup"], Value::Null);
    let show = run(&t.0, &["show", f.to_str().unwrap(), "--json"]).json();
    assert_eq!(show["activeBranch"]["leafId"], "e0010");
    assert!(
        fs::read_dir(f.parent().unwrap()).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains(".bak"))
    );
    let o = run(&t.0, &["prune", f.to_str().unwrap(), "--leaf", "nope"]);
    assert_eq!(o.code, 1, "an unknown leaf is not found");
    assert!(o.stderr.lines().next().unwrap().contains("nope"));
}

#[test]
fn prune_refuses_torn_tails_non_sessions_and_old_versions() {
    let t = Tmp::new("torn");
    let dir = t.0.join("sessions/--w--");
    let (_, lines) = gen_session(3, 40);
    let f = put(&dir, "torn.jsonl", &lines);
    let mut bytes = fs::read(&f).unwrap();
    bytes.extend_from_slice(br#"{"type":"message","id":"half","parentId":"e0040","mess"#);
    fs::write(&f, &bytes).unwrap();
    set_mtime(&f, hours_ago(2));
    let o = run(&t.0, &["prune", f.to_str().unwrap()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("incomplete line"), "{}", o.stderr);
    assert_eq!(fs::read(&f).unwrap(), bytes, "a torn tail is never dropped");
    let other = put(&dir, "notes.jsonl", &[r#"{"type":"message","id":"x","parentId":null}"#.to_string()]);
    let before = fs::read(&other).unwrap();
    let o = run(&t.0, &["prune", other.to_str().unwrap()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("not a session file"), "{}", o.stderr);
    assert_eq!(fs::read(&other).unwrap(), before);
    let v2 = put(
        &dir,
        "v2.jsonl",
        &[r#"{"type":"session","version":2,"id":"v2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#.to_string()],
    );
    assert_eq!(run(&t.0, &["prune", v2.to_str().unwrap()]).code, 1);
}

// ---------------------------------------------------------------------------
// archive, restore, ls/search --archived
// ---------------------------------------------------------------------------

/// An agent dir with three old sessions and one recent one in `/work/a`, one old in `/work/b`.
fn folder(t: &Tmp) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (i, cwd) in ["a", "a", "a", "b"].iter().enumerate() {
        let (id, mut lines) = gen_session(100 + i as u64, 50);
        lines[0] = lines[0].replace("/work/gen", &format!("/work/{cwd}"));
        out.push(put(
            &t.0.join(format!("sessions/--work-{cwd}--")),
            &format!("2025-03-04T10-00-0{i}-000Z_{id}.jsonl"),
            &lines,
        ));
    }
    // Last activity now: not older than a day.
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_millis();
    let recent = vec![
        r#"{"type":"session","version":3,"id":"recent-1","timestamp":"2025-03-04T10:00:00.000Z","cwd":"/work/a"}"#
            .to_string(),
        format!(
            r#"{{"type":"message","id":"r1","parentId":null,"timestamp":"2025-03-04T10:00:01.000Z","message":{{"role":"user","content":"fresh","timestamp":{now}}}}}"#
        ),
    ];
    out.push(put(&t.0.join("sessions/--work-a--"), "2025-03-04T11-00-00-000Z_recent-1.jsonl", &recent));
    out
}

fn ls_ids(agent: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["ls", "--all", "--json"];
    args.extend_from_slice(extra);
    let o = run(agent, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    o.json().as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn archive_then_restore_is_byte_identical_with_mtimes() {
    let t = Tmp::new("arch");
    let files = folder(&t);
    let before = snapshot(&t.0.join("sessions"));
    let listed = run(&t.0, &["ls", "--all", "--json"]).stdout;
    let o = run(&t.0, &["archive", "--older-than", "1", "--all", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let r = o.json();
    assert_eq!(r["archived"].as_array().unwrap().len(), 4);
    assert!(r["ratio"].as_f64().unwrap() > 1.5, "{r}");
    for f in &files[..4] {
        assert!(!f.exists(), "{} archived", f.display());
    }
    assert!(files[4].exists(), "the recent session stays");
    assert_eq!(ls_ids(&t.0, &[]), ["recent-1"]);
    let archived = ls_ids(&t.0, &["--archived"]);
    assert_eq!(archived.len(), 4);
    // Each archive file is one frame of the original bytes.
    for m in r["archived"].as_array().unwrap() {
        let orig = &before[&PathBuf::from(m["path"].as_str().unwrap())];
        assert_eq!(unzstd(Path::new(m["archive"].as_str().unwrap())), orig.0);
    }
    let hits = run(&t.0, &["search", "question", "--all", "--archived", "--json"]);
    assert_eq!(hits.code, 0, "{}", hits.stderr);
    assert!(hits.json().as_array().unwrap().iter().all(|h| h["path"].as_str().unwrap().ends_with(".zst")));
    assert_eq!(run(&t.0, &["search", "question", "--all"]).code, 1, "not in the live sessions");
    let o = run(&t.0, &["restore", "--all", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["restored"].as_array().unwrap().len(), 4);
    assert_eq!(snapshot(&t.0.join("sessions")), before, "bytes and mtimes as before");
    assert_eq!(run(&t.0, &["ls", "--all", "--json"]).stdout, listed, "the same listing");
    assert!(archived_left(&t.0).is_empty());
}

fn archived_left(agent: &Path) -> Vec<PathBuf> {
    snapshot(&agent.join("sessions-archive")).into_keys().collect()
}

#[test]
fn archive_and_restore_by_name_scope_and_collision() {
    let t = Tmp::new("coll");
    let files = folder(&t);
    // Named sessions (a prefix and a path); --cwd limits --older-than to one project.
    let o = run(&t.0, &["archive", "gen-0100", files[1].to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("ratio"), "{}", o.stdout);
    let o = run(&t.0, &["archive", "--older-than", "1", "--cwd", "/work/b"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!files[3].exists() && files[2].exists());
    // A file of the same name appears where a session would be restored: never overwritten.
    let squatter = b"{\"type\":\"session\",\"version\":3,\"id\":\"other\"}\n";
    fs::write(&files[0], squatter).unwrap();
    let o = run(&t.0, &["restore", "--all", "--cwd", "/work/a", "--json"]);
    assert_eq!(o.code, 1, "a collision fails the restore");
    assert_eq!(o.json()["refused"].as_array().unwrap().len(), 1);
    assert_eq!(fs::read(&files[0]).unwrap(), squatter, "the existing file is kept");
    assert!(files[1].exists(), "the other one is restored");
    assert_eq!(archived_left(&t.0).len(), 2, "the refused one stays archived (and /work/b's)");
    // By id.
    let o = run(&t.0, &["restore", "gen-0103"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(files[3].exists());
    assert_eq!(run(&t.0, &["restore", "nosuch"]).code, 1);
}

#[test]
fn archive_keeps_torn_tails_and_refuses_non_sessions_and_recent_files() {
    let t = Tmp::new("archbad");
    let dir = t.0.join("sessions/--w--");
    let (_, lines) = gen_session(5, 30);
    let torn = put(&dir, "torn.jsonl", &lines);
    let mut bytes = fs::read(&torn).unwrap();
    bytes.extend_from_slice(b"{\"type\":\"mess");
    fs::write(&torn, &bytes).unwrap();
    set_mtime(&torn, hours_ago(3));
    let o = run(&t.0, &["archive", torn.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(run(&t.0, &["restore", "--all"]).code, 0);
    assert_eq!(fs::read(&torn).unwrap(), bytes, "a torn tail round-trips byte for byte");
    let notes = put(&dir, "notes.jsonl", &["{\"hello\":1}".to_string()]);
    let o = run(&t.0, &["archive", notes.to_str().unwrap()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("not a session"), "{}", o.stderr);
    assert!(notes.exists());
    let (_, lines) = gen_session(6, 10);
    let fresh = put(&dir, "fresh.jsonl", &lines);
    set_mtime(&fresh, SystemTime::now());
    let o = run(&t.0, &["archive", fresh.to_str().unwrap()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("in use"), "{}", o.stderr);
    assert!(fresh.exists());
    assert!(run(&t.0, &["prune", fresh.to_str().unwrap()]).stderr.contains("in use"));
}

// ---------------------------------------------------------------------------
// Writers at the same time
// ---------------------------------------------------------------------------

/// A process that holds the file open for appending, as a writer that keeps its descriptor.
fn holder(f: &Path) -> std::process::Child {
    let c = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 3>>'{}'; exec sleep 30", f.display()))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    c
}

#[cfg(target_os = "linux")]
#[test]
fn a_session_held_by_another_process_is_refused() {
    let t = Tmp::new("held");
    let (_, lines) = gen_session(9, 40);
    let f = put(&t.0.join("sessions/--w--"), "s.jsonl", &lines);
    let before = fs::read(&f).unwrap();
    let mut h = holder(&f);
    set_mtime(&f, hours_ago(2));
    for args in [&["prune"][..], &["archive"], &["rm", "--permanent"]] {
        let mut a = args.to_vec();
        a.push(f.to_str().unwrap());
        let o = run(&t.0, &a);
        assert_eq!(o.code, 1, "{args:?}");
        assert!(o.stderr.contains("open for writing by process"), "{args:?}: {}", o.stderr);
        assert_eq!(fs::read(&f).unwrap(), before);
    }
    let _ = h.kill();
    let _ = h.wait();
    // A proper-lockfile lock folder beside it.
    let lock = PathBuf::from(format!("{}.lock", f.display()));
    fs::create_dir(&lock).unwrap();
    let o = run(&t.0, &["prune", f.to_str().unwrap()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains(".lock exists"), "{}", o.stderr);
    fs::remove_dir(&lock).unwrap();
    assert_eq!(run(&t.0, &["rm", "--permanent", f.to_str().unwrap()]).code, 0);
    assert!(!f.exists());
}

/// Appends lines as pi does (open, append, close; each continuing the one before, the first
/// the session's last entry) until told to stop; returns them.
fn appender(
    f: PathBuf,
    leaf: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        use std::io::Write;
        let mut written = Vec::new();
        let mut i = 0;
        let mut parent = leaf;
        while !stop.load(Ordering::Relaxed) {
            let line = format!(
                r#"{{"type":"custom","id":"w{i}","parentId":"{parent}","timestamp":"2025-03-04T12:00:00.000Z","customType":"x"}}"#
            );
            parent = format!("w{i}");
            if let Ok(mut h) = fs::OpenOptions::new().append(true).open(&f) {
                h.write_all(format!("{line}\n").as_bytes()).unwrap();
                written.push(line);
            }
            i += 1;
            std::thread::sleep(Duration::from_millis(2));
        }
        written
    })
}

#[test]
fn a_writer_during_prune_or_archive_loses_nothing() {
    let t = Tmp::new("race");
    let dir = t.0.join("sessions/--w--");
    // Big enough that the commands take a while; the recent-change rule is off so that the
    // change checks after it are what protects the writer.
    let env = [("PI_SESSIONS_RECENT_SECS", "0")];
    for (round, cmd) in ["prune", "archive", "prune", "archive"].iter().enumerate() {
        let (_, lines) = gen_session(200 + round as u64, 20_000);
        let f = put(&dir, &format!("2025-03-04T10-00-00-000Z_race{round}.jsonl"), &lines);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let w = appender(f.clone(), "e20000".into(), stop.clone());
        std::thread::sleep(Duration::from_millis(20));
        let o = run_env(&t.0, &[cmd, f.to_str().unwrap()], &env);
        std::thread::sleep(Duration::from_millis(20));
        stop.store(true, Ordering::Relaxed);
        let written = w.join().unwrap();
        assert!(!written.is_empty());
        let mut found = fs::read_to_string(&f).unwrap_or_default();
        for z in archived_left(&t.0) {
            found.push_str(&String::from_utf8(unzstd(&z)).unwrap());
        }
        for line in &written {
            assert!(found.contains(line.as_str()), "{cmd} (exit {}, {}): {line} lost", o.code, o.stderr);
        }
        let _ = fs::remove_file(&f);
        let _ = fs::remove_dir_all(t.0.join("sessions-archive"));
    }
}

// ---------------------------------------------------------------------------
// rm, dry runs, arguments
// ---------------------------------------------------------------------------

#[test]
fn rm_moves_to_the_trash_or_deletes() {
    let t = Tmp::new("rm");
    let files = folder(&t);
    assert_eq!(ls_ids(&t.0, &[]).len(), 5);
    let o = run(&t.0, &["rm", files[0].to_str().unwrap(), "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["removed"][0]["how"], "trash");
    assert!(!files[0].exists());
    let trashed = snapshot(&t.0.join(".xdg/Trash/files"));
    assert_eq!(trashed.len(), 1, "in the freedesktop trash");
    let o = run(&t.0, &["rm", "--permanent", "gen-0101", "gen-0102"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!files[1].exists() && !files[2].exists());
    assert_eq!(ls_ids(&t.0, &[]).len(), 2, "gone from the listing (and its index)");
    let notes = put(&t.0.join("sessions/--work-a--"), "notes.jsonl", &["{\"a\":1}".to_string()]);
    assert_eq!(run(&t.0, &["rm", "--permanent", notes.to_str().unwrap()]).code, 1);
    assert!(notes.exists(), "not a session: kept");
}

#[test]
fn dry_runs_change_nothing() {
    let t = Tmp::new("dry");
    let files = folder(&t);
    let before = snapshot(&t.0);
    let o = run(&t.0, &["prune", files[0].to_str().unwrap(), "--dry-run", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let r = o.json();
    assert_eq!(r["dryRun"], true);
    assert!(r["entriesAfter"].as_u64() < r["entriesBefore"].as_u64(), "{r}");
    let o = run(&t.0, &["archive", "--older-than", "1", "--all", "--dry-run", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["archived"].as_array().unwrap().len(), 4);
    assert_eq!(snapshot(&t.0), before);
    assert_eq!(run(&t.0, &["archive", "--older-than", "1", "--all"]).code, 0);
    let before = snapshot(&t.0);
    let o = run(&t.0, &["restore", "--all", "--dry-run", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.json()["restored"].as_array().unwrap().len(), 4);
    assert_eq!(snapshot(&t.0), before);
}

#[test]
fn bad_arguments_exit_2_and_unknown_sessions_1() {
    let t = Tmp::new("args");
    folder(&t);
    for args in [
        &["prune"][..],
        &["prune", "a", "b"],
        &["archive"],
        &["archive", "--older-than", "soon"],
        &["archive", "--older-than", "-3"],
        &["archive", "gen-0100", "--older-than", "3"],
        &["archive", "gen-0100", "--all"],
        &["archive", "--older-than", "1", "--all", "--cwd", "/x"],
        &["restore"],
        &["restore", "--cwd", "/work/a"],
        &["restore", "x", "--all"],
        &["rm"],
        &["rm", "--bogus", "x"],
        &["prune", "gen-01"],
    ] {
        let o = run(&t.0, args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(!o.stderr.lines().next().unwrap_or("").is_empty(), "{args:?}: the problem on the first line");
    }
    for args in [&["prune", "nosuch"][..], &["rm", "nosuch"], &["archive", "nosuch"], &["restore", "nosuch"]] {
        let o = run(&t.0, args);
        assert_eq!(o.code, 1, "{args:?}: {}", o.stderr);
        assert!(o.stderr.lines().next().unwrap().contains("nosuch"), "{args:?}: {}", o.stderr);
    }
}

#[test]
fn prune_keeps_lines_with_invalid_utf8_byte_for_byte() {
    let t = Tmp::new("utf8");
    let dir = t.0.join("sessions/--w--");
    fs::create_dir_all(&dir).unwrap();
    let f = dir.join("s.jsonl");
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"{\"type\":\"session\",\"version\":3,\"id\":\"u8\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff\xfe byte\"}}\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"dead\",\"parentId\":\"a\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"user\",\"content\":\"gone \xc3\"}}\n");
    bytes.extend_from_slice(b"not json \xff\n");
    let keep = b"{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"2025-01-01T00:00:03.000Z\",\"message\":{\"role\":\"user\",\"content\":\"ok \xe9\"}}\n";
    bytes.extend_from_slice(keep);
    fs::write(&f, &bytes).unwrap();
    set_mtime(&f, hours_ago(2));
    let o = run(&t.0, &["prune", f.to_str().unwrap(), "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut want = bytes.clone();
    let cut = |w: &mut Vec<u8>, from: &[u8]| {
        let i = w.windows(from.len()).position(|x| x == from).unwrap();
        let end = i + w[i..].iter().position(|&b| b == b'\n').unwrap() + 1;
        w.drain(i..end);
    };
    cut(&mut want, b"{\"type\":\"message\",\"id\":\"dead\"");
    cut(&mut want, b"not json");
    assert_eq!(
        fs::read(&f).unwrap(),
        want,
        "invalid UTF-8 kept as it was, the dead branch and the malformed line dropped"
    );
}

// ---------------------------------------------------------------------------
// prune: today's outputs, kept (a change of prune's implementation must give the same bytes)
// ---------------------------------------------------------------------------

/// FNV-1a, 64 bits: a stable digest of a run's outputs.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // A separator, so that moving bytes between fields changes the digest.
    *h ^= 0xff;
    *h = h.wrapping_mul(0x0100_0000_01b3);
}

/// A generated session, bent into one of the shapes prune meets: malformed and blank lines,
/// CRLF, invalid UTF-8 on and off the path, no final newline, dangling parents, lines longer
/// than a read block, torn tails.
fn golden_input(seed: u64, variant: usize) -> (Vec<u8>, Option<String>) {
    let n = 20 + (seed as usize * 13) % 150;
    let (_, lines) = gen_session(seed, n);
    let mut r = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut leaf = None;
    for (i, l) in lines.iter().enumerate() {
        let mut b = l.as_bytes().to_vec();
        if i > 0 {
            match variant {
                1 if r.below(6) == 0 => {
                    out.push(
                        [&b"not json"[..], b"null", b"5", b"   ", b"", b"{\"broken\"", b"[1,2]"][r.below(7)].to_vec(),
                    );
                }
                2 if r.below(3) == 0 => b.push(b'\r'),
                3 if r.below(3) == 0 => {
                    // Invalid UTF-8 inside a string (the line still parses, repaired).
                    if let Some(at) = b.windows(2).position(|w| w == "é".as_bytes()) {
                        b.splice(at..at + 2, [0xff, 0xe9]);
                    } else if let Some(at) = b.windows(10).position(|w| w == b"\"summary\":") {
                        b.splice(at + 11..at + 11, [0xc3]);
                    } else if let Some(at) = b.windows(8).position(|w| w == b"\"label\":") {
                        b.splice(at + 9..at + 9, [0xfe]);
                    }
                }
                5 if r.below(8) == 0 && l.contains("\"type\":\"label\"") => {
                    // A parent that is not in the file.
                    let s = String::from_utf8(b).unwrap();
                    let at = s.find("\"parentId\":").unwrap() + 11;
                    let end = at + s[at..].find(",\"timestamp\"").unwrap();
                    b = format!("{}\"ghost-{i}\"{}", &s[..at], &s[end..]).into_bytes();
                }
                6 if r.below(25) == 0 && l.contains("\"role\":\"user\"") => {
                    // Longer than a 1 MiB read block.
                    let pad = "x".repeat((1 << 20) + r.below(1 << 19));
                    b = String::from_utf8(b)
                        .unwrap()
                        .replacen("\"role\":\"user\"", &format!("\"role\":\"user\",\"pad\":\"{pad}\""), 1)
                        .into_bytes();
                }
                _ => {}
            }
            if variant == 4 && l.contains("\"type\":\"message\"") && r.below(3) == 0 {
                leaf = serde_json::from_str::<Value>(l).ok().and_then(|v| v["id"].as_str().map(str::to_string));
            }
        }
        out.push(b);
    }
    let mut bytes = out.join(&b"\n"[..]);
    match variant {
        7 => {}                                              // no final newline
        8 => bytes.extend_from_slice(b"\n{\"type\":\"mess"), // torn tail: refused
        9 => bytes.extend_from_slice(b"\n\n  \n"),           // blank lines at the end
        _ => bytes.push(b'\n'),
    }
    (bytes, if variant == 4 { leaf.or(Some("e0003".into())) } else { None })
}

/// One prune of a golden input: a digest of the exit code, stdout, stderr, the file's bytes
/// after, the names in its folder and whether the mtime was kept.
fn golden_case(t: &Tmp, seed: u64, variant: usize, env: &[(&str, &str)]) -> String {
    let dir = t.0.join(format!("sessions/--g{seed}-{variant}--"));
    fs::create_dir_all(&dir).unwrap();
    let f = dir.join("s.jsonl");
    let (bytes, leaf) = golden_input(seed, variant);
    fs::write(&f, &bytes).unwrap();
    let mtime = hours_ago(2);
    set_mtime(&f, mtime);
    let fs_ = f.to_str().unwrap();
    let root = t.0.to_str().unwrap();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut args = vec!["prune", fs_];
    if let Some(l) = &leaf {
        args.extend(["--leaf", l.as_str()]);
    }
    for extra in [&["--dry-run"][..], &["--dry-run", "--json"], &[], &["--json"]] {
        let mut a = args.clone();
        a.extend_from_slice(extra);
        let o = run_env(&t.0, &a, env);
        fnv(&mut h, o.code.to_string().as_bytes());
        fnv(&mut h, o.stdout.replace(root, "<T>").as_bytes());
        fnv(&mut h, o.stderr.replace(root, "<T>").as_bytes());
    }
    let after = fs::read(&f).unwrap();
    fnv(&mut h, &after);
    let mut names: Vec<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    fnv(&mut h, names.join(",").as_bytes());
    let kept = fs::metadata(&f).unwrap().modified().unwrap() == mtime;
    fnv(&mut h, &[kept as u8]);
    format!("{seed}/{variant} {} {} {h:016x}", bytes.len(), after.len())
}

/// Recorded from `prune` as it was before it streamed (it read the whole file): seeds × shapes,
/// each `seed/variant input-bytes output-bytes digest`. `PRUNE_GOLDEN_PRINT=1` prints the table.
const PRUNE_GOLDEN: &str = "
1/0 8620 3404 36727ac0e6120ecf
2/0 10644 8166 bb37bf5b4076154c
3/0 13354 4873 ead6deb165719311
4/0 16031 4816 fa7fe6c467a1dd22
5/0 19099 6285 5c56499d31964ce8
6/0 20473 6738 6ce72ffd552ad5b1
101/1 28896 7274 de8fe29339a129b5
102/1 29438 10921 229a12da2e270623
103/1 33831 13823 d9376deca6cbf6e6
104/1 4626 3890 9578bb9f57f23628
105/1 8136 3939 017024b8643b9e75
106/1 11019 6582 c710913dd22733d3
201/2 17682 5598 d9b8bcfa2c11506e
202/2 19647 7367 8204aa82bdf4c8f3
203/2 22380 6329 fb1b8c510248dd70
204/2 25213 7280 d0fb49f216e91ffc
205/2 27536 3889 2aeb322479cf529a
206/2 31973 4295 9a36a87fdda2582b
301/3 6802 3339 0df3b5ffd477697f
302/3 10737 9337 ab6e94af22fded84
303/3 11933 2777 cb83aaf4ca4681ee
304/3 14645 3740 563fbd408eb1db85
305/3 17419 7758 aba6200da4a4cdbb
306/3 20489 1759 7354c48d0b15ab46
401/4 29595 8675 1273c17cb292b280
402/4 30693 11672 63a51e2917a8dd4c
403/4 33406 6993 6114235b84694c66
404/4 4065 3540 bd0451861dcd1f65
405/4 8248 3413 e3e4b2c7e3cd5dea
406/4 9294 3079 7b282221290ef096
501/5 18991 1431 fa20345b62ec9e3c
502/5 19685 2902 3cfdeaf564b232ee
503/5 24176 4909 069315670620c4d1
504/5 26030 7013 2a1a2b2b825d6127
505/5 27413 819 d2d9e224936586de
506/5 32943 7485 1b0726ff2a18cf70
661/6 1501019 1497854 d180095b02cb4e39
662/6 4281666 2639 1a1908587811fa63
701/7 28730 8139 10c14afa295fac4c
702/7 32029 12449 57fa4096946ce133
703/7 34143 5035 6c45766edf010bc6
704/7 5203 3870 0298591c15f1a7c5
705/7 7323 4888 425d91fbf49fed69
706/7 9910 4789 d97dfb6c801867c7
801/8 17863 17863 a4760ea70e2b9ccf
802/8 20861 20861 c8e940c6dbe9026c
803/8 24263 24263 101c725fad92e72d
804/8 25997 25997 140025d7fb77c9ea
805/8 30183 30183 3ed1c0b221e0d792
806/8 31971 31971 e6ddbaa9c60cb0b7
901/9 7693 7484 fa6c984d9831711d
902/9 9350 6546 3dc36bea091eff44
903/9 12877 4942 7c7d31d799653ce9
904/9 15258 6704 d3046dec3cf1badf
905/9 18218 2242 ae53b5cd9f838a7c
906/9 20196 4754 a598ca12249f6f01
";

/// Runs the golden inputs through prune (with `env`) and compares with the table.
fn golden_check(env: &[(&str, &str)]) {
    let t = Tmp::new("golden");
    let mut got = Vec::new();
    for variant in 0..10 {
        let seeds: &[u64] = if variant == 6 { &[61, 62] } else { &[1, 2, 3, 4, 5, 6] };
        for &seed in seeds {
            got.push(golden_case(&t, seed + variant as u64 * 100, variant, env));
        }
    }
    let got = got.join("\n");
    if std::env::var_os("PRUNE_GOLDEN_PRINT").is_some() {
        eprintln!("{got}");
    }
    let want: Vec<&str> = PRUNE_GOLDEN.trim().lines().map(str::trim).collect();
    let got: Vec<&str> = got.lines().collect();
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(w, g, "seed/variant input-bytes output-bytes digest ({env:?})");
    }
    assert_eq!(want.len(), got.len());
}

#[test]
fn prune_outputs_are_todays() {
    golden_check(&[]);
}

/// The same with the smallest read blocks and copy pieces (4 KiB; the test inputs are smaller
/// than the default 8 MiB): lines cut at block ends, lines longer than a block, many pieces.
#[test]
fn prune_outputs_are_todays_in_small_blocks() {
    golden_check(&[("PI_SESSIONS_PRUNE_CHUNK", "4096")]);
}
