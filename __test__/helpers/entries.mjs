// Random entry arrays (fixed ids and timestamps) for the free-function tests, built from the shared payloads.
import * as P from "./payloads.mjs";

const ID = (n) => `e${String(n).padStart(7, "0")}`;
const TS = (n) => new Date(Date.UTC(2023, 5, 1) + n * 1000).toISOString();

/**
 * A random session tree of n entries. Parents are random earlier entries (sometimes null, an orphan id, or a
 * duplicate id); every entry type appears. No parent cycles (the reference would hang).
 */
export function randomEntries(rng, n) {
  const out = [];
  const ids = [];
  const anyId = () => (ids.length && rng.bool(0.9) ? rng.pick(ids) : rng.pick(["missing0", "zzzzzzzz"]));
  for (let i = 0; i < n; i++) {
    const id = ID(i);
    const parentId =
      i === 0 || rng.bool(0.05)
        ? null
        : rng.bool(0.03)
          ? "orphan00"
          : rng.bool(0.7)
            ? ids[ids.length - 1]
            : rng.pick(ids);
    const base = { id, parentId, timestamp: TS(i) };
    const type = rng.weighted([
      [10, "message"],
      [1, "thinking_level_change"],
      [1, "model_change"],
      [1, "usage"],
      [2, "compaction"],
      [1, "branch_summary"],
      [1, "custom"],
      [2, "custom_message"],
      [3, "context_edit"],
      [1, "label"],
      [1, "session_info"],
    ]);
    let e;
    switch (type) {
      case "message":
        e = { type, ...base, message: P.anyMessage(rng) };
        break;
      case "thinking_level_change":
        e = { type, ...base, thinkingLevel: rng.pick(["off", "high", "medium"]) };
        break;
      case "model_change":
        e = { type, ...base, provider: rng.pick(["p1", "p2"]), modelId: rng.pick(["m1", "m2"]) };
        break;
      case "usage":
        e = {
          type,
          ...base,
          kind: "k",
          provider: "p",
          model: "m",
          usage: P.usage(rng),
          ...(rng.bool() ? { note: "n" } : {}),
        };
        break;
      case "compaction":
        e = {
          type,
          ...base,
          summary: P.advString(rng),
          firstKeptEntryId: rng.bool(0.2) ? id : anyId(),
          tokensBefore: P.advNumber(rng),
          details: rng.bool() ? P.advValue(rng) : undefined,
          usage: undefined,
          fromHook: rng.pick([true, false, undefined]),
          ...(rng.bool(0.4) ? { systemMessage: P.systemMessage(rng) } : {}),
        };
        break;
      case "branch_summary":
        e = {
          type,
          ...base,
          fromId: rng.bool() ? anyId() : "root",
          summary: rng.pick(["", P.advString(rng)]),
          details: P.advValue(rng),
        };
        break;
      case "custom":
        e = { type, customType: "c", data: P.advValue(rng), ...base };
        break;
      case "custom_message":
        e = {
          type,
          customType: "cm",
          content: rng.bool(0.1) ? undefined : P.userContent(rng),
          display: rng.bool(),
          details: P.advValue(rng),
          ...base,
        };
        break;
      case "context_edit":
        e = {
          type,
          ...base,
          targetId: anyId(),
          replacement: rng.weighted([
            [4, () => ({ content: P.advString(rng) })],
            [4, () => ({ content: [P.textBlock(rng)] })],
            [2, () => null],
            [1, () => ({})],
          ])(),
        };
        break;
      case "label":
        e = { type, ...base, targetId: anyId(), label: P.label(rng) };
        break;
      default:
        e = { type, ...base, name: P.sessionName(rng) };
    }
    out.push(e);
    ids.push(id);
  }
  // occasionally a duplicate id (the last one wins in indexes): a root-level copy reusing the last entry's id,
  // which cannot create a cycle
  if (n > 3 && rng.bool(0.2)) {
    const last = out[out.length - 1];
    out.push({ ...structuredClone(out[1]), id: last.id, parentId: null });
  }
  return out;
}

/** A v1 array (header without version, no ids) built from random messages; and a v2 one with hookMessage roles. */
export function v1Array(rng, n) {
  const out = [
    {
      type: "session",
      id: "0190bbbb-0000-7000-8000-000000000001",
      timestamp: TS(0),
      cwd: "/tmp/pi-diff-cwd/project-a",
    },
  ];
  for (let i = 1; i <= n; i++) {
    if (rng.bool(0.15))
      out.push({
        type: "compaction",
        timestamp: TS(i),
        summary: "s",
        firstKeptEntryIndex: rng.pick([0, 1, i - 1, 99, "1", -1, 1.5]),
        tokensBefore: 1,
      });
    else
      out.push({
        type: "message",
        timestamp: TS(i),
        message: rng.bool(0.2)
          ? { role: "hookMessage", customType: "h", content: "x", display: true, timestamp: 1 }
          : P.anyMessage(rng),
      });
  }
  return out;
}

export function v2Array(rng, n) {
  const out = [
    {
      type: "session",
      version: 2,
      id: "0190bbbb-0000-7000-8000-000000000002",
      timestamp: TS(0),
      cwd: "/tmp/pi-diff-cwd/project-a",
    },
  ];
  let parent = null;
  for (let i = 1; i <= n; i++) {
    const id = ID(i);
    const message = rng.bool(0.3)
      ? { role: "hookMessage", customType: "h", content: P.advString(rng), display: rng.bool(), timestamp: 1 }
      : rng.bool(0.1)
        ? null
        : P.anyMessage(rng);
    out.push({ type: "message", id, parentId: parent, timestamp: TS(i), message });
    parent = id;
  }
  return out;
}
