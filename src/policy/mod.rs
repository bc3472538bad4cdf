//! Prune policies: what to remove from the context before each LLM request.
//!
//! A policy sees a [`View`] of the context just before a request (the tool results still in it, with
//! their sizes, age in requests and human turns, and the context total) and answers with [`Edit`]s:
//! remove a result's content (the seed's prune: the summary stays), or put some text in its place
//! (a placeholder or a preview). A *sticky* policy's edits persist, as in the seed (once content is
//! `None` it stays so); a non-sticky policy is asked afresh for every request and its edits apply to
//! that request only, the way an API that edits the request copy behaves. A non-sticky policy whose
//! edits only accumulate may give just the new ones after [`Edit::KeepPrevious`]: the requests are
//! the same, and the replay stays linear in the trace.
//!
//! Policies are parsed from `name:key=value,...` specs ([`PolicySpec::parse`]) against the
//! [`registry`], which lists every policy with its parameters, defaults and source. A spec builds a
//! fresh policy per conversation. Policies decide with their anchor's own estimator
//! ([`Estimator`], resolved by [`View::tokens`] under `--decide-with`); reports always show real
//! tokens. One file per policy; nothing here prints or does I/O — a policy that meets a problem
//! (a time-based trigger on a trace without timestamps) reports it through [`Policy::report`].
//!
//! The policies named after shipped agents reproduce those agents' mechanisms and defaults
//! (`../shared/design/ANCHORS.md`, each file cites its sources). Each runs on one of two units,
//! its `on` parameter ([`On`], read through [`Capabilities::on`]):
//! - `on=output` (their default), as the agent does it: every tool output, of any size, is one
//!   whole that the policy may replace with the agent's own placeholder or preview. The replay
//!   sends what the seed's split sends until then (with nothing pruned the context is `none`'s,
//!   so savings are what the policy removes), but as one piece: each result's summary is empty
//!   and its content is the summary and content together (the report's `tool summaries`
//!   category is 0 and every output counts as prunable); policies decide on the whole output
//!   ([`ResultState::output`]), as the agent measures it;
//! - `on=content`, the same rule on the seed's model, where a tool result is a summary that
//!   always stays plus a content that prune removes: a placeholder replaces the *content*
//!   ([`Edit::Replace`]), and a result the seed's split left whole ([`Content::None`]: its summary
//!   *is* the output) counts towards an anchor's windows and totals as that anchor would count it
//!   (its tokens are tool output all the same), but it is never pruned and never counts as
//!   prunable: there is nothing the seed lets a policy remove from it.
//!
//! In both, a placeholder is measured and reported in the `placeholders` category.
//!
//! The [`Policy`] trait has one method per moment of a run, no more: before it, what the policy
//! is ([`Policy::capabilities`]: a [`Capabilities`] of plain answers that do not change while it
//! runs: sticky or not, its unit, whether it compacts, keeps the log's compactions as recorded or
//! reads the messages one by one; [`Default`] is the seed's prune); before each request, its edits
//! ([`Policy::before_request`]) and, for a policy that compacts, whether to summarise now
//! ([`Policy::compact`]); after it, what it met ([`Policy::report`]: its warnings and, when it
//! did not fire, its trigger, one [`PolicyReport`]); and a copy of it mid-run for a grid
//! ([`Policy::fork`]). A policy that wraps another (its unit, the harness's trigger beside it, a
//! recorder) forwards each of these once and changes only the field it is about
//! (`Capabilities { on: self.on, ..self.inner.capabilities() }`): a question added to the struct
//! later reaches the inner policy through every wrapper, where a method per question had to be
//! forwarded by each wrapper, and one forgotten changed numbers without a word.

pub mod anthropic;
pub mod budget;
pub mod claude_code_micro;
pub mod compact;
pub mod complexity_trap;
pub mod estimator;
pub mod file;
pub mod gemini;
pub mod keep_results;
pub mod keep_turns;
pub mod langchain;
pub mod messages;
pub mod none;
pub mod openclaw;
pub mod opencode;
pub mod openhands;
pub mod spec;
pub mod swe_agent;
#[cfg(test)]
pub(crate) mod testing;
pub mod unfired;

