//! The `ctxbudget` binary: parse the command line, resolve it into a `Config`, run it, and turn the
//! outcome into an exit code (0 ok, 1 some input failed, 2 usage error). Errors are printed once;
//! warnings about how the command line was written (`config::notices`) come first.

use std::process::ExitCode;

use clap::Parser;
use ctxbudget::cli::Cli;
use ctxbudget::cmd;
use ctxbudget::config::{self, Config};

fn main() -> ExitCode {
    let cli = Cli::parse();
    for notice in config::notices(&cli) {
        cmd::say(format_args!("warning: {notice}"));
    }
    let result = Config::from_cli(cli).map_err(anyhow::Error::from).and_then(cmd::run);
    match result {
        Ok(code) => code,
        Err(e) if cmd::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            cmd::say(format_args!("error: {e:#}"));
            ExitCode::from(cmd::exit_code_for(&e))
        }
    }
}
