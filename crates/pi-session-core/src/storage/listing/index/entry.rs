//! What the listing index knows of one file, for one state of it: its row and its header
//! scan, kept in memory (`index`) and on disk (`disk`).

use std::sync::Arc;

use crate::model::header::HeaderScan;
use crate::storage::listing::rows::Row;
use crate::storage::platform::FileState;

/// What is known of one file, for one state of it.
#[derive(Clone, Debug)]
pub(in crate::storage::listing) struct Entry {
    pub(super) state: FileState,
    pub(super) row: Option<Arc<Row>>,
    /// The header scan (`None`: not made).
    pub(super) header: Option<Head>,
}

/// A `HeaderScan` as kept: it depends only on the file's bytes, like the row.
#[derive(Clone, Debug)]
pub(super) enum Head {
    Line(Arc<str>),
    NotHeader,
    LimitExceeded,
}

impl Head {
    pub(super) fn of(scan: &HeaderScan) -> Head {
        match scan {
            HeaderScan::Header(l) => Head::Line(Arc::from(l.as_str())),
            HeaderScan::NotHeader => Head::NotHeader,
            HeaderScan::LimitExceeded => Head::LimitExceeded,
        }
    }

    pub(super) fn scan(&self) -> HeaderScan {
        match self {
            Head::Line(l) => HeaderScan::Header(l.to_string()),
            Head::NotHeader => HeaderScan::NotHeader,
            Head::LimitExceeded => HeaderScan::LimitExceeded,
        }
    }

    pub(super) fn bytes(&self) -> usize {
        if let Head::Line(l) = self { l.len() } else { 0 }
    }
}

impl Entry {
    pub(super) fn bytes(&self) -> usize {
        64 + self.row.as_ref().map_or(0, |r| r.bytes()) + self.header.as_ref().map_or(0, Head::bytes)
    }
}
