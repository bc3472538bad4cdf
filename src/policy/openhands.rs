//! `openhands` and `openhands-amortized` — two OpenHands condensers, with their defaults.
//!
//! Source: `All-Hands-AI/OpenHands`, `openhands/core/config/condenser_config.py`
//! (`ObservationMaskingCondenserConfig.attention_window = 100`,
//! `AmortizedForgettingCondenserConfig(max_size=100, keep_first=1)`) and
//! `openhands/memory/condenser/impl/observation_masking_condenser.py`,
//! `amortized_forgetting_condenser.py`. ANCHORS.md §3. The condenser runs on the event view before
//! every LLM call.
//!
//! **Two names, not one policy with a mode.** OpenHands configures them as two condenser types
//! (`type = "observation_masking"` / `"amortized"`) with disjoint parameters; two names keep each
//! spec's keys checked.
//!
//! - `openhands` (`ObservationMaskingCondenser`): an observation whose index in the event view is
//!   below `len(view) - attention_window` is replaced by `<MASKED>`. The window is counted in
//!   *events* ([`super::View::events`]: messages, actions, observations, and the `RecallAction`
//!   each user message brings), not tokens. Upstream the placeholder is an
//!   `AgentCondensationObservation`, which `ConversationMemory.process_events`
//!   (`openhands/memory/conversation_memory.py`) sends as a *user* message with no tool-call id;
//!   the assistant message that made the call waits in `pending_tool_call_action_messages` for a
//!   result that never comes and is left out of the prompt. On whole outputs (`on=output`, the
//!   default) the replay does the same to the call: its arguments leave the prompt. Two
//!   differences remain, both small: the call's name stays (a few tokens), and so do the text and
//!   reasoning of the response that made it (upstream they leave with the call; a response whose
//!   calls are masked only in part loses its unmasked results too, which the replay keeps). On the
//!   seed's contents (`on=content`) the summary stays with its call, as the seed requires.
//! - `openhands-amortized` (`AmortizedForgettingCondenser`): when the view holds more than
//!   `max_size` events, keep the first `keep_first` and the most recent `max_size / 2 - keep_first`
//!   and forget the rest; the view then grows again until it next exceeds `max_size`.
//!
//! **Forgetting whole events in the seed's model.** OpenHands drops forgotten events entirely —
//! messages, tool calls, observations. The seed's design never drops a summary, a call or a
//! message: the only thing a policy may remove is a result's content. So a forgotten block is
//! replayed as pruning the contents of the tool results in it (no placeholder: nothing is put in
//! their place), and everything else stays. The replay therefore *understates* what forgetting
//! saves, by the size of the forgotten messages, calls and summaries; the event counting follows
//! OpenHands' view (forgotten events no longer count towards `max_size`). In OpenHands the
//! condensation step returns instead of calling the LLM; the replay applies it before the request.

use super::{Content, Edit, Kind, On, Param, Policy, View};

/// The text OpenHands puts in place of a masked observation.
pub const MASKED: &str = "<MASKED>";

/// The `openhands` policy (observation masking).
pub const MASKING: Kind = Kind {
    name: "openhands",
    about: "ObservationMaskingCondenser: observations outside the last `attention_window` events \
            become <MASKED>",
    source: "OpenHands/OpenHands openhands/memory/condenser/impl/observation_masking_condenser.py (read at 76483ad), \
             openhands/memory/conversation_memory.py (read at bbc3142), core/config/condenser_config.py; \
             differences: docs/policies.md (ANCHORS.md §3)",
    params: &[
        super::ON_OUTPUT,
        Param {
            key: "attention_window",
            default: "100",
            about: "most recent events whose observations stay (config default; the class default is 5)",
        },
    ],
    build: |p| {
        let MaskingParams { on, attention_window } = p.typed()?;
        let window = p.at_least("attention_window", attention_window, 1)?;
        Ok(super::builder(move || super::with_on(on, Box::new(Masking { window, next: 0, on }))))
    },
};

