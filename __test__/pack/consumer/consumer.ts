// TypeScript consumer: every public type and value of pi-session-native, under --strict and without
// skipLibCheck. Copied to consumer.mts / consumer.cts (NodeNext) and used as consumer.ts (bundler,
// node10) by the pack test.
import {
  CURRENT_SESSION_VERSION,
  SessionManager,
  assertValidSessionId,
  buildContextEntries,
  buildSessionContext,
  buildSessionProjection,
  findMostRecentSession,
  getDefaultSessionDir,
  getLatestCompactionEntry,
  loadEntriesFromFile,
  migrateSessionEntries,
  parseSessionEntries,
  projectContextEntry,
  sessionEntryToContextMessages,
} from "pi-session-native";
import type {
  AgentMessage,
  AssistantMessage,
  BashExecutionMessage,
  BranchSummaryEntry,
  BranchSummaryMessage,
  CompactionEntry,
  CompactionSummaryMessage,
  ContextEditEntry,
  ContextEditableContent,
  CustomEntry,
  CustomMessage,
  CustomMessageEntry,
  FileEntry,
  ImageContent,
  JsonObject,
  JsonValue,
  LabelEntry,
  Message,
  ModelChangeEntry,
  NewSessionOptions,
  ProjectedSessionEntry,
  ReadonlySessionManager,
  SessionContext,
  SessionEntry,
  SessionEntryBase,
  SessionHeader,
  SessionInfo,
  SessionInfoEntry,
  SessionListProgress,
  SessionMessageEntry,
  SessionProjection,
  SessionTreeNode,
  StopReason,
  SystemMessage,
  TextContent,
  ThinkingContent,
  ThinkingLevelChangeEntry,
  Tool,
  ToolCall,
  ToolReference,
  ToolResultMessage,
  Usage,
  UsageEntry,
  UserMessage,
} from "pi-session-native";

const version: 3 = CURRENT_SESSION_VERSION;
const options: NewSessionOptions = { id: "abc-123" };
const sm: SessionManager = SessionManager.inMemory("/tmp/project", options);

