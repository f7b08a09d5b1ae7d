//! The in-memory index of a session: `fileEntries`, `byId` and the label map of the
//! reference, over skeletons. Positions (`u32`) index `fileEntries`, header included.
//!
//! Lookups follow JS `Map` semantics exactly: a duplicate id replaces the value but keeps
//! the key's first insertion position, and every walk is bounded so a cyclic parent
//! chain (where the reference loops forever) becomes an error.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

// foldhash (seeded per process) instead of SipHash: ~12% off open(L); ids come from the
// user's own files, so HashDoS resistance is not worth SipHash's cost here.
use foldhash::fast::RandomState;
use indexmap::IndexMap;

use crate::error::{Error, Result};
use crate::model::entry::{EntryType, Key, Role, Skeleton};

#[derive(Default, Debug)]
pub struct Tree {
    items: Vec<Skeleton>,
    by_id: IdIndex,
    /// Positions whose key was first inserted into `byId`, in insertion order.
    id_order: Vec<u32>,
    /// `labelsById` (and `labelTimestampsById`, which has the same keys): target → label entry.
    labels: IndexMap<Key, u32, RandomState>,
    last_session_info: Option<u32>,
    last_entry: Option<u32>,
    /// Resolved parent position of each item (`NO_PARENT`: none), valid while `!links_dirty`.
    parent_pos: std::cell::RefCell<Vec<u32>>,
    links_dirty: std::cell::Cell<bool>,
    /// Parent keys that resolved to nothing (orphans): an entry with such an id relinks them.
    unresolved: HashSet<Key, RandomState>,
}

const NO_PARENT: u32 = u32::MAX;

/// A `message` entry whose `message` is null or undefined, at the point where the reference
/// reads `entry.message.role` and throws a `TypeError`. The facade reads the same property
/// of that entry's object, so the engine throws its own text (`MessageMissing.0` is the
/// entry's position).
#[derive(Debug, PartialEq)]
pub struct MessageMissing(pub u32);

/// What `buildSessionProjection` needs, as positions.
#[derive(Debug, PartialEq)]
pub struct ContextPlan {
    pub thinking: Option<u32>,
    pub model: Option<u32>,
    /// (entry position, position of the context edit that applies, contributes no messages)
    pub entries: Vec<(u32, Option<u32>, bool)>,
}

impl Tree {
    pub fn new() -> Tree {
        Tree::default()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, pos: u32) -> &Skeleton {
        &self.items[pos as usize]
    }

    /// A tree over the items of a loaded file (`_buildIndex`): they are indexed where they
    /// lie, not moved into a second vector (a 4 GB session has a million of them), and the
    /// index is sized once.
    pub fn from_items(mut items: Vec<Skeleton>) -> Tree {
        items.shrink_to_fit();
        let n = items.len();
        let mut tree = Tree {
            by_id: IdIndex::with_capacity(n),
            id_order: Vec::with_capacity(n),
            parent_pos: std::cell::RefCell::new(Vec::with_capacity(n)),
            ..Tree::default()
        };
        tree.items = items;
        for pos in 0..n as u32 {
            tree.index(pos);
        }
        tree
    }

    /// Appends an item and indexes it (`_buildIndex` for one entry, `_appendEntry`).
    pub fn push(&mut self, sk: Skeleton) -> u32 {
        let pos = self.items.len() as u32;
        self.items.push(sk);
        self.index(pos);
        pos
    }

    /// Indexes the item at `pos`, the one after those indexed already.
    fn index(&mut self, pos: u32) {
        let sk = &self.items[pos as usize];
        if sk.ty != EntryType::Session {
            match self.by_id.insert(&self.items, pos) {
                None => self.id_order.push(pos),
                Some(_) if matches!(sk.id, Key::Unique(_)) => self.id_order.push(pos),
                // A duplicate id moves every link to that id: recompute links lazily.
                Some(_) => self.links_dirty.set(true),
            }
            if self.unresolved.contains(&sk.id) {
                self.links_dirty.set(true);
            }
            self.last_entry = Some(pos);
            if sk.ty == EntryType::SessionInfo {
                self.last_session_info = Some(pos);
            }
            if sk.ty == EntryType::Label {
                if sk.label_truthy {
                    self.labels.insert(sk.target.clone(), pos);
                } else {
                    self.labels.shift_remove(&sk.target);
                }
            }
        }
        let parent = self.resolve_parent(sk);
        if parent == NO_PARENT && sk.parent.truthy() {
            self.unresolved.insert(sk.parent.clone());
        }
        if !self.links_dirty.get() {
            self.parent_pos.borrow_mut().push(parent);
        }
    }

