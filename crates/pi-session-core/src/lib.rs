//! pi-session-core: the session store of the pi coding agent, in pure Rust.
//!
//! No Node types: the napi binding is the `pi-session-native` crate at the repository root,
//! and the `pi-sessions` command line is `crates/pi-sessions`. Both use only what this file
//! lists. Tested with `cargo test -p pi-session-core`.
//!
//! # Layers
//!
//! - **Model** (`src/model/`): pi's session model and its rules. An entry's skeleton
//!   ([`entry::Skeleton`]: id, parent, type, the few fields the core indexes), the session
//!   header ([`header`]), the in-memory index of a session ([`tree::Tree`]: `fileEntries`,
//!   `byId`, labels, the leaf, the context walk), ids as pi makes them ([`ids`]), and the
//!   rules that rewrite a session or read it: `createBranchedSession`, migration
//!   ([`migrate`]) and a context entry's model messages ([`projection`]).
//! - **Storage** (`src/storage/`): bytes on disk and in memory. JSON text ([`json`]: scanned
//!   in place, never a value tree), where each entry's line lives ([`lines`]), loading and
//!   writing a session file ([`store`]), one open session and its write protocol
//!   ([`session::Session`]: the lock, other writers, rollback), the listing of session
//!   folders and its persistent index ([`listing`]), files read as blocks of lines
//!   ([`blocks`]), and the operating system's facts ([`platform`]).
//!
//! The model uses storage's JSON scanner and lines; storage's session and listing use the
//! model's entries, header and tree.
//!
//! # Entry points
//!
//! - Open a session file: [`session::Session::open`], then append, branch and fork through
//!   the [`session::Session`]; its index is a [`tree::Tree`].
//! - Read a whole file without a session: [`store::load`].
//! - List session folders: [`listing::Scanner`] (the `SessionInfo` rows of `list`/`listAll`)
//!   and the discovery functions beside it (`findById`, `continueRecent`).
//! - The CLI's reads: [`blocks::Blocks`] over a file, [`json`]'s scanners over each line,
//!   [`migrate::in_memory`] and [`projection`] for old sessions and context messages.
//!
//! Each module below lists the public items of one concern; everything else in the crate is
//! private to it.

mod error;
#[cfg(any(test, feature = "fuzz"))]
pub mod fuzz;
mod model;
mod storage;
#[cfg(test)]
mod testutil;

pub use error::Error;

// ---------------------------------------------------------------------------------------
// The model

/// The skeleton of a session entry and its keys (ids as interned byte strings).
pub mod entry {
    pub use crate::model::entry::{EntryType, Key, LinkedItems, Role, Skeleton};
}

/// Dates as pi writes them (`toISOString()`), and the calendar under them.
pub mod time {
    pub use crate::model::entry::{days_from_civil, parse_iso_ms};
}

/// The session header: the first entry of a session file, found by a bounded scan.
pub mod header {
    pub use crate::model::header::{
        HeaderScan, MAX_HEADER_SCAN_BYTES, header_field_raw, header_in, is_header, read_header,
    };
}

/// Entry and session ids as pi makes them.
pub mod ids {
    pub use crate::model::ids::{generate_id, short_id, uuid_v7};
}

/// The in-memory index of a session (`fileEntries`, `byId`, labels, leaf, context walk).
pub mod tree {
    pub use crate::model::tree::{ContextPlan, Leaf, LinkedStop, MessageMissing, Tree, linked_context_plan};
}

/// Old session versions brought up to the current one.
pub mod migrate {
    pub use crate::model::migrate::{CURRENT_VERSION, Fact, Step, in_memory, plan, random_id};
}

/// `createBranchedSession`'s rule: the kept path, re-parented, and the labels re-created.
pub mod branch {
    pub use crate::model::branch::{Plan, plan};
}

/// pi's path rules: a working directory's session folder name, Windows shell paths.
pub mod paths {
    pub use crate::model::paths::{
        CONFIG_DIR_NAME, ENV_AGENT_DIR, session_folder_name, session_folder_name_utf16, windows_shell_path,
    };
}

/// The model messages of context entries (`sessionEntryToContextMessages`) and context edits.
pub mod projection {
    pub use crate::model::projection::{apply_edit, entry_messages};
}

// ---------------------------------------------------------------------------------------
// Storage

/// JSON text scanned in place: kinds, values as byte ranges, members and elements.
pub mod json {
    pub use crate::storage::json::{
        Kind, Value, decode_string, for_each_element, for_each_member, number_value, parse_document,
        scan_object_members, scan_value, skip_whitespace,
    };
}

/// UTF-16 to UTF-8, for text that crosses from JS.
pub mod text {
    pub use crate::storage::text::utf16_to_utf8;
}

/// Where each entry's line text lives: in the file, or in memory.
pub mod lines {
    pub use crate::storage::lines::{LineStore, Piece, Pieces, Span};
}

/// A file read as blocks of whole lines, in bounded memory.
pub mod blocks {
    pub use crate::storage::blocks::{Blocks, each_line};
}

/// Loading and writing whole session files.
pub mod store {
    pub use crate::storage::store::{Loaded, Parsed, WriteMode, append_bytes, load, replace_with, write_file_with};
}

/// One open session: its index, its lines and the protocol for writing its file.
pub mod session {
    pub use crate::storage::session::{Commit, Opened, Session};
}

/// The session listing: `SessionInfo` rows, the listing index, and discovery.
pub mod listing {
    pub use crate::storage::listing::discovery::{
        all_sessions, collate_ascii, files_by_mtime, headers_with_id, jsonl_names_descending,
    };
    pub use crate::storage::listing::index::{finish_listing, preload, read_header_cached};
    pub use crate::storage::listing::info::{LineBreaks, mtime_ms, scan_many};
    pub use crate::storage::listing::rows::{Block, Row, Rows, Units};
    pub use crate::storage::listing::scanner::{Scanner, clear_cache, row_of};
}

/// The operating system's facts the callers need: positioned reads, file stamps, open modes,
/// and mapped files.
pub mod platform {
    pub use crate::storage::platform::{
        FileStamp, Mapping, OPEN_FILES_BLOCK_RENAME, default_mode, read_exact_at, stamp,
    };
}

/// Failpoints in the write paths (the `failpoints` feature; without it `hit` never fires).
pub mod faults {
    pub use crate::storage::faults::{POINTS, hit};
}
