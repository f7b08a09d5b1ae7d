//! `archive` and `restore`: which sessions, and the report; the steps are the archive
//! module's (`archive.rs`).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use super::archive::{self, archive_path, restored_path};
use super::args::{ArchiveArgs, RestoreArgs};
use super::ctx::{CliError, Ctx, Out};
use super::{fmt, folder, held, jout, paths, work};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Moved {
    path: String,
    archive: String,
    bytes_before: u64,
    bytes_after: Option<u64>,
}

#[derive(Serialize)]
struct Refused {
    path: String,
    reason: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArchiveReport {
    dry_run: bool,
    archived: Vec<Moved>,
    refused: Vec<Refused>,
    bytes_before: u64,
    bytes_after: u64,
    ratio: Option<f64>,
}

fn ratio(before: u64, after: u64) -> Option<f64> {
    (after > 0).then(|| (before as f64 / after as f64 * 100.0).round() / 100.0)
}

pub fn archive(ctx: &Ctx, a: &ArchiveArgs, out: Out) -> Result<i32, CliError> {
    let targets: Vec<PathBuf> = match a.older_than {
        None if a.sessions.is_empty() => {
            return Err(CliError::Usage("archive needs sessions to archive or --older-than DAYS".into()));
        }
        None => {
            if a.scope.all || a.scope.cwd.is_some() {
                return Err(CliError::Usage("--cwd and --all go with --older-than, not with named sessions".into()));
            }
            let mut t = Vec::new();
            for s in &a.sessions {
                let p = folder::find_session(ctx, s)?;
                if !t.contains(&p) {
                    t.push(p);
                }
            }
            t
        }
        Some(days) if !(days.is_finite() && days >= 0.0) => {
            return Err(CliError::Usage(format!("--older-than {days}: give a number of days, 0 or more")));
        }
        Some(days) => {
            let scope = folder::scope(ctx, &a.scope)?;
            folder::require(&scope)?;
            let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_millis() as f64);
            let cutoff = now - days * 86_400_000.0;
            let mut listed = folder::list(ctx, &scope);
            listed.retain(|s| s.modified < cutoff);
            listed.into_iter().map(|s| s.path).collect()
        }
    };
    let mut report = ArchiveReport {
        dry_run: a.dry_run,
        archived: Vec::new(),
        refused: Vec::new(),
        bytes_before: 0,
        bytes_after: 0,
        ratio: None,
    };
    let mut folders = Vec::new();
    let label = if a.dry_run { "" } else { "archiving" };
    let results = work::map_all(&targets, ctx.io_jobs, label, |src| -> Result<(u64, Option<u64>), String> {
        folder::session_id(src)?;
        let size = fs::metadata(src).map_err(|e| e.to_string())?.len();
        let dest = archive_path(ctx, src);
        if a.dry_run {
            // What the real run would refuse (archive_one's checks), without writing.
            if let Some(why) = held::why_held(src) {
                return Err(format!("in use: {why}"));
            }
            if fs::symlink_metadata(&dest).is_ok() {
                return Err(format!("{} exists already", dest.display()));
            }
            return Ok((size, None));
        }
        archive::archive_one(src, &dest).map(|len| (size, Some(len)))
    });
    for (i, r) in results.into_iter().enumerate() {
        {
            let src = &targets[i];
            let dest = archive_path(ctx, src);
            match r {
                Ok((before, after)) => {
                    report.bytes_before += before;
                    report.bytes_after += after.unwrap_or(0);
                    if let Some(d) = src.parent() {
                        folders.push(d.to_path_buf());
                    }
                    report.archived.push(Moved {
                        path: src.display().to_string(),
                        archive: dest.display().to_string(),
                        bytes_before: before,
                        bytes_after: after,
                    });
                }
                Err(reason) => report.refused.push(Refused { path: src.display().to_string(), reason }),
            }
        }
    }
    if !a.dry_run {
        archive::sync_folders(&folders);
        folder::refresh_index(ctx, &folders);
        report.ratio = ratio(report.bytes_before, report.bytes_after);
    }
    if a.json {
        writeln!(out, "{}", jout::to_string(&report))?;
    } else {
        for m in &report.archived {
            let sizes = match m.bytes_after {
                Some(after) => format!(" ({} → {})", fmt::size(m.bytes_before), fmt::size(after)),
                None => format!(" ({})", fmt::size(m.bytes_before)),
            };
            let verb = if a.dry_run { "would archive " } else { "archived " };
            let room = ctx.width.saturating_sub(verb.len() + fmt::width(&sizes)).max(16);
            writeln!(out, "{verb}{}{sizes}", fmt::trunc_left(&ctx.shown(&m.path), room))?;
        }
        let n = fmt::count(report.archived.len() as u64, "session", "sessions");
        let into = ctx.shown(&archive::archive_root(ctx).display().to_string());
        if a.dry_run {
            let l = format!("would archive {n} ({}) into {into}/ (dry run)", fmt::size(report.bytes_before));
            writeln!(out, "{}", fmt::fit(&l, ctx.width))?;
        } else {
            let r = report.ratio.map_or("-".into(), |r| format!("{r}x"));
            let l = format!(
                "archived {n} into {into}/: {} → {} (ratio {r})",
                fmt::size(report.bytes_before),
                fmt::size(report.bytes_after)
            );
            writeln!(out, "{}", fmt::fit(&l, ctx.width))?;
        }
    }
    let not = if a.dry_run { "a real run would refuse it; not archived" } else { "not archived" };
    for r in &report.refused {
        eprintln!("pi-sessions: {}: {}; {not}", ctx.shown(&r.path), r.reason);
    }
    Ok(if report.refused.is_empty() { 0 } else { 1 })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Restored {
    archive: String,
    path: String,
    bytes: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RestoreReport {
    dry_run: bool,
    restored: Vec<Restored>,
    refused: Vec<Refused>,
}

pub fn restore(ctx: &Ctx, a: &RestoreArgs, out: Out) -> Result<i32, CliError> {
    if a.sessions.is_empty() && !a.all {
        return Err(CliError::Usage("restore needs archived sessions to restore or --all".into()));
    }
    let targets: Vec<PathBuf> = if a.all {
        let folder = a.cwd.as_deref().map(|c| paths::encode_cwd(&paths::resolve(c, &ctx.cwd)));
        archive::archived_files(ctx, folder.as_deref())
    } else {
        let all = archive::archived_files(ctx, None);
        let mut t = Vec::new();
        for s in &a.sessions {
            let p = archive::find_archived(ctx, s, &all)?;
            if !t.contains(&p) {
                t.push(p);
            }
        }
        t
    };
    let mut report = RestoreReport { dry_run: a.dry_run, restored: Vec::new(), refused: Vec::new() };
    let mut folders = Vec::new();
    let label = if a.dry_run { "" } else { "restoring" };
    let results = work::map_all(&targets, ctx.io_jobs, label, |zst| {
        let dest = restored_path(ctx, zst);
        if a.dry_run {
            return if fs::symlink_metadata(&dest).is_ok() {
                Err(format!("{} exists; a real run would not overwrite it", dest.display()))
            } else {
                Ok(None)
            };
        }
        archive::restore_one(zst, &dest).map(Some)
    });
    for (i, r) in results.into_iter().enumerate() {
        {
            let zst = &targets[i];
            let dest = restored_path(ctx, zst);
            match r {
                Ok(bytes) => {
                    if let Some(d) = dest.parent() {
                        folders.push(d.to_path_buf());
                    }
                    report.restored.push(Restored {
                        archive: zst.display().to_string(),
                        path: dest.display().to_string(),
                        bytes,
                    });
                }
                Err(reason) => report.refused.push(Refused { path: zst.display().to_string(), reason }),
            }
        }
    }
    // The listing index needs nothing: rows are keyed by file state, and a restored file (a new
    // inode) is scanned at its next listing.
    let archive_folders: Vec<PathBuf> = targets.iter().filter_map(|z| z.parent().map(Path::to_path_buf)).collect();
    archive::sync_folders(&archive_folders);
    drop(folders);
    if a.json {
        writeln!(out, "{}", jout::to_string(&report))?;
    } else {
        let verb = if a.dry_run { "would restore " } else { "restored " };
        for r in &report.restored {
            // The path it goes back to (relative to the session folder), cut from the left.
            let size = r.bytes.map(|b| format!(" ({})", fmt::size(b))).unwrap_or_default();
            let room = ctx.width.saturating_sub(verb.len() + fmt::width(&size)).max(16);
            writeln!(out, "{verb}{}{size}", fmt::trunc_left(&ctx.shown(&r.path), room))?;
        }
    }
    if report.restored.is_empty() && report.refused.is_empty() {
        eprintln!("pi-sessions: no archived sessions in {}", archive::archive_root(ctx).display());
        return Ok(1);
    }
    for r in &report.refused {
        eprintln!("pi-sessions: {}: {}; not restored", ctx.shown(&r.path), r.reason);
    }
    Ok(if report.refused.is_empty() { 0 } else { 1 })
}
