//! The normalised trace model every importer produces and every later stage reads.
//!
//! It mirrors the seed's `Item` history (system, user and assistant text, tool calls, tool results
//! with a summary/content split) and adds what a replay needs and the seed keeps implicit:
//! **request boundaries** (one per LLM call, with the usage the provider recorded and a timestamp)
//! and **compaction markers** (the context was replaced by a summary). A request boundary sits where
//! the call was made: everything before it in the conversation (since the last compaction) is the
//! context that call sent. One file may hold several [`Conversation`]s (a session and its subagents).
//!
//! This module is plain data: no I/O, no counting, no policy.

use serde::{Deserialize, Serialize};

/// A number of tokens.
pub type Tokens = u64;
/// A number of UTF-8 bytes.
pub type Bytes = u64;
pub use crate::time::Millis;

/// One item of a conversation history, in the order it was sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Item {
    /// System prompt or developer instructions.
    System {
        /// The text sent.
        text: String,
    },
    /// A user message. `meta` marks text the harness injected (reminders, command caveats, context
    /// files): it is sent to the model but does not start a human turn.
    User {
        /// The text sent.
        text: String,
        /// Injected by the harness rather than typed by a person.
        #[serde(default, skip_serializing_if = "is_false")]
        meta: bool,
        /// Images attached to the message (counted, not tokenised).
        #[serde(default, skip_serializing_if = "is_zero")]
        images: u32,
    },
    /// Assistant text.
    Assistant {
        /// The text the model produced.
        text: String,
    },
    /// Assistant reasoning that is sent back with the history, kept as its own category.
    Thinking {
        /// The reasoning text.
        text: String,
    },
    /// A tool call made by the assistant.
    ToolCall {
        /// Identifier that links the call to its result.
        call_id: String,
        /// Tool name.
        name: String,
        /// Arguments as sent (usually JSON text).
        arguments: String,
    },
    /// The result of a tool call.
    ToolResult(ToolResult),
    /// An LLM request was made here, with everything before it as context.
    Request(Request),
    /// Content the provider billed as prompt but the log does not hold as text (hidden reasoning,
    /// server-side results, images), already sized in the provider's tokens ([`UnseenKind`]).
    Unseen {
        /// What it is.
        kind: UnseenKind,
        /// Its size in the provider's tokens.
        tokens: Tokens,
    },
    /// Earlier tool results are cleared from the requests sent from here on, by the agent (Claude
    /// Code's microcompact) or by the provider (Anthropic's server-side context editing, as the
    /// response of the next request reports it): each result cleared is sent as
    /// [`CLEARED_PLACEHOLDER`] instead of its output; the others stay. The provider's context
    /// editing may clear the thinking of the oldest assistant turns too ([`Cleared::thinking_turns`]):
    /// those thinking blocks are no longer sent. The log keeps the outputs and the thinking, so
    /// the item says what was cleared. Not a native item (only the Claude Code, Claude stream,
    /// cassette and inspect readers make it).
    #[serde(skip_deserializing)]
    Cleared(Cleared),
    /// The context was replaced: nothing before this marker is sent any more. The summary that
    /// replaces it, when the format records it here, is sent as user text.
    Compaction {
        /// Summary text that starts the new context, if recorded with the marker.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
}

/// The text Claude Code sends in place of a tool result its microcompact cleared (as public
/// descriptions of its source give it), also sent for a result Anthropic's server-side context
/// editing clears, whose placeholder text the API documentation does not give (an assumption;
/// docs/calibration.md, docs/unseen-context.md).
pub const CLEARED_PLACEHOLDER: &str = "[Old tool result content cleared]";

/// The tool name the `codex` and `codex-exec` readers give a hosted web search (a Responses API
/// `web_search_call`): the provider adds its results to the context and no result item follows
/// it in any log, so it is one of those traces' [`Trace::hosted_tools`].
pub const HOSTED_WEB_SEARCH: &str = "web_search";

/// What an [`Item::Cleared`] clears.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cleared {
    /// Call ids of the results cleared, as the log names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_ids: Vec<String>,
    /// The provider tokens the clearing saved, as the log records it (Claude Code's
    /// `tokensSaved`): what sizes the clearing where the log names no result (an estimate:
    /// the oldest results in the context are taken as cleared until their size reaches it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_saved: Option<Tokens>,
    /// How many of the oldest tool results of the context are cleared, where the log gives a
    /// count and no names (Anthropic's `cleared_tool_uses`, read from the response of the request
    /// that follows the item): those results, whether an earlier item cleared them or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest: Option<usize>,
    /// How many of the oldest thinking turns of the context have their thinking blocks cleared
    /// (Anthropic's `cleared_thinking_turns`, read like `oldest`): a turn is the assistant's
    /// responses from one human message to the next, and those of its thinking blocks still sent
    /// are no longer sent, whether an earlier item cleared them or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_turns: Option<usize>,
}

