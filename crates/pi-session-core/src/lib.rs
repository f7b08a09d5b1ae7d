//! pi-session-core: the session store of the pi coding agent, in pure Rust.
//!
//! No Node types: the napi binding is the `pi-session-native` crate at the repository root.
//! Tested with `cargo test -p pi-session-core`.

pub mod blocks;
pub mod branch;
pub mod entry;
pub mod error;
pub mod faults;
#[cfg(any(test, feature = "fuzz"))]
pub mod fuzz;
pub mod header;
pub mod ids;
pub mod json;
pub mod lines;
pub mod listing;
pub mod migrate;
pub mod paths;
pub mod platform;
pub mod projection;
pub mod session;
pub mod splice;
pub mod store;
#[cfg(test)]
pub(crate) mod testutil;
pub mod text;
pub mod tree;
