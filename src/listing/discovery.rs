//! Finding session files in a folder without reading them whole: newest first (as
//! `findMostRecentSession` and `continueRecent` order them), and by header id (`findById`).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::entry::{Key, Skeleton};
use crate::header::HeaderScan;
use crate::listing::{index, info};
use crate::platform::{self, FileStamp, name_bytes};

/// The `.jsonl` files of `dir` sorted by mtime, newest first (equal times keep readdir's
/// order, as the reference's stable sort does), the first `limit` of them; `None` when the
/// folder cannot be listed or a file cannot be stat'ed.
pub fn files_by_mtime(dir: &Path, limit: usize) -> Option<Vec<PathBuf>> {
    let found = platform::jsonl_stats(dir).ok()?;
    let mut files = Vec::with_capacity(found.len());
    for (name, st) in found {
        files.push((name, st?.mtime_ms));
    }
    // Stable: equal times stay in readdir order.
    files.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal));
    Some(files.into_iter().take(limit).map(|f| dir.join(f.0)).collect())
}

/// The `.jsonl` files of `dir`, in readdir order, whose header id is `id`
/// (`header?.id === id`), with their header lines; `None` when the folder cannot be listed.
pub fn headers_with_id(dir: &Path, id: &Key) -> Option<Vec<(PathBuf, String)>> {
    // Names and stats come from one pipelined pass; headers of unchanged files from this
    // process's listing index where it has them, else each file's bounded header scan. Not
    // from the disk index: decoding all its rows costs more than reading the headers (5,000
    // sessions in a fresh process: 129-154 ms at a 191 MB peak, against 45-52 ms at 53 MB).
    let files = platform::jsonl_stats(dir).ok()?;
    let paths: Vec<(PathBuf, Option<FileStamp>)> = files.into_iter().map(|(n, st)| (dir.join(n), st)).collect();
    let found = info::par_map(&paths, |(p, st)| {
        let Ok(HeaderScan::Header(line)) = index::read_header_stamped(p, *st, false) else { return None };
        let sk = Skeleton::parse_line(line.as_bytes(), &mut 0)?;
        sk.id.strict_eq(id).then_some(line)
    });
    Some(paths.into_iter().zip(found).filter_map(|((p, _), line)| line.map(|l| (p, l))).collect())
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
        // LANG=en_US.UTF-8; __test__/diff/collation.test.mjs compares random names live.
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
        assert_eq!(names(files_by_mtime(&dir, usize::MAX).unwrap()), ["b.jsonl", "c.jsonl", "a.jsonl"]);
        assert_eq!(names(files_by_mtime(&dir, 1).unwrap()), ["b.jsonl"]);
        let found = headers_with_id(&dir, &Key::Str("x".into())).unwrap();
        assert_eq!(names(found.iter().map(|f| f.0.clone()).collect()), ["a.jsonl", "c.jsonl"]);
        assert_eq!(found[0].1, header("x").trim_end());
        assert!(files_by_mtime(&dir.join("missing"), 1).is_none());
    }
}
