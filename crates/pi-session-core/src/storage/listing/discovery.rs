//! Finding session files in a folder without reading them whole: newest first (as
//! `findMostRecentSession` and `continueRecent` order them), and by header id (`findById`).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::model::entry::{Key, Skeleton};
use crate::model::header::{self, HeaderScan};
use crate::storage::listing::{index, info};
use crate::storage::platform::{self, name_bytes};

/// The `.jsonl` files of `dir` sorted by mtime, newest first (equal times keep readdir's
/// order, Node's or `raw` Bun's, as the reference's stable sort does), the first `limit` of
/// them; `None` when the folder cannot be listed or a file cannot be stat'ed.
pub fn files_by_mtime(dir: &Path, limit: usize, raw: bool) -> Option<Vec<PathBuf>> {
    let found = platform::jsonl_stats(dir, raw).ok()?;
    let mut files = Vec::with_capacity(found.len());
    for (name, st) in found {
        files.push((name, st?.mtime_ms));
    }
    // Stable: equal times stay in readdir order.
    files.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal));
    Some(files.into_iter().take(limit).map(|f| dir.join(f.0)).collect())
}

/// Files whose header id is the one sought, from one call of [`headers_with_id`].
#[derive(Debug, Default)]
pub struct WithId {
    /// In readdir order, with their header lines.
    pub files: Vec<(PathBuf, String)>,
    /// Where to go on (a position in readdir order), when the folder has files after these.
    pub next: Option<usize>,
}

/// Headers per batch: each batch is read on a few threads, and the scan stops after the
/// first batch with a match.
const ID_BATCH: usize = 256;

/// The `.jsonl` files of `dir` whose header id is `id` (`header?.id === id`), in readdir
/// order (Node's, or `raw` Bun's) from its `from`-th file, as far as the end of the first batch that has one: the
/// reference stops at its first match (reading half the folder's headers on average), so
/// the caller takes these, or, when its cwd filter refuses them all, calls again from
/// `next`. `None` when the folder cannot be listed.
pub fn headers_with_id(dir: &Path, id: &Key, from: usize, raw: bool) -> Option<WithId> {
    let matches = |line: &str| Skeleton::parse_line(line.as_bytes(), &mut 0).is_some_and(|sk| sk.id.strict_eq(id));
    // The first lookup in a folder this process knows nothing of (a fresh `pi --session
    // <id>`) reads each header, with no stat: nothing is cached to check one against. Every
    // later one (the folder was listed, or looked in before: an SDK app, an extension)
    // stats each file of the batches it scans and takes the header of an unchanged file from
    // memory, recording those it reads (listing index rules). Never from the disk index:
    // decoding all its rows costs more than reading the headers (5,000 sessions in a fresh
    // process: 129-154 ms at a 191 MB peak, against 45-52 ms at 53 MB).
    let stamped = !first_lookup(dir);
    let names = platform::jsonl_names(dir, raw).ok()?;
    let open = platform::open_in(dir).ok()?;
    let mut out = WithId::default();
    let mut at = from.min(names.len());
    for batch in names[at..].chunks(ID_BATCH) {
        at += batch.len();
        let found = info::par_map(batch, |name| {
            let scan = if stamped {
                let path = dir.join(name);
                index::read_header_stamped(&path, platform::stamp(&path), false)
            } else {
                open(name).map_err(|e| crate::error::Error::io(e, "open", None)).and_then(header::read_header_of)
            };
            let Ok(HeaderScan::Header(line)) = scan else { return None };
            matches(&line).then(|| (dir.join(name), line))
        });
        out.files.extend(found.into_iter().flatten());
        if !out.files.is_empty() {
            break;
        }
    }
    out.next = (at < names.len()).then_some(at);
    Some(out)
}

/// Whether this is the first [`headers_with_id`] in `dir` of a process that has not listed
/// it either (then its headers are read without stats, and not recorded).
fn first_lookup(dir: &Path) -> bool {
    static LOOKED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    if index::knows_folder(dir) {
        return false;
    }
    let Ok(abs) = std::path::absolute(dir) else { return true };
    let mut looked = LOOKED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if looked.contains(&abs) {
        return false;
    }
    looked.push(abs);
    true
}

