//! A session file loaded read-only for inspection: the core's line parse
//! (`store::parse_text`), its v1/v2 migration in memory (`migrate::in_memory`, never on
//! disk) and its tree index.

use std::borrow::Cow;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use pi_session_core::entry::{EntryType, Key, Role, Skeleton};
use pi_session_core::json::Kind;
use pi_session_core::lines::{LineStore, Span};
pub use pi_session_core::migrate::CURRENT_VERSION;
use pi_session_core::tree::Tree;
use pi_session_core::{header, migrate, store};

use serde::Serialize;

use super::ctx::CliError;
use super::jv::J;

pub struct Session {
    pub path: PathBuf,
    /// The file's bytes, as read.
    pub bytes: Vec<u8>,
    /// Where each kept line is by tree position (the header is position 0): a range of
    /// `bytes`, or the core's repaired copy of an invalid UTF-8 line. Ranges, not copies, so
    /// a session costs its size once in memory, not twice.
    lines: LineStore,
    pub tree: Tree,
    /// `header.version ?? 1` (NaN when not a number).
    pub version: f64,
    pub size: u64,
}

/// The tree of a parsed session's skeletons, migrated in memory, and its `header.version ?? 1`;
/// an error when the first entry is not a session header.
pub fn index(path: &Path, mut skeletons: Vec<Skeleton>, lines: &LineStore) -> Result<(Tree, f64), CliError> {
    if !skeletons.first().is_some_and(header::is_header) {
        return Err(CliError::Fail(format!(
            "{} is not a session file (its first entry is not a session header)",
            path.display()
        )));
    }
    // v1 files have no ids: synthetic ones (`v1-<n>`), since the file is not rewritten.
    let version = migrate::in_memory(&mut skeletons, lines, |n| Key::Str(format!("v1-{n}").into()));
    let mut tree = Tree::new();
    for sk in skeletons {
        tree.push(sk);
    }
    Ok((tree, version))
}

impl Session {
    /// Reads and indexes a session without modifying the file (unlike opening it in pi,
    /// which appends a missing final newline and rewrites old versions). Lines are split
    /// at `\n` and kept when they parse to a truthy value, as `loadEntriesFromFile` does.
    pub fn load(path: &Path) -> Result<Session, CliError> {
        let cannot = |e: std::io::Error| CliError::Fail(format!("cannot read {}: {e}", path.display()));
        let mut file = fs::File::open(path).map_err(cannot)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(cannot)?;
        let size = bytes.len() as u64;
        // File-backed spans: offsets into `bytes`, which `line` serves (the core reads them
        // from the same descriptor, so both see the bytes read).
        let mut parsed = store::Parsed::new(true);
        parsed.add(&bytes, 0);
        let store::Parsed { skeletons, store: mut lines, .. } = parsed;
        lines.set_file(file);
        let (tree, version) = index(path, skeletons, &lines)?;
        Ok(Session { path: path.to_path_buf(), bytes, lines, tree, version, size })
    }

    pub fn line(&self, pos: u32) -> &[u8] {
        match self.lines.span(pos) {
            Span::File { off, len } => &self.bytes[off as usize..(off + len) as usize],
            _ => self.lines.mem_line(pos).unwrap_or_default(),
        }
    }

    /// Where a kept line is in the file, `(offset, length)`, when its bytes are the file's (not
    /// the core's repaired copy of a line with invalid UTF-8).
    pub fn file_span(&self, pos: u32) -> Option<(u64, u64)> {
        match self.lines.span(pos) {
            Span::File { off, len } => Some((off, len)),
            _ => None,
        }
    }

    /// Number of kept (parsed) lines, header included.
    pub fn kept(&self) -> usize {
        self.lines.len()
    }

