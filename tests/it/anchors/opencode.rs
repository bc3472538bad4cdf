//! `opencode` beside `SessionCompaction.prune` as opencode writes it: `anomalyco/opencode`
//! `packages/opencode/src/session/compaction.ts` (indexed at `fd78ec6`; read at `001aa6c`, whose
//! `prune()` is the same), `util/token.ts` (`Math.round(length / 4)`):
//!
//! ```ts
//! loop: for (let msgIndex = msgs.length - 1; msgIndex >= 0; msgIndex--) {
//!   const msg = msgs[msgIndex]
//!   if (msg.info.role === "user") turns++
//!   if (turns < 2) continue
//!   if (msg.info.role === "assistant" && msg.info.summary) break loop
//!   for (let partIndex = msg.parts.length - 1; partIndex >= 0; partIndex--) {
//!     const part = msg.parts[partIndex]
//!     if (part.type === "tool")
//!       if (part.state.status === "completed") {
//!         if (PRUNE_PROTECTED_TOOLS.includes(part.tool)) continue
//!         if (part.state.time.compacted) break loop
//!         const estimate = Token.estimate(part.state.output)
//!         total += estimate
//!         if (total > PRUNE_PROTECT) { pruned += estimate; toPrune.push(part) }
//!       }
//!   }
//! }
//! if (pruned > PRUNE_MINIMUM) { ...compacted = Date.now() }
//! ```
//!
//! `prune()` runs when the prompt loop of a user turn exits (`session/prompt.ts`), so here it runs
//! on the history as it stood before a new human turn's user message, and its clears show from
//! that turn's first request; a pruned part is sent as `[Old tool result content cleared]`
//! (`message-v2.ts`). Inputs from the library: turn starts (a user message that is not
//! harness-injected), errors (`status` not `completed`), tool names, the output text (the
//! estimate is worked out here from its UTF-16 length). Modelled: `on=content` counts an output
//! the seed does not split but never prunes it.

use std::collections::BTreeSet;

use ctxbudget::measure::MeasuredItem;

use super::{Cleared, On, Session, prunable, requests, results, within};

const PLACEHOLDER: &str = "[Old tool result content cleared]";

/// `Token.estimate`: `Math.round(length / 4)`, `length` in UTF-16 units (half rounds up).
fn estimate(text: &str) -> u64 {
    let units = text.encode_utf16().count() as f64;
    (units / 4.0 + 0.5).floor() as u64
}

fn expected(s: &Session, on: On, protect: u64, minimum: u64) -> Vec<Cleared> {
    let items = &s.measured.items;
    let all = results(&s.measured);
    // Parts compacted so far (`time.compacted`), by result index; a compaction of the trace
    // starts a history where none of them is present.
    let mut compacted: BTreeSet<usize> = BTreeSet::new();
    let mut out = Vec::new();
    for (k, req) in requests(&s.measured).iter().enumerate() {
        // A human turn started since the previous request: the prune of the turn that ended.
        let new_turn = (req.previous..req.end)
            .find(|&p| matches!(items[p], MeasuredItem::Text { turn_start: true, .. }))
            .filter(|_| k > 0);
        if let Some(user) = new_turn {
            // The history when the previous turn ended: the context up to the new user message.
            let (mut turns, mut total, mut pruned, mut to_prune) = (0, 0u64, 0u64, Vec::new());
            let history = &items[req.start..user];
            let history_results = within(&all, req.start..user);
            let mut next_result = history_results.len();
            'walk: for (offset, item) in history.iter().enumerate().rev() {
                match item {
                    MeasuredItem::Text { turn_start: true, .. } => turns += 1,
                    MeasuredItem::ToolResult(..) => {
                        next_result -= 1;
                        let r = &history_results[next_result];
                        debug_assert_eq!(r.position, req.start + offset);
                        if turns < 2 || r.result.is_error || r.tool() == "skill" {
                            continue;
                        }
                        if compacted.contains(&r.index) {
                            break 'walk;
                        }
                        let e = estimate(&r.whole());
                        total += e;
                        if total > protect && prunable(r, on) {
                            pruned += e;
                            to_prune.push(r.index);
                        }
                    }
                    _ => {}
                }
            }
            if pruned > minimum {
                compacted.extend(to_prune);
            }
        }
        let first = within(&all, req.start..req.end).first().map_or(usize::MAX, |r| r.index);
        compacted.retain(|i| *i >= first);
        let results = compacted.iter().map(|i| (*i, PLACEHOLDER.to_owned())).collect();
        out.push(Cleared { results, ..Cleared::default() });
    }
    out
}

#[test]
fn opencode_prunes_what_prune_prunes_on_every_corpus_session() {
    let specs = [
        "opencode",
        "opencode:on=content",
        "opencode:protect=5000,minimum=1000",
        "opencode:protect=5000,minimum=1000,on=content",
        "opencode:protect=1000,minimum=0",
        "opencode:protect=1000,minimum=0,on=content",
    ];
    super::check("opencode", &specs, str::to_owned, |s, spec, on| {
        let (protect, minimum) = if spec.contains("protect=5000") {
            (5_000, 1_000)
        } else if spec.contains("protect=1000") {
            (1_000, 0)
        } else {
            (40_000, 20_000)
        };
        expected(s, on, protect, minimum)
    });
}
