// Type test: our class satisfies the upstream ReadonlySessionManager shape, so it can be
// handed to pi APIs that only read a session.
import type { ReadonlySessionManager as UpstreamReadonly } from "../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";
import type { SessionManager } from "../../index.js";

declare const ours: SessionManager;
const asUpstream: UpstreamReadonly = ours;
void asUpstream;
