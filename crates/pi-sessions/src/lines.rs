//! Streaming a file as blocks of whole lines: one `read` fills a buffer, the block handed
//! out ends at its last `\n`, and the partial line after it is carried into the next read.
//! Memory stays at the buffer size unless a single line is longer (then the buffer grows
//! to hold that line).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

pub struct Blocks {
    file: File,
    buf: Vec<u8>,
    len: usize,
    consumed: usize,
    eof: bool,
    /// Bytes handed out so far (offset of the next block in the file).
    pub offset: u64,
}

impl Blocks {
    pub fn open(path: &Path, cap: usize) -> io::Result<Blocks> {
        Ok(Blocks { file: File::open(path)?, buf: vec![0; cap.max(4096)], len: 0, consumed: 0, eof: false, offset: 0 })
    }

    /// The next block of complete lines (the last block may end without `\n`).
    pub fn next_block(&mut self) -> io::Result<Option<&[u8]>> {
        if self.consumed > 0 {
            self.buf.copy_within(self.consumed..self.len, 0);
            self.len -= self.consumed;
            self.offset += self.consumed as u64;
            self.consumed = 0;
        }
        loop {
            if self.eof {
                if self.len == 0 {
                    return Ok(None);
                }
                self.consumed = self.len;
                return Ok(Some(&self.buf[..self.len]));
            }
            if self.len == self.buf.len() {
                let grown = self.buf.len() * 2;
                self.buf.resize(grown, 0);
            }
            let n = match self.file.read(&mut self.buf[self.len..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                self.eof = true;
                continue;
            }
            let from = self.len;
            self.len += n;
            if let Some(i) = memchr::memrchr(b'\n', &self.buf[from..self.len]) {
                self.consumed = from + i + 1;
                return Ok(Some(&self.buf[..self.consumed]));
            }
        }
    }
}

/// Calls `f(line)` for every `\n`-separated line of a block (without the `\n`).
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

    #[test]
    fn blocks_keep_lines_whole() {
        let d = std::env::temp_dir().join(format!("pis-lines-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("a");
        let long = "x".repeat(10_000);
        let content = format!("a\nbb\n{long}\nccc\ntail");
        std::fs::write(&p, &content).unwrap();
        let mut b = Blocks::open(&p, 4096).unwrap();
        let mut lines = Vec::new();
        while let Some(block) = b.next_block().unwrap() {
            each_line(block, |l| {
                lines.push(String::from_utf8(l.to_vec()).unwrap());
                true
            });
        }
        assert_eq!(lines, vec!["a", "bb", &long, "ccc", "tail"]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
