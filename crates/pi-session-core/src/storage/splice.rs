//! Long escaped strings taken out of entry lines before V8 parses them.
//!
//! `JSON.parse` decodes an escaped string (code and tool output: `\n`, `\"` every few
//! dozen bytes) several times slower than it copies plain text, and those strings are
//! most of a session's bytes. So a line is handed to JS with each such string value
//! replaced by `""`; the decoded strings go alongside (created as JS strings directly:
//! Latin-1 ones copied, UTF-16 ones as external strings over the decoded units), with
//! the path (keys and indices) where each belongs. JS parses the short line and assigns
//! every string at its path: the object has the same keys, in the same order, with the
//! same values as `JSON.parse` of the original line.
//!
//! Only lines that are valid UTF-8, whose objects have no duplicate keys and no escaped
//! keys, are spliced (with a duplicate, `JSON.parse` keeps the last value while a path
//! cannot tell the two apart); other lines go to JS whole.

use crate::storage::json::{scan_decode, scan_string};

/// Strings shorter than this (raw bytes) stay in the line: the bookkeeping would cost
/// more than `JSON.parse` spends on them.
pub const MIN_RAW: usize = 256;

/// The strings taken out of a run of lines, decoded and concatenated: those whose code
/// units all fit in a byte as Latin-1, the others as UTF-16. JS makes one string of each
/// and slices it (a slice shares its parent's characters), which costs V8 much less than
/// thousands of separate strings.
#[derive(Default, Debug)]
pub struct Extracted {
    pub latin1: Vec<u8>,
    pub utf16: Vec<u16>,
    /// `[line, [path…], which, start, end, …]` as JSON text (ASCII) without the brackets:
    /// `start..end` of the Latin-1 text (`which` 0) or the UTF-16 one (1) goes at `path`
    /// in the object of `line`; with `which` 2, `mapped[start]` goes there.
    pub patches: Vec<u8>,
    /// Plain strings left in the file (see `limits::MAPPED_MIN`): `(offset, length)` of their
    /// units in the mapped file.
    pub mapped: Vec<(u64, u32)>,
}

impl Extracted {
    pub fn is_empty(&self) -> bool {
        self.patches.is_empty()
    }
}

enum Frame<'a> {
    Object { keys: Vec<&'a [u8]>, key: &'a [u8] },
    Array { index: u32 },
}

/// A string taken out of a line: its bytes `start..end` (quotes included), its path, and
/// where its decoded units went.
struct Cut {
    start: usize,
    end: usize,
    path: Vec<u8>,
    /// 0: `Extracted::latin1`, 1: `Extracted::utf16`, 2: `Extracted::mapped` (`from`).
    which: u8,
    from: usize,
    to: usize,
}

/// Writes `line` to `out` with its long escaped string values replaced by `""`, and adds
/// those strings to `ex` (patches name the line `index`). Returns false, writing nothing,
/// when the line must go whole (see the module docs); `line` must be valid JSON.
///
/// `holes`: `(at, k)` where the line holds `""` in place of a string left in the file,
/// `ex.mapped[k]` (in order); such a line cannot go whole (the caller reads it whole then).
pub fn splice_line(line: &[u8], index: u32, out: &mut Vec<u8>, ex: &mut Extracted, holes: &[(u32, u32)]) -> bool {
    // Cheap rejections first: short lines, invalid UTF-8 (decoded lossily by the reader).
    if (line.len() < MIN_RAW && holes.is_empty()) || simdutf8::basic::from_utf8(line).is_err() {
        return false;
    }
    let (latin1_at, utf16_at) = (ex.latin1.len(), ex.utf16.len());
    let cuts = match find_cuts(line, ex, holes) {
        Some(cuts) if !cuts.is_empty() => cuts,
        _ => {
            ex.latin1.truncate(latin1_at);
            ex.utf16.truncate(utf16_at);
            return false;
        }
    };
    let mut from = 0;
    for cut in cuts {
        out.extend_from_slice(&line[from..cut.start]);
        out.extend_from_slice(b"\"\"");
        from = cut.end;
        if !ex.patches.is_empty() {
            ex.patches.push(b',');
        }
        ex.patches.extend_from_slice(index.to_string().as_bytes());
        ex.patches.push(b',');
        ex.patches.extend_from_slice(&cut.path);
        ex.patches.extend_from_slice(format!(",{},{},{}", cut.which, cut.from, cut.to).as_bytes());
    }
    out.extend_from_slice(&line[from..]);
    true
}

