// Snapshots of everything observable: a SessionManager's getters, and the bytes of every file under a directory.
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildRegistry, entryShapes, identityTokens } from "./identity.mjs";
import { capture } from "../../support/normalize.mjs";

// ---------------------------------------------------------------------------------------------------------------
// Reference hazards: the reference loops forever when a parent chain has a cycle (getBranch, context building) or
// when getTree() links a node under itself. These simulate exactly the reference's loops, with an iteration cap, so
// the harness can skip (on both sides) the getters that would hang the reference.
// ---------------------------------------------------------------------------------------------------------------

export function refHazards(entries, leafId) {
  const list = Array.isArray(entries) ? entries : [];
  const byId = new Map();
  for (const e of list) byId.set(e.id, e);
  const cap = list.length + 2;
  const chainOk = (start) => {
    let cur = start;
    let n = 0;
    while (cur) {
      if (++n > cap) return false;
      cur = cur.parentId ? byId.get(cur.parentId) : undefined;
    }
    return true;
  };
  // getBranch(): startId ? byId.get(startId) : undefined
  const branchOk = (id) => chainOk(id ? byId.get(id) : undefined);
  // buildSessionPath(): null -> []; truthy -> byId.get(); then ?? last entry
  const pathOk = (id) => {
    if (id === null) return true;
    let leaf;
    if (id) leaf = byId.get(id);
    leaf ??= list[list.length - 1];
    return chainOk(leaf);
  };
  const treeOk = () => {
    const nodeMap = new Map();
    const roots = [];
    for (const e of list) nodeMap.set(e.id, { children: [] });
    for (const e of list) {
      const node = nodeMap.get(e.id);
      if (e.parentId === null || e.parentId === e.id) roots.push(node);
      else {
        const parent = nodeMap.get(e.parentId);
        if (parent) parent.children.push(node);
        else roots.push(node);
      }
    }
    const stack = [...roots];
    let n = 0;
    const treeCap = 10 * list.length + 100;
    while (stack.length) {
      if (++n > treeCap) return false;
      stack.push(...stack.pop().children);
    }
    return true;
  };
  return {
    branch: branchOk(leafId),
    path: pathOk(leafId),
    tree: treeOk(),
    branchOk,
    pathOk,
  };
}

const SKIP_CYCLE = "<skipped: parent cycle, the reference would hang>";

/**
 * Raw (un-normalised) snapshot of a SessionManager: { values, ident }.
 *  values: every getter's result (or thrown error), in a fixed key order.
 *  ident:  identity-relation tokens and booleans (see identity.mjs).
 * Options: prevEntries (entries array from the previous snapshot of the same manager, for stability checks),
 *          perId: how many entry ids get getBranch(id)/getChildren(id)/getLabel(id)/getEntry(id) ("all" or a number).
 */
