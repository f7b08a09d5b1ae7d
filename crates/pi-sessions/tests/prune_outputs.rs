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
/// each `seed/variant input-bytes output-bytes digest`. `PRUNE_GOLDEN_PRINT=1` prints the table.
const PRUNE_GOLDEN: &str = "
1/0 8620 3404 36727ac0e6120ecf
2/0 10644 8166 bb37bf5b4076154c
3/0 13354 4873 ead6deb165719311
4/0 16031 4816 fa7fe6c467a1dd22
5/0 19099 6285 5c56499d31964ce8
6/0 20473 6738 6ce72ffd552ad5b1
101/1 28896 7274 de8fe29339a129b5
102/1 29438 10921 229a12da2e270623
103/1 33831 13823 d9376deca6cbf6e6
104/1 4626 3890 9578bb9f57f23628
105/1 8136 3939 017024b8643b9e75
106/1 11019 6582 c710913dd22733d3
201/2 17682 5598 d9b8bcfa2c11506e
202/2 19647 7367 8204aa82bdf4c8f3
203/2 22380 6329 fb1b8c510248dd70
204/2 25213 7280 d0fb49f216e91ffc
205/2 27536 3889 2aeb322479cf529a
206/2 31973 4295 9a36a87fdda2582b
301/3 6802 3339 0df3b5ffd477697f
302/3 10737 9337 ab6e94af22fded84
303/3 11933 2777 cb83aaf4ca4681ee
304/3 14645 3740 563fbd408eb1db85
305/3 17419 7758 aba6200da4a4cdbb
306/3 20489 1759 7354c48d0b15ab46
401/4 29595 8675 1273c17cb292b280
402/4 30693 11672 63a51e2917a8dd4c
403/4 33406 6993 6114235b84694c66
404/4 4065 3540 bd0451861dcd1f65
405/4 8248 3413 e3e4b2c7e3cd5dea
406/4 9294 3079 7b282221290ef096
501/5 18991 1431 fa20345b62ec9e3c
502/5 19685 2902 3cfdeaf564b232ee
503/5 24176 4909 069315670620c4d1
504/5 26030 7013 2a1a2b2b825d6127
505/5 27413 819 d2d9e224936586de
506/5 32943 7485 1b0726ff2a18cf70
661/6 1501019 1497854 d180095b02cb4e39
662/6 4281666 2639 1a1908587811fa63
701/7 28730 8139 10c14afa295fac4c
702/7 32029 12449 57fa4096946ce133
703/7 34143 5035 6c45766edf010bc6
704/7 5203 3870 0298591c15f1a7c5
705/7 7323 4888 425d91fbf49fed69
706/7 9910 4789 d97dfb6c801867c7
801/8 17863 17863 a4760ea70e2b9ccf
802/8 20861 20861 c8e940c6dbe9026c
803/8 24263 24263 101c725fad92e72d
804/8 25997 25997 140025d7fb77c9ea
805/8 30183 30183 3ed1c0b221e0d792
806/8 31971 31971 e6ddbaa9c60cb0b7
901/9 7693 7484 fa6c984d9831711d
902/9 9350 6546 3dc36bea091eff44
903/9 12877 4942 7c7d31d799653ce9
904/9 15258 6704 d3046dec3cf1badf
905/9 18218 2242 ae53b5cd9f838a7c
906/9 20196 4754 a598ca12249f6f01
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
