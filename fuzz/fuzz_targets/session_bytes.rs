//! Any bytes, as a session file and as single lines, through every parser and index.
//! Run: `cargo fuzz run session_bytes` (see fuzz/README.md).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    pi_session_core::fuzz::exercise(data);
});