    fn resolve_parent(&self, sk: &Skeleton) -> u32 {
        if sk.ty == EntryType::Session || !sk.parent.truthy() {
            return NO_PARENT;
        }
        self.lookup(&sk.parent).unwrap_or(NO_PARENT)
    }

    /// The resolved parent of `pos` (`current.parentId ? byId.get(current.parentId) : undefined`).
    fn parent_of(&self, pos: u32) -> Option<u32> {
        if self.links_dirty.get() {
            let links: Vec<u32> = self.items.iter().map(|sk| self.resolve_parent(sk)).collect();
            *self.parent_pos.borrow_mut() = links;
            self.links_dirty.set(false);
        }
        let p = self.parent_pos.borrow()[pos as usize];
        (p != NO_PARENT).then_some(p)
    }

    /// Undoes the last `push` of an entry whose write failed (`_appendEntry`'s rollback:
    /// the entry leaves `fileEntries` and `byId`; labels are only set after a write).
    pub fn pop(&mut self) {
        let Some(last) = self.items.last() else { return };
        let pos = self.items.len() as u32 - 1;
        self.links_dirty.set(true);
        if last.ty != EntryType::Session && self.by_id.get(&self.items, &last.id) == Some(pos) {
            self.by_id.remove(&self.items, pos);
            if self.id_order.last() == Some(&pos) {
                self.id_order.pop();
            }
        }
        let Some(sk) = self.items.pop() else { return };
        if sk.ty == EntryType::Session {
            return;
        }
        self.recompute_tails();
        if sk.ty == EntryType::Label {
            // Labels of a failed append were never applied by the reference; rebuild them.
            self.rebuild_labels();
        }
    }

    fn recompute_tails(&mut self) {
        self.last_entry = self.items.iter().rposition(|s| s.ty != EntryType::Session).map(|p| p as u32);
        self.last_session_info = self.items.iter().rposition(|s| s.ty == EntryType::SessionInfo).map(|p| p as u32);
    }

    fn rebuild_labels(&mut self) {
        self.labels.clear();
        for (pos, sk) in self.items.iter().enumerate() {
            if sk.ty == EntryType::Label {
                if sk.label_truthy {
                    self.labels.insert(sk.target.clone(), pos as u32);
                } else {
                    self.labels.shift_remove(&sk.target);
                }
            }
        }
    }

    /// `byId.get(id)`.
    pub fn lookup(&self, key: &Key) -> Option<u32> {
        if matches!(key, Key::Unique(_)) {
            return None;
        }
        self.by_id.get(&self.items, key)
    }

    /// `byId.size`.
    pub fn entry_count(&self) -> usize {
        self.id_order.len()
    }

    /// Position of the first header-typed item (`getHeader`).
    pub fn header(&self) -> Option<u32> {
        self.items.iter().position(|s| s.ty == EntryType::Session).map(|p| p as u32)
    }

    /// The latest `session_info` entry (`getSessionName`).
    pub fn last_session_info(&self) -> Option<u32> {
        self.last_session_info
    }

    /// The last non-header item (`entries[entries.length - 1]` of `getEntries()`).
    pub fn last_entry(&self) -> Option<u32> {
        self.last_entry
    }

    /// Positions of all non-header items (`getEntries()`).
    pub fn entries(&self) -> Vec<u32> {
        (0..self.items.len() as u32).filter(|&p| self.items[p as usize].ty != EntryType::Session).collect()
    }