pub use crate::spec::{Builder, List, Minutes, Param, ParamError, Params, builder, parse_duration_ms};
pub(crate) use crate::spec::{fill_params, split_pairs};
pub use estimator::Estimator;
pub use messages::{CallText, Message, MessageSizes, Role};
pub use spec::{PolicySpec, Registry, registry};
pub use unfired::{Peak, Unfired, Unfireds};

/// A policy kind: its name, parameters, source and constructor ([`crate::spec::Kind`]).
pub type Kind<T = dyn Policy> = crate::spec::Kind<T>;

use crate::measure::{MeasuredResult, ResultSizes};
use crate::model::{Millis, Tokens};
use crate::tokens::{DecideWith, Meter, TextSize};

/// The state of a tool result's content in the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// The result was not split: its summary is the whole output, nothing to prune.
    None,
    /// The content is sent.
    Present(TextSize),
    /// The content was replaced by text of this size (a placeholder or a preview).
    Replaced(TextSize),
    /// The content was removed; only the summary is sent.
    Pruned,
}

/// A tool result as a policy sees it.
#[derive(Debug, Clone)]
pub struct ResultState<'a> {
    /// Index among all tool results of the conversation (what [`Edit`]s refer to).
    pub index: usize,
    /// The measured result (name, texts).
    pub result: &'a MeasuredResult,
    /// Its sizes and whether the tool split it.
    pub sizes: &'a ResultSizes,
    /// The summary sent for it.
    pub summary: TextSize,
    /// Its content's state (persistent state: edits of a non-sticky policy are not reflected).
    pub content: Content,
    /// The content as split, whatever happened to it since.
    pub original: Option<TextSize>,
    /// Index of the first request that sent it (requests before `request` have seen it
    /// `request - first_request` times).
    pub first_request: usize,
    /// Human turn during which it was produced (1 = after the first user message).
    pub turn: usize,
    /// Index of the item in the conversation (order of appearance).
    pub position: usize,
    /// Size of the linked tool call (name + arguments), if the call is in the context.
    pub call: Option<TextSize>,
    /// Events in the context before this result (OpenHands' unit, see [`View::events`]): its
    /// event index in the context.
    pub event: usize,
    /// Assistant messages in the context before this result (see [`View::assistant_messages`]).
    pub assistant_messages: usize,
}

impl ResultState<'_> {
    /// Tokens of the result as currently sent (summary + content or replacement).
    pub fn sent(&self) -> TextSize {
        let mut m = self.summary;
        match self.content {
            Content::Present(c) | Content::Replaced(c) => m += c,
            Content::None | Content::Pruned => {}
        }
        m
    }

    /// The present content, if any.
    pub fn present(&self) -> Option<TextSize> {
        match self.content {
            Content::Present(c) => Some(c),
            _ => None,
        }
    }

    /// The whole output as the tool produced it (after record-time transforms): what an anchor
    /// that knows nothing of the split measures.
    pub fn output(&self) -> TextSize {
        self.sizes.output()
    }

    /// The tool's name, or `""` when the trace does not record it.
    pub fn tool(&self) -> &str {
        self.result.name.as_deref().unwrap_or("")
    }
}

