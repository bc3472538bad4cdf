//! One resolved, plain `Config` per command, built once from the command line.
//!
//! Defaults are filled in and every user-given string (policy specs, the input format) is parsed
//! and checked here, so a mistake is a usage error before any file is read. This is the only
//! module that sees the clap types; everything after it takes these structs.

use std::path::{Path, PathBuf};

use crate::analysis::compare::CompareSettings;
use crate::analysis::cost::{CacheModel, Prices};
use crate::analysis::prices::{PriceTable, names_fallback};
use crate::analysis::sweep::{self, SweepSettings};
use crate::cli::{self, Cli, CounterArg, DecideArg, FormatArg, TokenizerArg};
use crate::export::{ExportFormat, Output, fit::Fit};
use crate::format::{self, Format};
use crate::input;
use crate::input::{AgentHome, agent_homes};
use crate::model::Tokens;
use crate::policy::PolicySpec;
use crate::tokens::{Backend, DecideWith, Meter, Tokenizer};
use crate::transform::{self, Transform};

/// The policies `replay` runs when none is given.
pub const DEFAULT_POLICIES: [&str; 4] =
    ["none", "keep-turns:n=3", "keep-results:n=5", "budget:max=100000,target=50000"];

/// A mistake in how the program was called (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// What to run.
pub enum Config {
    /// `replay`.
    Replay(ReplayConfig),
    /// `split`.
    Split(SplitConfig),
    /// `count`.
    Count(CountConfig),
    /// `policies`.
    Policies,
    /// `reconcile`.
    Reconcile(ReconcileConfig),
    /// `sweep`.
    Sweep(SweepConfig),
    /// `compare`.
    Compare(CompareConfig),
    /// `recommend`.
    Recommend(RecommendConfig),
    /// `cost` (the comparison, shown as cost tables).
    Cost(CompareConfig),
    /// `calibrate`.
    Calibrate(CalibrateConfig),
    /// `report`.
    Report(ReportConfig),
    /// `completions`: the script for this shell.
    Completions(clap_complete::Shell),
    /// `man`.
    Man,
}

/// Resolved `reconcile` options.
pub struct ReconcileConfig {
    /// The traces and how they are counted.
    pub source: SourceConfig,
    /// Report format.
    pub format: ExportFormat,
    /// Where the report goes.
    pub output: Output,
    /// List every request.
    pub per_request: bool,
    /// How many worst requests to list.
    pub worst: usize,
}

/// Where the traces come from and how their tokens are counted (resolved [`cli::SourceArgs`]).
pub struct SourceConfig {
    /// Files and directories to read (agent homes included).
    pub paths: Vec<PathBuf>,
    /// Tokenizer of the report.
    pub tokenizer: Tokenizer,
    /// Implementation of the exact tokenizers.
    pub counter: Backend,
    /// Forced input format.
    pub input_format: Option<&'static dyn Format>,
    /// Worker threads, if set.
    pub jobs: Option<usize>,
    /// File that keeps exact token counts between runs (`--count-cache`), if given.
    pub count_cache: Option<PathBuf>,
    /// Follow symbolic links out of the folders walked (`--follow`).
    pub follow: bool,
    /// No path was given: `paths` is the bundled sample traces, which the run says on stderr.
    pub bundled: bool,
}

/// Resolved inputs and counting options of `replay` and the analyses.
pub struct InputConfig {
    /// The traces and how they are counted.
    pub source: SourceConfig,
    /// What policies decide with.
    pub decide: DecideWith,
    /// Tokenizer of the decision counter ([`crate::tokens::Measure::decide`]); the cheap estimate
    /// when policies decide with their anchors or the report's tokenizer.
    pub decide_with: Tokenizer,
    /// Record-time transforms, applied in order to every raw tool output.
    pub transforms: Vec<Box<dyn Transform>>,
    /// Re-split pre-split outputs.
    pub resplit: bool,
    /// Unrecorded tokens every request sends (`--overhead`); `None`: calibrate each conversation.
    pub overhead: Option<Tokens>,
    /// What replays do with the log's own compactions (`--harness-compaction`).
    pub harness_compaction: crate::harness::HarnessCompaction,
}

