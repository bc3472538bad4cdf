//! `anthropic` — Anthropic API context editing, `clear_tool_uses_20250919`, with its defaults.
//!
//! Source: platform.claude.com/docs/en/build-with-claude/context-editing (beta header
//! `context-management-2025-06-27`); ANCHORS.md §2. Options and defaults: `trigger` 100,000 input
//! tokens (or a number of tool uses), `keep` 3 tool uses, `clear_at_least` none, `exclude_tools`
//! none, `clear_tool_inputs` false. When the prompt exceeds the trigger the API clears the oldest
//! tool results, keeping the `keep` most recent tool uses, and replaces each with placeholder text;
//! the client keeps its full history, so the edit is recomputed from the full history for every
//! request (non-sticky) and `keep` slides forward with every new tool use.
//!
//! Decisions where the documentation is silent or needs reading (each is a parameter):
//! - **Placeholder.** The API's placeholder text is not published. We use
//!   `[Old tool result content cleared]`, the text Anthropic's own client (Claude Code's
//!   microcompact) writes for a cleared result; change it with `placeholder=`.
//! - **`clear_at_least`**, as documented: "context will only be modified if at least this many
//!   tokens can be removed". The server recomputes from the full history at every request: when
//!   the trigger is crossed, it clears every clearable result but the `keep` most recent if that
//!   frees at least `clear_at_least` tokens, and nothing otherwise (all or nothing per request).
//!   On an append-only history the amount only grows, so once it passes it passes at every later
//!   request and `keep` slides again with each tool use. `clear_at_least_steps=true` keeps the
//!   other reading, a named option for one reason: it is the batching the docs present
//!   `clear_at_least` for (make a cache break worth it), and a stateless server could reproduce
//!   it: the clearing point advances only when the advance frees at least that many more tokens
//!   than the previous request's edit did.
//! - **Counting.** The API counts the whole prompt with Anthropic's tokenizer, which ctxbudget
//!   does not have: the trigger reads the replayed context's tokens ([`Estimator::Real`]). By
//!   default the conversation is calibrated (`calibrate::apply`, docs/calibration.md): every count is the
//!   report's tokenizer scaled by the fitted ratio of provider tokens, and the context starts with
//!   the fitted overhead (an `unrecorded` item standing for the system prompt and tool schemas
//!   the log does not hold), so the trigger sees an estimate of the prompt in the provider's
//!   tokens. With `--overhead N` the overhead is `N` and counts stay in the report's tokenizer;
//!   with `--overhead 0` the trigger sees the log's conversation alone. The placeholder's own
//!   tokens (the report's tokenizer, unscaled) are subtracted from what a clear frees.
//! - **Tool inputs.** `clear_tool_inputs` is `false`, `true` (every cleared result's call) or a
//!   list of tool names whose calls are cleared, as the API's parameter takes; a cleared call's
//!   arguments become `{}` (the call's name stays).
//! - `sticky=true` models a client that persists the edited history instead: the trigger is then
//!   measured on the already-cleared context.

use super::{
    Capabilities, Content, Edit, Estimator, Kind, List, On, Param, Peak, Policy, PolicyReport, ResultState,
    Unfired, View,
};
use crate::tokens::TextSize;

/// Our choice of placeholder (the API's text is not published).
pub const PLACEHOLDER: &str = "[Old tool result content cleared]";

/// The `anthropic` policy.
pub const KIND: Kind = Kind {
    name: "anthropic",
    about: "clear_tool_uses_20250919: past the trigger, clear all tool results but the `keep` most \
            recent, recomputed per request from the full history",
    source: "Anthropic API context editing, platform.claude.com/docs/en/build-with-claude/context-editing (documentation, \
             no source); differences: docs/policies.md (ANCHORS.md §2)",
    params: &[
        super::ON_OUTPUT,
        Param {
            key: "trigger",
            default: "100000",
            about: "activate when the prompt exceeds this (see trigger_type)",
        },
        Param {
            key: "trigger_type",
            default: "input_tokens",
            about: "unit of trigger: input_tokens or tool_uses",
        },
        Param { key: "keep", default: "3", about: "most recent tool uses never cleared" },
        Param {
            key: "clear_at_least",
            default: "0",
            about: "clear only if at least this many tokens go, all or nothing per request (0 = none)",
        },
        Param {
            key: "clear_at_least_steps",
            default: "false",
            about: "read clear_at_least as a step: move the clearing point only by at least that many tokens",
        },
        Param {
            key: "exclude_tools",
            default: "",
            about: "tools whose results are never cleared (comma-separated)",
        },
        Param {
            key: "clear_tool_inputs",
            default: "false",
            about: "also replace the cleared calls' arguments with {}: true, false, or the tools whose calls (comma-separated)",
        },
        Param {
            key: "placeholder",
            default: PLACEHOLDER,
            about: "text in place of a cleared result (our choice: the API's is not published)",
        },
        Param {
            key: "sticky",
            default: "false",
            about: "the client persists the edits (trigger measured on the edited context)",
        },
    ],
    build: |p| {
        let params: AnthropicParams = p.typed()?;
        let clear_tool_inputs = match params.clear_tool_inputs.as_str() {
            "true" => Inputs::All,
            "false" | "" => Inputs::Tools(Vec::new()),
            list => Inputs::Tools(
                list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect(),
            ),
        };
        Ok(super::builder(move || {
            let p = params.clone();
            super::with_on(
                p.on,
                Box::new(Anthropic {
                    trigger: p.trigger,
                    by_tool_uses: p.trigger_type == TriggerType::ToolUses,
                    keep: p.keep,
                    clear_at_least: p.clear_at_least,
                    steps: p.clear_at_least_steps,
                    exclude_tools: p.exclude_tools,
                    clear_tool_inputs: clear_tool_inputs.clone(),
                    placeholder: p.placeholder,
                    sticky: p.sticky,
                    cleared_upto: 0,
                    edited_upto: 0,
                    sums: Sums::default(),
                    placeholder_measure: None,
                    peak: Peak::default(),
                    triggered: false,
                    cleared: false,
                }),
            )
        }))
    },
};