    /// The entry at a position as a JSON view (every kept line parsed once already).
    pub fn j(&self, pos: u32) -> J<'_> {
        J::parse(self.line(pos)).or_else(|| J::parse(b"null")).expect("kept lines parse")
    }

    pub fn header(&self) -> J<'_> {
        self.j(0)
    }

    /// The session id (the header's string id).
    pub fn id(&self) -> String {
        self.header().get("id").and_then(|v| v.str()).map(Cow::into_owned).unwrap_or_default()
    }

    /// The active leaf: the last entry (`leafId` after loading).
    pub fn leaf(&self) -> Option<u32> {
        self.tree.last_entry()
    }

    /// Root-first positions of the active branch (`getBranch()`).
    pub fn active_path(&self) -> Result<Vec<u32>, CliError> {
        let Some(leaf) = self.leaf() else { return Ok(Vec::new()) };
        let key = self.tree.get(leaf).id.clone();
        let path = if key.truthy() { self.tree.branch(&key) } else { self.tree.session_path(&Key::Undefined) };
        path.map_err(|e| CliError::Fail(format!("{}: {e}", self.path.display())))
    }

    /// The latest `session_info` name, trimmed (`getSessionName`).
    pub fn name(&self) -> Option<String> {
        let pos = self.tree.last_session_info()?;
        let n = self.j(pos).get("name")?.str()?.trim().to_string();
        (!n.is_empty()).then_some(n)
    }

    /// Display id of an entry (synthetic ids of migrated v1 files included).
    pub fn entry_id(&self, pos: u32) -> String {
        key_text(&self.tree.get(pos).id)
    }
}

/// A key for display: strings as they are, other values as JSON-ish text.
pub fn key_text(k: &Key) -> String {
    match k {
        Key::Str(s) => s.to_string(),
        Key::IllStr(s) => s.to_string(),
        Key::Undefined => "(no id)".into(),
        Key::Null => "null".into(),
        Key::Bool(b) => b.to_string(),
        Key::Num(bits) => super::jout::num_text(f64::from_bits(*bits)),
        Key::Unique(_) => "(object id)".into(),
    }
}

/// The name of an entry's type as written in the file.
pub fn type_name(ty: EntryType, j: &J) -> String {
    let known = match ty {
        EntryType::Session => "session",
        EntryType::Message => "message",
        EntryType::ThinkingLevelChange => "thinking_level_change",
        EntryType::ModelChange => "model_change",
        EntryType::Compaction => "compaction",
        EntryType::BranchSummary => "branch_summary",
        EntryType::Custom => "custom",
        EntryType::CustomMessage => "custom_message",
        EntryType::ContextEdit => "context_edit",
        EntryType::Label => "label",
        EntryType::SessionInfo => "session_info",
        EntryType::Usage => "usage",
        EntryType::Other => "",
    };
    if !known.is_empty() {
        return known.into();
    }
    match j.get("type") {
        Some(t) => t.str().map(Cow::into_owned).unwrap_or_else(|| format!("({})", t.raw_str())),
        None => "(no type)".into(),
    }
}

/// The role of a message object as written (`(none)` when missing).
pub fn role_name(message: Option<J>) -> String {
    match message.and_then(|m| m.get("role")) {
        Some(r) => r.str().map(Cow::into_owned).unwrap_or_else(|| r.raw_str().into_owned()),
        None => "(none)".into(),
    }
}

/// One piece of message content.
pub enum Block<'a> {
    Text(Cow<'a, str>),
    Thinking(Cow<'a, str>),
    ToolCall { name: Cow<'a, str>, args: Option<J<'a>> },
    Image(String),
    Other(String),
}

/// The blocks of a `content` value: a string is one text block.
pub fn blocks<'a>(content: Option<J<'a>>) -> Vec<Block<'a>> {
    let Some(c) = content else { return Vec::new() };
    if let Some(s) = c.str() {
        return vec![Block::Text(s)];
    }
    let mut out = Vec::new();
    for b in c.items() {
        if !b.is_obj() {
            if let Some(s) = b.str() {
                out.push(Block::Text(s));
            }
            continue;
        }
        let [ty, text, thinking, name, args, mime] =
            b.pick(["type", "text", "thinking", "name", "arguments", "mimeType"]);
        let ty = ty.and_then(|t| t.str()).unwrap_or_default();
        match &*ty {
            "text" => out.push(Block::Text(text.and_then(|t| t.str()).unwrap_or_default())),
            "thinking" => out.push(Block::Thinking(thinking.and_then(|t| t.str()).unwrap_or_default())),
            "toolCall" => out.push(Block::ToolCall { name: name.and_then(|n| n.str()).unwrap_or_default(), args }),
            "image" => out
                .push(Block::Image(mime.and_then(|m| m.str()).map(Cow::into_owned).unwrap_or_else(|| "image".into()))),
            other => out.push(Block::Other(other.to_string())),
        }
    }
    out
}

/// The text blocks of a content value, joined by newlines (only text blocks are decoded).
pub fn text_of(content: Option<J>) -> String {
    let Some(c) = content else { return String::new() };
    if let Some(s) = c.str() {
        return s.into_owned();
    }
    let mut out = String::new();
    c.each_pick(["type", "text"], |el, [ty, text]| {
        let t = if el.is_obj() {
            if !ty.is_some_and(|t| t.is_str("text")) {
                return;
            }
            text.and_then(|t| t.str()).unwrap_or_default()
        } else {
            match el.str() {
                Some(s) => s,
                None => return,
            }
        };
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&t);
    });
    out
}