/// The context just before a request, as a policy sees it.
#[derive(Debug)]
pub struct View<'a> {
    /// Index of this request in the conversation (0-based).
    pub request: usize,
    /// When it is made, if recorded.
    pub timestamp: Option<Millis>,
    /// When the previous request was made, if recorded.
    pub previous_timestamp: Option<Millis>,
    /// Human turns started so far (1 after the first user message).
    pub turn: usize,
    /// Whether a human turn started since the previous request.
    pub turn_start: bool,
    /// Tool results in the context, oldest first (results before a compaction are gone).
    pub results: &'a [ResultState<'a>],
    /// The whole context as currently sent.
    pub context: TextSize,
    /// Of which the system prompt, recorded or not: the trace's own and the `--overhead` that
    /// stands for what it does not hold (the system prompt and tool schemas), with the
    /// calibration's framing (the provider's message structure). Anchors that count only the
    /// message list leave it out.
    pub system: TextSize,
    /// Chat messages in the context after the system prompt, as chat APIs with a separate system
    /// field list them: each user text, each tool result, and one assistant message per model
    /// response (its text, reasoning and tool calls together).
    pub messages: usize,
    /// OpenHands events in the context: the system prompt and each user text are one event each,
    /// a user text that starts a human turn adds the `RecallAction` OpenHands answers it with,
    /// each tool call is an action and each tool result an observation; a response's text and
    /// reasoning are the thought of its first action, or one message event when it made no call.
    pub events: usize,
    /// Assistant messages (model responses with any recorded text, reasoning or tool call) in the
    /// context.
    pub assistant_messages: usize,
    /// Compactions met so far in the conversation (the context restarts at each one).
    pub compactions: usize,
    /// Tokens of summary per token summarised away in the compactions the log itself recorded,
    /// when it recorded any and the policy compacts ([`Capabilities::compacts`]); `None` otherwise.
    pub log_summary_ratio: Option<f64>,
    /// The usage the log's agent reads before this request, as the replay estimates the provider
    /// would have reported it (Claude Code and opencode: the previous response's prompt and output;
    /// Codex: this request's prompt; `src/replay/reported.rs`): only in the view a compaction policy
    /// is asked with ([`Policy::compact`]), on a log of a known agent, once a request of the
    /// stretch recorded a size (`src/replay/reported.rs`); `None` otherwise.
    pub reported: Option<compact::Reported>,
    /// The user and assistant messages one by one, with their calls' texts, when the policy asks
    /// for them ([`Capabilities::message_sizes`]); `None` otherwise.
    pub message_sizes: Option<&'a MessageSizes<'a>>,
    /// What policies decide with (`--decide-with`).
    pub decide: DecideWith,
    /// The meter of the replay, for text a policy is about to write (placeholders, previews).
    pub meter: &'a Meter,
}

impl View<'_> {
    /// The result with conversation-wide index `index`, if it is in the context.
    pub fn result(&self, index: usize) -> Option<&ResultState<'_>> {
        let first = self.results.first()?.index;
        self.results.get(index.checked_sub(first)?)
    }

    /// How many results in the context have a conversation-wide index below `index` (the position
    /// where result `index` is or would be): the context's results have consecutive indices, so
    /// no search is needed.
    pub fn position(&self, index: usize) -> usize {
        let first = self.results.first().map_or(0, |r| r.index);
        index.saturating_sub(first).min(self.results.len())
    }

    /// Whether policies decide with their own anchor's estimator (the default).
    pub fn anchored(&self) -> bool {
        self.decide == DecideWith::Anchor
    }

    /// Tokens of the text measured by `m` as a policy whose anchor counts with `anchor` decides
    /// under `--decide-with`: the anchor's estimate, the report's tokens, or the fixed counter's.
    pub fn tokens(&self, anchor: Estimator, m: &TextSize) -> Tokens {
        self.tokens_with(|| anchor.tokens(m), m)
    }

    /// Like [`View::tokens`] for an anchor whose estimate needs more than a [`TextSize`] (it is
    /// computed by `anchor` only when deciding with anchors).
    pub fn tokens_with(&self, anchor: impl FnOnce() -> Tokens, m: &TextSize) -> Tokens {
        match self.decide {
            DecideWith::Anchor => anchor(),
            DecideWith::Real => m.tokens,
            DecideWith::Tokenizer(_) => m.decide,
        }
    }

    /// Measures text a policy is about to put in the context.
    pub fn measure(&self, text: &str) -> TextSize {
        self.meter.measure(text)
    }

    /// Milliseconds since the previous request, when both are timestamped.
    pub fn gap_ms(&self) -> Option<Millis> {
        Some(self.timestamp?.saturating_sub(self.previous_timestamp?))
    }
}

/// A change a policy makes before a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Remove the content of result `index` (the summary stays).
    Prune(usize),
    /// Put `text` in place of the content of result `index`.
    Replace(usize, String),
    /// Replace the arguments of the call linked to result `index` with `text` (the name stays).
    ClearCall(usize, String),
    /// For a non-sticky policy: the previous request's edits still apply (until a compaction),
    /// and the other edits of this request change or add to them. Without it a non-sticky
    /// policy's edits are the whole set for the request. A policy whose edits only accumulate
    /// (elide everything older than a point that moves forward) then gives only the new ones, and
    /// the replay stays linear in the trace. Sticky edits always stay; this changes nothing there.
    KeepPrevious,
}

