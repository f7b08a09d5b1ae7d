//! `tree`: the entry tree, children under parents, linear runs kept flat.

use std::borrow::Cow;

use pi_session_core::entry::{EntryType, Key};

use super::args::TreeArgs;
use super::ctx::{CliError, Ctx, Out};
use super::fmt::{self, Paint};
use super::folder;
use super::jv::J;
use super::session::{self, Block, Session, key_text};

/// A one-line description of an entry: (kind, detail).
pub fn describe(s: &Session, pos: u32) -> (String, String) {
    let sk = s.tree.get(pos);
    let line = s.line(pos);
    let j = line.j();
    let st = |v: Option<J>| v.and_then(|v| v.str()).map(Cow::into_owned).unwrap_or_default();
    match sk.ty {
        EntryType::Message => {
            let m = j.get("message");
            let role = session::role_name(m);
            let Some(m) = m else { return (role, String::new()) };
            let [content, tool, command, custom_type] = m.pick(["content", "toolName", "command", "customType"]);
            let detail = match role.as_str() {
                "toolResult" => format!("{}: {}", st(tool), session::text_of(content)),
                "bashExecution" => format!("$ {}", st(command)),
                "custom" => format!("{}: {}", st(custom_type), session::text_of(content)),
                _ => summarize_blocks(&session::blocks(content)),
            };
            (role, detail)
        }
        EntryType::ModelChange => ("model".into(), format!("{}/{}", st(j.get("provider")), st(j.get("modelId")))),
        EntryType::ThinkingLevelChange => ("thinking".into(), st(j.get("thinkingLevel"))),
        EntryType::Compaction => {
            let [tb, summary] = j.pick(["tokensBefore", "summary"]);
            let tb = tb.and_then(|t| t.num()).map_or("?".into(), |t| fmt::group(t.max(0.0) as u64));
            ("compaction".into(), format!("{tb} tokens → {}", st(summary)))
        }
        EntryType::BranchSummary => ("branch_summary".into(), st(j.get("summary"))),
        EntryType::Custom => ("custom".into(), st(j.get("customType"))),
        EntryType::CustomMessage => {
            let [ct, content] = j.pick(["customType", "content"]);
            ("custom_message".into(), format!("{}: {}", st(ct), session::text_of(content)))
        }
        EntryType::ContextEdit => {
            let r = j.get("replacement");
            let what = match r {
                Some(r) if r.is_null() => "(removed)".to_string(),
                Some(r) => session::text_of(r.get("content")),
                None => String::new(),
            };
            ("context_edit".into(), format!("{} ← {what}", key_text(&sk.target)))
        }
        EntryType::Label => {
            let l = st(j.get("label"));
            let t = key_text(&sk.target);
            ("label".into(), if sk.label_truthy { format!("{t} = {l}") } else { format!("{t} cleared") })
        }
        EntryType::SessionInfo => ("session_info".into(), st(j.get("name"))),
        EntryType::Usage => {
            let [kind, provider, model, usage] = j.pick(["kind", "provider", "model", "usage"]);
            let total = usage.map(|u| session::Usage::from_json(u).total).unwrap_or(0.0);
            ("usage".into(), format!("{} {}/{} {} tokens", st(kind), st(provider), st(model), fmt::group(total as u64)))
        }
        EntryType::Session => ("session".into(), String::new()),
        EntryType::Other => (session::type_name(sk.ty, &j), String::new()),
    }
}

/// Text of content blocks, or the tool calls when there is no text.
pub fn summarize_blocks(blocks: &[Block]) -> String {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut thinking = false;
    for b in blocks {
        match b {
            Block::Text(t) => {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(t);
            }
            Block::ToolCall { name, args } => {
                let a = args.map(|a| fmt::one_line_trunc(&a.raw_str(), 60)).unwrap_or_default();
                calls.push(format!("{name}({a})"));
            }
            Block::Thinking(_) => thinking = true,
            Block::Image(m) => text.push_str(&format!("[{m}]")),
            Block::Other(_) => {}
        }
    }
    if !calls.is_empty() {
        let c = format!("→ {}", calls.join(", "));
        if text.is_empty() { c } else { format!("{text} {c}") }
    } else if text.is_empty() && thinking {
        "(thinking)".into()
    } else {
        text
    }
}

