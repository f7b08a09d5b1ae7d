// One generated session file: generateSession (a realistic pi 1.6.0 session of a given size,
// written line by line) and the names pi gives session folders and files (encodeCwd, sessionFileName).

import { closeSync, openSync, utimesSync, writeSync } from "node:fs";
import { CUSTOM_TYPES, MODELS, pickTool, systemPrompt, THINKING_LEVELS, TOOLS, usageFor } from "./messages.mjs";
import { bigOf, codeOf, DIRS, getCorpus, KB, MB, proseOf, Rng, shellOf } from "./text.mjs";

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

class LineWriter {
  constructor(path) {
    this.fd = openSync(path, "w");
    this.chunks = [];
    this.pending = 0;
    this.bytes = 0;
  }
  line(obj) {
    const s = `${JSON.stringify(obj)}\n`;
    const n = Buffer.byteLength(s);
    this.bytes += n;
    this.chunks.push(s);
    this.pending += n;
    if (this.pending > 4 * MB) this.flush();
  }
  flush() {
    if (this.chunks.length) writeSync(this.fd, this.chunks.join(""));
    this.chunks = [];
    this.pending = 0;
  }
  close() {
    this.flush();
    closeSync(this.fd);
  }
}

export function encodeCwd(cwd) {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

export function sessionFileName(startMs, id) {
  return `${new Date(startMs).toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`;
}

// ---------------------------------------------------------------------------
// One session
// ---------------------------------------------------------------------------

/**
 * Write one realistic session file.
 * @param {string} file target path (overwritten)
 * @param {object} opts
 *   seed, targetBytes, cwd, startMs, id?, parentSession?,
 *   compactionEvery [min,max] entries between compactions (default [2000, 4000]),
 *   branchChance per turn (default 0.0015), minBranches (default: 1 for ≥ 4 MB, else 0),
 *   imageChance per user prompt (default 0.01), imageBytes [median, min, max] raw bytes of an image
 *   (its base64 is 4/3 of that; default [60 KB, 8 KB, 400 KB]), named (default 0.8)
 * @returns meta: { file, id, cwd, bytes, entries, messages, compactions, branches, leafId, startMs, endMs }
 */
export function generateSession(file, opts) {
  const rng = new Rng(opts.seed >>> 0);
  const C = getCorpus();
  const cwd = opts.cwd;
  const target = opts.targetBytes;
  const compactionEvery = opts.compactionEvery ?? [2000, 4000];
  const branchChance = opts.branchChance ?? 0.0015;
  const minBranches = opts.minBranches ?? (target >= 4 * MB ? 1 : 0);
  const imageChance = opts.imageChance ?? 0.01;
  const imageBytes = opts.imageBytes ?? [60 * KB, 8 * KB, 400 * KB];
  let t = opts.startMs;
  const id = opts.id ?? rng.uuidv7(t);

  const w = new LineWriter(file);
  const header = { type: "session", version: 3, id, timestamp: new Date(t).toISOString(), cwd };
  if (opts.parentSession) header.parentSession = opts.parentSession;
  w.line(header);

  const ids = new Set();
  const newId = () => {
    for (;;) {
      const x = rng.hex(8);
      if (!ids.has(x)) {
        ids.add(x);
        return x;
      }
    }
  };
  // The current branch, root first: ids and a kind per entry.
  const pathIds = [];
  const pathKinds = [];
  let leaf = null;
  let entries = 0;
  let messages = 0;
  let compactions = 0;
  let branches = 0;
  let sinceCompaction = 0;
  let nextCompaction = rng.int(compactionEvery[0], compactionEvery[1]);
  let lastCompactionPathIdx = 0;
  let contextTokens = 0;
  let model = MODELS[rng.chance(0.75) ? 0 : rng.int(1, MODELS.length - 1)];
  let readFiles = new Set();
  let modifiedFiles = new Set();

  const iso = () => new Date(t).toISOString();
  const emit = (kind, build) => {
    const eid = newId();
    const entry = build(eid, leaf, iso());
    w.line(entry);
    leaf = eid;
    pathIds.push(eid);
    pathKinds.push(kind);
    entries++;
    sinceCompaction++;
    return eid;
  };
  const emitMessage = (message) => {
    messages++;
    return emit(message.role, (eid, parentId, timestamp) => ({
      type: "message",
      id: eid,
      parentId,
      timestamp,
      message,
    }));
  };
  const tick = (lo, hi) => {
    t += rng.int(lo, hi);
  };

  // --- Session start: system prompt, model, thinking level.
  const sysMessage = {
    role: "system",
    content: systemPrompt(rng, cwd),
    ...(rng.chance(0.5)
      ? {
          sections: {
            agents_md: `<agents_md path="${cwd}/AGENTS.md">\n${proseOf(rng, rng.int(1 * KB, 6 * KB))}\n</agents_md>`,
            skills: `<skills>\n${TOOLS.map((x) => `- ${x.name}`).join("\n")}\n</skills>`,
          },
        }
      : {}),
    toolsAdded: TOOLS,
    timestamp: t,
  };
  tick(1, 5);
  emitMessage(sysMessage);
  emit("model_change", (eid, parentId, timestamp) => ({
    type: "model_change",
    id: eid,
    parentId,
    timestamp,
    provider: model.provider,
    modelId: model.model,
  }));
  emit("thinking_level_change", (eid, parentId, timestamp) => ({
    type: "thinking_level_change",
    id: eid,
    parentId,
    timestamp,
    thinkingLevel: rng.pick(["medium", "high", "low"]),
  }));

  const toolCall = (name) => {
    const callId = model.provider === "openai" ? `call_${rng.base62(24)}` : `toolu_01${rng.base62(22)}`;
    const p = C.filePath();
    let args;
    switch (name) {
      case "read":
        args = rng.chance(0.3) ? { path: p, offset: rng.int(1, 800), limit: rng.int(50, 400) } : { path: p };
        readFiles.add(p);
        break;
      case "bash":
        args = {
          command: rng.pick([
            "npm test -- --run",
            `cargo test --lib ${C.ident()}`,
            `git diff --stat && git status --short`,
            `rg -n "${C.ident()}" src/ | head -50`,
            `ls -la ${p.split("/").slice(0, -1).join("/")}`,
            "npm run build 2>&1 | tail -80",
            `git log --oneline -n ${rng.int(5, 40)}`,
            `node scripts/${C.ident()}.mjs --verbose`,
          ]),
          ...(rng.chance(0.2) ? { timeout: rng.pick([60, 120, 300, 600]) } : {}),
        };
        break;
      case "edit":
        args = {
          path: p,
          oldText: codeOf(rng, rng.logn(300, 0.8, 20, 4 * KB)),
          newText: codeOf(rng, rng.logn(350, 0.8, 20, 5 * KB)),
        };
        modifiedFiles.add(p);
        break;
      case "write":
        args = { path: p, content: codeOf(rng, rng.logn(3 * KB, 0.9, 200, 40 * KB)) };
        modifiedFiles.add(p);
        break;
      case "grep":
        args = { pattern: `${C.ident()}\\(`, path: rng.pick(DIRS), ...(rng.chance(0.4) ? { glob: "*.ts" } : {}) };
        break;
      case "find":
        args = { pattern: rng.pick(["**/*.ts", "*.json", "**/*.test.ts", "src/**/*.rs"]) };
        break;
      default:
        args = { path: rng.pick(DIRS) };
    }
    return { type: "toolCall", id: callId, name, arguments: args };
  };

  const toolResultText = (call) => {
    const name = call.name;
    if (name === "read") {
      // Mostly a few KB, sometimes a whole 50 KB page, rarely more.
      const len = rng.chance(0.08) ? rng.int(40 * KB, 52 * KB) : rng.logn(5 * KB, 1.0, 300, 50 * KB);
      return { text: codeOf(rng, len), isError: rng.chance(0.02) };
    }
    if (name === "bash") {
      const huge = rng.chance(0.0008);
      const len = huge ? rng.int(300 * KB, 1200 * KB) : rng.logn(1500, 1.3, 120, 60 * KB);
      const isError = rng.chance(0.08);
      let text = bigOf(shellOf, rng, len);
      if (isError) text += `\n\nCommand exited with code ${rng.int(1, 2)}`;
      return { text, isError };
    }
    if (name === "edit") {
      return { text: `Successfully replaced text in ${call.arguments.path}.`, isError: rng.chance(0.05) };
    }
    if (name === "write") {
      return {
        text: `Successfully wrote ${call.arguments.content.length} bytes to ${call.arguments.path}`,
        isError: false,
      };
    }
    return { text: shellOf(rng, rng.logn(1200, 1.0, 100, 12 * KB)), isError: false };
  };

  const assistant = (content, stopReason, outputTokens) => {
    const start = t;
    const durationMs = rng.int(800, 45000);
    tick(durationMs, durationMs + 30);
    const message = {
      role: "assistant",
      content,
      api: model.api,
      provider: model.provider,
      model: model.model,
      responseId: model.provider === "anthropic" ? `msg_01${rng.base62(22)}` : `resp_${rng.hex(32)}`,
      usage: usageFor(rng, model, Math.max(4000, contextTokens), outputTokens),
      stopReason,
      timestamp: start,
      durationMs,
    };
    emitMessage(message);
  };

  const branchPoint = () => {
    // A user prompt some turns back (after the newest compaction): re-ask from its parent.
    const lo = Math.max(lastCompactionPathIdx + 1, pathIds.length - 80);
    for (let tries = 0; tries < 20; tries++) {
      const i = rng.int(lo, pathIds.length - 2);
      if (i > 0 && pathKinds[i] === "user") return i - 1;
    }
    return -1;
  };

  let turn = 0;
  while (w.bytes < target) {
    turn++;
    tick(5000, 600000); // the user thinks, reads, types

    // Occasional state changes between turns.
    if (turn > 1 && rng.chance(0.015)) {
      model = rng.pick(MODELS);
      emit("model_change", (eid, parentId, timestamp) => ({
        type: "model_change",
        id: eid,
        parentId,
        timestamp,
        provider: model.provider,
        modelId: model.model,
      }));
    }
    if (turn > 1 && rng.chance(0.015)) {
      emit("thinking_level_change", (eid, parentId, timestamp) => ({
        type: "thinking_level_change",
        id: eid,
        parentId,
        timestamp,
        thinkingLevel: rng.pick(THINKING_LEVELS),
      }));
    }
    if (rng.chance(0.04)) {
      const customType = rng.pick(CUSTOM_TYPES);
      emit("custom", (eid, parentId, timestamp) => ({
        type: "custom",
        customType,
        data: {
          version: 1,
          items: Array.from({ length: rng.int(1, 6) }, (_, i) => ({
            id: i + 1,
            text: proseOf(rng, rng.int(20, 120)),
            done: rng.chance(0.5),
          })),
          updatedAt: t,
        },
        id: eid,
        parentId,
        timestamp,
      }));
    }

    // Branch: go back to an earlier point, summarise the abandoned path, continue there.
    const forceBranch = branches < minBranches && w.bytes > target * 0.55;
    if (turn > 3 && (forceBranch || rng.chance(branchChance))) {
      const bp = branchPoint();
      if (bp >= 0) {
        const fromId = leaf;
        const parentIdx = bp;
        pathIds.length = parentIdx + 1;
        pathKinds.length = parentIdx + 1;
        leaf = pathIds[parentIdx];
        branches++;
        tick(1000, 20000);
        emit("branch_summary", (eid, parentId, timestamp) => ({
          type: "branch_summary",
          id: eid,
          parentId,
          timestamp,
          fromId,
          summary: `The user explored an alternative approach and abandoned it.\n\n${proseOf(rng, rng.int(400, 2500))}`,
          details: { readFiles: [...readFiles].slice(0, 12), modifiedFiles: [...modifiedFiles].slice(0, 8) },
        }));
      }
    }

    // The user prompt.
    const text = proseOf(rng, rng.logn(250, 1.1, 8, 6 * KB));
    let content;
    if (rng.chance(imageChance)) {
      content = [
        { type: "text", text },
        {
          type: "image",
          data: rng.base64(rng.logn(imageBytes[0], 0.7, imageBytes[1], imageBytes[2])),
          mimeType: rng.pick(["image/png", "image/jpeg"]),
        },
      ];
    } else if (rng.chance(0.1)) {
      content = text; // plain string content also occurs
    } else {
      content = [{ type: "text", text }];
    }
    contextTokens += text.length >> 2;
    const userId = emitMessage({ role: "user", content, timestamp: t });
    tick(2, 40);

    if (turn <= 3 && rng.chance(opts.named ?? 0.8) && turn === 2) {
      emit("session_info", (eid, parentId, timestamp) => ({
        type: "session_info",
        id: eid,
        parentId,
        timestamp,
        name: proseOf(rng, rng.int(15, 50)).replace(/\n+/g, " ").trim(),
      }));
    }
    if (rng.chance(0.02)) {
      emit("label", (eid, parentId, timestamp) => ({
        type: "label",
        id: eid,
        parentId,
        timestamp,
        targetId: userId,
        label: rng.pick([
          "checkpoint",
          "good state",
          "before refactor",
          "bug repro",
          "try again from here",
          "✓ tests green",
        ]),
      }));
    }

    // Tool loop.
    const rounds = rng.chance(0.15) ? 0 : Math.min(25, Math.floor(-Math.log(1 - rng.next()) * 4));
    for (let r = 0; r < rounds && w.bytes < target * 1.02; r++) {
      const blocks = [];
      const thinking = model.provider === "anthropic" && rng.chance(0.75);
      if (thinking) {
        blocks.push({
          type: "thinking",
          thinking: proseOf(rng, rng.logn(600, 0.9, 40, 8 * KB)),
          thinkingSignature: rng.base64(rng.int(200, 900)),
        });
      }
      if (rng.chance(0.4)) blocks.push({ type: "text", text: proseOf(rng, rng.logn(200, 0.8, 20, 2 * KB)) });
      const calls = [];
      for (let k = rng.chance(0.75) ? 1 : rng.int(2, 4); k > 0; k--) calls.push(toolCall(pickTool(rng)));
      blocks.push(...calls);
      assistant(blocks, "toolUse", rng.int(40, 1500));
      for (const call of calls) {
        tick(30, 30000);
        const { text: out, isError } = toolResultText(call);
        contextTokens += out.length >> 2;
        const message = {
          role: "toolResult",
          toolCallId: call.id,
          toolName: call.name,
          content: [{ type: "text", text: out }],
          ...(call.name === "edit" && !isError
            ? {
                details: {
                  diff: `--- ${call.arguments.path}\n+++ ${call.arguments.path}\n@@ -${rng.int(1, 500)},7 +${rng.int(1, 500)},9 @@\n${codeOf(
                    rng,
                    400,
                  )
                    .split("\n")
                    .map((l, i) => (i % 3 === 0 ? `-${l}` : `+${l}`))
                    .join("\n")}`,
                  firstChangedLine: rng.int(1, 900),
                },
              }
            : {}),
          isError,
          timestamp: t,
        };
        emitMessage(message);
      }
    }
    // Final answer.
    const blocks = [];
    if (model.provider === "anthropic" && rng.chance(0.6)) {
      blocks.push({
        type: "thinking",
        thinking: proseOf(rng, rng.logn(500, 0.9, 40, 6 * KB)),
        thinkingSignature: rng.base64(rng.int(200, 900)),
      });
    }
    const answer = proseOf(rng, rng.logn(900, 0.9, 30, 12 * KB));
    blocks.push({ type: "text", text: answer });
    contextTokens += answer.length >> 2;
    assistant(blocks, rng.chance(0.97) ? "stop" : rng.pick(["length", "aborted", "error"]), rng.int(50, 4000));

    // Extension output that participates in context.
    if (rng.chance(0.015)) {
      tick(100, 5000);
      emit("custom_message", (eid, parentId, timestamp) => ({
        type: "custom_message",
        customType: rng.pick(["background-job", "file-watcher", "reminder"]),
        content: rng.chance(0.5)
          ? proseOf(rng, rng.int(60, 600))
          : [{ type: "text", text: shellOf(rng, rng.int(100, 1500)) }],
        display: rng.chance(0.8),
        details: { source: rng.pick(["watcher", "cron", "hook"]), seq: turn },
        id: eid,
        parentId,
        timestamp,
      }));
    }
    // Elide an old tool result from the model's context.
    if (rng.chance(0.012)) {
      const lo = Math.max(lastCompactionPathIdx + 1, pathIds.length - 60);
      for (let tries = 0; tries < 10; tries++) {
        const i = rng.int(lo, pathIds.length - 1);
        if (pathKinds[i] === "toolResult") {
          const targetId = pathIds[i];
          tick(5, 200);
          emit("context_edit", (eid, parentId, timestamp) => ({
            type: "context_edit",
            id: eid,
            parentId,
            timestamp,
            targetId,
            replacement: rng.chance(0.2)
              ? null
              : { content: [{ type: "text", text: `[output elided: ${rng.int(2, 60)} KB]` }] },
          }));
          break;
        }
      }
    }
    if (rng.chance(0.004)) {
      tick(10, 1000);
      emit("usage", (eid, parentId, timestamp) => ({
        type: "usage",
        id: eid,
        parentId,
        timestamp,
        kind: "cache_warm",
        provider: model.provider,
        model: model.model,
        usage: usageFor(rng, model, contextTokens, 1),
      }));
    }

    // Compaction every few thousand entries: summary plus a kept tail a few entries back.
    if (sinceCompaction >= nextCompaction) {
      let keep = pathIds.length - rng.int(4, 30);
      for (let i = keep; i < pathIds.length - 1; i++) {
        if (pathKinds[i] === "user") {
          keep = i;
          break;
        }
      }
      keep = Math.max(keep, lastCompactionPathIdx + 1);
      const firstKeptEntryId = pathIds[keep];
      tick(10000, 90000);
      const tokensBefore = rng.int(150000, 195000);
      const withUsage = rng.chance(0.7);
      const nowMs = t;
      emit("compaction", (eid, parentId, timestamp) => ({
        type: "compaction",
        id: eid,
        parentId,
        timestamp,
        summary: `## Goal\n${proseOf(rng, rng.int(200, 600))}\n\n## Progress\n### Done\n${proseOf(rng, rng.int(800, 3000))}\n\n### In Progress\n${proseOf(rng, rng.int(200, 900))}\n\n## Key Decisions\n${proseOf(rng, rng.int(300, 1200))}\n\n## Next Steps\n${proseOf(rng, rng.int(200, 800))}`,
        firstKeptEntryId,
        tokensBefore,
        details: { readFiles: [...readFiles].slice(-40), modifiedFiles: [...modifiedFiles].slice(-30) },
        ...(withUsage ? { usage: usageFor(rng, model, tokensBefore, rng.int(2000, 6000)) } : {}),
        systemMessage: { ...sysMessage, timestamp: nowMs },
      }));
      lastCompactionPathIdx = pathIds.length - 1;
      compactions++;
      sinceCompaction = 0;
      nextCompaction = rng.int(compactionEvery[0], compactionEvery[1]);
      contextTokens = rng.int(20000, 40000);
      readFiles = new Set();
      modifiedFiles = new Set();
    }
  }
  w.close();
  const endMs = t;
  if (opts.mtime !== false) utimesSync(file, new Date(endMs), new Date(endMs));
  return {
    file,
    id,
    cwd,
    bytes: w.bytes,
    entries,
    messages,
    compactions,
    branches,
    leafId: leaf,
    startMs: opts.startMs,
    endMs,
  };
}