/// One pass over `line`: the long string values, decoded into `ex` as they are scanned
/// (the caller drops what was decoded when this returns `None`: the line goes whole).
fn find_cuts(line: &[u8], ex: &mut Extracted, mut holes: &[(u32, u32)]) -> Option<Vec<Cut>> {
    let mut cuts = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut expect_key = false;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'{' => {
                stack.push(Frame::Object { keys: Vec::new(), key: b"" });
                expect_key = true;
                i += 1;
            }
            b'[' => {
                stack.push(Frame::Array { index: 0 });
                expect_key = false;
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
                i += 1;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Frame::Object { .. }) => expect_key = true,
                    Some(Frame::Array { index }) => *index += 1,
                    None => {}
                }
                i += 1;
            }
            b'"' if expect_key => {
                let end = scan_string(line, i)?;
                let raw = &line[i + 1..end - 1];
                let Some(Frame::Object { keys, key }) = stack.last_mut() else { return None };
                if raw.contains(&b'\\') || keys.contains(&raw) {
                    return None;
                }
                keys.push(raw);
                *key = raw;
                expect_key = false;
                i = end;
            }
            b'"' if stack.is_empty() => i = scan_string(line, i)?,
            b'"' if holes.first().is_some_and(|&(at, _)| at as usize == i) => {
                let k = holes[0].1 as usize;
                holes = &holes[1..];
                cuts.push(Cut { start: i, end: i + 2, path: path_json(&stack), which: 2, from: k, to: 0 });
                i += 2;
            }
            b'"' => {
                // Decoded while scanned; kept if long enough.
                let (latin1_at, utf16_at) = (ex.latin1.len(), ex.utf16.len());
                let (end, wide) = scan_decode(line, i, &mut ex.latin1, &mut ex.utf16)?;
                if end - i - 2 >= MIN_RAW {
                    let (which, from, to) =
                        if wide { (1, utf16_at, ex.utf16.len()) } else { (0, latin1_at, ex.latin1.len()) };
                    cuts.push(Cut { start: i, end, path: path_json(&stack), which, from, to });
                } else {
                    ex.latin1.truncate(latin1_at);
                    ex.utf16.truncate(utf16_at);
                }
                i = end;
            }
            _ => i += 1, // `:`, whitespace, and the bytes of numbers and literals
        }
    }
    holes.is_empty().then_some(cuts)
}

