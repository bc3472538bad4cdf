//! `compact:goose-tools` — Goose's tool-pair summarisation, as block/goose main has it at
//! 8d844eecbdfd (version 1.47.0, 2026-08-21; read from its mirror `dayanruben/goose`), on by
//! default (`GOOSE_TOOL_PAIR_SUMMARIZATION`, default true since 1.27.0, 475968db64b9):
//!
//! - **Trigger** (`context_mgmt/mod.rs`, `tool_ids_to_summarize`): at each LLM request of a reply
//!   (the agent's loop after one user message), the agent-visible tool calls are counted, less the
//!   calls made in this reply (`protect_last_n`); when more than `cutoff + 10` remain, the oldest
//!   10 (`TOOLCALL_SUMMARIZATION_BATCH_SIZE`) are summarised. `cutoff` is `GOOSE_TOOL_CALL_CUTOFF`,
//!   else `compute_tool_call_cutoff`: `clamp(3 · ⌊window · threshold⌋ / 20,000, 10, 500)` (15 at
//!   128k and 0.8, 24 at 200k), the threshold being `GOOSE_AUTO_COMPACT_THRESHOLD` (0.8).
//! - **Once per reply, seen from the next** (`agents/agent.rs`, `reply_internal`): the batch
//!   runs in the background beside the request; once it has run, `tool_pair_summarization_done`
//!   stops any other batch in that reply, and its results are written to the session store only
//!   (the pairs' messages marked agent-invisible, the summaries appended), not to the reply's own
//!   conversation, so they reach the model from the next reply on. Since the calls made in the
//!   reply are exempt, the count is the same at every request of a reply: a batch is chosen at a
//!   reply's first request or not at all in it.
//! - **Summary** (`summarize_tool_call`): one call per pair, sending the pair's two messages as
//!   text with a 97-token system prompt (o200k, docs/compaction.md, "Billing"), with prompt
//!   caching and thinking off (`model_config.rs`, `one_shot_model_config`), so each call is
//!   priced at the plain input price, none of it read or written ([`CallCache::Off`];
//!   docs/compaction.md, "Billing"); the reply, one
//!   user-role message, replaces the pair. Nothing bounds its length but the prompt, which asks for
//!   "a single message" and gives one sentence as its example: that sentence's 11 o200k tokens
//!   are the default `summary_tokens` (measured as the prompt is; no Goose log records a summary
//!   to measure one by).
//!
//! A policy of its own rather than a parameter of `compact:goose`: the replay asks a policy for
//! one compaction per request, and this one replaces pairs in place ([`Pairs`]) where
//! `compact:goose` summarises the context. A reply is a human turn here ([`View::turn`]); Goose
//! counts tool calls, and the replay counts each tool result with its call as one pair. A batch's
//! calls are billed at the request its summaries first reach (the next reply's first request), so
//! a batch chosen in the last reply is neither seen nor billed, and a log with one human turn (a
//! benchmark task), one reply, never changes. Nothing here prints or does I/O.

use super::{CallCache, Compaction, Pairs, Summary};
use crate::model::Tokens;
use crate::policy::{Capabilities, Edit, Kind, Param, Policy, View};

/// Pairs a batch summarises (`TOOLCALL_SUMMARIZATION_BATCH_SIZE`); also the margin above the
/// cutoff the trigger waits for.
const BATCH: usize = 10;