    /// `_hasConversation()`: `Err` where the reference throws reading `.role` of a missing
    /// message before it finds a conversation message.
    pub fn has_conversation(&self) -> std::result::Result<bool, MessageMissing> {
        for (pos, sk) in self.items.iter().enumerate() {
            if sk.ty == EntryType::Message {
                match sk.role {
                    Role::NoMessage => return Err(MessageMissing(pos as u32)),
                    r if r.is_conversation() => return Ok(true),
                    _ => {}
                }
            }
        }
        Ok(false)
    }

    /// `getChildren(parentId)`: `byId` values in insertion order whose parent is `parent`.
    pub fn children(&self, parent: &Key) -> Vec<u32> {
        self.id_order
            .iter()
            .map(|&first| self.by_id_value(first))
            .filter(|&p| self.items[p as usize].parent.strict_eq(parent))
            .collect()
    }

    fn by_id_value(&self, first: u32) -> u32 {
        let key = &self.items[first as usize].id;
        if matches!(key, Key::Unique(_)) { first } else { self.by_id.get(&self.items, key).unwrap_or(first) }
    }

    /// Label entry currently applied to `target` (`labelsById.get`).
    pub fn label(&self, target: &Key) -> Option<u32> {
        if matches!(target, Key::Unique(_)) {
            return None;
        }
        self.labels.get(target).copied()
    }

    /// Label entries in `labelsById` iteration order.
    pub fn labels(&self) -> Vec<u32> {
        self.labels.values().copied().collect()
    }

    /// Walks parent links from `start` to the root, returning root-first positions.
    fn walk(&self, start: Option<u32>) -> Result<Vec<u32>> {
        walk_up(start, self.items.len(), |p| self.parent_of(p))
            .map_err(|pos| Error::Cycle { id: format!("{:?}", self.items[pos as usize].id) })
    }

    /// `getBranch(fromId)` with `fromId ?? leafId` already resolved by the caller.
    pub fn branch(&self, start: &Key) -> Result<Vec<u32>> {
        let first = if start.truthy() { self.lookup(start) } else { None };
        self.walk(first)
    }

    /// `buildSessionPath(entries, leafId, byId)`.
    pub fn session_path(&self, leaf: &Key) -> Result<Vec<u32>> {
        let leaf = match leaf {
            Key::Null => Leaf::Null,
            k if k.truthy() => self.lookup(k).map_or(Leaf::NotFound, Leaf::Found),
            _ => Leaf::NotFound,
        };
        self.walk(path_start(leaf, self.last_entry))
    }

    /// `buildContextEntries(entries, leafId, byId)` for the path `session_path` returned
    /// (see `context_entries`).
    pub fn context_entries(&self, path: &[u32]) -> std::result::Result<Vec<u32>, MessageMissing> {
        context_entries(path, |p| &self.items[p as usize])
    }

    /// `buildSessionProjection` as positions (see `context_plan`).
    pub fn context_plan(&self, leaf: &Key) -> Result<std::result::Result<ContextPlan, MessageMissing>> {
        let path = self.session_path(leaf)?;
        Ok(context_plan(&path, |p| &self.items[p as usize]))
    }

    /// `getTree()`'s linking step. For each non-header item in order: the position of the
    /// node it maps to (`nodeMap.get(entry.id)`, the last entry with that id) and the node
    /// it is pushed under (`None`: a root).
    pub fn tree_links(&self) -> Vec<(u32, Option<u32>)> {
        let mut out = Vec::with_capacity(self.items.len());
        for (pos, sk) in self.items.iter().enumerate() {
            if sk.ty == EntryType::Session {
                continue;
            }
            let node = if matches!(sk.id, Key::Unique(_)) {
                pos as u32
            } else {
                self.by_id.get(&self.items, &sk.id).unwrap_or(pos as u32)
            };
            let parent =
                if sk.parent == Key::Null || sk.parent.strict_eq(&sk.id) { None } else { self.lookup(&sk.parent) };
            out.push((node, parent));
        }
        out
    }
}

/// What `buildSessionPath` finds for its `leafId`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// `leafId === null`: the path is empty.
    Null,
    /// `index.get(leafId)` is the item at this position.
    Found(u32),
    /// `leafId` is falsy, or the index has nothing for it: the last entry is the leaf.
    NotFound,
    /// The index gave a falsy value that is not null or undefined (a caller's `byId`
    /// can): `leaf ??=` keeps it and the path is empty.
    Falsy,
}

