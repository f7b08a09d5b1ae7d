// Adversarial payload generators, all driven by a seeded Rng. Every value here is one the reference accepts
// (no input that makes the reference itself throw a TypeError), but stresses serialisation fidelity:
// unicode, lone surrogates, long strings, deep nesting, -0, 1e21, NaN, integer-like keys, own "__proto__" keys,
// undefined-valued keys and array holes' cousins (undefined elements).

export const STRINGS = [
  "",
  " ",
  "hello world",
  "héllo wörld",
  "日本語のテキスト",
  "😀",
  "👨‍👩‍👧‍👦 family 👍🏽",
  "🏳️‍🌈 flag",
  "\ud800",
  "lone \udc00 low",
  "pair \udbff\udfff ok",
  "end high \ud83d",
  "nul \u0000 byte",
  "tab\tnew\nline\r\ncr\r",
  "\u2028line sep\u2029para sep",
  '"quotes" and \\backslash\\ and /slash/',
  "</script><!-- -->",
  "\u007f\u0080\u009f control",
  "\ufeffleading BOM",
  "\uffff\ufffe nonchars",
  "  padded  ",
  "ünïcödé ✓ ✗ → ←",
  "\u00e9 vs e\u0301",
  "zero\u200bwidth",
  '{"looks":"like json"}',
  "\\u0041 not an escape",
];

export const NUMBERS = [
  0,
  -0,
  1,
  -1,
  1.5,
  0.1 + 0.2,
  1e21,
  1e-7,
  1e300,
  5e-324,
  1.7976931348623157e308,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  -(Number.MAX_SAFE_INTEGER + 2),
  123456789.12345679,
  2 ** 53,
  1e16,
  4.35,
  100,
  -1e-300,
  0.000001,
  123e-20,
];

export const RARE_NUMBERS = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];

export const KEYS = [
  "a",
  "b",
  "text",
  "type",
  "id",
  "0",
  "1",
  "2",
  "10",
  "-1",
  "01",
  "1.5",
  "4294967294",
  "4294967295",
  "9007199254740993",
  "__proto__",
  "constructor",
  "toString",
  "",
  " ",
  "é",
  "😀",
  "\ud800",
  "key with spaces",
];

const WORDS = ["alpha", "beta", "gamma", "delta", "omega", "zeta", "kappa", "sigma", "lambda", "rho"];

/** Define a key as an own data property (works for "__proto__"). */
export function setKey(obj, key, value) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

export function advString(rng) {
  const r = rng.float();
  if (r < 0.03) {
    const unit = rng.pick(["x", "é", "😀", "ab\n", "\ud800", "日本"]);
    return unit.repeat(rng.range(5_000, 40_000));
  }
  if (r < 0.45) return rng.pick(STRINGS);
  const n = rng.range(1, 5);
  const parts = [];
  for (let i = 0; i < n; i++) parts.push(rng.bool(0.3) ? rng.pick(STRINGS) : rng.pick(WORDS));
  return parts.join(rng.pick([" ", "", "\n", "-"]));
}

export function advNumber(rng) {
  if (rng.bool(0.03)) return rng.pick(RARE_NUMBERS);
  if (rng.bool(0.6)) return rng.pick(NUMBERS);
  return rng.int(100000) / rng.pick([1, 10, 7]);
}

/** Nested value: alternating arrays and objects, `depth` levels. */
export function deepNest(depth, leaf = "bottom") {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { d: v };
  return v;
}

/** Arbitrary JSON-ish value with adversarial leaves. */
export function advValue(rng, depth = 0) {
  const r = rng.float();
  if (depth > 3 || r < 0.35) {
    return rng.weighted([
      [4, () => advString(rng)],
      [4, () => advNumber(rng)],
      [1, () => rng.bool()],
      [1, () => null],
      [1, () => undefined],
    ])();
  }
  if (r < 0.4) return deepNest(rng.pick([50, 300, 301]), advString(rng));
  if (r < 0.65) {
    const n = rng.range(0, 4);
    const arr = [];
    for (let i = 0; i < n; i++) arr.push(rng.bool(0.1) ? undefined : advValue(rng, depth + 1));
    return arr;
  }
  const obj = {};
  const n = rng.range(0, 5);
  for (let i = 0; i < n; i++) setKey(obj, rng.pick(KEYS), rng.bool(0.12) ? undefined : advValue(rng, depth + 1));
  return obj;
}

