//! The command line's arguments (clap): the global options, one struct per command, and the
//! help texts. Parsing errors exit 2, `--help` / `help <command>` / `--version` exit 0.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Roles `search --role` accepts.
pub const ROLES: [&str; 8] =
    ["user", "assistant", "toolResult", "system", "custom", "bashExecution", "branchSummary", "compactionSummary"];

const AFTER_HELP: &str = "\
Sessions are named by id, unique id prefix, or file path.
Exit codes: 0 found or done, 1 nothing found, 2 usage or I/O error.
`pi-sessions <command> -h` for a summary, `--help` for details.";

const AFTER_LONG_HELP: &str = "\
Sessions are named by id, unique id prefix, or file path.

Exit codes (grep's and ripgrep's):
  0  found or done
  1  nothing found: no match, no such session, id, folder, --dir or --agent-dir;
     also `check` found problems, and a change refused (in use, changed meanwhile)
  2  a usage error (bad option, ambiguous prefix) or an I/O error; a file that
     cannot be read is named on stderr, skipped, and makes the exit code 2

Changes are previewed with -n/--dry-run (prune, archive, restore, rm); listings are
cut with -l/--limit. Human output fits the terminal's width ($COLUMNS first); --json
is for scripts. The full reference, with every --json shape, is docs/cli.md in the
npm package (node_modules/pi-session-native/docs/cli.md).";

#[derive(Parser, Debug)]
#[command(
    name = "pi-sessions",
    version,
    about = "inspect, search, check and export pi coding agent sessions",
    long_about = "\
List, inspect, search, check and export the session files of the pi coding agent
(~/.pi/agent/sessions/), and keep years of them: prune, archive, restore, rm.",
    after_help = AFTER_HELP,
    after_long_help = AFTER_LONG_HELP,
    arg_required_else_help = true,
    disable_help_subcommand = false
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options accepted by every command.
#[derive(Args, Debug)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// pi agent dir (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent); sessions live in
    /// DIR/sessions/--<encoded cwd>--/*.jsonl
    #[arg(long, value_name = "DIR", global = true)]
    pub agent_dir: Option<String>,
    /// use this one session folder instead (with --cwd: keep sessions whose header cwd is that path)
    #[arg(long, value_name = "DIR", global = true)]
    pub dir: Option<String>,
    /// auto (default: on a terminal, unless NO_COLOR is set), always, never
    #[arg(long, value_name = "WHEN", global = true, value_parser = ["auto", "always", "never"])]
    pub color: Option<String>,
    /// same as --color never
    #[arg(long, global = true)]
    pub no_color: bool,
    /// show paths whole (default: relative to the session folder)
    #[arg(long, global = true)]
    pub full_paths: bool,
    /// worker threads for scans (default: CPU count, at least 2)
    #[arg(short, long, value_name = "N", global = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
}

/// `--limit N`, or the deprecated `-n N` (said once on stderr; it is `--dry-run` in the
/// commands that change files).
pub fn limit(limit: Option<usize>, old: Option<usize>) -> Option<usize> {
    if old.is_some() {
        eprintln!(
            "pi-sessions: warning: -n N is deprecated here; use -l N or --limit N (-n is --dry-run in prune, archive, restore and rm)"
        );
    }
    limit.or(old)
}

/// `--cwd PATH | --all`.
#[derive(Args, Debug)]
pub struct ScopeArgs {
    /// sessions of this project (default: the current directory)
    #[arg(long, value_name = "PATH")]
    pub cwd: Option<String>,
    /// sessions of every project under the agent dir
    #[arg(short, long, conflicts_with = "cwd")]
    pub all: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// list sessions, newest first
    #[command(
        alias = "list",
        long_about = "\
List sessions newest first (by pi's `modified`: the latest user/assistant message
time, else the header timestamp, else the file mtime), with the session name or
first user message, the number of message entries, the file size and the time."
    )]
    Ls(LsArgs),
    /// summary of one session: counts, tokens, cost, compactions, branches
    #[command(long_about = "\
