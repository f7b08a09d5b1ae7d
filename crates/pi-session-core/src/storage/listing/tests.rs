//! Tests of the listing scan: `info`, `rows` and `scanner` together.

use std::fs;
use std::sync::atomic::AtomicBool;

use crate::storage::json::{self, Kind};
use crate::storage::listing::info::{InfoScan, scan_info};
use crate::storage::listing::rows::Row;
use crate::storage::listing::scanner::{Scanner, scan_rows};
use crate::testutil::TempPath;

fn scan(content: &str) -> InfoScan {
    let p = TempPath::file("list", "x.jsonl");
    fs::write(&p, content).unwrap();
    scan_info(&p, &AtomicBool::new(false))
}

/// Writes one file per text in a fresh temp dir (removed with the `TempPath`); returns their
/// paths, in order.
fn write_files(label: &str, texts: impl IntoIterator<Item = String>) -> (TempPath, Vec<String>) {
    let d = TempPath::dir(&format!("list-{label}"));
    let paths = texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            let p = d.join(format!("{i}.jsonl"));
            fs::write(&p, text).unwrap();
            p.to_string_lossy().into_owned()
        })
        .collect();
    (d, paths)
}

/// A session of `messages` user messages of `chars` ASCII characters each.
fn big_session(messages: usize, chars: usize) -> String {
    let text = "a".repeat(chars);
    let mut s =
        String::from("{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n");
    for i in 0..messages {
        s.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"m{i}\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n"
        ));
    }
    s
}

/// Runs `f` with the listing's JS string limit at `units` on this thread.
fn with_limit<R>(units: usize, f: impl FnOnce() -> R) -> R {
    crate::storage::text::TEST_JS_STRING_UNITS.with(|l| l.set(units));
    let r = f();
    crate::storage::text::TEST_JS_STRING_UNITS.with(|l| l.set(crate::storage::text::MAX_JS_STRING_UNITS));
    r
}

#[test]
fn texts_over_the_js_string_limit_make_the_row_null() {
    assert_eq!(crate::storage::text::MAX_JS_STRING_UNITS, 536_870_888);
    with_limit(1000, || {
        // Three messages of 400: each line fits in a JS string, the joined text does
        // not (the reference's `join` throws inside its `try`: that file alone is
        // `null`).
        let scanned = scan(&big_session(3, 400));
        let InfoScan::Info(i) = &scanned else { panic!("scanned: {scanned:?}") };
        assert_eq!(i.message_count, 3);
        assert_eq!(Row::new(&scanned), Row::Null);
        // Joined with its space, 999 units: a row.
        assert!(matches!(Row::new(&scan(&big_session(2, 499))), Row::Info { .. }));
        assert_eq!(Row::new(&scan(&big_session(2, 500))), Row::Null);
    });
}

#[test]
fn a_line_over_the_js_string_limit_drops_the_session() {
    with_limit(1000, || {
        // One line longer than V8 can hold: the reference's readline throws outside its
        // `try` (its process dies); the session drops out here.
        let line = |s: &str| s.lines().nth(1).unwrap().len();
        let over = big_session(1, 1000 - line(&big_session(1, 0)) + 1);
        assert_eq!(line(&over), 1001);
        assert_eq!(scan(&over), InfoScan::Null);
        assert!(matches!(scan(&big_session(1, 1000 - line(&big_session(1, 0)))), InfoScan::Info(_)));
        // A line as long in bytes but not in UTF-16 units is no such line.
        let s = big_session(1, 0).replace("\"content\":\"\"", &format!("\"content\":\"{}\"", "é".repeat(480)));
        assert!(line(&s) > 1000);
        assert!(matches!(scan(&s), InfoScan::Info(_)));
    });
}

