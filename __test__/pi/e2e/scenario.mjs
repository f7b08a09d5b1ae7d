// One scripted pi session, driven through pi's own `createAgentSession` with a given SessionManager.
//
//   node22 __test__/pi/e2e/scenario.mjs <ref|ours> <rootDir>
//
// The model is pi-ai's faux provider (scripted responses, no network); the tools are pi's built-in
// read/write/bash, run in <rootDir>/project. Session files go to <rootDir>/sessions. The script
// writes <rootDir>/result.json: the files it made, every SessionManager method pi called (in order,
// per instance), and a few values pi returned to the caller. `run.mjs` runs it once per
// implementation and compares.
//
// Needs Node >= 22.19 (the pi-coding-agent package root). Run by `npm run test:e2e`.
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createAgentSession,
  DefaultResourceLoader,
  ModelRuntime,
  SettingsManager,
} from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxThinking, fauxToolCall } from "@earendil-works/pi-ai";

const [impl, root] = process.argv.slice(2);
if (!["ref", "ours"].includes(impl) || !root) {
  console.error("usage: scenario.mjs <ref|ours> <rootDir>");
  process.exit(2);
}

const { SessionManager } =
  impl === "ref"
    ? await import("@earendil-works/pi-coding-agent")
    : await import(new URL("../../../index.mjs", import.meta.url).href);

const project = join(root, "project");
const agentDir = join(root, "agent");
const sessionDir = join(root, "sessions");
for (const d of [project, agentDir, sessionDir]) mkdirSync(d, { recursive: true });
writeFileSync(join(project, "README.md"), "# e2e project\n\nA scratch project for the pi e2e scenario.\n");

// ---------------------------------------------------------------------------
// Call recording: every SessionManager instance pi sees is a Proxy that logs method calls.

const calls = []; // [instanceTag, method]
let instanceCount = 0;
function spy(sm) {
  const tag = `sm${++instanceCount}`;
  const wrappers = new Map();
  return new Proxy(sm, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function" || typeof prop !== "string" || prop === "constructor") return value;
      let w = wrappers.get(prop);
      if (!w) {
        w = (...args) => {
          calls.push([tag, prop]);
          return value.apply(target, args);
        };
        wrappers.set(prop, w);
      }
      return w;
    },
  });
}

// ---------------------------------------------------------------------------
// pi's services: faux models, in-memory settings, a resource loader that reads nothing from disk.

const faux = fauxProvider({
  api: "faux",
  models: [
    { id: "faux-1", name: "Faux One", reasoning: true, contextWindow: 200_000, maxTokens: 8192 },
    { id: "faux-2", name: "Faux Two", reasoning: true, contextWindow: 200_000, maxTokens: 8192 },
  ],
});
const modelRuntime = await ModelRuntime.create({
  authPath: join(agentDir, "auth.json"),
  modelsPath: join(agentDir, "models.json"),
});
modelRuntime.registerNativeProvider(faux.provider);
await modelRuntime.getAvailable(); // settle the availability snapshot, so the faux provider counts as configured

async function startSession(sessionManager, extra = {}) {
  const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false, keepRecentTokens: 40 } });
  const resourceLoader = new DefaultResourceLoader({
    cwd: project,
    agentDir,
    settingsManager,
    noExtensions: true,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
    systemPrompt: "You are the e2e test assistant.",
  });
  await resourceLoader.reload();
  const { session, modelFallbackMessage } = await createAgentSession({
    cwd: project,
    agentDir,
    modelRuntime,
    settingsManager,
    resourceLoader,
    sessionManager,
    tools: ["read", "write", "bash"],
    ...extra,
  });
  return { session, modelFallbackMessage };
}

/** Queue exactly the responses one step needs; `step` fails if the step used more or fewer. */
async function step(name, responses, fn) {
  faux.setResponses(responses);
  const before = faux.state.callCount;
  const value = await fn();
  const used = faux.state.callCount - before;
  if (used !== responses.length || faux.getPendingResponseCount() !== 0) {
    throw new Error(`step ${name}: the model was called ${used} times, ${responses.length} responses were queued`);
  }
  return value;
}