/// The agents whose session folders `a` asks for, in [`AgentHome::ALL`]'s order.
fn agents_asked(a: &cli::SourceArgs) -> Vec<AgentHome> {
    let asked = [a.claude, a.codex, a.cline, a.roo, a.opencode];
    AgentHome::ALL.into_iter().zip(asked).filter_map(|(agent, on)| on.then_some(agent)).collect()
}

/// The paths given plus the agent folders asked for (`--claude`, `--codex`, `--cline`, `--roo`,
/// `--opencode`), read under `$HOME`.
pub fn with_agent_homes(mut paths: Vec<PathBuf>, agents: &[AgentHome]) -> Result<Vec<PathBuf>, UsageError> {
    if agents.is_empty() {
        return Ok(paths);
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or_else(|| {
        let flags: Vec<&str> = agents.iter().map(|a| a.flag()).collect();
        UsageError(format!(
            "{} read under $HOME, which is not set; pass the folders as paths",
            flags.join("/")
        ))
    })?;
    paths.extend(agent_homes(Path::new(&home), agents));
    Ok(paths)
}

/// Resolves `--input-format`.
fn input_format(name: Option<&str>) -> Result<Option<&'static dyn Format>, UsageError> {
    match name {
        None | Some("auto") => Ok(None),
        Some(name) => format::by_name(name).map(Some).ok_or_else(|| {
            UsageError(format!("unknown input format `{name}`; valid: auto, {}", format::names()))
        }),
    }
}

/// Resolved `sweep` options.
pub struct SweepConfig {
    /// Inputs.
    pub input: InputConfig,
    /// What to sweep.
    pub settings: SweepSettings,
    /// Read the inputs twice rather than hold them, whatever their size.
    pub low_memory: bool,
    /// Output format.
    pub format: ExportFormat,
    /// Where it goes.
    pub output: Output,
}

/// Resolved `compare` and `cost` options.
pub struct CompareConfig {
    /// Inputs.
    pub input: InputConfig,
    /// What to compare.
    pub settings: CompareSettings,
    /// Output format.
    pub format: ExportFormat,
    /// Where it goes.
    pub output: Output,
}

/// Resolved `recommend` options.
pub struct RecommendConfig {
    /// Inputs.
    pub input: InputConfig,
    /// What to evaluate.
    pub settings: crate::analysis::recommend::RecommendSettings,
    /// Read the inputs twice rather than hold them, whatever their size.
    pub low_memory: bool,
    /// Output format.
    pub format: ExportFormat,
    /// Where it goes.
    pub output: Output,
}

/// Resolved `calibrate` options.
pub struct CalibrateConfig {
    /// Inputs.
    pub input: InputConfig,
    /// Output format.
    pub format: ExportFormat,
    /// Where it goes.
    pub output: Output,
}

/// Resolved `report` options.
pub struct ReportConfig {
    /// Inputs.
    pub input: InputConfig,
    /// Output directory.
    pub out: PathBuf,
    /// The sweep.
    pub sweep: SweepSettings,
    /// The comparison.
    pub compare: CompareSettings,
    /// The recommendation's grid (no per-tool step: the sweep's per-tool rows are the report's).
    pub recommend: Box<crate::analysis::recommend::RecommendSettings>,
    /// How many conversations get a timeline chart (`None`: all).
    pub timelines: Option<usize>,
    /// Read the inputs twice rather than hold them, whatever their size.
    pub low_memory: bool,
    /// Write into a non-empty folder that holds no previous report.
    pub force: bool,
}

fn usage(e: impl std::fmt::Display) -> UsageError {
    UsageError(e.to_string())
}

impl SourceConfig {
    /// Resolves the shared source options; with no path and no agent folder, the bundled traces/
    /// when `traces_by_default` is set, else a usage error naming `command`.
    pub fn from_args(
        a: cli::SourceArgs,
        traces_by_default: bool,
        command: &str,
    ) -> Result<SourceConfig, UsageError> {
        let agents = agents_asked(&a);
        let bundled = a.paths.is_empty() && agents.is_empty();
        let paths = if bundled {
            if !traces_by_default {
                return Err(usage(format!(
                    "{command} needs trace files or directories, or --claude/--codex/--cline/--roo/--opencode"
                )));
            }
            vec![default_traces().ok_or_else(|| {
                usage("no input given and no traces/ directory here; pass trace files or directories")
            })?]
        } else {
            with_agent_homes(a.paths, &agents)?
        };
        if let Some(jobs) = a.jobs.filter(|j| !(1..=MAX_JOBS).contains(j)) {
            return Err(usage(format!("--jobs must be between 1 and {MAX_JOBS}, not {jobs}")));
        }
        Ok(SourceConfig {
            paths,
            tokenizer: a.tokenizer.into(),
            counter: Backend::from(a.counter).built().map_err(usage)?,
            input_format: input_format(a.input_format.as_deref())?,
            jobs: a.jobs,
            follow: a.follow,
            bundled,
            count_cache: a
                .count_cache
                .or_else(|| std::env::var_os(COUNT_CACHE_VAR).filter(|v| !v.is_empty()).map(PathBuf::from)),
        })
    }
}