/// `buildSessionPath`'s leaf: `leafId === null` → none; `index.get(leafId) ?? entries.at(-1)`
/// (`last`: the last entry when it is truthy).
pub fn path_start(leaf: Leaf, last: Option<u32>) -> Option<u32> {
    match leaf {
        Leaf::Null | Leaf::Falsy => None,
        Leaf::Found(p) => Some(p),
        Leaf::NotFound => last,
    }
}

/// Root-first positions from `start` up the parent links. `Err(pos)` where a walk passed
/// `limit` items (a cyclic chain, where the reference loops forever).
fn walk_up(
    start: Option<u32>,
    limit: usize,
    parent_of: impl Fn(u32) -> Option<u32>,
) -> std::result::Result<Vec<u32>, u32> {
    let mut path = Vec::new();
    let mut current = start;
    while let Some(pos) = current {
        if path.len() > limit {
            return Err(pos);
        }
        path.push(pos);
        current = parent_of(pos);
    }
    path.reverse();
    Ok(path)
}

/// pi's context rule, step 1: `buildContextEntries` over a root-first `path` (`sk(p)` is the
/// skeleton at `p`), extended with the seed format's `retainedTail` checkpoint: the latest
/// compaction, then the entries from its `firstKeptEntryId` on (not system messages), then
/// those after it. `Err` where the reference throws: a message entry without a message in
/// the kept range.
pub fn context_entries<'a>(
    path: &[u32],
    sk: impl Fn(u32) -> &'a Skeleton,
) -> std::result::Result<Vec<u32>, MessageMissing> {
    let Some(ci) = path.iter().rposition(|&p| sk(p).ty == EntryType::Compaction) else {
        return Ok(path.to_vec());
    };
    let cpos = path[ci];
    let comp = sk(cpos);
    // path.findIndex(e => e.id === compaction.id): an earlier entry with an id `===` to
    // it, else the compaction itself (its id is itself, an object included) unless NaN.
    let Some(idx) = path.iter().position(|&p| (p == cpos && !comp.id.is_nan()) || sk(p).id.strict_eq(&comp.id)) else {
        return Ok(path.to_vec());
    };
    let mut out = vec![cpos];
    if !comp.retained_tail {
        let mut found = false;
        for &p in &path[..idx] {
            let s = sk(p);
            if s.id.strict_eq(&comp.target) {
                found = true;
            }
            if found {
                if s.ty == EntryType::Message && s.role == Role::NoMessage {
                    return Err(MessageMissing(p));
                }
                if !(s.ty == EntryType::Message && s.role == Role::System) {
                    out.push(p);
                }
            }
        }
    }
    out.extend_from_slice(&path[idx + 1..]);
    Ok(out)
}

/// pi's context rule, whole (`buildSessionProjection` as positions) over a root-first
/// `path`: thinking level and model from the whole path, the context entries, the context
/// edit that applies to each, and which contribute no messages (an older compaction).
/// `Err` where the reference throws: the first message entry without a message on the
/// path (its settings loop reads every message's role), else one in the kept range.
pub fn context_plan<'a>(
    path: &[u32],
    sk: impl Fn(u32) -> &'a Skeleton + Copy,
) -> std::result::Result<ContextPlan, MessageMissing> {
    let mut thinking = None;
    let mut model = None;
    for &p in path {
        let s = sk(p);
        match s.ty {
            EntryType::ThinkingLevelChange => thinking = Some(p),
            EntryType::ModelChange => model = Some(p),
            EntryType::Message if s.role == Role::NoMessage => return Err(MessageMissing(p)),
            EntryType::Message if s.role == Role::Assistant => model = Some(p),
            _ => {}
        }
    }
    let ctx = context_entries(path, sk)?;
    // `edits`: a Map from targetId (SameValueZero) to the latest edit.
    let mut edits: HashMap<&Key, u32> = HashMap::new();
    for &p in &ctx {
        let s = sk(p);
        if s.ty == EntryType::ContextEdit && !matches!(s.target, Key::Unique(_)) {
            edits.insert(&s.target, p);
        }
    }
    let entries = ctx
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let s = sk(p);
            let edit = if matches!(s.id, Key::Unique(_)) { None } else { edits.get(&s.id).copied() };
            (p, edit, s.ty == EntryType::Compaction && i > 0)
        })
        .collect();
    Ok(ContextPlan { thinking, model, entries })
}

