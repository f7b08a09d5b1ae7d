//! The text `search` looks for: raw-byte prefilter patterns and the exact match on decoded
//! text, case-sensitive or character by character case-insensitive (`-i`).

use memchr::memmem;

/// Most byte patterns the case-insensitive prefilter may search for.
const MAX_VARIANTS: usize = 16;

/// What to look for.
///
/// Case-insensitive matching (`-i`) is per character: a text character matches a needle
/// character when it is the character itself or its single-character lower or upper case
/// (so `É` matches `é`, `ß` does not match `SS`). The prefilter uses exactly that rule on
/// raw bytes: ASCII letters are folded in both the block and the patterns, and each other
/// cased character is expanded into its variants.
pub struct Needle {
    /// Raw-byte patterns; a line is a candidate when one occurs in it (in the ASCII-folded
    /// block with `-i`). An empty pattern makes every line a candidate.
    pub pre: Vec<Vec<u8>>,
    text: String,
    /// `-i`: the characters each needle character matches.
    classes: Vec<Vec<char>>,
    pub ci: bool,
}

fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
    let c = it.next()?;
    it.next().is_none().then_some(c)
}

/// The characters `c` matches case-insensitively.
fn variants(c: char) -> Vec<char> {
    let mut v = vec![c];
    let upper = single(c.to_uppercase());
    for x in [single(c.to_lowercase()), upper, upper.and_then(|u| single(u.to_lowercase()))].into_iter().flatten() {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

/// JSON stores these characters escaped, so raw bytes cannot be matched across them.
fn json_special(c: char) -> bool {
    c == '"' || c == '\\' || (c as u32) < 0x20
}

impl Needle {
    pub fn new(text: &str, ci: bool) -> Needle {
        let chars: Vec<char> = text.chars().collect();
        let classes: Vec<Vec<char>> = if ci { chars.iter().map(|&c| variants(c)).collect() } else { Vec::new() };
        // Byte encodings each character can have in the (folded) raw text.
        let encodings: Vec<Vec<Vec<u8>>> = chars
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let set: Vec<char> = if ci { classes[i].clone() } else { vec![c] };
                let mut out: Vec<Vec<u8>> = Vec::new();
                for v in set {
                    let mut b = v.to_string().into_bytes();
                    if ci {
                        b.make_ascii_lowercase();
                    }
                    if !out.contains(&b) {
                        out.push(b);
                    }
                }
                out
            })
            .collect();
        // The window of plain characters with the most bytes whose variants stay few.
        let mut best: Option<(usize, usize, usize)> = None; // (bytes, from, to)
        for from in 0..chars.len() {
            let mut combos = 1usize;
            let mut bytes = 0;
            for to in from..chars.len() {
                if json_special(chars[to]) {
                    break;
                }
                combos = combos.saturating_mul(encodings[to].len());
                if combos > MAX_VARIANTS {
                    break;
                }
                bytes += chars[to].len_utf8();
                if best.is_none_or(|(b, _, _)| bytes > b) {
                    best = Some((bytes, from, to + 1));
                }
            }
        }
        let mut pre: Vec<Vec<u8>> = vec![Vec::new()];
        if let Some((_, from, to)) = best {
            for enc in &encodings[from..to] {
                pre = pre.iter().flat_map(|p| enc.iter().map(move |e| [p.as_slice(), e].concat())).collect();
            }
        }
        Needle { pre, text: text.to_string(), classes, ci }
    }

    /// Byte ranges of matches in `hay` (non-overlapping, leftmost first).
    pub fn find_all(&self, hay: &str) -> Vec<(usize, usize)> {
        if !self.ci {
            return memmem::find_iter(hay.as_bytes(), self.text.as_bytes()).map(|i| (i, i + self.text.len())).collect();
        }
        if self.text.is_ascii() {
            // ASCII letters match only their ASCII cases: fold (same byte offsets) and search.
            let low = hay.to_ascii_lowercase();
            let needle = self.text.to_ascii_lowercase();
            return memmem::find_iter(low.as_bytes(), needle.as_bytes()).map(|i| (i, i + needle.len())).collect();
        }
        let mut out = Vec::new();
        let Some(first) = self.classes.first() else { return out };
        let mut from = 0;
        while from < hay.len() {
            let Some((off, _)) = hay[from..].char_indices().find(|(_, c)| first.contains(c)) else { break };
            let start = from + off;
            let mut end = start;
            let mut it = hay[start..].chars();
            let matched = self.classes.iter().all(|class| match it.next() {
                Some(c) if class.contains(&c) => {
                    end += c.len_utf8();
                    true
                }
                _ => false,
            });
            if matched {
                out.push((start, end));
                from = end;
            } else {
                from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needle_prefilter_and_matching() {
        let n = Needle::new("say \"hi\" now", false);
        assert_eq!(n.pre, vec![b"say ".to_vec()]);
        let n = Needle::new("Größe", true);
        let mut pre = n.pre.clone();
        pre.sort();
        assert_eq!(pre, vec!["grÖße".as_bytes().to_vec(), "größe".as_bytes().to_vec()]);
        assert_eq!(n.find_all("eine GRÖSSE und GRÖßE"), vec![(17, 24)]);
        assert_eq!(n.find_all("größe"), vec![(0, 7)]);
        let n = Needle::new("abc", false);
        assert_eq!(n.find_all("abcabc"), vec![(0, 3), (3, 6)]);
        let n = Needle::new("AbC", true);
        assert_eq!(n.pre, vec![b"abc".to_vec()]);
        assert_eq!(n.find_all("xABCabc"), vec![(1, 4), (4, 7)]);
        // Too many variants: the longest window within the limit.
        let n = Needle::new("ÄÖÜÉÈ xyz", true);
        assert!(n.pre.len() <= MAX_VARIANTS && n.pre.iter().all(|p| p.len() >= 8), "{:?}", n.pre);
    }
}
