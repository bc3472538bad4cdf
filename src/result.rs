//! The result model: what a replay produces, as documented serde structs. The JSON export is this
//! model verbatim and is the contract that other tools, charts and tests read back.
//!
//! A **run** is one conversation replayed under one policy at one threshold. Its [`RunSummary`]
//! carries the totals; its [`RequestRow`]s the per-request timeline. Totals merge with `+=` so
//! per-file results combine in any order. Plain data: no I/O.

use serde::{Deserialize, Serialize};

use crate::model::{Bytes, Tokens};

/// Real tokens per category of sent text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Categories {
    /// Tokens the trace does not record but every request sends (`--overhead`).
    pub unrecorded: Tokens,
    /// Message structure around each item, fitted by the calibration (docs/unseen-context.md).
    #[serde(default)]
    pub framing: Tokens,
    /// System prompt and developer instructions.
    pub system: Tokens,
    /// User text, including harness-injected text and compaction summaries.
    pub user: Tokens,
    /// Assistant text.
    pub assistant: Tokens,
    /// Assistant reasoning sent back as readable text.
    pub thinking: Tokens,
    /// Reasoning re-sent without its text, from the recorded reasoning tokens (docs/unseen-context.md).
    #[serde(default)]
    pub hidden_reasoning: Tokens,
    /// Content the provider added server-side (web search results), from the usage step it caused.
    #[serde(default)]
    pub server_side: Tokens,
    /// Images, by the provider's rule from their dimensions.
    #[serde(default)]
    pub images: Tokens,
    /// Tool call names and arguments.
    pub tool_calls: Tokens,
    /// Tool-result summaries (and outputs too small to split).
    pub tool_summaries: Tokens,
    /// Tool-result contents still present.
    pub tool_contents: Tokens,
    /// Placeholders and previews policies put in place of content.
    pub placeholders: Tokens,
}

impl Categories {
    /// Sum over all categories.
    pub fn total(&self) -> Tokens {
        self.unrecorded
            + self.framing
            + self.system
            + self.user
            + self.assistant
            + self.thinking
            + self.hidden_reasoning
            + self.server_side
            + self.images
            + self.tool_calls
            + self.tool_summaries
            + self.tool_contents
            + self.placeholders
    }

    /// `(name, tokens)` pairs in report order.
    pub fn named(&self) -> [(&'static str, Tokens); 13] {
        [
            ("unrecorded", self.unrecorded),
            ("framing", self.framing),
            ("system", self.system),
            ("user", self.user),
            ("assistant", self.assistant),
            ("thinking", self.thinking),
            ("hidden_reasoning", self.hidden_reasoning),
            ("server_side", self.server_side),
            ("images", self.images),
            ("tool_calls", self.tool_calls),
            ("tool_summaries", self.tool_summaries),
            ("tool_contents", self.tool_contents),
            ("placeholders", self.placeholders),
        ]
    }
}

/// The context one request sends, under the replayed policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestRow {
    /// 0-based index of the request in its conversation.
    pub request: usize,
    /// Provider id of the response, when recorded.
    pub id: Option<String>,
    /// RFC 3339 time of the request, when recorded.
    pub timestamp: Option<String>,
    /// Human turns started so far.
    pub turn: usize,
    /// Real tokens per category.
    #[serde(flatten)]
    pub categories: Categories,
    /// Real tokens of the whole context (the sum of the categories).
    pub context_tokens: Tokens,
    /// The same context as the seed's framework estimates it (`len/4` per text, summed).
    pub context_estimate: Tokens,
    /// Real tokens of contents that are still present (what a prune could remove).
    pub prunable_tokens: Tokens,
    /// The same as the `len/4` estimate.
    pub prunable_estimate: Tokens,
    /// Real tokens the policy has removed from this context so far (net of placeholders).
    pub pruned_tokens: Tokens,
    /// Real tokens removed by the policy's changes made before this request.
    pub freed_tokens: Tokens,
    /// Tool results whose content the policy changed before this request.
    pub changed_results: usize,
    /// Real tokens at the start of this context identical to the previous request's context (the
    /// prefix a prompt cache could serve; 0 for the first request and after a compaction).
    pub shared_prefix_tokens: Tokens,
    /// Tokens of the previous request's context (0 for the first request and after a compaction).
    pub previous_context_tokens: Tokens,
    /// Of the previous request's context, the tokens this request still sends: its items as they
    /// are now, after this request's edits, placeholders included (0 for the first request and
    /// after a compaction). Past the shared prefix, they are what a warm cache must write again.
    pub previous_kept_tokens: Tokens,
    /// Milliseconds since the previous request, when both are timestamped.
    pub gap_ms: Option<i64>,
    /// Prompt size the provider recorded for this request, if any.
    pub recorded_input_tokens: Option<Tokens>,
    /// Of which read from the provider's cache, if recorded.
    pub recorded_cache_read_tokens: Option<Tokens>,
    /// Output tokens the provider recorded for this request, if any (priced by the cost model;
    /// not part of the row's JSON).
    #[serde(skip)]
    pub recorded_output_tokens: Option<Tokens>,
    /// What the log records this request cost, in millionths of a USD (not part of the JSON).
    #[serde(skip)]
    pub recorded_cost_micro_usd: Option<u64>,
    /// The model the log names for this request (untrusted text; not part of the JSON).
    #[serde(skip)]
    pub model: Option<std::sync::Arc<str>>,
    /// Input of the summarisation call a compaction policy made before this request (its
    /// context then, plus the summarisation instructions; docs/compaction.md); 0 without one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub summarization_input_tokens: Tokens,
    /// Of that input, the prefix the previous request had cached.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub summarization_cached_tokens: Tokens,
    /// Output of that call: the summary.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub summarization_output_tokens: Tokens,
    /// That call was made with prompt caching off: it reads nothing from the cache and its whole
    /// input is priced at the plain input price (docs/compaction.md, "Billing"); in the JSON only
    /// when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summarization_uncached: bool,
}

