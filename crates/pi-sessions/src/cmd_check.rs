//! `check`: integrity of session files, and a conservative `--repair`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use pi_session_core::blocks::Blocks;
use pi_session_core::entry::{Key, Skeleton};
use pi_session_core::header;
use pi_session_core::json;
use pi_session_core::platform::FileStamp;
use pi_session_core::tree::Tree;

use super::args::CheckArgs;
use super::fmt;
use serde::Serialize;
use serde_json::value::RawValue;

use super::ctx::{CliError, Ctx, Out};
use super::jout;
use super::jv::J;
use super::session::{self, CURRENT_VERSION, is_blank, key_text};
use super::{folder, paths, safe};

const DETAIL_CAP: usize = 100;

#[derive(Clone, Serialize)]
pub struct Problem {
    pub kind: &'static str,
    pub line: Option<u64>,
    pub id: Option<String>,
    pub message: String,
}

#[derive(Default)]
pub struct Report {
    pub path: PathBuf,
    pub session: bool,
    pub version: Option<f64>,
    pub lines: u64,
    pub entries: u64,
    /// Problem details, at most DETAIL_CAP per kind; `counts` has the totals.
    pub problems: Vec<Problem>,
    pub counts: Vec<(&'static str, u64)>,
    pub repair: Option<Result<Repaired, String>>,
    pub error: Option<String>,
}

pub struct Repaired {
    pub backup: PathBuf,
    pub dropped: u64,
    pub terminated: bool,
}

impl Report {
    fn add(&mut self, kind: &'static str, line: Option<u64>, id: Option<String>, message: String) {
        let n = match self.counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.counts.push((kind, 1));
                1
            }
        };
        if n as usize <= DETAIL_CAP {
            self.problems.push(Problem { kind, line, id, message });
        }
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().map(|(_, n)| n).sum::<u64>() + u64::from(self.error.is_some())
    }

    fn count(&self, kind: &str) -> u64 {
        self.counts.iter().find(|(k, _)| *k == kind).map_or(0, |(_, n)| *n)
    }
}

