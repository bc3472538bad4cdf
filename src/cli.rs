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
    /// Terminal tables: draw every column at full width. By default a table keeps the columns
    /// that matter and fits in $COLUMNS (100 when unset): paths shortened in the middle, long
    /// text wrapped (docs/cli.md, "Terminal tables").
    #[arg(long, global = true)]
    pub wide: bool,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write one self-contained HTML report (charts, tables, the recommendation in words, the
    /// settings) plus the CSV and JSON behind it.
    Report(ReportArgs),
    /// Recommend the (policy, SUMMARY_THRESHOLD) pair that costs least with the prompt cache,
    /// within the context window, against the sessions as recorded.
    Recommend(RecommendArgs),
    /// Replay sessions request by request under prune policies and report their context budget.
    Replay(ReplayArgs),
    /// Sweep SUMMARY_THRESHOLD under one policy and recommend a threshold (overall and per tool).
    Sweep(SweepArgs),
    /// Compare policies side by side: peak and total input tokens, savings, prune events, requests
    /// over the context window, and cache-aware cost.
    Compare(CompareArgs),
    /// Price each policy with a prompt cache: tokens read and written, and for every prune event the
    /// tokens it freed versus the cached tokens it forced to be written again.
    Cost(CompareArgs),
    /// How far len/4 and the anchors' own estimators are from real tokens, per tool and content kind.
    Calibrate(CalibrateArgs),
    /// Set each request's replayed context beside the prompt size the provider recorded, fit
    /// recorded ≈ a + b·replayed per conversation and report the error.
    Reconcile(ReconcileArgs),
    /// Show exactly how the seed's `From<String>` would split one tool output (read from stdin or FILE).
    Split(SplitArgs),
    /// Count the tokens of a text (stdin or FILE) with real tokenizers beside the len/4 estimate.
    Count(CountArgs),
    /// List every policy and record-time transform with its parameters, defaults and source.
    Policies,
    /// Print a shell completion script to stdout (e.g. `ctxbudget completions bash >
    /// ~/.local/share/bash-completion/completions/ctxbudget`).
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout (e.g. `ctxbudget man > ctxbudget.1; man ./ctxbudget.1`).
    Man,
}

/// Options of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
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
    /// Per conversation, the provider's tokens (the default): an OpenAI model's own tokenizer
    /// (o200k, or cl100k for gpt-4 and gpt-3.5); for other providers o200k times a ratio per
    /// content kind fitted from the recorded usage, or a default ratio where none is recorded
    /// (docs/calibration.md).
    Provider,
}

/// Implementations of the exact tokenizers (both give the same counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CounterArg {
    /// The `tiktoken` crate (goliajp): the fastest measured.
    Tiktoken,
    /// tiktoken-rs: OpenAI's own core, vendored; the reference.
    TiktokenRs,
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
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    /// SUMMARY_THRESHOLD in bytes: outputs longer than this are split into summary + content
    /// (`1KB` and `1K` are 1,000 bytes, `1KiB` 1,024).
    #[arg(long, default_value_t = 256, value_parser = crate::spec::parse_size_usize)]
    pub threshold: usize,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub policies: PolicyArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
    /// Report one row per request (the budget timeline) instead of one per conversation.
    #[arg(long)]
    pub per_request: bool,
    /// With --per-request as a table or Markdown: read the inputs twice (the columns' widths,
    /// then the rows) instead of holding every row; automatic above 256 MB of input. Same output.
    #[arg(long)]
    pub low_memory: bool,
}

/// Which policies to replay.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Prune policy as name:key=value,... (repeatable). Default: none, keep-turns:n=3,
    /// keep-results:n=5, budget:max=100000,target=50000. `ctxbudget policies` lists them all.
    #[arg(long = "policy", value_name = "SPEC")]
    pub specs: Vec<String>,
    /// Policies named and configured in a TOML file (see docs/policies.md, "Policies in a file");
    /// combinable with --policy (those come first).
    #[arg(long = "policies", value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Options of `reconcile`.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub source: SourceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
    /// Write the report here instead of stdout (`-` = stdout). Written atomically.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Also list every request (CSV: only the requests).
    #[arg(long)]
    pub per_request: bool,
    /// How many of the worst requests to list (0: none).
    #[arg(long, default_value_t = 10)]
    pub worst: usize,
}