fn is_zero(t: &Tokens) -> bool {
    *t == 0
}

fn is_zero_count(n: &usize) -> bool {
    *n == 0
}

/// What a run's compactions add up to (all 0 for a policy that does not compact): the five
/// compaction fields of the replay, `compare`, `cost` and `recommend` outputs, flattened into each
/// row that carries them ([`RunSummary`], `PolicyRow`, `Candidate`) under these names, in this order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CompactionTotals {
    /// Compactions made (the policy's, and the agent's trigger's under `simulated`).
    pub compactions: usize,
    /// Tokens those compactions summarised away.
    pub summarized_tokens: Tokens,
    /// Tokens of the summaries that replaced them.
    pub summary_tokens: Tokens,
    /// Input tokens of the summarisation calls (the context at each, plus the instructions).
    pub summarization_input_tokens: Tokens,
    /// Output tokens of the summarisation calls (the summaries).
    pub summarization_output_tokens: Tokens,
}

impl std::ops::AddAssign for CompactionTotals {
    fn add_assign(&mut self, o: CompactionTotals) {
        self.compactions += o.compactions;
        self.summarized_tokens += o.summarized_tokens;
        self.summary_tokens += o.summary_tokens;
        self.summarization_input_tokens += o.summarization_input_tokens;
        self.summarization_output_tokens += o.summarization_output_tokens;
    }
}

/// Asserts that `json` carries the [`CompactionTotals`] fields flattened, in their order, between
/// the fields `before` and `after` (the rows' JSON contract).
#[cfg(test)]
pub(crate) fn assert_flattened_between(json: &str, before: &str, after: &str) {
    let totals = serde_json::to_string(&CompactionTotals::default()).unwrap_or_default();
    let names: Vec<&str> = totals.split('"').skip(1).step_by(2).collect();
    let order: Vec<&str> = std::iter::once(before).chain(names).chain([after]).collect();
    let at = |k: &str| json.find(&format!("\"{k}\":")).unwrap_or_else(|| panic!("no {k} in {json}"));
    assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{order:?} in {json}");
    assert!(!json.contains("\"compaction\""), "flattened, not nested: {json}");
}