/// The `compact:goose-tools` policy.
pub const KIND: Kind = Kind {
    name: "compact:goose-tools",
    about: "Goose tool-pair summarisation: when more than cutoff + 10 tool calls precede the current \
            reply, its oldest 10 call/result pairs are each replaced by a one-message summary, from \
            the next reply on",
    source: "block/goose crates/goose/src/context_mgmt/mod.rs@8d844eecbdfd (tool_ids_to_summarize, \
             compute_tool_call_cutoff, summarize_tool_call; GOOSE_TOOL_PAIR_SUMMARIZATION default \
             true) and crates/goose/src/agents/agent.rs@8d844eecbdfd (one batch per reply, seen from \
             the next)",
    params: &[
        Param { key: "window", default: "128000", about: "the model's context window, tokens" },
        Param {
            key: "threshold",
            default: "0.8",
            about: "GOOSE_AUTO_COMPACT_THRESHOLD: fraction of the window the cutoff scales with \
                    (outside (0, 1]: 0.8)",
        },
        Param {
            key: "cutoff",
            default: "0",
            about: "GOOSE_TOOL_CALL_CUTOFF: tool calls kept (0: Goose's own, clamp(3 * window * \
                    threshold / 20000, 10, 500))",
        },
        Param {
            key: "summary_tokens",
            default: "11",
            about: "tokens of each pair's summary (the prompt's one-sentence example, o200k)",
        },
        Param {
            key: "prompt_tokens",
            default: "97",
            about: "tokens of the tool-pair summarisation prompt, sent with each pair (o200k)",
        },
    ],
    build: |p| {
        let q: GooseToolsParams = p.typed()?;
        p.at_least("window", q.window, 1)?;
        let cutoff = if q.cutoff > 0 { q.cutoff } else { cutoff(q.window, q.threshold) };
        let (summary, prompt) = (q.summary_tokens, q.prompt_tokens);
        Ok(crate::policy::builder(move || {
            Box::new(ToolPairs::new(cutoff, summary, prompt)) as Box<dyn Policy>
        }))
    },
};

/// The parameters of `compact:goose-tools`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct GooseToolsParams {
    /// The context window.
    pub window: u64,
    /// The auto-compaction threshold the cutoff scales with.
    pub threshold: f64,
    /// A fixed cutoff (0: computed).
    pub cutoff: usize,
    /// Tokens of each summary.
    pub summary_tokens: Tokens,
    /// Tokens of the prompt of each summarisation call.
    pub prompt_tokens: Tokens,
}

/// Goose's `compute_tool_call_cutoff`: a threshold outside (0, 1] counts as 0.8, and the
/// effective window is truncated before the division.
pub fn cutoff(window: u64, threshold: f64) -> usize {
    let threshold = if threshold > 0.0 && threshold <= 1.0 { threshold } else { 0.8 };
    let effective = (window as f64 * threshold) as u64;
    (3 * effective / 20_000).clamp(10, 500) as usize
}

/// The policy: where the summarised pairs end, the batch waiting for the next reply, and the turn
/// that chose it.
struct ToolPairs {
    cutoff: usize,
    summary: Tokens,
    prompt: Tokens,
    /// Conversation-wide index of the first result not summarised (those before are gone or
    /// waiting in `pending`).
    next: usize,
    /// The batch chosen in this reply, which reaches the context at the next.
    pending: Option<Pairs>,
    /// The human turn whose reply chose a batch.
    chose_in: Option<usize>,
}

impl ToolPairs {
    fn new(cutoff: usize, summary: Tokens, prompt: Tokens) -> ToolPairs {
        ToolPairs { cutoff, summary, prompt, next: 0, pending: None, chose_in: None }
    }

    /// The oldest `BATCH` pairs not summarised, if more than `cutoff + BATCH` of them precede the
    /// current reply.
    fn choose(&self, view: &View<'_>) -> Option<Pairs> {
        let visible = &view.results[view.position(self.next)..];
        let this_reply = visible.iter().filter(|r| r.turn == view.turn).count();
        if visible.len() - this_reply <= self.cutoff + BATCH {
            return None;
        }
        Some(Pairs { from: visible[0].index, to: visible[BATCH - 1].index + 1 })
    }
}

impl Policy for ToolPairs {
    fn before_request(&mut self, _view: &View<'_>, _edits: &mut Vec<Edit>) {}

    fn capabilities(&self) -> Capabilities {
        Capabilities { compacts: true, ..Capabilities::default() }
    }

    fn compact(&mut self, view: &View<'_>) -> Option<Compaction> {
        let due = if view.turn_start { self.pending.take() } else { None };
        if let Some(p) = due {
            self.next = p.to;
        }
        // Results a compaction or a restarted context took away are not counted.
        self.next = self.next.max(view.results.first().map_or(0, |r| r.index));
        if self.pending.is_none() && self.chose_in != Some(view.turn) {
            if let Some(batch) = self.choose(view) {
                self.pending = Some(batch);
                self.next = batch.to;
                self.chose_in = Some(view.turn);
            }
        }
        due.map(|pairs| Compaction {
            summary: Summary::Tokens(self.summary),
            keep_from: None,
            prompt_tokens: self.prompt,
            whole_context: false,
            cache: CallCache::Off,
            pairs: Some(pairs),
        })
    }
}

#[cfg(test)]
mod tests {
    //! On small hand-built conversations (one token per byte): which pairs leave, in what order,
    //! at which request, with what summary and what billing.

