//! The commands that change session folders: `prune`, `archive`, `restore`, `rm`, on generated
//! sessions (seeded random trees with branches, labels, names, compactions with and without
//! `retainedTail`, context edits), with concurrent writers, torn tails, non-session files,
//! name collisions, dry runs and bad arguments. The real binary runs in a temp agent dir.
//!
//! pi 1.6.0's own class judges the pruned and restored files in `__test__/cli/lifecycle.test.mjs`;
//! here the CLI's reading commands are the oracle (`export --branch` gives the path's lines
//! byte for byte, `context --json` the model context, `show --json` the name and labels).

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use serde_json::Value;

mod common;
use common::fixtures::project;
use common::*;

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
            &t.0.join("sessions").join(project(&format!("/work/{cwd}"))),
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
    out.push(put(&t.0.join("sessions").join(project("/work/a")), "2025-03-04T11-00-00-000Z_recent-1.jsonl", &recent));
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
#[cfg(target_os = "linux")]
fn holder(f: &Path) -> std::process::Child {
    use std::process::{Command, Stdio};
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
    let env = [("PI_SESSION_NATIVE_CLI_RECENT_SECS", "0")];
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
    if cfg!(windows) {
        // The Windows trash (the shell's IFileOperation) is not in wine: only the refusal is
        // checked here, the file stays.
        assert_eq!(o.code, 1, "{}", o.stdout);
        assert!(o.stderr.contains("--permanent deletes it; not removed") && files[0].exists(), "{}", o.stderr);
        fs::remove_file(&files[0]).unwrap();
    } else {
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert_eq!(o.json()["removed"][0]["how"], "trash");
        assert!(!files[0].exists());
        let trashed = snapshot(&t.0.join(".xdg/Trash/files"));
        assert_eq!(trashed.len(), 1, "in the freedesktop trash");
    }
    let o = run(&t.0, &["rm", "--permanent", "gen-0101", "gen-0102"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!files[1].exists() && !files[2].exists());
    assert_eq!(ls_ids(&t.0, &[]).len(), 2, "gone from the listing (and its index)");
    let notes = put(&t.0.join("sessions").join(project("/work/a")), "notes.jsonl", &["{\"a\":1}".to_string()]);
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
