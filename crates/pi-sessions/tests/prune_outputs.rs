//! `prune`'s outputs, kept: a change of prune's implementation must give the same bytes, exit
//! codes and messages (generated sessions bent into the shapes prune meets), and lines with
//! invalid UTF-8 are kept byte for byte.

use std::fs;

use serde_json::Value;

mod common;
use common::*;

#[test]
fn prune_keeps_lines_with_invalid_utf8_byte_for_byte() {
    let t = Tmp::new("utf8");
    let dir = t.0.join("sessions/--w--");
    fs::create_dir_all(&dir).unwrap();
    let f = dir.join("s.jsonl");
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"{\"type\":\"session\",\"version\":3,\"id\":\"u8\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff\xfe byte\"}}\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"dead\",\"parentId\":\"a\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"user\",\"content\":\"gone \xc3\"}}\n");
    bytes.extend_from_slice(b"not json \xff\n");
    let keep = b"{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"2025-01-01T00:00:03.000Z\",\"message\":{\"role\":\"user\",\"content\":\"ok \xe9\"}}\n";
    bytes.extend_from_slice(keep);
    fs::write(&f, &bytes).unwrap();
    set_mtime(&f, hours_ago(2));
    let o = run(&t.0, &["prune", f.to_str().unwrap(), "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut want = bytes.clone();
    let cut = |w: &mut Vec<u8>, from: &[u8]| {
        let i = w.windows(from.len()).position(|x| x == from).unwrap();
        let end = i + w[i..].iter().position(|&b| b == b'\n').unwrap() + 1;
        w.drain(i..end);
    };
    cut(&mut want, b"{\"type\":\"message\",\"id\":\"dead\"");
    cut(&mut want, b"not json");
    assert_eq!(
        fs::read(&f).unwrap(),
        want,
        "invalid UTF-8 kept as it was, the dead branch and the malformed line dropped"
    );
}

// ---------------------------------------------------------------------------
// prune: today's outputs, kept (a change of prune's implementation must give the same bytes)
// ---------------------------------------------------------------------------

/// FNV-1a, 64 bits: a stable digest of a run's outputs.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // A separator, so that moving bytes between fields changes the digest.
    *h ^= 0xff;
    *h = h.wrapping_mul(0x0100_0000_01b3);
}

/// A generated session, bent into one of the shapes prune meets: malformed and blank lines,
/// CRLF, invalid UTF-8 on and off the path, no final newline, dangling parents, lines longer
/// than a read block, torn tails.
fn golden_input(seed: u64, variant: usize) -> (Vec<u8>, Option<String>) {
    let n = 20 + (seed as usize * 13) % 150;
    let (_, lines) = gen_session(seed, n);
    let mut r = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut leaf = None;
    for (i, l) in lines.iter().enumerate() {
        let mut b = l.as_bytes().to_vec();
        if i > 0 {
            match variant {
                1 if r.below(6) == 0 => {
                    out.push(
                        [&b"not json"[..], b"null", b"5", b"   ", b"", b"{\"broken\"", b"[1,2]"][r.below(7)].to_vec(),
                    );
                }
                2 if r.below(3) == 0 => b.push(b'\r'),
                3 if r.below(3) == 0 => {
                    // Invalid UTF-8 inside a string (the line still parses, repaired).
                    if let Some(at) = b.windows(2).position(|w| w == "é".as_bytes()) {
                        b.splice(at..at + 2, [0xff, 0xe9]);
                    } else if let Some(at) = b.windows(10).position(|w| w == b"\"summary\":") {
                        b.splice(at + 11..at + 11, [0xc3]);
                    } else if let Some(at) = b.windows(8).position(|w| w == b"\"label\":") {
                        b.splice(at + 9..at + 9, [0xfe]);
                    }
                }
                5 if r.below(8) == 0 && l.contains("\"type\":\"label\"") => {
                    // A parent that is not in the file.
                    let s = String::from_utf8(b).unwrap();
                    let at = s.find("\"parentId\":").unwrap() + 11;
                    let end = at + s[at..].find(",\"timestamp\"").unwrap();
                    b = format!("{}\"ghost-{i}\"{}", &s[..at], &s[end..]).into_bytes();
                }
                6 if r.below(25) == 0 && l.contains("\"role\":\"user\"") => {
                    // Longer than a 1 MiB read block.
                    let pad = "x".repeat((1 << 20) + r.below(1 << 19));
                    b = String::from_utf8(b)
                        .unwrap()
                        .replacen("\"role\":\"user\"", &format!("\"role\":\"user\",\"pad\":\"{pad}\""), 1)
                        .into_bytes();
                }
                _ => {}
            }
            if variant == 4 && l.contains("\"type\":\"message\"") && r.below(3) == 0 {
                leaf = serde_json::from_str::<Value>(l).ok().and_then(|v| v["id"].as_str().map(str::to_string));
            }
        }
        out.push(b);
    }
    let mut bytes = out.join(&b"\n"[..]);
    match variant {
        7 => {}                                              // no final newline
        8 => bytes.extend_from_slice(b"\n{\"type\":\"mess"), // torn tail: refused
        9 => bytes.extend_from_slice(b"\n\n  \n"),           // blank lines at the end
        _ => bytes.push(b'\n'),
    }
    (bytes, if variant == 4 { leaf.or(Some("e0003".into())) } else { None })
}

