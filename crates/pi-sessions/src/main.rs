//! `pi-sessions`: inspect, search, check and export pi session folders from the shell.
//!
//! Built on the pure Rust core of `pi-session-native` (no Node, no napi feature):
//! `cargo build --release --bin pi-sessions`.
//!
//! Commands: ls, show, tree, context, search, check, stats, export. Exit codes: 0 success,
//! 1 not found / problems found / failure, 2 bad arguments or an ambiguous session prefix.

pub mod args;
mod cmd_check;
mod cmd_context;
mod cmd_export;
mod cmd_ls;
mod cmd_search;
mod cmd_show;
mod cmd_stats;
mod cmd_tree;
pub mod fmt;
pub mod jv;
pub mod lines;
pub mod par;
pub mod paths;
pub mod session;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use args::{Opt, Parsed};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug)]
pub enum CliError {
    /// Bad arguments (exit 2).
    Usage(String),
    /// A session prefix that matches several sessions (exit 2).
    Ambiguous(String),
    /// Nothing matches (exit 1).
    NotFound(String),
    /// Anything else that failed (exit 1).
    Fail(String),
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
    /// Columns for truncating human output.
    pub width: usize,
}

impl Ctx {
    pub fn paint(&self) -> fmt::Paint {
        fmt::Paint { on: self.color }
    }
}

type Out<'a> = &'a mut dyn Write;

struct Command {
    name: &'static str,
    summary: &'static str,
    opts: &'static [Opt],
    help: &'static str,
    run: fn(&Ctx, &Parsed, Out) -> Result<i32, CliError>,
}

const COMMANDS: &[Command] = &[
    cmd_ls::COMMAND,
    cmd_show::COMMAND,
    cmd_tree::COMMAND,
    cmd_context::COMMAND,
    cmd_search::COMMAND,
    cmd_check::COMMAND,
    cmd_stats::COMMAND,
    cmd_export::COMMAND,
];

const GLOBAL_HELP: &str = "\
Global options (any command):
  --agent-dir DIR   pi agent dir (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent);
                    sessions live in DIR/sessions/--<encoded cwd>--/*.jsonl
  --dir DIR         use this one session folder instead (with --cwd: keep sessions
                    whose header cwd is that path)
  --color WHEN      auto (default: on a terminal, unless NO_COLOR is set), always, never
  --no-color        same as --color never
  -j, --jobs N      worker threads for scans (default: CPU count, at least 2)
  -h, --help        help for a command";

fn main_help() -> String {
    let mut s = format!(
        "pi-sessions {VERSION}: inspect, search, check and export pi coding agent sessions\n\n\
         Usage: pi-sessions <command> [options]\n\nCommands:\n"
    );
    for c in COMMANDS {
        s.push_str(&format!("  {:<9} {}\n", c.name, c.summary));
    }
    s.push_str(&format!(
        "\nSessions are named by id, unique id prefix, or file path.\n\n{GLOBAL_HELP}\n\n\
         Exit codes: 0 ok, 1 not found or problems found, 2 bad arguments or ambiguous prefix.\n\
         Run `pi-sessions <command> --help` for details; --json shapes are in docs/cli.md.\n"
    ));
    s
}

fn command_help(c: &Command) -> String {
    format!("{}\n\n{GLOBAL_HELP}\n", c.help.trim_end())
}

/// Runs the CLI; returns the process exit code.
pub fn run(raw: Vec<OsString>) -> i32 {
    let mut argv = Vec::with_capacity(raw.len());
    for a in raw {
        match a.into_string() {
            Ok(s) => argv.push(s),
            Err(a) => {
                eprintln!("pi-sessions: argument {a:?} is not valid UTF-8");
                return 2;
            }
        }
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());

    match dispatch(&argv, &mut out) {
        Ok(code) => out.flush().map(|_| code).unwrap_or_else(|e| io_exit(&e)),
        Err(e) => {
            let _ = out.flush();
            report(e)
        }
    }
}

fn io_exit(e: &io::Error) -> i32 {
    if e.kind() == io::ErrorKind::BrokenPipe {
        0
    } else {
        eprintln!("pi-sessions: {e}");
        1
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
        CliError::Io(e) => io_exit(&e),
    }
}

fn dispatch(argv: &[String], out: Out) -> Result<i32, CliError> {
    let (cmd, rest) = args::split_command(argv);
    let Some(cmd) = cmd else {
        // No command: help, version, or a usage error.
        let p = args::parse(&rest, &[args::GLOBAL, &[args::flag("version", Some('V'))]], "pi-sessions")?;
        if p.has("version") {
            writeln!(out, "pi-sessions {VERSION}")?;
            return Ok(0);
        }
        if p.has("help") {
            write!(out, "{}", main_help())?;
            return Ok(0);
        }
        eprint!("{}", main_help());
        return Err(CliError::Usage("missing command".into()));
    };
    if cmd == "help" {
        let topic = rest.iter().find(|a| !a.starts_with('-'));
        match topic.and_then(|t| COMMANDS.iter().find(|c| c.name == t)) {
            Some(c) => write!(out, "{}", command_help(c))?,
            None if topic.is_none() => write!(out, "{}", main_help())?,
            None => {
                return Err(CliError::Usage(format!("unknown command {:?}", topic.map(String::as_str).unwrap_or(""))));
            }
        }
        return Ok(0);
    }
    let Some(c) = COMMANDS.iter().find(|c| c.name == cmd || (cmd == "list" && c.name == "ls")) else {
        return Err(CliError::Usage(format!("unknown command {cmd:?} (see `pi-sessions --help`)")));
    };
    let p = args::parse(&rest, &[args::GLOBAL, c.opts], c.name)?;
    if p.has("help") {
        write!(out, "{}", command_help(c))?;
        return Ok(0);
    }
    let ctx = context(&p)?;
    (c.run)(&ctx, &p, out)
}

fn context(p: &Parsed) -> Result<Ctx, CliError> {
    let cwd = std::env::current_dir().map(|d| paths::resolve_from(&d, &d)).unwrap_or_else(|_| PathBuf::from("/"));
    let agent_dir = paths::agent_dir(p.get("agent-dir"), &cwd);
    let dir = p.get("dir").map(|d| paths::resolve(d, &cwd));
    if let Some(d) = &dir
        && !d.is_dir()
    {
        return Err(CliError::Usage(format!("--dir {} is not a directory", d.display())));
    }
    let color = match p.choice("color", &["auto", "always", "never"])?.as_deref() {
        _ if p.has("no-color") => false,
        Some("always") => true,
        Some("never") => false,
        _ => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let jobs = match p.num("jobs")? {
        Some(0) => return Err(CliError::Usage("--jobs must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 16),
    };
    let width = std::env::var("COLUMNS").ok().and_then(|c| c.parse::<usize>().ok()).filter(|w| *w >= 40).unwrap_or(120);
    Ok(Ctx { agent_dir, dir, cwd, color, jobs, width })
}

/// Exactly `n` positional arguments, named for messages.
pub fn positionals<'a>(p: &'a Parsed, names: &[&str], cmd: &str) -> Result<Vec<&'a str>, CliError> {
    if p.pos.len() < names.len() {
        return Err(CliError::Usage(format!(
            "`{cmd}` needs <{}> (see `pi-sessions {cmd} --help`)",
            names[p.pos.len()]
        )));
    }
    if p.pos.len() > names.len() {
        return Err(CliError::Usage(format!("unexpected argument {:?} for `{cmd}`", p.pos[names.len()])));
    }
    Ok(p.pos.iter().map(String::as_str).collect())
}

fn main() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(run(args));
}
