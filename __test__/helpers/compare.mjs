// Shared comparison plumbing for the differential tests.
import { deepDiff, formatDiff, show } from "../../support/normalize.mjs";

/**
 * Compare two records key by key (same key set expected). Returns null or { key, diff }.
 * Keys are compared in the order of the left record, so the first failing key is the earliest observable.
 */
export function firstRecordDiff(a, b, prefix = "") {
  for (const key of Object.keys(a)) {
    const d = deepDiff(a[key], b[key], `${prefix}${key}`);
    if (d) return { key: `${prefix}${key}`, diff: d };
  }
  for (const key of Object.keys(b)) {
    if (!(key in a))
      return { key: `${prefix}${key}`, diff: { path: key, reason: "only on right side", a: undefined, b: b[key] } };
  }
  return null;
}

/** Throw an assertion-style Error describing the first difference, or return quietly. */
export function assertSame(a, b, what, labels = ["ref", "ours"]) {
  const d = deepDiff(a, b, "$");
  if (d) throw new Error(`${what}: ${formatDiff(d, labels)}`);
}

/**
 * SessionInfo arrays may legitimately order ties differently when the tied sessions were created in the same
 * millisecond on one side only. Stable-sort by normalised `modified`, then by a rendering of the info.
 */
export function canonicalTies(infos) {
  if (!Array.isArray(infos)) return infos;
  const key = (i) => (typeof i?.modified?.time === "number" ? i.modified.time : Number.POSITIVE_INFINITY);
  return [...infos].sort((x, y) => key(y) - key(x) || (show(x, 1e9) < show(y, 1e9) ? -1 : 1));
}
