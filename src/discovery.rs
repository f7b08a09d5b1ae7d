//! Finding session files in a folder without reading them whole: newest first (as
//! `findMostRecentSession` and `continueRecent` order them), and by header id (`findById`).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::entry::{Key, Skeleton};
use crate::listing;
use crate::platform::{self, FileStamp, name_bytes};
use crate::store::{self, HeaderScan};

/// The `.jsonl` files of `dir` sorted by mtime, newest first (equal times keep readdir's
/// order, as the reference's stable sort does), the first `limit` of them; `None` when the
/// folder cannot be listed or a file cannot be stat'ed.
pub fn files_by_mtime(dir: &Path, limit: usize) -> Option<Vec<PathBuf>> {
    let found = platform::jsonl_stats(dir).ok()?;
    let mut files = Vec::with_capacity(found.len());
    for (name, st) in found {
        files.push((name, st?.mtime_ms));
    }
    files.sort_by(|a, b| {
        b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal).then_with(|| name_bytes(&a.0).cmp(&name_bytes(&b.0)))
    });
    Some(files.into_iter().take(limit).map(|f| dir.join(f.0)).collect())
}

/// The `.jsonl` files of `dir`, in readdir order, whose header id is `id`
/// (`header?.id === id`), with their header lines; `None` when the folder cannot be listed.
pub fn headers_with_id(dir: &Path, id: &Key) -> Option<Vec<(PathBuf, String)>> {
    // Names and stats come from one pipelined pass; headers of unchanged files from the
    // listing index (its disk part too: a folder's headers are worth one read of it).
    let mut files = platform::jsonl_stats(dir).ok()?;
    // `readdir` order: libuv's scandir sorts names with `strcmp`, i.e. by bytes.
    files.sort_by(|a, b| name_bytes(&a.0).cmp(&name_bytes(&b.0)));
    let paths: Vec<(PathBuf, Option<FileStamp>)> = files.into_iter().map(|(n, st)| (dir.join(n), st)).collect();
    let found = listing::par_map(&paths, |(p, st)| {
        let Ok(HeaderScan::Header(line)) = store::read_header_stamped(p, *st, true) else { return None };
        let sk = Skeleton::parse_line(line.as_bytes(), &mut 0)?;
        sk.id.strict_eq(id).then_some(line)
    });
    Some(paths.into_iter().zip(found).filter_map(|((p, _), line)| line.map(|l| (p, l))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

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
