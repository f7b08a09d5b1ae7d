//! The few operating-system details the core needs, in one place: Unix is the primary
//! target; Windows builds use the equivalents (or a safe fallback, noted per function).
//!
//! `files`: file primitives; `dirs`: directory listing; `mapping`: read-only file mappings; `snapshot`: private copies of session files; `windows_errors`: the errors Node
//! reports (libuv's Windows tables). Everything is re-exported here: callers say `platform::…`.

mod dirs;
mod files;
mod mapping;
mod snapshot;
mod windows_errors;

pub use dirs::*;
pub use files::*;
pub use mapping::Mapping;
#[cfg(test)]
pub use snapshot::SNAPSHOTS;
#[cfg(test)]
pub(crate) use snapshot::streaming_in_steps;
pub use snapshot::{Arriving, Snapshot, punch_hole, snapshot_file, snapshot_streaming, trace_once};
pub use windows_errors::*;