/// `listAll`'s discovery, [`all_sessions`]: paths in the reference's order, but for the runs
/// of equal mtimes in `ties` (`start..end`), in readdir order, whose names only ICU can order.
#[derive(Debug, Default, PartialEq)]
pub struct Discovered {
    pub paths: Vec<String>,
    pub ties: Vec<(usize, usize)>,
}

/// `listAll`'s discovery in one call: the folders of `root` (directories and symbolic links,
/// as `readdir(root, { withFileTypes: true })` tells them), the `.jsonl` files of each (a
/// folder that cannot be read has none), newest first by `stat` mtime (none: last, as
/// `-Infinity`), equal times in `b.localeCompare(a)` order of the file names: here when
/// `collate_known` and the run's names are printable ASCII, else left to the facade
/// (`ties`). Names are `readdir`'s (lossy UTF-8), in Node's order or `raw` Bun's. Paths are
/// `prefix + folder` (`join(root, folder)`) and `folder + sep + name`. With `preload_index`
/// (the listing that follows uses the index), the folders' listing indexes are read on another
/// thread meanwhile. An unreadable `root` has no files.
pub fn all_sessions(
    root: &Path,
    prefix: &str,
    sep: &str,
    collate_known: bool,
    raw: bool,
    preload_index: bool,
) -> Discovered {
    let Ok(entries) = std::fs::read_dir(root) else { return Discovered::default() };
    let mut names = Vec::new();
    for e in entries {
        // The reference's readdir rejects: `listAll` gives [].
        let Some((name, Ok(ft))) = e.ok().map(|e| (e.file_name(), e.file_type())) else {
            return Discovered::default();
        };
        names.push((name, ft.is_dir() || ft.is_symlink()));
    }
    platform::sort_as_readdir(&mut names, raw);
    let mut dirs = Vec::new();
    for (name, folder) in names {
        if folder {
            dirs.push(format!("{prefix}{}", platform::readdir_name(&name).to_string_lossy()));
        }
    }
    if preload_index {
        index::preload(dirs.iter().map(PathBuf::from).collect());
    }
    // (path, mtime or -Infinity, where its name starts)
    let mut files: Vec<(String, f64, usize)> = Vec::new();
    for dir in &dirs {
        // In Node's readdir order, with each file's stat (symlinks followed).
        let Ok(found) = platform::jsonl_stats(Path::new(dir), raw) else { continue };
        for (name, stamp) in found {
            let name = name.to_string_lossy();
            let path = format!("{dir}{sep}{name}");
            let at = path.len() - name.len();
            files.push((path, stamp.map_or(f64::NEG_INFINITY, |s| s.mtime_ms), at));
        }
    }
    // The reference's comparator, `(b.mtime - a.mtime) || b.name.localeCompare(a.name)`, in
    // two stable sorts: by mtime, then each run of equal ones by name.
    files.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal));
    fn name(f: &(String, f64, usize)) -> &[u8] {
        &f.0.as_bytes()[f.2..]
    }
    let mut ties = Vec::new();
    let mut i = 0;
    while i < files.len() {
        let end = i + files[i..].iter().take_while(|f| f.1 == files[i].1).count();
        let run = &mut files[i..end];
        if run.len() > 1 {
            if collate_known && run.iter().all(|f| name(f).iter().all(|b| (0x20..0x7F).contains(b))) {
                run.sort_by(|a, b| collate_ascii(name(b), name(a)));
            } else {
                ties.push((i, end));
            }
        }
        i = end;
    }
    Discovered { paths: files.into_iter().map(|f| f.0).collect(), ties }
}

/// The `.jsonl` names of `dir` in `b.localeCompare(a)` order for an English default locale
/// (the facade decides that), when every one is printable ASCII: V8 orders those by the
/// fixed weights of [`collate_ascii`], not by ICU. `None` when a name is anything else or
/// the folder cannot be read (the facade then sorts with `localeCompare`).
pub fn jsonl_names_descending(dir: &Path) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).ok()? {
        let name = e.ok()?.file_name();
        let bytes = name_bytes(&name);
        if !bytes.ends_with(b".jsonl") {
            continue;
        }
        if !bytes.iter().all(|b| (0x20..0x7F).contains(b)) {
            return None;
        }
        names.push(String::from_utf8(bytes.into_owned()).ok()?);
    }
    names.sort_unstable_by(|a, b| collate_ascii(b.as_bytes(), a.as_bytes()));
    Some(names)
}