impl InputConfig {
    /// Resolves the input options of `replay` and the analyses: the bundled traces/ when no path
    /// and no agent folder is given.
    pub fn from_args(a: cli::InputArgs) -> Result<InputConfig, UsageError> {
        let source = SourceConfig::from_args(a.source, true, "")?;
        let (decide, decide_with) = decide(a.decide_with);
        if let Some(overhead) = a.overhead.filter(|&o| o > crate::model::MAX_RECORDED_TOKENS) {
            return Err(usage(format!(
                "--overhead must be at most {} tokens (a prompt no provider accepts), not {}",
                crate::model::MAX_RECORDED_TOKENS,
                overhead
            )));
        }
        Ok(InputConfig {
            source,
            decide,
            decide_with,
            transforms: transforms(&a.transforms)?,
            resplit: a.resplit,
            overhead: a.overhead,
            harness_compaction: a.harness_compaction.into(),
        })
    }

    /// The job of these options: the fixed overhead, or calibrated (the default).
    pub fn job(&self) -> crate::pipeline::Job<'_> {
        crate::pipeline::Job {
            resplit: self.resplit,
            transforms: &self.transforms,
            overhead: self.overhead.unwrap_or(0),
            calibrate: self.overhead.is_none(),
            input_format: self.source.input_format,
            harness_compaction: self.harness_compaction,
            ..crate::pipeline::Job::default()
        }
    }

    /// The meter these options count with.
    pub fn meter(&self) -> Meter {
        Meter::with_backend(self.source.tokenizer, self.decide_with, self.source.counter)
            .deciding(self.decide)
    }
}

mod hints;
pub mod settings;

pub use hints::{notices, tolerance_notice};
use hints::{policies_file_hint, policy_error};

/// Parses a tolerance in percent (`5%`, `2.5%`, or a bare `5`, also in percent), as a fraction.
/// A bare number below 1 (`0.05`) may have been meant as a fraction: [`tolerance_notice`] warns.
pub fn tolerance(text: &str) -> Result<f64, UsageError> {
    let t = text.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=100.0).contains(&v) => Ok(v / 100.0),
        _ => Err(usage(format!("--tolerance `{t}`: expected a percentage from 0 to 100, e.g. 5%"))),
    }
}

fn sweep_settings(
    thresholds: Option<&str>,
    policy: &str,
    tolerance_text: &str,
    tools: usize,
    pricing: &cli::PricingArgs,
) -> Result<SweepSettings, UsageError> {
    let thresholds = sweep::parse_thresholds(thresholds.unwrap_or(sweep::DEFAULT_THRESHOLDS))
        .map_err(|e| usage(format!("--thresholds: {e}")))?;
    Ok(SweepSettings {
        thresholds,
        policy: PolicySpec::parse(policy).map_err(|e| policy_error(policy, e))?,
        tolerance: tolerance(tolerance_text)?,
        top_tools: tools,
        cache: cache_model(pricing)?,
    })
}

/// `--prices` and `--cache-ttl`: the prices for that cache lifetime.
fn cache_model(pricing: &cli::PricingArgs) -> Result<CacheModel, UsageError> {
    let prices = prices(&pricing.prices)?;
    let ttl_ms =
        crate::spec::parse_ttl_ms(&pricing.cache_ttl).map_err(|e| usage(format!("--cache-ttl: {e}")))?;
    Ok(CacheModel { prices: prices.for_ttl(ttl_ms), ttl_ms })
}