Show a session's header (id, cwd, version, times), its name, entry counts by type and
message counts by role, tokens and cost summed over every assistant message's `usage`
and every `usage` entry (all branches), per model, the compactions, the branch points
(entries with more than one child), labels, and the active branch (ending at the last
entry, where pi resumes).

A unique id prefix is enough; an ambiguous prefix lists the candidates and exits 2.")]
    Show(ShowArgs),
    /// the entry tree with branches, labels and the active leaf
    #[command(long_about = "\
Print every entry under its parent. A chain of single children stays in one column;
branches are drawn with ├─/└─ and siblings are ordered by timestamp, as in pi's tree.
Entries on the active path (root to the last entry, where pi resumes) are marked `*`,
the leaf with `← leaf`; labels are shown in [brackets]; text is cut to the width.
Orphans (parent missing) are shown as roots, entries in a parent cycle at the end.")]
    Tree(TreeArgs),
    /// the messages pi would send to the model on resume
    #[command(long_about = "\
Build the model context the way pi does when it resumes the session: follow the path
from the root to the last entry; if it holds a compaction, start with the newest one
(its systemMessage, a compactionSummary message, then either its `retainedTail` messages
or the kept entries from firstKeptEntryId), then the entries after it. custom_message
entries become `custom` messages, branch_summary entries `branchSummary` messages, and
context_edit entries replace (or drop) the content of the message they target.")]
    Context(ContextArgs),
    /// full-text search of message text across sessions
    #[command(
        long_about = "\
Find <text> (a plain substring, no regex) in the text of messages: text blocks of user,
assistant, toolResult, system and custom messages, bashExecution commands and output,
custom_message content, and branch/compaction summaries (tool-call arguments and thinking
are not searched). Sessions are searched newest first; each hit shows the entry and a
snippet. Files are read as a stream and searched as raw bytes first, so only matching
lines are parsed.",
        after_help = "Exit code 0 when something matched, 1 when nothing did."
    )]
    Search(SearchArgs),
    /// find torn, malformed, orphaned, duplicated or cyclic entries (--repair)
    #[command(long_about = "\
