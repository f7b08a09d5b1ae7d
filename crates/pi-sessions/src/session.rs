//! A session file indexed read-only for inspection, in one pass over its file and in bounded
//! memory: the core's line parse (`store::Parsed`, block by block), its v1/v2 migration in
//! memory (`migrate::in_memory`, never on disk) and its tree index. Lines are read again from
//! the file where a command needs them, so a session costs its index, not its bytes.

use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use pi_session_core::blocks::Blocks;
use pi_session_core::entry::{EntryType, Key, Role, Skeleton};
use pi_session_core::json::Kind;
use pi_session_core::lines::{LineStore, Span};
pub use pi_session_core::migrate::CURRENT_VERSION;
use pi_session_core::platform::{self, read_exact_at};
use pi_session_core::tree::Tree;
use pi_session_core::{header, migrate, store};

use serde::Serialize;

use super::ctx::CliError;
use super::jv::J;

/// Read blocks: 8 MiB, as the core's `store::load` reads (it parses a block of 2 MiB or more on
/// two threads). `PI_SESSION_NATIVE_CLI_READ_CHUNK` sets another size (at least 4 KiB), for the tests:
/// lines cut at block ends and longer than a block.
pub fn chunk() -> usize {
    std::env::var("PI_SESSION_NATIVE_CLI_READ_CHUNK")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(8 << 20)
        .max(4096)
}

pub struct Session {
    pub path: PathBuf,
    /// The file as it was opened (read again through it, by offset); None once let go of.
    file: Option<File>,
    /// By tree position (the header is position 0): a file span, or the core's repaired copy
    /// of a line with invalid UTF-8.
    lines: LineStore,
    pub tree: Tree,
    /// `header.version ?? 1` (NaN when not a number).
    pub version: f64,
    /// Bytes read.
    pub size: u64,
    /// Lines that are not blank (parsed or not).
    pub physical: usize,
    /// The file ends in a line cut short (see `torn_tail`).
    pub torn: bool,
    /// The file is empty or ends with `\n`.
    pub ends_with_newline: bool,
}

/// A kept line's bytes, read from the file.
pub struct Line(Vec<u8>);

impl Line {
    /// The entry as a JSON view (every kept line parsed once already).
    pub fn j(&self) -> J<'_> {
        J::parse(&self.0).or_else(|| J::parse(b"null")).expect("kept lines parse")
    }
}

impl std::ops::Deref for Line {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// The tree of a parsed session's skeletons, migrated in memory, and its `header.version ?? 1`;
/// an error when the first entry is not a session header.
fn index(path: &Path, mut skeletons: Vec<Skeleton>, lines: &LineStore) -> Result<(Tree, f64), CliError> {
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

/// A line pi's loader skips as blank: only spaces, tabs and carriage returns.
pub fn is_blank(l: &[u8]) -> bool {
    l.iter().all(|b| b" \t\r".contains(b))
}

/// Lines of `block` (split at `\n`) that are not blank.
fn non_blank_lines(block: &[u8]) -> usize {
    let mut n = 0;
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', block).chain(std::iter::once(block.len())) {
        n += usize::from(!is_blank(&block[start..end]));
        start = end + 1;
    }
    n
}

/// Whether `bytes` end in a line cut short: no final newline, and a last line that is not
/// blank and does not parse (a writer stopped mid-line).
pub fn torn_tail(bytes: &[u8]) -> bool {
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return false;
    }
    let start = memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1);
    let last = &bytes[start..];
    !is_blank(last) && Skeleton::parse_line(last, &mut 0).is_none()
}

impl Session {
    /// Reads and indexes a session without modifying the file (unlike opening it in pi,
    /// which appends a missing final newline and rewrites old versions).
    pub fn load(path: &Path) -> Result<Session, CliError> {
        let file = File::open(path).map_err(|e| CliError::Unreadable(path.to_path_buf(), e))?;
        Session::scan(path, &file)
    }

    /// Reads `file` from its start block by block, each block parsed by the core as
    /// `store::load` parses it: lines split at `\n`, kept when they parse to a truthy value,
    /// as `loadEntriesFromFile` does; v1/v2 sessions migrated in memory.
    pub fn scan(path: &Path, file: &File) -> Result<Session, CliError> {
        let cannot = |e: io::Error| CliError::Unreadable(path.to_path_buf(), e);
        let mut parsed = store::Parsed::new(true);
        let chunk = chunk();
        let mut blocks = Blocks::new(file, chunk, chunk);
        let (mut size, mut physical, mut torn, mut ends_with_newline) = (0u64, 0usize, false, true);
        while let Some((off, block)) = blocks.next_block().map_err(cannot)? {
            physical += non_blank_lines(block);
            // Only the last block can end without a newline.
            torn = torn_tail(block);
            ends_with_newline = block.ends_with(b"\n");
            parsed.add(block, off);
            size = off + block.len() as u64;
        }
        let store::Parsed { skeletons, store: mut lines, .. } = parsed;
        lines.set_file(file.try_clone().map_err(cannot)?);
        let (tree, version) = index(path, skeletons, &lines)?;
        let file = Some(file.try_clone().map_err(cannot)?);
        let path = path.to_path_buf();
        Ok(Session { path, file, lines, tree, version, size, physical, torn, ends_with_newline })
    }

    /// The bytes of a kept line (read from the file, or the repaired copy).
    pub fn line(&self, pos: u32) -> Line {
        Line(self.lines.line(pos).ok().flatten().unwrap_or_default())
    }

    /// The file as it was opened.
    pub fn file(&self) -> io::Result<&File> {
        self.file.as_ref().ok_or_else(|| io::Error::other("the session file was let go of"))
    }

    /// Bytes `from..to` of the file as read.
    pub fn read(&self, from: u64, to: u64) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; to.saturating_sub(from) as usize];
        read_exact_at(self.file()?, &mut buf, from)?;
        Ok(buf)
    }

    /// Closes every handle to the file where open files block a rename over their path
    /// (`platform::OPEN_FILES_BLOCK_RENAME`: Windows), before the file is replaced; its lines
    /// cannot be read after that, the index stays.
    pub fn let_go_of_file(&mut self) {
        if platform::OPEN_FILES_BLOCK_RENAME {
            self.file = None;
            self.lines = LineStore::new();
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

    /// The session id (the header's string id).
    pub fn id(&self) -> String {
        self.line(0).j().get("id").and_then(|v| v.str()).map(Cow::into_owned).unwrap_or_default()
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
        let n = self.line(pos).j().get("name")?.str()?.trim().to_string();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_tails() {
        assert!(torn_tail(b"{\"a\":1}\n{\"b\""));
        assert!(!torn_tail(b"{\"a\":1}\n{\"b\":2}"));
        assert!(!torn_tail(b"{\"a\":1}\nxx\n"));
    }
}
