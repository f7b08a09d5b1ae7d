//! pi-session-native: the napi binding of the pi coding agent's session store, whose pure
//! Rust core is `pi_session_core` (crates/pi-session-core, tested with `cargo test`).
//!
//! Argument conversion, one core call, result conversion. Every entry point runs under
//! `ffi::guard`, so a Rust panic becomes a JS `Error` instead of aborting Node. `ffi` holds the
//! shared conversions; the others hold one exported class or area each.

// napi-derive registers the exports in non-test builds only, so the test build that
// `cargo clippy --all-targets` checks sees them unused. The binding has no unit tests
// (`[lib] test = false`); its tests are the JS ones (__test__/).
#![cfg_attr(test, allow(dead_code))]

mod ffi;
mod files;
mod ids;
mod listing;
mod migrate;
mod native_session;
mod paths;
