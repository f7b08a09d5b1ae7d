//! The archive: sessions moved out of pi's listing into
//! `<agent dir>/sessions-archive/--<cwd>--/<file name>.zst` and back, byte for byte (the steps
//! of `archive` and `restore`), and what `ls`/`search --archived` read of it.
//!
//! An archive file is one zstd frame with the content size and a content checksum; its mtime
//! is the session's, so a restore gives the file back with its bytes and its mtime (pi's
//! `modified` falls back to the mtime, and `/resume` sorts by `modified`). Both directions
//! stream in 1 MiB pieces: memory does not grow with the session.

use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use pi_session_core::header::{self, HeaderScan};
use pi_session_core::platform;

use super::ctx::{CliError, Ctx};
use super::folder::{self, Listed, Scope};
use super::safe::{self, FileStamp};
use super::{held, paths, skipped, work};

/// zstd level: 3 (zstd's default) compresses session JSON about 8x at well over 200 MB/s
/// per core; see bench/cli-results.md.
const LEVEL: i32 = 3;
const PIECE: usize = 1 << 20;
/// Sessions from this size on are compressed by zstd's worker threads too.
const MT_MIN: u64 = 16 << 20;

fn workers() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8) as u32
}

pub fn archive_root(ctx: &Ctx) -> PathBuf {
    ctx.agent_dir.join("sessions-archive")
}

/// Archived session files (`*.jsonl.zst`), of one project folder name or of all, newest name
/// first within a folder.
pub fn archived_files(ctx: &Ctx, folder: Option<&str>) -> Vec<PathBuf> {
    let root = archive_root(ctx);
    let dirs = match folder {
        Some(f) => vec![root.join(f)],
        None => folder::project_dirs(&root),
    };
    let mut out = Vec::new();
    for d in dirs {
        let Some(rd) = skipped::read_dir(&d) else { continue };
        let mut names: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n.ends_with(".jsonl.zst") && !n.starts_with('.')
            })
            .map(|e| e.path())
            .filter(|p| skipped::readable_file(p))
            .collect();
        names.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
        out.extend(names);
    }
    out
}

/// The archive folder name of a listing scope: its project folder, or all.
pub fn scope_folder(scope: &Scope) -> Option<String> {
    match scope {
        Scope::Dir { dir, .. } => Some(dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()),
        Scope::All { .. } => None,
    }
}

/// A streaming reader of an archived session's original bytes (the frame's checksum is
/// checked when its end is read).
pub fn open_archived(path: &Path) -> io::Result<impl Read + use<>> {
    zstd::stream::read::Decoder::new(File::open(path)?)
}

/// The header line of an archived session (`None`: not a session).
fn archived_header(path: &Path) -> Option<String> {
    let mut buf = Vec::new();
    let limit = header::MAX_HEADER_SCAN_BYTES as u64 + 1;
    open_archived(path).ok()?.take(limit).read_to_end(&mut buf).ok()?;
    let more = buf.len() as u64 == limit;
    match header::header_in(&buf, more) {
        HeaderScan::Header(h) => Some(h),
        _ => None,
    }
}