// A factory, so the message is stamped when pi's stream starts: pi-ai only adds `durationMs` to a
// response whose timestamp does not predate its stream, and a pre-built message would make that
// depend on whether the millisecond clock ticked in between.
const assistant = (blocks, stopReason) => () => fauxAssistantMessage(blocks, stopReason ? { stopReason } : {});
const call = (name, args, id) => fauxToolCall(name, args, { id });

function userEntryId(sm, text) {
  const e = sm
    .getBranch()
    .findLast(
      (x) => x.type === "message" && x.message.role === "user" && JSON.stringify(x.message.content).includes(text),
    );
  if (!e) throw new Error(`no user message with ${JSON.stringify(text)} on the branch`);
  return e.id;
}

const out = { impl, node: process.version, returned: {} };

// ---------------------------------------------------------------------------
// Session 1: turns with thinking, text and tool calls; name; model and thinking changes;
// compaction; a label; tree navigation with a branch summary; more turns on the new branch.

const sm1 = spy(SessionManager.create(project, sessionDir));
const { session: s1 } = await startSession(sm1, { model: faux.getModel("faux-1"), thinkingLevel: "medium" });

await step(
  "turn 1",
  [
    assistant(
      [
        fauxThinking("The user wants a notes file. I will write it, then read it back."),
        fauxText("Writing notes.txt."),
        call("write", { path: "notes.txt", content: "hello from the e2e scenario\n" }, "call_1"),
      ],
      "toolUse",
    ),
    assistant(
      [
        fauxThinking("Check the file and the directory."),
        call("read", { path: "notes.txt" }, "call_2"),
        call("bash", { command: "ls -1 && wc -l < notes.txt" }, "call_3"),
      ],
      "toolUse",
    ),
    assistant([fauxText("Done: notes.txt has one line.")]),
  ],
  () => s1.prompt("Create notes.txt with a greeting, then show me the directory."),
);

await step(
  "turn 2",
  [
    assistant(
      [
        fauxThinking("Append with bash."),
        call("bash", { command: "echo 'second line' >> notes.txt && cat notes.txt" }, "call_4"),
      ],
      "toolUse",
    ),
    assistant([fauxText("Appended a second line.")]),
  ],
  () => s1.prompt("Append a second line using bash."),
);

s1.setSessionName("e2e: notes");
await s1.setModel(faux.getModel("faux-2"));
s1.setThinkingLevel("high");

await step(
  "turn 3",
  [assistant([fauxThinking("Summarise."), fauxText("I created notes.txt and appended a line.")])],
  () => s1.prompt("Summarise what you did."),
);

const compaction = await step(
  "compact",
  // keepRecentTokens is small, so the cut splits turn 3: pi asks for a history summary and a turn-prefix summary.
  [
    assistant([fauxText("## Goal\nKeep notes in notes.txt.\n\n## Progress\n- created notes.txt\n- appended a line")]),
    assistant([fauxText("The user asked for a summary of the work so far.")]),
  ],
  () => s1.compact("Keep the file names."),
);
out.returned.compaction = { summary: compaction.summary, tokensBefore: compaction.tokensBefore };

await step(
  "turn 4",
  [
    assistant([call("read", { path: "notes.txt" }, "call_5")], "toolUse"),
    assistant([fauxText("notes.txt has two lines.")]),
  ],
  () => s1.prompt("What is in notes.txt now?"),
);

// A label set the way the interactive tree selector sets one.
const appendUser = userEntryId(sm1, "Append a second line");
sm1.appendLabelChange(appendUser, "before-append");

// Back to before the append, summarising the abandoned branch, labelling the summary.
const nav = await step(
  "navigate",
  [assistant([fauxText("Abandoned branch: appended a line with bash, summarised, compacted, read the file.")])],
  () => s1.navigateTree(appendUser, { summarize: true, label: "abandoned" }),
);
out.returned.navigate = { editorText: nav.editorText, cancelled: nav.cancelled, summary: nav.summaryEntry?.summary };

