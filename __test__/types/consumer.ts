// Type test: a consumer using the public surface under --strict.
import {
  CURRENT_SESSION_VERSION,
  SessionManager,
  buildSessionContext,
  type CompactionEntry,
  type FileEntry,
  type ReadonlySessionManager,
  type SessionContext,
  type SessionEntry,
  type SessionInfo,
  type SessionTreeNode,
} from "../../index.js";

const version: 3 = CURRENT_SESSION_VERSION;
const sm: SessionManager = SessionManager.inMemory("/tmp");
const id: string = sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
sm.appendCompaction("summary", id, 10, { files: [] }, false, undefined, [
  { role: "user", content: "kept", timestamp: 2 },
]);
const entries: SessionEntry[] = sm.getEntries();
const tree: SessionTreeNode[] = sm.getTree();
const ctx: SessionContext = buildSessionContext(entries, sm.getLeafId());
const ro: ReadonlySessionManager = sm;
const compaction = entries.find((e): e is CompactionEntry => e.type === "compaction");
const file: FileEntry | null = sm.getHeader();
async function listing(): Promise<SessionInfo[]> {
  const all = await SessionManager.listAll((loaded: number, total: number) => void (loaded + total));
  const inDir = await SessionManager.listAll("/tmp", undefined, new AbortController().signal);
  return [...all, ...(await SessionManager.list("/tmp")), ...inDir];
}
// @ts-expect-error the constructor is private, as upstream
new SessionManager();
void [version, tree, ctx, ro, compaction, file, listing];
