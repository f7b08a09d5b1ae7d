// Type test: the package's `require` condition (index.d.ts), through a self-reference under NodeNext.
import pkg = require("pi-session-native");
import { SessionManager, type SessionEntry } from "pi-session-native";

const sm: SessionManager = pkg.SessionManager.inMemory("/tmp");
const entries: SessionEntry[] = sm.getEntries();
const version: 3 = pkg.CURRENT_SESSION_VERSION;
// @ts-expect-error no default export in CommonJS
pkg.default;
export { entries, version };