/// Token and cost totals.
#[derive(Default, Clone, Copy, Debug)]
pub struct Usage {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total: f64,
    pub cost: f64,
    /// Usage records counted (assistant turns and usage entries).
    pub records: u64,
}

impl Usage {
    /// Reads a `usage` object (`input`, `output`, `cacheRead`, `cacheWrite`, `totalTokens`,
    /// `cost.total`); missing numbers count as 0, a missing total as the sum of the parts.
    pub fn from_json(u: J) -> Usage {
        let n = |v: Option<J>| v.and_then(|v| v.num()).filter(|x| x.is_finite()).unwrap_or(0.0);
        let [input, output, cr, cw, total, cost] =
            u.pick(["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]);
        let (input, output, cache_read, cache_write) = (n(input), n(output), n(cr), n(cw));
        let total =
            total.and_then(|t| t.num()).filter(|x| x.is_finite()).unwrap_or(input + output + cache_read + cache_write);
        let cost = match cost {
            Some(c) if c.kind() == Kind::Number => n(Some(c)),
            Some(c) => {
                let [t, ci, co, ccr, ccw] = c.pick(["total", "input", "output", "cacheRead", "cacheWrite"]);
                t.and_then(|t| t.num()).filter(|x| x.is_finite()).unwrap_or(n(ci) + n(co) + n(ccr) + n(ccw))
            }
            None => 0.0,
        };
        Usage { input, output, cache_read, cache_write, total, cost, records: 1 }
    }

    pub fn add(&mut self, o: &Usage) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.total += o.total;
        self.cost += o.cost;
        self.records += o.records;
    }

    /// The token and cost fields of a `--json` usage object (costs rounded).
    pub fn fields(&self) -> UsageFields {
        UsageFields {
            input: self.input,
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
            total_tokens: self.total,
            cost: round_cost(self.cost),
        }
    }

    /// `{input, …, cost, records}` (`show`, `stats`).
    pub fn json(&self) -> UsageJson {
        UsageJson { fields: self.fields(), records: self.records }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageFields {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total_tokens: f64,
    pub cost: f64,
}

#[derive(Serialize)]
pub struct UsageJson {
    #[serde(flatten)]
    pub fields: UsageFields,
    pub records: u64,
}

/// A `byModel` element: `{provider, model, records, input, …, cost}`.
#[derive(Serialize)]
pub struct ModelJson<'a> {
    pub provider: &'a str,
    pub model: &'a str,
    pub records: u64,
    #[serde(flatten)]
    pub fields: UsageFields,
}

impl<'a> ModelJson<'a> {
    pub fn new((provider, model): &'a (String, String), u: &Usage) -> ModelJson<'a> {
        ModelJson { provider, model, records: u.records, fields: u.fields() }
    }
}

/// Costs summed from floats: round to 1e-9 dollars so output is stable.
pub fn round_cost(v: f64) -> f64 {
    (v * 1e9).round() / 1e9
}

/// Usage carried by an entry: an assistant message's `message.usage` or a usage entry's
/// `usage`, with its (provider, model) and time (`message.timestamp`, else the entry's).
pub fn entry_usage(ty: EntryType, role: Role, j: &J) -> Option<(Usage, String, String, f64)> {
    let s = |v: Option<J>| v.and_then(|v| v.str()).map(Cow::into_owned).unwrap_or_default();
    match (ty, role) {
        (EntryType::Message, Role::Assistant) => {
            let [m, ts] = j.pick(["message", "timestamp"]);
            let m = m?;
            let [usage, provider, model, mts] = m.pick(["usage", "provider", "model", "timestamp"]);
            let usage = usage.filter(|u| u.is_obj())?;
            let t = match mts.and_then(|t| t.num()) {
                Some(t) => t,
                None => super::fmt::date_value(ts),
            };
            Some((Usage::from_json(usage), s(provider), s(model), t))
        }
        (EntryType::Usage, _) => {
            let [usage, provider, model, ts] = j.pick(["usage", "provider", "model", "timestamp"]);
            let usage = usage.filter(|u| u.is_obj())?;
            Some((Usage::from_json(usage), s(provider), s(model), super::fmt::date_value(ts)))
        }
        _ => None,
    }
}
