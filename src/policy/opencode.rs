//! `opencode` — opencode's session prune (`SessionCompaction.prune`), with its defaults.
//!
//! Source: `anomalyco/opencode` (formerly `sst/opencode`),
//! `packages/opencode/src/session/compaction.ts` (`PRUNE_MINIMUM = 20_000`,
//! `PRUNE_PROTECT = 40_000`, `PRUNE_PROTECTED_TOOLS = ["skill"]`, `prune()`),
//! `packages/opencode/src/util/token.ts` (`estimate = Math.round(length / 4)`),
//! `packages/opencode/src/session/prompt.ts` (prune runs once the prompt loop exits, i.e. when the
//! agent has finished a user turn), `packages/opencode/src/session/message-v2.ts` (a pruned tool
//! part is sent as `[Old tool result content cleared]`). See ANCHORS.md §1.
//!
//! Mechanism, as `prune()` does it: walk the messages newest → oldest counting user messages and
//! skip everything until two have been seen (the last two user turns are never pruned); stop at the
//! first tool part that is already pruned (`break loop`, the early stop of opencode#30807); for
//! every other completed (not errored) tool output of a tool that is not protected, add its
//! estimate to a running total; once the total exceeds `protect`, the output joins the prune list.
//! Prune only if the list's estimate exceeds `minimum`. Pruned outputs stay pruned (sticky).
//!
//! Timing in the replay: prune runs at the end of each user turn, so its effect shows from the
//! first request of the next human turn, and the turns it protects are the two before that new
//! one (the new user message did not exist yet when prune ran). Nothing is pruned inside a turn, so
//! a single-turn session (a headless run, a subagent) is never pruned.

use super::{Content, Edit, Estimator, Kind, Param, Policy, View};

/// The text opencode sends for a pruned tool output.
pub const PLACEHOLDER: &str = "[Old tool result content cleared]";

/// The `opencode` policy.
pub const KIND: Kind = Kind {
    name: "opencode",
    about: "at the end of each user turn, prune tool outputs older than the newest `protect` \
            estimated tokens and the last 2 user turns, if more than `minimum` would be freed",
    source: "opencode packages/opencode/src/session/compaction.ts prune(), util/token.ts (ANCHORS.md §1)",
    params: &[
        Param {
            key: "protect",
            default: "40000",
            about: "newest tool-output tokens never pruned (PRUNE_PROTECT)",
        },
        Param {
            key: "minimum",
            default: "20000",
            about: "prune only if more than this would be freed (PRUNE_MINIMUM)",
        },
        Param { key: "turns", default: "2", about: "most recent user turns never pruned" },
        Param {
            key: "protected_tools",
            default: "skill",
            about: "tools whose outputs are never pruned (PRUNE_PROTECTED_TOOLS)",
        },
        Param { key: "placeholder", default: PLACEHOLDER, about: "text sent in place of a pruned output" },
    ],
    build: |p| {
        Ok(Box::new(OpenCode {
            protect: p.get("protect")?,
            minimum: p.get("minimum")?,
            turns: p.at_least("turns", 1)?,
            protected_tools: p.list("protected_tools"),
            placeholder: p.text("placeholder").to_owned(),
        }))
    },
};

/// opencode's end-of-turn prune.
pub struct OpenCode {
    protect: u64,
    minimum: u64,
    turns: usize,
    protected_tools: Vec<String>,
    placeholder: String,
}

