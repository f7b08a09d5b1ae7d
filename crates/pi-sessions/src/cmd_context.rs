//! `context`: the messages pi would send to the model (`buildSessionContext` on the active
//! leaf), written from the raw JSON of the file wherever pi passes values through.

use std::borrow::Cow;

use pi_session_core::entry::{EntryType, Key};
use pi_session_core::projection;

use super::args::ContextArgs;
use super::ctx::{CliError, Ctx, Out};
use super::fmt;
use super::folder;
use super::jv::J;
use super::session::{self, Block, Session};

/// One context message: its JSON text and the entry it came from.
pub struct Msg {
    pub json: String,
    pub entry: u32,
}

pub struct Projection {
    pub messages: Vec<Msg>,
    pub thinking_level: String,
    /// (provider, model) raw JSON values.
    pub model: Option<(String, String)>,
}

/// `buildSessionProjection(getEntries(), leafId, byId)` for a loaded session.
pub fn project(s: &Session) -> Result<Projection, CliError> {
    let leaf_key = s.leaf().map_or(Key::Null, |l| s.tree.get(l).id.clone());
    let plan = s.tree.context_plan(&leaf_key).map_err(|e| CliError::Fail(format!("{}: {e}", s.path.display())))?;
    let Ok(plan) = plan else {
        return Err(CliError::Fail(format!(
            "{}: a message entry on the active path has no `message` (pi fails to build this context too)",
            s.path.display()
        )));
    };
    let mut messages = Vec::new();
    for (pos, edit, silent) in plan.entries {
        if silent {
            continue;
        }
        let line = s.line(pos);
        let time = fmt::date_value(line.j().get("timestamp"));
        let hook_is_custom = s.version < session::CURRENT_VERSION;
        let mut msgs = projection::entry_messages(s.tree.get(pos).ty, &line, time, hook_is_custom);
        if let Some(e) = edit {
            msgs = projection::apply_edit(msgs, &s.line(e));
        }
        messages.extend(msgs.into_iter().map(|m| Msg { json: m.json, entry: pos }));
    }
    let thinking_level = match plan.thinking {
        Some(p) => s
            .line(p)
            .j()
            .get("thinkingLevel")
            .map(|v| v.str().map(Cow::into_owned).unwrap_or_else(|| v.raw_str().into_owned()))
            .unwrap_or_default(),
        None => "off".into(),
    };
    let raw = |v: Option<J>| v.map_or("null".to_string(), |v| v.raw_str().into_owned());
    let model = plan.model.map(|p| {
        let line = s.line(p);
        let j = line.j();
        if s.tree.get(p).ty == EntryType::ModelChange {
            let [pr, m] = j.pick(["provider", "modelId"]);
            (raw(pr), raw(m))
        } else {
            let m = j.get("message");
            let [pr, mo] = m.map_or([None, None], |m| m.pick(["provider", "model"]));
            (raw(pr), raw(mo))
        }
    });
    Ok(Projection { messages, thinking_level, model })
}

pub fn run(ctx: &Ctx, a: &ContextArgs, out: Out) -> Result<i32, CliError> {
    let path = folder::find_session(ctx, &a.session)?;
    let s = Session::load(&path)?;
    let proj = project(&s)?;
    if a.json {
        let mut o = String::with_capacity(proj.messages.iter().map(|m| m.json.len() + 2).sum::<usize>() + 4);
        o.push('[');
        for (i, m) in proj.messages.iter().enumerate() {
            o.push_str(if i == 0 { "\n" } else { ",\n" });
            o.push_str(&m.json);
        }
        o.push_str(if proj.messages.is_empty() { "]\n" } else { "\n]\n" });
        out.write_all(o.as_bytes())?;
        return Ok(0);
    }
    let paint = ctx.paint();
    let full = a.full;
    let chars: usize = proj.messages.iter().map(|m| m.json.len()).sum();
    let model = proj.model.as_ref().map_or("-".into(), |(pr, m)| {
        let d = |x: &str| {
            J::parse(x.as_bytes()).and_then(|j| j.str().map(Cow::into_owned)).unwrap_or_else(|| x.to_string())
        };
        format!("{}/{}", d(pr), d(m))
    });
    let head = format!(
        "{} {}, model {}, thinking {}, ~{} tokens (JSON bytes / 4)",
        paint.bold(&s.id()),
        fmt::count(proj.messages.len() as u64, "message", "messages"),
        model,
        proj.thinking_level,
        fmt::group((chars / 4) as u64)
    );
    let mut o = fmt::wrap(&head, 0, ctx.width);
    o.push('\n');
    for (i, m) in proj.messages.iter().enumerate() {
        let Some(j) = J::parse(m.json.as_bytes()) else { continue };
        let role = session::role_name(Some(j));
        let time = fmt::date_value(j.get("timestamp"));
        o.push_str(&format!(
            "\n{} {} {}{}\n",
            paint.dim(&format!("── {}.", i + 1)),
            paint.bold(&role),
            paint.dim(&format!("entry {}", s.entry_id(m.entry))),
            if time.is_nan() { String::new() } else { paint.dim(&format!(" · {}", fmt::short_time(time))) }
        ));
        let body = render_message(&j, &role);
        // The short view cuts each line at the width; --full prints the text as it is.
        let width = if full { usize::MAX } else { ctx.width.saturating_sub(3).max(20) };
        o.push_str(&indent(&if full { body } else { shorten(&body, 12, 1200) }, "   ", width));
    }
    write!(out, "{o}")?;
    Ok(0)
}

/// Plain text of a context message for reading.
pub fn render_message(j: &J, role: &str) -> String {
    let st = |v: Option<J>| v.and_then(|v| v.str()).map(Cow::into_owned).unwrap_or_default();
    match role {
        "compactionSummary" | "branchSummary" => st(j.get("summary")),
        "bashExecution" => format!("$ {}\n{}", st(j.get("command")), st(j.get("output"))),
        _ => {
            let mut parts = Vec::new();
            if role == "toolResult" {
                parts.push(format!("[{}]", st(j.get("toolName"))));
            }
            for b in session::blocks(j.get("content")) {
                match b {
                    Block::Text(t) => parts.push(t.into_owned()),
                    Block::Thinking(t) => parts.push(format!("(thinking) {}", fmt::one_line_trunc(&t, 200))),
                    Block::ToolCall { name, args } => {
                        parts.push(format!("→ {name} {}", args.map(|a| a.raw_str().into_owned()).unwrap_or_default()));
                    }
                    Block::Image(m) => parts.push(format!("[{m}]")),
                    Block::Other(t) => parts.push(format!("[{t}]")),
                }
            }
            parts.join("\n")
        }
    }
}

fn shorten(s: &str, max_lines: usize, max_chars: usize) -> String {
    let mut out = String::new();
    let total = s.lines().count();
    for (n, l) in s.lines().enumerate() {
        if n == max_lines || out.len() + l.len() > max_chars {
            let cut = fmt::trunc(l, max_chars.saturating_sub(out.len()).min(200));
            if n < max_lines && !cut.is_empty() {
                out.push_str(&cut);
                out.push('\n');
            }
            out.push_str(&format!("… ({})\n", fmt::count((total - n) as u64, "more line", "more lines")));
            return out;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

fn indent(s: &str, pad: &str, width: usize) -> String {
    let mut o = String::with_capacity(s.len() + 64);
    for l in s.lines() {
        o.push_str(pad);
        if width == usize::MAX {
            o.push_str(l);
        } else {
            o.push_str(&fmt::trunc(l, width));
        }
        o.push('\n');
    }
    o
}
