//! JSON with exactly the grammar of ECMAScript `JSON.parse` (see `scan`).

mod scan;

pub use scan::*;
