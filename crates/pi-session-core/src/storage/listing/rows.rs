//! One scanned file as the facade takes it (`Row`), and the rows of many (`Rows`) with their
//! texts in shared blocks (`Block`).

use crate::storage::json::Decoded;
use crate::storage::listing::info::InfoScan;

/// Texts of many rows end to end, shared: the listing index decodes each frame's texts
/// into one block per kind, which JS gets as one string (without a copy where the host
/// allows) and slices the rows' texts out of.
#[derive(Clone, Debug)]
pub enum Block {
    Latin1(std::sync::Arc<Vec<u8>>),
    Utf16(std::sync::Arc<Vec<u16>>),
}

impl Block {
    /// Its identity (the shared allocation).
    fn key(&self) -> usize {
        match self {
            Block::Latin1(a) => std::sync::Arc::as_ptr(a) as usize,
            Block::Utf16(u) => std::sync::Arc::as_ptr(u) as usize,
        }
    }

    /// A text of its own, as a block: JS gets it as a string without a copy per batch.
    pub fn of(d: Decoded) -> Text {
        let (len, block) = match d {
            Decoded::Latin1(b) => (b.len(), Block::Latin1(std::sync::Arc::new(b))),
            Decoded::Utf16(u) => (u.len(), Block::Utf16(std::sync::Arc::new(u))),
        };
        Text { block, range: 0..len }
    }
}

/// A row's text: a range of a block (its own, or one shared by many rows).
#[derive(Clone)]
pub struct Text {
    pub block: Block,
    pub range: std::ops::Range<usize>,
}

/// A text's code units, wherever they are kept.
#[derive(Debug, PartialEq)]
pub enum Units<'a> {
    Latin1(&'a [u8]),
    Utf16(&'a [u16]),
}

impl Text {
    pub fn units(&self) -> Units<'_> {
        // The ranges were made within their blocks; empty if not.
        match &self.block {
            Block::Latin1(b) => Units::Latin1(b.get(self.range.clone()).unwrap_or_default()),
            Block::Utf16(u) => Units::Utf16(u.get(self.range.clone()).unwrap_or_default()),
        }
    }

    fn bytes(&self) -> usize {
        match self.units() {
            Units::Latin1(b) => b.len(),
            Units::Utf16(u) => u.len() * 2,
        }
    }
}

/// Equal when the units are: where they are kept does not matter.
impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.units() == other.units()
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.units().fmt(f)
    }
}

/// One file's scan result as the facade takes it: the JSON of the row around its two
/// texts, and the texts decoded (JS gets them as strings, not JSON to parse).
#[derive(Debug, PartialEq)]
pub enum Row {
    Null,
    Info {
        /// `[header,name|null,count,lastActivity|null,[pendingTimes],`
        head: String,
        first: Text,
        all: Text,
        /// `mtimeMs]`
        tail: String,
    },
}

impl Row {
    pub fn new(r: &InfoScan) -> Row {
        let InfoScan::Info(info) = r else { return Row::Null };
        let mut head = String::with_capacity(info.header.len() + 64);
        head.push('[');
        head.push_str(&info.header);
        head.push(',');
        head.push_str(info.name.as_deref().unwrap_or("null"));
        head.push_str(&format!(",{},", info.message_count));
        match info.last_activity {
            // `Infinity` (a message timestamp of `1e999`) as JSON text that parses to it.
            Some(a) if a == f64::INFINITY => head.push_str("1e999"),
            Some(a) => head.push_str(&js_number(a)),
            None => head.push_str("null"),
        }
        head.push_str(",[");
        head.push_str(&info.pending_times.join(","));
        head.push_str("],");
        let all = Block::of(Decoded::new(info.all_text.as_bytes()));
        if all.range.len() > crate::storage::text::max_js_string_units() {
            // `allMessages.join(" ")` throws a RangeError inside the reference's `try`: the
            // file is `null`, and the rest of the folder is listed.
            return Row::Null;
        }
        Row::Info {
            head,
            first: Block::of(Decoded::new(info.first_message.as_bytes())),
            all,
            tail: format!("{}]", js_number(info.mtime_ms)),
        }
    }

    /// Bytes held (for the cache's bound).
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Row::Info { head, first, all, tail } => head.len() + first.bytes() + all.bytes() + tail.len(),
            _ => 1,
        }
    }
}

/// The rows of one `scan_rows` call.
#[derive(Debug, Default)]
pub struct Rows {
    /// A JSON array with one item per file: `null` (not a session) or `[header, name|null, count, lastActivity|null,
    /// [pendingTimes], fw, fs, fe, aw, as, ae, mtimeMs]`, where `firstMessage` is `fs..fe`
    /// of `blocks[fw]` (empty when `fs == fe`), and `allMessagesText` likewise.
    pub json: String,
    /// The blocks the rows' texts are in, each once.
    pub blocks: Vec<Block>,
    /// `blocks` by identity.
    block_at: std::collections::HashMap<usize, usize>,
    /// How many rows.
    pub len: usize,
    /// Each row with its texts in place (tests compare rows wherever their texts are kept).
    #[cfg(test)]
    pub rendered: Vec<String>,
}

impl Rows {
    pub(super) fn push(&mut self, row: &Row) {
        self.len += 1;
        #[cfg(test)]
        self.rendered.push(match row {
            Row::Info { head, first, all, tail } => {
                let text = |t: &Text| match t.units() {
                    Units::Latin1(b) => b.iter().map(|&c| char::from(c)).collect::<String>(),
                    Units::Utf16(u) => String::from_utf16_lossy(u),
                };
                format!("{head}«{}»«{}»{tail}", text(first), text(all))
            }
            other => format!("{other:?}"),
        });
        self.json.push(if self.json.is_empty() { '[' } else { ',' });
        match row {
            Row::Null => self.json.push_str("null"),
            Row::Info { head, first, all, tail } => {
                self.json.push_str(head);
                for text in [first, all] {
                    let (which, start, end) = if text.range.is_empty() {
                        (0, 0, 0)
                    } else {
                        let next = self.blocks.len();
                        let k = *self.block_at.entry(text.block.key()).or_insert(next);
                        if k == next {
                            self.blocks.push(text.block.clone());
                        }
                        (k, text.range.start, text.range.end)
                    };
                    self.json.push_str(&format!("{which},{start},{end},"));
                }
                self.json.push_str(tail);
            }
        }
    }

    pub(super) fn finish(mut self) -> Rows {
        if self.json.is_empty() {
            self.json.push('[');
        }
        self.json.push(']');
        self
    }
}

fn js_number(v: f64) -> String {
    let mut b = ryu_js::Buffer::new();
    b.format(v).to_owned()
}
