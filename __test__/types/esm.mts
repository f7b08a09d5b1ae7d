// Type test: the package's `import` condition (index.d.mts), through a self-reference under NodeNext:
// named, default and namespace imports, and the types, as an ESM consumer sees them.
import pkg, * as ns from "pi-session-native";
import { SessionManager, buildSessionContext, type SessionEntry, type SessionInfo } from "pi-session-native";

const sm: SessionManager = pkg.SessionManager.inMemory("/tmp");
const same: typeof SessionManager = ns.SessionManager;
const version: 3 = pkg.CURRENT_SESSION_VERSION;
const entries: SessionEntry[] = sm.getEntries();
const ctx = buildSessionContext(entries, sm.getLeafId());
const list: Promise<SessionInfo[]> = ns.default.SessionManager.list("/tmp");
// @ts-expect-error not an export
pkg.notAnExport;
export { same, version, ctx, list };