/// What kind of unseen content an [`Item::Unseen`] stands for (docs/unseen-context.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnseenKind {
    /// Reasoning the model produced and the API re-sends, encrypted, with the later calls of the
    /// same turn (OpenAI Responses). Sent until the next human turn starts, then dropped.
    Reasoning,
    /// Content the provider's own tools added server-side (a web search's results).
    ServerSide,
    /// An image, tokenised by the provider's rule from its dimensions.
    Image,
}

impl UnseenKind {
    /// Whether the content is dropped from the context when the next human turn starts.
    pub fn turn_scoped(self) -> bool {
        self == UnseenKind::Reasoning
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A tool result as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ToolResultWire")]
pub struct ToolResult {
    /// Identifier of the call this result answers.
    pub call_id: String,
    /// Tool name, when the trace records it or the call is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The output: raw text to be split, or a summary/content pair a tool already wrote.
    #[serde(flatten)]
    pub output: Output,
    /// The tool reported an error.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// Images in the result (counted, not tokenised).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub images: u32,
}

/// The JSON shape of a tool result, checked into a [`ToolResult`] with a clear error.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolResultWire {
    call_id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    output: Option<String>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    is_error: bool,
    #[serde(default)]
    images: u32,
}

impl TryFrom<ToolResultWire> for ToolResult {
    type Error = String;
    fn try_from(w: ToolResultWire) -> Result<Self, String> {
        let output = match (w.output, w.summary, w.content) {
            (Some(output), None, None) => Output::Raw { output },
            (None, Some(summary), content) => Output::Split { summary, content },
            (None, None, _) => {
                return Err("a tool_result needs `output` (raw text) or `summary` (pre-split)".into());
            }
            (Some(_), _, _) => {
                return Err("a tool_result has either `output` or `summary`/`content`, not both".into());
            }
        };
        Ok(ToolResult { call_id: w.call_id, name: w.name, output, is_error: w.is_error, images: w.images })
    }
}

/// What a tool returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Output {
    /// A tool that already wrote its own summary and content (the seed's custom `ToolOutput`).
    Split {
        /// 1–2 lines that survive prune.
        summary: String,
        /// Detail that prune removes; `None` when the summary alone suffices.
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<String>,
    },
    /// A plain string, split by the seed's `From<String>` at replay time.
    Raw {
        /// The text the tool returned.
        output: String,
    },
}

impl Output {
    /// The full text the tool produced: the raw output, or `summary` + `\n` + `content`.
    pub fn full_text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Output::Raw { output } => output.as_str().into(),
            Output::Split { summary, content: None } => summary.as_str().into(),
            Output::Split { summary, content: Some(c) } => format!("{summary}\n{c}").into(),
        }
    }
}

/// An LLM request boundary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Provider id of the response (e.g. `msg_…`), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// When the request was made.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::time::opt_rfc3339")]
    pub timestamp: Option<Millis>,
    /// Usage the provider reported for this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The model the log names for this call, as written there (untrusted text: neutralise it
    /// wherever it is shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Usage recorded by the provider for one call. `input_tokens` is the whole prompt size,
/// normalised across providers (Anthropic: input + cache creation + cache read; OpenAI: prompt
/// tokens, of which cached tokens are a subset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Prompt size of the call in the provider's tokens.
    pub input_tokens: Tokens,
    /// Of those, read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<Tokens>,
    /// Of those, written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<Tokens>,
    /// Tokens generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<Tokens>,
    /// What the call cost as the log records it, in millionths of a USD (Cline's `cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micro_usd: Option<u64>,
}

/// The largest recorded cost of one call believed, in millionths of a USD: $1,000,000.
pub const MAX_RECORDED_COST_MICRO_USD: u64 = 1_000_000_000_000;

