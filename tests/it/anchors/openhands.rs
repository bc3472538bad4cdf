//! `openhands` beside `ObservationMaskingCondenser` as OpenHands writes it: `OpenHands/OpenHands`
//! `openhands/memory/condenser/impl/observation_masking_condenser.py` (read at `76483ad`):
//!
//! ```python
//! for i, event in enumerate(view):
//!     if isinstance(event, Observation) and i < len(view) - self.attention_window:
//!         results.append(AgentCondensationObservation('<MASKED>'))
//!     else:
//!         results.append(event)
//! ```
//!
//! and `openhands/memory/conversation_memory.py` (read at `bbc3142`): the masked observation is
//! sent as a user message with no tool-call id, so the action that made the call waits in
//! `pending_tool_call_action_messages` and never reaches the prompt (on whole outputs the call's
//! arguments go: the policy clears the call).
//!
//! The events of the view, built here from the conversation's items: the system prompt is one
//! event (`SystemMessageAction`; the calibrated overhead stands for it when the trace records
//! none); each user message is a `MessageAction`, and one that starts a human turn brings the
//! `RecallAction` OpenHands answers it with; in a model response each tool call is an action, the
//! response's text and reasoning the `thought` of its first action, or one `MessageAction` when it
//! made no call; each tool result is an observation; a compaction summary is one event. Modelled:
//! `on=content` masks only a result the seed splits.

use ctxbudget::measure::{Category, MeasuredItem};

use super::{Cleared, On, Session, prunable, requests, results};

const MASKED: &str = "<MASKED>";

/// The event index of each item of `items` that is a tool result, and the number of events.
fn events(items: &[MeasuredItem]) -> (Vec<(usize, usize)>, usize) {
    let recorded_system =
        items.iter().any(|i| matches!(i, MeasuredItem::Text { category: Category::System, .. }));
    let (mut n, mut observations) = (0, Vec::new());
    // Whether the current response has its first event, and whether that event took a call.
    let (mut opened, mut calls) = (false, 0);
    for (position, item) in items.iter().enumerate() {
        match item {
            MeasuredItem::Request { .. } => (opened, calls) = (false, 0),
            MeasuredItem::Text { category, turn_start, .. } => match category {
                Category::System => n += 1,
                Category::Unrecorded => n += usize::from(!recorded_system),
                Category::Assistant
                | Category::Thinking
                | Category::HiddenReasoning
                | Category::ServerSide => {
                    if !opened {
                        opened = true;
                        n += 1;
                    }
                }
                // Message structure around items already counted (the calibration's framing).
                Category::Images | Category::Framing => {}
                _ => n += 1 + usize::from(*turn_start),
            },
            MeasuredItem::ToolCall { .. } => {
                // The first call is the event the response's text opened, if any.
                if !(opened && calls == 0) {
                    n += 1;
                }
                opened = true;
                calls += 1;
            }
            MeasuredItem::ToolResult(..) => {
                observations.push((position, n));
                n += 1;
            }
            MeasuredItem::Compaction { summary } => n += usize::from(summary.is_some()),
            // The anchor sessions record no clearing; a cleared result stays one event.
            MeasuredItem::Cleared { .. } => {}
        }
    }
    (observations, n)
}

fn expected(s: &Session, on: On, window: usize) -> Vec<Cleared> {
    let all = results(&s.measured);
    requests(&s.measured)
        .iter()
        .map(|req| {
            let (observations, n) = events(&s.measured.items[req.start..req.end]);
            let cut = n.saturating_sub(window);
            let mut cleared = Cleared::default();
            for (offset, event) in observations {
                let r = &all[all.partition_point(|r| r.position < req.start + offset)];
                if event < cut && prunable(r, on) {
                    cleared.results.insert(r.index, MASKED.to_owned());
                    if on == On::Output {
                        cleared.calls.insert(r.index);
                    }
                }
            }
            cleared
        })
        .collect()
}

#[test]
fn openhands_masks_what_observation_masking_masks_on_every_corpus_session() {
    let specs = [
        "openhands",
        "openhands:on=content",
        "openhands:attention_window=20",
        "openhands:attention_window=20,on=content",
    ];
    super::check("openhands", &specs, str::to_owned, |s, spec, on| {
        expected(s, on, if spec.contains("window=20") { 20 } else { 100 })
    });
}
