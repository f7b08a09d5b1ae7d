// The corpus's shared builders: fixed ids and times (SID, ID, TS, MS), the cwd, line and byte
// joiners, entry builders (header, user, asst, tool, sys, entry) and two whole conversations (v3, v1).

export const SID = (n) => `0190aaaa-0000-7000-8000-${String(n).padStart(12, "0")}`;
export const ID = (n) => `a${String(n).padStart(7, "0")}`;
export const TS = (n) => new Date(Date.UTC(2024, 0, 2, 3, 4, 5) + n * 1000).toISOString();
export const MS = (n) => Date.UTC(2024, 0, 2, 3, 4, 5) + n * 1000;
export const CWD = "/tmp/pi-diff-cwd/project-a";
// A file URL cwd: on Windows fileURLToPath needs a drive (without one the reference's list()
// throws ERR_INVALID_FILE_URL_PATH, and so does ours).
export const FILE_URL_CWD =
  process.platform === "win32" ? "file:///C:/tmp/pi-diff-cwd/url%20dir" : "file:///tmp/pi-diff-cwd/url%20dir";

export const J = (o) => JSON.stringify(o);
export const lines = (...ls) => Buffer.from(`${ls.join("\n")}\n`, "utf8");
export const raw = (...parts) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p)));

export const header = (n = 1, extra = {}) => ({
  type: "session",
  version: 3,
  id: SID(n),
  timestamp: TS(0),
  cwd: CWD,
  ...extra,
});
export const usage = {
  input: 10,
  output: 20,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 30,
  cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.30000000000000004 },
};
export const user = (n, text, parent, extra = {}) => ({
  type: "message",
  id: ID(n),
  parentId: parent,
  timestamp: TS(n),
  message: { role: "user", content: text, timestamp: MS(n) },
  ...extra,
});
export const asst = (n, text, parent, extra = {}) => ({
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
export const tool = (n, parent) => ({
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
export const sys = (n, parent, content = "You are helpful.", extra = {}) => ({
  type: "message",
  id: ID(n),
  parentId: parent,
  timestamp: TS(n),
  message: { role: "system", content, timestamp: MS(n), ...extra },
});
export const entry = (type, n, parent, fields) => ({ type, id: ID(n), parentId: parent, timestamp: TS(n), ...fields });

/** A conversation touching every entry type (v3). */
export function basicEntries() {
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

export function v1Entries() {
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
