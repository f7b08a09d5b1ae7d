//! `NativeSession`: one open session (`session::Session`) for the facade, and the pieces
//! its lines cross in.

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::ffi::{Copied, MappedUnits, Text, external_string, guard, js_array, js_null, napi_ok, pos_or_minus};
use pi_session_core::Error as CoreError;
use pi_session_core::branch;
use pi_session_core::entry::{Key, LinkedItems, Skeleton};
use pi_session_core::session::{Commit, Opened, Session};
use pi_session_core::store::WriteMode;
use pi_session_core::tree::{self, ContextPlan, Leaf, LinkedStop, MessageMissing, Tree};

/// Text per piece of `linesAsciiPieces`: big enough that a piece costs far more to parse
/// than to hand over, small enough that the first one is ready at once.
const PIECE_BYTES: usize = 1 << 20;

/// What `NativeSession.load` found at the path (`loadEntriesFromFile`'s cases).
#[napi(string_enum = "camelCase")]
#[derive(Clone, Copy)]
pub enum LoadStatus {
    Missing,
    NotSession,
    /// A session (or one built in memory).
    Loaded,
}

/// `hasConversation()`'s answer: whether the session has a user or assistant message, or
/// where the reference throws first (`messageMissingAt`: a message entry without a message,
/// whose `role` the facade reads to throw the engine's own TypeError).
#[napi(object)]
pub struct Conversation {
    pub found: bool,
    pub message_missing_at: Option<u32>,
}

/// `createBranchedSession`'s plan (see `branch::Plan`): whether the path was found, the kept positions, per kept entry
/// the index in `kept` its `firstKeptEntryId` now names (-1: unchanged), the label
/// entries to re-create and their new ids.
#[napi(object)]
pub struct BranchPlan {
    /// Whether the path has any entry (the reference throws "Entry … not found" otherwise).
    pub found: bool,
    pub kept: Uint32Array,
    pub first_kept: Int32Array,
    pub labels: Uint32Array,
    pub label_ids: Vec<String>,
}

/// One session (see `session::Session`), as the facade's `NativeSession`.
#[napi]
pub struct NativeSession {
    s: Session,
    status: LoadStatus,
}

impl NativeSession {
    pub(super) fn session(&self) -> &Session {
        &self.s
    }

    pub(super) fn wrap(s: Session) -> NativeSession {
        NativeSession { s, status: LoadStatus::Loaded }
    }

    /// A file as `Session::open` found it (`status` says which).
    pub(super) fn opened(o: Opened) -> NativeSession {
        match o {
            Opened::Missing => NativeSession { s: Session::new(), status: LoadStatus::Missing },
            Opened::NotSession => NativeSession { s: Session::new(), status: LoadStatus::NotSession },
            Opened::Session(s) => NativeSession::wrap(*s),
        }
    }

    fn tree(&self) -> &Tree {
        self.s.tree()
    }
}

/// The facade's `held(positions)` as the core asks for it; an exception it throws is kept in
/// `thrown` (the call's own error) and stops the write.
fn held_lines<'a>(
    held: &'a Function<Uint32Array, Vec<String>>,
    thrown: &'a mut Option<Error>,
) -> impl FnMut(&[u32]) -> std::result::Result<Vec<Vec<u8>>, CoreError> + 'a {
    move |positions| match held.call(Uint32Array::new(positions.to_vec())) {
        Ok(lines) => Ok(lines.into_iter().map(String::into_bytes).collect()),
        Err(e) => {
            *thrown = Some(e);
            Err(CoreError::Msg("the facade's lines could not be made".into()))
        }
    }
}

fn write_mode(exclusive: bool) -> WriteMode {
    if exclusive { WriteMode::Exclusive } else { WriteMode::Replace }
}

#[napi]
impl NativeSession {
    /// An empty session (entries are pushed by the facade).
    #[napi(constructor)]
    pub fn new() -> Self {
        NativeSession::wrap(Session::new())
    }

    /// Loads a file like `loadEntriesFromFile` (see `status`).
    #[napi(factory)]
    pub fn load(path: String) -> Result<NativeSession> {
        guard(|| Ok(NativeSession::opened(Session::open(Path::new(&path))?)))
    }

    #[napi(getter)]
    pub fn status(&self) -> LoadStatus {
        self.status
    }

    /// Number of items (`fileEntries.length`).
    #[napi]
    pub fn count(&self) -> u32 {
        self.tree().len() as u32
    }

