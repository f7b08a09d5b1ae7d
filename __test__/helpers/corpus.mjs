// Adversarial session-file corpus, generated at test time (never committed).
// corpus() returns [{ name, bytes: Buffer, note }]. All timestamps and ids are fixed, so files are identical on
// every run; ids look like real ones (8 hex chars, UUIDs) so the normaliser treats them like real ones.

const SID = (n) => `0190aaaa-0000-7000-8000-${String(n).padStart(12, "0")}`;
const ID = (n) => `a${String(n).padStart(7, "0")}`;
const TS = (n) => new Date(Date.UTC(2024, 0, 2, 3, 4, 5) + n * 1000).toISOString();
const MS = (n) => Date.UTC(2024, 0, 2, 3, 4, 5) + n * 1000;
const CWD = "/tmp/pi-diff-cwd/project-a";
// A file URL cwd: on Windows fileURLToPath needs a drive (without one the reference's list()
// throws ERR_INVALID_FILE_URL_PATH, and so does ours).
export const FILE_URL_CWD =
  process.platform === "win32" ? "file:///C:/tmp/pi-diff-cwd/url%20dir" : "file:///tmp/pi-diff-cwd/url%20dir";

const J = (o) => JSON.stringify(o);
const lines = (...ls) => Buffer.from(`${ls.join("\n")}\n`, "utf8");
const raw = (...parts) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p)));

const header = (n = 1, extra = {}) => ({
  type: "session",
  version: 3,
  id: SID(n),
  timestamp: TS(0),
  cwd: CWD,
  ...extra,
});
const usage = {
  input: 10,
  output: 20,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 30,
  cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.30000000000000004 },
};
const user = (n, text, parent, extra = {}) => ({
  type: "message",
  id: ID(n),
  parentId: parent,
  timestamp: TS(n),
  message: { role: "user", content: text, timestamp: MS(n) },
  ...extra,
});
const asst = (n, text, parent, extra = {}) => ({
  type: "message",
  id: ID(n),
  parentId: parent,
  timestamp: TS(n),
  message: {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-x",
    usage,
    stopReason: "stop",
    timestamp: MS(n),
    ...extra,
  },
});
const tool = (n, parent) => ({
  type: "message",
  id: ID(n),
  parentId: parent,
  timestamp: TS(n),
  message: {
    role: "toolResult",
    toolCallId: "call_1",
    toolName: "bash",
    content: [{ type: "text", text: "ok" }],
    isError: false,
    timestamp: MS(n),
  },
});
const sys = (n, parent, content = "You are helpful.", extra = {}) => ({
  type: "message",
  id: ID(n),
  parentId: parent,
  timestamp: TS(n),
  message: { role: "system", content, timestamp: MS(n), ...extra },
});
const entry = (type, n, parent, fields) => ({ type, id: ID(n), parentId: parent, timestamp: TS(n), ...fields });