/// Options of `split`.
#[derive(Debug, Args)]
pub struct SplitArgs {
    /// Read the output from this file instead of stdin (`-`: stdin).
    pub file: Option<PathBuf>,
    /// SUMMARY_THRESHOLD in bytes.
    #[arg(long, default_value_t = 256, value_parser = crate::spec::parse_size_usize)]
    pub threshold: usize,
    /// Print the split as JSON: the output's bytes and lines, the threshold, whether it was split,
    /// and its summary and content.
    #[arg(long)]
    pub json: bool,
}

/// Options of `count`.
#[derive(Debug, Args)]
pub struct CountArgs {
    /// Read the text from this file instead of stdin (`-`: stdin).
    pub file: Option<PathBuf>,
    /// Only this tokenizer (default: o200k and cl100k beside the estimate).
    #[arg(long, value_enum)]
    pub tokenizer: Option<TokenizerArg>,
    /// Implementation of o200k and cl100k: tiktoken (the fastest) or tiktoken-rs (OpenAI's own
    /// core, the reference). Both give the same counts.
    #[arg(long, value_enum, default_value_t = CounterArg::Tiktoken)]
    pub counter: CounterArg,
}

/// Where the traces come from and how their tokens are counted: shared by `replay`, the analyses
/// and `reconcile`.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Trace files or directories (searched recursively); `-` reads standard input (shown as
    /// /dev/stdin). When none is given, `replay` and the analyses read ./traces if this directory
    /// has one, else the traces/ of the checkout this binary was built from; `reconcile` needs one
    /// (or --claude/--codex).
    pub paths: Vec<PathBuf>,
    /// Also read Claude Code sessions in place, from ~/.claude/projects.
    #[arg(long)]
    pub claude: bool,
    /// Also read Codex CLI rollouts in place, from ~/.codex/sessions.
    #[arg(long)]
    pub codex: bool,
    /// Also read Cline's tasks in place, from VS Code's global storage
    /// (~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks on Linux).
    #[arg(long)]
    pub cline: bool,
    /// Also read Roo Code's tasks in place, from VS Code's global storage
    /// (.../globalStorage/rooveterinaryinc.roo-cline/tasks).
    #[arg(long)]
    pub roo: bool,
    /// Also read OpenCode's sessions in place, from ~/.local/share/opencode/storage.
    #[arg(long)]
    pub opencode: bool,
    /// In a folder, follow symbolic links that lead out of it (by default only links to places
    /// inside the folder walked are followed).
    #[arg(long, short = 'L')]
    pub follow: bool,
    /// Tokenizer for every reported token count. The default, provider, counts each
    /// conversation in its provider's tokens (docs/calibration.md); o200k gives every count in
    /// o200k (exact only for OpenAI's current models).
    #[arg(long, value_enum, default_value_t = TokenizerArg::Provider)]
    pub tokenizer: TokenizerArg,
    /// Implementation of o200k and cl100k: tiktoken (the fastest) or tiktoken-rs (OpenAI's own
    /// core, the reference). Both give the same counts.
    #[arg(long, value_enum, default_value_t = CounterArg::Tiktoken)]
    pub counter: CounterArg,
    /// Read every input with this format instead of detecting it (see docs/formats.md for the list).
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<String>,
    /// Worker threads, 1 to 256 (default: all cores); one of them builds the tokenizer tables.
    /// Output is identical at any count.
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Keep exact token counts in this file between runs: counts found there are not counted
    /// again, and the run adds its new ones (the file is created when missing, replaced
    /// atomically). Output is the same bytes with or without it. Default: the file that
    /// CTXBUDGET_COUNT_CACHE names, if it is set and not empty.
    #[arg(long, value_name = "FILE")]
    pub count_cache: Option<PathBuf>,
}

