// Type test: the structural shape of our public surface against pi 1.6.0's `core/session-manager`.
//
// For every public instance method, static method, exported function and exported type, both
// directions are checked: ours is assignable to upstream's, and upstream's to ours. A mismatch fails
// `npm run test:types` with the offending names in the message (e.g. `Type '"getTree"' does not
// satisfy the constraint 'never'`).
//
// Result for 1.6.0: every member matches both ways. Only the class as a whole differs, because
// upstream declares private members and TypeScript compares such classes nominally; that is the one
// cast documented in docs/install.md, checked at the end of this file.
import type * as U from "../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";
import type * as O from "../../index.js";
import { SessionManager } from "../../index.js";

type Up = U.SessionManager;
type Ours = O.SessionManager;
type UpStatic = typeof U.SessionManager;
type OursStatic = typeof O.SessionManager;

type Assignable<A, B> = [A] extends [B] ? true : false;
type Both<A, B> = [Assignable<A, B>, Assignable<B, A>];
type IsAny<T> = 0 extends 1 & T ? true : false;
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Keys of `T` whose check is not `[true, true]`: must be `never`. */
type Mismatches<T> = { [K in keyof T]: T[K] extends [true, true] ? never : K }[keyof T];
type ExpectNever<T extends never> = T;
type ExpectTrue<T extends true> = T;

// ---------------------------------------------------------------------------
// Instance methods: `keyof Up` is upstream's public members (private ones are not keys).

type Methods = { [K in keyof Up]: K extends keyof Ours ? Both<Ours[K], Up[K]> : "missing in ours" };
export type InstanceMethodMismatches = ExpectNever<Mismatches<Methods>>;
/** Public members we have that upstream does not. */
export type ExtraInstanceMembers = ExpectNever<Exclude<keyof Ours, keyof Up>>;

// The whole public shape at once, in both directions.
declare const ours: Ours;
declare const up: Up;
export const oursAsUpstreamShape: Pick<Up, keyof Up> = ours;
export const upstreamAsOurShape: Pick<Ours, keyof Ours> = up;

// ---------------------------------------------------------------------------
// Static methods: the same parameters; results the same with each side's own class substituted.

type Swap<T> = T extends Up ? Ours : T extends Promise<infer P> ? Promise<Swap<P>> : T;
type StaticName = Exclude<keyof UpStatic, "prototype">;
type Statics = {
  [K in StaticName]: K extends keyof OursStatic
    ? UpStatic[K] extends (...args: infer A) => infer R
      ? OursStatic[K] extends (...args: infer B) => infer S
        ? [Both<A, B>[0] & Both<A, B>[1], Both<Swap<R>, S>[0] & Both<Swap<R>, S>[1]]
        : "not a function in ours"
      : never
    : "missing in ours";
};
export type StaticMismatches = ExpectNever<Mismatches<Statics>>;
export type ExtraStatics = ExpectNever<Exclude<keyof OursStatic, keyof UpStatic>>;
// `Parameters` sees only the last overload; listAll's two overloads are checked directly.
export const listAllByCallback: (onProgress?: U.SessionListProgress, signal?: AbortSignal) => Promise<U.SessionInfo[]> =
  SessionManager.listAll;
export const listAllByDir: (
  sessionDir?: string,
  onProgress?: U.SessionListProgress,
  signal?: AbortSignal,
) => Promise<U.SessionInfo[]> = SessionManager.listAll;

// ---------------------------------------------------------------------------
// Exported functions and constants.

type FunctionName =
  | "assertValidSessionId"
  | "migrateSessionEntries"
  | "parseSessionEntries"
  | "getLatestCompactionEntry"
  | "sessionEntryToContextMessages"
  | "buildContextEntries"
  | "projectContextEntry"
  | "buildSessionProjection"
  | "buildSessionContext"
  | "getDefaultSessionDir"
  | "loadEntriesFromFile"
  | "findMostRecentSession";