/// One conversation replayed under one policy at one threshold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSummary {
    /// The input path as given.
    pub trace: String,
    /// Conversation id within the file.
    pub conversation: String,
    /// Format that read the file.
    pub format: String,
    /// The policy spec.
    pub policy: String,
    /// Record-time transforms applied before the split, as specs.
    pub transforms: Vec<String>,
    /// `SUMMARY_THRESHOLD` in bytes.
    pub threshold: usize,
    /// Tokenizer of every token count in this run.
    pub tokenizer: String,
    /// Tokenizer the policy decided with.
    pub decide_with: String,
    /// What the replay did with the compactions the log recorded (`--harness-compaction`):
    /// `recorded` (kept where they were), `simulated` (dropped, the agent's trigger applied to this
    /// run's context) or `off` (dropped). docs/compaction.md.
    #[serde(default)]
    pub harness_compaction: String,
    /// Under `simulated`, the agent's compaction policy applied (a run whose policy compacts
    /// applies its own instead); otherwise null.
    #[serde(default)]
    pub harness_compaction_policy: Option<String>,
    /// Tool results this run sent as the placeholder of a clearing the log recorded (Claude
    /// Code's microcompact): the log's clearings are kept under `recorded` and `simulated`
    /// (microcompact's trigger is not documented, so it is not simulated) and for the as-recorded
    /// baseline, dropped under `off`. Left out of the JSON when 0: a log that records no clearing,
    /// or `off` (docs/compaction.md, "Recorded clearings").
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub cleared_results: usize,
    /// Thinking blocks (texts) this run took out of the context for a thinking clearing the log
    /// recorded (Anthropic's `clear_thinking_20251015`, as a response reports it): kept and
    /// dropped as `cleared_results` are. Left out of the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub cleared_thinking_blocks: usize,
    /// LLM requests replayed.
    pub requests: usize,
    /// Tool results in the conversation.
    pub tool_results: usize,
    /// Results with content after the split (longer than the threshold, or pre-split with content).
    pub split_results: usize,
    /// UTF-8 bytes of all tool outputs (after transforms); a result the tool split counts as the
    /// text it sent, `summary + "\n" + content`, as with `--resplit`.
    pub tool_output_bytes: Bytes,
    /// Real tokens of all tool outputs, each counted alone (a tool's split: its summary, the
    /// newline and its content, each counted alone).
    pub tool_output_tokens: Tokens,
    /// Real tokens of the contents of split results.
    pub content_tokens: Tokens,
    /// The seed's estimate (`len/4` each, summed) of those contents.
    pub content_estimate: Tokens,
    /// Largest context of any request.
    pub peak_context_tokens: Tokens,
    /// Sum of the context over all requests (the input tokens the run sends).
    pub total_input_tokens: Tokens,
    /// Context of the last request.
    pub final_context_tokens: Tokens,
    /// Real tokens the policy removed, net of placeholders: from the final context plus from
    /// contexts later replaced by a compaction.
    pub pruned_tokens: Tokens,
    /// Requests before which the policy changed the context (each one breaks the cached prefix).
    pub prune_events: usize,
    /// Compactions the run made: the policy's, and the agent's trigger's under `simulated` (the
    /// log's own, replayed as recorded, are not counted here), and what they summarised; in the
    /// JSON, five fields in place (docs/compaction.md).
    #[serde(flatten)]
    pub compaction: CompactionTotals,
    /// Sum of the recorded prompt sizes, or null when the trace records none.
    pub recorded_input_tokens: Option<Tokens>,
    /// Requests that carry a recorded prompt size.
    pub recorded_requests: usize,
    /// What was added to the log's own texts: the unrecorded overhead and the provider tokens per
    /// report token (fitted by the calibration), and how they were found.
    #[serde(default)]
    pub calibration: crate::model::Calibration,
    /// Per-request timeline (only with `--per-request`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Vec<RequestRow>>,
}

/// A replay run: totals plus the timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Run {
    /// Totals.
    pub summary: RunSummary,
    /// One row per request.
    pub rows: Vec<RequestRow>,
}

/// The JSON document `replay --format json` writes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayReport {
    /// Every run, in input order (file, conversation, policy, threshold).
    pub runs: Vec<RunSummary>,
    /// Every file found, in input order ([`Envelope::inputs`]).
    #[serde(default)]
    pub inputs: Vec<InputFile>,
    /// The options that changed the numbers ([`Envelope::settings`]).
    #[serde(default)]
    pub settings: Settings,
    /// Files that could not be read, with the reason: each a [`Problem`] in the JSON.
    #[serde(with = "problem_lines")]
    pub errors: Vec<String>,
    /// Non-fatal problems, per file.
    pub warnings: Vec<String>,
}

