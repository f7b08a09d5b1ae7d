//! `pi-sessions`: inspect, search, check and export pi session folders from the shell.
//!
//! Built on `pi-session-core`, the pure Rust core of pi-session-native (no Node, no napi):
//! `cargo build --release --bin pi-sessions`.
//!
//! Commands: ls, show, tree, context, search, check, stats, export, and the ones that change
//! session folders: prune, archive, restore, rm. Exit codes (grep's and ripgrep's): 0 found or
//! done, 1 nothing found (or problems found, a change refused), 2 a usage or I/O error.

mod archive;
pub mod args;
mod cmd_archive;
mod cmd_check;
mod cmd_context;
mod cmd_export;
mod cmd_ls;
mod cmd_prune;
mod cmd_rm;
mod cmd_search;
mod cmd_show;
mod cmd_stats;
mod cmd_tree;
pub mod ctx;
pub mod fmt;
mod folder;
mod held;
pub mod jout;
pub mod jv;
mod needle;
pub mod paths;
mod safe;
pub mod session;
mod skipped;
pub mod work;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use args::{Cli, Command, Global};
use clap::Parser;
use ctx::{CliError, Ctx, Out};

/// Runs the CLI; returns the process exit code.
pub fn run(raw: Vec<OsString>) -> i32 {
    let cli = match Cli::try_parse_from(std::iter::once(OsString::from("pi-sessions")).chain(raw)) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout (exit 0), usage errors to stderr (exit 2).
            let _ = e.print();
            return e.exit_code();
        }
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());

    let code = match dispatch(&cli, &mut out) {
        Ok(code) => out.flush().map(|_| code).unwrap_or_else(|e| io_exit(&e)),
        Err(e) => {
            let _ = out.flush();
            report(e)
        }
    };
    // grep's and ripgrep's contract: a file that could not be read makes the run an error (2),
    // whatever else was found; each was named on stderr when it was met.
    match skipped::count() {
        0 => code,
        n => {
            eprintln!("pi-sessions: {} skipped (could not be read)", fmt::count(n as u64, "file", "files"));
            2
        }
    }
}

fn io_exit(e: &io::Error) -> i32 {
    if e.kind() == io::ErrorKind::BrokenPipe {
        0
    } else {
        eprintln!("pi-sessions: {e}");
        2
    }
}

fn report(e: CliError) -> i32 {
    match e {
        CliError::Usage(m) => {
            eprintln!("pi-sessions: {m}");
            2
        }
        CliError::Ambiguous(m) => {
            eprintln!("pi-sessions: {m}");
            2
        }
        CliError::NotFound(m) | CliError::Fail(m) => {
            eprintln!("pi-sessions: {m}");
            1
        }
        CliError::Unreadable(path, e) => {
            eprintln!("pi-sessions: {}: {}", path.display(), skipped::reason(&e));
            2
        }
        CliError::Io(e) => io_exit(&e),
    }
}

fn dispatch(cli: &Cli, out: Out) -> Result<i32, CliError> {
    let ctx = context(&cli.global)?;
    match &cli.command {
        Command::Ls(a) => cmd_ls::run(&ctx, a, out),
        Command::Show(a) => cmd_show::run(&ctx, a, out),
        Command::Tree(a) => cmd_tree::run(&ctx, a, out),
        Command::Context(a) => cmd_context::run(&ctx, a, out),
        Command::Search(a) => cmd_search::run(&ctx, a, out),
        Command::Check(a) => cmd_check::run(&ctx, a, out),
        Command::Stats(a) => cmd_stats::run(&ctx, a, out),
        Command::Export(a) => cmd_export::run(&ctx, a, out),
        Command::Prune(a) => cmd_prune::run(&ctx, a, out),
        Command::Archive(a) => cmd_archive::archive(&ctx, a, out),
        Command::Restore(a) => cmd_archive::restore(&ctx, a, out),
        Command::Rm(a) => cmd_rm::run(&ctx, a, out),
    }
}

fn context(g: &Global) -> Result<Ctx, CliError> {
    let cwd = std::env::current_dir().map(|d| paths::resolve_from(&d, &d)).unwrap_or_else(|_| PathBuf::from("/"));
    let agent_dir = paths::agent_dir(g.agent_dir.as_deref(), &cwd);
    let dir = g.dir.as_deref().map(|d| paths::resolve(d, &cwd));
    if let Some(d) = &dir {
        if !d.exists() {
            return Err(CliError::NotFound(format!("--dir {}: no such directory", d.display())));
        }
        if !d.is_dir() {
            return Err(CliError::Usage(format!("--dir {} is not a directory", d.display())));
        }
    }
    let color = match g.color.as_deref() {
        _ if g.no_color => false,
        Some("always") => true,
        Some("never") => false,
        _ => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let jobs = match g.jobs {
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None => std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 16),
    };
    let io_jobs = match g.jobs {
        Some(_) => jobs,
        None => std::thread::available_parallelism().map_or(4, |n| n.get() * 4).clamp(4, 16),
    };
    Ok(Ctx { agent_dir, dir, cwd, color, jobs, io_jobs, width: width(), full_paths: g.full_paths })
}

/// The width human output is cut to: `$COLUMNS` (as ripgrep and fd read it), else the
/// terminal's when stdout is one, else 120 (a pipe or a file).
fn width() -> usize {
    if let Some(w) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|w| *w > 0) {
        return w;
    }
    match terminal_size::terminal_size_of(io::stdout()) {
        Some((terminal_size::Width(w), _)) if w > 0 => usize::from(w),
        _ => 120,
    }
}

fn main() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(run(args));
}
