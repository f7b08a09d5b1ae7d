//! What every command gets: the settings (`Ctx`), the error type (`CliError`, which sets the
//! exit code) and the output (`Out`). No module of the crate is used here but `fmt`.

use std::io::{self, Write};
use std::path::PathBuf;

use super::fmt;

#[derive(Debug)]
pub enum CliError {
    /// Bad arguments (exit 2).
    Usage(String),
    /// A session prefix that matches several sessions (exit 2).
    Ambiguous(String),
    /// Nothing matches: no such session, folder or agent dir (exit 1).
    NotFound(String),
    /// A session that is not one, or a change refused (exit 1).
    Fail(String),
    /// A file that cannot be read (exit 2).
    Unreadable(PathBuf, io::Error),
    /// Output or other I/O failed (exit 2; a closed stdout ends quietly with 0).
    Io(io::Error),
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> CliError {
        CliError::Io(e)
    }
}

/// Settings shared by all commands.
pub struct Ctx {
    pub agent_dir: PathBuf,
    /// `--dir`: one session folder instead of the agent dir's layout.
    pub dir: Option<PathBuf>,
    pub cwd: PathBuf,
    /// Colour on stdout.
    pub color: bool,
    pub jobs: usize,
    /// Threads for the commands that wait on fsyncs (`archive`, `restore`): `--jobs`, else
    /// four per CPU (at least 4, at most 16): more threads than cores overlap the waits.
    pub io_jobs: usize,
    /// Columns for truncating human output: `$COLUMNS`, else the terminal's, else 120.
    pub width: usize,
    /// `--full-paths`: show paths whole instead of relative to the session folder.
    pub full_paths: bool,
}

impl Ctx {
    /// A path as human output shows it: relative to `--dir`, to `<agent dir>/sessions`, or to
    /// the agent dir (`sessions-archive/…`), unless `--full-paths`; any other path whole.
    pub fn shown(&self, path: &str) -> String {
        if self.full_paths {
            return path.to_string();
        }
        let sessions = self.agent_dir.join("sessions");
        let bases = [self.dir.as_deref(), Some(sessions.as_path()), Some(self.agent_dir.as_path())];
        for base in bases.into_iter().flatten() {
            if let Ok(rest) = std::path::Path::new(path).strip_prefix(base)
                && !rest.as_os_str().is_empty()
            {
                return rest.display().to_string();
            }
        }
        path.to_string()
    }

    pub fn paint(&self) -> fmt::Paint {
        fmt::Paint { on: self.color }
    }
}

/// Where a command writes its results (stdout, buffered).
pub type Out<'a> = &'a mut dyn Write;
