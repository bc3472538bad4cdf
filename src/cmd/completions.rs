//! `ctxbudget completions SHELL` and `ctxbudget man`: the shell completion script and the man page,
//! generated from the command-line definition ([`crate::cli::Cli`]) by clap's companions
//! (`clap_complete`, `clap_mangen`), so they never drift from the options. Both write to stdout.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::CommandFactory;

use super::stdout;
use crate::cli::Cli;

/// The completion script of `shell` for every subcommand and option.
pub fn completion_script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "ctxbudget", &mut out);
    out
}

/// The man page, in roff: the synopsis, the options and one line per subcommand.
pub fn man_page() -> Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out).context("cannot render the man page")?;
    Ok(out)
}

pub(super) fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    write_text(completion_script(shell))
}

pub(super) fn man() -> Result<ExitCode> {
    write_text(man_page()?)
}

fn write_text(bytes: Vec<u8>) -> Result<ExitCode> {
    stdout(&String::from_utf8_lossy(&bytes))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_script_names_the_subcommands() {
        for shell in [clap_complete::Shell::Bash, clap_complete::Shell::Zsh, clap_complete::Shell::Fish] {
            let script = String::from_utf8(completion_script(shell)).unwrap();
            for sub in ["replay", "sweep", "compare", "report", "completions", "man"] {
                assert!(script.contains(sub), "{shell:?} script lacks {sub}");
            }
        }
    }

    #[test]
    fn the_man_page_is_roff_with_the_subcommands() {
        let page = String::from_utf8(man_page().unwrap()).unwrap();
        assert!(page.contains(".TH ctxbudget"), "{page}");
        for sub in ["replay", "sweep", "compare", "report", "completions"] {
            assert!(page.contains(sub), "the man page lacks {sub}");
        }
    }
}