fn compare_settings(
    policies_given: &cli::PolicyArgs,
    threshold: usize,
    cache: &cli::CacheArgs,
) -> Result<CompareSettings, UsageError> {
    Ok(CompareSettings {
        policies: policies_with_file(&policies_given.specs, policies_given.file.as_deref())?,
        threshold,
        window: cache.window,
        cache: cache_model(&cache.pricing)?,
    })
}

/// `--prices`: a preset, explicit USD prices, or a prices file (`.toml` or `.json`, this
/// project's table or LiteLLM's) whose rows price `cost_usd` over the built-in table's, with the
/// `anthropic` preset for the relative cost.
fn prices(spec: &str) -> Result<Prices, UsageError> {
    let path = Path::new(spec.trim());
    let is_file =
        [".toml", ".json"].iter().any(|e| spec.trim().to_ascii_lowercase().ends_with(e)) || path.is_file();
    if !is_file {
        return Prices::parse(spec).map_err(|e| usage(format!("--prices: {e}")));
    }
    let origin = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| usage(format!("--prices: cannot read {origin}: {e}")))?;
    let table = PriceTable::from_text(&text, &origin).map_err(|e| usage(format!("--prices: {e}")))?;
    Ok(Prices::anthropic().with_table(table.over_built_in(names_fallback(&text))))
}

impl Config {
    /// Resolves the analysis subcommands; gives any other command back.
    fn analysis_from_cli(c: cli::Command, fit: Fit) -> Result<Result<Config, cli::Command>, UsageError> {
        Ok(Ok(match c {
            cli::Command::Sweep(a) => Config::Sweep(SweepConfig {
                settings: sweep_settings(
                    a.thresholds.as_deref(),
                    &a.policy,
                    &a.tolerance,
                    a.tools,
                    &a.pricing,
                )?,
                low_memory: a.low_memory,
                input: InputConfig::from_args(a.input)?,
                format: export_format(a.output.format, fit),
                output: Output::from_arg(a.output.output.as_deref()),
            }),
            cli::Command::Compare(a) => Config::Compare(compare_config(a, fit)?),
            cli::Command::Recommend(a) => Config::Recommend(recommend_config(a, fit)?),
            cli::Command::Cost(a) => Config::Cost(compare_config(a, fit)?),
            cli::Command::Calibrate(a) => Config::Calibrate(CalibrateConfig {
                input: InputConfig::from_args(a.input)?,
                format: export_format(a.output.format, fit),
                output: Output::from_arg(a.output.output.as_deref()),
            }),
            cli::Command::Report(a) => Config::Report(ReportConfig {
                recommend: Box::new(report_recommend(&a)?),
                sweep: sweep_settings(
                    a.thresholds.as_deref(),
                    &a.sweep_policy,
                    &a.tolerance,
                    a.tools,
                    &a.cache.pricing,
                )?,
                compare: compare_settings(&a.policies, a.threshold, &a.cache)?,
                timelines: timelines(&a.timelines)?,
                low_memory: a.low_memory,
                force: a.force,
                input: InputConfig::from_args(a.input)?,
                out: a.out,
            }),
            other => return Ok(Err(other)),
        }))
    }
}

/// `--timelines`: a count, or `all`.
fn timelines(arg: &str) -> Result<Option<usize>, UsageError> {
    match arg.trim() {
        "all" => Ok(None),
        n => {
            n.parse().map(Some).map_err(|_| usage(format!("--timelines `{arg}`: expected a number or `all`")))
        }
    }
}

fn compare_config(a: cli::CompareArgs, fit: Fit) -> Result<CompareConfig, UsageError> {
    Ok(CompareConfig {
        settings: compare_settings(&a.policies, a.threshold, &a.cache)?,
        input: InputConfig::from_args(a.input)?,
        format: export_format(a.output.format, fit),
        output: Output::from_arg(a.output.output.as_deref()),
    })
}

/// The policies `recommend` evaluates when none is given: the defaults of `replay`, then every
/// other registered policy at its defaults, in registry order.
pub fn recommend_policies() -> Vec<PolicySpec> {
    let mut names: Vec<&str> = DEFAULT_POLICIES.to_vec();
    for kind in crate::policy::registry() {
        if !names.iter().any(|n| n.split(':').next() == Some(kind.name)) {
            names.push(kind.name);
        }
    }
    names.iter().filter_map(|n| PolicySpec::parse(n).ok()).collect()
}

