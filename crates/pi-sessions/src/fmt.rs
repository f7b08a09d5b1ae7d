//! Human output helpers: dates, sizes, numbers, truncation and colour.

use pi_session_core::time::parse_iso_ms;

use super::jv::J;
use pi_session_core::json::Kind;

/// Days since 1970-01-01 → (year, month, day) (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

use pi_session_core::time::days_from_civil;

/// `Date.prototype.toISOString()`; `None` for NaN or out-of-range times.
pub fn iso(ms: f64) -> Option<String> {
    if !ms.is_finite() || ms.abs() > 8.64e15 {
        return None;
    }
    let ms = ms as i64;
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, mo, d) = civil_from_days(days);
    let (h, mi, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    Some(format!("{year}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z"))
}

/// `YYYY-MM-DD HH:MM` in UTC, or `-`.
pub fn short_time(ms: f64) -> String {
    match iso(ms) {
        Some(s) if s.len() == 24 => format!("{} {}", &s[..10], &s[11..16]),
        Some(s) => s,
        None => "-".into(),
    }
}

/// `YYYY-MM-DD` in UTC.
pub fn day(ms: f64) -> Option<String> {
    iso(ms).map(|s| s[..s.len() - 14].to_string())
}

/// `new Date(string).getTime()` for the ISO-like forms pi and people write: the exact
/// `toISOString()` shape, plus optional fraction/seconds, `Z` or `±HH:MM`, and date-only.
/// Date-times without a zone are read as UTC (V8 would use local time). NaN otherwise.
pub fn parse_date(s: &str) -> f64 {
    if let Some(ms) = parse_iso_ms(s.as_bytes()) {
        return ms;
    }
    parse_loose(s.trim()).unwrap_or(f64::NAN)
}

fn parse_loose(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let digits = |from: usize, n: usize| -> Option<i64> {
        let part = b.get(from..from + n)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0i64, |a, &c| a * 10 + (c - b'0') as i64))
    };
    let y = digits(0, 4)?;
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let (mo, d) = (digits(5, 2)?, digits(8, 2)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * 86_400_000;
    if b.len() == 10 {
        return Some(ms as f64);
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (h, mi) = (digits(11, 2)?, digits(14, 2)?);
    if b.get(13) != Some(&b':') || h > 24 || mi > 59 {
        return None;
    }
    ms += (h * 60 + mi) * 60_000;
    let mut i = 16;
    if b.get(i) == Some(&b':') {
        let sec = digits(i + 1, 2)?;
        if sec > 59 {
            return None;
        }
        ms += sec * 1000;
        i += 3;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start {
                return None;
            }
            let frac = &s[start..i.min(start + 3)];
            let mut v: i64 = frac.parse().ok()?;
            for _ in frac.len()..3 {
                v *= 10;
            }
            ms += v;
        }
    }
    match &s[i..] {
        "" | "Z" | "z" => Some(ms as f64),
        zone => {
            let zb = zone.as_bytes();
            let sign = match zb.first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let zh: i64 = zone.get(1..3)?.parse().ok()?;
            let zm: i64 = match zone.len() {
                3 => 0,
                5 => zone.get(3..5)?.parse().ok()?,
                6 if zb[3] == b':' => zone.get(4..6)?.parse().ok()?,
                _ => return None,
            };
            Some((ms - sign * (zh * 60 + zm) * 60_000) as f64)
        }
    }
}

/// `new Date(value).getTime()` for a JSON value (missing → NaN).
pub fn date_value(v: Option<J>) -> f64 {
    let Some(v) = v else { return f64::NAN };
    match v.kind() {
        Kind::String => parse_date(&v.str().unwrap_or_default()),
        Kind::Number => {
            let n = v.num().unwrap_or(f64::NAN);
            if n.abs() <= 8.64e15 { n.trunc() } else { f64::NAN }
        }
        Kind::Null | Kind::False => 0.0,
        Kind::True => 1.0,
        _ => f64::NAN,
    }
}

/// Decimal (SI) units, as disks and `ls -h --si` count: `52.4 MB` for 52,429,430 bytes,
/// `340 kB`, `512 B`; one decimal below 100.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 999.95 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else if v < 99.95 {
        format!("{v:.1} {}", UNITS[u])
    } else {
        format!("{v:.0} {}", UNITS[u])
    }
}

/// `1 file`, `2 files`, `1,024 files`: a count with its noun in the right number.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", group(n), if n == 1 { one } else { many })
}

/// `1234567` → `1,234,567`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn money(v: f64) -> String {
    if v >= 100.0 { format!("${v:.2}") } else { format!("${v:.4}") }
}

/// Collapses whitespace runs (including newlines) to single spaces and trims.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(4096));
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    out
}