/// What a policy prunes: the whole tool output as the agent does, or the seed's content.
///
/// As a parameter (`on=output`), the variants are declared in the order the error for another
/// value lists them (`expected output or content`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum On {
    /// Whole tool outputs of any size, as the agents clear them.
    Output,
    /// The seed's split: only a result's content goes (outputs at or under the threshold are
    /// whole summaries that stay).
    #[default]
    Content,
}

/// The `on` parameter of the policies named after agents: whole outputs by default.
pub const ON_OUTPUT: Param = Param {
    key: "on",
    default: "output",
    about: "output: whole tool outputs of any size, as the agent clears them; content: only the \
            content of the seed's split (the summary stays, outputs at or under the threshold are \
            never touched)",
};

/// A policy run on the unit its spec's `on` names ([`On`]): what [`with_on`] builds.
struct OnUnit {
    on: On,
    inner: Box<dyn Policy>,
}

impl Policy for OnUnit {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        Some(Box::new(OnUnit { on: self.on, inner: self.inner.fork()? }))
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { on: self.on, ..self.inner.capabilities() }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        self.inner.before_request(view, edits);
    }

    fn compact(&mut self, view: &View<'_>) -> Option<compact::Compaction> {
        self.inner.compact(view)
    }

    fn report(&self) -> PolicyReport {
        self.inner.report()
    }
}

/// `policy` on the unit `on` names ([`ON_OUTPUT`]), for a policy named after an agent: the policy
/// decides the same way on either, the replay gives it whole outputs or the seed's contents.
pub fn with_on(on: On, policy: Box<dyn Policy>) -> Box<dyn Policy> {
    Box::new(OnUnit { on, inner: policy })
}

/// What a policy is, as the replay reads it before a run ([`Policy::capabilities`]): the answers
/// that do not change while it runs. [`Default`] is the seed's prune: sticky, on the seed's
/// content, no compaction, on the harness the command line asks for, from the context's totals.
///
/// ```
/// use ctxbudget::{Capabilities, Edit, On, Policy, PolicySpec, View};
///
/// /// Replaces every output but the newest, asked afresh before each request.
/// struct NewestOnly;
/// impl Policy for NewestOnly {
///     fn capabilities(&self) -> Capabilities {
///         Capabilities { sticky: false, on: On::Output, ..Capabilities::default() }
///     }
///     fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
///         let older = &view.results[..view.results.len().saturating_sub(1)];
///         edits.extend(older.iter().map(|r| Edit::Replace(r.index, "[old]".into())));
///     }
/// }
/// assert!(!NewestOnly.capabilities().compacts);
///
/// // A built-in as its spec builds it: LangChain's clear on whole outputs, reading each message.
/// let langchain = PolicySpec::parse("langchain")?.build().capabilities();
/// let expected = Capabilities { sticky: false, on: On::Output, message_sizes: true, ..Default::default() };
/// assert_eq!(langchain, expected);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Edits persist (the seed's prune: once content is `None` it stays so); `false`: the policy
    /// is asked afresh for every request and its edits apply to that request only.
    pub sticky: bool,
    /// What the policy prunes: the seed's content or whole outputs ([`On`]).
    pub on: On,
    /// The policy may summarise the context: the replay asks [`Policy::compact`] and keeps the
    /// ratio of the log's own compactions ([`View::log_summary_ratio`]) only then, so a prune-only
    /// replay does none of that work.
    pub compacts: bool,
    /// The replay keeps the log's own compactions where they were recorded whatever
    /// `--harness-compaction` says: only the as-recorded baseline does
    /// ([`compact::harness::as_recorded`]).
    pub as_recorded: bool,
    /// The policy reads the messages one by one ([`View::message_sizes`]); the replay keeps them
    /// only then.
    pub message_sizes: bool,
}

impl Default for Capabilities {
    fn default() -> Capabilities {
        Capabilities {
            sticky: true,
            on: On::Content,
            compacts: false,
            as_recorded: false,
            message_sizes: false,
        }
    }
}

/// What a policy has to say after a run ([`Policy::report`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyReport {
    /// Problems met that the report should mention (policies cannot print): the pipeline puts
    /// them among the report's warnings, naming the conversation and the policy.
    pub warnings: Vec<String>,
    /// The policy's trigger, in its own unit, and the most it measured against it ([`Unfired`]),
    /// when the policy did not fire in the run. `None` when it fired, or when it does not describe
    /// its trigger (the comparison then gives the peak context only).
    pub unfired: Option<Unfired>,
}