/// The parameters of `openhands` (see [`MASKING`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct MaskingParams {
    pub on: On,
    pub attention_window: usize,
}

/// The `openhands-amortized` policy (amortized forgetting).
pub const AMORTIZED: Kind = Kind {
    name: "openhands-amortized",
    about: "AmortizedForgettingCondenser: past `max_size` events, forget all but the first \
            `keep_first` and the newest, down to max_size/2 (the forgotten results' contents are pruned)",
    source: "OpenHands openhands/memory/condenser/impl/amortized_forgetting_condenser.py (ANCHORS.md §3)",
    params: &[
        super::ON_OUTPUT,
        Param { key: "max_size", default: "100", about: "events in the view that trigger forgetting" },
        Param { key: "keep_first", default: "1", about: "first events never forgotten" },
    ],
    build: |p| {
        let AmortizedParams { on, max_size, keep_first } = p.typed()?;
        let max_size = p.at_least("max_size", max_size, 2)?;
        if keep_first >= max_size / 2 {
            return Err(p.bad(
                "keep_first",
                format!("must be less than half of max_size ({max_size}), got {keep_first}"),
            ));
        }
        Ok(super::builder(move || {
            let amortized =
                Amortized { max_size, keep_first, forgotten_upto: keep_first, next: 0, compactions: 0 };
            super::with_on(on, Box::new(amortized))
        }))
    },
};

/// The parameters of `openhands-amortized` (see [`AMORTIZED`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct AmortizedParams {
    pub on: On,
    pub max_size: usize,
    pub keep_first: usize,
}

/// Observation masking by event window.
pub struct Masking {
    window: usize,
    /// Conversation-wide index of the oldest result not yet masked or found inside the window.
    next: usize,
    /// On whole outputs, a masked observation's call leaves the prompt too.
    on: super::On,
}

impl Policy for Masking {
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let cut = view.events.saturating_sub(self.window);
        for r in &view.results[view.position(self.next)..] {
            if r.event >= cut {
                break;
            }
            if matches!(r.content, Content::Present(_)) {
                edits.push(Edit::Replace(r.index, MASKED.into()));
                if self.on == super::On::Output {
                    edits.push(Edit::ClearCall(r.index, String::new()));
                }
            }
            self.next = r.index + 1;
        }
    }
}

/// Amortized forgetting.
pub struct Amortized {
    max_size: usize,
    keep_first: usize,
    /// Events with an index in `keep_first .. forgotten_upto` (in the context) are forgotten.
    forgotten_upto: usize,
    /// Conversation-wide index of the oldest result not yet pruned or found outside the block.
    next: usize,
    /// Compactions seen: a compaction in the trace starts a new context, and event indices with it.
    compactions: usize,
}