enum Status {
    Blank,
    /// Not an entry pi keeps: unparseable, or a falsy / non-object value.
    Malformed(&'static str),
    Entry(Skeleton),
}

struct Analysis {
    report: Report,
    /// Byte ranges (without `\n`) of lines kept by a repair.
    keep: Vec<(u64, u64)>,
    needs_repair: bool,
    /// The bytes read, and whether the last of them is `\n` (or there are none).
    size: u64,
    terminated: bool,
}

/// Reads `file` once, in blocks of whole lines (memory grows with the number of lines, not
/// with their bytes), and reports what pi would make of it.
fn analyze(path: &Path, file: &File) -> std::io::Result<Analysis> {
    let mut r = Report { path: path.to_path_buf(), ..Report::default() };
    let mut statuses: Vec<(u64, u64, u64, Status)> = Vec::new();
    let mut unique = 0u64;
    let mut line_no = 0u64;
    let mut bad_utf8 = Vec::new();
    // The first line pi keeps (a falsy line is skipped; any other value counts), as text.
    let mut first_text: Option<String> = None;
    let mut terminated = true;
    let mut size = 0;
    let chunk = session::chunk();
    let mut blocks = Blocks::new(file, chunk, chunk);
    while let Some((off, block)) = blocks.next_block()? {
        terminated = block.ends_with(b"\n");
        size = off + block.len() as u64;
        let mut start = 0;
        while start < block.len() {
            let end = memchr::memchr(b'\n', &block[start..]).map_or(block.len(), |i| start + i);
            line_no += 1;
            let raw = &block[start..end];
            let text = String::from_utf8_lossy(raw);
            if matches!(text, Cow::Owned(_)) {
                bad_utf8.push(line_no);
            }
            let st = if is_blank(raw) {
                Status::Blank
            } else {
                match json::parse_document(text.as_bytes()) {
                    None => Status::Malformed("not valid JSON"),
                    Some(v) if v.kind != json::Kind::Object => Status::Malformed(if v.truthy(text.as_bytes()) {
                        "not a JSON object"
                    } else {
                        "a falsy JSON value"
                    }),
                    Some(_) => match Skeleton::parse_line(text.as_bytes(), &mut unique) {
                        Some(sk) => Status::Entry(sk),
                        None => Status::Malformed("not valid JSON"),
                    },
                }
            };
            if first_text.is_none() && matches!(st, Status::Entry(_) | Status::Malformed("not a JSON object")) {
                first_text = Some(text.into_owned());
            }
            statuses.push((line_no, off + start as u64, off + end as u64, st));
            start = end + 1;
        }
    }
    r.lines = line_no;
    let last_nonblank = statuses.iter().rposition(|s| !matches!(s.3, Status::Blank));

    // The header: the first line pi keeps (a falsy line is skipped; any other value counts).
    let first = statuses.iter().find(|s| match &s.3 {
        Status::Entry(_) => true,
        Status::Malformed(m) => *m == "not a JSON object",
        Status::Blank => false,
    });
    let header = match first {
        Some((n, _, _, Status::Entry(sk))) if header::is_header(sk) => Some(*n),
        _ => None,
    };
    r.session = header.is_some();
    let mut keep = Vec::new();
    let mut needs_repair = false;
    if header.is_none() {
        let msg = match first {
            None => "no entries: not a session file".to_string(),
            Some((n, _, _, _)) => {
                format!("line {n}, the first entry, is not a session header (type \"session\" with a string id)")
            }
        };
        r.add("missing_header", first.map(|f| f.0), None, msg);
        return Ok(Analysis { report: r, keep, needs_repair, size, terminated });
    }
    let header_line = header.unwrap_or(0);
    for (i, (n, s, e, st)) in statuses.iter().enumerate() {
        match st {
            Status::Blank => {}
            Status::Malformed(why) => {
                needs_repair = true;
                if Some(i) == last_nonblank {
                    let how = if terminated || i + 1 < statuses.len() { "" } else { ", no final newline" };
                    r.add("torn_last_line", Some(*n), None, format!("last line is {why}{how} (a write cut short?)"));
                } else {
                    r.add("malformed_line", Some(*n), None, (*why).to_string());
                }
            }
            Status::Entry(_) => keep.push((*s, *e)),
        }
    }
    if !terminated && last_nonblank.is_some_and(|i| matches!(statuses[i].3, Status::Entry(_))) {
        needs_repair = true;
        r.add(
            "missing_newline",
            Some(statuses[last_nonblank.unwrap_or(0)].0),
            None,
            "the last line has no final newline".into(),
        );
    }
    for n in &bad_utf8 {
        r.add("invalid_utf8", Some(*n), None, "bytes that are not UTF-8 (read as U+FFFD)".into());
    }

    // Version.
    let htext = first_text.unwrap_or_default();
    let version = match J::parse(htext.as_bytes()).and_then(|h| h.get("version")) {
        None => 1.0,
        Some(v) if v.is_null() => 1.0,
        Some(v) => v.num().unwrap_or(f64::NAN),
    };
    r.version = Some(version);
    if version.partial_cmp(&CURRENT_VERSION).is_none_or(|o| o.is_lt()) {
        r.add(
            "old_version",
            Some(header_line),
            None,
            format!("session version {} (current is 3)", jout::num_text(version)),
        );
    }

    // The entry graph (v2+: v1 files get ids and parents when pi migrates them).
    let mut tree = Tree::new();
    let mut line_of: Vec<u64> = Vec::new();
    for (n, _, _, st) in &statuses {
        if let Status::Entry(sk) = st {
            tree.push(sk.clone());
            line_of.push(*n);
        }
    }
    let entries = tree.entries();
    r.entries = entries.len() as u64;
    if version >= 2.0 {
        let mut seen: HashMap<&Key, Vec<u64>> = HashMap::new();
        for &p in &entries {
            let sk = tree.get(p);
            let line = line_of[p as usize];
            if !sk.id.is_string() {
                r.add("missing_id", Some(line), None, format!("entry has no string id ({})", key_text(&sk.id)));
                continue;
            }
            seen.entry(&sk.id).or_default().push(line);
        }
        let mut dups: Vec<(&Key, &Vec<u64>)> = seen.iter().filter(|(_, v)| v.len() > 1).map(|(k, v)| (*k, v)).collect();
        dups.sort_by_key(|(_, v)| v[0]);
        for (k, lines) in dups {
            let list: Vec<String> = lines.iter().map(u64::to_string).collect();
            r.add("duplicate_id", Some(lines[0]), Some(key_text(k)), format!("id used on lines {}", list.join(", ")));
        }
        for &p in &entries {
            let sk = tree.get(p);
            if sk.parent == Key::Null || sk.parent.strict_eq(&sk.id) {
                continue;
            }
            if tree.lookup(&sk.parent).is_none() {
                let msg = if sk.parent == Key::Undefined {
                    "entry has no parentId".to_string()
                } else {
                    format!("parent {} not found", key_text(&sk.parent))
                };
                r.add("orphan", Some(line_of[p as usize]), Some(key_text(&sk.id)), msg);
            }
        }
        // Cycles in the parent function (next = byId.get(parentId)).
        let n = tree.len();
        let next = |p: u32| -> Option<u32> {
            let sk = tree.get(p);
            if sk.parent.truthy() { tree.lookup(&sk.parent) } else { None }
        };
        let mut state = vec![0u8; n]; // 0 new, 1 on the current walk, 2 done
        for &p in &entries {
            let mut walk = Vec::new();
            let mut cur = Some(p);
            while let Some(c) = cur {
                match state[c as usize] {
                    0 => {
                        state[c as usize] = 1;
                        walk.push(c);
                        cur = next(c);
                    }
                    1 => {
                        let from = walk.iter().position(|&w| w == c).unwrap_or(0);
                        let ids: Vec<String> = walk[from..].iter().map(|&w| key_text(&tree.get(w).id)).collect();
                        let first = walk[from];
                        r.add(
                            "cycle",
                            Some(line_of[first as usize]),
                            Some(ids[0].clone()),
                            format!("parent links loop: {} → {}", ids.join(" → "), ids[0]),
                        );
                        break;
                    }
                    _ => break,
                }
            }
            for w in walk {
                state[w as usize] = 2;
            }
        }
    }
    Ok(Analysis { report: r, keep, needs_repair, size, terminated })
}

/// Drops the lines a repair drops and ends the file with `\n`: the kept lines are copied from
/// the file, which is replaced atomically (and only if it is still the file that was
/// analysed), after a backup of the original (a hard link, else a copy). Memory stays bounded.
/// `before`: the file's stamp from before it was analysed.
fn repair(path: &Path, a: &Analysis, before: &FileStamp) -> Result<Repaired, String> {
    let from = File::open(path).map_err(|e| e.to_string())?;
    // Refuse if the file changed since it was read (pi may be appending to it).
    let same = FileStamp::of_file(&from).is_ok_and(|s| s.id == before.id);
    if !same || before.size != a.size || !safe::unchanged(path, before) {
        return Err(CHANGED.into());
    }
    let backup =
        safe::backup(path).map_err(|e| format!("cannot write backup {}: {e}", safe::backup_path(path).display()))?;
    let written = safe::replace(path, before, None, move |to| {
        let mut out = safe::SpanCopy::new(&from, to, session::chunk().min(a.size as usize));
        for &(s, e) in &a.keep {
            if e < a.size {
                out.span(s, e + 1)?;
            } else {
                out.span(s, e)?;
                out.bytes(b"\n")?;
            }
        }
        // `from` closes here, before the rename (Windows refuses a rename over an open file).
        out.finish()
    });
    if let Err(e) = written {
        // The original is as it was: its backup goes.
        let _ = fs::remove_file(&backup);
        return Err(if e.starts_with("the file changed") {
            CHANGED.into()
        } else {
            format!("rewrite failed (original kept): {e}")
        });
    }
    Ok(Repaired { backup, dropped: a.report.lines.saturating_sub(a.keep.len() as u64), terminated: !a.terminated })
}

const CHANGED: &str = "the file changed while it was checked; not repaired";

/// Checks one file, repairing it when asked and possible.
pub fn check_file(path: &Path, do_repair: bool) -> Report {
    let before = safe::stamp(path);
    let cannot = |e: std::io::Error| Report {
        path: path.to_path_buf(),
        error: Some(format!("cannot read: {e}")),
        ..Report::default()
    };
    let a = match File::open(path).and_then(|f| analyze(path, &f)) {
        Ok(a) => a,
        Err(e) => return cannot(e),
    };
    if !do_repair || !a.report.session || !a.needs_repair {
        return a.report;
    }
    let Ok(before) = before else { return a.report };
    // A session in use is not rewritten, as `prune`, `archive` and `rm` leave it: the next
    // append of the process holding it would land in the file at the path, but what that
    // process holds and the repaired file would disagree.
    if let Some(why) = crate::held::why_held(path) {
        let mut r = a.report;
        r.repair = Some(Err(format!("in use: {why}")));
        return r;
    }
    match repair(path, &a, &before) {
        Ok(done) => {
            // Report the file as it is now.
            let after = File::open(path).and_then(|f| analyze(path, &f)).map(|a| a.report);
            let mut r = after.unwrap_or(a.report);
            r.repair = Some(Ok(done));
            r
        }
        Err(e) => {
            let mut r = a.report;
            r.repair = Some(Err(e));
            r
        }
    }
}

/// The `*.jsonl` files under `dir`; like the listings, a file that does not open is named on
/// stderr and counted (`skipped`), and FIFOs and other non-files are passed over.
fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Some(rd) = super::skipped::read_dir(dir) else { return };
    let mut items: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    items.sort();
    for p in items {
        if p.is_dir() {
            if depth > 0 {
                collect(&p, depth - 1, out);
            }
        } else if p.to_string_lossy().ends_with(".jsonl") && super::skipped::readable_file(&p) {
            out.push(p);
        }
    }
}