/// The report's recommendation: the grid of `recommend` (its policies, or the ones given), the
/// sweep's thresholds and the comparison's prices and window.
fn report_recommend(
    a: &cli::ReportArgs,
) -> Result<crate::analysis::recommend::RecommendSettings, UsageError> {
    let compare = compare_settings(&a.policies, a.threshold, &a.cache)?;
    let given = !a.policies.specs.is_empty() || a.policies.file.is_some();
    Ok(crate::analysis::recommend::RecommendSettings {
        policies: if given {
            crate::analysis::compare::with_baseline(&compare.policies)
        } else {
            recommend_policies()
        },
        thresholds: sweep::parse_thresholds(a.thresholds.as_deref().unwrap_or(sweep::DEFAULT_THRESHOLDS))
            .map_err(|e| usage(format!("--thresholds: {e}")))?,
        cache: compare.cache,
        window: compare.window,
        max_reuse: Some(crate::analysis::recommend::DEFAULT_MAX_REUSE),
        top_tools: 0,
    })
}

fn recommend_config(a: cli::RecommendArgs, fit: Fit) -> Result<RecommendConfig, UsageError> {
    let given = cli::PolicyArgs { specs: a.specs, file: a.file };
    let policies = if given.specs.is_empty() && given.file.is_none() {
        recommend_policies()
    } else {
        crate::analysis::compare::with_baseline(&policies_with_file(&given.specs, given.file.as_deref())?)
    };
    let cache = compare_settings(&cli::PolicyArgs { specs: Vec::new(), file: None }, 0, &a.cache)?;
    let max_reuse = tolerance(&a.max_reuse).map_err(|_| {
        usage(format!("--max-reuse `{}`: expected a percentage from 0 to 100, e.g. 25%", a.max_reuse.trim()))
    })?;
    Ok(RecommendConfig {
        settings: crate::analysis::recommend::RecommendSettings {
            policies,
            thresholds: sweep::parse_thresholds(a.thresholds.as_deref().unwrap_or(sweep::DEFAULT_THRESHOLDS))
                .map_err(|e| usage(format!("--thresholds: {e}")))?,
            cache: cache.cache,
            window: cache.window,
            max_reuse: Some(max_reuse),
            top_tools: a.tools,
        },
        low_memory: a.low_memory,
        input: InputConfig::from_args(a.input)?,
        format: export_format(a.output.format, fit),
        output: Output::from_arg(a.output.output.as_deref()),
    })
}

/// Resolved `replay` options.
pub struct ReplayConfig {
    /// Inputs and counting options.
    pub input: InputConfig,
    /// SUMMARY_THRESHOLD in bytes.
    pub threshold: usize,
    /// Policies to replay.
    pub policies: Vec<PolicySpec>,
    /// Report format.
    pub format: ExportFormat,
    /// Where the report goes.
    pub output: Output,
    /// Per-request timeline instead of per-conversation summaries.
    pub per_request: bool,
    /// Read the inputs twice rather than hold a per-request table's rows.
    pub low_memory: bool,
}

/// Resolved `split` options.
pub struct SplitConfig {
    /// Input file, or stdin.
    pub file: Option<PathBuf>,
    /// SUMMARY_THRESHOLD in bytes.
    pub threshold: usize,
    /// JSON output.
    pub json: bool,
}

/// Resolved `count` options.
pub struct CountConfig {
    /// Input file, or stdin.
    pub file: Option<PathBuf>,
    /// Tokenizers to count with, besides the estimate.
    pub tokenizers: Vec<Tokenizer>,
    /// Implementation of the exact tokenizers.
    pub counter: Backend,
}

impl From<TokenizerArg> for Tokenizer {
    fn from(t: TokenizerArg) -> Tokenizer {
        match t {
            TokenizerArg::Estimate => Tokenizer::Estimate,
            TokenizerArg::O200k => Tokenizer::O200k,
            TokenizerArg::Cl100k => Tokenizer::Cl100k,
            TokenizerArg::Provider => Tokenizer::Provider,
        }
    }
}

impl From<CounterArg> for Backend {
    fn from(c: CounterArg) -> Backend {
        match c {
            CounterArg::Tiktoken => Backend::Tiktoken,
            CounterArg::TiktokenRs => Backend::TiktokenRs,
        }
    }
}