await step(
  "turn 5",
  [
    assistant(
      [fauxThinking("Another file instead."), call("write", { path: "other.txt", content: "other\n" }, "call_6")],
      "toolUse",
    ),
    assistant([fauxText("Created other.txt.")]),
  ],
  () => s1.prompt("Instead, create other.txt."),
);

out.returned.s1 = {
  sessionName: s1.sessionName,
  messages: s1.messages,
  stats: s1.getSessionStats(),
  forkable: s1.getUserMessagesForForking(),
  contextUsage: s1.getContextUsage(),
};
// /export: the header and the current branch, written by pi from getHeader() and getBranch().
out.exported = s1.exportToJsonl(join(root, "export.jsonl"));
const file1 = s1.sessionFile;
s1.dispose();

// ---------------------------------------------------------------------------
// Session 2: a fork, the way AgentSessionRuntime.fork(entryId) makes one for a persisted session:
// open the file, createBranchedSession(parent of the chosen user message), start a session on it.

const forkAt = userEntryId(SessionManager.open(file1, sessionDir), "Instead, create other.txt");
const forkLeaf = SessionManager.open(file1, sessionDir).getEntry(forkAt).parentId;
const sm2 = spy(SessionManager.open(file1, sessionDir));
const forkPath = sm2.createBranchedSession(forkLeaf);
const { session: s2 } = await startSession(sm2);
await step(
  "fork turn",
  [assistant([call("bash", { command: "ls -1" }, "call_7")], "toolUse"), assistant([fauxText("Listed the files.")])],
  () => s2.prompt("Forked: list the files."),
);
out.returned.s2 = {
  sessionName: s2.sessionName,
  messages: s2.messages,
  model: s2.model?.id,
  thinking: s2.thinkingLevel,
};
s2.dispose();

// ---------------------------------------------------------------------------
// Session 3: reopen the first file (pi restores model and thinking level from it) and continue.

const sm3 = spy(SessionManager.open(file1, sessionDir));
const { session: s3, modelFallbackMessage } = await startSession(sm3);
out.returned.s3 = {
  model: s3.model?.id,
  thinking: s3.thinkingLevel,
  modelFallbackMessage,
  messagesBefore: s3.messages,
};
await step("reopen turn", [assistant([fauxText("Still here.")])], () => s3.prompt("Are you still there?"));
// Back to an assistant entry without a summary (SessionManager.branch), then on from there.
const doneEntry = sm3
  .getEntries()
  .find(
    (e) =>
      e.type === "message" &&
      e.message.role === "assistant" &&
      JSON.stringify(e.message.content).includes("Done: notes.txt"),
  );
const nav2 = await s3.navigateTree(doneEntry.id);
out.returned.s3.navigate = {
  editorText: nav2.editorText,
  cancelled: nav2.cancelled,
  leaf: sm3.getLeafId() === doneEntry.id,
};
await step("after plain navigation", [assistant([fauxText("Back at the first answer.")])], () =>
  s3.prompt("And from here?"),
);
out.returned.s3.messagesAfter = s3.messages;
s3.dispose();

// /resume's listing, and `pi -c`.
const listed = await SessionManager.list(project, sessionDir);
out.returned.list = listed.map((s) => ({
  path: s.path,
  name: s.name,
  messageCount: s.messageCount,
  firstMessage: s.firstMessage,
  parentSessionPath: s.parentSessionPath,
}));
out.returned.continueRecent = SessionManager.continueRecent(project, sessionDir).getSessionFile();

out.sessionFiles = { main: file1, fork: forkPath };
out.files = readdirSync(sessionDir).sort();
out.calls = calls;
writeFileSync(join(root, "result.json"), JSON.stringify(out, null, 2));
console.log(`${impl}: ${calls.length} SessionManager calls, ${out.files.length} session files`);