fn paint_kind(paint: &Paint, kind: &str) -> String {
    match kind {
        "user" => paint.green(kind),
        "assistant" => paint.blue(kind),
        "toolResult" | "bashExecution" => paint.dim(kind),
        "compaction" | "branch_summary" | "custom_message" | "custom" => paint.yellow(kind),
        "label" | "session_info" => paint.magenta(kind),
        _ => kind.to_string(),
    }
}

pub fn run(ctx: &Ctx, a: &TreeArgs, out: Out) -> Result<i32, CliError> {
    let width = a.width.unwrap_or(ctx.width).max(40);
    let path = folder::find_session(ctx, &a.session)?;
    let s = Session::load(&path)?;
    let paint = ctx.paint();
    let n = s.tree.len();
    let leaf = s.leaf();
    let active = s.active_path().unwrap_or_default();
    let mut on_path = vec![false; n];
    for &a in &active {
        on_path[a as usize] = true;
    }

    let line_for = |pos: u32, prefix: &str, note: &str| -> String {
        let sk = s.tree.get(pos);
        let (kind, detail) = describe(&s, pos);
        let marker = if on_path[pos as usize] { paint.bold("*") } else { " ".into() };
        let id = s.entry_id(pos);
        let label =
            s.tree.label(&sk.id).and_then(|l| s.line(l).j().get("label").and_then(|l| l.str().map(Cow::into_owned)));
        let mut head = format!("{prefix}{id} {kind}");
        let mut shown = format!("{marker} {prefix}{} {}", paint.cyan(&id), paint_kind(&paint, &kind));
        if let Some(l) = &label {
            head.push_str(&format!(" [{l}]"));
            shown.push_str(&format!(" {}", paint.magenta(&format!("[{l}]"))));
        }
        let mut tail = String::new();
        if !note.is_empty() {
            tail.push_str(&format!("  ({note})"));
        }
        if Some(pos) == leaf {
            tail.push_str("  ← leaf");
        }
        let room = width.saturating_sub(2 + fmt::width(&head) + fmt::width(&tail) + 2);
        let d = if room >= 8 { fmt::one_line_trunc(&detail, room) } else { String::new() };
        if !d.is_empty() {
            shown.push_str(": ");
            shown.push_str(&if on_path[pos as usize] { d } else { paint.dim(&d) });
        }
        if !note.is_empty() {
            shown.push_str(&paint.red(&format!("  ({note})")));
        }
        if Some(pos) == leaf {
            shown.push_str(&paint.bold("  ← leaf"));
        }
        shown
    };

    // The lines to draw, in order: (entry, its prefix, its note).
    let mut rows: Vec<(u32, String, &str)> = Vec::new();
    let mut stray_at = None;
    if a.active {
        rows.extend(active.iter().map(|&pos| (pos, String::new(), "")));
    } else {
        tree_rows(&s, &mut rows, &mut stray_at);
    }
    if a.json {
        let items = rows.iter().map(|(pos, prefix, note)| {
            let sk = s.tree.get(*pos);
            let (kind, detail) = describe(&s, *pos);
            let label = s
                .tree
                .label(&sk.id)
                .and_then(|l| s.line(l).j().get("label").and_then(|l| l.str().map(Cow::into_owned)));
            TreeRow {
                id: s.entry_id(*pos),
                depth: prefix.chars().count() / 3,
                kind,
                label,
                active: on_path[*pos as usize],
                leaf: Some(*pos) == leaf,
                note: (!note.is_empty()).then_some(*note),
                text: fmt::one_line_trunc(&detail, 200),
            }
        });
        writeln!(out, "{}", super::jout::lines(items, true))?;
        return Ok(0);
    }
    let mut o = String::new();
    let title = format!("{} {}", s.id(), ctx.shown(&path.display().to_string()));
    o.push_str(&paint.bold(&fmt::trunc(&title, width)));
    o.push('\n');
    for (i, (pos, prefix, note)) in rows.iter().enumerate() {
        if stray_at == Some(i) {
            let n = rows.len() - i;
            let head =
                format!("{} in a parent cycle (unreachable from any root):", fmt::count(n as u64, "entry", "entries"));
            o.push_str(&paint.red(&fmt::trunc(&head, width)));
            o.push('\n');
        }
        o.push_str(&line_for(*pos, prefix, note));
        o.push('\n');
    }
    write!(out, "{o}")?;
    Ok(0)
}