/// Inputs and counting options shared by `replay` and the analyses.
#[derive(Debug, Args)]
pub struct InputArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub source: SourceArgs,
    /// What the policies decide with: each one's own anchor estimator, the report's tokenizer
    /// (real), or one counter for all.
    #[arg(long, value_enum, default_value_t = DecideArg::Anchor)]
    pub decide_with: DecideArg,
    /// Record-time transform applied to every tool output before the split, as
    /// name[:key=value,...] (repeatable, applied in order): truncate:codex,
    /// truncate:codex-policy, truncate:mini, spill:head=H,tail=T. `ctxbudget policies` lists them.
    #[arg(long = "transform", value_name = "SPEC")]
    pub transforms: Vec<String>,
    /// Re-split outputs that a tool already split into summary and content.
    #[arg(long)]
    pub resplit: bool,
    /// Tokens every request sends that the traces do not record (system prompt, tool schemas),
    /// added to every context as `unrecorded`, so triggers and costs see it. By default each
    /// conversation is calibrated against its recorded usage (overhead and provider-token ratio,
    /// docs/calibration.md); a number here replaces that, and 0 counts only what the log holds.
    /// At most 2^32.
    #[arg(long, value_name = "TOKENS", value_parser = crate::spec::parse_size)]
    pub overhead: Option<u64>,
    /// What every policy's replay does with the compactions the log itself recorded (the
    /// as-recorded baseline keeps them): simulated drops them and applies the trigger of the agent
    /// that wrote the log (Claude Code, Codex, opencode) to the policy's own context, recorded
    /// keeps them where they were (for other agents' logs, simulated does too), off drops them.
    /// docs/compaction.md.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = HarnessArg::Simulated)]
    pub harness_compaction: HarnessArg,
}

/// `--harness-compaction`: what replays do with the log's own compactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HarnessArg {
    /// Kept where they were recorded.
    Recorded,
    /// Dropped; the log's agent's trigger applied to each policy's context.
    Simulated,
    /// Dropped; the context restarts only where a policy compacts.
    Off,
}

impl From<HarnessArg> for crate::harness::HarnessCompaction {
    fn from(a: HarnessArg) -> Self {
        match a {
            HarnessArg::Recorded => Self::Recorded,
            HarnessArg::Simulated => Self::Simulated,
            HarnessArg::Off => Self::Off,
        }
    }
}

/// Where and how an analysis is written.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format (for analyses, csv gives the main table and json everything).
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
    /// Write the output here instead of stdout (`-` = stdout). Written atomically.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// Context window and prompt-cache pricing.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// Context window in tokens (`200k` is 200,000): requests whose context exceeds it are counted
    /// (`recommend` rules out pairs whose peak context exceeds it).
    #[arg(long, default_value_t = 200_000, value_parser = crate::spec::parse_size)]
    pub window: u64,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub pricing: PricingArgs,
}

/// Prompt-cache pricing.
#[derive(Debug, Args)]
pub struct PricingArgs {
    /// How long a cached prompt prefix lives after a request: a duration (5m, 5min, 300s, 1h,
    /// 1h30m), 0 or never. Requests without timestamps count as warm.
    #[arg(long, default_value = "5m")]
    pub cache_ttl: String,
    /// Prices: anthropic (write 1.25x, read 0.1x; write 2x with a --cache-ttl over 5m, the 1-hour
    /// cache), openai (write 1x, read 0.1x), none (no cache), all in input-token equivalents; or
    /// input=X,write=Y,read=Z[,output=W] in USD per million tokens; or a prices file (.toml/.json,
    /// LiteLLM's model_prices_and_context_window.json too) for cost_usd. cost_usd is always USD,
    /// at the prices of each request's model (docs/prices.md).
    #[arg(long, default_value = "anthropic")]
    pub prices: String,
}

