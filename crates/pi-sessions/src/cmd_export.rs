//! `export`: a Markdown transcript or the raw JSON of a session.

use std::borrow::Cow;
use std::io::{self, Write};

use pi_session_core::entry::EntryType;

use super::args::ExportArgs;
use super::ctx::{CliError, Ctx, Out};
use super::fmt;
use super::folder;
use super::jout;
use super::jv::J;
use super::session::{self, Block, Session, key_text};

fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn code(text: &str, lang: &str) -> String {
    let f = fence(text);
    format!("{f}{lang}\n{}\n{f}\n", text.trim_end_matches('\n'))
}

fn quote(text: &str) -> String {
    text.lines().map(|l| if l.is_empty() { ">".to_string() } else { format!("> {l}") }).collect::<Vec<_>>().join("\n")
        + "\n"
}

fn details(summary: &str, body: &str) -> String {
    format!("<details><summary>{summary}</summary>\n\n{}\n</details>\n", body.trim_end())
}

fn blocks_md(blocks: Vec<Block>) -> String {
    let mut out = String::new();
    for b in blocks {
        match b {
            Block::Text(t) => {
                out.push_str(t.trim_end());
                out.push_str("\n\n");
            }
            Block::Thinking(t) if !t.trim().is_empty() => {
                out.push_str(&details("Thinking", &t));
                out.push('\n');
            }
            Block::Thinking(_) => {}
            Block::ToolCall { name, args } => {
                out.push_str(&format!("**Tool call:** `{name}`\n\n"));
                if let Some(a) = args {
                    out.push_str(&code(&jout::pretty(a), "json"));
                    out.push('\n');
                }
            }
            Block::Image(m) => out.push_str(&format!("*[image: {m}]*\n\n")),
            Block::Other(t) => out.push_str(&format!("*[{t} block]*\n\n")),
        }
    }
    out
}

fn entry_md(s: &Session, pos: u32) -> String {
    let sk = s.tree.get(pos);
    let line = s.line(pos);
    let j = line.j();
    let st = |v: Option<J>| v.and_then(|v| v.str()).map(Cow::into_owned).unwrap_or_default();
    let time = fmt::date_value(j.get("timestamp"));
    let when = if time.is_nan() { String::new() } else { format!(" · {}", fmt::short_time(time)) };
    match sk.ty {
        EntryType::Message => {
            let Some(m) = j.get("message") else { return String::new() };
            let role = session::role_name(Some(m));
            let [content, tool, is_error, command, output, exit_code, custom_type, model] =
                m.pick(["content", "toolName", "isError", "command", "output", "exitCode", "customType", "model"]);
            match role.as_str() {
                "user" => format!("## User{when}\n\n{}", blocks_md(session::blocks(content))),
                "assistant" => {
                    let model = st(model);
                    let model = if model.is_empty() { String::new() } else { format!(" ({model})") };
                    format!("## Assistant{model}{when}\n\n{}", blocks_md(session::blocks(content)))
                }
                "toolResult" => {
                    let err = if is_error.is_some_and(|e| e.truthy()) { " (error)" } else { "" };
                    let text = session::text_of(content);
                    let mut body = format!("### Tool result: `{}`{err}\n\n", st(tool));
                    if !text.is_empty() {
                        body.push_str(&code(&text, ""));
                        body.push('\n');
                    }
                    for b in session::blocks(content) {
                        if let Block::Image(m) = b {
                            body.push_str(&format!("*[image: {m}]*\n\n"));
                        }
                    }
                    body
                }
                "system" => {
                    format!("## System prompt{when}\n\n{}\n", details("System prompt", &session::text_of(content)))
                }
                "bashExecution" => {
                    let code_note = exit_code
                        .and_then(|c| c.num())
                        .filter(|c| *c != 0.0)
                        .map_or(String::new(), |c| format!(" (exit {c})"));
                    format!(
                        "## Bash{when}\n\n{}\n{}{code_note}\n",
                        code(&format!("$ {}", st(command)), "sh"),
                        code(&st(output), "")
                    )
                }
                "custom" => {
                    format!("## Custom message: {}{when}\n\n{}", st(custom_type), blocks_md(session::blocks(content)))
                }
                other => format!("## {other}{when}\n\n{}", blocks_md(session::blocks(content))),
            }
        }
        EntryType::Compaction => {
            let tb = j.get("tokensBefore").and_then(|t| t.num()).map_or("?".into(), |t| fmt::group(t.max(0.0) as u64));
            format!(
                "## Compaction{when}\n\n*{tb} tokens summarized; kept from entry {}*\n\n{}\n",
                key_text(&sk.target),
                quote(&st(j.get("summary")))
            )
        }
        EntryType::BranchSummary => format!("## Branch summary{when}\n\n{}\n", quote(&st(j.get("summary")))),
        EntryType::CustomMessage => {
            let [ct, content] = j.pick(["customType", "content"]);
            format!("## Custom message: {}{when}\n\n{}", st(ct), blocks_md(session::blocks(content)))
        }
        EntryType::ModelChange => format!("*Model: {}/{}*\n\n", st(j.get("provider")), st(j.get("modelId"))),
        EntryType::ThinkingLevelChange => format!("*Thinking level: {}*\n\n", st(j.get("thinkingLevel"))),
        EntryType::SessionInfo => format!("*Session name: {}*\n\n", st(j.get("name"))),
        EntryType::Label => {
            if sk.label_truthy {
                format!("*Label on {}: {}*\n\n", key_text(&sk.target), st(j.get("label")))
            } else {
                format!("*Label removed from {}*\n\n", key_text(&sk.target))
            }
        }
        EntryType::ContextEdit => {
            let r = j.get("replacement");
            let what = match r {
                Some(r) if r.is_null() => "removed from the context".to_string(),
                Some(r) => {
                    format!("replaced by: {}", fmt::one_line_trunc(&session::text_of(r.get("content")), 200))
                }
                None => "edited".into(),
            };
            format!("*Context edit: entry {} {what}*\n\n", key_text(&sk.target))
        }
        EntryType::Usage => {
            let [kind, provider, model, usage] = j.pick(["kind", "provider", "model", "usage"]);
            let u = usage.map(session::Usage::from_json).unwrap_or_default();
            format!(
                "*Usage ({}): {}/{}, {} tokens, {}*\n\n",
                st(kind),
                st(provider),
                st(model),
                fmt::group(u.total as u64),
                fmt::money(u.cost)
            )
        }
        EntryType::Custom => format!("*Custom entry: {}*\n\n", st(j.get("customType"))),
        EntryType::Session | EntryType::Other => String::new(),
    }
}