impl Usage {
    /// A recorded cost in USD as millionths of a USD, when it is a number from 0 to
    /// [`MAX_RECORDED_COST_MICRO_USD`] (a negative, infinite or larger cost is not believed).
    pub fn micro_usd(cost: f64) -> Option<u64> {
        let micro = (cost * 1e6).round();
        (micro.is_finite() && (0.0..=MAX_RECORDED_COST_MICRO_USD as f64).contains(&micro))
            .then_some(micro as u64)
    }
}

/// One conversation: a single context window evolving request by request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conversation {
    /// Name of the conversation within its file (`main`, a subagent id, …).
    pub id: String,
    /// The history in the order it was sent.
    pub items: Vec<Item>,
    /// Totals for formats that record usage only in aggregate.
    pub recorded_total: Option<RecordedTotal>,
}

/// Aggregate usage for formats that store no per-call numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedTotal {
    /// Sum of prompt sizes over all calls.
    pub input_tokens: Tokens,
    /// Number of calls the total covers.
    pub calls: u64,
}

/// The largest recorded prompt size believed (decision): 2^32 tokens, two thousand times the
/// largest context window sold today. A larger number is a damaged or forged log, and sums of
/// numbers up to it cannot overflow (that would take 2^32 requests).
pub const MAX_RECORDED_TOKENS: Tokens = 1 << 32;

/// The largest recorded conversation total believed: 2^48 tokens (2^16 requests at the most
/// believed size).
pub const MAX_RECORDED_TOTAL: Tokens = 1 << 48;

impl Conversation {
    /// Reads as unrecorded every recorded usage that no provider could have reported: a count
    /// above [`MAX_RECORDED_TOKENS`] in a request's usage (prompt, cache read, cache write or
    /// output), or a recorded total above [`MAX_RECORDED_TOTAL`]. Returns what it dropped, as one
    /// warning naming the first request (0-based, as `--per-request` numbers them), or `None`.
    pub fn drop_implausible_usage(&mut self) -> Option<String> {
        let (mut dropped, mut first) = (0usize, None);
        let mut request = 0usize;
        for item in &mut self.items {
            let Item::Request(r) = item else { continue };
            if let Some(u) = r.usage {
                let fields = [
                    ("prompt", Some(u.input_tokens)),
                    ("cache read", u.cache_read_tokens),
                    ("cache write", u.cache_write_tokens),
                    ("output", u.output_tokens),
                ];
                if let Some((name, n)) = fields
                    .iter()
                    .find_map(|&(name, n)| n.filter(|&n| n > MAX_RECORDED_TOKENS).map(|n| (name, n)))
                {
                    r.usage = None;
                    dropped += 1;
                    first.get_or_insert(format!("request {request}: {name} tokens {n}"));
                }
            }
            request += 1;
        }
        let mut parts = Vec::new();
        if let Some(first) = first {
            parts.push(format!(
                "recorded usage of {dropped} request(s) is above {MAX_RECORDED_TOKENS} tokens, more than any \
                 provider reports (first: {first}); read as unrecorded"
            ));
        }
        if let Some(total) = self.recorded_total.filter(|t| t.input_tokens > MAX_RECORDED_TOTAL) {
            self.recorded_total = None;
            parts.push(format!(
                "recorded total of {} tokens is above {MAX_RECORDED_TOTAL}, more than any provider \
                 reports; read as unrecorded",
                total.input_tokens
            ));
        }
        (!parts.is_empty()).then(|| format!("conversation `{}`: {}", self.id, parts.join("; ")))
    }

    /// Names `model` (when given) as the model of every request that names none: for logs that
    /// record the model once for the whole conversation (a request body's `model`).
    pub fn name_model(&mut self, model: Option<&str>) {
        let Some(model) = model.filter(|m| !m.is_empty()) else { return };
        for item in &mut self.items {
            if let Item::Request(r) = item {
                r.model.get_or_insert_with(|| model.to_owned());
            }
        }
    }

    /// A conversation with the given id and no items yet.
    pub fn new(id: impl Into<String>) -> Self {
        Conversation { id: id.into(), ..Default::default() }
    }

    /// Number of request boundaries.
    pub fn requests(&self) -> usize {
        self.items.iter().filter(|i| matches!(i, Item::Request(_))).count()
    }

    /// Number of tool results.
    pub fn tool_results(&self) -> usize {
        self.items.iter().filter(|i| matches!(i, Item::ToolResult(_))).count()
    }
}

/// Everything read from one input file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// Format name that read it.
    pub format: &'static str,
    /// Conversations in file order.
    pub conversations: Vec<Conversation>,
    /// Non-fatal problems found while reading, in file order.
    pub warnings: Vec<String>,
}