#[test]
fn basic_info() {
    let InfoScan::Info(i) = scan(concat!(
        "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
        "{\"type\":\"message\",\"id\":\"a\",\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}\r\n",
        "{\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"thinking\"},{\"type\":\"text\",\"text\":\"\"}],\"timestamp\":5}}\n",
        "{\"type\":\"session_info\",\"name\":\" n \"}\n",
    )) else {
        panic!()
    };
    assert_eq!(i.message_count, 2);
    assert_eq!(i.first_message, "hello");
    assert_eq!(i.all_text, "hello x ");
    assert_eq!(i.name.as_deref(), Some("\" n \""));
    assert_eq!(i.last_activity, Some(1704067201000.0));
}

#[test]
fn unicode_line_breaks_split_as_buns_readline() {
    use crate::storage::listing::info::{LineBreaks, scan_info_and_header};
    let head = "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/p\"}";
    let msg = |t: &str| format!("{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"{t}\"}}}}");
    // A message split in two (neither piece is JSON), one kept whole in a string on Node,
    // and two messages in one line: Node counts 2 messages, Bun's readline 2 others.
    let text =
        format!("{head}\n\u{2029}\r\n{}\n{}\u{2028}x\n{}\u{2029}{}", msg("a\u{2028}b"), msg("c"), msg("d"), msg("e"));
    let (_dir, paths) = write_files("breaks", [text]);
    let p = &paths[0];
    let scan = |b| scan_info_and_header(std::path::Path::new(p), &AtomicBool::new(false), b).0;
    let (InfoScan::Info(node), InfoScan::Info(bun)) = (scan(LineBreaks::Node), scan(LineBreaks::Unicode)) else {
        panic!()
    };
    assert_eq!((node.message_count, node.all_text.as_str()), (1, "a\u{2028}b"));
    assert_eq!((bun.message_count, bun.all_text.as_str()), (3, "c d e"));
    // Rows of Node's lines never serve another: the index is not used.
    let rows = |b| Scanner::start_in(vec![p.clone()], std::sync::Arc::new(AtomicBool::new(false)), b).take(0..1).json;
    assert_eq!(rows(LineBreaks::Node), rows(LineBreaks::Node));
    assert_ne!(rows(LineBreaks::Unicode), rows(LineBreaks::Node));
}

#[test]
fn cached_rows_follow_file_changes() {
    let d = TempPath::dir("list-cache");
    let p = d.join("s.jsonl");
    let head = "{\"type\":\"session\",\"id\":\"s\"}\n";
    let msg = "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
    fs::write(&p, format!("{head}{msg}")).unwrap();
    let paths = vec![p.to_string_lossy().into_owned()];
    let no = AtomicBool::new(false);
    let first = scan_rows(&paths, &no);
    assert!(first.json.contains(",1,"), "{first:?}");
    assert!(first.rendered[0].contains("«hi»«hi»"), "{first:?}"); // firstMessage, allMessagesText
    let again = scan_rows(&paths, &no);
    // (The texts may come back in a shared block: compare them, not where they are.)
    assert_eq!(again.rendered, first.rendered);
    fs::write(&p, format!("{head}{msg}{msg}")).unwrap();
    let second = scan_rows(&paths, &no);
    assert!(second.json.contains(",2,"), "an appended file is scanned again: {second:?}");
    assert!(second.rendered[0].contains("«hi»«hi hi»"), "{second:?}");
}