/// `trunc(&one_line(s), max)` in one pass that stops after `max + 1` characters: a long text
/// (a tool result of megabytes) costs what is shown.
pub fn one_line_trunc(s: &str, max: usize) -> String {
    if max == 0 {
        return String::new();
    }
    let mut out = String::with_capacity(s.len().min(4 * max + 4));
    // Columns in `out`, and where its longest prefix of at most `max - 1` columns ends (the cut
    // when there are more).
    let (mut n, mut cut) = (0, 0);
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = n > 0;
            continue;
        }
        for c in [' ', c].into_iter().skip(usize::from(!space)) {
            let w = cols(c);
            if n + w > max {
                out.truncate(cut);
                out.push('…');
                return out;
            }
            out.push(c);
            n += w;
            if n < max {
                cut = out.len();
            }
        }
        space = false;
    }
    out
}

/// Cuts `s` to at most `max` characters, ending with `…` when cut.
pub fn trunc(s: &str, max: usize) -> String {
    if max == 0 {
        return String::new();
    }
    if width(s) <= max {
        return s.to_string();
    }
    let mut n = 0;
    let cut = s.char_indices().find(|&(_, c)| {
        n += cols(c);
        n > max - 1
    });
    format!("{}…", &s[..cut.map_or(s.len(), |(i, _)| i)])
}

/// Cuts `s` to at most `max` characters from the left, starting with `…` when cut: for paths,
/// whose end (the file name, with the session id) tells them apart.
pub fn trunc_left(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut n = 0;
    let start = s.char_indices().rev().find(|&(_, c)| {
        n += cols(c);
        n > max - 1
    });
    // `start` is the first character that does not fit: the tail begins after it.
    let from = start.map_or(0, |(i, c)| i + c.len_utf8());
    format!("…{}", &s[from..])
}

/// Width of a line as the terminal shows it: characters, ANSI colour sequences not counted.
pub fn visible_width(s: &str) -> usize {
    let mut n = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            n += cols(c);
        }
    }
    n
}

/// A line cut to `width` columns, ending with `…` when cut; colour sequences are kept (and a
/// reset added when the cut falls inside a coloured run).
pub fn fit(s: &str, width: usize) -> String {
    if visible_width(s) <= width {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut n = 0;
    let mut chars = s.chars();
    let mut coloured = false;
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            let mut seq = String::from(c);
            for c in chars.by_ref() {
                seq.push(c);
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            coloured = seq != "\x1b[0m";
            out.push_str(&seq);
            continue;
        }
        if n + cols(c) > width.saturating_sub(1) {
            out.push('…');
            break;
        }
        out.push(c);
        n += cols(c);
    }
    if coloured {
        out.push_str("\x1b[0m");
    }
    out
}

/// `text` wrapped at spaces to `width` columns: the first line after a label of `indent`
/// columns, the others indented by as much. A word longer than a line is cut with `…`.
pub fn wrap(text: &str, indent: usize, width: usize) -> String {
    let room = width.saturating_sub(indent).max(10);
    let mut lines: Vec<String> = vec![String::new()];
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let cur = lines.last_mut().expect("a line");
        let need = if cur.is_empty() { 0 } else { 1 } + self::width(word);
        if !cur.is_empty() && self::width(cur) + need > room {
            lines.push(String::new());
        }
        let cur = lines.last_mut().expect("a line");
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&trunc(word, room));
    }
    lines.join(&format!("\n{}", " ".repeat(indent)))
}

/// A table for the terminal: a text column (left-aligned, cut with `…`), then number columns
/// (right-aligned), two spaces apart, each as wide as its widest cell. When the rows are wider
/// than `width`, the text column gives up to `keep_first` first, then the columns in `drop`
/// (indexes, least useful first) go, then the text column shrinks to 8. Returns the header line
/// and the rows.
pub fn table(head: &[&str], rows: &[Vec<String>], keep_first: usize, drop: &[usize], width: usize) -> Vec<String> {
    let cols = head.len();
    let mut w: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| self::width(&r[c])).chain([self::width(head[c])]).max().unwrap_or(0))
        .collect();
    let mut shown: Vec<bool> = vec![true; cols];
    let total = |w: &[usize], shown: &[bool]| -> usize {
        w[0] + (1..cols).filter(|c| shown[*c]).map(|c| 2 + w[c]).sum::<usize>()
    };
    if total(&w, &shown) > width {
        w[0] = w[0].min(keep_first.max(self::width(head[0])));
    }
    for &c in drop {
        if total(&w, &shown) <= width {
            break;
        }
        shown[c] = false;
    }
    let over = total(&w, &shown).saturating_sub(width);
    w[0] = w[0].saturating_sub(over).max(8);
    let line = |cells: &[String]| -> String {
        let mut s = pad_right(&trunc(&cells[0], w[0]), w[0]);
        for c in (1..cols).filter(|c| shown[*c]) {
            s.push_str("  ");
            s.push_str(&pad_left(&cells[c], w[c]));
        }
        s.trim_end().to_string()
    };
    let mut out = vec![line(&head.iter().map(|h| h.to_string()).collect::<Vec<_>>())];
    out.extend(rows.iter().map(|r| line(r)));
    out
}

