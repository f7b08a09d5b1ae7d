// Agreement checks: before an operation is timed, both implementations run it once
// and must produce the same signature (counts, ids, hashes of the returned data and
// of the files written). A disagreement aborts that operation loudly.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

export function hash(text) {
  return createHash("sha1").update(text).digest("hex").slice(0, 16);
}

/** One hash per item: mismatches can then name the first differing index. */
export function hashEach(items, fn = (x) => JSON.stringify(x)) {
  return items.map((x) => hash(fn(x) ?? "undefined"));
}

export function sessionSig(sm) {
  return {
    entryCount: sm.getEntryCount(),
    leafId: sm.getLeafId(),
    sessionId: sm.getSessionId(),
    headerId: sm.getHeader()?.id,
    cwd: sm.getCwd(),
    sessionFile: sm.getSessionFile(),
    sessionName: sm.getSessionName(),
  };
}

export function contextSig(ctx) {
  return {
    contextMessages: ctx.messages.length,
    contextModel: JSON.stringify(ctx.model),
    contextThinking: ctx.thinkingLevel,
    contextMessageHashes: hashEach(ctx.messages),
  };
}

export function treeSig(roots) {
  const tokens = [];
  const stack = [...roots].reverse();
  let nodes = 0;
  while (stack.length) {
    const n = stack.pop();
    nodes++;
    tokens.push(`${n.entry.id}|${n.label ?? ""}|${n.labelTimestamp ?? ""}|${n.children.length}`);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return { roots: roots.length, treeNodes: nodes, treeWalk: tokens };
}

export function sessionInfosSig(infos) {
  return {
    sessions: infos.length,
    ids: infos.map((s) => s.id),
    infoHashes: hashEach(infos, (s) =>
      JSON.stringify([
        s.path,
        s.id,
        s.cwd,
        s.name,
        s.parentSessionPath,
        s.created instanceof Date ? String(s.created.getTime()) : `not a Date: ${typeof s.created}`,
        s.modified instanceof Date ? String(s.modified.getTime()) : `not a Date: ${typeof s.modified}`,
        s.messageCount,
        s.firstMessage,
        hash(String(s.allMessagesText)),
      ]),
    ),
  };
}

/**
 * A written session file, with its random parts (entry ids, the header id and
 * time, and optionally entry timestamps) replaced by stable tokens. Everything else
 * is compared as raw bytes, so a number or escape written differently is caught.
 */
export function normalizedFileSig(path, { dropEntryTimestamps = false } = {}) {
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n");
  const trailing = lines.pop();
  const ids = new Map();
  const token = (id) => {
    if (!ids.has(id)) ids.set(id, `#${ids.size}`);
    return ids.get(id);
  };
  const out = lines.map((raw, i) => {
    let obj;
    try {
      obj = JSON.parse(raw);
    } catch {
      return raw;
    }
    const swaps = [];
    if (i === 0 && obj.type === "session") {
      swaps.push([obj.id, "<session-id>"], [obj.timestamp, "<session-time>"]);
    } else {
      if (typeof obj.id === "string") swaps.push([obj.id, token(obj.id)]);
      if (typeof obj.parentId === "string") swaps.push([obj.parentId, token(obj.parentId)]);
      if (dropEntryTimestamps && typeof obj.timestamp === "string") swaps.push([obj.timestamp, "<time>"]);
    }
    let line = raw;
    for (const [from, to] of swaps) line = line.split(JSON.stringify(from)).join(JSON.stringify(to));
    return line;
  });
  return {
    fileLines: out.length,
    fileEndsWithNewline: trailing === "",
    fileLineHashes: hashEach(out, (x) => x),
    _lines: out,
  };
}

function short(v, n = 240) {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s === undefined ? "undefined" : s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s;
}

/**
 * Compare two signatures. Keys starting with "_" hold detail for messages only.
 * @returns {string[]} human-readable differences (empty when they agree)
 */
export function compareSigs(a, b, names = ["reference", "ours"]) {
  const diffs = [];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)].filter((k) => !k.startsWith("_")));
  for (const k of keys) {
    const va = a[k];
    const vb = b[k];
    if (Array.isArray(va) && Array.isArray(vb)) {
      if (va.length !== vb.length || va.some((x, i) => x !== vb[i])) {
        let i = 0;
        while (i < va.length && i < vb.length && va[i] === vb[i]) i++;
        let msg = `${k}: lengths ${names[0]}=${va.length} ${names[1]}=${vb.length}; first difference at index ${i}`;
        const detail = k === "fileLineHashes" ? "_lines" : null;
        if (detail && a[detail] && b[detail]) {
          msg += `\n      ${names[0]}: ${short(a[detail][i], 400)}\n      ${names[1]}: ${short(b[detail][i], 400)}`;
        } else if (i < va.length || i < vb.length) {
          msg += ` (${short(va[i], 80)} vs ${short(vb[i], 80)})`;
        }
        diffs.push(msg);
      }
    } else if (JSON.stringify(va) !== JSON.stringify(vb)) {
      diffs.push(`${k}: ${names[0]}=${short(va)} ${names[1]}=${short(vb)}`);
    }
  }
  return diffs;
}