/** A conversation touching every entry type (v3). */
function basicEntries() {
  return [
    sys(1, null, "You are helpful.", {
      sections: { rules: "be nice", 2: "two", 1: "one" },
      toolsAdded: [{ name: "bash", description: "run", parameters: { type: "object" } }],
    }),
    user(2, "hello 😀", ID(1)),
    asst(3, "hi there", ID(2)),
    entry("thinking_level_change", 4, ID(3), { thinkingLevel: "high" }),
    entry("model_change", 5, ID(4), { provider: "openai", modelId: "gpt-5" }),
    tool(6, ID(5)),
    entry("label", 7, ID(6), { targetId: ID(2), label: "start" }),
    entry("custom", 8, ID(7), { customType: "ext", data: { b: 1, 2: 0, 1: 1 } }),
    entry("custom_message", 9, ID(8), {
      customType: "ext",
      content: "note for model",
      display: true,
      details: { x: 1 },
    }),
    entry("session_info", 10, ID(9), { name: "  My session  " }),
    entry("usage", 11, ID(10), { kind: "summarize", provider: "anthropic", model: "m", usage, note: "n" }),
    entry("compaction", 12, ID(11), {
      summary: "summary of things",
      firstKeptEntryId: ID(3),
      tokensBefore: 1234,
      details: { files: ["a"] },
      fromHook: false,
      systemMessage: { role: "system", content: "You are helpful.", sections: { rules: "be nice" }, timestamp: MS(12) },
    }),
    user(
      13,
      [
        { type: "text", text: "after compaction" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
      ID(12),
    ),
    entry("context_edit", 14, ID(13), { targetId: ID(13), replacement: { content: "edited" } }),
    entry("branch_summary", 15, ID(3), { fromId: ID(14), summary: "went elsewhere", details: null, fromHook: true }),
    asst(16, "on the other branch", ID(15)),
  ];
}

function v1Entries() {
  // v1: no ids/parentIds; compaction refers to an index into the file's entries (header = index 0)
  const strip = (e) => {
    const { id, parentId, ...rest } = e;
    return rest;
  };
  return [
    { type: "session", id: SID(2), timestamp: TS(0), cwd: CWD },
    strip(user(1, "v1 hello", null)),
    strip(asst(2, "v1 reply", null)),
    strip(user(3, "v1 again", null)),
    strip(entry("compaction", 4, null, { summary: "v1 summary", firstKeptEntryIndex: 2, tokensBefore: 50 })),
    strip(entry("compaction", 5, null, { summary: "to header", firstKeptEntryIndex: 0, tokensBefore: 5 })),
    strip(entry("compaction", 6, null, { summary: "out of range", firstKeptEntryIndex: 99, tokensBefore: 5 })),
    strip(entry("compaction", 7, null, { summary: "string index", firstKeptEntryIndex: "2", tokensBefore: 5 })),
    strip(entry("compaction", 8, null, { summary: "float index", firstKeptEntryIndex: 1.5, tokensBefore: 5 })),
    { ...user(9, "v1 with a stale id", null), id: "stale-id", parentId: "whatever" },
    strip(user(10, "last", null)),
  ];
}

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

export function corpus() {
  const out = [];
  const add = (name, bytes, note = "") =>
    out.push({ name: name.endsWith(".jsonl") ? name : `${name}.jsonl`, bytes, note });
  const H = J(header());
  const b = basicEntries().map(J);

  add("01-valid-basic", lines(H, ...b));
  add("02-v1-basic", lines(...v1Entries().map(J)));
  add(
    "03-v2-hook",
    lines(
      J({ ...header(3), version: 2 }),
      J(user(1, "v2 hi", null)),
      J({
        ...user(2, "hook", ID(1)),
        message: { role: "hookMessage", customType: "h", content: "from hook", display: true, timestamp: MS(2) },
      }),
      J({ ...user(3, "null message", ID(2)), message: null }),
      J(asst(4, "reply", ID(3))),
    ),
    "message null is tolerated by migration",
  );
  add(
    "04-v1-hook-two-headers",
    lines(
      J({ type: "session", id: SID(4), timestamp: TS(0), cwd: CWD }),
      J({
        type: "message",
        timestamp: TS(1),
        message: { role: "hookMessage", customType: "h", content: "x", display: false, timestamp: MS(1) },
      }),
      J({ type: "session", id: SID(5), timestamp: TS(2), cwd: "/elsewhere" }),
      J({
        type: "message",
        timestamp: TS(3),
        message: { role: "user", content: "after 2nd header", timestamp: MS(3) },
      }),
    ),
  );
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
    "29-dup-entry-ids",
    lines(
      H,
      J(user(1, "first a1", null)),
      J(asst(2, "reply", ID(1))),
      J({ ...user(1, "second with same id", ID(2)) }),
      J(asst(3, "child of dup", ID(1))),
    ),
  );
  add(
    "30-orphans",
    lines(
      H,
      J(user(1, "root", null)),
      J(asst(2, "orphan", "deadbeef")),
      J(user(3, "child of orphan", ID(2))),
      J(asst(4, "another orphan", "ffffffff")),
      J(user(5, "on root", ID(1))),
    ),
  );
  add(
    "31-self-parent",
    lines(
      H,
      J(user(1, "root", null)),
      J({ ...asst(2, "self", null), parentId: ID(2) }),
      J(user(3, "child of self", ID(2))),
      J(asst(4, "leaf on root", ID(1))),
    ),
    "self-parented entry off the leaf path",
  );
  add(
    "32-weird-ids",
    lines(
      H,
      J(user(1, "root", null)),
      J({ ...asst(2, "null id", ID(1)), id: null }),
      J((({ id, ...e }) => e)(asst(3, "missing id", ID(1)))),
      J({ ...asst(4, "number id", ID(1)), id: 5 }),
      J({ ...user(5, "parent is number 5", null), parentId: 5 }),
      J({ ...asst(6, "empty-string id", ID(1)), id: "" }),
      J({ ...user(7, "parent is empty string", null), parentId: "" }),
      J({ ...user(8, "unicode id", ID(1)), id: "é😀\n" }),
      J({ ...asst(9, "leaf", ID(1)), parentId: ID(1) }),
    ),
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
  add(
    "38-labels",
    lines(
      H,
      b[0],
      b[1],
      J(entry("label", 20, ID(2), { targetId: "nope0000", label: "on missing" })),
      J(entry("label", 21, ID(20), { targetId: ID(1), label: "first" })),
      J(entry("label", 22, ID(21), { targetId: ID(1), label: "" })),
      J(entry("label", 23, ID(22), { targetId: ID(2), label: "kept" })),
      J(entry("label", 24, ID(23), { targetId: ID(2) })),
      J(entry("label", 25, ID(24), { targetId: ID(2), label: "again" })),
      J(user(26, "after labels", ID(25))),
    ),
  );
  add(
    "39-compaction-missing-first-kept",
    lines(
      H,
      b[0],
      b[1],
      b[2],
      J(entry("compaction", 20, ID(3), { summary: "s", firstKeptEntryId: "99999999", tokensBefore: 1 })),
      J(user(21, "after", ID(20))),
    ),
  );
  add(
    "40-context-edits",
    lines(
      H,
      b[0],
      b[1],
      b[2],
      J(tool(4, ID(3))),
      J(
        entry("custom_message", 5, ID(4), { customType: "c", content: [{ type: "text", text: "cm" }], display: false }),
      ),
      J(entry("context_edit", 6, ID(5), { targetId: ID(2), replacement: { content: "user edit 1" } })),
      J(
        entry("context_edit", 7, ID(6), {
          targetId: ID(2),
          replacement: { content: [{ type: "text", text: "user edit 2 wins" }] },
        }),
      ),
      J(entry("context_edit", 8, ID(7), { targetId: ID(3), replacement: { content: "asst string -> block" } })),
      J(entry("context_edit", 9, ID(8), { targetId: ID(4), replacement: null })),
      J(entry("context_edit", 10, ID(9), { targetId: ID(5), replacement: {} })),
      J(entry("context_edit", 11, ID(10), { targetId: "missing0", replacement: { content: "x" } })),
      J(entry("context_edit", 12, ID(11), { targetId: ID(1), replacement: { content: "system untouched" } })),
      J(entry("context_edit", 13, ID(2), { targetId: ID(3), replacement: { content: "off path" } })),
      J(entry("context_edit", 14, ID(12), { targetId: ID(5), replacement: 5 })),
      J(user(15, "tail", ID(14))),
    ),
  );
  add(
    "41-compaction-kept-range",
    lines(
      H,
      b[0],
      b[1],
      J(
        sys(3, ID(2), [{ type: "text", text: "later system" }], {
          toolsRemoved: [{ name: "bash" }],
          sections: { rules: null },
        }),
      ),
      J(asst(4, "r", ID(3))),
      J(entry("compaction", 5, ID(4), { summary: "old", firstKeptEntryId: ID(2), tokensBefore: 10 })),
      J(user(6, "u", ID(5))),
      J(
        entry("compaction", 7, ID(6), {
          summary: "new",
          firstKeptEntryId: ID(3),
          tokensBefore: 20,
          systemMessage: { role: "system", content: "snap", timestamp: 1 },
        }),
      ),
      J(entry("compaction", 8, ID(7), { summary: "self kept", firstKeptEntryId: ID(8), tokensBefore: -0 })),
      J(user(9, "end", ID(8))),
    ),
  );
  add(
    "42-model-thinking",
    lines(
      H,
      J(entry("model_change", 1, null, { provider: "p1", modelId: "m1" })),
      J(entry("thinking_level_change", 2, ID(1), { thinkingLevel: "low" })),
      J({ ...asst(3, "no provider", ID(2)), message: { role: "assistant", content: [], timestamp: MS(3) } }),
      J(entry("thinking_level_change", 4, ID(3), { thinkingLevel: null })),
      J(entry("model_change", 5, ID(4), { provider: "p2" })),
    ),
  );
  add("43-header-only", lines(H));
  add("44-v3-no-ids", lines(H, ...v1Entries().slice(1, 4).map(J)));
  add("45-two-headers-v3", lines(H, b[0], J(header(45, { cwd: "/other" })), b[1]));
  add("46-header-number-id", lines(J({ ...header(), id: 5 }), b[0]));
  add("47-header-no-id", lines(J((({ id, ...h }) => h)(header())), b[0]));
  for (const [i, v] of [0, "2", null, 4, 2.5, -1].entries()) {
    add(
      `48-version-${i}-${String(v)}`,
      lines(
        J({ ...header(48 + i), version: v }),
        J((({ id, parentId, ...e }) => e)(user(1, "v", null))),
        J({ ...user(2, "hook", ID(1)), message: { role: "hookMessage", content: "h", timestamp: MS(2) } }),
      ),
    );
  }
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
  add(
    "50-tree-timestamps",
    lines(
      H,
      J(user(1, "root", null)),
      J({ ...asst(2, "c-2024-03", ID(1)), timestamp: "2024-03-01T00:00:00.000Z" }),
      J({ ...asst(3, "c-invalid", ID(1)), timestamp: "not a date" }),
      J({ ...asst(4, "c-2024-01", ID(1)), timestamp: "2024-01-01T00:00:00.000Z" }),
      J((({ timestamp, ...e }) => e)(asst(5, "c-missing", ID(1)))),
      J({ ...asst(6, "c-number", ID(1)), timestamp: 1700000000000 }),
      J({ ...asst(7, "c-2024-02", ID(1)), timestamp: "2024-02-01T00:00:00.000Z" }),
      J({ ...asst(8, "c-same", ID(1)), timestamp: "2024-02-01T00:00:00.000Z" }),
      J({ ...asst(9, "c-null", ID(1)), timestamp: null }),
      J({ ...asst(10, "c-date-only", ID(1)), timestamp: "2024-01-15" }),
      J(user(11, "leaf", ID(2))),
    ),
    "getTree() sorts siblings with NaN comparisons",
  );
  add(
    "51-session-names",
    lines(
      H,
      b[0],
      J(entry("session_info", 2, ID(1), { name: "first" })),
      J(entry("session_info", 3, ID(2), { name: "  \r\n spaced \t " })),
      J(entry("session_info", 4, ID(3), { name: null })),
      J(entry("session_info", 5, ID(4), { name: "last wins 😀" })),
    ),
  );
  add(
    "52-session-name-cleared",
    lines(
      H,
      b[0],
      J(entry("session_info", 2, ID(1), { name: "x" })),
      J(entry("session_info", 3, ID(2), { name: "   " })),
    ),
  );
  add(
    "53-typeerror-session-name-number",
    lines(H, b[0], J(entry("session_info", 2, ID(1), { name: 5 }))),
    "the reference throws a TypeError from getSessionName()",
  );
  add(
    "54-typeerror-message-null",
    lines(H, J({ ...user(1, "x", null), message: null })),
    "the reference throws a TypeError from context building",
  );
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
    "57-cycle-2",
    lines(H, J(user(1, "root", null)), J({ ...asst(2, "A", ID(3)) }), J({ ...user(3, "B", ID(2)) })),
    "2-entry parent cycle on the leaf path: the reference hangs on path walks",
  );
  add("58-header-paths", lines(J(header(58, { cwd: "relative/dir", parentSession: "~/parent.jsonl" })), b[0]));
  add("59-header-cwd-tilde", lines(J(header(59, { cwd: "~/proj" })), b[0]));
  add("60-header-cwd-file-url", lines(J(header(60, { cwd: FILE_URL_CWD })), b[0]));
  add("61-header-cwd-number", lines(J(header(61, { cwd: 42 })), b[0]));
  add(
    "62-header-bad-timestamp",
    lines(
      J(header(62, { timestamp: "garbage" })),
      J(user(1, "no ts", null, { message: { role: "user", content: "x" } })),
    ),
  );
  add(
    "63-listing-fields",
    lines(
      J(header(63, { parentSession: "/tmp/pi-diff-cwd/parent.jsonl" })),
      J(user(1, [{ type: "image", data: "A", mimeType: "image/png" }], null)),
      J(asst(2, "assistant text first", ID(1))),
      J(
        user(
          3,
          [
            { type: "text", text: "first" },
            { type: "text", text: "user text" },
          ],
          ID(2),
        ),
      ),
      J({ ...user(4, "string ts", ID(3)), message: { role: "user", content: "later", timestamp: "2030-01-01" } }),
      J({ ...user(5, "", ID(4)) }),
      J({
        ...asst(6, "", ID(5)),
        message: { role: "assistant", content: [{ type: "thinking", thinking: "t" }], timestamp: MS(6) },
      }),
      J({ ...user(7, "tool", ID(6)), message: { role: "toolResult", content: "tr", timestamp: 9e15 } }),
    ),
  );
  add(
    "64-unknown-entry-types",
    lines(H, b[0], J(entry("future_type", 2, ID(1), { payload: { x: [1, 2] } })), J(user(3, "after future", ID(2)))),
  );
  add(
    "65-entries-content-odd",
    lines(
      H,
      J(user(1, null, null)),
      J({
        ...asst(2, "", ID(1)),
        message: { role: "assistant", content: null, provider: "p", model: "m", timestamp: MS(2) },
      }),
      J(sys(3, ID(2), null)),
      J({ ...tool(4, ID(3)), message: { role: "toolResult", content: null, timestamp: MS(4) } }),
      J(entry("custom_message", 5, ID(4), { customType: "c", display: true })),
      J(entry("branch_summary", 6, ID(5), { fromId: "root", summary: "" })),
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
  add(
    `2024-01-02T03-04-05-678Z_${SID(67)}.jsonl`,
    lines(J(header(67)), b[0], b[1]),
    "a real-looking session file name",
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
  add(
    "70-numeric-ids",
    lines(
      H,
      `{"type":"message","id":1,"parentId":null,"timestamp":"${TS(1)}","message":{"role":"user","content":"id 1","timestamp":${MS(1)}}}`,
      `{"type":"message","id":"${ID(2)}","parentId":1.0,"timestamp":"${TS(2)}","message":{"role":"user","content":"parent 1.0","timestamp":${MS(2)}}}`,
      `{"type":"message","id":"${ID(3)}","parentId":1e0,"timestamp":"${TS(3)}","message":{"role":"user","content":"parent 1e0","timestamp":${MS(3)}}}`,
      `{"type":"message","id":-0,"parentId":"${ID(3)}","timestamp":"${TS(4)}","message":{"role":"user","content":"id -0","timestamp":${MS(4)}}}`,
      `{"type":"message","id":"${ID(5)}","parentId":0,"timestamp":"${TS(5)}","message":{"role":"user","content":"parent 0 (falsy)","timestamp":${MS(5)}}}`,
      `{"type":"label","id":"${ID(6)}","parentId":"${ID(3)}","timestamp":"${TS(6)}","targetId":1,"label":"numeric target"}`,
    ),
    "numeric ids compare as numbers (1 == 1.0 == 1e0)",
  );
  for (const [i, v] of ["3.0", '"3"', "true", "2.9999999999999999", "1e0", "3e0", '"1"'].entries()) {
    add(
      `71-version-raw-${i}`,
      lines(
        `{"type":"session","version":${v},"id":"${SID(71 + i)}","timestamp":"${TS(0)}","cwd":"${CWD}"}`,
        J((({ id, parentId, ...e }) => e)(user(1, "v", null))),
        J(user(2, "with id", ID(1))),
      ),
      `version ${v}`,
    );
  }
  add(
    "72-compaction-kept-label",
    lines(
      H,
      b[0],
      b[1],
      J(entry("label", 3, ID(2), { targetId: ID(2), label: "L1" })),
      J(asst(4, "after label", ID(3))),
      J(entry("compaction", 5, ID(4), { summary: "kept from a label", firstKeptEntryId: ID(3), tokensBefore: 7 })),
      J(entry("label", 6, ID(5), { targetId: ID(5), label: "on compaction" })),
      J(user(7, "end", ID(6))),
    ),
    "createBranchedSession re-chains past labels and remaps firstKeptEntryId",
  );
  // The same without the system message (its integer-like keys send a branch to the JS
  // path): createBranchedSession rewrites these lines as bytes.
  add(
    "87-branch-lines-past-labels",
    lines(
      H,
      J(user(1, "start", null)),
      J(entry("label", 2, ID(1), { targetId: ID(1), label: "L1" })),
      J(asst(3, "after label", ID(2))),
      J(entry("compaction", 4, ID(3), { summary: "kept from a label", firstKeptEntryId: ID(2), tokensBefore: 7 })),
      J(entry("label", 5, ID(4), { targetId: ID(4), label: "on compaction" })),
      J(entry("label", 6, ID(5), { targetId: ID(3), label: "L2" })),
      J(entry("compaction", 7, ID(6), { summary: "kept from the next", firstKeptEntryId: ID(6), tokensBefore: 9 })),
      J(user(8, "end", ID(7))),
    ),
    "createBranchedSession on raw lines: parents past labels and firstKeptEntryId of a label remapped",
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
  // Entry data of the wrong type where the reference calls a method on it: its TypeError's text
  // quotes the expression, so ours must throw from the same expression (or skip the same row).
  add(
    "77-typeerror-session-name-object",
    lines(H, b[0], J(entry("session_info", 2, ID(1), { name: { first: "x" } }))),
    "getSessionName(): entry.name?.trim is not a function",
  );
  add(
    "78-typeerror-content-number",
    lines(
      H,
      J({ ...user(1, "x", null), message: { role: "user", content: 5, timestamp: MS(1) } }),
      J(asst(2, "after", ID(1))),
    ),
    "listing: content.filter is not a function (the reference skips the session); context: kept as is",
  );
  add(
    "79-typeerror-system-tools",
    lines(
      H,
      J(sys(1, null, "base", { toolsAdded: 5 })),
      J(user(2, "hi", ID(1))),
      J(sys(3, ID(2), [{ type: "text", text: "later" }], { sections: 7, toolsRemoved: { name: "x" } })),
    ),
    "system messages whose tools are not iterable: appendCompaction's replay throws",
  );
  add(
    "80-typeerror-role-number",
    lines(
      H,
      J({ ...user(1, "x", null), message: { role: 5, content: null } }),
      J({ ...asst(2, "y", ID(1)), message: { role: "assistant", content: { text: "obj" } } }),
    ),
    "a numeric role and object content",
  );
  // getTree() sorts each child list with V8's Array.prototype.sort and the comparator
  // `new Date(a.timestamp).getTime() - new Date(b.timestamp).getTime()`. What decides the order: the times
  // (any value new Date() accepts, down to the millisecond), ties (the sort is stable), NaN results (invalid or
  // missing timestamps: the sort reads NaN as 0, "equal", which is not transitive), and V8's TimSort itself
  // (lists over 64 go through merges and galloping). Timestamps here are old and fixed, so the normaliser keeps them.
  {
    const kid = (n, parent, timestamp) => {
      const e = entry("custom", n, parent, { customType: "sort", data: "kid" });
      if (timestamp === undefined) delete e.timestamp;
      else e.timestamp = timestamp;
      return J(e);
    };
    const MISSING = undefined;
    const rows = [J(user(1, "root", null))];
    const group = (first, parentN, stamps) => {
      for (const [i, t] of stamps.entries()) rows.push(kid(first + i, ID(parentN), t));
    };
    // parents of the groups: siblings under the root, themselves out of order
    rows.push(kid(2, ID(1), "2024-03-01T00:00:00.000Z"), kid(3, ID(1), "2024-01-01T00:00:00.000Z"));
    rows.push(kid(4, ID(1), "2024-02-01T00:00:00.000Z"), kid(5, ID(1), "2024-01-01T00:00:00.000Z"));
    rows.push(kid(6, ID(1), "2023-12-31T23:59:59.999Z"), kid(7, ID(1), "bad"));
    // descending starts with NaNs inside
    group(10, 2, ["2024-03-01T00:00:00.000Z", "2024-02-01T00:00:00.000Z", "not a date", "2024-01-01T00:00:00.000Z"]);
    group(20, 3, ["2024-03-01T00:00:00.000Z", "2024-02-01T00:00:00.000Z", MISSING, {}, "2024-01-01T00:00:00.000Z"]);
    group(30, 4, ["2024-05-01T00:00:00.000Z", "x", "2024-04-01T00:00:00.000Z", "2024-03-01T00:00:00.000Z", "y"]);
    // one instant spelt many ways (ties keep file order), around earlier and later ones
    group(40, 5, [
      "2024-01-01T00:00:00.001Z",
      "2024-01-01T00:00:00.000Z",
      Date.UTC(2024, 0, 1),
      "2024-01-01T00:00:00Z",
      "2024-01-01T00:00:00.000+00:00",
      "2024-01-01t00:00:00.000z",
      ["2024-01-01T00:00:00.000Z"],
      "+002024-01-01T00:00:00.000Z",
      "2023-12-31T23:59:59.999Z",
      "2024-01-01T00:00:00.000Z",
    ]);
    // milliseconds apart, values new Date() turns into small numbers, and dates V8 rolls over
    group(60, 6, [
      "2024-01-01T00:00:00.002Z",
      "2024-01-01T00:00:00.001Z",
      "1969-12-31T23:59:59.999Z",
      true,
      false,
      null,
      0,
      -1,
      1.5,
      "1970-01-01T00:00:00.001Z",
      "2023-02-29T00:00:00.000Z",
      "2023-03-01T00:00:00.000Z",
      "2024-01-01T24:00:00.000Z",
      "2024-01-02T00:00:00.000Z",
      "0000-01-01T00:00:00.000Z",
      "2024-13-01T00:00:00.000Z",
    ]);
    // nested: the sort runs at every depth
    group(80, 10, ["2024-02-01T00:00:00.000Z", "2024-01-01T00:00:00.000Z", "nope"]);
    group(84, 80, ["2024-02-02T00:00:00.000Z", "2024-02-01T00:00:00.000Z"]);
    add("81-tree-sort-order", lines(H, ...rows), "getTree(): NaN times, ties, milliseconds, odd timestamp values");

    // 150 siblings: TimSort's runs, merges and galloping, with ties and NaNs mixed in (a fixed LCG)
    let seed = 12345;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    const many = [J(user(1, "root", null))];
    for (let i = 0; i < 150; i++) {
      const r = next() % 100;
      let t;
      if (r < 8) t = "invalid";
      else if (r < 12) t = MISSING;
      else if (r < 40)
        t = TS(i % 5); // frequent ties
      else if (i % 37 < 12)
        t = TS(1000 - i); // descending stretches
      else t = TS(next() % 500);
      many.push(kid(100 + i, ID(1), t));
    }
    add("82-tree-sort-many-siblings", lines(H, ...many), "getTree(): 150 siblings (TimSort merges)");
  }
  // new Date(value) throws for an object with no callable valueOf/toString: the reference's getTree() throws
  // that TypeError when the comparator first meets it, which needs a sibling; an only child is never compared.
  add(
    "83-tree-timestamp-throws",
    lines(
      H,
      J(user(1, "root", null)),
      J(user(2, "valid sibling", ID(1))),
      J({ ...user(3, "timestamp new Date() rejects", ID(1)), timestamp: { toString: 1 } }),
    ),
    "getTree(): TypeError: Cannot convert object to primitive value",
  );
  add(
    "84-tree-timestamp-throws-only-child",
    lines(
      H,
      J(user(1, "root", null)),
      J({ ...user(2, "only child", ID(1)), timestamp: { toString: 1 } }),
      J(user(3, "grandchild", ID(2))),
    ),
    "getTree(): never compares an only child, so no TypeError",
  );
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
  return out;
}

/** Two entries whose parent chain is a cycle, and the leaf on it. Used by the ours-only cycle test. */
export function cycleFile() {
  return lines(J(header(99)), J({ ...user(1, "A", ID(2)) }), J({ ...asst(2, "B", ID(1)) }));
}

export { SID, ID, TS, MS, CWD, header, user, asst, entry };