#[test]
fn rows_carry_decoded_texts() {
    let head = "{\"type\":\"session\",\"id\":\"s\"}\n";
    let msg = |role: &str, text: &str| {
        format!("{{\"type\":\"message\",\"message\":{{\"role\":\"{role}\",\"content\":\"{text}\"}}}}\n")
    };
    let (_dir, paths) = write_files(
        "rows",
        [
            format!("{head}{}{}", msg("assistant", "caf\u{e9} \\n"), msg("user", "q\\\"")),
            "not a session\n".to_string(),
            format!("{head}{}", msg("user", "\u{2192} \\ud83d\\ude00")),
            head.to_string(),
        ],
    );
    let rows = scan_rows(&paths, &AtomicBool::new(false));
    // firstMessage and allMessagesText: `q"` and `café \n q"` (Latin-1), then `→ 😀`
    // twice (UTF-16), then two empty texts; the second file is not a session.
    let r = &rows.rendered;
    assert!(r[0].contains("«q\"»«café \n q\"»"), "{r:?}");
    assert_eq!(r[1], "Null");
    assert!(r[2].contains("«\u{2192} \u{1f600}»«\u{2192} \u{1f600}»"), "{r:?}");
    assert!(r[3].contains("«»«»"), "{r:?}");
    // Each text is a block of its own (`which` 0, 1, …: JS gets it as one string);
    // an empty one is no block.
    let json = rows.json;
    assert_eq!(rows.blocks.len(), 4);
    assert!(json.starts_with("[[{\"type\":\"session\",\"id\":\"s\"},null,2,null,[],0,0,2,1,0,9,"), "{json}");
    assert!(json.contains("],null,[{\"type\":\"session\",\"id\":\"s\"},null,1,null,[],2,0,4,3,0,4,"), "{json}");
    assert!(json.contains("],[{\"type\":\"session\",\"id\":\"s\"},null,0,null,[],0,0,0,0,0,0,"), "{json}");
    assert!(json.ends_with("]]"), "{json}");
}

#[test]
fn scanner_batches_and_abort() {
    let (_dir, paths) = write_files(
        "scanner",
        (0..7).map(|i| {
            let msg =
                format!("{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"m{i} \u{2192}\"}}}}");
            if i == 3 { "junk\n".to_string() } else { format!("{{\"type\":\"session\",\"id\":\"{i}\"}}\n{msg}\n") }
        }),
    );
    // Batch by batch, the same rows as all at once (each batch's texts start at 0).
    let whole = scan_rows(&paths, &AtomicBool::new(false));
    let scanner = Scanner::start(paths.clone(), std::sync::Arc::new(AtomicBool::new(false)));
    let kinds = |json: &str| {
        let v = json::parse_document(json.as_bytes()).unwrap();
        let mut kinds = Vec::new();
        json::for_each_element(json.as_bytes(), v, |e| kinds.push(e.kind));
        kinds
    };
    let (mut texts, mut rows) = (Vec::new(), Vec::new());
    for range in [0..3, 3..5, 5..7] {
        let batch = scanner.take(range.clone());
        texts.extend(batch.rendered);
        rows.extend(kinds(&batch.json));
    }
    assert_eq!(texts, whole.rendered);
    assert_eq!(rows, kinds(&whole.json));
    assert_eq!(rows.iter().filter(|&&k| k == Kind::Null).count(), 1, "{rows:?}"); // the junk file
    // Aborted before it starts: every row is null, and nothing waits forever.
    let rows = Scanner::start(paths.clone(), std::sync::Arc::new(AtomicBool::new(true))).take(0..7);
    assert_eq!(rows.json, "[null,null,null,null,null,null,null]");
    // Past the end, or empty.
    assert_eq!(scanner.take(6..100).json, "[null]");
    assert_eq!(Scanner::start(Vec::new(), std::sync::Arc::new(AtomicBool::new(false))).take(0..0).json, "[]");
}

