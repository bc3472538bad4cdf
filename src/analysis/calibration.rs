//! Estimate versus real: how far token estimates (the seed's `len/4`, and any estimator plugged in
//! through [`Estimator`]) are from real tokenizer counts, per tool name and per content kind.
//!
//! Every tool output is one sample: its real tokens (the report's tokenizer), its bytes and the
//! estimate. Per group: the aggregate error (`Σ estimate / Σ real − 1`; negative = the estimate
//! under-counts), the **bytes per token** that would make a `bytes / k` estimate right for the group
//! (`Σ bytes / Σ real`), the per-output mean absolute error, and the mean absolute error left once the
//! estimate is scaled by the group's own factor (`Σ real / Σ estimate`): the spread calibration
//! cannot remove. `../shared/design/TOKENIZERS.md` §4 has the reference numbers per kind (code
//! 1.0–1.2, logs 1.74, prose 0.86 real tokens per len/4 token, o200k).
//!
//! Content kinds come from a small, documented classifier ([`classify`]), first match wins:
//! 1. **non-ASCII**: at least 10% of the characters are not ASCII;
//! 2. **JSON**: the trimmed text starts with `{` or `[`, ends with the matching bracket and parses;
//! 3. **code** or **logs**: by line shape over the first 400 non-blank lines (a `cat -n` or Claude
//!    Code `Read` line-number prefix is ignored). A code line ends with `{ } ; ( ) , :` or `=>`, or
//!    starts with a common keyword or comment marker (`fn`, `def`, `import`, `//`, `#`, …). A log line
//!    starts with a date or time, carries a level (`INFO`, `WARN`, `ERROR`, `DEBUG`, `error:`,
//!    `warning:`), is build or test status (`Compiling`, `Finished`, `PASS`, `ok`, `FAILED`, …), a
//!    file listing (`drwx`, `-rw`, `total N`) or a `path:line:` hit. Whichever of the two covers more
//!    lines wins if it covers at least 30% of them (code on a tie);
//! 4. **prose**: everything else.
//!
//! Estimators: the seed's `len/4` and the anchors' own ([`AnchorEstimator`]: opencode, LangChain,
//! Gemini CLI, computed exactly as the policies compute them); any other plugs in by implementing
//! [`Estimator`] and passing it to [`calibrate`]. Pure: no I/O.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::measure::{MeasuredConversation, MeasuredItem};
use crate::model::{Encoding, Tokens};
use crate::tokens::TextSize;

/// A token estimator of one tool output.
pub trait Estimator: Send + Sync {
    /// Name shown in reports.
    fn name(&self) -> String;
    /// Estimated tokens of the output `text` of tool `tool`, whose measure is `measure`.
    fn estimate(&self, tool: &str, text: &str, measure: &TextSize) -> f64;
}

/// The seed's estimate: UTF-8 bytes / 4, rounded down per text.
#[derive(Debug, Clone, Copy, Default)]
pub struct LenOver4;

impl Estimator for LenOver4 {
    fn name(&self) -> String {
        "len/4".into()
    }
    fn estimate(&self, _tool: &str, _text: &str, measure: &TextSize) -> f64 {
        measure.estimate as f64
    }
}

/// The estimators the anchor policies decide with by default (`--decide-with anchor`), applied to
/// one tool output as each anchor counts it (see [`crate::policy::estimator`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorEstimator {
    /// opencode: `round(length / 4)` on the UTF-16 length.
    OpenCode,
    /// LangChain `count_tokens_approximately`: `ceil(chars / 4)` plus 3 for the tool message.
    LangChain,
    /// Gemini CLI: a function response counts `(name + JSON.stringify({output}).length) / 4`.
    Gemini,
}

impl Estimator for AnchorEstimator {
    fn name(&self) -> String {
        match self {
            AnchorEstimator::OpenCode => "opencode".into(),
            AnchorEstimator::LangChain => "langchain".into(),
            AnchorEstimator::Gemini => "gemini".into(),
        }
    }

    fn estimate(&self, tool: &str, text: &str, measure: &TextSize) -> f64 {
        use crate::policy::estimator::Estimator as Anchor;
        match self {
            AnchorEstimator::OpenCode => Anchor::OpenCode.tokens(measure) as f64,
            AnchorEstimator::LangChain => Anchor::LangChain.tokens(measure) as f64 + 3.0,
            AnchorEstimator::Gemini => crate::policy::gemini::response_tokens(tool, text) as f64,
        }
    }
}