    use super::cutoff;
    use crate::policy::testing::{Convo, Replayed, replay_spec};
    use crate::result::RequestRow;

    /// Tokens of one `read` pair of `bytes` output bytes as sent (call and result), measured on the
    /// replay of `none`: what a step adds to the context.
    fn pair_tokens(bytes: usize) -> u64 {
        let rows =
            replay_spec(Convo::new().system("sys").user("go").request().steps(2, "read", bytes), "none")
                .run
                .rows;
        rows[2].context_tokens - rows[1].context_tokens
    }

    /// A conversation of replies: each `(n)` is a user message, a request, then `n` steps of a
    /// 40-byte `read` and a request.
    fn replies(turns: &[usize]) -> Convo {
        let mut c = Convo::new().system("sys");
        for (t, &n) in turns.iter().enumerate() {
            c = c.user(&format!("u{t}")).request().steps(n, "read", 40);
        }
        c
    }

    /// The request index of the first request of each reply in `replies(turns)`.
    fn reply_starts(turns: &[usize]) -> Vec<usize> {
        turns
            .iter()
            .scan(0, |at, &n| {
                let start = *at;
                *at += n + 1;
                Some(start)
            })
            .collect()
    }

    fn summarised(r: &RequestRow) -> bool {
        r.summarization_input_tokens > 0
    }

    fn made_at(replayed: &Replayed) -> Vec<usize> {
        replayed.run.rows.iter().filter(|r| summarised(r)).map(|r| r.request).collect()
    }

    #[test]
    fn goose_computes_its_cutoff_from_the_window_as_its_own_tests_state() {
        // Goose's own expectations (crates/goose/src/context_mgmt/mod.rs@8d844eecbdfd,
        // test_compute_tool_call_cutoff_scales_with_context).
        assert_eq!(cutoff(128_000, 0.8), 15);
        assert_eq!(cutoff(200_000, 0.8), 24);
        assert_eq!(cutoff(1_000_000, 0.8), 120);
        assert_eq!(cutoff(50_000, 0.8), 10);
        assert_eq!(cutoff(10_000_000, 0.8), 500);
        assert_eq!(cutoff(200_000, 0.3), 10);
        assert_eq!(cutoff(1_000_000, 0.5), 75);
        assert_eq!(cutoff(200_000, 0.0), 24);
        assert_eq!(cutoff(200_000, -1.0), 24);
    }

    #[test]
    fn past_cutoff_plus_ten_the_oldest_ten_pairs_leave_at_the_next_reply_with_a_summary_each() {
        // cutoff 10: a reply preceded by more than 20 unsummarised calls chooses a batch.
        let turns = [21, 1, 1];
        let spec = "compact:goose-tools:cutoff=10,summary_tokens=7,prompt_tokens=50";
        let got = replay_spec(replies(&turns), spec);
        let none = replay_spec(replies(&turns), "none").run.rows;
        let starts = reply_starts(&turns);
        // Chosen at the second reply's first request (21 calls precede it), seen at the third's.
        assert_eq!(made_at(&got), vec![starts[2]]);
        let pair = pair_tokens(40);
        let row = &got.run.rows[starts[2]];
        assert_eq!(row.summarization_input_tokens, 10 * (pair + 50), "each pair is sent with the prompt");
        assert_eq!(row.summarization_cached_tokens, 0, "the calls are not cached");
        assert_eq!(row.summarization_output_tokens, 10 * 7);
        assert_eq!(row.context_tokens, none[starts[2]].context_tokens - 10 * pair + 10 * 7);
        // The prefix before the first pair (the system prompt and the first user message) is still
        // cached; the first pair's call is where the context changed.
        assert_eq!(row.shared_prefix_tokens, none[0].context_tokens);
        let s = &got.run.summary;
        assert_eq!(
            (s.compaction.compactions, s.compaction.summarized_tokens, s.compaction.summary_tokens),
            (1, 10 * pair, 70)
        );
        assert_eq!(
            (s.compaction.summarization_input_tokens, s.compaction.summarization_output_tokens),
            (10 * (pair + 50), 70)
        );
        // Nothing else differs from `none` before the batch arrives.
        for (k, (a, b)) in got.run.rows.iter().zip(&none).take(starts[2]).enumerate() {
            assert_eq!(a.context_tokens, b.context_tokens, "request {k}");
        }
    }

