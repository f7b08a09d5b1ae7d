//! `stats`: sessions, messages, tokens and cost, by model and by day.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use pi_session_core::blocks::{Blocks, each_line};
use pi_session_core::entry::{EntryType, Role, Skeleton};
use pi_session_core::header;

use super::args::StatsArgs;
use super::fmt;
use super::fmt::Counts;
use serde::Serialize;
use serde_json::value::RawValue;

use super::ctx::{CliError, Ctx, Out};
use super::folder;
use super::jout;
use super::jv::J;
use super::session::{self, ModelJson, Usage, UsageFields, UsageJson};

#[derive(Default)]
struct Day {
    sessions: u64,
    messages: u64,
    usage: Usage,
}

/// `stats --json` (docs/cli.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsJson<'a> {
    sessions: u64,
    messages: u64,
    by_role: &'a Counts,
    usage: UsageJson,
    by_model: Box<RawValue>,
    by_day: Box<RawValue>,
}

#[derive(Serialize)]
struct DayJson<'a> {
    day: &'a str,
    sessions: u64,
    messages: u64,
    records: u64,
    #[serde(flatten)]
    fields: UsageFields,
}

#[derive(Default)]
struct Acc {
    sessions: u64,
    messages: u64,
    by_role: Counts,
    usage: Usage,
    by_model: BTreeMap<(String, String), Usage>,
    by_day: BTreeMap<String, Day>,
}

impl Acc {
    fn merge(&mut self, o: Acc) {
        self.sessions += o.sessions;
        self.messages += o.messages;
        for (k, n) in o.by_role.0 {
            self.by_role.add(&k, n);
        }
        self.usage.add(&o.usage);
        for (k, u) in o.by_model {
            self.by_model.entry(k).or_default().add(&u);
        }
        for (k, d) in o.by_day {
            let e = self.by_day.entry(k).or_default();
            e.sessions += d.sessions;
            e.messages += d.messages;
            e.usage.add(&d.usage);
        }
    }
}

fn role_label(role: Role, j: impl FnOnce() -> String) -> String {
    match role {
        Role::User => "user".into(),
        Role::Assistant => "assistant".into(),
        Role::ToolResult => "toolResult".into(),
        Role::System => "system".into(),
        Role::Custom => "custom".into(),
        Role::HookMessage => "hookMessage".into(),
        Role::NoMessage => "(no message)".into(),
        Role::Other => j(),
    }
}

fn scan_file(path: &Path, cwd_filter: Option<&Path>, cwd: &Path) -> Option<Acc> {
    let mut blocks = Blocks::open(path, 1 << 20).ok()?;
    let mut acc = Acc::default();
    let mut header: Option<bool> = None;
    let mut days: BTreeSet<String> = BTreeSet::new();
    let mut unique = 0u64;
    let mut fail = false;
    while let Some((_, block)) = blocks.next_block().ok()? {
        each_line(block, |raw| {
            let text = String::from_utf8_lossy(raw);
            let line = text.as_bytes();
            let Some(sk) = Skeleton::parse_line(line, &mut unique) else { return true };
            if header.is_none() {
                let ok = header::is_header(&sk);
                header = Some(ok);
                if ok {
                    if let Some(want) = cwd_filter {
                        let c = J::parse(line).and_then(|h| h.get("cwd")).and_then(|c| c.str()).map(|c| c.into_owned());
                        if !folder::cwd_matches(c.as_deref(), want, cwd) {
                            fail = true;
                            return false;
                        }
                    }
                    return true;
                }
                fail = true;
                return false;
            }
            let needs_json = sk.ty == EntryType::Usage
                || (sk.ty == EntryType::Message && matches!(sk.role, Role::Assistant | Role::Other))
                || sk.time.is_none();
            let j = if needs_json { J::parse(line) } else { None };
            let time = sk.time.unwrap_or_else(|| fmt::date_value(j.and_then(|j| j.get("timestamp"))));
            let day = fmt::day(time).unwrap_or_else(|| "unknown".into());
            if sk.ty == EntryType::Message {
                acc.messages += 1;
                let role = role_label(sk.role, || j.map_or("(none)".into(), |j| session::role_name(j.get("message"))));
                acc.by_role.add(&role, 1);
                acc.by_day.entry(day.clone()).or_default().messages += 1;
                days.insert(day.clone());
            }
            if let Some(j) = j
                && let Some((u, provider, model, _)) = session::entry_usage(sk.ty, sk.role, &j)
            {
                acc.usage.add(&u);
                acc.by_model.entry((provider, model)).or_default().add(&u);
                acc.by_day.entry(day.clone()).or_default().usage.add(&u);
                days.insert(day);
            }
            true
        });
        if fail {
            return None;
        }
    }
    if header != Some(true) {
        return None;
    }
    acc.sessions = 1;
    for d in days {
        acc.by_day.entry(d).or_default().sessions += 1;
    }
    Some(acc)
}