/// The seed's `len/4` and the anchors' own estimators, in report order.
pub fn default_estimators() -> [&'static dyn Estimator; 4] {
    [&LenOver4, &AnchorEstimator::OpenCode, &AnchorEstimator::LangChain, &AnchorEstimator::Gemini]
}

/// What a text mostly is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContentKind {
    /// Source code.
    Code,
    /// JSON.
    Json,
    /// Prose (and anything unclassified).
    Prose,
    /// Machine output: logs, build and test output, listings, search hits.
    Logs,
    /// Text with at least 10% non-ASCII characters.
    NonAscii,
}

impl ContentKind {
    /// Every kind, in report order.
    pub const ALL: [ContentKind; 5] =
        [ContentKind::Code, ContentKind::Json, ContentKind::Prose, ContentKind::Logs, ContentKind::NonAscii];

    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ContentKind::Code => "code",
            ContentKind::Json => "json",
            ContentKind::Prose => "prose",
            ContentKind::Logs => "logs",
            ContentKind::NonAscii => "non-ascii",
        }
    }
}

const CODE_STARTS: [&str; 28] = [
    "fn ",
    "pub ",
    "use ",
    "let ",
    "const ",
    "static ",
    "impl ",
    "struct ",
    "enum ",
    "mod ",
    "def ",
    "class ",
    "import ",
    "from ",
    "return ",
    "if ",
    "for ",
    "while ",
    "function ",
    "var ",
    "export ",
    "async ",
    "#include",
    "//",
    "/*",
    "* ",
    "#",
    "@",
];
const LOG_MARKERS: [&str; 10] =
    ["INFO", "WARN", "ERROR", "DEBUG", "TRACE", "error:", "warning:", "error[", "FAILED", "PASSED"];
const LOG_STARTS: [&str; 16] = [
    "Compiling ",
    "Finished ",
    "Running ",
    "Downloading ",
    "Downloaded ",
    "Installing ",
    "Updating ",
    "test ",
    "PASS ",
    "FAIL ",
    "ok ",
    "drwx",
    "-rw",
    "lrwx",
    "total ",
    "npm ",
];

/// Strips a `cat -n` / Claude Code `Read` line-number prefix (`   12→`, `12\t`).
fn strip_line_number(line: &str) -> &str {
    let t = line.trim_start();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return line;
    }
    let rest = &t[digits..];
    rest.strip_prefix('→').or_else(|| rest.strip_prefix('\t')).unwrap_or(line)
}

fn is_code_line(line: &str) -> bool {
    let t = line.trim();
    let ends = ['{', '}', ';', '(', ')', ',', ':'];
    t.ends_with(ends) || t.ends_with("=>") || CODE_STARTS.iter().any(|k| t.starts_with(k))
}

fn is_log_line(line: &str) -> bool {
    let t = line.trim();
    let b = t.as_bytes();
    let dated = b.len() >= 8
        && b[0].is_ascii_digit()
        && b[1].is_ascii_digit()
        && ((b.len() > 4 && b[2].is_ascii_digit() && b[3].is_ascii_digit() && b[4] == b'-') || b[2] == b':');
    // `[12:00:01]`, `[2025-01-01 …]`: a bracket, at least two digits, then a time or date separator.
    let bracketed_time = t.strip_prefix('[').is_some_and(|inner| {
        let digits = inner.len() - inner.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits >= 2 && inner[digits..].starts_with([':', '-', '/', '.'])
    });
    let path_hit = t.split_once(':').is_some_and(|(path, rest)| {
        path.contains('/') && !path.contains(' ') && rest.starts_with(|c: char| c.is_ascii_digit())
    });
    dated
        || bracketed_time
        || path_hit
        || LOG_STARTS.iter().any(|k| t.starts_with(k))
        || LOG_MARKERS.iter().any(|m| t.contains(m))
}