/// `--format`, a terminal table drawn as `fit` says.
fn export_format(f: FormatArg, fit: Fit) -> ExportFormat {
    match f {
        FormatArg::Table => ExportFormat::Table(fit),
        FormatArg::Csv => ExportFormat::Csv,
        FormatArg::Json => ExportFormat::Json,
        FormatArg::Markdown => ExportFormat::Markdown,
    }
}

/// The environment variable that names the `--count-cache` file when the flag is not given (an
/// empty value is the same as none, so that a script can switch it off).
pub const COUNT_CACHE_VAR: &str = "CTXBUDGET_COUNT_CACHE";

/// The most worker threads `-j` may ask for (decision): more cannot help on any machine this tool
/// is meant for, and starting the pool's threads grows faster than linearly (this 2-core machine,
/// `replay traces --tokenizer estimate`: 0.07 s at `-j 256`, 1.8 s at 1,024, 25 s at 3,000).
pub const MAX_JOBS: usize = 256;

/// The bundled traces: `./traces` when the working directory has one (a checkout, or any folder
/// with a `traces/` of its own: it is read whatever it holds), else the `traces/` of the checkout
/// this binary was built from (a path fixed at build time; `None` once that checkout is gone).
pub fn default_traces() -> Option<PathBuf> {
    let here = Path::new("traces");
    if here.is_dir() {
        return Some(here.to_owned());
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    built.is_dir().then_some(built)
}

/// Parses policy specs, or the defaults when none is given.
pub fn policies(specs: &[String]) -> Result<Vec<PolicySpec>, UsageError> {
    let defaults: Vec<String> = DEFAULT_POLICIES.iter().map(|s| s.to_string()).collect();
    let given = parsed(if specs.is_empty() { &defaults } else { specs })?;
    distinct_names(given.into_iter().map(|p| (p, Given::Flag)).collect())
}

/// `specs` parsed, in order.
fn parsed(specs: &[String]) -> Result<Vec<PolicySpec>, UsageError> {
    specs.iter().map(|s| PolicySpec::parse(s).map_err(|e| policy_error(s, e))).collect()
}

/// Where a policy was given, so that a mistake found once every policy is known (two of one name)
/// names it as the file's own checks do: the file and the table.
#[derive(Debug, Clone, Copy)]
enum Given<'a> {
    /// A `--policy` spec (or the default policies).
    Flag,
    /// The `[[policy]]` table number `.1` (from 1) of the `--policies` file `.0`.
    File(&'a Path, usize),
}

/// `all`, if every policy has a name of its own and `none` names only the `none` policy: a name
/// labels every row, total and chart of its policy, and `none` is the baseline every saving and
/// cost change is measured against, so a second policy of the same name would be added into the
/// first one's figures, and a pruning policy named `none` would stand in for the baseline. A
/// policy of a file is named by the file and its table (`FILE: policy #N`), as the file's other
/// mistakes are.
fn distinct_names(all: Vec<(PolicySpec, Given<'_>)>) -> Result<Vec<PolicySpec>, UsageError> {
    let mut seen: std::collections::BTreeMap<&str, Given<'_>> = std::collections::BTreeMap::new();
    for (p, given) in &all {
        let (name, kind) = (p.as_str(), p.kind().name);
        if name == "none" && kind != "none" {
            return Err(usage(match given {
                Given::File(path, number) => format!(
                    "{}: policy #{number} (`{kind}`): `name` is `none`, the name of the baseline every saving \
                     is measured against; give this one another name",
                    path.display()
                ),
                Given::Flag => format!(
                    "policy `none` is a `{kind}` policy: `none` is the name of the baseline every saving is \
                     measured against; give this one another name"
                ),
            }));
        }
        let first = match seen.entry(name) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(*given);
                continue;
            }
            std::collections::btree_map::Entry::Occupied(o) => *o.get(),
        };
        let rows = "each policy's name labels its rows, so names must differ";
        return Err(usage(match (given, first) {
            (Given::File(path, number), first) => {
                let of = match first {
                    Given::Flag => "a policy given by --policy".to_owned(),
                    Given::File(_, earlier) => format!("policy #{earlier}"),
                };
                format!(
                    "{}: policy #{number} (`{kind}`): `{name}` is already the name of {of}: {rows} (give this \
                     one a `name = \"...\"`)",
                    path.display()
                )
            }
            (Given::Flag, _) => format!(
                "policy `{name}` is given twice by --policy: {rows} (a policy file can name one with \
                 `name = \"...\"`)"
            ),
        }));
    }
    Ok(all.into_iter().map(|(p, _)| p).collect())
}