pub fn run(ctx: &Ctx, a: &ExportArgs, out: Out) -> Result<i32, CliError> {
    let format = a.format.clone();
    let path = folder::find_session(ctx, &a.session)?;
    let s = Session::load(&path)?;
    let positions = if a.branch { s.active_path()? } else { s.tree.entries() };
    if format == "json" {
        // Written as it is read: memory stays bounded, whatever the session's size.
        let mut o = io::BufWriter::with_capacity(1 << 20, out);
        o.write_all(b"{\"header\":")?;
        o.write_all(String::from_utf8_lossy(&s.line(0)).as_bytes())?;
        o.write_all(b",\"entries\":[")?;
        for (i, &pos) in positions.iter().enumerate() {
            o.write_all(if i == 0 { b"\n" as &[u8] } else { b",\n" })?;
            o.write_all(String::from_utf8_lossy(&s.line(pos)).as_bytes())?;
        }
        o.write_all(if positions.is_empty() { b"]}\n" as &[u8] } else { b"\n]}\n" })?;
        o.flush()?;
        return Ok(0);
    }
    let header = s.line(0);
    let header = header.j();
    let [cwd, ts] = header.pick(["cwd", "timestamp"]);
    let title = s.name().unwrap_or_else(|| s.id());
    let mut o = format!("# {}\n\n", fmt::one_line(&title));
    o.push_str(&format!("- Session: `{}`\n", s.id()));
    o.push_str(&format!("- Cwd: `{}`\n", cwd.and_then(|c| c.str()).unwrap_or_default()));
    if let Some(t) = fmt::iso(fmt::date_value(ts)) {
        o.push_str(&format!("- Created: {t}\n"));
    }
    o.push_str(&format!(
        "- Exported: {} ({})\n\n---\n\n",
        if a.branch { "active branch" } else { "all entries in file order" },
        fmt::count(positions.len() as u64, "entry", "entries")
    ));
    out.write_all(o.as_bytes())?;
    let mut prev: Option<u32> = None;
    for &pos in &positions {
        let mut chunk = String::new();
        if !a.branch {
            let sk = s.tree.get(pos);
            let parent = if sk.parent.truthy() { s.tree.lookup(&sk.parent) } else { None };
            if prev.is_some() && parent.is_some() && parent != prev {
                chunk.push_str(&format!("*↳ branch: continues from entry {}*\n\n", key_text(&sk.parent)));
            }
        }
        chunk.push_str(&entry_md(&s, pos));
        out.write_all(chunk.as_bytes())?;
        prev = Some(pos);
    }
    Ok(0)
}
