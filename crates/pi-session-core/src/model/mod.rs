//! The session model of pi: entries, the header, the tree, ids, pi's path rules, and the rules that rewrite a
//! session (branch, migrate) or read it as a model's messages (projection).

pub mod branch;
pub mod entry;
pub mod header;
pub mod ids;
pub mod migrate;
pub mod paths;
pub mod projection;
pub mod tree;
