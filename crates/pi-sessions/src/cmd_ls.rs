//! `ls`: sessions newest first, with the fields of pi's `SessionInfo`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;

use super::args::LsArgs;
use super::ctx::{CliError, Ctx, Out};
use super::folder::{self, short, short_len};
use super::{archive, fmt, jout, paths};

/// One `ls --json` element (docs/cli.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Row<'a> {
    id: Box<RawValue>,
    path: Cow<'a, str>,
    cwd: &'a str,
    name: Option<&'a str>,
    first_message: &'a str,
    message_count: u64,
    created: Option<String>,
    modified: Option<String>,
    size: u64,
    parent_session_path: Box<RawValue>,
}

pub fn run(ctx: &Ctx, a: &LsArgs, out: Out) -> Result<i32, CliError> {
    let scope = folder::scope(ctx, &a.scope)?;
    if !a.archived {
        folder::require(&scope)?;
    }
    let limit = super::args::limit(a.limit, a.old_limit);
    let mut sessions = if a.archived { archive::list(ctx, &scope) } else { folder::list(ctx, &scope) };
    // Nothing found is exit 1 (grep's contract); `--limit 0` found sessions and shows none.
    let found = if sessions.is_empty() { 1 } else { 0 };
    if let Some(n) = limit {
        sessions.truncate(n);
    }
    if a.json {
        let rows = sessions.iter().map(|s| Row {
            id: jout::raw(&s.id_raw),
            path: s.path.to_string_lossy(),
            cwd: &s.cwd,
            name: s.name.as_deref(),
            first_message: &s.first_message,
            message_count: s.message_count,
            created: fmt::iso(s.created),
            modified: fmt::iso(s.modified),
            size: s.size,
            parent_session_path: s.parent_raw.as_deref().map_or_else(jout::null, jout::raw),
        });
        writeln!(out, "{}", jout::lines(rows, true))?;
        return Ok(found);
    }
    if found == 1 {
        eprintln!("pi-sessions: no sessions in {}", scope.describe());
        return Ok(1);
    }
    if sessions.is_empty() {
        return Ok(0);
    }
    let paint = ctx.paint();
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    let n = short_len(&ids);
    let all = scope.is_all();
    let home = paths::home();
    let cwd_of = |c: &str| -> String {
        let h = home.to_string_lossy();
        match c.strip_prefix(h.as_ref()) {
            Some(rest) if !h.is_empty() && h != "/" && (rest.is_empty() || rest.starts_with('/')) => format!("~{rest}"),
            _ => c.to_string(),
        }
    };
    // Columns: time, messages, size, id (fixed), then the cwd with --all (its longest, at most
    // 40, and less when the terminal is narrow, leaving the title at least 20), then the title.
    let base = 16 + 2 + 6 + 2 + 7 + 2 + n + 2;
    let cwd_w = if all {
        let longest = sessions.iter().map(|s| fmt::width(&cwd_of(&s.cwd))).max().unwrap_or(3).max(3);
        longest.min(40).min(ctx.width.saturating_sub(base + 2 + 20).max(8))
    } else {
        0
    };
    let mut head = format!("{:<16}  {:>6}  {:>7}  {:<n$}", "MODIFIED (UTC)", "MSGS", "SIZE", "ID");
    if all {
        head.push_str(&format!("  {:<cwd_w$}", "CWD"));
    }
    head.push_str("  TITLE");
    writeln!(out, "{}", paint.dim(&fmt::fit(&head, ctx.width)))?;
    let fixed = 16 + 2 + 6 + 2 + 7 + 2 + n + 2 + if all { cwd_w + 2 } else { 0 };
    let room = ctx.width.saturating_sub(fixed).max(8);
    for s in &sessions {
        let mut line = format!(
            "{:<16}  {:>6}  {:>7}  {}",
            fmt::short_time(s.modified),
            s.message_count,
            fmt::size(s.size),
            paint.cyan(&fmt::pad_right(&short(&s.id, n), n))
        );
        if all {
            line.push_str(&format!("  {}", fmt::pad_right(&fmt::trunc_left(&cwd_of(&s.cwd), cwd_w), cwd_w)));
        }
        let title = match &s.name {
            Some(name) => paint.bold(&fmt::one_line_trunc(name, room)),
            None => fmt::one_line_trunc(&s.first_message, room),
        };
        line.push_str("  ");
        line.push_str(&title);
        writeln!(out, "{}", fmt::fit(&line, ctx.width))?;
    }
    Ok(0)
}
