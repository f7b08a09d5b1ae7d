// Files whose parent links loop: the reference walks them forever (and runs out of memory),
// so the differential tests leave them out of operations that walk a branch.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { corpus } from "./corpus.mjs";
import { ref } from "./impls.mjs";

/** True when the parsed entries' parent links (Map semantics, last id wins) contain a cycle. */
export function hasParentCycle(bytes) {
  const entries = ref
    .parseSessionEntries(Buffer.from(bytes).toString("utf8"))
    .filter((e) => e && typeof e === "object");
  const byId = new Map();
  for (const e of entries) if (e.type !== "session") byId.set(e.id, e);
  for (const start of byId.values()) {
    const seen = new Set();
    for (let cur = start; cur; cur = cur.parentId ? byId.get(cur.parentId) : undefined) {
      if (seen.has(cur)) return true;
      seen.add(cur);
    }
  }
  return false;
}

/** Writes the adversarial corpus minus the files with parent cycles into `dir`; returns their names. */
export function writeWalkableCorpus(dir) {
  mkdirSync(dir, { recursive: true });
  const names = [];
  for (const f of corpus()) {
    if (/cycle/.test(f.name) || hasParentCycle(f.bytes)) continue;
    writeFileSync(join(dir, f.name), f.bytes);
    names.push(f.name);
  }
  return names;
}