/// The parameters of `anthropic` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct AnthropicParams {
    pub on: On,
    pub trigger: u64,
    pub trigger_type: TriggerType,
    pub keep: usize,
    pub clear_at_least: u64,
    pub clear_at_least_steps: bool,
    pub exclude_tools: List,
    /// `true`, `false`, or the tools whose calls are cleared (comma-separated).
    pub clear_tool_inputs: String,
    pub placeholder: String,
    pub sticky: bool,
}

/// The unit of `anthropic`'s trigger (`trigger_type=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerType {
    /// Tokens of the prompt.
    InputTokens,
    /// Tool uses in the context.
    ToolUses,
}

/// Whose call arguments a clear replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Inputs {
    /// Every cleared result's call.
    All,
    /// The cleared results of these tools (none: `false`).
    Tools(Vec<String>),
}

/// Anthropic's tool-result clearing.
#[derive(Clone)]
pub struct Anthropic {
    trigger: u64,
    by_tool_uses: bool,
    keep: usize,
    clear_at_least: u64,
    /// `clear_at_least` read as a step of the clearing point, not as all or nothing.
    steps: bool,
    exclude_tools: Vec<String>,
    clear_tool_inputs: Inputs,
    placeholder: String,
    sticky: bool,
    /// Results with a conversation-wide index below this are cleared (the clearing point).
    cleared_upto: usize,
    /// Results below this index have had their edit (the clearing point only moves forward, so
    /// each result is edited once: sticky, the edit stays; non-sticky, it is kept with
    /// [`Edit::KeepPrevious`], which gives the same requests as resending the whole set, in time
    /// linear in the trace).
    edited_upto: usize,
    /// What clearing would free, summed as results leave the `keep` window.
    sums: Sums,
    /// The placeholder as the replay's meter measures it (measured once, at the first clear).
    placeholder_measure: Option<TextSize>,
    /// The most it measured against its trigger (input tokens or tool uses).
    peak: Peak,
    /// Whether the trigger was ever passed, and whether anything was then cleared.
    triggered: bool,
    cleared: bool,
}

/// Tokens a clear would free, summed over the results of the current context below `upto`
/// (each result is summed once, when it leaves the `keep` window), so the all-or-nothing test
/// costs nothing per request.
#[derive(Debug, Clone, Default)]
struct Sums {
    /// Compactions seen: a new one starts a context and the sums over.
    compactions: usize,
    /// Results with a conversation-wide index below this are summed.
    upto: usize,
    /// What clearing all of them frees.
    freed: u64,
    /// Of which, what clearing the results below the clearing point freed.
    at_point: u64,
}

impl Anthropic {
    fn clearable(&self, r: &ResultState<'_>) -> bool {
        matches!(r.content, Content::Present(_)) && !self.exclude_tools.iter().any(|t| t == r.tool())
    }

    fn clears_input(&self, r: &ResultState<'_>) -> bool {
        match &self.clear_tool_inputs {
            Inputs::All => true,
            Inputs::Tools(tools) => tools.iter().any(|t| t == r.tool()),
        }
    }

    /// What clearing `r` frees: its content (or whole output) less the placeholder, and its call's
    /// arguments when they are cleared too.
    fn freed(&self, view: &View<'_>, r: &ResultState<'_>, placeholder: u64) -> u64 {
        if !self.clearable(r) {
            return 0;
        }
        let mut freed = r.present().map_or(0, |c| view.tokens(Estimator::Real, &c));
        if self.clears_input(r) {
            // The arguments go, the name and `{}` stay: roughly the call's size.
            freed += r.call.map_or(0, |c| view.tokens(Estimator::Real, &c));
        }
        freed.saturating_sub(placeholder)
    }