pub fn run(ctx: &Ctx, a: &StatsArgs, out: Out) -> Result<i32, CliError> {
    let scope = folder::scope(ctx, &a.scope)?;
    folder::require(&scope)?;
    let mut files = folder::files(&scope);
    // Largest first spreads the work evenly over the threads.
    files.sort_by_cached_key(|f| std::cmp::Reverse(std::fs::metadata(f).map_or(0, |m| m.len())));
    let results = super::work::map(&files, ctx.jobs, "reading", |f| scan_file(f, scope.cwd_filter(), &ctx.cwd));
    let mut acc = Acc::default();
    for r in results.into_iter().flatten() {
        acc.merge(r);
    }
    // Nothing found is exit 1, with the (empty) totals still shown.
    let found = if acc.sessions == 0 { 1 } else { 0 };
    let mut models: Vec<(&(String, String), &Usage)> = acc.by_model.iter().collect();
    models.sort_by(|a, b| b.1.cost.total_cmp(&a.1.cost).then_with(|| b.1.records.cmp(&a.1.records)));
    if a.json {
        let days = acc.by_day.iter().map(|(day, d)| DayJson {
            day,
            sessions: d.sessions,
            messages: d.messages,
            records: d.usage.records,
            fields: d.usage.fields(),
        });
        let doc = StatsJson {
            sessions: acc.sessions,
            messages: acc.messages,
            by_role: &acc.by_role,
            usage: acc.usage.json(),
            by_model: jout::lines(models.iter().map(|(k, u)| ModelJson::new(k, u)), false),
            by_day: jout::lines(days, false),
        };
        writeln!(out, "{}", jout::to_string(&doc))?;
        return Ok(found);
    }
    let paint = ctx.paint();
    let g = |v: f64| fmt::group(v.max(0.0) as u64);
    let mut o = String::new();
    o.push_str(&format!(
        "{} {}\n",
        paint.dim(&format!("{:<10}", "Scope")),
        fmt::trunc_left(&scope.describe(), ctx.width.saturating_sub(11).max(8))
    ));
    o.push_str(&format!("{} {}\n", paint.dim(&format!("{:<10}", "Sessions")), fmt::group(acc.sessions)));
    o.push_str(&format!(
        "{} {}\n",
        paint.dim(&format!("{:<10}", "Messages")),
        fmt::wrap(&format!("{} ({})", fmt::group(acc.messages), acc.by_role.human()), 11, ctx.width)
    ));
    let tokens = format!(
        "{} (input {}, output {}, cache read {}, cache write {})",
        g(acc.usage.total),
        g(acc.usage.input),
        g(acc.usage.output),
        g(acc.usage.cache_read),
        g(acc.usage.cache_write)
    );
    o.push_str(&format!("{} {}\n", paint.dim(&format!("{:<10}", "Tokens")), fmt::wrap(&tokens, 11, ctx.width)));
    o.push_str(&format!("{} {}\n", paint.dim(&format!("{:<10}", "Cost")), paint.green(&fmt::money(acc.usage.cost))));
    if !models.is_empty() {
        let rows: Vec<Vec<String>> = models
            .iter()
            .map(|((pr, m), u)| {
                vec![
                    format!("{pr}/{m}"),
                    fmt::group(u.records),
                    g(u.input),
                    g(u.output),
                    g(u.cache_read),
                    g(u.cache_write),
                    g(u.total),
                    fmt::money(u.cost),
                ]
            })
            .collect();
        let head = ["MODEL", "TURNS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "TOTAL", "COST"];
        // Narrow terminals lose the cache columns first, then turns, input and output.
        let lines = fmt::table(&head, &rows, 32, &[5, 4, 1, 2, 3], ctx.width);
        o.push('\n');
        push_table(&mut o, &lines, &paint);
    }
    if !acc.by_day.is_empty() {
        let rows: Vec<Vec<String>> = acc
            .by_day
            .iter()
            .map(|(day, d)| {
                let u = &d.usage;
                vec![
                    day.clone(),
                    fmt::group(d.sessions),
                    fmt::group(d.messages),
                    fmt::group(u.records),
                    g(u.input),
                    g(u.output),
                    g(u.total),
                    fmt::money(u.cost),
                ]
            })
            .collect();
        let head = ["DAY (UTC)", "SESSIONS", "MESSAGES", "TURNS", "INPUT", "OUTPUT", "TOTAL", "COST"];
        let lines = fmt::table(&head, &rows, 10, &[3, 4, 5, 2], ctx.width);
        o.push('\n');
        push_table(&mut o, &lines, &paint);
    }
    write!(out, "{o}")?;
    Ok(found)
}

/// A table's header (dimmed) and rows, a line each.
fn push_table(o: &mut String, lines: &[String], paint: &fmt::Paint) {
    for (i, l) in lines.iter().enumerate() {
        o.push_str(&if i == 0 { paint.dim(l) } else { l.clone() });
        o.push('\n');
    }
}