/// The content kind of `text` (see the module documentation for the rules).
pub fn classify(text: &str) -> ContentKind {
    let crate::tokens::CharCounts { chars, non_ascii, .. } = crate::tokens::CharCounts::of(text);
    if chars > 0 && non_ascii * 10 >= chars {
        return ContentKind::NonAscii;
    }
    let t = text.trim();
    let bracketed = (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'));
    if bracketed && serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok() {
        return ContentKind::Json;
    }
    let (mut lines, mut code, mut logs) = (0usize, 0usize, 0usize);
    for line in t.lines().map(strip_line_number).filter(|l| !l.trim().is_empty()).take(400) {
        lines += 1;
        code += usize::from(is_code_line(line));
        logs += usize::from(is_log_line(line));
    }
    let enough = |n: usize| lines > 0 && n * 10 >= lines * 3;
    match (enough(code), enough(logs)) {
        (true, _) if code >= logs => ContentKind::Code,
        (_, true) => ContentKind::Logs,
        (true, false) => ContentKind::Code,
        (false, false) => ContentKind::Prose,
    }
}

/// One group of outputs under one estimator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationRow {
    /// Estimator name.
    pub estimator: String,
    /// `all`, `tool` or `kind`.
    pub group: String,
    /// The tool name or content kind (`all` for the whole set).
    pub key: String,
    /// Tool outputs in the group.
    pub results: usize,
    /// Their UTF-8 bytes.
    pub bytes: u64,
    /// Their real tokens.
    pub tokens: Tokens,
    /// Their estimated tokens.
    pub estimate: f64,
    /// `estimate / tokens − 1` (negative: the estimate under-counts).
    pub error: f64,
    /// `bytes / tokens`: the divisor that would make a bytes-based estimate right for the group.
    pub bytes_per_token: f64,
    /// Mean over outputs of `|estimate − real| / real`.
    pub mean_abs_error: f64,
    /// The same after scaling each estimate by `tokens / estimate` of the group (what is left once
    /// the group is calibrated).
    pub calibrated_mean_abs_error: f64,
}

/// The calibration of every estimator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// The tokenizer of the real counts.
    pub tokenizer: String,
    /// Whether some conversation's counts are its tokenizer counts times the provider ratio its
    /// calibration fitted (docs/calibration.md): then "real" means the provider's tokens as the
    /// replay estimates them, not the tokenizer's own count.
    #[serde(default)]
    pub provider_scaled: bool,
    /// Per estimator: the whole set, then tools (most tokens first), then kinds.
    pub rows: Vec<CalibrationRow>,
}

impl Calibration {
    /// Whether the "real" counts are the len/4 estimate itself (`--tokenizer estimate`), so that
    /// every row sets an estimator against len/4, not against real tokens.
    pub fn is_against_estimate(&self) -> bool {
        self.tokenizer == crate::tokens::Tokenizer::Estimate.name()
    }

    /// What the "real" counts are, for titles and sentences: `o200k tokens`, or `provider tokens`
    /// when some conversation's counts were scaled by its fitted ratio.
    pub fn reference(&self) -> String {
        if self.provider_scaled { "provider tokens".to_owned() } else { format!("{} tokens", self.tokenizer) }
    }

    /// When the counts are provider tokens: one sentence saying how they were formed and how to
    /// get the tokenizer's own counts instead.
    pub fn scaling_note(&self) -> Option<String> {
        self.provider_scaled.then(|| {
            // Under `provider` each conversation is counted with o200k, or cl100k for gpt-4 and
            // gpt-3.5 (`calibrate::counted_with`), and scaled per content kind where fitted.
            let t = if self.tokenizer == crate::tokens::Tokenizer::Provider.name() {
                "o200k (cl100k for gpt-4 and gpt-3.5)"
            } else {
                self.tokenizer.as_str()
            };
            format!(
                "Provider tokens are each conversation's {t} tokens times the ratio its calibration \
                 fitted (docs/calibration.md); `--overhead 0` sets the estimators against {t} tokens alone."
            )
        })
    }
}

/// One tool output as the calibration sees it: its tool, kind, real measure and every estimator's
/// estimate (no text), so a corpus's samples are small beside the corpus.
#[derive(Debug, Clone)]
pub struct Sample {
    tool: String,
    kind: ContentKind,
    measure: TextSize,
    /// Whether `measure.tokens` was scaled by the conversation's fitted provider ratio.
    scaled: bool,
    /// The encoding the conversation was counted with, where `--tokenizer provider` chose one.
    counted_with: Option<Encoding>,
    /// Each estimator's estimate, in the order of the estimators.
    estimates: Vec<f64>,
}

