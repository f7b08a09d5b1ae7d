// Object-identity relations.
//
// The reference hands out its stored objects: getEntry(id) === getEntries()[k], getTree() nodes hold those same
// entries, buildSessionContext().messages[i] is the entry's own `message` object, a compaction's systemMessage is
// returned as is, an edited message's content is the context_edit's replacement.content, and so on.
// Extensions may rely on this, so we record, per implementation, which stored object every returned object is
// (or "new"), and compare those token lists between implementations.

/**
 * Registry of stored objects: object -> path ("E3", "E3.message", "E3.message.content.0", "H").
 * Walks the entries down to `maxDepth` levels.
 */
export function buildRegistry(entries, header, maxDepth = 4) {
  const reg = new Map();
  const walk = (v, path, depth) => {
    if (v === null || typeof v !== "object" || reg.has(v)) return;
    reg.set(v, path);
    if (depth >= maxDepth) return;
    for (const k of Object.keys(v)) walk(v[k], `${path}.${k}`, depth + 1);
  };
  if (header && typeof header === "object") walk(header, "H", 0);
  if (Array.isArray(entries)) for (const [k, e] of entries.entries()) walk(e, `E${k}`, 0);
  return reg;
}

/**
 * Identity tokens of a returned value: for every object node (depth-limited), "path=token" where token is the
 * registry path of the stored object it is, "R:<path>" if it repeats an object seen earlier in the same value, or
 * "new". Registered objects are not descended into.
 */
export function identityTokens(value, reg, maxDepth = 6) {
  const out = [];
  const local = new Map();
  const walk = (v, path, depth) => {
    if (v === null || typeof v !== "object") return;
    const stored = reg.get(v);
    if (stored !== undefined) {
      out.push(`${path}=${stored}`);
      return;
    }
    const again = local.get(v);
    if (again !== undefined) {
      out.push(`${path}=R:${again}`);
      return;
    }
    local.set(v, path);
    out.push(`${path}=new`);
    if (depth >= maxDepth) return;
    if (v instanceof Date) return;
    for (const k of Object.keys(v)) walk(v[k], `${path}.${k}`, depth + 1);
  };
  walk(value, "$", 0);
  return out;
}

/**
 * Property shape of stored entries: keys that are accessors or non-writable/non-configurable/non-enumerable
 * (the reference's entries are plain data objects, so this list is empty there).
 */
export function entryShapes(entries) {
  const out = [];
  if (!Array.isArray(entries)) return out;
  entries.forEach((e, k) => {
    if (e === null || typeof e !== "object") return;
    for (const key of Reflect.ownKeys(e)) {
      const d = Object.getOwnPropertyDescriptor(e, key);
      const flags = [];
      if ("get" in d || "set" in d) flags.push("accessor");
      else if (!d.writable) flags.push("readonly");
      if (!d.configurable) flags.push("nonconfigurable");
      if (!d.enumerable) flags.push("hidden");
      if (typeof key === "symbol") flags.push("symbol");
      if (flags.length) out.push(`E${k}.${String(key)}:${flags.join("+")}`);
    }
  });
  return out;
}
