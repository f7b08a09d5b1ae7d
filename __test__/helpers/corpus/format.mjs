// Corpus cases about the file's bytes and JSON text: line endings, blank and malformed lines, BOM,
// invalid and straddling UTF-8, deep nesting, odd numbers, duplicate keys, escapes, NUL, huge lines.

import { asst, basicEntries, CWD, header, ID, J, lines, MS, raw, SID, TS, user } from "./build.mjs";

const NUMBERS_LINE = (n, parent) =>
  `{"type":"custom","customType":"numbers","data":{"a":1.0,"b":1e2,"c":-0,"d":1E400,"e":-1E400,"f":1e-400,"g":123456789012345678901234567890,"h":0.1,"i":5e-324,"j":1.5e+300,"k":-0.0,"l":0e0,"m":1E+2,"n":9007199254740993,"o":[1.10,2.50e1,-0e-0]},"id":"${ID(n)}","parentId":${J(parent)},"timestamp":"${TS(n)}"}`;

const DUP_KEYS_LINE = (n, parent) =>
  `{"type":"custom","customType":"dups","data":{"a":1,"b":2,"a":3,"2":"x","1":"y","2":"z"},"data2":1,"id":"${ID(n)}","parentId":${J(parent)},"timestamp":"${TS(n)}","timestamp":"${TS(n + 1)}"}`;

const ESCAPES_LINE = (n, parent) =>
  `{"type":"custom","customType":"esc","data":{"lone":"\\ud800","LONE":"\\uDC00x","pair":"\\ud83d\\ude00","ascii":"\\u0041\\u0062","slash":"\\/path\\/","ctl":"\\u0001\\u001f\\u007f","u2028":"\u2028\u2029","raw":"é😀","bs":"\\b\\f\\n\\r\\t"},"id":"${ID(n)}","parentId":${J(parent)},"timestamp":"${TS(n)}"}`;

function deep(depth, leaf) {
  return `${"[".repeat(depth)}${J(leaf)}${"]".repeat(depth)}`;
}

/** Build a file whose byte `boundary` falls inside a 4-byte emoji, followed by more entries. */
function straddle(boundary, headerLine, filler) {
  const prefix = Buffer.from(`${headerLine}\n`, "utf8");
  const emoji = Buffer.from("😀", "utf8");
  // message line: {"type":"message",...,"message":{"role":"user","content":"<pad>😀 tail","timestamp":...}}
  const head = `{"type":"message","id":"${ID(1)}","parentId":null,"timestamp":"${TS(1)}","message":{"role":"user","content":"`;
  const padLen = boundary - prefix.length - Buffer.byteLength(head) - 2; // emoji starts 2 bytes before the boundary
  const line1 = raw(head, "x".repeat(padLen), emoji, ` tail","timestamp":${MS(1)}}}\n`);
  return raw(prefix, line1, `${J(asst(2, filler, ID(1)))}\n`, `${J(user(3, "after the boundary", ID(2)))}\n`);
}

