//! `show`: one session's header, counts, token use, compactions, branch points and labels.

use std::borrow::Cow;
use std::collections::HashMap;

use pi_session_core::entry::EntryType;

use super::args::ShowArgs;
use super::fmt;
use serde::Serialize;
use serde_json::value::RawValue;

use super::ctx::{CliError, Ctx, Out};
use super::fmt::Counts;
use super::folder;
use super::jout;
use super::session::{self, ModelJson, Session, Usage, UsageJson, key_text};

/// `show --json` (docs/cli.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShowJson<'a> {
    id: String,
    path: Cow<'a, str>,
    name: Option<&'a str>,
    cwd: &'a str,
    version: f64,
    created: Option<String>,
    modified: Option<String>,
    parent_session_path: Box<RawValue>,
    size: u64,
    first_message: &'a str,
    message_count: u64,
    entry_count: u64,
    by_type: &'a Counts,
    by_role: &'a Counts,
    usage: UsageJson,
    by_model: Vec<ModelJson<'a>>,
    active_branch: ActiveJson<'a>,
    compactions: Vec<CompactionJson<'a>>,
    branch_points: Vec<BranchPointJson>,
    labels: Vec<LabelJson<'a>>,
    skipped_lines: u64,
    trailing_newline: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ActiveJson<'a> {
    leaf_id: Option<&'a str>,
    length: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompactionJson<'a> {
    id: &'a str,
    timestamp: Option<String>,
    tokens_before: Option<f64>,
    first_kept_entry_id: &'a str,
    retained_tail: Option<u64>,
    on_active_branch: bool,
}

#[derive(Serialize)]
struct BranchPointJson {
    id: String,
    children: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LabelJson<'a> {
    target_id: &'a str,
    label: &'a str,
}

struct Compaction {
    id: String,
    time: f64,
    tokens_before: Option<f64>,
    first_kept: String,
    retained_tail: Option<usize>,
    on_branch: bool,
}