export function snapshotManager(sm, { prevEntries, perId = "all", extraIds = [] } = {}) {
  const values = {};
  const ident = {};
  const c = (fn) => {
    const r = capture(fn);
    return "error" in r ? { threw: r.error } : r.value;
  };
  const entriesC = capture(() => sm.getEntries());
  const entries = "error" in entriesC ? undefined : entriesC.value;
  const header = c(() => sm.getHeader());
  const leafId = c(() => sm.getLeafId());
  const reg = buildRegistry(entries, header);
  const hz = refHazards(entries, leafId);
  const tok = (v) => identityTokens(v, reg);

  values.sessionId = c(() => sm.getSessionId());
  values.sessionFile = c(() => sm.getSessionFile());
  values.sessionDir = c(() => sm.getSessionDir());
  values.cwd = c(() => sm.getCwd());
  values.isPersisted = c(() => sm.isPersisted());
  values.usesDefaultSessionDir = c(() => sm.usesDefaultSessionDir());
  values.header = header;
  values.leafId = leafId;
  values.entryCount = c(() => sm.getEntryCount());
  values.entries = "error" in entriesC ? { threw: entriesC.error } : entries;
  values.sessionName = c(() => sm.getSessionName());
  const leafEntry = c(() => sm.getLeafEntry());
  values.leafEntry = leafEntry;
  ident.leafEntry = tok(leafEntry);
  ident.header = [header === c(() => sm.getHeader()), ...tok(c(() => sm.getHeader()))];
  ident.entriesAgain = tok(c(() => sm.getEntries()));
  ident.entriesFresh = entries !== undefined && entries !== c(() => sm.getEntries());
  ident.shapes = entryShapes(entries);
  if (prevEntries && entries) {
    ident.stable = entries.map((e, k) => (k < prevEntries.length ? prevEntries[k] === e : null));
  }

  if (hz.tree) {
    const tree = c(() => sm.getTree());
    values.tree = tree;
    ident.tree = tok(tree);
    ident.treeFresh = tree !== c(() => sm.getTree());
  } else values.tree = SKIP_CYCLE;

  if (hz.branch) {
    const branch = c(() => sm.getBranch());
    values.branch = branch;
    ident.branch = tok(branch);
    ident.branchFresh = branch !== c(() => sm.getBranch());
  } else values.branch = SKIP_CYCLE;

  if (hz.path) {
    const ce = c(() => sm.buildContextEntries());
    values.contextEntries = ce;
    ident.contextEntries = tok(ce);
    const proj = c(() => sm.buildSessionProjection());
    values.projection = proj;
    ident.projection = tok(proj);
    ident.projectionTimestamps = relationTimestamps(proj);
    const ctx = c(() => sm.buildSessionContext());
    values.context = ctx;
    ident.context = tok(ctx);
    const ctx2 = c(() => sm.buildSessionContext());
    ident.contextFresh = [ctx !== ctx2, ctx?.messages !== ctx2?.messages];
  } else {
    values.contextEntries = values.projection = values.context = SKIP_CYCLE;
  }

  // Per-id getters.
  const ids = entries ? entries.map((e) => e?.id) : [];
  let chosen = ids;
  if (perId !== "all") {
    chosen = [];
    const step = Math.max(1, Math.floor(ids.length / perId));
    for (let i = ids.length - 1; i >= 0 && chosen.length < perId; i -= step) chosen.push(ids[i]);
  }
  chosen = [...chosen, ...extraIds];
  values.perId = chosen.map((id) => {
    const row = {
      getEntry: c(() => sm.getEntry(id)),
      label: c(() => sm.getLabel(id)),
      children: c(() => sm.getChildren(id)),
      branch: hz.branchOk(id) ? c(() => sm.getBranch(id)) : SKIP_CYCLE,
    };
    return row;
  });
  ident.perId = values.perId.map((row) => [tok(row.getEntry), tok(row.children), tok(row.branch)]);
  return { values, ident, entries, hazards: hz };
}

/** For every projected message: does its timestamp equal the ms of its source entry's ISO timestamp? */
function relationTimestamps(proj) {
  if (!proj || !Array.isArray(proj.entries)) return null;
  // new Date() throws for a timestamp like { toString: 1 } (corpus 83, 84)
  const ms = (t) => {
    try {
      return new Date(t).getTime();
    } catch {
      return "<new Date() throws>";
    }
  };
  return proj.entries.map((pe) =>
    Array.isArray(pe?.messages)
      ? pe.messages.map((m) => Object.is(m?.timestamp, ms(pe?.sourceEntry?.timestamp)))
      : null,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Directory snapshots: every file under `root`, bytes decoded as latin1 (1:1 with bytes) and normalised.
// ---------------------------------------------------------------------------------------------------------------

/**
 * { "<normalised relative path>": "<normalised bytes>" | "<dir>" }, keys sorted after normalisation.
 * `cache` (a Map) skips re-reading files whose inode/size/mtime/ctime did not change; pass none for a full read.
 */
export function snapshotDir(root, norm, cache) {
  const rows = [];
  const walk = (dir, rel) => {
    let names;
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const full = join(dir, name);
      const relPath = rel ? `${rel}/${name}` : name;
      let st;
      try {
        st = lstatSync(full, { bigint: true });
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        rows.push([norm.str(`${relPath}/`), "<dir>"]);
        walk(full, relPath);
        continue;
      }
      const stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
      const hit = cache?.get(full);
      let text;
      if (hit && hit.stamp === stamp) text = hit.text;
      else {
        text = norm.text(readFileSync(full).toString("latin1"));
        cache?.set(full, { stamp, text });
      }
      rows.push([norm.str(relPath), text]);
    }
  };
  walk(root, "");
  rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return Object.fromEntries(rows);
}

export { SKIP_CYCLE };
