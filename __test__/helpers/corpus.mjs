// Adversarial session-file corpus, generated at test time (never committed).
// corpus() returns [{ name, bytes: Buffer, note }]. All timestamps and ids are fixed, so files are identical on
// every run; ids look like real ones (8 hex chars, UUIDs) so the normaliser treats them like real ones.
// The cases live in corpus/: format.mjs (the file's bytes and JSON text), entries.mjs (what entries mean),
// both built from corpus/build.mjs.

import { asst, header, ID, J, lines, user } from "./corpus/build.mjs";
import { entryCases } from "./corpus/entries.mjs";
import { formatCases } from "./corpus/format.mjs";

/**
 * A case's place in the corpus: its number (the real-looking file name goes by its session id, 67), and 87
 * right after 72, whose companion it is. The listing tests give each file an mtime by its place.
 */
function rank(name) {
  if (name.startsWith("87-")) return 72.5;
  const m = /^(\d\d)-/.exec(name) ?? /(\d+)\.jsonl$/.exec(name);
  return Number(m[1]);
}

export function corpus() {
  const out = [];
  const add = (name, bytes, note = "") =>
    out.push({ name: name.endsWith(".jsonl") ? name : `${name}.jsonl`, bytes, note });
  formatCases(add);
  entryCases(add);
  // a stable sort: the numbered runs (48-version-*, 71-version-raw-*) keep their order
  return out.sort((x, y) => rank(x.name) - rank(y.name));
}

/** Two entries whose parent chain is a cycle, and the leaf on it. Used by the ours-only cycle test. */
export function cycleFile() {
  return lines(J(header(99)), J({ ...user(1, "A", ID(2)) }), J({ ...asst(2, "B", ID(1)) }));
}

export { asst, CWD, entry, FILE_URL_CWD, header, ID, MS, SID, TS, user } from "./corpus/build.mjs";