pub fn run(ctx: &Ctx, a: &ShowArgs, out: Out) -> Result<i32, CliError> {
    let path = folder::find_session(ctx, &a.session)?;
    let s = Session::load(&path)?;
    let info = folder::info(&path);
    let header = s.line(0);
    let header = header.j();
    let [cwd, ts, parent] = header.pick(["cwd", "timestamp", "parentSession"]);

    let mut by_type = Counts::default();
    let mut by_role = Counts::default();
    let mut usage = Usage::default();
    let mut by_model: Vec<((String, String), Usage)> = Vec::new();
    let mut compactions = Vec::new();
    let active: Vec<u32> = s.active_path().unwrap_or_default();
    let on_branch: std::collections::HashSet<u32> = active.iter().copied().collect();
    let entries = s.tree.entries();
    for &pos in &entries {
        let sk = s.tree.get(pos);
        let line = s.line(pos);
        let j = line.j();
        by_type.add(&session::type_name(sk.ty, &j), 1);
        if sk.ty == EntryType::Message {
            by_role.add(&session::role_name(j.get("message")), 1);
        }
        if let Some((u, provider, model, _)) = session::entry_usage(sk.ty, sk.role, &j) {
            usage.add(&u);
            let key = (provider, model);
            match by_model.iter_mut().find(|(k, _)| *k == key) {
                Some((_, m)) => m.add(&u),
                None => by_model.push((key, u)),
            }
        }
        if sk.ty == EntryType::Compaction {
            let [tb, rt] = j.pick(["tokensBefore", "retainedTail"]);
            compactions.push(Compaction {
                id: s.entry_id(pos),
                time: fmt::date_value(j.get("timestamp")),
                tokens_before: tb.and_then(|t| t.num()),
                first_kept: key_text(&sk.target),
                retained_tail: rt.filter(|r| r.kind() == pi_session_core::json::Kind::Array).map(|r| r.items().len()),
                on_branch: on_branch.contains(&pos),
            });
        }
    }
    by_model.sort_by(|a, b| b.1.cost.total_cmp(&a.1.cost).then_with(|| b.1.records.cmp(&a.1.records)));

    // Branch points: nodes (an id's last entry) with more than one child.
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for &pos in &entries {
        let sk = s.tree.get(pos);
        if sk.parent.truthy()
            && !sk.parent.strict_eq(&sk.id)
            && let Some(parent) = s.tree.lookup(&sk.parent)
        {
            children.entry(parent).or_default().push(pos);
        }
    }
    let mut branch_points: Vec<(u32, Vec<u32>)> = children.into_iter().filter(|(_, c)| c.len() > 1).collect();
    branch_points.sort();
    let labels: Vec<(String, String)> = s
        .tree
        .labels()
        .into_iter()
        .map(|pos| {
            let sk = s.tree.get(pos);
            let label = s
                .line(pos)
                .j()
                .get("label")
                .map(|l| l.str().map(Cow::into_owned).unwrap_or_else(|| l.raw_str().into_owned()));
            (key_text(&sk.target), label.unwrap_or_default())
        })
        .collect();

    // Lines the loader skips (malformed or falsy), and the final newline.
    let skipped = s.physical.saturating_sub(s.kept()) as u64;
    let trailing_newline = s.ends_with_newline;
    let leaf = s.leaf().map(|l| s.entry_id(l));
    let name = s.name();
    let modified = info.as_ref().map_or(f64::NAN, |i| i.modified);
    let message_count = info.as_ref().map_or(0, |i| i.message_count);
    let first_message = info.as_ref().map(|i| i.first_message.clone()).unwrap_or_default();
    let created = fmt::date_value(ts);
    let cwd = cwd.and_then(|c| c.str()).map(Cow::into_owned).unwrap_or_default();

    if a.json {
        let doc = ShowJson {
            id: s.id(),
            path: path.to_string_lossy(),
            name: name.as_deref(),
            cwd: &cwd,
            version: s.version,
            created: fmt::iso(created),
            modified: fmt::iso(modified),
            parent_session_path: parent.map_or_else(jout::null, |p| jout::raw(&p.raw_str())),
            size: s.size,
            first_message: &first_message,
            message_count,
            entry_count: entries.len() as u64,
            by_type: &by_type,
            by_role: &by_role,
            usage: usage.json(),
            by_model: by_model.iter().map(|(k, u)| ModelJson::new(k, u)).collect(),
            active_branch: ActiveJson { leaf_id: leaf.as_deref(), length: active.len() as u64 },
            compactions: compactions
                .iter()
                .map(|c| CompactionJson {
                    id: &c.id,
                    timestamp: fmt::iso(c.time),
                    tokens_before: c.tokens_before,
                    first_kept_entry_id: &c.first_kept,
                    retained_tail: c.retained_tail.map(|n| n as u64),
                    on_active_branch: c.on_branch,
                })
                .collect(),
            branch_points: branch_points
                .iter()
                .map(|(pos, kids)| BranchPointJson {
                    id: s.entry_id(*pos),
                    children: kids.iter().map(|k| s.entry_id(*k)).collect(),
                })
                .collect(),
            labels: labels.iter().map(|(target_id, label)| LabelJson { target_id, label }).collect(),
            skipped_lines: skipped,
            trailing_newline,
        };
        writeln!(out, "{}", jout::to_string(&doc))?;
        return Ok(0);
    }

    let paint = ctx.paint();
    let row = |k: &str, v: String| format!("{} {v}", paint.dim(&format!("{k:<12}")));
    // A long value wraps under itself (13 columns in), at the width.
    let wrapped = |k: &str, v: String| row(k, fmt::wrap(&v, 13, ctx.width));
    let mut o = String::new();
    let mut line = |s: String| {
        o.push_str(&s);
        o.push('\n');
    };
    line(row("Session", paint.cyan(&fmt::trunc(&s.id(), ctx.width.saturating_sub(13).max(16)))));
    if let Some(n) = &name {
        line(row("Name", paint.bold(&fmt::one_line_trunc(n, ctx.width.saturating_sub(13).max(16)))));
    }
    let file_tail = format!(" ({}, {})", fmt::size(s.size), fmt::count(s.physical as u64, "line", "lines"));
    let file_room = ctx.width.saturating_sub(13 + fmt::width(&file_tail)).max(16);
    line(row("File", format!("{}{file_tail}", fmt::trunc_left(&ctx.shown(&path.display().to_string()), file_room))));
    line(row("Cwd", fmt::trunc_left(&cwd, ctx.width.saturating_sub(13).max(16))));
    let version = if s.version >= session::CURRENT_VERSION {
        jnum(s.version)
    } else {
        paint.yellow(&format!("{} (old: pi migrates it to 3 when opened)", jnum(s.version)))
    };
    line(row("Version", version));
    line(row("Created", fmt::iso(created).unwrap_or_else(|| "-".into())));
    line(row("Modified", fmt::iso(modified).unwrap_or_else(|| "-".into())));
    if let Some(p) = parent {
        let p = p.str().map(Cow::into_owned).unwrap_or_else(|| p.raw_str().into_owned());
        line(row("Parent", fmt::trunc_left(&ctx.shown(&p), ctx.width.saturating_sub(13).max(16))));
    }
    line(row("First msg", fmt::one_line_trunc(&first_message, ctx.width.saturating_sub(13).max(20))));
    line(String::new());
    line(wrapped("Entries", format!("{} ({})", fmt::group(entries.len() as u64), by_type.human())));
    line(wrapped("Messages", format!("{} ({})", fmt::group(message_count), by_role.human())));
    line(wrapped(
        "Active path",
        format!("{}, leaf {}", fmt::count(active.len() as u64, "entry", "entries"), leaf.as_deref().unwrap_or("-")),
    ));
    line(wrapped(
        "Tokens",
        format!(
            "{} total (input {}, output {}, cache read {}, cache write {})",
            fmt::group(usage.total as u64),
            fmt::group(usage.input as u64),
            fmt::group(usage.output as u64),
            fmt::group(usage.cache_read as u64),
            fmt::group(usage.cache_write as u64)
        ),
    ));
    line(row("Cost", paint.green(&fmt::money(usage.cost))));
    if !by_model.is_empty() {
        line(wrapped(
            "Models",
            by_model
                .iter()
                .map(|((pr, m), u)| {
                    format!("{}/{} ({}, {})", pr, m, fmt::count(u.records, "turn", "turns"), fmt::money(u.cost))
                })
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    if !compactions.is_empty() {
        line(String::new());
        line(paint.bold(&format!("Compactions ({})", compactions.len())));
        for c in &compactions {
            let mut l = format!(
                "  {}  {}  tokensBefore {}  firstKept {}",
                paint.cyan(&c.id),
                fmt::short_time(c.time),
                c.tokens_before.map_or("-".into(), |t| fmt::group(t.max(0.0) as u64)),
                c.first_kept
            );
            if let Some(n) = c.retained_tail {
                l.push_str(&format!("  retainedTail {n}"));
            }
            if !c.on_branch {
                l.push_str(&paint.dim("  (off the active path)"));
            }
            line(fmt::fit(&l, ctx.width));
        }
    }
    if !branch_points.is_empty() {
        line(String::new());
        line(paint.bold(&format!("Branch points ({})", branch_points.len())));
        for (pos, kids) in &branch_points {
            let ids: Vec<String> = kids.iter().map(|k| s.entry_id(*k)).collect();
            let l = format!(
                "  {}  {}: {}",
                paint.cyan(&s.entry_id(*pos)),
                fmt::count(kids.len() as u64, "child", "children"),
                ids.join(", ")
            );
            line(fmt::fit(&l, ctx.width));
        }
    }
    if !labels.is_empty() {
        line(String::new());
        line(paint.bold(&format!("Labels ({})", labels.len())));
        for (t, l) in &labels {
            line(fmt::fit(&format!("  {}  {}", paint.cyan(t), paint.magenta(l)), ctx.width));
        }
    }
    if skipped > 0 || !trailing_newline {
        line(String::new());
        let mut what = Vec::new();
        if skipped > 0 {
            what.push(fmt::count(skipped, "unparseable line", "unparseable lines"));
        }
        if !trailing_newline {
            what.push("no final newline".into());
        }
        let problems = format!("Problems: {} (`pi-sessions check FILE` lists them)", what.join(", "));
        line(paint.yellow(&fmt::wrap(&problems, 2, ctx.width)));
    }
    write!(out, "{o}")?;
    Ok(0)
}

fn jnum(v: f64) -> String {
    jout::num_text(v)
}