/// Where the context rule stops on objects the facade holds (`linked_context_plan`).
#[derive(Debug, PartialEq, Eq)]
pub enum LinkedStop {
    /// A message entry without a message, where the reference throws (item position).
    MessageMissing(u32),
    /// A cyclic parent chain, where the reference loops forever (the item the walk stopped at).
    Cycle(u32),
}

/// pi's context rule for objects the facade holds (the exported free functions):
/// `items[i]`'s parent is the item `parents[i]` (its `parentId` resolved by the caller's
/// index, which only JS can query), `leaf` what the index gave for `leafId`, `last` the
/// last entry when truthy. `entries_only`: `buildContextEntries` alone (no settings,
/// edits or silent flags).
pub fn linked_context_plan(
    items: &[Skeleton],
    parents: &[Option<u32>],
    leaf: Leaf,
    last: Option<u32>,
    entries_only: bool,
) -> std::result::Result<ContextPlan, LinkedStop> {
    let parent_of = |p: u32| parents.get(p as usize).copied().flatten();
    let path = walk_up(path_start(leaf, last), items.len(), parent_of).map_err(LinkedStop::Cycle)?;
    let sk = |p: u32| &items[p as usize];
    if entries_only {
        let ctx = context_entries(&path, sk).map_err(|MessageMissing(p)| LinkedStop::MessageMissing(p))?;
        return Ok(ContextPlan {
            thinking: None,
            model: None,
            entries: ctx.into_iter().map(|p| (p, None, false)).collect(),
        });
    }
    context_plan(&path, sk).map_err(|MessageMissing(p)| LinkedStop::MessageMissing(p))
}

/// `byId`: each id to the position of the last item with it (`Map.set` replaces the value
/// and keeps the key's place, which `id_order` records). A slot holds only the position:
/// its key is that item's id, so a million ids are not held a second time (a 4 GB session:
/// ~100 MB less at open).
#[derive(Default, Debug)]
struct IdIndex {
    table: hashbrown::HashTable<u32>,
    hasher: RandomState,
}

impl IdIndex {
    fn with_capacity(n: usize) -> IdIndex {
        IdIndex { table: hashbrown::HashTable::with_capacity(n), hasher: RandomState::default() }
    }

    fn get(&self, items: &[Skeleton], key: &Key) -> Option<u32> {
        self.table.find(self.hasher.hash_one(key), |&p| items[p as usize].id == *key).copied()
    }

    /// Maps `items[pos].id` to `pos`; returns the position it mapped to before.
    fn insert(&mut self, items: &[Skeleton], pos: u32) -> Option<u32> {
        let key = &items[pos as usize].id;
        let hash = self.hasher.hash_one(key);
        if let Some(slot) = self.table.find_mut(hash, |&p| items[p as usize].id == *key) {
            return Some(std::mem::replace(slot, pos));
        }
        let hasher = &self.hasher;
        self.table.insert_unique(hash, pos, |&p| hasher.hash_one(&items[p as usize].id));
        None
    }

