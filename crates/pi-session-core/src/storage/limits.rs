//! Sizes that more than one storage module decides by, kept here so that no module reaches
//! into another's internals for them.

/// Plain string values at least this long (raw bytes: ASCII, no escape, so the file's
/// bytes are the string's Latin-1 units) are not read at all when their file is mapped:
/// JS gets an external string over the mapping (see `lines::LineStore::set_file`). The
/// scanner finds them (`json::collect_plain`), the loader keeps them in the file (`store`),
/// and `splice` leaves them out of the strings it takes.
pub const MAPPED_MIN: usize = 32 << 10;