type Functions = { [K in FunctionName]: Both<(typeof O)[K], (typeof U)[K]> };
export type FunctionMismatches = ExpectNever<Mismatches<Functions>>;
export type VersionMatches = ExpectTrue<Equal<typeof O.CURRENT_SESSION_VERSION, typeof U.CURRENT_SESSION_VERSION>>;

// ---------------------------------------------------------------------------
// Exported types (ours copies pi-ai's message types structurally, so these are real comparisons).

type Types = {
  SessionHeader: Both<O.SessionHeader, U.SessionHeader>;
  NewSessionOptions: Both<O.NewSessionOptions, U.NewSessionOptions>;
  SessionEntryBase: Both<O.SessionEntryBase, U.SessionEntryBase>;
  SessionMessageEntry: Both<O.SessionMessageEntry, U.SessionMessageEntry>;
  ThinkingLevelChangeEntry: Both<O.ThinkingLevelChangeEntry, U.ThinkingLevelChangeEntry>;
  ModelChangeEntry: Both<O.ModelChangeEntry, U.ModelChangeEntry>;
  UsageEntry: Both<O.UsageEntry, U.UsageEntry>;
  CompactionEntry: Both<O.CompactionEntry, U.CompactionEntry>;
  CompactionEntryOfT: Both<O.CompactionEntry<{ files: string[] }>, U.CompactionEntry<{ files: string[] }>>;
  BranchSummaryEntry: Both<O.BranchSummaryEntry, U.BranchSummaryEntry>;
  CustomEntry: Both<O.CustomEntry, U.CustomEntry>;
  LabelEntry: Both<O.LabelEntry, U.LabelEntry>;
  SessionInfoEntry: Both<O.SessionInfoEntry, U.SessionInfoEntry>;
  CustomMessageEntry: Both<O.CustomMessageEntry, U.CustomMessageEntry>;
  ContextEditableContent: Both<O.ContextEditableContent, U.ContextEditableContent>;
  ContextEditEntry: Both<O.ContextEditEntry, U.ContextEditEntry>;
  SessionEntry: Both<O.SessionEntry, U.SessionEntry>;
  FileEntry: Both<O.FileEntry, U.FileEntry>;
  SessionTreeNode: Both<O.SessionTreeNode, U.SessionTreeNode>;
  ProjectedSessionEntry: Both<O.ProjectedSessionEntry, U.ProjectedSessionEntry>;
  SessionProjection: Both<O.SessionProjection, U.SessionProjection>;
  SessionContext: Both<O.SessionContext, U.SessionContext>;
  SessionInfo: Both<O.SessionInfo, U.SessionInfo>;
  SessionListProgress: Both<O.SessionListProgress, U.SessionListProgress>;
  ReadonlySessionManager: Both<O.ReadonlySessionManager, U.ReadonlySessionManager>;
};
export type TypeMismatches = ExpectNever<Mismatches<Types>>;

// Guard against vacuous passes: if pi-ai's or pi-agent-core's types failed to resolve, upstream's
// message types would silently be `any` (skipLibCheck), and every check above would pass.
type NotAny = {
  upstreamMessage: IsAny<U.SessionMessageEntry["message"]>;
  upstreamContextMessage: IsAny<U.SessionContext["messages"][number]>;
  upstreamUsage: IsAny<U.UsageEntry["usage"]>;
  upstreamEditable: IsAny<U.ContextEditableContent>;
  oursMessage: IsAny<O.SessionMessageEntry["message"]>;
  oursContextMessage: IsAny<O.SessionContext["messages"][number]>;
};
export type NoAnyTypes = ExpectNever<{ [K in keyof NotAny]: NotAny[K] extends false ? never : K }[keyof NotAny]>;

// ---------------------------------------------------------------------------
// The one difference: upstream's class declares private members, so TypeScript compares it
// nominally and ours is not assignable to it; a pi API typed with upstream's `SessionManager` needs
// `as unknown as`. (The other direction holds: ours declares no private members.) If this ever
// becomes assignable, the cast note in docs/install.md can go.
export type ClassesAreNominal = ExpectTrue<Equal<Both<Ours, Up>, [false, true]>>;
export const cast: Up = SessionManager.inMemory("/tmp") as unknown as Up;
