//! The session listing: `SessionInfo` rows for `list`/`listAll`, the listing index that
//! keeps them, and discovery (`findById`, `continueRecent`).

pub mod discovery;
pub mod index;
pub mod info;
pub mod rows;
pub mod scanner;
#[cfg(test)]
mod tests;