/// V8's primary (L1) collation weights of 0x20..=0x7E (`kCollationWeightsL1` in
/// src/objects/intl-objects.cc: ranks of the Unicode Collation Algorithm's primary
/// weights). Letters share one across case.
const ASCII_L1: [u8; 95] = [
    6, 12, 16, 28, 38, 29, 27, 15, 17, 18, 24, 32, 9, 8, 14, 25, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 11, 10, 33,
    34, 35, 13, 23, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73,
    74, 19, 26, 20, 31, 7, 30, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70,
    71, 72, 73, 74, 21, 36, 22, 37,
];

/// `a.localeCompare(b)` for printable ASCII under the locales V8 compares with its weight
/// tables (`TryFastCompareStrings`): the first primary difference; else the shorter
/// first; else the first difference of case (tertiary: lower before upper).
pub fn collate_ascii(a: &[u8], b: &[u8]) -> Ordering {
    let l1 = |c: u8| ASCII_L1.get(usize::from(c.wrapping_sub(0x20))).copied().unwrap_or(0);
    let pairs = || a.iter().zip(b);
    pairs().map(|(&x, &y)| l1(x).cmp(&l1(y))).find(|o| o.is_ne()).unwrap_or_else(|| a.len().cmp(&b.len())).then_with(
        || {
            pairs()
                .find(|(x, y)| x != y)
                .map_or(Ordering::Equal, |(x, y)| x.is_ascii_uppercase().cmp(&y.is_ascii_uppercase()))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_names_collate_as_v8_compares_them() {
        // The order `["…"].sort((x, y) => x.localeCompare(y))` gave on Node 22 (ICU 78) with
        // LANG=en_US.UTF-8; __test__/list/collation.test.mjs compares random names live.
        let want = [
            " ",
            "_",
            "-",
            "!",
            ".",
            "~",
            "0",
            "2025-01-01T00-00-00-000z_x.jsonl",
            "2025-01-01T00-00-00-000Z_x.jsonl",
            "2025-01-01T00-00-00-000Z_X.jsonl",
            "9",
            "a",
            "A",
            "a_b",
            "a-b",
            "a.b",
            "a~",
            "a0",
            "aa",
            "ab",
            "aB",
            "Ab",
            "ab.jsonl",
            "b",
            "B",
            "z",
            "Z",
        ];
        let mut got = want.to_vec();
        got.reverse();
        got.sort_by(|a, b| collate_ascii(a.as_bytes(), b.as_bytes()));
        assert_eq!(got, want);
        assert_eq!(collate_ascii(b"a", b"a"), Ordering::Equal);
    }

    #[cfg(unix)]
    #[test]
    fn all_sessions_ties_orders_and_readdir_names() {
        use std::os::unix::ffi::OsStrExt;
        let root = std::env::temp_dir().join(format!("psn-all-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        use std::time::Duration;
        let t = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_650_000_000);
        let touch = |p: &Path, t: std::time::SystemTime| {
            std::fs::write(p, "").unwrap();
            std::fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
        };
        // Two runs of equal mtimes: p1's, newer, then p2's.
        for (dir, names, t) in
            [("p1", &["b", "a", "C"][..], t), ("p2", &["e", "\u{e9}", "f"][..], t - Duration::from_secs(1))]
        {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            names.iter().for_each(|n| touch(&root.join(dir).join(format!("{n}.jsonl")), t));
        }
        // Not UTF-8: stat'ed by its decoded name, which does not exist (-Infinity, last).
        touch(&root.join("p1").join(std::ffi::OsStr::from_bytes(b"x\xff.jsonl")), t);
        let prefix = format!("{}/", root.display());
        let names = |d: &Discovered| d.paths.iter().map(|p| p[prefix.len()..].to_owned()).collect::<Vec<_>>();
        // Printable ASCII runs are sorted here; a run with "é" comes in readdir order.
        assert_eq!(all_sessions(&root.join("none"), &prefix, "/", true, false, true), Discovered::default());
        let found = all_sessions(&root, &prefix, "/", true, false, true);
        let want = ["p1/C.jsonl", "p1/b.jsonl", "p1/a.jsonl", "p2/e.jsonl", "p2/f.jsonl", "p2/\u{e9}.jsonl"];
        assert_eq!(names(&found)[..6], want);
        assert_eq!(names(&found)[6], "p1/x\u{FFFD}.jsonl");
        assert_eq!(found.ties, [(3, 6)]);
        // Without the weight table every run of two or more is the facade's.
        let raw = all_sessions(&root, &prefix, "/", false, true, false);
        assert_eq!(raw.ties, [(0, 3), (3, 6)]);
        let mut sorted = names(&raw);
        sorted.sort();
        let mut want = names(&found);
        want.sort();
        assert_eq!(sorted, want);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn all_sessions_preloads_the_index_only_when_asked() {
        let root = std::env::temp_dir().join(format!("psn-all-preload-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("p")).unwrap();
        std::fs::write(root.join("p").join("a.jsonl"), "").unwrap();
        let prefix = format!("{}{}", root.display(), std::path::MAIN_SEPARATOR);
        let folder = root.join("p");
        let found = all_sessions(&root, &prefix, "/", true, true, false);
        assert_eq!(found.paths.len(), 1);
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(!index::loaded(&folder), "read the index of a listing that does not use it");
        all_sessions(&root, &prefix, "/", true, true, true);
        let start = std::time::Instant::now();
        while !index::loaded(&folder) {
            assert!(start.elapsed().as_secs() < 10, "the index was never preloaded");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn newest_first_and_by_id() {
        let dir = std::env::temp_dir().join(format!("psn-discovery-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let header = |id: &str| {
            format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"t\",\"cwd\":\"/\"}}\n")
        };
        for (name, id, age) in [("a.jsonl", "x", 30), ("b.jsonl", "y", 10), ("c.jsonl", "x", 20), ("d.txt", "x", 0)] {
            let p = dir.join(name);
            std::fs::write(&p, header(id)).unwrap();
            let t = std::time::SystemTime::now() - std::time::Duration::from_secs(age);
            std::fs::File::options().write(true).open(&p).unwrap().set_modified(t).unwrap();
        }
        let names = |v: Vec<PathBuf>| {
            v.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect::<Vec<_>>()
        };
        assert_eq!(names(files_by_mtime(&dir, usize::MAX, false).unwrap()), ["b.jsonl", "c.jsonl", "a.jsonl"]);
        assert_eq!(names(files_by_mtime(&dir, 1, false).unwrap()), ["b.jsonl"]);
        // A folder this process knows nothing of: headers in readdir order, batch by batch.
        assert!(!index::knows_folder(&dir));
        let found = headers_with_id(&dir, &Key::Str("x".into()), 0, false).unwrap();
        assert_eq!(names(found.files.iter().map(|f| f.0.clone()).collect()), ["a.jsonl", "c.jsonl"]);
        assert_eq!(found.files[0].1, header("x").trim_end());
        assert_eq!(found.next, None);
        assert!(headers_with_id(&dir, &Key::Str("x".into()), 3, false).unwrap().files.is_empty());
        assert!(files_by_mtime(&dir.join("missing"), 1, false).is_none());
        assert!(headers_with_id(&dir.join("missing"), &Key::Str("x".into()), 0, false).is_none());

        // Past one batch: matches at 300, 301, 420, 550 and 599 of 600 (in name order, not
        // as created); each call stops at the end of a batch with a match.
        let many = dir.join("many");
        std::fs::create_dir_all(&many).unwrap();
        for i in (0..600).map(|k| k * 7 % 600) {
            let id = if [300, 301, 420, 550, 599].contains(&i) { "z" } else { "n" };
            std::fs::write(many.join(format!("{i:04}.jsonl")), header(id)).unwrap();
        }
        let z = Key::Str("z".into());
        let mut from = Some(0);
        let mut calls = Vec::new();
        while let Some(at) = from {
            let found = headers_with_id(&many, &z, at, false).unwrap();
            calls.push((at, names(found.files.into_iter().map(|f| f.0).collect())));
            from = found.next;
        }
        let batch = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            calls,
            [
                (0, batch(&["0300.jsonl", "0301.jsonl", "0420.jsonl"])),
                (ID_BATCH * 2, batch(&["0550.jsonl", "0599.jsonl"])),
            ]
        );
        let none = headers_with_id(&many, &Key::Str("none".into()), 0, false).unwrap();
        assert!(none.files.is_empty() && none.next.is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