/// Totals of every run of one policy at one threshold, over all conversations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyTotals {
    /// The policy spec.
    pub policy: String,
    /// Threshold in bytes.
    pub threshold: usize,
    /// Conversations replayed.
    pub conversations: usize,
    /// Requests replayed.
    pub requests: usize,
    /// Sum of every request's context.
    pub total_input_tokens: Tokens,
    /// Largest context of any request.
    pub peak_context_tokens: Tokens,
    /// Tokens the policy removed.
    pub pruned_tokens: Tokens,
    /// Requests before which the policy changed the context.
    pub prune_events: usize,
    /// `1 - total / total under none` at the same threshold, when `none` was replayed too.
    pub savings: Option<f64>,
}

impl PolicyTotals {
    /// Totals per (policy, threshold), in the order the pairs first appear in `runs`.
    pub fn by_policy(runs: &[RunSummary]) -> Vec<PolicyTotals> {
        let mut out: Vec<PolicyTotals> = Vec::new();
        for r in runs {
            let i = match out.iter().position(|t| t.policy == r.policy && t.threshold == r.threshold) {
                Some(i) => i,
                None => {
                    out.push(PolicyTotals {
                        policy: r.policy.clone(),
                        threshold: r.threshold,
                        ..Default::default()
                    });
                    out.len() - 1
                }
            };
            let t = &mut out[i];
            t.conversations += 1;
            t.requests += r.requests;
            t.total_input_tokens += r.total_input_tokens;
            t.peak_context_tokens = t.peak_context_tokens.max(r.peak_context_tokens);
            t.pruned_tokens += r.pruned_tokens;
            t.prune_events += r.prune_events;
        }
        let baseline: Vec<(usize, Tokens)> =
            out.iter().filter(|t| t.policy == "none").map(|t| (t.threshold, t.total_input_tokens)).collect();
        for t in &mut out {
            if let Some(&(_, none)) = baseline.iter().find(|(th, _)| *th == t.threshold) {
                if none > 0 {
                    t.savings = Some(1.0 - t.total_input_tokens as f64 / none as f64);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(policy: &str, threshold: usize, total: Tokens, peak: Tokens) -> RunSummary {
        RunSummary {
            policy: policy.into(),
            threshold,
            requests: 2,
            total_input_tokens: total,
            peak_context_tokens: peak,
            ..Default::default()
        }
    }

    #[test]
    fn totals_add_up_per_policy_and_threshold_with_savings_against_none() {
        let runs = [
            run("none", 256, 1000, 600),
            run("keep-turns:n=3", 256, 750, 400),
            run("none", 256, 1000, 700),
            run("keep-turns:n=3", 256, 250, 100),
            run("keep-turns:n=3", 512, 10, 10),
        ];
        let t = PolicyTotals::by_policy(&runs);
        assert_eq!(t.len(), 3);
        assert_eq!((t[0].conversations, t[0].total_input_tokens, t[0].peak_context_tokens), (2, 2000, 700));
        assert_eq!(t[1].total_input_tokens, 1000);
        assert_eq!(t[1].savings, Some(0.5));
        assert_eq!(t[2].savings, None, "no `none` run at 512");
    }

    #[test]
    fn an_error_line_is_written_in_its_parts_and_read_back_as_the_same_line() {
        let cases = [
            ("t/a.jsonl:2: line 2 is not JSON", Some("t/a.jsonl"), Some(2), None, "line 2 is not JSON"),
            (
                "C:\\logs\\a.jsonl: cannot read: denied",
                Some("C:\\logs\\a.jsonl"),
                None,
                None,
                "cannot read: denied",
            ),
            ("a b/c.json: request 3: no usage", Some("a b/c.json"), None, Some(3), "no usage"),
            (
                "Cargo.toml: not a recognised trace format",
                Some("Cargo.toml"),
                None,
                None,
                "not a recognised trace format",
            ),
            (
                "no input could be read: nothing written",
                None,
                None,
                None,
                "no input could be read: nothing written",
            ),
            (
                "no agent folder asked for exists; pass trace files",
                None,
                None,
                None,
                "no agent folder asked for exists; pass trace files",
            ),
        ];
        for (line, file, number, request, message) in cases {
            let p = Problem::parse(line);
            assert_eq!(
                (p.file.as_deref(), p.line, p.request, p.message.as_str()),
                (file, number, request, message),
                "{line}"
            );
            assert_eq!(p.to_string(), line);
        }
        let report = ReplayReport { errors: vec!["x.jsonl:7: cut".into()], ..Default::default() };
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json["errors"],
            serde_json::json!([{"file": "x.jsonl", "line": 7, "request": null, "message": "cut"}])
        );
        let back: ReplayReport = serde_json::from_value(json).unwrap();
        assert_eq!(back, report);
    }

    #[test]
    fn categories_total_is_the_sum_of_the_parts() {
        let c = Categories {
            unrecorded: 9,
            framing: 13,
            system: 1,
            user: 2,
            assistant: 3,
            thinking: 4,
            hidden_reasoning: 10,
            server_side: 11,
            images: 12,
            tool_calls: 5,
            tool_summaries: 6,
            tool_contents: 7,
            placeholders: 8,
        };
        assert_eq!(c.total(), 91);
        assert_eq!(c.named().iter().map(|(_, n)| n).sum::<Tokens>(), 91);
        let names: Vec<&str> = c.named().iter().map(|(name, _)| *name).collect();
        let order: Vec<&str> = crate::measure::Category::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names, order, "the same names in the same order as the categories");
    }

    #[test]
    fn compaction_totals_add_up_field_by_field() {
        let mut a = CompactionTotals {
            compactions: 1,
            summarized_tokens: 10,
            summary_tokens: 2,
            ..Default::default()
        };
        a += CompactionTotals {
            compactions: 2,
            summarized_tokens: 5,
            summary_tokens: 1,
            summarization_input_tokens: 7,
            summarization_output_tokens: 3,
        };
        assert_eq!((a.compactions, a.summarized_tokens, a.summary_tokens), (3, 15, 3));
        assert_eq!((a.summarization_input_tokens, a.summarization_output_tokens), (7, 3));
    }

    #[test]
    fn a_runs_compaction_fields_sit_between_its_prunes_and_its_recorded_sizes() {
        let run = RunSummary {
            prune_events: 1,
            compaction: CompactionTotals { compactions: 2, summary_tokens: 9, ..Default::default() },
            ..Default::default()
        };
        let json = serde_json::to_string(&run).unwrap();
        assert_flattened_between(&json, "prune_events", "recorded_input_tokens");
        assert_eq!(serde_json::from_str::<RunSummary>(&json).unwrap(), run);
        assert!(serde_json::from_str::<RunSummary>(&json.replacen('{', "{\"x\":0,", 1)).is_err());
    }
}

/// One file a command found, as its JSON lists it among its `inputs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// The path as given or found.
    pub path: String,
    /// The format that read it; `null` when it could not be read (`errors` or `warnings` say why).
    pub format: Option<String>,
    /// Conversations read from it.
    pub conversations: usize,
    /// LLM requests in those conversations.
    pub requests: usize,
    /// Clearings of tool results or thinking its conversations recorded (Claude Code's
    /// microcompact records, Anthropic's context editing), for the settings line of the analyses'
    /// text ([`crate::harness::Harness::applies_clearings`]); not in the JSON, where each run's
    /// `cleared_results` and `cleared_thinking_blocks` say what its replay cleared.
    #[serde(skip)]
    pub clearings: usize,
}

/// The options of a run that changed its numbers, by name (`tokenizer`, `policies`, `threshold`,
/// `cache_ttl_ms`, ...), as JSON values: sorted by name, so the same options give the same bytes.
pub type Settings = std::collections::BTreeMap<String, serde_json::Value>;

/// One entry of a JSON `errors` list: the file or path it is about, the line or request where
/// known, and what went wrong. Its [`Display`](std::fmt::Display) is the line the command prints
/// on stderr after `error: ` (`file:line: message`, `file: request 3: message`, or the message
/// alone when it is about no file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Problem {
    /// The file or path, as given or found; `null` for a problem about no file.
    pub file: Option<String>,
    /// The 1-based line of the file, when known.
    pub line: Option<usize>,
    /// The 0-based request of the conversation (as `--per-request` numbers them), when known.
    pub request: Option<usize>,
    /// What went wrong and what to do, after the file, line and request.
    pub message: String,
}

