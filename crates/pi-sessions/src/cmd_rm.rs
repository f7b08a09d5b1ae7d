//! `rm`: sessions to the OS trash (the `trash` crate: the freedesktop.org trash on Linux, the
//! Finder's on macOS, the Recycle Bin on Windows), or deleted with `--permanent`.

use std::fs;

use serde::Serialize;

use super::args::RmArgs;
use super::ctx::{CliError, Ctx, Out};
use super::folder::{self, refresh_index, session_id};
use super::{held, jout, safe};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Done {
    path: String,
    id: Option<String>,
    /// `trash` or `deleted`.
    how: &'static str,
}

#[derive(Serialize)]
struct Refused {
    path: String,
    reason: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    dry_run: bool,
    removed: Vec<Done>,
    refused: Vec<Refused>,
}

pub fn run(ctx: &Ctx, a: &RmArgs, out: Out) -> Result<i32, CliError> {
    // Every name must resolve before anything is removed.
    let mut targets = Vec::new();
    for s in &a.sessions {
        let p = folder::find_session(ctx, s)?;
        if !targets.contains(&p) {
            targets.push(p);
        }
    }
    let mut report = Report { dry_run: a.dry_run, removed: Vec::new(), refused: Vec::new() };
    let mut folders = Vec::new();
    for path in targets {
        let shown = path.display().to_string();
        let id = match session_id(&path) {
            Ok(id) => id,
            Err(reason) => {
                report.refused.push(Refused { path: shown, reason });
                continue;
            }
        };
        if let Some(why) = held::why_held(&path) {
            report.refused.push(Refused { path: shown, reason: format!("in use: {why}") });
            continue;
        }
        let done = if a.dry_run {
            Ok(())
        } else if a.permanent {
            safe::fault("cli.unlink")
                .and_then(|()| fs::remove_file(&path))
                .map(|()| safe::sync_dir(&path))
                .map_err(|e| e.to_string())
        } else {
            trash::delete(&path).map_err(|e| format!("cannot move it to the trash ({e}); --permanent deletes it"))
        };
        match done {
            Ok(()) => {
                if let Some(d) = path.parent() {
                    folders.push(d.to_path_buf());
                }
                report.removed.push(Done {
                    path: shown,
                    id: Some(id),
                    how: if a.permanent { "deleted" } else { "trash" },
                });
            }
            Err(reason) => report.refused.push(Refused { path: shown, reason }),
        }
    }
    if !a.dry_run {
        refresh_index(ctx, &folders);
    }
    if a.json {
        writeln!(out, "{}", jout::to_string(&report))?;
    } else {
        let verb = match (a.dry_run, a.permanent) {
            (true, true) => "would delete",
            (true, false) => "would move to the trash",
            (false, true) => "deleted",
            (false, false) => "moved to the trash",
        };
        for d in &report.removed {
            writeln!(out, "{verb}: {}", ctx.shown(&d.path))?;
        }
    }
    let not = if a.dry_run { "a real run would refuse it; not removed" } else { "not removed" };
    for r in &report.refused {
        eprintln!("pi-sessions: {}: {}; {not}", ctx.shown(&r.path), r.reason);
    }
    Ok(if report.refused.is_empty() { 0 } else { 1 })
}