/** The object the brief calls out: integer-like keys out of order. */
export function intKeyObject() {
  return JSON.parse('{"b":1,"2":0,"1":1,"a":{"10":1,"9":2,"x":3}}');
}

// ------------------------------------------------------------------------------------------------ messages

/** Fixed, old (2023) millisecond timestamps: never inside the "now" window the normaliser replaces. */
export function msgTimestamp(rng) {
  rng.clock = ((rng.clock ?? 0) + 1 + rng.int(5)) % 1_000_000;
  return rng.weighted([
    [20, () => 1_700_000_000_000 + rng.clock * 1000],
    [1, () => 0],
    [1, () => undefined],
    [1, () => "2023-11-14T22:13:20.000Z"],
    [1, () => -1],
  ])();
}

export function textBlock(rng) {
  const b = { type: "text", text: advString(rng) };
  if (rng.bool(0.1)) b.textSignature = advString(rng);
  return b;
}

export function imageBlock(rng) {
  return { type: "image", data: rng.pick(["iVBORw0KGgo=", "R0lGODlhAQABAAAAACw=", ""]), mimeType: "image/png" };
}

export function userContent(rng) {
  if (rng.bool(0.4)) return advString(rng);
  const n = rng.range(0, 3);
  const out = [];
  for (let i = 0; i < n; i++) out.push(rng.bool(0.8) ? textBlock(rng) : imageBlock(rng));
  return out;
}

export function usage(rng) {
  const u = {
    input: advNumber(rng),
    output: advNumber(rng),
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: advNumber(rng),
    cost: { input: advNumber(rng), output: 0.001, cacheRead: 0, cacheWrite: 0, total: advNumber(rng) },
  };
  if (rng.bool(0.2)) u.extra = advValue(rng);
  return u;
}

function maybeExtra(rng, m) {
  if (rng.bool(0.25)) setKey(m, rng.pick(["extra", "details", "meta", "2", "__proto__"]), advValue(rng));
  if (rng.bool(0.08)) m.undef = undefined;
  return m;
}

export function userMessage(rng) {
  return maybeExtra(rng, {
    role: "user",
    content: rng.bool(0.05) ? null : userContent(rng),
    timestamp: msgTimestamp(rng),
  });
}

export function assistantMessage(rng) {
  const content = [];
  const n = rng.range(0, 3);
  for (let i = 0; i < n; i++) {
    content.push(
      rng.weighted([
        [3, () => textBlock(rng)],
        [1, () => ({ type: "thinking", thinking: advString(rng), thinkingSignature: "sig" })],
        [1, () => ({ type: "toolCall", id: `call_${rng.int(1000)}`, name: "bash", arguments: advValue(rng) })],
      ])(),
    );
  }
  const m = {
    role: "assistant",
    content: rng.weighted([
      [10, () => content],
      [1, () => null],
      [1, () => advString(rng)],
    ])(),
    api: "anthropic-messages",
    provider: rng.pick(["anthropic", "openai", "google", "😀provider"]),
    model: rng.pick(["claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro", ""]),
    usage: usage(rng),
    stopReason: rng.pick(["stop", "toolUse", "length", "error", "aborted"]),
    timestamp: msgTimestamp(rng),
  };
  if (rng.bool(0.1)) delete m.provider;
  if (rng.bool(0.1)) m.model = undefined;
  if (m.stopReason === "error") m.errorMessage = advString(rng);
  return maybeExtra(rng, m);
}

export function toolResultMessage(rng) {
  const m = {
    role: "toolResult",
    toolCallId: `call_${rng.int(1000)}`,
    toolName: rng.pick(["bash", "read", "edit", "write"]),
    content: rng.bool(0.05) ? null : userContent(rng),
    isError: rng.bool(0.2),
    timestamp: msgTimestamp(rng),
  };
  if (rng.bool(0.4)) m.details = advValue(rng);
  return maybeExtra(rng, m);
}

export function tool(rng, name) {
  return {
    name: name ?? rng.pick(["bash", "read", "edit", "write", "grep"]),
    description: advString(rng),
    parameters: { type: "object", properties: { path: { type: "string" } }, required: rng.bool() ? ["path"] : [] },
  };
}