/// A prune policy: what it is, what it edits before each request, when it compacts, what it says
/// after a run (the module's introduction gives the shape).
pub trait Policy: Send {
    /// What the policy is: its static answers ([`Capabilities`]). The default is the seed's prune
    /// ([`Capabilities::default`]); a policy overrides only what differs
    /// (`Capabilities { sticky: false, ..Capabilities::default() }`).
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    /// Decides what to edit before the request described by `view`, pushing onto `edits`.
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>);

    /// Asked after the request's edits are applied, with the context as it would be sent, when
    /// the policy compacts ([`Capabilities::compacts`]): a compaction to make before the request,
    /// if the policy's trigger fires ([`compact`]).
    fn compact(&mut self, _view: &View<'_>) -> Option<compact::Compaction> {
        None
    }

    /// Asked after a run: its warnings and, when it did not fire, its trigger ([`PolicyReport`]).
    fn report(&self) -> PolicyReport {
        PolicyReport::default()
    }

    /// A copy of the policy in its state now, to go on from here a second way: a grid that replays
    /// a conversation at several thresholds forks the replay at the first result they split
    /// differently (the replay's `replay_forked`). `None` (the default): the policy cannot be
    /// copied, and the grid replays that way from the start (slower, the same runs). A policy that
    /// wraps another copies it too; one whose state is a plain value answers [`fork_of`].
    fn fork(&self) -> Option<Box<dyn Policy>> {
        None
    }
}

/// [`Policy::fork`] of a policy whose state is a plain value: a clone.
pub fn fork_of<P: Policy + Clone + 'static>(policy: &P) -> Option<Box<dyn Policy>> {
    Some(Box::new(policy.clone()))
}

/// Watches the idle gap before each request for a time-based policy (OpenClaw's cache TTL, Claude
/// Code's idle microcompact) and remembers requests without a timestamp, so the policy can warn
/// that it never fires there.
#[derive(Debug, Clone, Default)]
pub struct GapWatch {
    requests: usize,
    untimed: usize,
}

impl GapWatch {
    /// The gap since the previous request, or `None` when either has no timestamp (or this is the
    /// first request). Call once per request.
    pub fn gap(&mut self, view: &View<'_>) -> Option<Millis> {
        self.requests += 1;
        if view.timestamp.is_none() {
            self.untimed += 1;
        }
        if view.request == 0 { None } else { view.gap_ms() }
    }

    /// The warning for requests without timestamps, if there were any.
    pub fn warnings(&self, policy: &str) -> Vec<String> {
        if self.untimed == 0 {
            Vec::new()
        } else if self.untimed == self.requests {
            vec![format!(
                "the trace records no timestamps, so `{policy}` (which prunes after an idle gap) never fires"
            )]
        } else {
            vec![format!(
                "{} of {} requests have no timestamp; `{policy}` (which prunes after an idle gap) cannot \
                 fire on them or on the request after each",
                self.untimed, self.requests
            )]
        }
    }
}

/// Tool-name patterns where `*` matches any run of characters and every other character stands
/// for itself, compared case-insensitively (OpenClaw's `tools_allow` / `tools_deny`): compiled once
/// with `globset`, each pattern's text outside its stars escaped (and `\` not an escape) so that
/// `?`, `[`, `{` or `\` in a pattern match only themselves: `*` is the one wildcard here.
#[derive(Debug, Clone)]
pub struct ToolPatterns {
    set: globset::GlobSet,
}

impl ToolPatterns {
    /// Compiles `patterns`; none matches no name.
    pub fn new(patterns: &[String]) -> ToolPatterns {
        let mut set = globset::GlobSetBuilder::new();
        for pattern in patterns {
            let escaped: Vec<String> = pattern.split('*').map(globset::escape).collect();
            // Runs of stars are one star (`**` would be a recursive-directory glob).
            let mut glob = escaped.join("*");
            while glob.contains("**") {
                glob = glob.replace("**", "*");
            }
            let glob = globset::GlobBuilder::new(&glob)
                .case_insensitive(true)
                .literal_separator(false)
                .backslash_escape(false)
                .build()
                .unwrap_or_else(|e| unreachable!("an escaped pattern with stars compiles: {e}"));
            set.add(glob);
        }
        ToolPatterns { set: set.build().unwrap_or_else(|e| unreachable!("escaped globs compile: {e}")) }
    }

