//! JSON scanning with exactly the grammar of ECMAScript `JSON.parse`.
//!
//! The core never builds a value tree for a whole entry. It validates a line,
//! finds the byte spans of the few top-level fields it needs, and leaves the
//! rest as raw text for JS to `JSON.parse` on demand. Scanning is iterative,
//! so nesting depth is unbounded (as in V8) and no input can overflow the stack.
//!
//! Its parts, each using only those before it: `value` (`Kind`, `Value`), `scan` (the
//! validating scanner and the walks over scanned objects and arrays), `decode` (string
//! contents as UTF-16 or Latin-1 code units), `canonical` (what `JSON.stringify` writes).
//! This module only re-exports them: the API is `json::…`.

mod canonical;
mod decode;
mod scan;
mod value;

#[cfg(any(test, feature = "fuzz"))]
pub use canonical::is_canonical;
pub use canonical::{canonical_members, stringify_parsed, stringify_parsed_lossy, stringify_utf16};
pub use decode::{Decoded, decode_string, decode_utf16_into, scan_decode};
#[cfg(test)]
pub use decode::{decode_latin1_into, decode_utf16, escape_unit};
pub use scan::{
    collect_plain, for_each_element, for_each_member, parse_document, scan_object_members, scan_string, scan_value,
    skip_whitespace,
};
pub use value::{Kind, Value, number_value};

#[cfg(test)]
mod swar_tests;
#[cfg(test)]
mod tests;
