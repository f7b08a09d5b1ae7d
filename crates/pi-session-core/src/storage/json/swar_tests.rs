//! The string scanners and decoders against plain reference implementations, on random input.

use super::*;
use crate::storage::json::scan::{escape_len, find_string_special, scan_string_portable};
#[cfg(target_arch = "x86_64")]
use crate::storage::json::scan::{scan_string_blocks, scan_string_blocks_flagged};

/// `scan_string` one byte at a time, straight from the grammar: the reference every
/// scanner compiled for the target is compared with.
fn naive_scan(s: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        match *s.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += escape_len(s, i)?,
            c if c < 0x20 => return None,
            _ => i += 1,
        }
    }
}

/// `scan_string` (the path this build takes), and each scanner compiled here, against
/// `naive_scan`: on x86-64 both the SSE2 blocks and the portable scanner, whichever the
/// `portable` feature makes `scan_string` use.
fn check_scanners(bytes: &[u8], start: usize) {
    let want = naive_scan(bytes, start);
    let text = || String::from_utf8_lossy(&bytes[start..]).into_owned();
    assert_eq!(scan_string(bytes, start), want, "scan_string {:?}", text());
    assert_eq!(scan_string_portable(bytes, start), want, "portable {:?}", text());
    #[cfg(target_arch = "x86_64")]
    {
        assert_eq!(scan_string_blocks(bytes, start), want, "blocks {:?}", text());
        // Its plain flag (what the loader maps: no backslash, nothing above ASCII), past
        // the 16-byte fast path, which may say false.
        if let (Some((end, plain)), Some(_)) = (scan_string_blocks_flagged(bytes, start), want) {
            let raw = &bytes[start + 1..end - 1];
            if raw.len() > 16 {
                assert_eq!(plain, raw.is_ascii() && !raw.contains(&b'\\'), "plain {:?}", text());
            }
        }
    }
}

#[test]
fn scan_string_matches_naive() {
    let mut seed = 0x2545f4914f6cdd1du64;
    let pieces: [&[u8]; 12] = [
        b"a",
        b"bc",
        b"\\n",
        b"\\\"",
        b"\\u00e9",
        b"\\uZZ12",
        b"\\q",
        b"\x01",
        b"\xc3\xa9",
        b"\"",
        b"\\",
        b"xxxxxxxxxxxxxxx",
    ];
    for _ in 0..200_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let n = (seed % 24) as usize;
        let mut bytes = vec![b'"'];
        let mut r = seed;
        for _ in 0..n {
            r = r.rotate_left(7) ^ 0x9e37_79b9_7f4a_7c15;
            // Mostly plain runs, so the 16-byte blocks and the tail both get exercised.
            let k = (r % 40) as usize;
            bytes.extend_from_slice(if k < 12 { pieces[k] } else { pieces[11] });
        }
        check_scanners(&bytes, 0);
    }
}

/// Long strings (the 64-byte blocks): runs of backslashes of every length, across
/// block edges, escaped quotes, `\u` escapes cut by the end of the text, control
/// bytes, no closing quote; text after the string; against the naive scanner.
#[test]
fn long_strings_scan_as_naive() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..300_000 {
        let mut bytes = b"{\"k\":".to_vec();
        let start = bytes.len();
        bytes.push(b'"');
        let target = (next() % 400) as usize;
        while bytes.len() < start + target {
            let r = next();
            match r % 10 {
                0..=3 => bytes.extend(std::iter::repeat_n(b'a' + (r >> 8) as u8 % 26, 1 + (r >> 16) as usize % 70)),
                4..=6 => {
                    // A run of backslashes, then what follows it.
                    bytes.extend(std::iter::repeat_n(b'\\', 1 + (r >> 8) as usize % 9));
                    bytes.extend_from_slice(
                        [&b"n"[..], b"\"", b"u00e9", b"u12", b"q", b"/", b"\x01", b"x"][(r >> 20) as usize % 8],
                    );
                }
                7 => bytes.push([0x01, 0x1f, b'\t', 0xc3, 0xa9][(r >> 8) as usize % 5]),
                _ => bytes.extend_from_slice("é😀 ".as_bytes()),
            }
        }
        let r = next();
        if r % 4 != 0 {
            bytes.push(b'"');
        }
        if r % 3 == 0 {
            bytes.extend_from_slice(b",\"more\":\"text\\\" after\"}");
        }
        check_scanners(&bytes, start);
    }
}