impl Problem {
    /// The problem an error line names (the inverse of its `Display`): `file:line: message`,
    /// `file: request N: message` and `file: message` give their parts; a line with no `: ` (or
    /// whose head holds spaces, as a sentence does and a path the program names rarely does) is a
    /// message about no file. The errors travel through the passes as these lines, so this is
    /// where the JSON gets their parts.
    pub fn parse(text: &str) -> Problem {
        let Some((head, rest)) = text.split_once(": ").filter(|(head, _)| is_path_like(head)) else {
            return Problem { message: text.to_owned(), ..Problem::default() };
        };
        let (file, line) = match head.rsplit_once(':') {
            Some((file, n)) if !file.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                (file, n.parse().ok())
            }
            _ => (head, None),
        };
        let (request, message) = match rest.strip_prefix("request ").and_then(|r| r.split_once(": ")) {
            Some((n, message)) if n.bytes().all(|b| b.is_ascii_digit()) => (n.parse().ok(), message),
            _ => (None, rest),
        };
        Problem { file: Some(file.to_owned()), line, request, message: message.to_owned() }
    }
}

/// Whether the text before an error line's first `: ` names a file: not empty, and no space in
/// it (`no agent folder asked for exists; ...` is a sentence), or a `/` or `\` in it.
fn is_path_like(head: &str) -> bool {
    !head.is_empty() && (!head.contains(' ') || head.contains('/') || head.contains('\\'))
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            f.write_str(file)?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        }
        if let Some(request) = self.request {
            write!(f, "request {request}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// The serde form of a list of error lines: written as [`Problem`]s, read back from them as the
/// lines again (`#[serde(with = "problem_lines")]` on a `Vec<String>`), so the lines the passes
/// collect and print are written in parts.
pub mod problem_lines {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Problem;

    /// Writes each line as a [`Problem`].
    pub fn serialize<S: Serializer>(lines: &[String], s: S) -> Result<S::Ok, S::Error> {
        let problems: Vec<Problem> = lines.iter().map(|l| Problem::parse(l)).collect();
        problems.serialize(s)
    }

    /// Reads [`Problem`]s back as their lines.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        Ok(Vec::<Problem>::deserialize(d)?.iter().map(Problem::to_string).collect())
    }
}

/// The keys every command's JSON carries beside its results: what was read, with which options,
/// and what went wrong. `errors` and `warnings` are the lines the command prints on stderr (without
/// their `error: ` / `warning: ` prefix), each naming its file first (and its line, where known);
/// each error is written as a [`Problem`] (its file, line or request, and message).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// Every file found, in input order, read or not.
    pub inputs: Vec<InputFile>,
    /// The options that changed the numbers.
    pub settings: Settings,
    /// Files or paths that could not be read, with the reason: each a [`Problem`] in the JSON.
    #[serde(with = "problem_lines")]
    pub errors: Vec<String>,
    /// Non-fatal problems, each naming its file first where it has one.
    pub warnings: Vec<String>,
}

/// An analysis's result with the [`Envelope`] beside it: the document `sweep`, `compare`, `cost`,
/// `calibrate` and `recommend` write with `--format json`, the result's keys then the envelope's,
/// in one object. Read back, the result's own keys go to `result` (which must have every one of
/// them), the envelope's to `envelope`; a key neither knows is passed over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Enveloped<T> {
    /// The analysis's result.
    #[serde(flatten)]
    pub result: T,
    /// What was read, with which options, and what went wrong.
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// The inputs and their requests, as a command's JSON lists them: one [`InputFile`] per file with
/// the requests of each conversation in it (a conversation listed once per policy and threshold
/// is counted once, by its id).
pub fn input_file<'c>(
    path: &str,
    format: Option<&str>,
    conversations: impl IntoIterator<Item = (&'c str, usize)>,
) -> InputFile {
    let mut seen = std::collections::BTreeMap::new();
    for (id, requests) in conversations {
        seen.entry(id).or_insert(requests);
    }
    InputFile {
        path: path.to_owned(),
        format: format.map(str::to_owned),
        conversations: seen.len(),
        requests: seen.values().sum(),
        clearings: 0,
    }
}