#[test]
fn scanner_stays_within_its_lookahead() {
    let (_dir, paths) = write_files("ahead", (0..60).map(|i| format!("{{\"type\":\"session\",\"id\":\"{i}\"}}\n")));
    let scanner =
        Scanner::start_with(paths.clone(), std::sync::Arc::new(AtomicBool::new(false)), 4, Default::default());
    let scanned = || scanner.shared.lock().rows.iter().filter(|r| r.is_some()).count();
    std::thread::sleep(std::time::Duration::from_millis(100));
    // Up to the lookahead, plus a file per thread that claimed one as it was reached.
    assert!(scanned() <= 4 + 8, "{} rows scanned before any was taken", scanned());
    let first = scanner.take(0..10);
    assert_eq!(first.json.matches("\"type\":\"session\"").count(), 10);
    let rest = scanner.take(10..60);
    assert_eq!(rest.json.matches("\"type\":\"session\"").count(), 50);
    // Dropping a scanner whose threads wait for a reader ends them.
    let idle = Scanner::start_with(paths, std::sync::Arc::new(AtomicBool::new(false)), 1, Default::default());
    let shared = idle.shared.clone();
    drop(idle);
    for _ in 0..100 {
        if shared.lock().running == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(shared.lock().running, 0);
}

#[test]
fn a_greedy_take_gets_every_ready_row_also_once_the_workers_are_done() {
    let (_dir, paths) = write_files("greedy", (0..50).map(|i| format!("{{\"type\":\"session\",\"id\":\"{i}\"}}\n")));
    let scanner = Scanner::start(paths, std::sync::Arc::new(AtomicBool::new(false)));
    for _ in 0..500 {
        if scanner.shared.lock().running == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(scanner.shared.lock().running, 0, "the workers finished");
    // One call for all of them, not one per batch.
    let rows = scanner.take_ready(0..3);
    assert_eq!(rows.json.matches("\"type\":\"session\"").count(), 50);
    assert_eq!(scanner.take_ready(50..53).json, "[]");
}

#[test]
fn odd_shapes() {
    assert_eq!(scan("{\"type\":\"message\"}\n"), InfoScan::Null);
    assert_eq!(scan(""), InfoScan::Null);
    assert_eq!(scan("{\"type\":\"session\"}\n{\"type\":\"message\",\"message\":null}\n"), InfoScan::Null);
    assert_eq!(scan("{\"type\":\"session\"}\n{\"type\":\"session_info\",\"name\":5}\n"), InfoScan::Null);
}

/// Shapes an earlier version left to a JS copy of `buildSessionInfo`.
#[test]
fn odd_shapes_the_reference_lists() {
    let msg = |message: &str| format!("{{\"type\":\"session\"}}\n{{\"type\":\"message\",\"message\":{message}}}\n");
    let info = |message: &str| match scan(&msg(message)) {
        InfoScan::Info(info) => info,
        other => panic!("{message}: {other:?}"),
    };
    // `Array.prototype.join` of text values that are not strings (undefined and null: "").
    let joined = info(
        r#"{"role":"user","content":[{"type":"text","text":1},{"type":"text","text":[1e21,null,[true,{}],"\u00e9"]},{"type":"text"},{"type":"text","text":{"valueOf":1}}]}"#,
    );
    assert_eq!(joined.first_message, r#"1 1e+21,,true,[object Object],\u00e9  [object Object]"#);
    // An own `toString` that is not callable: `join` throws, the file is null.
    assert_eq!(scan(&msg(r#"{"role":"user","content":[{"type":"text","text":{"toString":1}}]}"#)), InfoScan::Null);
    assert_eq!(
        scan(&msg(r#"{"role":"user","content":[{"type":"text","text":[{"t\u006fString":0}]}]}"#)),
        InfoScan::Null
    );
    // Escaped member names and an escaped type.
    let escaped = info(r#"{"r\u006fle":"user","c\u006fntent":[{"t\u0079pe":"t\u0065xt","t\u0065xt":"hi"}]}"#);
    assert_eq!((escaped.first_message.as_str(), escaped.message_count), ("hi", 1));
    // A message timestamp of 1e999 is Infinity: the row carries it as JSON text for it.
    let infinite = scan(&msg(r#"{"role":"user","content":"x","timestamp":1e999}"#));
    let InfoScan::Info(i) = &infinite else { panic!("{infinite:?}") };
    assert_eq!(i.last_activity, Some(f64::INFINITY));
    let Row::Info { head, .. } = Row::new(&infinite) else { panic!() };
    assert!(head.ends_with(",1,1e999,[],"), "{head}");
}

/// The listing index (`index`) under listings (`scanner`).
mod index {
    use std::ffi::OsString;
    use std::fs;
    use std::io::Write;
    use std::path::Path;
    use std::sync::atomic::AtomicBool;

    use crate::model::header::HeaderScan;
    use crate::storage::listing::index::disk::read_index;
    use crate::storage::listing::index::{TEST_SETTLE_NS, clear_memory, header, index_dir, index_file, row};
    use crate::storage::listing::rows::Row;
    use crate::storage::listing::scanner::scan_rows;
    use crate::storage::platform::FileStamp;

    fn session(text: &str) -> String {
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}}\n\
             {{\"type\":\"message\",\"id\":\"m\",\"parentId\":null,\"timestamp\":\"2024-01-01T00:00:01.000Z\",\
             \"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n"
        )
    }

    fn stamp(p: &str) -> FileStamp {
        crate::storage::platform::stamp(Path::new(p)).unwrap()
    }

    fn rows(paths: &[String]) -> Vec<String> {
        scan_rows(paths, &AtomicBool::new(false)).rendered
    }

    /// Settling, the disk index across a "fresh process" (memory cleared), every kind of
    /// change, a damaged or foreign index file. One test: the settle time is global.
    #[test]
    fn rows_persist_and_follow_every_change() {
        let dir = crate::testutil::TempPath::dir("index-rows");
        let paths: Vec<String> = (0..3)
            .map(|i| {
                let p = dir.join(format!("{i}.jsonl"));
                fs::write(&p, session(&format!("hello {i}"))).unwrap();
                p.to_string_lossy().into_owned()
            })
            .collect();
        let index = index_file(&index_dir().unwrap(), &dir).unwrap();
        let fresh = rows(&paths);

        // Files changed just now are not recorded (rule 2).
        TEST_SETTLE_NS.store(i64::MAX, std::sync::atomic::Ordering::Relaxed);
        clear_memory();
        assert_eq!(rows(&paths), fresh);
        assert!(row(Path::new(&paths[0]), &stamp(&paths[0])).is_none());
        assert!(!index.exists());

        TEST_SETTLE_NS.store(0, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(rows(&paths), fresh);
        assert!(index.exists(), "the last batch waits for the index");
        // findById in a folder this process knows: through the stats and the index.
        assert!(crate::storage::listing::index::knows_folder(&dir));
        let s = crate::model::entry::Key::Str("s".into());
        let found = crate::storage::listing::discovery::headers_with_id(&dir, &s, 0, false).unwrap();
        let by_id: Vec<String> = found.files.into_iter().map(|(p, _)| p.to_string_lossy().into_owned()).collect();
        assert_eq!(by_id, paths);
        assert_eq!(found.next, None);
        // findById in a folder this process has not listed: the first lookup reads the headers
        // (no stats, nothing recorded), the second records them, later ones take them from memory.
        let unlisted = dir.join("unlisted");
        fs::create_dir_all(&unlisted).unwrap();
        let other = unlisted.join("o.jsonl").to_string_lossy().into_owned();
        fs::write(&other, session("other")).unwrap();
        let lookup =
            || crate::storage::listing::discovery::headers_with_id(&unlisted, &s, 0, false).unwrap().files.len();
        assert_eq!(lookup(), 1);
        assert!(header(Path::new(&other), &stamp(&other), false).is_none(), "the first lookup records nothing");
        assert_eq!(lookup(), 1);
        assert!(header(Path::new(&other), &stamp(&other), false).is_some(), "the second records the header");
        assert_eq!(lookup(), 1);
        fs::write(&other, session("changed")).unwrap();
        assert!(header(Path::new(&other), &stamp(&other), false).is_none(), "a changed file misses");
        assert_eq!(lookup(), 1);
        clear_memory(); // a fresh process
        let from_disk = row(Path::new(&paths[1]), &stamp(&paths[1])).expect("row from the disk index");
        assert_eq!(
            format!("{from_disk:?}"),
            format!(
                "{:?}",
                Row::new(&crate::storage::listing::info::scan_info(Path::new(&paths[1]), &AtomicBool::new(false)))
            )
        );
        assert!(matches!(header(Path::new(&paths[1]), &stamp(&paths[1]), true), Some(HeaderScan::Header(_))));
        assert_eq!(rows(&paths), fresh);

        // Appended, rewritten with the same size, replaced by a rename, truncated: each
        // misses, and the listing shows the new content.
        type Change = (&'static str, fn(&str), &'static str);
        let changes: [Change; 4] = [
            (
                "append",
                |p| {
                    let mut f = fs::OpenOptions::new().append(true).open(p).unwrap();
                    f.write_all(b"{\"type\":\"session_info\",\"id\":\"n\",\"parentId\":\"m\",\"timestamp\":\"2024-01-01T00:00:02.000Z\",\"name\":\"N1\"}\n").unwrap();
                },
                "\"N1\"",
            ),
            (
                "same size, mtime set back",
                |p| {
                    let old = fs::metadata(p).unwrap().modified().unwrap();
                    fs::write(p, fs::read_to_string(p).unwrap().replace("hello", "HELLO")).unwrap();
                    fs::File::options().write(true).open(p).unwrap().set_modified(old).unwrap();
                },
                "HELLO 2",
            ),
            (
                "replaced by a rename",
                |p| {
                    let tmp = format!("{p}.new");
                    fs::write(&tmp, fs::read_to_string(p).unwrap().replace("HELLO", "howdy")).unwrap();
                    fs::rename(&tmp, p).unwrap();
                },
                "howdy 2",
            ),
            (
                "truncated",
                |p| {
                    fs::OpenOptions::new().write(true).open(p).unwrap().set_len(10).unwrap();
                },
                "\nNull",
            ),
        ];
        for (i, (what, change, shows)) in changes.into_iter().enumerate() {
            let before = stamp(&paths[2]);
            change(&paths[2]);
            assert_ne!(stamp(&paths[2]).state, before.state, "{what}");
            if i % 2 == 0 {
                clear_memory(); // a fresh process, with the index of the old state on disk
            }
            assert!(row(Path::new(&paths[2]), &stamp(&paths[2])).is_none(), "{what}");
            let now = rows(&paths);
            let text = now.join("\n");
            assert!(text.contains(shows), "{what}: {text}");
            assert!(row(Path::new(&paths[2]), &stamp(&paths[2])).is_some(), "{what}: recorded");
        }

        // A deleted file leaves the index with the next listing.
        fs::remove_file(&paths[2]).unwrap();
        rows(&paths[..2]);
        let names: Vec<OsString> = read_index(&index, &dir).unwrap().into_iter().map(|e| e.0).collect();
        assert_eq!(names, [OsString::from("0.jsonl"), OsString::from("1.jsonl")]);

        // Damaged, or another user's: ignored, and rebuilt by the next listing.
        let good = fs::read(&index).unwrap();
        fs::write(&index, &good[..good.len() / 2]).unwrap();
        clear_memory();
        assert!(row(Path::new(&paths[0]), &stamp(&paths[0])).is_none());
        assert_eq!(rows(&paths[..2]), rows(&paths[..2]));
        clear_memory();
        assert!(row(Path::new(&paths[0]), &stamp(&paths[0])).is_some(), "rebuilt");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&index).unwrap().permissions().mode() & 0o777, 0o600, "this user's only");
            std::os::unix::fs::chown(&index, Some(12345), None).unwrap();
            clear_memory();
            assert!(row(Path::new(&paths[0]), &stamp(&paths[0])).is_none(), "another user's index");
        }
        TEST_SETTLE_NS.store(-1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A FIFO named `*.jsonl` is not a session: the scan does not open it (an open would wait for
/// a writer forever, as pi 1.6.0's `list()` does), and a folder named so is `null` as in pi.
#[cfg(unix)]
#[test]
fn a_fifo_or_folder_named_jsonl_is_null_without_being_opened() {
    let d = TempPath::dir("list-fifo");
    let fifo = d.join("x.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let folder = d.join("y.jsonl");
    fs::create_dir(&folder).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (f, g) = (fifo.clone(), folder.clone());
    std::thread::spawn(move || {
        let _ = tx.send((scan_info(&f, &AtomicBool::new(false)), scan_info(&g, &AtomicBool::new(false))));
    });
    let got = rx.recv_timeout(std::time::Duration::from_secs(10));
    if got.is_err() {
        // Unblock the scan's open, so that the test ends.
        let _ = fs::OpenOptions::new().write(true).open(&fifo);
    }
    assert_eq!(got.expect("the scan waits on the FIFO"), (InfoScan::Null, InfoScan::Null));
}