/// The decoders against a plain one (runs between escapes via `str`), on random mixes
/// of ASCII runs of every length, escapes and 2-, 3- and 4-byte characters.
#[test]
fn block_decoders_match_a_plain_decoder() {
    fn plain(raw: &[u8]) -> Vec<u16> {
        let text = std::str::from_utf8(raw).unwrap();
        let mut out = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find('\\') {
            out.extend(rest[..at].encode_utf16());
            let (unit, len) = escape_unit(rest.as_bytes(), at);
            out.push(unit);
            rest = &rest[at + len..];
        }
        out.extend(rest.encode_utf16());
        out
    }
    let pieces: [&str; 14] = [
        "a",
        "\\n",
        "\\\"",
        "\\\\",
        "\\/",
        "\\u00e9",
        "\\u20AC",
        "\\ud83d\\ude00",
        "\\udc00",
        "\u{e9}",
        "\u{20ac}",
        "\u{1f600}",
        "\u{4e2d}",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ];
    let mut seed = 0x853c_49e6_748f_ea9bu64;
    for _ in 0..100_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut raw = String::new();
        let mut r = seed;
        for _ in 0..(seed % 20) {
            r = r.rotate_left(9) ^ 0x9e37_79b9_7f4a_7c15;
            let k = (r % 28) as usize;
            raw.push_str(if k < 14 { pieces[k] } else { &pieces[13][..k - 13] });
        }
        let want = plain(raw.as_bytes());
        let mut got = vec![7u16]; // appends after what is there
        decode_utf16_into(raw.as_bytes(), &mut got);
        assert_eq!(got[1..], want[..], "{raw:?}");
        let mut latin1 = vec![7u8];
        match decode_latin1_into(raw.as_bytes(), &mut latin1) {
            Ok(()) => assert!(latin1[1..].iter().map(|&b| u16::from(b)).eq(want.iter().copied()), "{raw:?}"),
            Err(at) => {
                // Stopped at the first unit above 0xFF, with the units before it.
                let stop = want.iter().position(|&u| u > 0xff).unwrap();
                assert!(latin1[1..].iter().map(|&b| u16::from(b)).eq(want[..stop].iter().copied()), "{raw:?}");
                assert_eq!(plain(&raw.as_bytes()[at..]), want[stop..], "{raw:?}");
            }
        }
        match Decoded::new(raw.as_bytes()) {
            Decoded::Latin1(b) => {
                assert!(want.iter().all(|&u| u <= 0xff) && b.iter().map(|&b| u16::from(b)).eq(want.iter().copied()))
            }
            Decoded::Utf16(u) => assert!(want.iter().any(|&u| u > 0xff) && u == want, "{raw:?}"),
        }
        // Scanned and decoded in one pass, from inside a line.
        let line = format!("[\"{raw}\",1]");
        let (mut latin1, mut utf16) = (vec![7u8], vec![7u16]);
        let (end, wide) = scan_decode(line.as_bytes(), 1, &mut latin1, &mut utf16).expect(&raw);
        assert_eq!(end, raw.len() + 3, "{raw:?}");
        assert_eq!(wide, want.iter().any(|&u| u > 0xff), "{raw:?}");
        if wide {
            assert_eq!((&utf16[1..], latin1.len()), (&want[..], 1), "{raw:?}");
        } else {
            assert!(latin1[1..].iter().map(|&b| u16::from(b)).eq(want.iter().copied()), "{raw:?}");
            assert_eq!(utf16.len(), 1);
        }
        // A control byte or a stray backslash: it ends (or fails) where the scanner
        // does, and a failure leaves both outputs as they were.
        let mut bad = line.clone().into_bytes();
        let cut = 2 + (seed as usize >> 8) % (raw.len() + 1);
        bad[cut] = [0x01, b'\\'][(seed >> 3) as usize & 1];
        let lens = (latin1.len(), utf16.len());
        let got = scan_decode(&bad, 1, &mut latin1, &mut utf16);
        assert_eq!(got.map(|g| g.0), scan_string(&bad, 1), "{:?}", String::from_utf8_lossy(&bad));
        if got.is_none() {
            assert_eq!((latin1.len(), utf16.len()), lens);
        }
    }
}

#[test]
fn find_string_special_matches_naive() {
    let mut seed = 0x9e3779b97f4a7c15u64;
    for len in 0..200 {
        for _ in 0..50 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // Mostly plain bytes, sometimes specials and high bytes.
                    match seed % 23 {
                        0 => b'"',
                        1 => b'\\',
                        2 => (seed >> 8) as u8 % 0x20,
                        3 => 0x80 | (seed >> 8) as u8,
                        _ => b'a' + (seed >> 8) as u8 % 26,
                    }
                })
                .collect();
            let naive = bytes.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
            assert_eq!(find_string_special(&bytes), naive, "{bytes:?}");
        }
    }
}