export function systemMessage(rng) {
  const m = {
    role: "system",
    content: rng.weighted([
      [5, () => advString(rng)],
      [2, () => [textBlock(rng), textBlock(rng)]],
      [1, () => null],
      [1, () => []],
    ])(),
    timestamp: msgTimestamp(rng),
  };
  if (rng.bool(0.4)) {
    m.sections = {};
    const n = rng.range(0, 3);
    for (let i = 0; i < n; i++)
      setKey(m.sections, rng.pick(["rules", "env", "2", "1", "tools", "é"]), rng.bool(0.2) ? null : advString(rng));
  }
  if (rng.bool(0.4)) m.toolsAdded = [tool(rng), ...(rng.bool() ? [tool(rng)] : [])];
  if (rng.bool(0.2)) m.toolsRemoved = [{ name: rng.pick(["bash", "read", "edit", "write", "grep"]) }];
  return m;
}

export function customMessage(rng) {
  return maybeExtra(rng, {
    role: "custom",
    customType: rng.pick(["ext-a", "ext-b", "😀"]),
    content: userContent(rng),
    display: rng.bool(),
    details: rng.bool() ? advValue(rng) : undefined,
    timestamp: msgTimestamp(rng),
  });
}

export function bashExecutionMessage(rng) {
  const m = {
    role: "bashExecution",
    command: advString(rng),
    output: advString(rng),
    exitCode: rng.pick([0, 1, 127, null, undefined, -0]),
    cancelled: rng.bool(0.2),
    truncated: rng.bool(0.2),
    timestamp: msgTimestamp(rng),
  };
  if (m.truncated) m.fullOutputPath = "/tmp/pi-diff-cwd/out.txt";
  if (rng.bool(0.2)) m.excludeFromContext = true;
  return m;
}

export function oddMessage(rng) {
  return rng.weighted([
    [
      1,
      () => ({
        role: "hookMessage",
        customType: "legacy",
        content: advString(rng),
        display: true,
        timestamp: msgTimestamp(rng),
      }),
    ],
    [1, () => ({ role: "branchSummary", summary: advString(rng), fromId: "root", timestamp: msgTimestamp(rng) })],
    [1, () => ({ role: "compactionSummary", summary: advString(rng), tokensBefore: 5, timestamp: msgTimestamp(rng) })],
    [1, () => ({ role: "mystery", payload: advValue(rng) })],
    [1, () => ({ role: "user", content: intKeyObject(), timestamp: msgTimestamp(rng) })],
  ])();
}

export function anyMessage(rng) {
  return rng.weighted([
    [10, () => userMessage(rng)],
    [10, () => assistantMessage(rng)],
    [5, () => toolResultMessage(rng)],
    [3, () => systemMessage(rng)],
    [2, () => customMessage(rng)],
    [2, () => bashExecutionMessage(rng)],
    [1, () => oddMessage(rng)],
  ])();
}

/** Context-edit replacements: valid ones, and invalid ones the reference rejects with its own Error. */
export function replacement(rng) {
  return rng.weighted([
    [4, () => ({ content: advString(rng) })],
    [4, () => ({ content: [textBlock(rng)] })],
    [1, () => ({ content: [] })],
    [3, () => null],
    [1, () => ({})],
    [1, () => ({ content: 5 })],
    [1, () => ({ content: null })],
    [1, () => "just a string"],
    [1, () => undefined],
    [1, () => 42],
    [1, () => ({ content: { text: "object" } })],
    [1, () => ({ content: "x", extra: advValue(rng) })],
  ])();
}

export function sessionName(rng) {
  return rng.pick([
    "My session",
    "  padded name  ",
    "line1\r\nline2",
    "multi\n\n\nbreaks\r\r",
    "\r\n",
    "",
    "   ",
    "名前 😀",
    "tab\there",
    "\ud800 lone",
    advString(rng),
  ]);
}

export function label(rng) {
  return rng.weighted([
    [5, () => rng.pick(["checkpoint", "★ important", "😀", " spaced ", "\ud800"])],
    [1, () => ""],
    [2, () => undefined],
    [1, () => advString(rng)],
  ])();
}