/// Every tool output with a real count, in conversation and item order, classified and estimated
/// by every estimator once (in parallel). Samples of several calls, concatenated in input order,
/// calibrate as the samples of all their conversations at once ([`calibrate_samples`]).
pub fn samples(conversations: &[&MeasuredConversation], estimators: &[&dyn Estimator]) -> Vec<Sample> {
    conversations
        .par_iter()
        .flat_map_iter(|c| c.items.iter().map(move |item| (c.calibration, item)))
        .filter_map(|(calibration, item)| {
            let (scaled, counted_with) = (calibration.ratio != 1.0, calibration.tokenizer);
            let MeasuredItem::ToolResult(sizes, r) = item else { return None };
            let measure = sizes.output();
            if measure.tokens == 0 {
                return None;
            }
            let text = if r.text.is_empty() { &r.summary } else { &r.text };
            let tool = r.name.clone().unwrap_or_else(|| super::sweep::UNNAMED_TOOL.to_owned());
            let estimates = estimators.iter().map(|e| e.estimate(&tool, text, &measure)).collect();
            Some(Sample { kind: classify(text), tool, measure, scaled, counted_with, estimates })
        })
        .collect()
}

/// The row of estimator number `k` over `members`.
fn row(k: usize, estimator: &dyn Estimator, group: &str, key: &str, members: &[&Sample]) -> CalibrationRow {
    let mut r = CalibrationRow {
        estimator: estimator.name(),
        group: group.into(),
        key: key.into(),
        results: members.len(),
        ..Default::default()
    };
    let estimates: Vec<f64> = members.iter().map(|s| s.estimates[k]).collect();
    for s in members {
        r.bytes += s.measure.bytes;
        r.tokens += s.measure.tokens;
    }
    // A fold from +0.0: `sum()` of no `f64` is -0.0, which prints as `-0`.
    r.estimate = estimates.iter().fold(0.0, |a, b| a + b);
    if r.tokens == 0 || members.is_empty() {
        return r;
    }
    let real = r.tokens as f64;
    r.error = r.estimate / real - 1.0;
    r.bytes_per_token = r.bytes as f64 / real;
    let scale = if r.estimate > 0.0 { real / r.estimate } else { 1.0 };
    let mean = |scale: f64| {
        members
            .iter()
            .zip(&estimates)
            .map(|(s, e)| (e * scale - s.measure.tokens as f64).abs() / s.measure.tokens as f64)
            .sum::<f64>()
            / members.len() as f64
    };
    r.mean_abs_error = mean(1.0);
    r.calibrated_mean_abs_error = mean(scale);
    r
}

/// Calibrates `estimators` against the real counts of every tool output in `conversations`.
pub fn calibrate(
    conversations: &[&MeasuredConversation],
    estimators: &[&dyn Estimator],
    tokenizer: &str,
) -> Calibration {
    calibrate_samples(&samples(conversations, estimators), estimators, tokenizer)
}

/// Calibrates `estimators` (the ones the samples were taken with, in the same order) on `samples`.
pub fn calibrate_samples(samples: &[Sample], estimators: &[&dyn Estimator], tokenizer: &str) -> Calibration {
    let mut by_tool: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
    let mut by_kind: BTreeMap<ContentKind, Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        by_tool.entry(&s.tool).or_default().push(s);
        by_kind.entry(s.kind).or_default().push(s);
    }
    let mut tools: Vec<(&str, Vec<&Sample>)> = by_tool.into_iter().collect();
    tools.sort_by_key(|(name, members)| {
        (std::cmp::Reverse(members.iter().map(|s| s.measure.tokens).sum::<Tokens>()), *name)
    });
    let all: Vec<&Sample> = samples.iter().collect();
    let mut rows = Vec::new();
    for (k, e) in estimators.iter().enumerate() {
        rows.push(row(k, *e, "all", "all", &all));
        rows.extend(tools.iter().map(|(name, members)| row(k, *e, "tool", name, members)));
        rows.extend(by_kind.iter().map(|(kind, members)| row(k, *e, "kind", kind.name(), members)));
    }
    let provider_scaled = samples.iter().any(|s| s.scaled);
    Calibration { tokenizer: counted_name(samples, tokenizer, provider_scaled), provider_scaled, rows }
}

