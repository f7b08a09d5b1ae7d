// Corpus cases about what the entries mean: versions and headers, trees and ids, labels,
// compaction, context edits, session names, listing fields, TypeErrors and getTree()'s sort.

import {
  asst,
  basicEntries,
  CWD,
  entry,
  FILE_URL_CWD,
  header,
  ID,
  J,
  lines,
  MS,
  SID,
  sys,
  TS,
  tool,
  user,
  v1Entries,
} from "./build.mjs";

/** Adds the entry-semantics cases to the corpus through `add(name, bytes, note)`. */
export function entryCases(add) {
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
    `2024-01-02T03-04-05-678Z_${SID(67)}.jsonl`,
    lines(J(header(67)), b[0], b[1]),
    "a real-looking session file name",
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
}