/** Adds the file-format cases to the corpus through `add(name, bytes, note)`. */
export function formatCases(add) {
  const H = J(header());
  const b = basicEntries().map(J);
  add(
    "05-malformed-lines",
    lines(H, b[0], "{", "not json", '{"a":1} x', "[1,2", "\u0000", b[1], '{"type":"message",', b[2]),
  );
  add("06-blank-lines", Buffer.from(`\n\n  \n${H}\n\t\n\r\n${b[0]}\n   \n${b[1]}\n\n\n${b[2]}\n\n`, "utf8"));
  add("07-crlf", Buffer.from(`${[H, ...b.slice(0, 5)].join("\r\n")}\r\n`, "utf8"));
  add("08-crlf-v2", Buffer.from(`${[J({ ...header(8), version: 2 }), ...b.slice(0, 5)].join("\r\n")}\r\n`, "utf8"));
  add("09-no-trailing-newline", Buffer.from(`${[H, ...b.slice(0, 4)].join("\n")}`, "utf8"));
  add(
    "10-truncated-partial",
    Buffer.from(
      `${[H, ...b.slice(0, 4)].join("\n")}\n{"type":"message","id":"${ID(50)}","parentId":"${ID(4)}","mess`,
      "utf8",
    ),
  );
  add("11-first-not-header", lines(b[1], H, b[2]));
  add("12-non-json", Buffer.from("hello world\nthis is not a session\n", "utf8"));
  add("13-empty", Buffer.alloc(0), "open() initialises an empty file with a header");
  add("14-whitespace-only", Buffer.from("\n \n\t\n\r\n", "utf8"));
  add("15-bom-header", raw("\uFEFF", `${H}\n`, `${b[1]}\n`), "JSON.parse rejects the BOM: the header line is skipped");
  add("16-bom-line-then-header", raw("\uFEFF\n", `${H}\n`, `${b[1]}\n`), "trim() strips a lone BOM: the line is blank");
  add(
    "17-invalid-utf8",
    raw(
      `${H}\n`,
      `${b[1]}\n`,
      `{"type":"custom","customType":"bad","data":"ff:`,
      Buffer.from([0xff]),
      " lone-lead:",
      Buffer.from([0xc3]),
      " trunc3:",
      Buffer.from([0xe2, 0x82]),
      " overlong:",
      Buffer.from([0xc0, 0xaf]),
      " surrogate:",
      Buffer.from([0xed, 0xa0, 0x80]),
      " cont:",
      Buffer.from([0x80, 0xbf]),
      ` end","id":"${ID(20)}","parentId":"${ID(2)}","timestamp":"${TS(20)}"}\n`,
      Buffer.from([0xfe, 0x7b, 0x0a]), // garbage byte before a brace, as its own line
      `${b[2].replace(`"parentId":"${ID(2)}"`, `"parentId":"${ID(20)}"`)}\n`,
    ),
  );
  add(
    "18-utf8-straddle-4096",
    straddle(4096, J(header(18, { note: "é".repeat(10) })), "filler"),
    "a 4-byte emoji crosses byte 4096 (header scan buffer)",
  );
  add(
    "19-utf8-straddle-1mib",
    straddle(1024 * 1024, H, "filler 😀".repeat(3)),
    "a 4-byte emoji crosses the 1 MiB read buffer",
  );
  add(
    "20-deep-1500",
    lines(
      H,
      b[0],
      `{"type":"custom","customType":"deep","data":${deep(1500, "bottom")},"id":"${ID(30)}","parentId":"${ID(1)}","timestamp":"${TS(30)}"}`,
    ),
  );
  add(
    "21-deep-1500-v2",
    lines(
      J({ ...header(21), version: 2 }),
      b[0],
      `{"type":"custom","customType":"deep","data":${deep(1500, "bottom")},"id":"${ID(30)}","parentId":"${ID(1)}","timestamp":"${TS(30)}"}`,
    ),
    "v2: migration re-serialises 1500 levels",
  );
  add(
    "22-deep-25k",
    lines(
      H,
      b[0],
      `{"type":"custom","customType":"deep","data":${deep(25_000, "bottom")},"id":"${ID(30)}","parentId":"${ID(1)}","timestamp":"${TS(30)}"}`,
      b[1].replace(`"parentId":"${ID(1)}"`, `"parentId":"${ID(30)}"`),
    ),
  );
  add("23-odd-numbers", lines(H, b[0], NUMBERS_LINE(40, ID(1))));
  add(
    "24-odd-numbers-v2",
    lines(J({ ...header(24), version: 2 }), b[0], NUMBERS_LINE(40, ID(1))),
    "v2: numbers re-serialised",
  );
  add(
    "25-dup-keys",
    lines(
      `{"type":"message","type":"session","version":3,"id":"${SID(25)}","id":"${SID(26)}","timestamp":"${TS(0)}","cwd":"${CWD}"}`,
      b[0],
      DUP_KEYS_LINE(41, ID(1)),
    ),
  );
  add(
    "26-dup-keys-v2",
    lines(
      `{"type":"session","version":2,"version":2,"id":"${SID(27)}","timestamp":"${TS(0)}","cwd":"${CWD}"}`,
      b[0],
      DUP_KEYS_LINE(41, ID(1)),
    ),
    "v2: last duplicate wins, at the first key's position",
  );
  add("27-escapes", lines(H, b[0], ESCAPES_LINE(42, ID(1))));
  add(
    "28-escapes-v2",
    lines(J({ ...header(28), version: 2 }), b[0], ESCAPES_LINE(42, ID(1))),
    "v2: escapes re-serialised (lowercase \\udxxx, / unescaped)",
  );
  add(
    "33-header-over-1mib",
    lines(
      J(header(33, { cwd: `/tmp/pi-diff-cwd/${"long".repeat(300_000)}` })),
      b[1].replace(`"parentId":"${ID(1)}"`, '"parentId":null'),
      b[2],
    ),
    "header line > 1 MiB: open() falls back to a full load; discovery skips it",
  );
  {
    const target = 1024 * 1024;
    const base = J(header(34, { pad: "" }));
    const pad = "p".repeat(target - Buffer.byteLength(base));
    add(
      "34-header-exactly-1mib-no-newline",
      Buffer.from(J(header(34, { pad })), "utf8"),
      "header ends exactly at the scan limit, no newline",
    );
  }
  add(
    "35-malformed-prefix-over-1mib",
    raw(`{"junk":"${"j".repeat(1_100_000)}\n`, `${H}\n`, `${b[1]}\n`),
    "a malformed first line > 1 MiB, then the header",
  );
  add("36-json-primitive-lines", lines(H, "null", "0", "[]", '"str"', "true", "false", "1", "{}", '""', b[0], b[1]));
  add("37-json-primitive-last", lines(H, b[0], b[1], '"str"'), "the leaf id is undefined");
  {
    // ~1.5 MB session, many entries, multi-byte text
    const ls = [H];
    let parent = null;
    for (let i = 1; i <= 1500; i++) {
      const e =
        i % 2
          ? user(i, `message ${i} ${"ü😀".repeat(200)}`, parent)
          : asst(i, `reply ${i} ${"日本".repeat(150)}`, parent);
      ls.push(J(e));
      parent = ID(i);
    }
    add("49-large-1500-entries", lines(...ls));
  }
  add("55-cr-separated", Buffer.from(`${H}\r${b[0]}\r${b[1]}\r`, "utf8"), "only \\n splits lines");
  add(
    "56-nul-bytes",
    raw(
      `${H}\n`,
      Buffer.from([0, 0, 0x0a]),
      `${b[0]}\n`,
      `{"type":"custom","customType":"n","data":"raw`,
      Buffer.from([0]),
      `nul","id":"${ID(30)}","parentId":"${ID(1)}","timestamp":"${TS(30)}"}\n`,
    ),
  );
  add(
    "66-u2028-raw",
    lines(
      H,
      b[0],
      `{"type":"custom","customType":"u","data":"raw\u2028sep\u2029","id":"${ID(30)}","parentId":"${ID(1)}","timestamp":"${TS(30)}"}`,
    ),
  );
  {
    // insignificant whitespace inside JSON lines (v3: kept raw on open; re-serialised by fork/branch)
    const spaced = (o) => JSON.stringify(o, null, 1).replace(/\n\s*/g, " ");
    add(
      "68-json-whitespace",
      Buffer.from(
        `${spaced(header(68))}\n\t${spaced(user(1, "spaced", null))}  \n ${spaced(asst(2, "also spaced", ID(1)))}\t\n`,
        "utf8",
      ),
    );
  }
  add(
    "69-escaped-keys-and-ids",
    lines(
      String.raw`{"ty\u0070e":"session","version":3,"i\u0064":"${SID(69)}","timestamp":"${TS(0)}","cwd":"${CWD}"}`,
      String.raw`{"type":"mess\u0061ge","id":"a\u0030000001","parent\u0049d":null,"timestamp":"${TS(1)}","message":{"role":"user","content":"escaped keys","timestamp":${MS(1)}}}`,
      String.raw`{"type":"message","id":"${ID(2)}","parentId":"\u00610000001","timestamp":"${TS(2)}","message":{"role":"\u0061ssistant","content":[],"provider":"p","model":"m","timestamp":${MS(2)}}}`,
      String.raw`{"type":"label","id":"${ID(3)}","parentId":"${ID(2)}","timestamp":"${TS(3)}","target\u0049d":"${ID(1)}","label":"esc"}`,
      String.raw`{"type":"Message","id":"${ID(4)}","parentId":"${ID(3)}","timestamp":"${TS(4)}","message":{"role":"user","content":"wrong-case type"}}`,
    ),
    "escapes in keys and ids: JSON.parse decodes them",
  );
  // Large files: ours keeps lines of files >= 1 MiB on disk (read back lazily), reads in 8 MiB chunks and parses
  // chunks >= 2 MiB on two threads. These cross all three thresholds.
  {
    const ls = [J({ ...header(73), version: 2 })];
    let parent = null;
    for (let i = 1; i <= 1400; i++) {
      ls.push(
        J(
          i % 3
            ? user(i, `v2 message ${i} ${"é😀".repeat(600)}`, parent)
            : {
                ...user(i, "hook", parent),
                message: { role: "hookMessage", content: "h".repeat(2000), display: true, timestamp: MS(i) },
              },
        ),
      );
      parent = ID(i);
    }
    add("73-v2-over-2mib", lines(...ls), "v2, > 2 MiB: parallel parse, then migration");
  }
  {
    // ~9 MiB: a 4-byte emoji straddles byte 8 MiB (the read chunk), a line with invalid UTF-8 sits near the middle
    const MiB = 1024 * 1024;
    const parts = [Buffer.from(`${H}\n`)];
    let size = parts[0].length;
    let i = 1;
    let parent = null;
    const push = (buf) => {
      parts.push(buf);
      size += buf.length;
    };
    while (size < 8 * MiB - 50_000) {
      push(Buffer.from(`${J(asst(i, `${i} ${"日本語".repeat(1300)}`, parent))}\n`));
      parent = ID(i++);
      if (i === 900) {
        push(
          raw(
            `{"type":"custom","customType":"bad-utf8","data":"x`,
            Buffer.from([0xe2, 0x82, 0xff, 0xc3]),
            `y","id":"${ID(i)}","parentId":"${parent}","timestamp":"${TS(i)}"}\n`,
          ),
        );
        parent = ID(i++);
      }
    }
    // one line that reaches across 8 MiB with an emoji split by the boundary
    const head = `{"type":"message","id":"${ID(i)}","parentId":"${parent}","timestamp":"${TS(i)}","message":{"role":"user","content":"`;
    const pad = 8 * MiB - size - Buffer.byteLength(head) - 2;
    push(raw(head, "z".repeat(pad), "😀", ` straddles 8 MiB","timestamp":${MS(i)}}}\n`));
    parent = ID(i++);
    for (let k = 0; k < 200; k++) {
      push(Buffer.from(`${J(user(i, `tail ${k} ${"ü".repeat(2000)}`, parent))}\n`));
      parent = ID(i++);
    }
    add(
      "74-over-8mib-chunk-straddle",
      Buffer.concat(parts),
      "~9 MiB: emoji across the 8 MiB read chunk, invalid UTF-8 line",
    );
  }
  add(
    "75-single-line-over-8mib",
    lines(H, J(user(1, `huge ${"w".repeat(8.5 * 1024 * 1024)} end`, null)), J(asst(2, "after the huge line", ID(1)))),
    "one line longer than the 8 MiB read chunk",
  );
  {
    // Long strings that the core takes out of lines before JSON.parse and puts back at
    // their paths: own "__proto__" keys, duplicate and escaped keys (which must not be
    // spliced), whitespace, arrays, integer-like keys, Latin-1 and UTF-16 values, lone
    // surrogates; padded past 2 MiB so the pieces are made on the core's thread too.
    const long = `line \\"q\\" \\n é 😀 \\ud800 ${"x".repeat(300)}`;
    const plain = "p".repeat(400);
    const bodies = [
      `{"__proto__":{"x":"${long}"}}`,
      `{"__proto__":"${long}"}`,
      `["${long}",{"0":"${long}","1":["${plain}"]}]`,
      `{"a":"${long}","a":"short"}`,
      `{"a":"short","a":"${long}"}`,
      `{"\\u0061":"${long}","b":1}`,
      `{ "sp" : "${long}" , "n": [ 1 , "${plain}" ] }`,
      `{"constructor":"${long}","toString":{"valueOf":"${long}"}}`,
    ];
    const ls = [H];
    let n = 1;
    for (const body of bodies)
      ls.push(
        `{"type":"custom","customType":"splice","data":${body},"id":"${ID(n)}","parentId":${J(n > 1 ? ID(n - 1) : null)},"timestamp":"${TS(n++)}"}`,
      );
    for (let i = 0; i < 2600; i++, n += 2)
      ls.push(J(user(n, `pad ${i} ${"y\n".repeat(400)} ü`, ID(n - 1))), J(asst(n + 1, "ok", ID(n))));
    add(
      "76-spliced-long-strings",
      lines(...ls),
      "long strings taken out before JSON.parse and put back at their paths",
    );
  }
  // forkFrom copies each entry as JSON.stringify(JSON.parse(line)); ours copies the bytes of lines it finds
  // canonical and re-serialises the rest. One non-canonical form per line (String.raw: the escapes reach the file),
  // between canonical lines, so a form wrongly taken as canonical shows up as copied bytes.
  {
    const c = (n, parent, data) =>
      `{"type":"custom","customType":"form","data":${data},"id":"${ID(n)}","parentId":${J(parent)},"timestamp":"${TS(n)}"}`;
    const forms = [
      String.raw`{"b":1,"2":0,"1":0}`,
      String.raw`{"b":1,"4294967294":"last array index, ordered first"}`,
      String.raw`{"b":1,"4294967295":"not an index, stays"}`,
      String.raw`{"b":1,"01":"not an index","-1":"nor this","1.5":"nor this"}`,
      String.raw`{"b":1,"b":2}`,
      String.raw`{"__proto__":{"x":1},"":0,"\u0000":1}`,
      String.raw`{ "a" : [ 1 , 2 ] }`,
      String.raw`[100000000000000000000,1e21,123456789012345678,9999999999999999,1000000000000000]`,
      String.raw`[0.000001,1e-7,1e-6,1.7976931348623157e308,2e308,0.1000000000000000055,12e-1,5E-1]`,
      String.raw`["\u0022\u005c\u000a\u001F\u007f\u2028\u00E9"]`,
      String.raw`["\uD800","\ud800\ud83d\ude00","\udc00\ud800"]`,
    ];
    const rows = [J(user(1, "root", null))];
    let n = 2;
    for (const f of forms) {
      rows.push(c(n, ID(n - 1), f));
      n++;
      rows.push(c(n, ID(n - 1), J({ canonical: n })));
      n++;
    }
    const prev = () => ID(n - 1);
    rows.push(
      String.raw`{"ty\u0070e":"custom","customType":"escaped key","data":1,"id":"${ID(n)}","parentId":"${prev()}","timestamp":"${TS(n)}"}`,
    );
    n++;
    rows.push(
      `{"type":"custom", "customType":"spaced","data":1,"id":"${ID(n)}","parentId":"${prev()}","timestamp":"${TS(n)}"} `,
    );
    n++;
    rows.push(
      `{"id":"${ID(n)}","type":"custom","customType":"key order kept","parentId":"${prev()}","timestamp":"${TS(n)}"}`,
    );
    add("85-fork-non-canonical", lines(` ${H}`, ...rows), "forkFrom re-serialises each non-canonical line");
  }
  add(
    "86-escaped-values-in-listing",
    lines(
      J(header(86)),
      String.raw`{"type":"message","id":"${ID(1)}","parentId":null,"timestamp":"${TS(1)}","message":{"role":"\u0075ser","content":[{"type":"t\u0065xt","text":"escaped block type"},{"type":"text","text":"plain"}],"timestamp":${MS(1)}}}`,
      String.raw`{"type":"message","id":"${ID(2)}","parentId":"${ID(1)}","timestamp":"${TS(2)}","message":{"role":"\u0061ssistant","content":[{"type":"\u0074ext","text":"answer"}],"provider":"p","model":"m","timestamp":${MS(5)}}}`,
    ),
    "escaped role and block-type values: JSON.parse decodes them (listing: activity time, texts)",
  );
}