    /// Removes the id of `items[pos]`, which maps to `pos`.
    fn remove(&mut self, items: &[Skeleton], pos: u32) {
        let hash = self.hasher.hash_one(&items[pos as usize].id);
        if let Ok(slot) = self.table.find_entry(hash, |&p| p == pos) {
            slot.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::entry::LinkedItems;
    use crate::storage::json;

    fn tree(lines: &[&str]) -> Tree {
        let mut t = Tree::new();
        let mut u = 0;
        for l in lines {
            let v = json::parse_document(l.as_bytes()).unwrap();
            t.push(Skeleton::from_value(l.as_bytes(), v, &mut u));
        }
        t
    }

    fn s(id: &str) -> Key {
        Key::Str(id.into())
    }

    #[test]
    fn path_children_labels() {
        let t = tree(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","message":{"role":"assistant"}}"#,
            r#"{"type":"message","id":"c","parentId":"a","message":{"role":"user"}}"#,
            r#"{"type":"label","id":"l","parentId":"c","targetId":"a","label":"x"}"#,
        ]);
        assert_eq!(t.branch(&s("c")).unwrap(), vec![1, 3]);
        assert_eq!(t.session_path(&Key::Undefined).unwrap(), vec![1, 3, 4]);
        assert_eq!(t.session_path(&Key::Null).unwrap(), Vec::<u32>::new());
        assert_eq!(t.children(&s("a")), vec![2, 3]);
        assert_eq!(t.label(&s("a")), Some(4));
        assert_eq!(t.entry_count(), 4);
        assert_eq!(t.has_conversation(), Ok(true));
    }

    #[test]
    fn cycles_are_errors() {
        let t = tree(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":"b","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","message":{"role":"user"}}"#,
        ]);
        assert!(matches!(t.branch(&s("a")), Err(Error::Cycle { .. })));
    }