/// `check --json` (docs/cli.md).
#[derive(Serialize)]
struct CheckJson {
    files: Box<RawValue>,
    summary: SummaryJson,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SummaryJson {
    files: u64,
    clean: u64,
    with_problems: u64,
    repaired: u64,
}

#[derive(Serialize)]
struct FileJson<'a> {
    path: Cow<'a, str>,
    ok: bool,
    session: bool,
    version: Option<f64>,
    lines: u64,
    entries: u64,
    counts: CountsJson<'a>,
    problems: &'a [Problem],
    error: Option<&'a str>,
    repair: Option<RepairJson<'a>>,
}

/// Totals per kind, in the order the kinds were found.
struct CountsJson<'a>(&'a [(&'static str, u64)]);

impl Serialize for CountsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_map(self.0.iter().map(|(k, n)| (k, n)))
    }
}

#[derive(Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
enum RepairJson<'a> {
    Done { backup: Cow<'a, str>, dropped_lines: u64, terminated_last_line: bool },
    Failed { error: &'a str },
}

pub fn run(ctx: &Ctx, a: &CheckArgs, out: Out) -> Result<i32, CliError> {
    let target = match &a.target {
        Some(t) => paths::resolve(&t.to_string_lossy(), &ctx.cwd),
        None => ctx.dir.clone().unwrap_or_else(|| folder::sessions_dir(ctx)),
    };
    let files = if target.is_dir() {
        let mut v = Vec::new();
        collect(&target, 3, &mut v);
        v
    } else if target.is_file() {
        vec![target]
    } else {
        return Err(CliError::NotFound(format!("no such file or directory: {}", target.display())));
    };
    let do_repair = a.repair;
    let reports = super::work::map(&files, ctx.jobs, "checking", |f| check_file(f, do_repair));
    let bad = reports.iter().filter(|r| r.total() > 0).count();
    let repaired = reports.iter().filter(|r| matches!(r.repair, Some(Ok(_)))).count();
    if a.json {
        let files = reports.iter().map(|r| FileJson {
            path: r.path.to_string_lossy(),
            ok: r.total() == 0,
            session: r.session,
            version: r.version,
            lines: r.lines,
            entries: r.entries,
            counts: CountsJson(&r.counts),
            problems: &r.problems,
            error: r.error.as_deref(),
            repair: r.repair.as_ref().map(|x| match x {
                Ok(x) => RepairJson::Done {
                    backup: x.backup.to_string_lossy(),
                    dropped_lines: x.dropped,
                    terminated_last_line: x.terminated,
                },
                Err(e) => RepairJson::Failed { error: e },
            }),
        });
        let doc = CheckJson {
            files: jout::lines(files, true),
            summary: SummaryJson {
                files: reports.len() as u64,
                clean: (reports.len() - bad) as u64,
                with_problems: bad as u64,
                repaired: repaired as u64,
            },
        };
        writeln!(out, "{}", jout::to_string(&doc))?;
        return Ok(if bad > 0 { 1 } else { 0 });
    }
    let paint = ctx.paint();
    let verbose = a.verbose || files.len() == 1;
    let mut o = String::new();
    // A file as the lines show it: relative to the session folder, cut from the left to leave
    // room for what follows it.
    let file = |p: &Path, tail: usize| {
        fmt::trunc_left(&ctx.shown(&p.display().to_string()), ctx.width.saturating_sub(tail).max(16))
    };
    for r in &reports {
        let total = r.total();
        if total == 0 && r.repair.is_none() {
            if verbose {
                o.push_str(&format!("{}: {}\n", file(&r.path, 4), paint.green("ok")));
            }
            continue;
        }
        if total == 0 {
            o.push_str(&format!("{}: {}\n", file(&r.path, 17), paint.green("ok after repair")));
        } else {
            let problems = fmt::count(total, "problem", "problems");
            o.push_str(&format!("{}: {}\n", file(&r.path, 2 + problems.len()), paint.red(&problems)));
        }
        if let Some(e) = &r.error {
            o.push_str(&format!("  {}\n", paint.red(e)));
        }
        let mut shown: HashMap<&str, usize> = HashMap::new();
        for pr in &r.problems {
            let c = shown.entry(pr.kind).or_default();
            *c += 1;
            if *c > 10 {
                continue;
            }
            let at = pr.line.map_or(String::new(), |l| format!("line {l}: "));
            let id = pr.id.as_ref().map_or(String::new(), |i| format!("[{i}] "));
            let l = format!("  {} {at}{id}{}", paint.yellow(&fmt::pad_right(pr.kind, 15)), pr.message);
            o.push_str(&fmt::fit(&l, ctx.width));
            o.push('\n');
        }
        for (k, n) in &r.counts {
            if *n > 10 {
                o.push_str(&format!("  {} … and {} more\n", paint.yellow(&fmt::pad_right(k, 15)), n - 10));
            }
        }
        match &r.repair {
            Some(Ok(x)) => o.push_str(&format!(
                "  {} dropped {}{}; backup {}\n",
                paint.green("repaired:"),
                fmt::count(x.dropped, "line", "lines"),
                if x.terminated { ", ended the last line" } else { "" },
                ctx.shown(&x.backup.display().to_string())
            )),
            Some(Err(e)) => o.push_str(&format!("  {} {e}\n", paint.red("not repaired:"))),
            None if do_repair && !r.session && r.count("missing_header") > 0 => {
                o.push_str(&format!("  {}\n", paint.dim("not a session file: left untouched")));
            }
            None if do_repair && total > 0 => {
                o.push_str(&format!("  {}\n", paint.dim("nothing --repair can fix (it only drops malformed lines)")));
            }
            None => {}
        }
    }
    o.push_str(&format!(
        "checked {} file{}: {} ok, {} with problems{}\n",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        reports.len() - bad,
        bad,
        if do_repair { format!(", {repaired} repaired") } else { String::new() }
    ));
    write!(out, "{o}")?;
    Ok(if bad > 0 { 1 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn damaged(name: &str) -> (PathBuf, Vec<u8>) {
        let dir = std::env::temp_dir().join(format!("pis-check-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        let bytes = [
            r#"{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/w"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}"#,
            r#"{"broken"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"x"}}"#,
        ]
        .join("\n")
        .into_bytes();
        fs::write(&path, &bytes).unwrap();
        (path, bytes)
    }

    /// A file that changes between the analysis and the repair is left alone, without a backup.
    #[test]
    fn a_file_changed_after_its_analysis_is_not_repaired() {
        let (path, bytes) = damaged("changed");
        let before = safe::stamp(&path).unwrap();
        let a = analyze(&path, &File::open(&path).unwrap()).unwrap();
        assert!(a.needs_repair && a.keep.len() == 3 && !a.terminated);
        let grown = [&bytes[..], b"\n{\"type\":\"label\"}\n"].concat();
        fs::write(&path, &grown).unwrap();
        assert_eq!(repair(&path, &a, &before).err().as_deref(), Some(CHANGED));
        assert_eq!(fs::read(&path).unwrap(), grown);
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1, "a backup or temp file was left");

        // Unchanged: the kept lines, byte for byte, each ending in `\n`; the original in the backup.
        fs::write(&path, &bytes).unwrap();
        let before = safe::stamp(&path).unwrap();
        let a = analyze(&path, &File::open(&path).unwrap()).unwrap();
        let done = repair(&path, &a, &before).unwrap();
        assert!(done.terminated && done.dropped == 1);
        let text = String::from_utf8(bytes.clone()).unwrap();
        let want: String = text.lines().filter(|l| l.ends_with('}')).map(|l| format!("{l}\n")).collect();
        assert_eq!(fs::read_to_string(&path).unwrap(), want);
        assert_eq!(fs::read(&done.backup).unwrap(), bytes);
        let _ = fs::remove_dir_all(path.parent().unwrap());
    }
}
