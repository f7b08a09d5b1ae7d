//! Ids as pi makes them (`ids`): a short id on its own (its distribution is checked by
//! `unit/ids`; the class's entry ids come reserved from its session, `reserveIds`), and
//! session ids.

use napi_derive::napi;
use pi_session_core::ids;

/// `randomUUID().slice(0, 8)` (see `ids::short_id`).
#[napi]
pub fn short_id() -> String {
    ids::short_id()
}

/// pi-ai's monotonic `uuidv7()`; null once its sequence is exhausted (the facade throws
/// pi-ai's `RangeError`).
#[napi]
pub fn uuidv7() -> Option<String> {
    ids::uuid_v7()
}