    #[test]
    fn compaction_context() {
        let t = tree(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user"}}"#,
            r#"{"type":"message","id":"sys","parentId":"a","message":{"role":"system"}}"#,
            r#"{"type":"message","id":"b","parentId":"sys","message":{"role":"assistant"}}"#,
            r#"{"type":"compaction","id":"c","parentId":"b","firstKeptEntryId":"a"}"#,
            r#"{"type":"message","id":"d","parentId":"c","message":{"role":"user"}}"#,
            r#"{"type":"context_edit","id":"e","parentId":"d","targetId":"d"}"#,
        ]);
        let plan = t.context_plan(&Key::Undefined).unwrap().unwrap();
        let pos: Vec<u32> = plan.entries.iter().map(|e| e.0).collect();
        assert_eq!(pos, vec![4, 1, 3, 5, 6]);
        assert_eq!(plan.entries[3].1, Some(6));
        assert_eq!(plan.model, Some(3));
        let tail = tree(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user"}}"#,
            r#"{"type":"compaction","id":"c","parentId":"a","firstKeptEntryId":"a","retainedTail":[]}"#,
            r#"{"type":"message","id":"d","parentId":"c","message":{"role":"user"}}"#,
        ]);
        let plan = tail.context_plan(&Key::Undefined).unwrap().unwrap();
        assert_eq!(plan.entries.iter().map(|e| e.0).collect::<Vec<_>>(), vec![2, 3]);
    }

    #[test]
    fn duplicate_ids_follow_map_semantics() {
        let t = tree(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user"}}"#,
        ]);
        assert_eq!(t.lookup(&s("a")), Some(3));
        assert_eq!(t.entry_count(), 2);
        assert_eq!(t.children(&Key::Null), vec![3]);
        assert_eq!(t.tree_links(), vec![(3, None), (2, Some(3)), (3, None)]);
    }

    #[test]
    fn links_follow_later_entries_and_rollbacks() {
        let mut t = tree(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":"x","message":{"role":"user"}}"#,
        ]);
        assert_eq!(t.branch(&s("a")).unwrap(), vec![1]);
        // An entry whose id an orphan points to relinks the orphan.
        let v = json::parse_document(br#"{"type":"message","id":"x","parentId":null}"#).unwrap();
        t.push(Skeleton::from_value(br#"{"type":"message","id":"x","parentId":null}"#, v, &mut 0));
        assert_eq!(t.branch(&s("a")).unwrap(), vec![2, 1]);
        t.pop();
        assert_eq!(t.branch(&s("a")).unwrap(), vec![1]);
    }

    #[test]
    fn missing_message_is_where_the_reference_throws() {
        let t = tree(&[r#"{"type":"session","id":"s"}"#, r#"{"type":"message","id":"a","parentId":null}"#]);
        assert_eq!(t.context_plan(&Key::Undefined).unwrap(), Err(MessageMissing(1)));
        assert_eq!(t.has_conversation(), Err(MessageMissing(1)));
        // `_hasConversation` stops at the first conversation message: a later entry without
        // a message is never read.
        let t = tree(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"system"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","message":null}"#,
            r#"{"type":"message","id":"c","parentId":"b","message":{"role":"user"}}"#,
        ]);
        assert_eq!(t.has_conversation(), Err(MessageMissing(2)));
        let t = tree(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user"}}"#,
            r#"{"type":"message","id":"b","parentId":"a"}"#,
        ]);
        assert_eq!(t.has_conversation(), Ok(true));
        // The settings loop reads every role on the path; `buildContextEntries` only those
        // in the kept range before the compaction (here: none before `firstKeptEntryId`).
        let t = tree(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null}"#,
            r#"{"type":"message","id":"b","parentId":"a","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"x","parentId":"b","message":null}"#,
            r#"{"type":"compaction","id":"c","parentId":"x","firstKeptEntryId":"b"}"#,
            r#"{"type":"message","id":"d","parentId":"c"}"#,
        ]);
        assert_eq!(t.context_plan(&Key::Undefined).unwrap(), Err(MessageMissing(1)));
        let path = t.session_path(&Key::Undefined).unwrap();
        assert_eq!(t.context_entries(&path), Err(MessageMissing(3)));
        assert_eq!(t.context_entries(&path[..2]), Ok(vec![1, 2]));
    }

    #[test]
    fn linked_plans_follow_the_facts() {
        let names = br#"["message","user","compaction","context_edit","system"]"#;
        // type, role, id, targetId, firstKeptEntryId, parent, flags
        #[rustfmt::skip]
        let facts = [
            0, 1, 0, -1, -1, -1, 0, // user "a"
            0, 4, 1, -1, -1, 0, 0,  // system "s"
            0, 1, -2, -1, -1, 1, 0, // user NaN
            2, -1, 3, -1, 0, 2, 0,  // compaction, firstKept "a"
            3, -1, 4, -2, -1, 3, 0, // edit of NaN
            3, -1, 5, 0, -1, 4, 0,  // edit of "a"
        ];
        let LinkedItems { items, parents } = Skeleton::linked_from_facts(names, &facts).unwrap();
        assert_eq!(parents, vec![None, Some(0), Some(1), Some(2), Some(3), Some(4)]);
        let plan = linked_context_plan(&items, &parents, Leaf::NotFound, Some(5), false).unwrap();
        // The system message is not kept; NaN is a Map key (the edit applies) and never `===`.
        let got: Vec<_> = plan.entries.iter().map(|e| (e.0, e.1)).collect();
        assert_eq!(got, vec![(3, None), (0, Some(5)), (2, Some(4)), (4, None), (5, None)]);
        let leaf_only = linked_context_plan(&items, &parents, Leaf::Found(1), Some(5), true).unwrap();
        assert_eq!(leaf_only.entries.iter().map(|e| e.0).collect::<Vec<_>>(), vec![0, 1]);
        for leaf in [Leaf::Null, Leaf::Falsy] {
            assert!(linked_context_plan(&items, &parents, leaf, Some(5), false).unwrap().entries.is_empty());
        }
        // A compaction whose id is NaN: `findIndex` finds nothing, the path stays whole.
        let mut nan = items.clone();
        nan[3].id = Key::num(f64::NAN);
        let plan = linked_context_plan(&nan, &parents, Leaf::Found(3), None, true).unwrap();
        assert_eq!(plan.entries.iter().map(|e| e.0).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        // A cycle stops the walk; a message without a message stops the rule where pi throws.
        let cyclic = vec![Some(1), Some(0)];
        assert_eq!(linked_context_plan(&items[..2], &cyclic, Leaf::Found(0), None, false), Err(LinkedStop::Cycle(1)));
        let mut missing = items.clone();
        missing[2].role = Role::NoMessage;
        assert_eq!(
            linked_context_plan(&missing, &parents, Leaf::NotFound, Some(5), false),
            Err(LinkedStop::MessageMissing(2))
        );
        assert!(Skeleton::linked_from_facts(names, &facts[..6]).is_err());
        assert!(Skeleton::linked_from_facts(names, &[0, 0, 0, 0, 0, 7, 0]).is_err());
    }
}
