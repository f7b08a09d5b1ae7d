//! pi-session-core: the session store of the pi coding agent, in pure Rust.
//!
//! No Node types: the napi binding is the `pi-session-native` crate at the repository root.
//! Tested with `cargo test -p pi-session-core`.

pub mod error;
#[cfg(any(test, feature = "fuzz"))]
pub mod fuzz;
pub mod model;
pub mod storage;
#[cfg(test)]
pub(crate) mod testutil;

pub use model::{branch, entry, header, ids, migrate, projection, tree};
pub use storage::{blocks, faults, json, lines, listing, platform, session, splice, store, text};
