//! Bytes on disk and in memory: JSON text, the lines of a session file, the store that loads and
//! writes it, one open session's write protocol, the listing of session folders, and the platform.

pub mod blocks;
pub mod faults;
pub mod json;
pub mod limits;
pub mod lines;
pub mod listing;
pub mod platform;
pub mod session;
pub mod splice;
pub mod store;
pub mod text;