    #[test]
    fn one_batch_per_reply_the_oldest_first_and_the_next_ten_at_the_reply_after() {
        let turns = [40, 3, 1, 1];
        let spec = "compact:goose-tools:cutoff=10,summary_tokens=5,prompt_tokens=0";
        let got = replay_spec(replies(&turns), spec);
        let none = replay_spec(replies(&turns), "none").run.rows;
        let starts = reply_starts(&turns);
        let pair = pair_tokens(40);
        // Reply 2 (40 calls before it) chooses pairs 0-9 only; reply 3 sees them gone and, 33
        // unsummarised calls preceding it, chooses 10-19; reply 4 sees those gone (24 left, still
        // over 20: it chooses 20-29, which no later reply sees).
        assert_eq!(made_at(&got), vec![starts[2], starts[3]]);
        assert_eq!(got.run.rows[starts[2]].context_tokens, none[starts[2]].context_tokens - 10 * pair + 50);
        assert_eq!(got.run.rows[starts[3]].context_tokens, none[starts[3]].context_tokens - 20 * pair + 100);
        // Before pair 10's call (the second batch's first change) only the system prompt and the
        // first user message are left: the first batch's summaries came after, where it was chosen.
        assert_eq!(got.run.rows[starts[3]].shared_prefix_tokens, none[0].context_tokens);
        assert_eq!(got.run.summary.compaction.compactions, 2);
    }

    #[test]
    fn calls_of_the_current_reply_are_exempt_from_the_count() {
        // 15 calls precede reply 2, which makes 10 more: 25 visible, but only 15 before the reply,
        // so reply 2 chooses nothing; reply 3 (25 before it) does, and reply 4 sees the batch.
        let turns = [15, 10, 1, 1];
        let got = replay_spec(replies(&turns), "compact:goose-tools:cutoff=10");
        let starts = reply_starts(&turns);
        assert_eq!(made_at(&got), vec![starts[3]]);
        // At the default cutoff (15 at 128k), 25 calls are not enough.
        let defaults = replay_spec(replies(&turns), "compact:goose-tools");
        assert!(made_at(&defaults).is_empty());
    }

    #[test]
    fn a_single_reply_never_sees_its_summaries() {
        let got = replay_spec(replies(&[60]), "compact:goose-tools:cutoff=10");
        assert!(made_at(&got).is_empty());
        assert_eq!(got.run.summary.compaction.compactions, 0);
    }

    #[test]
    fn the_defaults_are_the_measured_prompt_and_example_summary() {
        let turns = [26, 1, 1];
        let got = replay_spec(replies(&turns), "compact:goose-tools");
        let starts = reply_starts(&turns);
        assert_eq!(made_at(&got), vec![starts[2]], "cutoff 15: more than 25 calls choose a batch");
        let row = &got.run.rows[starts[2]];
        assert_eq!(row.summarization_output_tokens, 10 * 11);
        assert_eq!(row.summarization_input_tokens, 10 * (pair_tokens(40) + 97));
    }

    #[test]
    fn beside_a_prune_policy_a_pruned_result_leaves_with_what_is_left_of_it() {
        // keep-results:n=3 prunes all but the newest three contents (sticky); the batch then takes
        // away what is still sent of each pair, and what was pruned stays counted as pruned.
        let turns = [21, 1, 1];
        let both =
            replay_spec(replies(&turns), "keep-results:n=3+compact:goose-tools:cutoff=10,summary_tokens=0");
        let prune = replay_spec(replies(&turns), "keep-results:n=3").run.rows;
        let starts = reply_starts(&turns);
        let row = &both.run.rows[starts[2]];
        let removed = both.run.summary.compaction.summarized_tokens;
        assert!(removed > 0 && removed < 10 * pair_tokens(40), "{removed}");
        assert_eq!(row.context_tokens, prune[starts[2]].context_tokens - removed);
        assert_eq!(row.pruned_tokens, prune[starts[2]].pruned_tokens);
    }
}