/// One `tree --json` element (docs/cli.md).
#[derive(serde::Serialize)]
struct TreeRow<'a> {
    id: String,
    depth: usize,
    kind: String,
    label: Option<String>,
    active: bool,
    leaf: bool,
    note: Option<&'a str>,
    text: String,
}

/// Every entry in drawing order, with its prefix (`├─ `, `│  `…) and its note; `stray_at` is
/// where the entries in a parent cycle start, if any.
fn tree_rows(s: &Session, rows: &mut Vec<(u32, String, &'static str)>, stray_at: &mut Option<usize>) {
    let n = s.tree.len();
    // Parent links: `null` or itself → root; a parent that is not found → orphan root.
    // Not the core's `Tree::tree_links` on purpose: that one applies `getTree`'s nodeMap rules
    // (the last entry with an id owns it, duplicates vanish), while this view draws every
    // line and names what is wrong with it (duplicate id, orphan, self-parent, cycle).
    let entries = s.tree.entries();
    let mut parent: Vec<Option<u32>> = vec![None; n];
    let mut note: Vec<&'static str> = vec![""; n];
    for &pos in &entries {
        let sk = s.tree.get(pos);
        if sk.parent == Key::Null {
            continue;
        }
        if sk.parent.strict_eq(&sk.id) {
            note[pos as usize] = "parent is itself";
            continue;
        }
        match s.tree.lookup(&sk.parent) {
            Some(pp) => parent[pos as usize] = Some(pp),
            None if sk.parent == Key::Undefined => note[pos as usize] = "no parentId",
            None => note[pos as usize] = "orphan: parent not found",
        }
        if s.tree.lookup(&sk.id) != Some(pos) && !matches!(sk.id, Key::Unique(_)) {
            note[pos as usize] = "duplicate id";
        }
    }
    let time = |pos: u32| -> f64 {
        let t = s.tree.get(pos).time.unwrap_or_else(|| fmt::date_value(s.line(pos).j().get("timestamp")));
        if t.is_nan() { f64::INFINITY } else { t }
    };
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for &pos in &entries {
        match parent[pos as usize] {
            Some(pp) => children[pp as usize].push(pos),
            None => roots.push(pos),
        }
    }
    // Oldest child first, as `getTree` sorts, but with a total order: a time that is not a
    // date sorts last and ties keep file order. The facade's sort (`lib/tree.js`) must be V8's
    // with the reference's `a - b` comparator, whose NaN results make the order depend on the
    // sort algorithm; a drawing needs a stable one, so this one is the CLI's own.
    for c in children.iter_mut().filter(|c| c.len() > 1) {
        c.sort_by(|a, b| time(*a).total_cmp(&time(*b)));
    }

    let mut visited = vec![false; n];
    let draw = |start: u32, rows: &mut Vec<(u32, String, &'static str)>, visited: &mut Vec<bool>| {
        let mut stack: Vec<(u32, String, String)> = vec![(start, String::new(), String::new())];
        while let Some((pos, first, rest)) = stack.pop() {
            if visited[pos as usize] {
                continue;
            }
            visited[pos as usize] = true;
            rows.push((pos, first, note[pos as usize]));
            let kids: Vec<u32> = children[pos as usize].iter().copied().filter(|k| !visited[*k as usize]).collect();
            if kids.len() == 1 {
                stack.push((kids[0], rest.clone(), rest));
                continue;
            }
            for (i, &k) in kids.iter().enumerate().rev() {
                let last = i + 1 == kids.len();
                let f = format!("{rest}{}", if last { "└─ " } else { "├─ " });
                let r = format!("{rest}{}", if last { "   " } else { "│  " });
                stack.push((k, f, r));
            }
        }
    };
    for &r in &roots {
        draw(r, rows, &mut visited);
    }
    let stray: Vec<u32> = entries.iter().copied().filter(|p| !visited[*p as usize]).collect();
    if !stray.is_empty() {
        *stray_at = Some(rows.len());
        for pos in stray {
            if !visited[pos as usize] {
                draw(pos, rows, &mut visited);
            }
        }
    }
}