/// The name of what the real counts are: `tokenizer`, but under `provider` with no count scaled,
/// the encodings the conversations were really counted with (`o200k`, `cl100k`, or both), so
/// that "real o200k tokens" is not called provider tokens.
fn counted_name(samples: &[Sample], tokenizer: &str, provider_scaled: bool) -> String {
    if tokenizer != crate::tokens::Tokenizer::Provider.name() || provider_scaled {
        return tokenizer.to_owned();
    }
    let used = |e: Encoding| samples.iter().any(|s| s.counted_with == Some(e));
    match (used(Encoding::O200k), used(Encoding::Cl100k)) {
        (true, true) => "o200k and cl100k".to_owned(),
        (false, true) => "cl100k".to_owned(),
        (true, false) => "o200k".to_owned(),
        (false, false) => tokenizer.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::MeasureOptions;
    use crate::model::{Conversation, Item, Output, ToolResult};
    use crate::tokens::{Counter, Meter, Tokenizer};

    #[test]
    fn anchor_estimators_count_a_tool_output_as_their_policies_do() {
        let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
        let text = "héllo wörld\n"; // 12 chars, 14 bytes, 12 UTF-16 units, 2 non-ASCII
        let m = meter.measure(text);
        assert_eq!(LenOver4.estimate("Bash", text, &m), 3.0); // 14 / 4
        assert_eq!(AnchorEstimator::OpenCode.estimate("Bash", text, &m), 3.0); // round(12 / 4)
        assert_eq!(AnchorEstimator::LangChain.estimate("Bash", text, &m), 6.0); // ceil(12 / 4) + 3
        // (name 4 + `{"output":"` 11 + `"}` 2 + 12 units + 1 for the escaped newline) / 4, rounded down.
        assert_eq!(AnchorEstimator::Gemini.estimate("Bash", text, &m), 7.0);
        let names: Vec<String> = default_estimators().iter().map(|e| e.name()).collect();
        assert_eq!(names, ["len/4", "opencode", "langchain", "gemini"]);
    }

    #[test]
    fn the_classifier_tells_the_kinds_apart() {
        assert_eq!(classify("fn main() {\n    println!(\"hi\");\n}\n"), ContentKind::Code);
        assert_eq!(classify("     1→use std::io;\n     2→\n     3→fn f() {}\n"), ContentKind::Code);
        assert_eq!(classify("{\"a\": [1, 2], \"b\": null}"), ContentKind::Json);
        assert_eq!(classify("[1, 2"), ContentKind::Prose, "not valid JSON");
        assert_eq!(
            classify("2025-01-01 12:00:00 INFO started\n2025-01-01 12:00:01 WARN slow\n"),
            ContentKind::Logs
        );
        assert_eq!(classify("   Compiling foo v0.1.0\n    Finished release in 3s\n"), ContentKind::Logs);
        assert_eq!(classify("src/main.rs:12: let x = 1\nsrc/lib.rs:3: mod a\n"), ContentKind::Logs);
        assert_eq!(
            classify("The quick brown fox jumps over the lazy dog. It was fine.\n"),
            ContentKind::Prose
        );
        assert_eq!(classify("日本語のテキストです。"), ContentKind::NonAscii);
        assert_eq!(classify(""), ContentKind::Prose);
    }

    /// Real tokens = bytes / 2, so `len/4` under-counts by half and 2 bytes per token is right.
    struct Half;
    impl Counter for Half {
        fn tokenizer(&self) -> Tokenizer {
            Tokenizer::O200k
        }
        fn count(&self, text: &str) -> Tokens {
            text.len() as Tokens / 2
        }
    }

    /// An estimator that gets every output exactly right.
    struct Exact;
    impl Estimator for Exact {
        fn name(&self) -> String {
            "exact".into()
        }
        fn estimate(&self, _tool: &str, _text: &str, m: &TextSize) -> f64 {
            m.tokens as f64
        }
    }

    fn result(tool: &str, text: &str) -> Item {
        Item::ToolResult(ToolResult {
            call_id: tool.into(),
            name: Some(tool.into()),
            output: Output::Raw { output: text.into() },
            is_error: false,
            images: 0,
        })
    }

    #[test]
    fn errors_and_bytes_per_token_match_a_hand_count() {
        let meter = Meter::with_counters(Box::new(Half), Box::new(Half));
        let code = "fn a() {}\n".repeat(8); // 80 bytes: 40 real, 20 estimated
        let prose = "word ".repeat(32); // 160 bytes: 80 real, 40 estimated
        let conv = Conversation {
            id: "main".into(),
            items: vec![result("read", &code), result("bash", &prose), result("read", &prose)],
            recorded_total: None,
        };
        let m = MeasuredConversation::new(&conv, &meter, &MeasureOptions::default());
        let c = calibrate(&[&m], &[&LenOver4, &Exact], "o200k");
        let get = |est: &str, group: &str, key: &str| {
            c.rows.iter().find(|r| r.estimator == est && r.group == group && r.key == key).unwrap().clone()
        };
        let all = get("len/4", "all", "all");
        assert_eq!((all.results, all.bytes, all.tokens), (3, 400, 200));
        assert!((all.estimate - 100.0).abs() < 1e-12 && (all.error + 0.5).abs() < 1e-12);
        assert!((all.bytes_per_token - 2.0).abs() < 1e-12);
        // Each output is off by half; scaling by 2 makes every one exact.
        assert!((all.mean_abs_error - 0.5).abs() < 1e-12 && all.calibrated_mean_abs_error.abs() < 1e-12);
        // Tools by real tokens: read (120) before bash (80).
        let tools: Vec<&str> = c
            .rows
            .iter()
            .filter(|r| r.estimator == "len/4" && r.group == "tool")
            .map(|r| r.key.as_str())
            .collect();
        assert_eq!(tools, ["read", "bash"]);
        assert_eq!(get("len/4", "tool", "read").tokens, 120);
        assert_eq!(get("len/4", "kind", "code").results, 1);
        assert_eq!(get("len/4", "kind", "prose").results, 2);
        let exact = get("exact", "all", "all");
        assert!(exact.error.abs() < 1e-12 && exact.mean_abs_error.abs() < 1e-12);
    }

    #[test]
    fn counts_scaled_by_a_fitted_provider_ratio_are_named_provider_tokens() {
        let meter = Meter::with_counters(Box::new(Half), Box::new(Half));
        let conv = Conversation {
            id: "main".into(),
            items: vec![result("read", "word ".repeat(32).as_str())],
            recorded_total: None,
        };
        let mut m = MeasuredConversation::new(&conv, &meter, &MeasureOptions::default());
        let plain = calibrate(&[&m], &[&LenOver4], "o200k");
        assert!(!plain.provider_scaled);
        assert_eq!(plain.reference(), "o200k tokens");
        m.calibration = crate::model::Calibration { ratio: 1.25, ..crate::model::Calibration::NONE };
        let scaled = calibrate(&[&m], &[&LenOver4], "o200k");
        assert!(scaled.provider_scaled);
        assert_eq!(scaled.reference(), "provider tokens");
        assert!(plain.scaling_note().is_none());
        assert!(scaled.scaling_note().is_some_and(|n| n.contains("o200k tokens times the ratio")));
        // Under provider: unscaled counts are named by the encoding they were counted with.
        let with = |e| {
            let mut c = m.clone();
            c.calibration =
                crate::model::Calibration { tokenizer: Some(e), ..crate::model::Calibration::NONE };
            c
        };
        let (cl, o) = (with(Encoding::Cl100k), with(Encoding::O200k));
        assert_eq!(calibrate(&[&cl], &[&LenOver4], "provider").reference(), "cl100k tokens");
        assert_eq!(calibrate(&[&o, &cl], &[&LenOver4], "provider").reference(), "o200k and cl100k tokens");
        assert_eq!(calibrate(&[&m], &[&LenOver4], "provider").reference(), "provider tokens", "scaled");
        let note = calibrate(&[&m], &[&LenOver4], "provider").scaling_note().unwrap();
        assert!(note.contains("o200k (cl100k for gpt-4 and gpt-3.5) tokens times the ratio"), "{note}");
    }

    #[test]
    fn samples_taken_conversation_by_conversation_calibrate_as_all_at_once() {
        let meter = Meter::with_counters(Box::new(Half), Box::new(Half));
        let conversation = |items| {
            let conv = Conversation { id: "c".into(), items, recorded_total: None };
            MeasuredConversation::new(&conv, &meter, &MeasureOptions::default())
        };
        let (code, prose) = ("fn a() {}\n".repeat(8), "word ".repeat(33));
        let one = conversation(vec![result("read", &code), result("bash", &prose)]);
        let two = conversation(vec![result("bash", &code), result("grep", "x y z")]);
        let estimators: [&dyn Estimator; 2] = [&LenOver4, &AnchorEstimator::LangChain];
        let whole = calibrate(&[&one, &two], &estimators, "o200k");
        let mut taken = samples(&[&one], &estimators);
        taken.extend(samples(&[&two], &estimators));
        assert_eq!(calibrate_samples(&taken, &estimators, "o200k"), whole);
        assert_eq!(whole.rows.iter().find(|r| r.group == "all").map(|r| r.results), Some(4));
    }
}