/// Compresses `src` to a temp file beside `dest`, reads it back against `src`, then moves it
/// to `dest` (never over an existing file) and removes `src`: each step only if `src` has
/// not changed since it was first looked at.
pub fn archive_one(src: &Path, dest: &Path) -> Result<u64, String> {
    if let Some(why) = held::why_held(src) {
        return Err(format!("in use: {why}"));
    }
    if fs::symlink_metadata(dest).is_ok() {
        return Err(format!("{} exists already", dest.display()));
    }
    let before = safe::stamp(src).map_err(|e| format!("cannot stat: {e}"))?;
    let input = File::open(src).map_err(|e| format!("cannot open: {e}"))?;
    let mtime = input.metadata().and_then(|m| m.modified()).map_err(|e| e.to_string())?;
    if let Some(dir) = dest.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = safe::temp_beside(dest);
    let result = write_and_verify(&input, before.size, &tmp, mtime).and_then(|len| {
        if !safe::unchanged(src, &before) {
            return Err("the file changed while it was archived (pi may be writing it); left in place".into());
        }
        safe::place_new(&tmp, dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
        Ok(len)
    });
    let len = match result {
        Ok(len) => len,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    // The last look before the original goes: still the bytes that were archived?
    if !safe::unchanged(src, &before) {
        let _ = fs::remove_file(dest);
        return Err("the file changed while it was archived (pi may be writing it); left in place".into());
    }
    // The archive file and its folder entry are durable (fsynced) before the original goes; the
    // unlinks are made durable with one fsync per folder at the end of the run.
    safe::fault("cli.unlink")
        .and_then(|()| fs::remove_file(src))
        .map_err(|e| format!("archived to {} but cannot remove the original: {e}", dest.display()))?;
    // A writer that had the file open may still have written to it in between: its bytes
    // are in the open file, so the session goes back in place and the archive copy goes.
    if FileStamp::of_file(&input).ok().map(|s| s.size) != Some(before.size) {
        let _ = fs::remove_file(dest);
        put_back(&input, src).map_err(|e| format!("changed while it was archived; cannot put it back: {e}"))?;
        return Err("the file changed while it was archived (pi may be writing it); left in place".into());
    }
    Ok(len)
}

/// Writes the bytes of the (unlinked) `input` back at `src`, followed by whatever a writer
/// put at `src` since, copied through a buffer (bounded memory).
fn put_back(input: &File, src: &Path) -> io::Result<()> {
    let tmp = safe::temp_beside(src);
    let written = (|| -> io::Result<()> {
        let out = platform::default_mode(fs::OpenOptions::new().write(true).create_new(true)).open(&tmp)?;
        let len = input.metadata()?.len();
        let mut copy = safe::SpanCopy::new(input, &out, PIECE.min(len as usize));
        copy.span(0, len)?;
        copy.finish()?;
        if let Ok(mut since) = File::open(src) {
            io::copy(&mut since, &mut &out)?;
        }
        out.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, src)?;
    safe::sync_dir(src);
    Ok(())
}

/// Writes one zstd frame of `size` bytes of `input` to `tmp` (mtime `mtime`), fsyncs it,
/// and reads it back against `input`. Returns its length.
fn write_and_verify(input: &File, size: u64, tmp: &Path, mtime: SystemTime) -> Result<u64, String> {
    let io = |e: io::Error| format!("cannot write {}: {e}", tmp.display());
    let out = safe::fault("cli.open")
        .and_then(|()| platform::default_mode(fs::OpenOptions::new().write(true).create_new(true)).open(tmp))
        .map_err(io)?;
    let mut enc = zstd::stream::write::Encoder::new(io::BufWriter::with_capacity(PIECE, out), LEVEL).map_err(io)?;
    enc.include_checksum(true).map_err(io)?;
    enc.set_pledged_src_size(Some(size)).map_err(io)?;
    if size >= MT_MIN {
        // One frame still; zstd's workers compress its blocks side by side.
        enc.multithread(workers()).map_err(io)?;
    }
    // Pieces no larger than the file: zeroing 1 MiB buffers for each small session showed in
    // profiles of the 1,000-session folder.
    let piece = PIECE.min(size.max(1) as usize);
    let mut buf = vec![0u8; piece];
    let mut at = 0u64;
    while at < size {
        let n = piece.min((size - at) as usize);
        platform::read_exact_at(input, &mut buf[..n], at).map_err(|e| format!("cannot read: {e}"))?;
        enc.write_all(&buf[..n]).map_err(io)?;
        at += n as u64;
    }
    let out = enc.finish().map_err(io)?.into_inner().map_err(|e| io(e.into_error()))?;
    out.set_modified(mtime).map_err(io)?;
    safe::fault("cli.fsync").and_then(|()| out.sync_all()).map_err(io)?;
    let len = out.metadata().map_err(io)?.len();
    drop(out);
    // Read back: the decoded frame (checksum checked at its end) must equal the original.
    let mut dec = open_archived(tmp).map_err(io)?;
    let mut back = vec![0u8; piece];
    let mut at = 0u64;
    loop {
        let n = read_full(&mut dec, &mut back).map_err(|e| format!("read-back of {} failed: {e}", tmp.display()))?;
        if n == 0 {
            break;
        }
        if at + n as u64 > size {
            return Err("read-back is longer than the original".into());
        }
        platform::read_exact_at(input, &mut buf[..n], at).map_err(|e| format!("cannot read: {e}"))?;
        if buf[..n] != back[..n] {
            return Err(format!("read-back differs from the original at byte {at}"));
        }
        at += n as u64;
    }
    if at != size {
        return Err("read-back is shorter than the original".into());
    }
    Ok(len)
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// fsyncs each folder once (the unlinks made in it).
pub fn sync_folders(folders: &[PathBuf]) {
    let mut seen: Vec<&PathBuf> = folders.iter().collect();
    seen.sort();
    seen.dedup();
    for d in seen {
        if let Ok(f) = File::open(d) {
            let _ = f.sync_all();
        }
    }
}

/// The project folder name of a session or archive file (`--<encoded cwd>--`).
pub fn folder_name(p: &Path) -> String {
    p.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Where `archive` puts a session: `<archive root>/<project folder>/<file name>.zst`.
pub fn archive_path(ctx: &Ctx, session: &Path) -> PathBuf {
    archive_root(ctx)
        .join(folder_name(session))
        .join(format!("{}.zst", session.file_name().unwrap_or_default().to_string_lossy()))
}

/// Where `restore` puts an archived session back: `<sessions>/<project folder>/<file name>`.
pub fn restored_path(ctx: &Ctx, zst: &Path) -> PathBuf {
    let name = zst.file_name().unwrap_or_default().to_string_lossy();
    folder::sessions_dir(ctx).join(folder_name(zst)).join(name.strip_suffix(".zst").unwrap_or(&name))
}

/// Resolves a `restore` argument: an archive path, a file name (with or without `.zst`), a
/// session id or a unique id prefix.
pub fn find_archived(ctx: &Ctx, arg: &str, all: &[PathBuf]) -> Result<PathBuf, CliError> {
    let as_path = paths::resolve(arg, &ctx.cwd);
    if as_path.is_file() && arg.ends_with(".zst") {
        return Ok(as_path);
    }
    if arg.is_empty() {
        return Err(CliError::Usage("empty session id".into()));
    }
    let name = arg.rsplit('/').next().unwrap_or(arg);
    let by_name: Vec<&PathBuf> = all
        .iter()
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n == name || n.strip_suffix(".zst") == Some(name) || n.strip_suffix(".jsonl.zst") == Some(name)
        })
        .collect();
    if by_name.len() == 1 {
        return Ok(by_name[0].clone());
    }
    let mut exact = Vec::new();
    let mut prefix = Vec::new();
    for p in all {
        // `<time>_<id>.jsonl.zst`: the id from the name first, the header when that does not tell.
        let Some(id) = archived_header(p).and_then(|h| folder::header_id(&h)) else { continue };
        if id == arg {
            exact.push((id, p));
        } else if id.starts_with(arg) {
            prefix.push((id, p));
        }
    }
    let pool = if exact.is_empty() { prefix } else { exact };
    match pool.len() {
        0 => Err(CliError::NotFound(format!("no archived session matches {arg:?} in {}", archive_root(ctx).display()))),
        1 => Ok(pool[0].1.clone()),
        n => {
            let mut msg = format!("{arg:?} is ambiguous: {n} archived sessions match\n");
            for (id, p) in pool.iter().take(20) {
                msg.push_str(&format!("  {id}  {}\n", p.display()));
            }
            msg.push_str("use a longer prefix or the archive path");
            Err(CliError::Ambiguous(msg))
        }
    }
}

/// Decompresses `zst` to a temp file beside `dest`, with the archive's mtime, fsynced, then
/// puts it at `dest` (never over an existing file) and removes the archive file.
pub fn restore_one(zst: &Path, dest: &Path) -> Result<u64, String> {
    if fs::symlink_metadata(dest).is_ok() {
        return Err(format!("{} exists; not overwritten (the archive is kept)", dest.display()));
    }
    let mtime = fs::metadata(zst).and_then(|m| m.modified()).map_err(|e| format!("cannot stat: {e}"))?;
    if let Some(dir) = dest.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = safe::temp_beside(dest);
    let written = (|| -> io::Result<u64> {
        let f = safe::fault("cli.open")
            .and_then(|()| platform::default_mode(fs::OpenOptions::new().write(true).create_new(true)).open(&tmp))?;
        let mut w = io::BufWriter::with_capacity(PIECE, &f);
        let mut dec = zstd::stream::read::Decoder::with_buffer(BufReader::with_capacity(PIECE, File::open(zst)?))?;
        let n = io::copy(&mut dec, &mut w)?;
        w.flush()?;
        drop(w);
        f.set_modified(mtime)?;
        safe::fault("cli.fsync").and_then(|()| f.sync_all())?;
        Ok(n)
    })();
    let n = match written {
        Ok(n) => n,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(format!("cannot restore: {e}"));
        }
    };
    if let Err(e) = safe::place_new(&tmp, dest) {
        let _ = fs::remove_file(&tmp);
        return Err(if e.kind() == io::ErrorKind::AlreadyExists {
            format!("{} exists; not overwritten (the archive is kept)", dest.display())
        } else {
            format!("cannot create {}: {e}", dest.display())
        });
    }
    // Durable before the archive file goes; the unlinks are fsynced once per folder at the end.
    safe::fault("cli.unlink")
        .and_then(|()| fs::remove_file(zst))
        .map_err(|e| format!("restored to {} but cannot remove the archive: {e}", dest.display()))?;
    if let Some(d) = zst.parent() {
        // Only when empty.
        let _ = fs::remove_dir(d);
    }
    Ok(n)
}

/// `info` of an archived session (`sessions-archive/…/*.jsonl.zst`), read through the zstd
/// stream; `size` is the original file's, the mtime the archive file's (the session's, kept by
/// `archive`).
pub fn archived_info(path: &Path) -> Option<Listed> {
    folder::info_of_stream(path, open_archived(path).ok()?)
}

/// Lists the archived sessions of a scope (`ls --archived`), newest first.
pub fn list(ctx: &Ctx, scope: &Scope) -> Vec<Listed> {
    let files = archived_files(ctx, scope_folder(scope).as_deref());
    let infos = work::map(&files, ctx.jobs, "scanning", |p| archived_info(p));
    let mut out: Vec<Listed> = infos.into_iter().flatten().collect();
    if let Some(want) = scope.cwd_filter() {
        out.retain(|s| folder::cwd_matches(Some(&s.cwd), want, &ctx.cwd));
    }
    out.sort_by(|a, b| b.modified.total_cmp(&a.modified));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::folder::tests::Agent;

    fn two_hours_ago(p: &Path) {
        let t = SystemTime::now() - std::time::Duration::from_secs(7200);
        File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
    }

    #[test]
    fn archive_then_restore_gives_the_bytes_and_mtime_back() {
        let a = Agent::new("archive");
        let ctx = a.ctx(None);
        let src = a.put("--work-app--", "2025-01-01_s.jsonl", "0197abcd");
        two_hours_ago(&src);
        let bytes = fs::read(&src).unwrap();
        let mtime = fs::metadata(&src).unwrap().modified().unwrap();
        let zst = archive_path(&ctx, &src);
        assert_eq!(zst, a.0.join("sessions-archive/--work-app--/2025-01-01_s.jsonl.zst"));
        assert_eq!(restored_path(&ctx, &zst), src);
        archive_one(&src, &zst).unwrap();
        assert!(!src.exists() && zst.exists());
        assert!(archive_one(&src, &zst).is_err(), "the source is gone");
        // Found by file name, id and prefix; listed through the stream.
        let all = archived_files(&ctx, None);
        assert_eq!(all, vec![zst.clone()]);
        for arg in ["2025-01-01_s.jsonl", "2025-01-01_s", "0197abcd", "0197"] {
            assert_eq!(find_archived(&ctx, arg, &all).unwrap(), zst, "{arg}");
        }
        assert!(matches!(find_archived(&ctx, "nope", &all), Err(CliError::NotFound(_))));
        let listed = list(&ctx, &Scope::All { sessions: folder::sessions_dir(&ctx) });
        assert_eq!(listed.len(), 1);
        assert_eq!((listed[0].id.as_str(), listed[0].size), ("0197abcd", bytes.len() as u64));
        // A file in the way is never replaced.
        fs::write(&src, "other").unwrap();
        assert!(restore_one(&zst, &src).unwrap_err().contains("not overwritten"));
        fs::remove_file(&src).unwrap();
        assert_eq!(restore_one(&zst, &src).unwrap(), bytes.len() as u64);
        assert_eq!(fs::read(&src).unwrap(), bytes);
        assert_eq!(fs::metadata(&src).unwrap().modified().unwrap(), mtime);
        assert!(!zst.exists());
    }

    #[test]
    fn a_recent_or_changed_session_stays() {
        let a = Agent::new("recent");
        let ctx = a.ctx(None);
        let src = a.put("--w--", "s.jsonl", "r1");
        let zst = archive_path(&ctx, &src);
        assert!(archive_one(&src, &zst).unwrap_err().contains("in use"), "modified less than a minute ago");
        assert!(src.exists() && !zst.exists());
    }

    /// An archived session that a writer appended to meanwhile goes back in place: the bytes
    /// of the old file, then what was written at its path since; in pieces smaller than it.
    #[test]
    fn put_back_gives_the_old_bytes_then_the_new() {
        let a = Agent::new("putback");
        let old = a.put("--w--", "old.jsonl", "p1");
        let mut bytes = fs::read(&old).unwrap();
        bytes.extend((0..3 * PIECE).map(|i| b"abc\n"[i % 4]));
        fs::write(&old, &bytes).unwrap();
        let input = File::open(&old).unwrap();
        let src = old.with_file_name("s.jsonl");
        put_back(&input, &src).unwrap();
        assert!(fs::read(&src).unwrap() == bytes);
        fs::write(&src, "late\n").unwrap();
        put_back(&input, &src).unwrap();
        assert!(fs::read(&src).unwrap() == [&bytes[..], b"late\n"].concat());
        let names: Vec<_> = fs::read_dir(src.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "a temp file was left: {names:?}");
    }
}
