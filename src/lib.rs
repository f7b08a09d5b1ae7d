//! The napi binding: argument conversion, one core call, result conversion. Every entry
//! point runs under `ffi::guard`, so a Rust panic becomes a JS `Error` instead of aborting
//! Node. `ffi` holds the shared conversions; the others hold one exported class or area each.

mod ffi;
mod files;
mod listing;
mod session;