    /// The raw lines at `positions`, one per line, as pure ASCII (non-ASCII characters
    /// escaped as `\uXXXX`), in pieces of about 1 MiB (see `LineStore::ascii_pieces`): a large
    /// text is read and escaped on another thread while JS parses the pieces before it.
    #[napi]
    pub fn lines_ascii_pieces(&self, positions: Uint32Array) -> Result<AsciiPieces> {
        guard(|| {
            let pieces =
                self.s.store().ascii_pieces(&positions, PIECE_BYTES).map_err(|e| CoreError::io(e, "read", None))?;
            Ok(AsciiPieces { pieces })
        })
    }

    /// Raw line of one item, or null: when it has none, and when it holds strings that
    /// stay in the mapped file (`linesAsciiPieces` reads those without reading the strings).
    #[napi]
    pub fn line(&self, pos: u32) -> Result<Option<String>> {
        guard(|| {
            if self.s.store().mapped_strings(pos).is_some() {
                return Ok(None);
            }
            let line = self.s.store().line(pos).map_err(|e| CoreError::io(e, "read", None))?;
            Ok(line.map(|l| String::from_utf8_lossy(&l).into_owned()))
        })
    }

    /// Adds entries the facade holds as objects, in one call, from their facts (see
    /// `Skeleton::from_facts`).
    #[napi]
    pub fn push_batch(&mut self, facts: String) -> Result<()> {
        guard(|| {
            for sk in Skeleton::from_facts(facts.as_bytes()).map_err(CoreError::Msg)? {
                self.s.push(sk);
            }
            Ok(())
        })
    }

    /// A session indexed from JSONL text built by the facade (one entry per line), which is
    /// also written to `path` when given (atomically; `exclusive` as `openSync(path, "wx")`).
    #[napi(factory)]
    pub fn from_text(text: Text, path: Option<String>, exclusive: bool) -> Result<NativeSession> {
        guard(|| {
            let path = path.as_deref().map(Path::new);
            Ok(NativeSession::wrap(Session::from_text(text.as_bytes(), path, write_mode(exclusive))?))
        })
    }