impl Trace {
    /// The tools the provider runs itself in this trace's format, so that no result item follows
    /// their calls in the log (a call of one without a result is no broken link): the hosted web
    /// search ([`HOSTED_WEB_SEARCH`]) of the `codex` and `codex-exec` readers; none in any other
    /// format, where a tool of that name is the agent's own and owes a result.
    pub fn hosted_tools(&self) -> &'static [&'static str] {
        match self.format {
            "codex" | "codex-exec" => &[HOSTED_WEB_SEARCH],
            _ => &[],
        }
    }
}

/// How a conversation's overhead and ratio were found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The report's tokenizer is the provider's: `b` = 1, `a` from the recorded sizes.
    Exact,
    /// `b` fitted from the usage deltas, `a` from the recorded sizes.
    Ratio,
    /// A ratio per content kind fitted from the usage deltas (`--tokenizer provider`, where the
    /// provider's tokenizer is not public), `a` from the recorded sizes.
    Kinds,
    /// No usage recorded: the agent's default `a` and `b` (an estimate).
    Default,
    /// `--overhead N`: a fixed overhead, no ratio.
    Override,
    /// Nothing known: counts as measured.
    #[default]
    None,
}

impl Method {
    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Ratio => "ratio",
            Method::Kinds => "kinds",
            Method::Default => "default",
            Method::Override => "override",
            Method::None => "none",
        }
    }
}

/// A conversation's calibration: the overhead and ratio the calibration fitted (plain data,
/// kept here so the measured conversation and the result model can hold it without depending on
/// the fit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// How it was found.
    pub method: Method,
    /// Overhead `a`: provider tokens every request sends that the log does not hold.
    pub overhead: Tokens,
    /// Ratio `b`: provider tokens per report token.
    pub ratio: f64,
    /// Framing `c`: provider tokens of message structure per item in the context (each message,
    /// call and output the API wraps), fitted where the report's tokenizer is the provider's
    /// ([`Method::Exact`]); 0 elsewhere, where the ratio absorbs it.
    #[serde(default)]
    pub framing: f64,
    /// Growth `d`: provider tokens the log does not hold that each request adds to the context
    /// (reminders, per-request message structure), fitted where the ratio is ([`Method::Ratio`]).
    #[serde(default, skip_serializing_if = "no_growth")]
    pub growth: f64,
    /// The tokenizer the conversation was counted with, where it was chosen per conversation
    /// (`--tokenizer provider`); not written otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<Encoding>,
    /// The ratio of each content kind ([`Method::Kinds`]; `ratio` is then the single ratio, which
    /// a kind with too few appends takes); not written otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<KindRatios>,
}

/// An exact encoding a conversation was counted with (`--tokenizer provider` chooses one per
/// conversation; `tokens::Tokenizer` converts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// OpenAI `o200k_base`.
    O200k,
    /// OpenAI `cl100k_base`.
    Cl100k,
}

impl Encoding {
    /// Name used in reports (as `--tokenizer` spells it).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200k => "o200k",
            Encoding::Cl100k => "cl100k",
        }
    }
}

/// Provider tokens per report token of each content kind (the calibration's classifier, in
/// `calibrate::kinds`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindRatios {
    /// Messages: user, assistant, system and reasoning texts, compaction summaries.
    pub prose: f64,
    /// Tool outputs that are source code by their line shape.
    pub code: f64,
    /// Every other tool output.
    pub tool_output: f64,
    /// Tool calls: names and JSON arguments.
    pub arguments: f64,
}

/// Whether `x` is 0 (a growth of 0 is not written).
fn no_growth(x: &f64) -> bool {
    *x == 0.0
}

/// The ratio, the framing and the growth are never NaN (a median of finite quotients with a divisor of at least the calibration's `MIN_DELTA`,
/// or a constant), so equality is an equivalence.
impl Eq for Calibration {}

impl Default for Calibration {
    fn default() -> Calibration {
        Calibration::NONE
    }
}

impl Calibration {
    /// The calibration that changes nothing.
    pub const NONE: Calibration = Calibration {
        method: Method::None,
        overhead: 0,
        ratio: 1.0,
        framing: 0.0,
        growth: 0.0,
        tokenizer: None,
        kinds: None,
    };

