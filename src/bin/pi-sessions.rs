//! `pi-sessions`: inspect, search, check and export pi session folders from the shell.
//!
//! Built on the pure Rust core of `pi-session-native` (no Node, no napi feature):
//! `cargo build --release --bin pi-sessions`.

#[path = "../cli/mod.rs"]
mod cli;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(cli::run(args));
}