    /// Appends one entry the facade built to a session already on disk (see
    /// `Session::commit`). Returns the item count afterwards: unchanged when the id is taken
    /// (nothing written: the facade builds the entry again with another id); otherwise the
    /// entry is the last item, after any that other processes appended before it.
    /// `facts` are the entry's (see `Skeleton::from_facts`), `json` its line. `held(positions)`
    /// gives the JSON of the entries the facade holds at those positions, called only when
    /// the whole session must be written again (nothing is at the path any more).
    #[napi(
        ts_args_type = "facts: string, json: string, path: string, sync: boolean, held: (positions: Uint32Array) => string[]"
    )]
    pub fn commit_line(
        &mut self,
        facts: String,
        mut json: Text,
        path: String,
        sync: bool,
        held: Function<Uint32Array, Vec<String>>,
    ) -> Result<u32> {
        let mut thrown = None;
        let done = guard(|| {
            let mut skeletons = Skeleton::from_facts(facts.as_bytes()).map_err(CoreError::Msg)?;
            let (Some(sk), true) = (skeletons.pop(), skeletons.is_empty()) else {
                return Err(CoreError::Msg("commitLine: the facts of one entry".into()));
            };
            // Written or not, the count tells the facade which (see above).
            let _: Commit =
                self.s.commit(sk, json.line(), Path::new(&path), sync, &mut held_lines(&held, &mut thrown))?;
            Ok(self.tree().len() as u32)
        });
        if let Some(e) = thrown {
            return Err(e);
        }
        done
    }

    /// Appends `json` and a newline to `path` (the reference's `_persist`); `held` as in
    /// `commitLine`.
    #[napi(ts_args_type = "path: string, json: string, sync: boolean, held: (positions: Uint32Array) => string[]")]
    pub fn append_line(
        &mut self,
        path: String,
        mut json: Text,
        sync: bool,
        held: Function<Uint32Array, Vec<String>>,
    ) -> Result<()> {
        let mut thrown = None;
        let done =
            guard(|| self.s.append_line(Path::new(&path), json.line(), sync, &mut held_lines(&held, &mut thrown)));
        if let Some(e) = thrown {
            return Err(e);
        }
        done
    }

    /// Writes the whole file atomically (`exclusive`: like `openSync(path, "wx")`).
    #[napi]
    pub fn write_all(&mut self, path: String, text: Text, exclusive: bool) -> Result<()> {
        guard(|| self.s.write_all(Path::new(&path), text.as_bytes(), write_mode(exclusive)))
    }

    /// Lets go of everything this session holds (its index, its lines, its file and snapshot)
    /// at once, when the facade replaces it: Node runs the finalizer that would otherwise do
    /// it only after a GC and a turn of the event loop. Strings already handed to JS keep the
    /// bytes they read. It is empty afterwards.
    #[napi]
    pub fn close(&mut self) {
        self.s = Session::new();
    }

    /// Lets go of the session file before it is rewritten from outside (`Session::release_file`).
    #[napi]
    pub fn release_file(&mut self) -> Result<()> {
        guard(|| self.s.release_file())
    }

    /// Removes the last item (rollback of a failed append).
    #[napi]
    pub fn pop(&mut self) {
        self.s.pop();
    }

    #[napi]
    pub fn lookup(&self, key: String) -> i32 {
        pos_or_minus(self.tree().lookup(&Key::decode(&key)))
    }

    #[napi]
    pub fn entry_count(&self) -> u32 {
        self.tree().entry_count() as u32
    }

    #[napi]
    pub fn header(&self) -> i32 {
        pos_or_minus(self.tree().header())
    }

    #[napi]
    pub fn last_entry(&self) -> i32 {
        pos_or_minus(self.tree().last_entry())
    }

    #[napi]
    pub fn last_session_info(&self) -> i32 {
        pos_or_minus(self.tree().last_session_info())
    }

    /// `_hasConversation()` (see `Conversation`).
    #[napi]
    pub fn has_conversation(&self) -> Conversation {
        match self.tree().has_conversation() {
            Ok(found) => Conversation { found, message_missing_at: None },
            Err(MessageMissing(pos)) => Conversation { found: false, message_missing_at: Some(pos) },
        }
    }

    /// The ids of the next `n` appends, space-separated (see `Session::reserve_ids`): one
    /// call per batch, where a call per append would cost in-memory appends a tenth.
    #[napi]
    pub fn reserve_ids(&mut self, n: u32) -> String {
        self.s.reserve_ids(n as usize)
    }

    /// An id from `reserveIds` whose entry was taken back (see `Session::release_id`).
    #[napi]
    pub fn release_id(&mut self, id: String) {
        self.s.release_id(&id);
    }

    #[napi(ts_return_type = "Uint32Array")]
    pub fn entries(&self) -> Copied<u32> {
        Copied(self.tree().entries())
    }

    #[napi(ts_return_type = "Uint32Array")]
    pub fn children(&self, parent: String) -> Copied<u32> {
        Copied(self.tree().children(&Key::decode(&parent)))
    }

    #[napi]
    pub fn label(&self, target: String) -> i32 {
        pos_or_minus(self.tree().label(&Key::decode(&target)))
    }

    #[napi(ts_return_type = "Uint32Array")]
    pub fn labels(&self) -> Copied<u32> {
        Copied(self.tree().labels())
    }

    #[napi(ts_return_type = "Uint32Array")]
    pub fn branch(&self, start: String) -> Result<Copied<u32>> {
        guard(|| self.tree().branch(&Key::decode(&start))).map(Copied)
    }

    /// `buildSessionProjection()` as a flat plan `[thinking, model, (pos, edit, noMessages)…]`
    /// (-1: none), or the position of the message entry without a message where the
    /// reference throws (see `MessageMissing`).
    #[napi(ts_return_type = "Int32Array | number")]
    pub fn context_plan(&self, leaf: String) -> Result<Either<Copied<i32>, u32>> {
        guard(|| {
            Ok(match self.tree().context_plan(&Key::decode(&leaf))? {
                Ok(plan) => Either::A(Copied(flat_plan(plan))),
                Err(MessageMissing(pos)) => Either::B(pos),
            })
        })
    }

    /// `buildContextEntries()`: the positions of the context entries, or the position of the
    /// message entry without a message where the reference throws (see `MessageMissing`).
    #[napi(ts_return_type = "Uint32Array | number")]
    pub fn context_entries(&self, leaf: String) -> Result<Either<Copied<u32>, u32>> {
        guard(|| {
            let path = self.tree().session_path(&Key::decode(&leaf))?;
            Ok(match self.tree().context_entries(&path) {
                Ok(positions) => Either::A(Copied(positions)),
                Err(MessageMissing(pos)) => Either::B(pos),
            })
        })
    }

    /// `createBranchedSession` from `leaf` in one pass (see `Session::branch_session`):
    /// `prepare(path)` gets the path's positions and returns `[file, headerLine]`, or null
    /// to decline (it may throw: its exception is this call's). Null when the facade builds
    /// the branch in JS.
    #[napi(ts_args_type = "leaf: string, prepare: (path: Uint32Array) => [string, string] | null")]
    pub fn branched_session(
        &self,
        leaf: String,
        prepare: Function<Uint32Array, Option<(String, String)>>,
    ) -> Result<Option<NativeSession>> {
        let mut thrown = None;
        let made = guard(|| {
            self.s.branch_session(
                &Key::decode(&leaf),
                &mut |path| match prepare.call(Uint32Array::new(path.to_vec())) {
                    Ok(answer) => answer.map(|(file, header)| (file.into(), header.into_bytes())),
                    Err(e) => {
                        thrown = Some(e);
                        None
                    }
                },
            )
        });
        if let Some(e) = thrown {
            return Err(e);
        }
        Ok(made?.map(NativeSession::wrap))
    }

    /// `createBranchedSession`'s plan from `leaf` for the facade's copies of objects (see
    /// `branch::plan`); `kept` is empty when the path is.
    #[napi]
    pub fn branch_plan(&self, leaf: String) -> Result<BranchPlan> {
        let path = guard(|| self.tree().branch(&Key::decode(&leaf)))?;
        let plan = branch::plan(self.tree(), &path);
        Ok(BranchPlan {
            found: !path.is_empty(),
            first_kept: Int32Array::new(plan.first_kept.iter().map(|f| f.map_or(-1, |i| i as i32)).collect()),
            kept: Uint32Array::new(plan.kept),
            labels: Uint32Array::new(plan.labels.iter().map(|l| l.0).collect()),
            label_ids: plan.labels.into_iter().map(|l| l.1).collect(),
        })
    }

    /// Flat `[node, parent (-1: root)]` per non-header item, in order.
    #[napi(ts_return_type = "Int32Array")]
    pub fn tree_links(&self) -> Result<Copied<i32>> {
        guard(|| {
            Ok(self
                .tree()
                .tree_links()
                .into_iter()
                .flat_map(|(n, p)| [n as i32, pos_or_minus(p)])
                .collect::<Vec<i32>>())
        })
        .map(Copied)
    }

    /// `new Date(timestamp).getTime()` per item; `Infinity` where only JS can compute it.
    #[napi(ts_return_type = "Float64Array")]
    pub fn times(&self) -> Copied<f64> {
        Copied((0..self.tree().len() as u32).map(|p| self.tree().get(p).time.unwrap_or(f64::INFINITY)).collect())
    }
}