    /// A fixed overhead and no ratio (`--overhead N`).
    pub fn fixed(overhead: Tokens) -> Calibration {
        Calibration { method: Method::Override, overhead, ..Calibration::NONE }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_no_provider_could_report_is_dropped_with_one_warning_naming_the_first_request() {
        let usage = |input_tokens, output_tokens| {
            Item::Request(Request {
                usage: Some(Usage { input_tokens, output_tokens, ..Usage::default() }),
                ..Request::default()
            })
        };
        let mut c = Conversation::new("main");
        c.items = vec![
            usage(MAX_RECORDED_TOKENS, Some(1)),
            usage(5, Some(MAX_RECORDED_TOKENS + 1)),
            usage(u64::MAX, None),
        ];
        c.recorded_total = Some(RecordedTotal { input_tokens: MAX_RECORDED_TOTAL + 1, calls: 3 });
        let warning = c.drop_implausible_usage().expect("a warning");
        assert!(warning.starts_with("conversation `main`: recorded usage of 2 request(s)"), "{warning}");
        assert!(warning.contains("first: request 1: output tokens 4294967297"), "{warning}");
        assert!(warning.contains("recorded total of 281474976710657 tokens"), "{warning}");
        let kept: Vec<bool> =
            c.items.iter().map(|i| matches!(i, Item::Request(r) if r.usage.is_some())).collect();
        assert_eq!(kept, [true, false, false], "the largest believed size stays");
        assert_eq!(c.recorded_total, None);
        assert_eq!(c.drop_implausible_usage(), None, "nothing left to drop");
    }

    #[test]
    fn full_text_of_a_split_output_joins_summary_and_content_with_a_newline() {
        let o = Output::Split { summary: "s".into(), content: Some("c".into()) };
        assert_eq!(o.full_text(), "s\nc");
        let o = Output::Split { summary: "s".into(), content: None };
        assert_eq!(o.full_text(), "s");
    }

    #[test]
    fn items_round_trip_through_their_json_form() {
        let items = vec![
            Item::User { text: "hi".into(), meta: false, images: 0 },
            Item::ToolResult(ToolResult {
                call_id: "c1".into(),
                name: Some("bash".into()),
                output: Output::Raw { output: "ok".into() },
                is_error: false,
                images: 0,
            }),
            Item::ToolResult(ToolResult {
                call_id: "c2".into(),
                name: None,
                output: Output::Split { summary: "s".into(), content: Some("c".into()) },
                is_error: true,
                images: 0,
            }),
            Item::Request(Request { id: None, timestamp: Some(1_700_000_000_123), usage: None, model: None }),
        ];
        for item in items {
            let json = serde_json::to_string(&item).unwrap();
            let back: Item = serde_json::from_str(&json).unwrap();
            assert_eq!(back, item, "{json}");
        }
    }
}

/// Problems in how a conversation's calls and results link up. None stops a replay (each result is
/// still counted), but each is worth a warning: it usually means a truncated or hand-edited trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkProblem {
    /// A result whose call id no earlier call has.
    ResultWithoutCall {
        /// The call id.
        call_id: String,
        /// Requests made before the result.
        request: usize,
    },
    /// A call that no later result answers.
    CallWithoutResult {
        /// The call id.
        call_id: String,
        /// The tool.
        name: String,
        /// Requests made before the call.
        request: usize,
    },
    /// A second call with an id already used.
    DuplicateCall {
        /// The call id.
        call_id: String,
        /// Requests made before the second call.
        request: usize,
    },
    /// A second result for the same call.
    DuplicateResult {
        /// The call id.
        call_id: String,
        /// Requests made before the second result.
        request: usize,
    },
}

impl std::fmt::Display for LinkProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkProblem::ResultWithoutCall { call_id, request } => {
                write!(f, "tool result for call `{call_id}` (after request {request}) has no matching call")
            }
            LinkProblem::CallWithoutResult { call_id, name, request } => {
                write!(f, "call `{call_id}` ({name}, after request {request}) has no result")
            }
            LinkProblem::DuplicateCall { call_id, request } => {
                write!(f, "call id `{call_id}` is used again (after request {request})")
            }
            LinkProblem::DuplicateResult { call_id, request } => {
                write!(f, "call `{call_id}` has a second result (after request {request})")
            }
        }
    }
}