/// Output with the temp root as `<T>`; on Windows its paths' separators (`\\`, `\\\\` in JSON)
/// as `/`, so that one table serves every platform.
fn shown(out: &str, root: &str) -> String {
    let out = out.replace(root, "<T>");
    if !cfg!(windows) {
        return out;
    }
    out.replace(&root.replace('\\', "\\\\"), "<T>").replace("\\\\", "/").replace('\\', "/")
}

/// One prune of a golden input: a digest of the exit code, stdout, stderr, the file's bytes
/// after, the names in its folder and whether the mtime was kept.
fn golden_case(t: &Tmp, seed: u64, variant: usize, env: &[(&str, &str)]) -> String {
    let dir = t.0.join(format!("sessions/--g{seed}-{variant}--"));
    fs::create_dir_all(&dir).unwrap();
    let f = dir.join("s.jsonl");
    let (bytes, leaf) = golden_input(seed, variant);
    fs::write(&f, &bytes).unwrap();
    let mtime = hours_ago(2);
    set_mtime(&f, mtime);
    let fs_ = f.to_str().unwrap();
    let root = t.0.to_str().unwrap();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut args = vec!["prune", fs_];
    if let Some(l) = &leaf {
        args.extend(["--leaf", l.as_str()]);
    }
    for extra in [&["--dry-run"][..], &["--dry-run", "--json"], &[], &["--json"]] {
        let mut a = args.clone();
        a.extend_from_slice(extra);
        let o = run_env(&t.0, &a, env);
        fnv(&mut h, o.code.to_string().as_bytes());
        fnv(&mut h, shown(&o.stdout, root).as_bytes());
        fnv(&mut h, shown(&o.stderr, root).as_bytes());
    }
    let after = fs::read(&f).unwrap();
    fnv(&mut h, &after);
    let mut names: Vec<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    fnv(&mut h, names.join(",").as_bytes());
    let kept = fs::metadata(&f).unwrap().modified().unwrap() == mtime;
    fnv(&mut h, &[kept as u8]);
    format!("{seed}/{variant} {} {} {h:016x}", bytes.len(), after.len())
}