impl Policy for Amortized {
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        if view.compactions != self.compactions {
            self.compactions = view.compactions;
            self.forgotten_upto = self.keep_first;
        }
        let in_view = view.events - (self.forgotten_upto - self.keep_first);
        if in_view <= self.max_size {
            return;
        }
        let target = self.max_size / 2;
        self.forgotten_upto = view.events - (target - self.keep_first);
        for r in &view.results[view.position(self.next)..] {
            if r.event >= self.forgotten_upto {
                break;
            }
            if r.event >= self.keep_first && matches!(r.content, Content::Present(_)) {
                edits.push(Edit::Prune(r.index));
            }
            self.next = r.index + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::Edit;
    use crate::policy::testing::{Convo, replay_spec, text};

    /// A system prompt, a task and its `RecallAction` (events 0, 1 and 2), then `n` steps; each
    /// step is a response with one tool call (an action event) and its result (an observation
    /// event).
    fn session(n: usize) -> Convo {
        Convo::new().system("sys").user("task").request().steps(n, "bash", 100)
    }

    #[test]
    fn masks_observations_outside_the_event_window() {
        // Before request k there are 3 + 2k events; result j is event 4 + 2j.
        let r = replay_spec(session(8), "openhands:attention_window=6");
        // k = 4: 11 events, cut at 5: result 0 (event 4) is masked.
        assert!(r.cleared_before(3).is_empty(), "k = 3: cut at 3, result 0 is event 4");
        assert_eq!(r.cleared_before(4), [0]);
        assert_eq!(r.replacement(4, 0), Some("<MASKED>"));
        assert_eq!(r.cleared_before(8), [4]);
        assert_eq!(r.prune_requests(), [4, 5, 6, 7, 8]);
    }

    #[test]
    fn on_whole_outputs_the_masked_observations_call_leaves_the_prompt() {
        // Upstream the masked observation is a user message without a tool-call id, so the call
        // that waited for it is never sent: its arguments go (the name stays).
        let r = replay_spec(session(8), "openhands:attention_window=6");
        assert_eq!(r.edits[4], [Edit::Replace(0, "<MASKED>".into()), Edit::ClearCall(0, String::new())]);
        // On the seed's contents the summary stays, and its call with it.
        let r = replay_spec(session(8), "openhands:attention_window=6,on=content");
        assert_eq!(r.edits[4], [Edit::Replace(0, "<MASKED>".into())]);
    }

    #[test]
    fn assistant_text_is_the_thought_of_the_call_it_precedes() {
        // Text followed by a call is one event; text alone is one event too.
        let c = Convo::new()
            .user("task")
            .request()
            .assistant("let me look")
            .tool("bash", text(100))
            .request()
            .assistant("done?")
            .request()
            .tool("bash", text(100))
            .request();
        // Events: task 0, its recall 1, (text + call) 2, result 0 → 3, "done?" 4, call 5,
        // result 1 → 6. Before the last request there are 7 events: window 3 → cut 4 masks
        // result 0; before request 2, 5 events, cut 2.
        let r = replay_spec(c, "openhands:attention_window=3");
        assert_eq!(r.cleared_before(3), [0]);
        assert!(r.cleared_before(2).is_empty(), "5 events, cut 2");
    }

    #[test]
    fn amortized_forgetting_prunes_the_forgotten_block_and_waits_until_the_view_refills() {
        // max_size 10, keep_first 1: forget when the view exceeds 10 events, down to 5.
        let r = replay_spec(session(12), "openhands-amortized:max_size=10,keep_first=1");
        // Before request k: 3 + 2k events. k = 4: 11 > 10 → keep event 0 and the last 4 (7-10),
        // forget 1-6: results 0 (event 4) and 1 (6).
        assert!(r.cleared_before(3).is_empty());
        assert_eq!(r.cleared_before(4), [0, 1]);
        // The view is 5 events; it exceeds 10 again after three more steps (k = 7: 11 in view).
        assert!(r.cleared_before(5).is_empty() && r.cleared_before(6).is_empty());
        assert_eq!(r.cleared_before(7), [2, 3, 4]);
        assert_eq!(r.prune_requests(), [4, 7, 10]);
        // Forgotten events leave no placeholder.
        assert_eq!(r.run.rows[12].categories.placeholders, 0);
    }

    #[test]
    fn a_compaction_in_the_trace_restarts_the_event_count() {
        let c = session(5).compaction("summary").request().steps(5, "bash", 100);
        let r = replay_spec(c, "openhands-amortized:max_size=10,keep_first=1");
        assert_eq!(r.cleared_before(4), [0, 1]);
        // After the compaction (request 6) the summary is event 0 (no recall: no user turn
        // starts) and result 5 + j is event 2 + 2j. Before request 6 + k there are 1 + 2k events:
        // 11 > 10 at k = 5, which keeps event 0 and the last 4 (7-10) and forgets 1-6: results
        // 5, 6, 7.
        assert_eq!(r.prune_requests(), [4, 11]);
        assert_eq!(r.cleared_before(11), [5, 6, 7]);
    }

    #[test]
    fn keep_first_must_be_under_half_of_max_size() {
        let e = crate::policy::PolicySpec::parse("openhands-amortized:max_size=10,keep_first=5").unwrap_err();
        assert!(e.to_string().contains("less than half"), "{e}");
    }
}