/// Columns a character takes in a terminal: two for East Asian wide characters and emoji,
/// none for combining marks and controls (the `unicode-width` crate).
pub fn cols(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// Columns a text takes in a terminal (see `cols`).
pub fn width(s: &str) -> usize {
    s.chars().map(cols).sum()
}

pub fn pad_left(s: &str, w: usize) -> String {
    format!("{}{s}", " ".repeat(w.saturating_sub(width(s))))
}

pub fn pad_right(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(width(s))))
}

/// ANSI colour, on or off.
#[derive(Clone, Copy)]
pub struct Paint {
    pub on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() }
    }
    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
    pub fn red(&self, s: &str) -> String {
        self.wrap("31", s)
    }
    pub fn green(&self, s: &str) -> String {
        self.wrap("32", s)
    }
    pub fn yellow(&self, s: &str) -> String {
        self.wrap("33", s)
    }
    pub fn blue(&self, s: &str) -> String {
        self.wrap("34", s)
    }
    pub fn magenta(&self, s: &str) -> String {
        self.wrap("35", s)
    }
    pub fn cyan(&self, s: &str) -> String {
        self.wrap("36", s)
    }
    pub fn hit(&self, s: &str) -> String {
        self.wrap("1;31", s)
    }
}

/// As a JSON object, most frequent first (ties by name).
impl serde::Serialize for Counts {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_map(self.sorted())
    }
}

/// Counters kept in first-seen order.
#[derive(Default)]
pub struct Counts(pub Vec<(String, u64)>);

impl Counts {
    pub fn add(&mut self, k: &str, n: u64) {
        match self.0.iter_mut().find(|(key, _)| key == k) {
            Some((_, c)) => *c += n,
            None => self.0.push((k.to_string(), n)),
        }
    }

    pub fn sorted(&self) -> Vec<(String, u64)> {
        let mut v = self.0.clone();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }

    pub fn human(&self) -> String {
        self.sorted().iter().map(|(k, n)| format!("{k} {}", group(*n))).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(iso(0.0).unwrap(), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1733234401000.0).unwrap(), "2024-12-03T14:00:01.000Z");
        assert_eq!(iso(-1.0).unwrap(), "1969-12-31T23:59:59.999Z");
        assert_eq!(parse_date("2024-12-03T14:00:01.000Z"), 1733234401000.0);
        assert_eq!(parse_date("2024-12-03T14:00:01Z"), 1733234401000.0);
        assert_eq!(parse_date("2024-12-03T16:00:01.5+02:00"), 1733234401500.0);
        assert_eq!(parse_date("2024-12-03"), 1733184000000.0);
        assert!(parse_date("yesterday").is_nan());
        assert_eq!(day(1733234401000.0).unwrap(), "2024-12-03");
    }

    #[test]
    fn text() {
        assert_eq!(trunc("héllo", 3), "hé…");
        assert_eq!(trunc("abc", 3), "abc");
        assert_eq!(one_line("  a\n\n b\tc "), "a b c");
        // One pass, the same as collapsing then cutting, at every width.
        for s in ["", "  ", "a", " a b ", "héllo wörld\n\n x", "ab  cd\t\tef ", "x y", "\u{1f600} \u{1f600}\n\u{1f600}"]
        {
            for max in 0..14 {
                assert_eq!(one_line_trunc(s, max), trunc(&one_line(s), max), "{s:?} at {max}");
            }
        }
        assert_eq!(group(1234567), "1,234,567");
        assert_eq!(size(1536), "1.5 kB");
        assert_eq!(size(52_429_430), "52.4 MB", "decimal units, as the issue's example");
        assert_eq!(size(999), "999 B");
        assert_eq!(size(999_960), "1.0 MB");
        assert_eq!(size(340_000), "340 kB");
        assert_eq!(count(1, "entry", "entries"), "1 entry");
        assert_eq!(count(2, "entry", "entries"), "2 entries");
        assert_eq!(trunc_left("/a/b/c.jsonl", 8), "…c.jsonl");
        // Wide characters take two columns: cuts count columns, not characters.
        assert_eq!(width("日本語"), 6);
        assert_eq!(trunc("日本語テキスト", 6), "日本…");
        assert_eq!(trunc_left("日本語テキスト", 6), "…スト");
        assert_eq!(one_line_trunc("日本 語", 4), "日…");
        assert_eq!(fit("ab日本語", 5), "ab日…");
        assert_eq!(fit("\x1b[1mabcdef\x1b[0m", 4), "\x1b[1mabc…\x1b[0m");
        assert_eq!(visible_width("\x1b[31mab\x1b[0m"), 2);
        assert_eq!(wrap("aa bb cc", 2, 17), "aa bb cc");
        assert_eq!(wrap("aaaa bbbb cccc", 2, 12), "aaaa bbbb\n  cccc");
    }
}
