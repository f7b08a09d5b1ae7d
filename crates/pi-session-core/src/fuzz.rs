//! One entry point that runs arbitrary bytes through every parser and index of the core:
//! the cargo-fuzz target (`fuzz/`) calls it, and a seeded mutation smoke test below runs it
//! in `cargo test` so that CI exercises the same paths in seconds.

use crate::model::entry::{Key, Skeleton};
use crate::model::tree::Tree;
use crate::storage::json;
use crate::storage::store;

/// Parses `data` as a session file and as single lines, builds the index and asks it every
/// question the facade asks. Panics only on a bug (broken invariant).
pub fn exercise(data: &[u8]) {
    let parsed = store::parse_text(data, 1);
    let all: Vec<u32> = (0..parsed.skeletons.len() as u32).collect();
    let mut lines = Vec::new();
    parsed.store.for_each(&all, |_, l| lines.push(l.map(<[u8]>::to_vec))).expect("memory lines read back");
    let mut tree = Tree::new();
    for (sk, line) in parsed.skeletons.into_iter().zip(&lines) {
        let line = line.as_deref().expect("every parsed line is stored");
        assert!(json::parse_document(line).is_some(), "a stored line parses");
        tree.push(sk);
    }
    for leaf in [Key::Undefined, Key::Null, Key::Str("a".into())] {
        let _ = tree.session_path(&leaf);
        let _ = tree.context_plan(&leaf);
        let _ = tree.branch(&leaf);
    }
    let _ = tree.tree_links();
    let _ = tree.children(&Key::Null);
    let _ = tree.has_conversation();
    for line in data.split(|&b| b == b'\n') {
        let canonical = json::is_canonical(line);
        let doc = json::parse_document(line);
        assert!(!canonical || doc.is_some(), "canonical implies valid");
        if let Some(sk) = Skeleton::parse_line(line, &mut 0) {
            assert!(doc.is_some(), "a skeleton implies valid JSON");
            let _ = sk;
        }
        // The decoding scanner ends (or fails) wherever the plain one does, and leaves
        // nothing behind when it fails.
        for (at, _) in line.iter().enumerate().filter(|&(_, &b)| b == b'"').take(64) {
            let (mut latin1, mut utf16) = (Vec::new(), Vec::new());
            let decoded = json::scan_decode(line, at, &mut latin1, &mut utf16);
            assert_eq!(decoded.map(|d| d.0), json::scan_string(line, at), "scan_decode ends where scan_string does");
            assert!(decoded.is_some() || (latin1.is_empty() && utf16.is_empty()));
        }
        // A valid line with long strings taken out is still valid JSON, with one patch per
        // string taken out.
        if doc.is_some() {
            let (mut out, mut ex) = (Vec::new(), crate::storage::splice::Extracted::default());
            if crate::storage::splice::splice_line(line, 0, &mut out, &mut ex, &[]) {
                assert!(json::parse_document(&out).is_some(), "a spliced line parses");
                let patches = [b"[".as_slice(), &ex.patches, b"]"].concat();
                assert!(json::parse_document(&patches).is_some(), "patches parse");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// Seeded mutations of realistic lines (flips, truncations, insertions of special bytes,
    /// deep nesting) through `exercise`: no panic, no hang.
    #[test]
    fn mutation_smoke() {
        let seeds: [&[u8]; 6] = [
            br#"{"type":"session","version":3,"id":"s","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}"#,
            br#"{"type":"message","id":"a1","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi \u00e9 \ud800"}]}}"#,
            br#"{"type":"compaction","id":"c","parentId":"a1","summary":"s","firstKeptEntryId":"a1","tokensBefore":5,"retainedTail":[{"role":"user","content":"x"}]}"#,
            br#"{"type":"label","id":"l","parentId":"c","targetId":"a1","label":"x","n":[1.5e300,-0,{"2":0}]}"#,
            br#"{"type":"context_edit","id":"e","parentId":"l","targetId":"a1","replacement":{"content":"y"}}"#,
            // Long strings (taken out of the line before JSON.parse): escapes, Latin-1, UTF-16.
            br#"{"type":"message","id":"t","parentId":"e","message":{"role":"toolResult","content":[{"type":"text","text":"out\n\t\"q\" \\ caf\u00e9 \u2192 \ud83d\ude00 line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line line"}],"details":{"stdout":"\u001b[31mred\u001b[0m ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok"}}}"#,
        ];
        let specials: [&[u8]; 12] =
            [b"\"", b"\\", b"{", b"}", b"[", b"]", b",", b":", b"\n", b"\xff", b"\x00", b"\\ud800"];
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let base: Vec<u8> = seeds.join(&b'\n');
        for _ in 0..3000 {
            let mut data = base.clone();
            for _ in 0..(next() % 8 + 1) {
                if data.is_empty() {
                    break;
                }
                let at = (next() as usize) % data.len();
                match next() % 5 {
                    0 => data[at] ^= 1 << (next() % 8),
                    1 => data.truncate(at),
                    2 => {
                        let s = specials[(next() as usize) % specials.len()];
                        data.splice(at..at, s.iter().copied());
                    }
                    3 => {
                        data.remove(at);
                    }
                    _ => {
                        let end = (at + (next() as usize) % 64).min(data.len());
                        let chunk = data[at..end].to_vec();
                        data.splice(at..at, chunk);
                    }
                }
            }
            super::exercise(&data);
        }
        // Deep nesting and a long line.
        let deep =
            format!("{{\"type\":\"message\",\"id\":\"d\",\"x\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        super::exercise(deep.as_bytes());
        super::exercise(&[b'"'; 1 << 20]);
    }
}
