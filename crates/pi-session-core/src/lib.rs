//! pi-session-native: the session store of the pi coding agent, in Rust.
//!
//! The core (everything but `binding`) has no Node types and is tested with `cargo test`.

pub mod blocks;
pub mod branch;
pub mod entry;
pub mod error;
#[cfg(any(test, feature = "fuzz"))]
pub mod fuzz;
pub mod header;
pub mod json;
pub mod lines;
pub mod listing;
pub mod migrate;
pub mod platform;
pub mod projection;
pub mod session;
pub mod splice;
pub mod store;
pub mod text;
pub mod tree;

#[cfg(feature = "node")]
mod binding;