impl Policy for OpenCode {
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        // Prune ran when the previous turn ended: only at the first request of a new human turn.
        if !view.turn_start || view.request == 0 {
            return;
        }
        // At prune time the newest user turn was the one that just ended (view.turn - 1).
        let last_ended = view.turn.saturating_sub(1);
        let protected_from = (last_ended + 1).saturating_sub(self.turns);
        let (mut total, mut pruned) = (0u64, 0u64);
        let mut to_prune = Vec::new();
        for r in view.results.iter().rev() {
            if r.turn >= protected_from {
                continue;
            }
            if r.result.is_error || self.protected_tools.iter().any(|t| t == r.tool()) {
                continue;
            }
            if matches!(r.content, Content::Pruned | Content::Replaced(_)) {
                break;
            }
            let estimate = view.tokens(Estimator::OpenCode, &r.output());
            total += estimate;
            if total <= self.protect {
                continue;
            }
            if let Content::Present(_) = r.content {
                pruned += estimate;
                to_prune.push(r.index);
            }
        }
        if pruned > self.minimum {
            edits.extend(to_prune.into_iter().rev().map(|i| Edit::Replace(i, self.placeholder.clone())));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::testing::{Convo, replay_spec, text};

    /// 4,000 chars: round(4000/4) = 1,000 estimated tokens each.
    const K: usize = 4_000;

    #[test]
    fn prunes_old_outputs_at_the_next_turn_once_the_floor_is_passed() {
        // Turn 1: six outputs of 1,000 estimated tokens (results 0-5). Turn 2: one more (6).
        // Turn 3 starts with request 10.
        let mut c = Convo::new().user("one").request();
        c = c.steps(6, "read", K);
        c = c.user("two").request().steps(1, "read", K);
        c = c.user("three").request().steps(1, "read", K);
        // protect=1000 tokens, minimum=1500, and only the last turn protected (turns=1). Request 9
        // starts turn 3: turn 2 just ended and is protected; walking back over turn 1, result 5
        // brings the total to 1,000 (not > protect), then 4, 3, 2, 1, 0 (5,000 tokens) join the
        // list; 5,000 > 1,500, so they are pruned.
        let r = replay_spec(c, "opencode:protect=1000,minimum=1500,turns=1");
        assert_eq!(r.cleared_before(9), [0, 1, 2, 3, 4]);
        assert_eq!(r.replacement(9, 0), Some("[Old tool result content cleared]"));
        // Nothing earlier: requests 1-6 are inside turn 1, and at request 7 (the first of turn 2)
        // the turn that just ended, turn 1, is protected.
        for k in 0..9 {
            assert!(r.cleared_before(k).is_empty(), "request {k}: {:?}", r.edits[k]);
        }
        assert_eq!(r.prune_requests(), [9]);
        // The placeholder is sent and counted: 33 bytes each for 5 results.
        assert_eq!(r.run.rows[9].categories.placeholders, 5 * 33);
    }

    #[test]
    fn below_the_minimum_nothing_is_pruned() {
        let c = Convo::new()
            .user("one")
            .request()
            .steps(3, "read", K)
            .user("two")
            .request()
            .user("three")
            .request();
        // Turn 1's 3,000 tokens are outside the last turn; protect=1000 leaves 2,000 prunable,
        // which does not exceed minimum=2000.
        let r = replay_spec(c, "opencode:protect=1000,minimum=2000,turns=1");
        assert!(r.edits.iter().all(Vec::is_empty), "{:?}", r.edits);
    }

    #[test]
    fn never_prunes_inside_the_last_two_user_turns() {
        // Ten turns, each with three 1,000-token outputs; tiny protect and minimum so that
        // everything outside the protected turns goes.
        let mut c = Convo::new();
        for t in 0..10 {
            c = c.user(&format!("turn {t}")).request().steps(3, "bash", K);
        }
        let r = replay_spec(c, "opencode:protect=0,minimum=0");
        let rows = &r.run.rows;
        for (k, edits) in r.edits.iter().enumerate() {
            let turn = rows[k].turn;
            for e in edits {
                let crate::policy::Edit::Replace(i, _) = e else { panic!("{e:?}") };
                // Result i was produced in turn i / 3 + 1.
                let produced = i / 3 + 1;
                assert!(
                    produced + 2 <= turn,
                    "request {k} (turn {turn}) pruned result {i} of turn {produced}"
                );
            }
        }
        // And it does prune: at the start of turn 4, turn 1 (results 0-2) goes.
        let start_of_turn_4 = rows.iter().position(|row| row.turn == 4).unwrap();
        assert_eq!(r.cleared_before(start_of_turn_4), [0, 1, 2]);
    }

    #[test]
    fn protected_tools_and_errors_are_skipped() {
        let c = Convo::new()
            .user("one")
            .request()
            .tool("skill", text(K))
            .request()
            .tool_error("bash", text(K))
            .request()
            .tool("read", text(K))
            .request()
            .user("two")
            .request()
            .user("three")
            .request();
        let r = replay_spec(c, "opencode:protect=0,minimum=0,turns=1");
        // At the first request of turn 3 only result 2 is eligible: 0 is `skill`, 1 errored.
        assert_eq!(r.cleared_before(5), [2]);
    }

    #[test]
    fn stops_at_the_first_output_already_pruned() {
        // Turn 1: results 0, 1. Turn 2: result 2. Turn 3 prunes turn 1. Turn 4 prunes turn 2,
        // walks on to result 1 (pruned) and stops there (opencode#30807).
        let c = Convo::new()
            .user("1")
            .request()
            .steps(2, "read", K)
            .user("2")
            .request()
            .steps(1, "read", K)
            .user("3")
            .request()
            .user("4")
            .request();
        let r = replay_spec(c, "opencode:protect=0,minimum=0,turns=1");
        assert_eq!(r.cleared_before(5), [0, 1]);
        assert_eq!(r.cleared_before(6), [2]);
    }
}