/// The `--policy` specs followed by the policies of a `--policies` file, or the defaults when
/// neither gives any.
pub fn policies_with_file(specs: &[String], file: Option<&Path>) -> Result<Vec<PolicySpec>, UsageError> {
    let Some(file) = file else { return policies(specs) };
    let from_file =
        input::read_policies(file).map_err(|e| UsageError(format!("{e}{}", policies_file_hint(file))))?;
    let mut all: Vec<(PolicySpec, Given<'_>)> =
        parsed(specs)?.into_iter().map(|p| (p, Given::Flag)).collect();
    all.extend(from_file.into_iter().enumerate().map(|(i, p)| (p, Given::File(file, i + 1))));
    if all.is_empty() {
        return policies(&[]);
    }
    distinct_names(all)
}

/// Parses transform specs.
pub fn transforms(specs: &[String]) -> Result<Vec<Box<dyn Transform>>, UsageError> {
    specs.iter().map(|s| transform::parse(s).map_err(|e| UsageError(e.to_string()))).collect()
}

/// The decision mode and the tokenizer of the decision counter for `--decide-with`.
pub fn decide(arg: DecideArg) -> (DecideWith, Tokenizer) {
    match arg {
        DecideArg::Anchor => (DecideWith::Anchor, Tokenizer::Estimate),
        DecideArg::Real => (DecideWith::Real, Tokenizer::Estimate),
        DecideArg::Estimate => (DecideWith::Tokenizer(Tokenizer::Estimate), Tokenizer::Estimate),
        DecideArg::O200k => (DecideWith::Tokenizer(Tokenizer::O200k), Tokenizer::O200k),
        DecideArg::Cl100k => (DecideWith::Tokenizer(Tokenizer::Cl100k), Tokenizer::Cl100k),
    }
}

impl Config {
    /// Resolves the command line.
    pub fn from_cli(cli: Cli) -> Result<Config, UsageError> {
        // Terminal tables: `--wide`, or fitted to `COLUMNS`, read here (nothing below reads it).
        let fit = Fit::new(cli.wide, std::env::var("COLUMNS").ok().as_deref());
        let command = match Config::analysis_from_cli(cli.command, fit)? {
            Ok(config) => return Ok(config),
            Err(other) => other,
        };
        Ok(match command {
            cli::Command::Replay(a) => Config::Replay(ReplayConfig {
                threshold: a.threshold,
                policies: policies_with_file(&a.policies.specs, a.policies.file.as_deref())?,
                format: export_format(a.output.format, fit),
                output: Output::from_arg(a.output.output.as_deref()),
                per_request: a.per_request,
                low_memory: a.low_memory,
                input: InputConfig::from_args(a.input)?,
            }),
            cli::Command::Split(a) => {
                Config::Split(SplitConfig { file: a.file, threshold: a.threshold, json: a.json })
            }
            cli::Command::Count(a) => Config::Count(CountConfig {
                file: a.file,
                tokenizers: match a.tokenizer {
                    Some(TokenizerArg::Provider) => {
                        return Err(usage(
                            "count reads one text and no log: --tokenizer provider chooses per conversation; use o200k or cl100k",
                        ));
                    }
                    Some(t) => vec![t.into()],
                    None => vec![Tokenizer::O200k, Tokenizer::Cl100k],
                },
                counter: Backend::from(a.counter).built().map_err(usage)?,
            }),
            cli::Command::Policies => Config::Policies,
            cli::Command::Completions(a) => Config::Completions(a.shell),
            cli::Command::Man => Config::Man,
            cli::Command::Reconcile(a) => Config::Reconcile(ReconcileConfig {
                source: SourceConfig::from_args(a.source, false, "reconcile")?,
                format: export_format(a.format, fit),
                output: Output::from_arg(a.output.as_deref()),
                per_request: a.per_request,
                worst: a.worst,
            }),
            analysis => unreachable!("resolved by analysis_from_cli: {analysis:?}"),
        })
    }
}

#[cfg(test)]
mod tests;
