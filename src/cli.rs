//! The command line, as clap derive types. Doc comments are the help text. Nothing below
//! [`crate::config`] sees these types: they are turned into one plain `Config` there.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Replay recorded LLM-agent conversations to measure and tune their context-token budget.
#[derive(Debug, Parser)]
#[command(name = "ctxbudget", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay sessions request by request under prune policies and report their context budget.
    Replay(ReplayArgs),
    /// Show exactly how the seed's From<String> would split one tool output (read from stdin or FILE).
    Split(SplitArgs),
    /// Count the tokens of a text (stdin or FILE) with real tokenizers beside the len/4 estimate.
    Count(CountArgs),
    /// List every policy and record-time transform with its parameters, defaults and source.
    Policies,
    /// Set each request's replayed context beside the prompt size the provider recorded, fit
    /// recorded ≈ a + b·replayed per conversation and report the error.
    Reconcile(ReconcileArgs),
}

/// Tokenizers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TokenizerArg {
    /// The seed's estimate: UTF-8 bytes / 4.
    Estimate,
    /// OpenAI o200k_base (gpt-4o, gpt-4.1, gpt-5, o-series).
    O200k,
    /// OpenAI cl100k_base (gpt-4, gpt-3.5).
    Cl100k,
}

/// What policies decide with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecideArg {
    /// Each policy's own anchor estimator (opencode round(len/4), LangChain chars/4 + 3 per message, …).
    Anchor,
    /// The report's tokenizer (--tokenizer), for every policy.
    Real,
    /// The seed's estimate, UTF-8 bytes / 4, for every policy.
    Estimate,
    /// OpenAI o200k_base, for every policy.
    O200k,
    /// OpenAI cl100k_base, for every policy.
    Cl100k,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Terminal table.
    Table,
    /// Comma-separated values.
    Csv,
    /// JSON (the documented contract).
    Json,
    /// Markdown tables.
    Markdown,
}

/// Options of `replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Trace files or directories (searched recursively). Default: the bundled traces/.
    pub paths: Vec<PathBuf>,
    /// SUMMARY_THRESHOLD in bytes: outputs longer than this are split into summary + content.
    #[arg(long, default_value_t = 256)]
    pub threshold: usize,
    /// Prune policy as name:key=value,... (repeatable). Default: none, keep-turns:n=3,
    /// keep-results:n=5, budget:max=100000,target=50000. `ctxbudget policies` lists them all.
    #[arg(long = "policy", value_name = "SPEC")]
    pub policies: Vec<String>,
    /// Tokenizer for every reported token count.
    #[arg(long, value_enum, default_value_t = TokenizerArg::O200k)]
    pub tokenizer: TokenizerArg,
    /// What the policies decide with: each one's own anchor estimator, the report's tokenizer
    /// (real), or one counter for all.
    #[arg(long, value_enum, default_value_t = DecideArg::Anchor)]
    pub decide_with: DecideArg,
    /// Policies named and configured in a TOML file (see README, "Policies"); combinable with
    /// --policy (those come first).
    #[arg(long = "policies", value_name = "FILE")]
    pub policies_file: Option<PathBuf>,
    /// Record-time transform applied to every tool output before the split, as
    /// name[:key=value,...] (repeatable, applied in order): truncate:codex, truncate:mini,
    /// spill:head=H,tail=T. `ctxbudget policies` lists them.
    #[arg(long = "transform", value_name = "SPEC")]
    pub transforms: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
    /// Write the report here instead of stdout (`-` = stdout). Written atomically.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Report one row per request (the budget timeline) instead of one per conversation.
    #[arg(long)]
    pub per_request: bool,
    /// Read every input with this format instead of detecting it (see README for the list).
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<String>,
    /// Re-split outputs that a tool already split into summary and content.
    #[arg(long)]
    pub resplit: bool,
    /// Worker threads (default: all cores). Output is identical at any count.
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Also read Claude Code sessions in place, from ~/.claude/projects.
    #[arg(long)]
    pub claude: bool,
    /// Also read Codex CLI rollouts in place, from ~/.codex/sessions.
    #[arg(long)]
    pub codex: bool,
}

/// Options of `reconcile`.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// Trace files or directories (searched recursively, hidden folders included).
    pub paths: Vec<PathBuf>,
    /// Also read Claude Code sessions in place, from ~/.claude/projects.
    #[arg(long)]
    pub claude: bool,
    /// Also read Codex CLI rollouts in place, from ~/.codex/sessions.
    #[arg(long)]
    pub codex: bool,
    /// Tokenizer of the replayed counts (o200k is exact only for OpenAI's current models).
    #[arg(long, value_enum, default_value_t = TokenizerArg::O200k)]
    pub tokenizer: TokenizerArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
    /// Write the report here instead of stdout (`-` = stdout). Written atomically.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Also list every request (CSV: only the requests).
    #[arg(long)]
    pub per_request: bool,
    /// How many of the worst requests to list.
    #[arg(long, default_value_t = 10)]
    pub worst: usize,
    /// Read every input with this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<String>,
    /// Worker threads (default: all cores). Output is identical at any count.
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
}

/// Options of `split`.
#[derive(Debug, Args)]
pub struct SplitArgs {
    /// Read the output from this file instead of stdin.
    pub file: Option<PathBuf>,
    /// SUMMARY_THRESHOLD in bytes.
    #[arg(long, default_value_t = 256)]
    pub threshold: usize,
    /// Print the split as JSON ({"summary": ..., "content": ...}).
    #[arg(long)]
    pub json: bool,
}

/// Options of `count`.
#[derive(Debug, Args)]
pub struct CountArgs {
    /// Read the text from this file instead of stdin.
    pub file: Option<PathBuf>,
    /// Only this tokenizer (default: o200k and cl100k beside the estimate).
    #[arg(long, value_enum)]
    pub tokenizer: Option<TokenizerArg>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