    /// Whether there is no pattern.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Whether any pattern matches `name`.
    pub fn matches(&self, name: &str) -> bool {
        self.set.is_match(name)
    }
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters (case-insensitive);
/// see [`ToolPatterns`] to compile a list once.
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    ToolPatterns::new(&[pattern.to_owned()]).matches(name)
}

/// Results whose content is present, oldest first.
pub fn present<'v>(view: &'v View<'v>) -> impl Iterator<Item = &'v ResultState<'v>> {
    view.results.iter().filter(|r| matches!(r.content, Content::Present(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_keys_and_defaults() {
        let s = PolicySpec::parse(" keep-turns:n=5 ").unwrap();
        assert_eq!(s.as_str(), "keep-turns:n=5");
        assert_eq!(s.params.text("n"), "5");
        let s = PolicySpec::parse("keep-turns").unwrap();
        assert_eq!(s.params.text("n"), "3");
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let e = PolicySpec::parse("keep-last:n=3").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown policy `keep-last` in `keep-last:n=3`; valid policies: none, keep-turns, keep-results, \
             budget, anthropic, langchain, opencode, gemini, swe-agent, complexity-trap, openhands, \
             openhands-amortized, openclaw, claude-code-micro, compact:claude-code, compact:codex, \
             compact:opencode, compact:anthropic-sdk, compact:openhands, compact:goose, \
             compact:goose-tools"
        );
    }

    #[test]
    fn an_unknown_key_lists_the_valid_keys() {
        let e = PolicySpec::parse("budget:max=10,goal=5").unwrap_err().to_string();
        assert_eq!(
            e,
            "policy `budget` has no parameter `goal` (in `budget:max=10,goal=5`); valid keys: max, target"
        );
        let e = PolicySpec::parse("none:x=1").unwrap_err().to_string();
        assert!(e.ends_with("valid keys: none"), "{e}");
    }

    #[test]
    fn a_bad_value_names_the_key() {
        let e = PolicySpec::parse("keep-turns:n=three").unwrap_err().to_string();
        assert!(e.starts_with("bad value for `n` in `keep-turns:n=three`: `three`"), "{e}");
        let e = PolicySpec::parse("budget:max=100,target=200").unwrap_err().to_string();
        assert!(e.contains("target"), "{e}");
    }

    #[test]
    fn an_item_without_equals_continues_a_list_value() {
        let s = PolicySpec::parse("anthropic:exclude_tools=Read, Bash,keep=2").unwrap();
        assert_eq!(s.params.text("exclude_tools"), "Read,Bash");
        assert_eq!(s.params.text("keep"), "2");
    }

    #[test]
    fn durations_take_a_unit_or_the_bare_unit() {
        assert_eq!(parse_duration_ms("5m", "m"), Some(300_000));
        assert_eq!(parse_duration_ms("5", "m"), Some(300_000));
        assert_eq!(parse_duration_ms("90s", "m"), Some(90_000));
        assert_eq!(parse_duration_ms("1.5h", "m"), Some(5_400_000));
        assert_eq!(parse_duration_ms("250ms", "m"), Some(250));
        assert_eq!(parse_duration_ms("5 min", "m"), None);
        assert_eq!(parse_duration_ms("", "m"), None);
        let e = PolicySpec::parse("openclaw:ttl=soon").unwrap_err().to_string();
        assert!(e.contains("bad value for `ttl`") && e.contains("5m"), "{e}");
    }

    #[test]
    fn wildcards_match_case_insensitively() {
        assert!(wildcard_match("exec", "Exec"));
        assert!(wildcard_match("*image*", "view_image_file"));
        assert!(wildcard_match("web*", "WebFetch"));
        assert!(!wildcard_match("web*", "fetch_web"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("a*b*c", "aXbYbZc"));
        assert!(!wildcard_match("a*b", "aXbY"));
        // Only `*` is special: glob syntax in a name matches itself.
        assert!(wildcard_match("web?[1]{a,b}*", "WEB?[1]{a,b}/x"));
        assert!(!wildcard_match("web?", "webs"));
        assert!(wildcard_match("a**b", "ab") && wildcard_match("", "") && !wildcard_match("", "x"));
        assert!(wildcard_match("back\\slash", "back\\slash"));
    }

    #[test]
    fn every_registered_policy_builds_with_its_defaults_and_names_a_source() {
        for k in registry() {
            let spec = PolicySpec::parse(k.name).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            let _ = spec.build();
            assert!(!k.source.is_empty() && !k.about.is_empty(), "{}", k.name);
        }
        let names: Vec<&str> = registry().iter().map(|k| k.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "duplicate names: {names:?}");
    }

    /// A policy that gives fixed answers and edits nothing.
    struct Answers {
        caps: Capabilities,
        report: PolicyReport,
    }

    impl Policy for Answers {
        fn capabilities(&self) -> Capabilities {
            self.caps
        }

        fn before_request(&mut self, _view: &View<'_>, _edits: &mut Vec<Edit>) {}

        fn report(&self) -> PolicyReport {
            self.report.clone()
        }
    }

    /// Answers unlike the defaults in every field, and a report with both parts.
    fn unusual(name: &str, peak: u64) -> Answers {
        let caps = Capabilities {
            sticky: false,
            on: On::Output,
            compacts: true,
            as_recorded: true,
            message_sizes: true,
        };
        let unfired = Some(Unfired::new(format!("{name} at {{peak}}"), peak));
        Answers { caps, report: PolicyReport { warnings: vec![format!("{name} warns")], unfired } }
    }

    #[test]
    fn the_defaults_are_the_seeds_prune() {
        let caps = Capabilities {
            sticky: true,
            on: On::Content,
            compacts: false,
            as_recorded: false,
            message_sizes: false,
        };
        assert_eq!(Capabilities::default(), caps);
        struct Seed;
        impl Policy for Seed {
            fn before_request(&mut self, _view: &View<'_>, _edits: &mut Vec<Edit>) {}
        }
        assert_eq!((Seed.capabilities(), Seed.report()), (caps, PolicyReport::default()));
    }

    #[test]
    fn every_wrapper_passes_on_what_it_does_not_change() {
        let inner = || Box::new(unusual("inner", 7)) as Box<dyn Policy>;
        let (caps, report) = (unusual("inner", 7).caps, unusual("inner", 7).report);
        let on = with_on(On::Content, inner());
        assert_eq!(
            (on.capabilities(), on.report()),
            (Capabilities { on: On::Content, ..caps }, report.clone())
        );
        let baseline = compact::harness::as_recorded(with_on(On::Output, inner()));
        assert_eq!((baseline.capabilities(), baseline.report()), (caps, report.clone()));
        // Harnessed: it compacts, so it is wrapped; no compaction was recorded, so no warning is added.
        let harnessed = compact::harnessed(inner());
        assert_eq!((harnessed.capabilities(), harnessed.report()), (caps, report.clone()));
        let (mut policy, mut trigger) = (unusual("inner", 7), unusual("trigger", 9));
        let beside = compact::harness::WithHarness::new(&mut policy, &mut trigger);
        assert_eq!((beside.capabilities(), beside.report()), (caps, report));
    }

    #[test]
    fn a_combination_reads_its_prune_policy_and_reports_both_parts() {
        let prune = Answers {
            caps: Capabilities { sticky: false, ..Capabilities::default() },
            ..unusual("prune", 3)
        };
        let compaction = unusual("compact", 9);
        let both = compact::combine(Box::new(prune), Box::new(compaction));
        let caps =
            Capabilities { sticky: false, compacts: true, message_sizes: true, ..Capabilities::default() };
        assert_eq!(both.capabilities(), caps);
        let report = both.report();
        assert_eq!(report.warnings, ["prune warns", "compact warns"]);
        assert_eq!(report.unfired, Some(Unfired::new("prune at 3; compact at {peak}", 9)));
        // One part fired: the combination fired.
        let fired =
            Answers { report: PolicyReport { warnings: Vec::new(), unfired: None }, ..unusual("prune", 3) };
        let both = compact::combine(Box::new(fired), Box::new(unusual("compact", 9)));
        assert_eq!(both.report(), PolicyReport { warnings: vec!["compact warns".into()], unfired: None });
    }

    #[test]
    fn malformed_specs_say_what_is_expected() {
        for bad in ["keep-turns:", "keep-turns:n"] {
            let e = PolicySpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("expected `name` or `name:key=value"), "{e}");
        }
    }
}
