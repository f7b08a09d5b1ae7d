//! A file read as blocks of whole lines, in bounded memory: each read fills the buffer up to
//! the chunk size, the block handed out ends at its last `\n`, and the cut line after it is
//! moved to the front for the next read (only its bytes are copied). At the end of the file
//! the rest is handed out as it is: a last line without its `\n`. A line longer than the
//! chunk grows the buffer to hold it. Used by `store::load` and the command line's readers.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Over a `File` by default; any reader works (the command line reads zstd archives).
pub struct Blocks<R = File> {
    file: R,
    buf: Vec<u8>,
    chunk: usize,
    /// Bytes at the front of `buf` handed out by the last `next_block`.
    handed: usize,
    /// File offset of `buf[0]`.
    offset: u64,
    eof: bool,
}

impl Blocks {
    pub fn open(path: &Path, chunk: usize) -> io::Result<Blocks> {
        Ok(Blocks::new(crate::storage::platform::open_read(path)?, chunk, chunk))
    }
}

impl<R: Read> Blocks<R> {
    /// Reads `file` from where it stands in chunks of `chunk` bytes; `capacity` is the first
    /// allocation (a file's size, when smaller than a chunk, takes one read and no more).
    pub fn new(file: R, chunk: usize, capacity: usize) -> Blocks<R> {
        Blocks { file, buf: Vec::with_capacity(capacity), chunk: chunk.max(4096), handed: 0, offset: 0, eof: false }
    }

    /// The next block of complete lines and its offset in the file; the last block may end
    /// without `\n`.
    pub fn next_block(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        if self.handed > 0 {
            self.buf.drain(..self.handed);
            self.offset += self.handed as u64;
            self.handed = 0;
        }
        loop {
            if self.eof {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                self.handed = self.buf.len();
                return Ok(Some((self.offset, &self.buf)));
            }
            let from = self.buf.len();
            // Up to a chunk in all, or twice the cut line when it is longer. `read_to_end`
            // reads into spare capacity without zeroing it (zeroing a chunk for every small
            // file showed in `open`).
            let want = if from < self.chunk { self.chunk - from } else { from };
            let n = (&mut self.file).take(want as u64).read_to_end(&mut self.buf)?;
            // `read_to_end` stops short of `want` only at the end of the file.
            self.eof = n < want;
            if let Some(i) = memchr::memrchr(b'\n', &self.buf[from..]) {
                self.handed = from + i + 1;
                return Ok(Some((self.offset, &self.buf[..self.handed])));
            }
        }
    }

    /// The file, e.g. to see whether it grew while it was read.
    pub fn file(&self) -> &R {
        &self.file
    }

    pub fn into_file(self) -> R {
        self.file
    }
}

/// Calls `f(line)` for every `\n`-separated line of a block (without the `\n`) until `f`
/// returns false; false if it did.
pub fn each_line(block: &[u8], mut f: impl FnMut(&[u8]) -> bool) -> bool {
    let mut start = 0;
    while start < block.len() {
        let end = memchr::memchr(b'\n', &block[start..]).map_or(block.len(), |i| start + i);
        if !f(&block[start..end]) {
            return false;
        }
        start = end + 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(content: &str, chunk: usize) -> (Vec<String>, Vec<u64>) {
        // (Removed after `b` closes the file: Windows keeps an open file's folder.)
        let p = crate::testutil::TempPath::file("blocks", "a");
        std::fs::write(&p, content).unwrap();
        let mut b = Blocks::open(&p, chunk).unwrap();
        let (mut lines, mut offsets) = (Vec::new(), Vec::new());
        while let Some((off, block)) = b.next_block().unwrap() {
            assert_eq!(&content.as_bytes()[off as usize..off as usize + block.len()], block);
            offsets.push(off);
            each_line(block, |l| {
                lines.push(String::from_utf8(l.to_vec()).unwrap());
                true
            });
        }
        drop(b);
        (lines, offsets)
    }

    #[test]
    fn blocks_keep_lines_whole() {
        let long = "x".repeat(10_000);
        let content = format!("a\nbb\n{long}\nccc\ntail");
        let (lines, offsets) = read_all(&content, 4096);
        assert_eq!(lines, vec!["a", "bb", &long, "ccc", "tail"]);
        assert_eq!(offsets[0], 0);
        assert!(offsets.len() >= 3, "{offsets:?}");
    }

    #[test]
    fn a_file_ending_in_newline_has_no_empty_tail() {
        let (lines, offsets) = read_all("a\nb\n", 4096);
        assert_eq!(lines, vec!["a", "b"]);
        assert_eq!(offsets, vec![0]);
        assert_eq!(read_all("", 4096).0, Vec::<String>::new());
        assert_eq!(read_all("no newline", 4096).0, vec!["no newline"]);
    }

    #[test]
    fn many_chunks() {
        let content: String = (0..5000).map(|i| format!("line {i} {}\n", "y".repeat(i % 97))).collect();
        let (lines, _) = read_all(&content, 4096);
        assert_eq!(lines.len(), 5000);
        assert_eq!(lines[4999], format!("line 4999 {}", "y".repeat(4999 % 97)));
    }
}