/// Options of `sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    /// Thresholds in bytes: numbers and ranges A..B:xK (geometric) or A..B:+K, comma-separated;
    /// a number may take a suffix (`1KB` is 1,000 bytes, `64KiB` 65,536). Default: 0,64..65536:x2.
    #[arg(long)]
    pub thresholds: Option<String>,
    /// The policy replayed at every threshold.
    #[arg(long = "policy", value_name = "SPEC", default_value = "keep-turns:n=3")]
    pub policy: String,
    /// Recommend the largest threshold whose savings are within this many percent of the best
    /// (`5%`; a bare number is a percentage too, and one below 1, such as 0.05, gets a warning).
    #[arg(long, default_value = "5%")]
    pub tolerance: String,
    /// How many dominant tools (by output tokens) get their own recommendation.
    #[arg(long, default_value_t = 5)]
    pub tools: usize,
    /// Do not hold the inputs in memory: sweep each file's tools as it is read, under the
    /// recommendation of the files read so far, and read again the files that guess missed;
    /// automatic above 256 MB of input. Same output.
    #[arg(long)]
    pub low_memory: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub pricing: PricingArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// Options of `recommend`.
#[derive(Debug, Args)]
pub struct RecommendArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    /// Prune policy of the grid as name:key=value,... (repeatable). Default: none, the four
    /// defaults of `replay` and every other registered policy at its defaults.
    #[arg(long = "policy", value_name = "SPEC")]
    pub specs: Vec<String>,
    /// Policies of the grid named and configured in a TOML file (see docs/policies.md);
    /// combinable with --policy.
    #[arg(long = "policies", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Thresholds of the grid in bytes, as sweep takes them. Default: 0,64..65536:x2.
    #[arg(long)]
    pub thresholds: Option<String>,
    /// Rule out pairs whose share of pruned results used again later exceeds this (percent),
    /// where that share is known.
    #[arg(long, default_value = "25%")]
    pub max_reuse: String,
    /// How many dominant tools (by output tokens) get their own cheapest threshold.
    #[arg(long, default_value_t = 5)]
    pub tools: usize,
    /// Do not hold the inputs in memory: the per-tool step reads the files again; automatic above
    /// 256 MB of input. Same output.
    #[arg(long)]
    pub low_memory: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub cache: CacheArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// Options of `compare` and `cost`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub policies: PolicyArgs,
    /// SUMMARY_THRESHOLD in bytes.
    #[arg(long, default_value_t = 256, value_parser = crate::spec::parse_size_usize)]
    pub threshold: usize,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub cache: CacheArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// Options of `calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// Options of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    /// Directory to write index.html, the CSV and JSON files and charts/ into (created if missing).
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub policies: PolicyArgs,
    /// SUMMARY_THRESHOLD of the comparison, in bytes.
    #[arg(long, default_value_t = 256, value_parser = crate::spec::parse_size_usize)]
    pub threshold: usize,
    /// Thresholds of the sweep (default 0,64..65536:x2).
    #[arg(long)]
    pub thresholds: Option<String>,
    /// The policy of the sweep.
    #[arg(long, value_name = "SPEC", default_value = "keep-turns:n=3")]
    pub sweep_policy: String,
    /// Tolerance of the sweep's recommendation, in percent.
    #[arg(long, default_value = "5%")]
    pub tolerance: String,
    /// How many dominant tools get their own recommendation.
    #[arg(long, default_value_t = 5)]
    pub tools: usize,
    /// Budget timelines drawn: this many conversations, half with the largest peak context and half where a
    /// policy saves the most input tokens, or `all`.
    /// Every conversation's requests are in timeline.csv either way.
    #[arg(long, value_name = "N|all", default_value = "24")]
    pub timelines: String,
    /// Do not hold the inputs in memory: the sweep's per-tool rows are swept as each file is read,
    /// under the recommendation of the files read so far, and the files that guess missed are read
    /// again; automatic above 256 MB of input. Same report.
    #[arg(long)]
    pub low_memory: bool,
    /// Write into a non-empty --out folder that holds no previous report (its files of a report's
    /// names are replaced, its charts/timeline-* removed).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub cache: CacheArgs,
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