impl Conversation {
    /// How calls and results fail to link, in order of appearance. Request numbers are 0-based
    /// counts of the requests made before the item. A compaction does not forget calls: a result may
    /// answer a call made before it. A call sent again after a compaction (the kept tail that
    /// Codex's `replacement_history` or an OpenHands condensation restarts with) is not a duplicate.
    pub fn link_problems(&self) -> Vec<LinkProblem> {
        use std::collections::BTreeMap;
        // Each call's tool, request, whether answered, and the compactions met before it.
        let mut calls: BTreeMap<&str, (&str, usize, bool, usize)> = BTreeMap::new();
        let mut compactions = 0;
        let mut problems = Vec::new();
        let mut request = 0;
        for item in &self.items {
            match item {
                Item::Request(_) => request += 1,
                Item::Compaction { .. } => compactions += 1,
                Item::ToolCall { call_id, name, .. } => {
                    let previous = calls.insert(call_id, (name, request, false, compactions));
                    if previous.is_some_and(|(_, _, _, before)| before == compactions) {
                        problems.push(LinkProblem::DuplicateCall { call_id: call_id.clone(), request });
                    }
                }
                Item::ToolResult(r) => {
                    match calls.get_mut(r.call_id.as_str()) {
                        None => problems
                            .push(LinkProblem::ResultWithoutCall { call_id: r.call_id.clone(), request }),
                        Some((_, _, answered, _)) if *answered => problems
                            .push(LinkProblem::DuplicateResult { call_id: r.call_id.clone(), request }),
                        Some((_, _, answered, _)) => *answered = true,
                    }
                }
                _ => {}
            }
        }
        let mut open: Vec<LinkProblem> = calls
            .into_iter()
            .filter(|(_, (_, _, answered, _))| !answered)
            .map(|(id, (name, request, _, _))| LinkProblem::CallWithoutResult {
                call_id: id.to_owned(),
                name: name.to_owned(),
                request,
            })
            .collect();
        open.sort_by_key(|p| match p {
            LinkProblem::CallWithoutResult { request, .. } => *request,
            _ => 0,
        });
        problems.extend(open);
        problems
    }
}

#[cfg(test)]
mod link_tests {
    use super::*;

    fn call(id: &str) -> Item {
        Item::ToolCall { call_id: id.into(), name: "bash".into(), arguments: "{}".into() }
    }
    fn result(id: &str) -> Item {
        Item::ToolResult(ToolResult {
            call_id: id.into(),
            name: None,
            output: Output::Raw { output: String::new() },
            is_error: false,
            images: 0,
        })
    }

    #[test]
    fn only_the_codex_formats_host_a_web_search() {
        let trace = |format| Trace { format, conversations: Vec::new(), warnings: Vec::new() };
        assert_eq!(trace("codex").hosted_tools(), [HOSTED_WEB_SEARCH]);
        assert_eq!(trace("codex-exec").hosted_tools(), [HOSTED_WEB_SEARCH]);
        assert!(trace("openai-chat").hosted_tools().is_empty());
        assert!(trace("claude-code").hosted_tools().is_empty());
    }

    #[test]
    fn well_linked_conversations_have_no_problems() {
        let c = Conversation {
            items: vec![call("a"), result("a"), call("b"), result("b")],
            ..Default::default()
        };
        assert!(c.link_problems().is_empty());
    }

    #[test]
    fn a_call_sent_again_after_a_compaction_is_no_duplicate_but_twice_within_one_is() {
        let compaction = Item::Compaction { summary: None };
        let resent = vec![call("a"), result("a"), compaction.clone(), call("a"), result("a")];
        assert!(Conversation { items: resent, ..Default::default() }.link_problems().is_empty());
        let twice = vec![call("a"), result("a"), compaction, call("a"), result("a"), call("a"), result("a")];
        let got: Vec<String> = Conversation { items: twice, ..Default::default() }
            .link_problems()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, ["call id `a` is used again (after request 0)"]);
    }

    #[test]
    fn each_kind_of_broken_link_is_named_with_its_request() {
        let c = Conversation {
            items: vec![
                Item::Request(Request::default()),
                call("a"),
                result("x"),
                Item::Request(Request::default()),
                call("a"),
                result("a"),
                result("a"),
                call("open"),
            ],
            ..Default::default()
        };
        let got: Vec<String> = c.link_problems().iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "tool result for call `x` (after request 1) has no matching call",
                "call id `a` is used again (after request 2)",
                "call `a` has a second result (after request 2)",
                "call `open` (bash, after request 2) has no result",
            ]
        );
    }
}