impl Default for NativeSession {
    fn default() -> Self {
        Self::new()
    }
}

/// The pieces of one `linesAsciiPieces` call.
#[napi]
pub struct AsciiPieces {
    pieces: pi_session_core::lines::Pieces,
}

#[napi]
impl AsciiPieces {
    /// The next piece, or null after the last: `[text, latin1, utf16, patches, mapped]`.
    /// `text` holds one line per entry (ASCII). When long strings were taken out of the
    /// lines (see `splice`), `latin1` and `utf16` hold them end to end (`utf16` null when
    /// empty) and `patches` (JSON text without brackets) lists `line, path, which, start,
    /// end` for each; otherwise all three are null. `which` 2 names `mapped[start]`, a
    /// string whose bytes stay in the mapped session file (null when there are none).
    #[napi(ts_return_type = "[string, string | null, string | null, string | null, string[] | null] | null")]
    pub fn next(&self) -> Result<Option<PieceJs<'_>>> {
        guard(|| {
            let piece = self.pieces.next_piece().map_err(|e| CoreError::io(e, "read", None))?;
            Ok(piece.map(|piece| PieceJs { piece, pieces: &self.pieces }))
        })
    }
}

/// A piece on its way to JS: `[text, latin1, utf16, patches]` as JS strings (the Latin-1
/// and UTF-16 ones external where the host allows: see `external_string`), after which its
/// other buffers go back to the thread that makes the pieces. The long strings of a
/// session (base64 images, tool output) so stay outside V8's heap, sliced by JS: a 4.5 GB
/// image-heavy context would not fit in it.
pub struct PieceJs<'a> {
    piece: pi_session_core::lines::Piece,
    pieces: &'a pi_session_core::lines::Pieces,
}