/// Recorded from `prune` as it was before it streamed (it read the whole file): seeds × shapes,
/// each `seed/variant input-bytes output-bytes digest`. Re-recorded on 2026-12-07 for issue 46's
/// text only (decimal units, "1 entry", paths relative to the session folder, refusals that end
/// with "not pruned"): every input and output byte count stayed the same. `PRUNE_GOLDEN_PRINT=1` prints the table.
const PRUNE_GOLDEN: &str = "
1/0 8620 3404 52a956d4d550aeaa
2/0 10644 8166 19a8801b607e03c1
3/0 13354 4873 a63c46baa5c9f620
4/0 16031 4816 e191d4083ae90a31
5/0 19099 6285 b6de346d75f22247
6/0 20473 6738 0d401ce4c8acffc0
101/1 28896 7274 6362c45f66fa9b68
102/1 29438 10921 23ff397146641f62
103/1 33831 13823 678cce54545b0dbd
104/1 4626 3890 411fb3ace06555ef
105/1 8136 3939 695f5f34f1517250
106/1 11019 6582 7905c31317aee3f0
201/2 17682 5598 7d4aedbbd3d719bb
202/2 19647 7367 cbc84c28fd5770ac
203/2 22380 6329 c0a5a0125d4e7d45
204/2 25213 7280 22ddb1458b267869
205/2 27536 3889 a404227000f4f13b
206/2 31973 4295 18b60bb84e3fb8c0
301/3 6802 3339 1c06ee39c7b59ab6
302/3 10737 9337 9ab0f214a7c521c5
303/3 11933 2777 9e6ba63d1ecf2cb5
304/3 14645 3740 557db4ebf8f13c52
305/3 17419 7758 33c020caeaf741d2
306/3 20489 1759 22c6b5dc68cc7da3
401/4 29595 8675 7520e0551c241635
402/4 30693 11672 6ce26dbe7fe624c1
403/4 33406 6993 f4bfa92714c162dd
404/4 4065 3540 5a552e29ffa723ca
405/4 8248 3413 1bcd81ecbf5972e5
406/4 9294 3079 fd6631718c5e9a57
501/5 18991 1431 e10e8c792b2da3f9
502/5 19685 2902 f8f2f27fc9bf379b
503/5 24176 4909 451d969f11637400
504/5 26030 7013 dc67f50e7eb33596
505/5 27413 819 1c79d5901f88a065
506/5 32943 7485 76626fb60fde7065
661/6 1501019 1497854 6bbd76ba2802960a
662/6 4281666 2639 8019cb33c644fb7a
701/7 28730 8139 46849b5e3d9f1bcf
702/7 32029 12449 4bb44703ff0c1294
703/7 34143 5035 cfea0699b93bd055
704/7 5203 3870 9e27760a467f9634
705/7 7323 4888 17c7a8c38becf4f8
706/7 9910 4789 b0971ad0944639dc
801/8 17863 17863 441aa759eb1435a1
802/8 20861 20861 d209843c655f6fb6
803/8 24263 24263 d9c2edd1edd726df
804/8 25997 25997 3c77b1d3bded7be8
805/8 30183 30183 e5b17114ee7af0cc
806/8 31971 31971 ae99b959a8c2bf2d
901/9 7693 7484 155e191785b6a31c
902/9 9350 6546 874c0047f79116e7
903/9 12877 4942 b165138f5b03f8f2
904/9 15258 6704 bd2f775cd3fc0bf0
905/9 18218 2242 cd0a01a62d5ad019
906/9 20196 4754 dcf5bec20007a6d8
";

/// Runs the golden inputs through prune (with `env`) and compares with the table.
fn golden_check(env: &[(&str, &str)]) {
    let t = Tmp::new("golden");
    let mut got = Vec::new();
    for variant in 0..10 {
        let seeds: &[u64] = if variant == 6 { &[61, 62] } else { &[1, 2, 3, 4, 5, 6] };
        for &seed in seeds {
            got.push(golden_case(&t, seed + variant as u64 * 100, variant, env));
        }
    }
    let got = got.join("\n");
    if std::env::var_os("PRUNE_GOLDEN_PRINT").is_some() {
        eprintln!("{got}");
    }
    let want: Vec<&str> = PRUNE_GOLDEN.trim().lines().map(str::trim).collect();
    let got: Vec<&str> = got.lines().collect();
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(w, g, "seed/variant input-bytes output-bytes digest ({env:?})");
    }
    assert_eq!(want.len(), got.len());
}

#[test]
fn prune_outputs_are_todays() {
    golden_check(&[]);
}

/// The same with the smallest read blocks and copy pieces (4 KiB; the test inputs are smaller
/// than the default 8 MiB): lines cut at block ends, lines longer than a block, many pieces.
#[test]
fn prune_outputs_are_todays_in_small_blocks() {
    golden_check(&[("PI_SESSION_NATIVE_CLI_READ_CHUNK", "4096")]);
}
