// Object-identity relations, spelled out one by one (random-ops.test.mjs checks them generically through identity
// tokens; these give readable failures). For each relation we compute a boolean per implementation and compare:
// the reference's answer is the specification, whether true or false.
import { join } from "node:path";
import { describe, it } from "vitest";
import { IMPLS } from "../helpers/impls.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const LABELS = IMPLS.map((i) => i.name);
const root = makeTempRoot("ident");

function build(SM, dir) {
  const sm = SM.create("/tmp/pi-diff-cwd/project-a", dir);
  const caller = {
    system: {
      role: "system",
      content: "sys",
      sections: { a: "x" },
      toolsAdded: [{ name: "bash", description: "d", parameters: { type: "object" } }],
      timestamp: 1,
    },
    user: { role: "user", content: [{ type: "text", text: "hello" }], timestamp: 2 },
    asst: { role: "assistant", content: [{ type: "text", text: "hi" }], provider: "p", model: "m", timestamp: 3 },
    details: { deep: { x: [1, 2] } },
    usage: {
      input: 1,
      output: 2,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 3,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    data: { k: [1, { z: 2 }] },
    content: [{ type: "text", text: "custom" }],
    replacement: { content: [{ type: "text", text: "edited" }] },
  };
  const ids = {};
  ids.system = sm.appendMessage(caller.system);
  ids.user = sm.appendMessage(caller.user);
  ids.asst = sm.appendMessage(caller.asst);
  ids.custom = sm.appendCustomEntry("c", caller.data);
  ids.cmsg = sm.appendCustomMessageEntry("cm", caller.content, true, caller.details);
  ids.edit = sm.appendContextEdit(ids.user, caller.replacement);
  ids.label = sm.appendLabelChange(ids.user, "L");
  ids.compaction = sm.appendCompaction("sum", ids.user, 10, caller.details, false, caller.usage);
  ids.after = sm.appendMessage({ role: "user", content: "after", timestamp: 4 });
  const usageEntry = sm.appendUsage("k", "p", "m", caller.usage, "note");
  return { sm, caller, ids, usageEntry };
}

function relations({ sm, caller, ids, usageEntry }) {
  const r = {};
  const entries = sm.getEntries();
  const byId = (id) => entries.find((e) => e.id === id);
  r["getEntry(id) === getEntries()[k], for every entry"] = entries.map((e) => sm.getEntry(e.id) === e);
  r["getEntries() returns a new array each call"] = sm.getEntries() !== entries;
  r["getEntries() elements are the same objects across calls"] = sm.getEntries().every((e, i) => e === entries[i]);
  r["getLeafEntry() === getEntry(getLeafId())"] = sm.getLeafEntry() === sm.getEntry(sm.getLeafId());
  // biome-ignore lint/suspicious/noSelfCompare: two calls, compared for object identity
  r["getHeader() is the same object across calls"] = sm.getHeader() === sm.getHeader();
  r["getBranch() elements are the stored entries"] = sm.getBranch().map((e) => e === sm.getEntry(e.id));
  r["getChildren() elements are the stored entries"] = sm.getChildren(ids.user).map((e) => e === sm.getEntry(e.id));
  const walk = (nodes, out = []) => {
    for (const n of nodes) {
      out.push(n.entry === sm.getEntry(n.entry.id));
      walk(n.children, out);
    }
    return out;
  };
  r["getTree() node.entry === getEntry(id)"] = walk(sm.getTree());
  // biome-ignore lint/suspicious/noSelfCompare: two calls, compared for object identity
  r["getTree() returns new nodes each call"] = sm.getTree()[0] !== sm.getTree()[0];
  r["buildContextEntries() elements are the stored entries"] = sm
    .buildContextEntries()
    .map((e) => e === sm.getEntry(e.id));
  const proj = sm.buildSessionProjection();
  r["projection.entries[i].sourceEntry === getEntry(id)"] = proj.entries.map(
    (pe) => pe.sourceEntry === sm.getEntry(pe.sourceEntry.id),
  );
  r["projection.messages are the entries' messages arrays flattened (same objects)"] = proj.messages.every(
    (m, i) => m === proj.entries.flatMap((pe) => pe.messages)[i],
  );
  const ctx = sm.buildSessionContext();
  r["context.messages[i] === entry.message (message entries)"] = ctx.messages.map((m) =>
    entries.some((e) => e.type === "message" && e.message === m),
  );
  r["context.messages[0] === compaction.systemMessage"] = ctx.messages[0] === byId(ids.compaction).systemMessage;
  r["two buildSessionContext() calls return the same message objects"] = sm
    .buildSessionContext()
    .messages.map((m, i) => m === ctx.messages[i]);
  // the caller's own objects
  r["appendMessage(msg): getEntry(id).message === msg (user)"] = sm.getEntry(ids.user).message === caller.user;
  r["appendMessage(msg): getEntry(id).message === msg (system)"] = sm.getEntry(ids.system).message === caller.system;
  r["appendCustomEntry(type, data): entry.data === data"] = sm.getEntry(ids.custom).data === caller.data;
  r["appendCustomMessageEntry: entry.content === content, entry.details === details"] = [
    sm.getEntry(ids.cmsg).content === caller.content,
    sm.getEntry(ids.cmsg).details === caller.details,
  ];
  r["appendContextEdit: entry.replacement === replacement (array content, not normalised)"] =
    sm.getEntry(ids.edit).replacement === caller.replacement;
  r["appendCompaction: entry.details === details, entry.usage === usage"] = [
    sm.getEntry(ids.compaction).details === caller.details,
    sm.getEntry(ids.compaction).usage === caller.usage,
  ];
  r["appendCompaction: systemMessage.toolsAdded[0] is the caller's tool object"] =
    sm.getEntry(ids.compaction).systemMessage?.toolsAdded?.[0] === caller.system.toolsAdded[0];
  r["appendCompaction: systemMessage.sections is a new object"] =
    sm.getEntry(ids.compaction).systemMessage?.sections !== caller.system.sections;
  r["appendUsage returns the stored entry"] = usageEntry === sm.getEntry(usageEntry.id);
  r["appendUsage: entry.usage === usage"] = usageEntry.usage === caller.usage;
  r["projected edit content === the edit entry's replacement.content"] = ctx.messages.some(
    (m) => m.content === caller.replacement.content,
  );
  r["edited message is a new object (not entry.message)"] = !ctx.messages.includes(caller.user);
  return r;
}

describe(`identity relations (${LABELS.join(" vs ")})`, () => {
  it("in a live session", () => {
    const results = IMPLS.map((impl) => relations(build(impl.mod.SessionManager, join(root, impl.name, "live"))));
    const bad = Object.keys(results[0]).filter((k) => JSON.stringify(results[0][k]) !== JSON.stringify(results[1][k]));
    if (bad.length)
      throw new Error(
        `identity relations differ:\n${bad.map((k) => `  ${k}\n    ${LABELS[0]}: ${JSON.stringify(results[0][k])}\n    ${LABELS[1]}: ${JSON.stringify(results[1][k])}`).join("\n")}`,
      );
  });

  it("after reopening from disk", () => {
    const results = IMPLS.map((impl) => {
      const built = build(impl.mod.SessionManager, join(root, impl.name, "reopen"));
      const sm = impl.mod.SessionManager.open(built.sm.getSessionFile());
      const entries = sm.getEntries();
      const ctx = sm.buildSessionContext();
      const walk = (nodes, out = []) => {
        for (const n of nodes) {
          out.push(n.entry === sm.getEntry(n.entry.id));
          walk(n.children, out);
        }
        return out;
      };
      return {
        "getEntry(id) === getEntries()[k]": entries.map((e) => sm.getEntry(e.id) === e),
        "getTree() node.entry === getEntry(id)": walk(sm.getTree()),
        "context.messages[i] === entry.message": ctx.messages.map((m) =>
          entries.some((e) => e.type === "message" && e.message === m),
        ),
        "context.messages[0] === compaction.systemMessage":
          ctx.messages[0] === entries.find((e) => e.type === "compaction").systemMessage,
        "getBranch() elements are the stored entries": sm.getBranch().map((e) => e === sm.getEntry(e.id)),
        "entries keep identity after an append": (() => {
          sm.appendMessage({ role: "user", content: "x", timestamp: 5 });
          return entries.map((e) => sm.getEntry(e.id) === e);
        })(),
      };
    });
    const bad = Object.keys(results[0]).filter((k) => JSON.stringify(results[0][k]) !== JSON.stringify(results[1][k]));
    if (bad.length)
      throw new Error(
        `identity relations differ:\n${bad.map((k) => `  ${k}\n    ${LABELS[0]}: ${JSON.stringify(results[0][k])}\n    ${LABELS[1]}: ${JSON.stringify(results[1][k])}`).join("\n")}`,
      );
  });
});