Check session files (a file, or every *.jsonl under a directory; default: the agent
dir's sessions). Problems reported (each makes the exit code 1):
  missing_header   the first entry is not a session header (not a session file)
  old_version      header version below 3 (pi rewrites the file when it opens it)
  torn_last_line   the last line does not parse (a write cut short)
  missing_newline  the last line parses but has no final newline
  malformed_line   a line that is not a JSON object (pi skips it)
  invalid_utf8     bytes that are not UTF-8 (pi reads them as U+FFFD)
  missing_id       an entry without a string id
  duplicate_id     several entries with one id (later ones shadow earlier ones)
  orphan           parentId names no entry (pi shows it as a root)
  cycle            parent links that loop (pi cannot build the path)

--repair fixes what dropping lines can fix, and only in files whose first entry is a
valid session header: it writes <file>.bak (or .bak.N) first, then atomically replaces
the file (temp file in the same folder, fsync, rename) keeping every parsed entry line
byte for byte, dropping malformed and blank lines and ending the last line. Orphans,
duplicates, cycles and old versions are reported, never rewritten. Non-session files
are never touched. The exit code then reflects the repaired files.")]
    Check(CheckArgs),
    /// sessions, messages, tokens and cost by model and by day
    #[command(long_about = "\
Totals over sessions: sessions, message entries by role, and tokens and cost summed from
every assistant message's `usage` and every `usage` entry (all branches), grouped by
provider/model and by UTC day of the entry's timestamp.")]
    Stats(StatsArgs),
    /// Markdown transcript or JSON of a session
    #[command(long_about = "\
Write the session to stdout. Without --branch every entry is exported in file order
(all branches; an entry whose parent is not the entry before it is marked with the
entry it continues from); with --branch only the active path (root to the last entry).

Formats:
  md    (default) a Markdown transcript: user and assistant text, thinking in
        <details>, tool calls and results in code blocks, summaries, model changes
  json  {\"header\": {...}, \"entries\": [...]}: the header and entries exactly as in the
        file (docs/cli.md)")]
    Export(ExportArgs),
    /// keep only the active path (root to leaf), byte for byte, with a backup
    #[command(long_about = "\
Rewrite a session so that it keeps only the path from the root to the leaf (the last
entry, where pi resumes, or --leaf ID). Every kept line stays byte for byte; labels of
path entries and the session name that live on other branches are kept, re-linked to
the path (only their parentId changes). pi then gives the same branch, context, name,
labels and leaf. The original bytes stay in <file>.bak (unless --no-backup); the file is
replaced atomically, and left untouched if it changes meanwhile. A session open for
writing by another process, locked, or modified in the last minute is refused.")]
    Prune(PruneArgs),
    /// move sessions out of pi's listing into zstd files under sessions-archive/
    #[command(long_about = "\
Move sessions to <agent dir>/sessions-archive/--<cwd>--/<file name>.zst: one zstd frame
with a content checksum. The original is removed only after the archive file has been
written, fsynced, read back and found equal, and only if it did not change meanwhile.
--older-than DAYS picks the sessions of the scope whose last activity (pi's `modified`)
is older than DAYS days. Sessions in use (open for writing by another process, locked,
or modified in the last minute) are refused (exit 1). `ls --archived` and
`search --archived` read the archive; `restore` puts sessions back.")]
    Archive(ArchiveArgs),
    /// put archived sessions back, byte-identical, mtime kept
    #[command(long_about = "\
Decompress archived sessions back to <agent dir>/sessions/--<cwd>--/<file name>,
byte-identical and with the mtime they had, so pi lists them exactly as before. A
session is named by id, unique id prefix, file name or archive path. --all restores
every archived session (of one project with --cwd). An existing file is never
overwritten: that session is left in the archive and the exit code is 1.")]
    Restore(RestoreArgs),
    /// move sessions to the trash (or delete them with --permanent)
    #[command(long_about = "\
Move sessions to the operating system's trash, as pi's Ctrl+D in /resume does, or
delete them with --permanent (also where there is no trash). Sessions in use are
refused (exit 1).")]
    Rm(RmArgs),
}

#[derive(Args, Debug)]
pub struct PruneArgs {
    /// a session id, unique id prefix, or file path
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// keep the path to this entry instead of the last one
    #[arg(long, value_name = "ID")]
    pub leaf: Option<String>,
    /// print what would be kept; write nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// do not keep <file>.bak
    #[arg(long)]
    pub no_backup: bool,
    /// one JSON object (docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ArchiveArgs {
    /// session ids, unique id prefixes, or file paths
    #[arg(value_name = "SESSION", conflicts_with = "older_than")]
    pub sessions: Vec<String>,
    /// every session of the scope whose last activity is older than DAYS days
    #[arg(long, value_name = "DAYS")]
    pub older_than: Option<f64>,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// print what would be archived; write nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// one JSON object (docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// archived sessions: id, unique id prefix, file name, or archive path
    #[arg(value_name = "SESSION", conflicts_with = "all")]
    pub sessions: Vec<String>,
    /// every archived session (of one project with --cwd)
    #[arg(short, long)]
    pub all: bool,
    /// with --all: only sessions of this project
    #[arg(long, value_name = "PATH", requires = "all")]
    pub cwd: Option<String>,
    /// print what would be restored; write nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// one JSON object (docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RmArgs {
    /// session ids, unique id prefixes, or file paths
    #[arg(value_name = "SESSION", required = true)]
    pub sessions: Vec<String>,
    /// delete instead of moving to the trash
    #[arg(long)]
    pub permanent: bool,
    /// print what would be removed (and what would be refused); change nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// one JSON object (docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct LsArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// list archived sessions (sessions-archive/) instead, without restoring them
    #[arg(long)]
    pub archived: bool,
    /// only the N newest
    #[arg(short = 'l', long, value_name = "N")]
    pub limit: Option<usize>,
    /// the old short form of --limit (deprecated: -n is --dry-run where something changes)
    #[arg(short = 'n', value_name = "N", hide = true, conflicts_with = "limit")]
    pub old_limit: Option<usize>,
    /// a JSON array of sessions (docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// a session id, unique id prefix, or file path
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// one JSON object (docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct TreeArgs {
    /// a session id, unique id prefix, or file path
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// only the active path
    #[arg(long)]
    pub active: bool,
    /// line width (default: the terminal's, $COLUMNS first; no limit in a pipe)
    #[arg(short, long, value_name = "N")]
    pub width: Option<usize>,
    /// a JSON array of the entries in the tree's order, with depth and marks (docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ContextArgs {
    /// a session id, unique id prefix, or file path
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// a JSON array of the message objects, raw from the file where pi passes them through
    /// (docs/cli.md)
    #[arg(long)]
    pub json: bool,
    /// do not shorten long text in the human view
    #[arg(long)]
    pub full: bool,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// the text to find (a plain substring)
    #[arg(value_name = "TEXT", allow_negative_numbers = true)]
    pub text: String,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// search archived sessions (sessions-archive/) instead, without restoring them
    #[arg(long)]
    pub archived: bool,
    /// only messages of this role: user, assistant, toolResult, system, custom,
    /// bashExecution, branchSummary, compactionSummary
    #[arg(short, long, value_name = "ROLE", value_parser = ROLES)]
    pub role: Option<String>,
    /// case-insensitive, character by character (docs/cli.md)
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// stop after N hits (newest sessions first)
    #[arg(short = 'l', long, value_name = "N")]
    pub limit: Option<usize>,
    /// the old short form of --limit (deprecated: -n is --dry-run where something changes)
    #[arg(short = 'n', value_name = "N", hide = true, conflicts_with = "limit")]
    pub old_limit: Option<usize>,
    /// characters of snippet context on each side
    #[arg(short = 'C', long, value_name = "N", default_value_t = 60)]
    pub context: usize,
    /// a JSON array of hits (docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// a session file, or a folder to check every *.jsonl under (three levels deep)
    #[arg(value_name = "FILE|DIR")]
    pub target: Option<PathBuf>,
    /// repair torn/malformed lines as described
    #[arg(long)]
    pub repair: bool,
    /// a JSON report (docs/cli.md)
    #[arg(long)]
    pub json: bool,
    /// list clean files too
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// one JSON object (docs/cli.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// a session id, unique id prefix, or file path
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// md (a Markdown transcript) or json (the file's header and entries)
    #[arg(short, long, value_name = "md|json", value_parser = ["md", "json"], default_value = "md")]
    pub format: String,
    /// only the active branch
    #[arg(short, long)]
    pub branch: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_forms() {
        let c =
            Cli::try_parse_from(["pi-sessions", "--agent-dir", "/a", "-j", "2", "search", "x", "-ir", "user"]).unwrap();
        assert_eq!(c.global.agent_dir.as_deref(), Some("/a"));
        assert_eq!(c.global.jobs, Some(2));
        let Command::Search(s) = c.command else { panic!("search") };
        assert!(s.ignore_case);
        assert_eq!(s.role.as_deref(), Some("user"));
        let c = Cli::try_parse_from(["pi-sessions", "search", "--json", "--", "-i"]).unwrap();
        let Command::Search(s) = c.command else { panic!("search") };
        assert_eq!(s.text, "-i");
        assert!(s.json);
        let c = Cli::try_parse_from(["pi-sessions", "list", "-l5"]).unwrap();
        assert!(matches!(c.command, Command::Ls(LsArgs { limit: Some(5), .. })));
        let c = Cli::try_parse_from(["pi-sessions", "list", "-n5"]).unwrap();
        assert!(matches!(c.command, Command::Ls(LsArgs { old_limit: Some(5), .. })), "-n N kept for a release");
        for bad in [&["ls", "--nope"][..], &["ls", "--json=1"], &["search"], &["ls", "-j", "0"], &["show", "a", "b"]] {
            let argv = std::iter::once("pi-sessions").chain(bad.iter().copied());
            assert_eq!(Cli::try_parse_from(argv).unwrap_err().exit_code(), 2, "{bad:?}");
        }
    }
}