const usage: Usage = {
  input: 1,
  output: 2,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 3,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const args: JsonObject = { path: "a.txt" };
const json: JsonValue = [1, "two", null, { three: true }];
const text: TextContent = { type: "text", text: "hi" };
const thinking: ThinkingContent = { type: "thinking", thinking: "hmm" };
const image: ImageContent = { type: "image", data: "AAAA", mimeType: "image/png" };
const toolCall: ToolCall = { type: "toolCall", id: "c1", name: "read", arguments: args };
const stop: StopReason = "toolUse";
const tool: Tool = { name: "read", description: "read a file", parameters: {} };
const toolRef: ToolReference = { name: "bash" };
const system: SystemMessage = {
  role: "system",
  content: "be brief",
  toolsAdded: [tool],
  toolsRemoved: [toolRef],
  timestamp: 0,
};
const user: UserMessage = { role: "user", content: [text, image], timestamp: 1 };
const assistant: AssistantMessage = {
  role: "assistant",
  content: [thinking, text, toolCall],
  api: "faux",
  provider: "faux",
  model: "m",
  usage,
  stopReason: stop,
  timestamp: 2,
};
const toolResult: ToolResultMessage = {
  role: "toolResult",
  toolCallId: "c1",
  toolName: "read",
  content: [text],
  details: json,
  isError: false,
  timestamp: 3,
};
const message: Message = toolResult;
const bash: BashExecutionMessage = {
  role: "bashExecution",
  command: "ls",
  output: "",
  exitCode: 0,
  cancelled: false,
  truncated: false,
  timestamp: 4,
};
const custom: CustomMessage<{ n: number }> = {
  role: "custom",
  customType: "note",
  content: "x",
  display: true,
  details: { n: 1 },
  timestamp: 5,
};
const agentMessages: AgentMessage[] = [system, user, assistant, message, bash, custom];

for (const m of [system, user, assistant, toolResult, bash]) sm.appendMessage(m);
sm.appendMessage(custom);
const userId: string = sm.appendMessage(user);
sm.appendThinkingLevelChange("high");
sm.appendModelChange("faux", "m2");
const usageEntry: UsageEntry = sm.appendUsage("compaction", "faux", "m", usage, "note");
const compactionId: string = sm.appendCompaction<{ files: string[] }>(
  "summary",
  userId,
  100,
  { files: [] },
  false,
  usage,
  agentMessages,
);
sm.appendCustomEntry("ext", { any: "data" });
sm.appendSessionInfo("name");
const name: string | undefined = sm.getSessionName();
sm.appendCustomMessageEntry<{ k: string }>("ext", [text], true, { k: "v" });
const editable: ContextEditableContent = [text];
sm.appendContextEdit(userId, { content: editable });
sm.appendLabelChange(userId, "label");
sm.appendLabelChange(userId, undefined);
const leaf: string | null = sm.getLeafId();
const leafEntry: SessionEntry | undefined = sm.getLeafEntry();
const children: SessionEntry[] = sm.getChildren(userId);
const label: string | undefined = sm.getLabel(userId);
const branch: SessionEntry[] = sm.getBranch();
const contextEntries: SessionEntry[] = sm.buildContextEntries();
const projection: SessionProjection = sm.buildSessionProjection();
const projected: ProjectedSessionEntry | undefined = projection.entries[0];
const context: SessionContext = sm.buildSessionContext();
const header: SessionHeader | null = sm.getHeader();
const count: number = sm.getEntryCount();
const tree: SessionTreeNode[] = sm.getTree();
const firstChild: SessionTreeNode | undefined = tree[0]?.children[0];
sm.branch(userId);
sm.resetLeaf();
const summaryId: string = sm.branchWithSummary(null, "summary", { files: [] }, false, usage);
const branched: string | undefined = sm.createBranchedSession(summaryId);
const persisted: boolean = sm.isPersisted();
const dirs: string[] = [sm.getCwd(), sm.getSessionDir(), sm.getSessionId()];
const defaultDir: boolean = sm.usesDefaultSessionDir();
const file: string | undefined = sm.getSessionFile();
sm.newSession({ parentSession: file });

// Entry narrowing over the union.
function describe(entry: SessionEntry): string {
  const base: SessionEntryBase = entry;
  switch (entry.type) {
    case "message": {
      const e: SessionMessageEntry = entry;
      return e.message.role;
    }
    case "thinking_level_change": {
      const e: ThinkingLevelChangeEntry = entry;
      return e.thinkingLevel;
    }
    case "model_change": {
      const e: ModelChangeEntry = entry;
      return `${e.provider}/${e.modelId}`;
    }
    case "usage": {
      const e: UsageEntry = entry;
      return e.kind;
    }
    case "compaction": {
      const e: CompactionEntry = entry;
      return `${e.summary} ${e.firstKeptEntryId} ${e.tokensBefore} ${e.retainedTail?.length ?? 0}`;
    }
    case "branch_summary": {
      const e: BranchSummaryEntry = entry;
      return e.summary;
    }
    case "custom": {
      const e: CustomEntry = entry;
      return e.customType;
    }
    case "custom_message": {
      const e: CustomMessageEntry = entry;
      return e.customType;
    }
    case "context_edit": {
      const e: ContextEditEntry = entry;
      return e.targetId;
    }
    case "label": {
      const e: LabelEntry = entry;
      return e.label ?? "";
    }
    case "session_info": {
      const e: SessionInfoEntry = entry;
      return e.name ?? "";
    }
  }
  const never: never = entry;
  return `${base.id} ${String(never)}`;
}

// Context messages that only a projection produces.
function contextRole(m: AgentMessage): string {
  if (m.role === "branchSummary") {
    const b: BranchSummaryMessage = m;
    return b.summary;
  }
  if (m.role === "compactionSummary") {
    const c: CompactionSummaryMessage = m;
    return c.summary;
  }
  return m.role;
}

// Free functions.
const entries: FileEntry[] = parseSessionEntries('{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}\n');
migrateSessionEntries(entries);
assertValidSessionId("abc");
const sessionEntries = entries.filter((e): e is SessionEntry => e.type !== "session");
const latest: CompactionEntry | null = getLatestCompactionEntry(sessionEntries);
const fromEntry: AgentMessage[] = sessionEntries[0] ? sessionEntryToContextMessages(sessionEntries[0]) : [];
const byId = new Map<string, SessionEntry>();
const built: SessionEntry[] = buildContextEntries(sessionEntries, null, byId);
const projectedMessages: AgentMessage[] = sessionEntries[0] ? projectContextEntry(sessionEntries[0], undefined) : [];
const proj: SessionProjection = buildSessionProjection(sessionEntries, undefined);
const ctx2: SessionContext = buildSessionContext(sessionEntries);
const dir: string = getDefaultSessionDir("/tmp/project", "/tmp/agent");
const loaded: FileEntry[] = loadEntriesFromFile("/nonexistent.jsonl");
const recent: string | null = findMostRecentSession("/tmp", "/tmp/project");

// Statics and listing.
async function statics(): Promise<SessionInfo[]> {
  const progress: SessionListProgress = (loaded, total, partial) => void [loaded, total, partial?.length];
  const a: SessionManager = SessionManager.create("/tmp/project", "/tmp/sessions", { id: "abc" });
  const b: SessionManager = SessionManager.open("/tmp/sessions/x.jsonl", undefined, "/tmp/project");
  const c: SessionManager = SessionManager.continueRecent("/tmp/project");
  const d: SessionManager = SessionManager.forkFrom("/tmp/sessions/x.jsonl", "/tmp/other", undefined, {});
  const e: SessionManager = SessionManager.inMemory(undefined, undefined, entries);
  const found: string | undefined = SessionManager.findById("/tmp/project", "abc");
  const readonly: ReadonlySessionManager[] = [a, b, c, d, e];
  const signal = new AbortController().signal;
  const one: SessionInfo[] = await SessionManager.list("/tmp/project", undefined, progress, signal);
  const all: SessionInfo[] = await SessionManager.listAll(progress, signal);
  const inDir: SessionInfo[] = await SessionManager.listAll("/tmp/sessions", progress, signal);
  const info: SessionInfo | undefined = one[0];
  const when: Date | undefined = info?.modified;
  void [found, readonly, when];
  return [...one, ...all, ...inDir];
}

// @ts-expect-error the constructor is private, as upstream's
new SessionManager();

export const used = [
  version,
  usageEntry,
  compactionId,
  name,
  leaf,
  leafEntry,
  children,
  label,
  branch,
  contextEntries,
  projected,
  context,
  header,
  count,
  firstChild,
  branched,
  persisted,
  dirs,
  defaultDir,
  describe,
  contextRole,
  latest,
  fromEntry,
  built,
  projectedMessages,
  proj,
  ctx2,
  dir,
  loaded,
  recent,
  statics,
];
