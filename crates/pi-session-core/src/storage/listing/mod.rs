//! The session listing: the `SessionInfo` rows of `list`/`listAll`, the listing index that
//! keeps them (and the files' header scans) between listings and processes, and discovery
//! (`findById`, `continueRecent`).
//!
//! Dependency order: each module uses only modules above it in this list, never one below.
//!
//! 1. Below the listing: `text`, `json`, `platform`, `error`, `entry`, then `header` (the
//!    bounded header scan). `store` also sits on `header` and uses nothing in `listing`.
//! 2. `info`: the `SessionInfo` scan of one file (with the header from the same read).
//! 3. `rows`: one file's row (`Row`) and a batch of rows with their text blocks (`Rows`).
//! 4. `index`: the listing index, in order `index::entry` (what is kept of a file),
//!    `index::disk` (the index file), `index` (memory, lookups, `read_header_cached`).
//! 5. `scanner`: the scan of a listing's files (`Scanner`, `row_of`), on `info`, `rows`, `index`.
//! 6. `discovery`: files by mtime and by header id, on `info` (`par_map`) and `index`.
//! 7. `tests` (all of the above together), and above everything the binding (the `pi-session-native` crate).

pub mod discovery;
pub mod index;
pub mod info;
pub mod rows;
pub mod scanner;
#[cfg(test)]
mod tests;