/// The path to the current value as a JSON array of keys and indices (ASCII: non-ASCII
/// key characters as `\uXXXX`).
fn path_json(stack: &[Frame]) -> Vec<u8> {
    let mut out = vec![b'['];
    for (n, f) in stack.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        match f {
            Frame::Object { key, .. } => {
                out.push(b'"');
                crate::storage::text::escape_to_ascii(key, &mut out);
                out.push(b'"');
            }
            Frame::Array { index } => out.extend_from_slice(index.to_string().as_bytes()),
        }
    }
    out.push(b']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::limits::MAPPED_MIN;

    fn long(s: &str) -> String {
        s.repeat(MIN_RAW / s.len() + 1)
    }

    /// The oracle for `json::collect_plain`, by another method: the string values of an object line that `MAPPED_MIN` admits: `(start, end)` in the
    /// line, quotes included. Keys are never taken (a string followed by `:`); nor is a line
    /// that is not an object. `line` must be valid JSON (the loader checked it).
    pub fn plain_strings(line: &[u8]) -> Vec<(u32, u32)> {
        let mut found = Vec::new();
        if line.len() < MAPPED_MIN || line.get(crate::storage::json::skip_whitespace(line, 0)) != Some(&b'{') {
            return found;
        }
        // Outside strings a valid line has no quote, so each quote found opens a string.
        let mut i = 0;
        while let Some(q) = memchr::memchr(b'"', &line[i..]) {
            let start = i + q;
            // The first quote or backslash after the opening one: a quote first means a string
            // without escapes (the common case for images: one SIMD search, no second pass).
            let end = match memchr::memchr2(b'"', b'\\', &line[start + 1..]) {
                Some(k) if line[start + 1 + k] == b'"' => start + k + 2,
                _ => match scan_string(line, start) {
                    Some(end) => {
                        i = end;
                        continue;
                    }
                    None => return Vec::new(),
                },
            };
            i = end;
            let raw = &line[start + 1..end - 1];
            let is_key = line.get(crate::storage::json::skip_whitespace(line, end)) == Some(&b':');
            if raw.len() >= MAPPED_MIN && !is_key && raw.is_ascii() {
                match (u32::try_from(start), u32::try_from(end)) {
                    (Ok(s), Ok(e)) => found.push((s, e)),
                    _ => return Vec::new(),
                }
            }
        }
        found
    }

    #[test]
    fn the_loader_scan_finds_the_long_plain_values() {
        let big = |c: char, n: usize| c.to_string().repeat(n);
        let plain = big('A', MAPPED_MIN);
        let lines = [
            format!(
                r#"{{"type":"message","message":{{"content":[{{"type":"image","data":"{plain}","mimeType":"image/png"}}]}}}}"#
            ),
            format!(
                r#"{{"a" : "{plain}" , "b":[ "{plain}", {{"c":"{plain}"}} ], "d":"{}"}}"#,
                big('B', MAPPED_MIN - 1)
            ),
            // A long key, an escape, a non-ASCII byte, an escape or non-ASCII text right after.
            format!(r#"{{"{plain}":1,"e":"{plain}\n","f":"{plain}é","g":"{plain}","h":"x\ny","i":"{plain}","j":"é"}}"#),
            format!(r#"["{plain}"]"#),
            format!(r#""{plain}""#),
        ];
        for line in &lines {
            let (sk, found) = crate::storage::json::collect_plain(|| {
                crate::model::entry::Skeleton::parse_line(line.as_bytes(), &mut 0)
            });
            assert!(sk.is_some(), "{line:.80}");
            let object = line.starts_with('{');
            assert_eq!(if object { found } else { Vec::new() }, plain_strings(line.as_bytes()), "{line:.80}");
        }
        assert_eq!(plain_strings(lines[0].as_bytes()).len(), 1);
        assert_eq!(plain_strings(lines[1].as_bytes()).len(), 3);
        assert_eq!(plain_strings(lines[2].as_bytes()).len(), 2);
    }

    #[test]
    fn takes_out_long_escaped_strings_with_their_paths() {
        let a = long("line\\n");
        let b = long("caf\u{e9} \\\"x\\\" ");
        let c = long("\u{1f600}\\ud800");
        let plain = "p".repeat(MIN_RAW + 10);
        let line = format!(
            r#"{{"type":"message","message":{{"content":[{{"type":"text","text":"{a}"}},"{b}",{{"k":"{plain}"}}],"x":"{c}"}},"short":"a\nb"}}"#
        )
        .replace("a\nb", "a\\nb");
        let mut out = Vec::new();
        let mut ex = Extracted::default();
        assert!(splice_line(line.as_bytes(), 7, &mut out, &mut ex, &[]));
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            out,
            r#"{"type":"message","message":{"content":[{"type":"text","text":""},"",{"k":""}],"x":""},"short":"a\nb"}"#
                .to_string()
                .replace("a\nb", "a\\nb")
        );
        // Each string decodes as `JSON.parse` would (checked against the core's decoder).
        let units = |raw: &str| crate::storage::json::decode_utf16(raw.as_bytes());
        let (ua, ub, up, uc) = (units(&a), units(&b), units(&plain), units(&c));
        let latin1: Vec<u8> = ua.iter().chain(&ub).chain(&up).map(|&u| u as u8).collect();
        assert_eq!(ex.latin1, latin1);
        assert_eq!(ex.utf16, uc);
        let (la, lb, lp) = (ua.len(), ua.len() + ub.len(), ua.len() + ub.len() + up.len());
        assert_eq!(
            String::from_utf8(ex.patches).unwrap(),
            format!(
                "7,[\"message\",\"content\",0,\"text\"],0,0,{la},7,[\"message\",\"content\",1],0,{la},{lb},7,[\"message\",\"content\",2,\"k\"],0,{lb},{lp},7,[\"message\",\"x\"],1,0,{}",
                uc.len()
            )
        );
    }

    #[test]
    fn leaves_lines_it_cannot_splice_whole() {
        let a = long("x\\n");
        for line in [
            format!(r#"{{"a":"{a}","a":"y"}}"#),    // duplicate key
            format!(r#"{{"\u0061":"{a}","b":1}}"#), // escaped key
            r#"{"a":"short\n"}"#.to_string(),       // nothing long
            format!(r#""{a}""#),                    // a bare string document
        ] {
            let mut out = Vec::new();
            let mut ex = Extracted::default();
            assert!(!splice_line(line.as_bytes(), 0, &mut out, &mut ex, &[]), "{line}");
            assert!(out.is_empty() && ex.is_empty() && ex.latin1.is_empty() && ex.utf16.is_empty(), "{line}");
        }
        let mut bad = format!(r#"{{"a":"{a}"}}"#).into_bytes();
        bad[3] = 0xff; // invalid UTF-8
        assert!(!splice_line(&bad, 0, &mut Vec::new(), &mut Extracted::default(), &[]));
    }
}