    /// Moves the clearing point to `boundary` (the first result inside `keep`) if `clear_at_least`
    /// allows it.
    fn advance(&mut self, view: &View<'_>, boundary: usize) {
        if view.compactions != self.sums.compactions {
            self.sums = Sums { compactions: view.compactions, ..Sums::default() };
        }
        let measured = *self.placeholder_measure.get_or_insert_with(|| view.measure(&self.placeholder));
        let placeholder = view.tokens(Estimator::Real, &measured);
        let from = view.position(self.sums.upto);
        let to = view.position(boundary);
        let added: u64 =
            view.results[from.min(to)..to].iter().map(|r| self.freed(view, r, placeholder)).sum();
        self.sums.freed += added;
        self.sums.upto = self.sums.upto.max(boundary);
        let gain = if self.steps { self.sums.freed - self.sums.at_point } else { self.sums.freed };
        if gain >= self.clear_at_least {
            self.cleared_upto = boundary;
            self.sums.at_point = self.sums.freed;
        }
    }
}

impl Policy for Anthropic {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        super::fork_of(self)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { sticky: self.sticky, ..Capabilities::default() }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let measured = if self.by_tool_uses {
            view.results.len() as u64
        } else {
            view.tokens(Estimator::Real, &view.context)
        };
        self.peak.see(measured);
        let triggered = measured > self.trigger;
        self.triggered |= triggered;
        if triggered {
            let keep_from = view.results.len().saturating_sub(self.keep);
            if let Some(last) = keep_from.checked_sub(1).map(|i| &view.results[i]) {
                let boundary = last.index + 1;
                if boundary > self.cleared_upto {
                    self.advance(view, boundary);
                }
            }
        }
        // Recomputed from the full history: under the trigger, or short of `clear_at_least`,
        // nothing is cleared. A sticky client already holds its earlier clears; only new ones are
        // edits.
        if !triggered && !self.sticky {
            return;
        }
        if !self.sticky {
            edits.push(Edit::KeepPrevious);
        }
        let first = view.position(self.edited_upto);
        for r in view.results[first..].iter().take_while(|r| r.index < self.cleared_upto) {
            if self.clearable(r) {
                edits.push(Edit::Replace(r.index, self.placeholder.clone()));
                self.cleared = true;
                if self.clears_input(r) {
                    edits.push(Edit::ClearCall(r.index, "{}".into()));
                }
            }
        }
        self.edited_upto = self.edited_upto.max(self.cleared_upto);
    }

    fn report(&self) -> PolicyReport {
        let unit = if self.by_tool_uses { "tool uses" } else { "tokens" };
        let template = if self.triggered {
            format!(
                "trigger {} {unit} passed (peak {{peak}}), but no clear freed clear_at_least {} tokens \
                 beyond the newest {} results",
                self.trigger, self.clear_at_least, self.keep
            )
        } else {
            format!("trigger {} {unit} > peak {{peak}}", self.trigger)
        };
        PolicyReport {
            unfired: (!self.cleared).then(|| Unfired::new(template, self.peak.0)),
            ..PolicyReport::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::Edit;
    use crate::policy::testing::{Convo, replay_spec, text};

    /// A user prompt, then `n` steps of one 8,000-byte output each.
    fn session(n: usize) -> Convo {
        Convo::new().user("go").request().steps(n, "Read", 8_000)
    }

    #[test]
    fn clears_all_but_the_last_three_once_the_prompt_exceeds_the_trigger() {
        // Each step adds a call (4 + 2 bytes), a 93-byte summary and 8,000 bytes of content, so the
        // context before request k is 2 + k × 8,099 with k results in it: 10,000 is exceeded from
        // request 2 on, but only from request 4 is a result older than the last three.
        let r = replay_spec(session(8), "anthropic:trigger=10000");
        assert!(r.cleared_before(2).is_empty());
        assert!(r.cleared_before(3).is_empty());
        assert_eq!(r.cleared_before(4), [0]);
        assert_eq!(r.cleared_before(5), [0, 1]);
        assert_eq!(r.cleared_before(8), [0, 1, 2, 3, 4]);
        assert_eq!(r.replacement(8, 4), Some("[Old tool result content cleared]"));
        // Non-sticky: the whole set is sent each time, and each request changes one more result.
        assert_eq!(r.prune_requests(), [4, 5, 6, 7, 8]);
    }

    #[test]
    fn clear_at_least_is_all_or_nothing_per_request() {
        // 60 steps of 8,000 bytes (a 6-byte call each; on whole outputs, 8,006 bytes a step): the
        // 100,000 trigger is crossed at request 13 (2 + 13 × 8,006 = 104,080).
        let every = replay_spec(session(60), "anthropic");
        assert_eq!(every.prune_requests(), (13..=60).collect::<Vec<_>>(), "keep slides with every result");
        // Clearing frees 8,000 - 33 (the placeholder) = 7,967 per result. At request 13, 10 results
        // are outside the last 3: 79,670 ≥ 20,000, so the clear is the same as without the floor.
        let low = replay_spec(session(60), "anthropic:clear_at_least=20000");
        assert_eq!(low.edits, every.edits);
        // 100,000 needs 13 results (103,571; 12 give 95,604): nothing until request 16, then all
        // 13 at once, and from then on every request (the amount only grows).
        let high = replay_spec(session(60), "anthropic:clear_at_least=100000");
        assert!(high.cleared_before(15).is_empty());
        assert_eq!(high.cleared_before(16), (0..13).collect::<Vec<_>>());
        assert_eq!(high.prune_requests(), (16..=60).collect::<Vec<_>>());
    }

    #[test]
    fn clear_at_least_steps_moves_the_point_in_batches() {
        let every = replay_spec(session(60), "anthropic");
        let batched = replay_spec(session(60), "anthropic:clear_at_least=20000,clear_at_least_steps=true");
        assert_eq!(batched.prune_requests()[0], 13, "the first clear frees 10 results at once");
        // The point moves only when 20,000 more tokens can go: three results (23,901 ≥ 20,000;
        // two give 15,934 < 20,000).
        let events = batched.prune_requests();
        assert!(events.windows(2).all(|w| w[1] - w[0] == 3), "{events:?}");
        assert_eq!(events.len(), (60 - events[0]) / 3 + 1);
        // Batching costs some context: more tokens are sent in total than clearing at once.
        assert!(batched.run.summary.total_input_tokens > every.run.summary.total_input_tokens);
    }

    #[test]
    fn clear_tool_inputs_takes_a_list_of_tools() {
        let c = Convo::new()
            .user("go")
            .request()
            .tool("Read", text(8_000))
            .request()
            .tool("Grep", text(8_000))
            .request()
            .tool("Read", text(8_000))
            .request();
        let r = replay_spec(c, "anthropic:trigger=1000,keep=1,clear_tool_inputs=Grep,Bash");
        let p = || "[Old tool result content cleared]".to_owned();
        assert_eq!(
            r.edits[3],
            [Edit::Replace(0, p()), Edit::Replace(1, p()), Edit::ClearCall(1, "{}".into())]
        );
    }

    #[test]
    fn excluded_tools_are_never_cleared_and_inputs_clear_on_request() {
        let c = Convo::new()
            .user("go")
            .request()
            .tool("Read", text(8_000))
            .request()
            .tool("Bash", text(8_000))
            .request()
            .tool("Read", text(8_000))
            .request();
        let r = replay_spec(c, "anthropic:trigger=1000,keep=1,exclude_tools=Bash,clear_tool_inputs=true");
        assert_eq!(
            r.edits[3],
            [Edit::Replace(0, "[Old tool result content cleared]".into()), Edit::ClearCall(0, "{}".into())]
        );
        // The call's arguments were `{}` already: clearing them changes nothing but is still an edit.
        assert_eq!(r.run.rows[3].categories.tool_calls, 3 * 6);
    }

    #[test]
    fn a_tool_use_trigger_counts_results() {
        let r = replay_spec(session(6), "anthropic:trigger=4,trigger_type=tool_uses,keep=2");
        // 5 results are in the context before request 5: 5 > 4.
        assert!(r.cleared_before(4).is_empty());
        assert_eq!(r.cleared_before(5), [0, 1, 2]);
    }

    #[test]
    fn sticky_measures_the_trigger_on_the_cleared_context() {
        // Sticky: after clearing, the context drops under the trigger and stays there until it
        // grows back, so clears come in batches without clear_at_least.
        let r = replay_spec(session(30), "anthropic:trigger=40000,sticky=true");
        let events = r.prune_requests();
        assert!(events.len() >= 2);
        assert!(events.windows(2).all(|w| w[1] - w[0] > 1), "{events:?}");
        // Each event clears the new ones only.
        let k = events[1];
        assert!(r.cleared_before(k).iter().all(|i| *i >= r.cleared_before(events[0]).len()));
    }

    #[test]
    fn a_bad_trigger_type_is_an_error() {
        let e = crate::policy::PolicySpec::parse("anthropic:trigger_type=turns").unwrap_err().to_string();
        assert!(e.contains("expected input_tokens or tool_uses"), "{e}");
    }
}