impl ToNapiValue for PieceJs<'_> {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        let PieceJs { mut piece, pieces } = val;
        let latin1 = |bytes: &[u8]| {
            let mut out = std::ptr::null_mut();
            // SAFETY: the current env and a live buffer of the given length, which V8 copies.
            let status = unsafe {
                napi::sys::napi_create_string_latin1(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut out)
            };
            napi_ok(status, "create a string").map(|()| out)
        };
        // SAFETY: Node-API calls on the current env (this conversion's contract).
        unsafe {
            let null = js_null(env)?;
            let mut out = [latin1(&piece.text)?, null, null, null, null];
            if !piece.ex.is_empty() {
                out[1] = external_string(env, std::mem::take(&mut piece.ex.latin1))?;
                out[3] = latin1(&piece.ex.patches)?;
                if !piece.ex.utf16.is_empty() {
                    out[2] = external_string(env, std::mem::take(&mut piece.ex.utf16))?;
                }
            }
            if let (false, Some(map)) = (piece.ex.mapped.is_empty(), piece.map.as_ref()) {
                let mut strings = Vec::with_capacity(piece.ex.mapped.len());
                for &(off, len) in &piece.ex.mapped {
                    let units = MappedUnits::new(map, off, len as usize).ok_or_else(|| {
                        napi::Error::from_reason("pi-session-native internal error: string not mapped")
                    })?;
                    strings.push(external_string(env, units)?);
                }
                out[4] = js_array(env, &strings)?;
            }
            let array = js_array(env, &out)?;
            pieces.recycle(piece);
            Ok(array)
        }
    }
}

/// A plan as the facade reads it: `[thinking, model, (position, edit, noMessages)…]`, -1 for none.
fn flat_plan(plan: ContextPlan) -> Vec<i32> {
    let mut out = Vec::with_capacity(2 + plan.entries.len() * 3);
    out.push(pos_or_minus(plan.thinking));
    out.push(pos_or_minus(plan.model));
    for (p, edit, skip) in plan.entries {
        out.push(p as i32);
        out.push(pos_or_minus(edit));
        out.push(skip as i32);
    }
    out
}

/// pi's context rule (`tree::linked_context_plan`) for the exported free functions, on the
/// facts of the objects their path can reach (`Skeleton::linked_from_facts`; those of the first
/// `count`, the rest unused). `leaf`: the
/// item `index.get(leafId)` gave, -1 nothing (falsy `leafId`, or null or undefined), -2 a
/// falsy value, -3 `leafId === null`; `last`: the item of the last entry, -1 when falsy.
/// Returns the plan as `NativeSession.contextPlan` does (`entriesOnly`: `buildContextEntries`,
/// with thinking, model and edits -1), or a number: the item of a message entry without a
/// message where the reference throws, or `-1 - item` where a cyclic chain stopped the walk.
#[napi(ts_return_type = "Int32Array | number")]
pub fn context_plan_of(
    names: String,
    facts: Int32ArraySlice,
    count: u32,
    leaf: i32,
    last: i32,
    entries_only: bool,
) -> Result<Either<Copied<i32>, i32>> {
    guard(|| {
        let facts = facts
            .get(..count as usize * 7)
            .ok_or_else(|| CoreError::Msg("contextPlanOf: fewer facts than items".into()))?;
        let LinkedItems { items, parents } =
            Skeleton::linked_from_facts(names.as_bytes(), facts).map_err(CoreError::Msg)?;
        let item = |p: i32| u32::try_from(p).ok().filter(|&p| (p as usize) < items.len());
        let leaf = match leaf {
            -3 => Leaf::Null,
            -2 => Leaf::Falsy,
            p => item(p).map_or(Leaf::NotFound, Leaf::Found),
        };
        Ok(match tree::linked_context_plan(&items, &parents, leaf, item(last), entries_only) {
            Ok(plan) => Either::A(Copied(flat_plan(plan))),
            Err(LinkedStop::MessageMissing(p)) => Either::B(p as i32),
            Err(LinkedStop::Cycle(p)) => Either::B(-1 - p as i32),
        })
    })
}
