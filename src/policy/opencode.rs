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
//!
//! Cost in the replay: opencode walks the whole history back to the last pruned output at every
//! turn's end, so a long session that never reaches `minimum` is walked again and again. The
//! replay gets the same answer without the walk: it keeps running sums of the estimates as results
//! arrive (each result is looked at once), finds where the walk would pass `protect` by binary
//! search, and touches only the outputs it prunes, each once; a test keeps the walk as written
//! and checks that both prune the same outputs before every request.

use super::{
    Content, Edit, Estimator, Kind, List, On, Param, Params, Peak, Policy, PolicyReport, Unfired, View,
};
use crate::error::SpecError;

/// The text opencode sends for a pruned tool output.
pub const PLACEHOLDER: &str = "[Old tool result content cleared]";

/// The `opencode` policy.
pub const KIND: Kind = Kind {
    name: "opencode",
    about: "at the end of each user turn, prune tool outputs older than the newest `protect` \
            estimated tokens and the last 2 user turns, if more than `minimum` would be freed",
    source: "anomalyco/opencode packages/opencode/src/session/compaction.ts prune() (indexed at fd78ec6), util/token.ts; \
             differences: docs/policies.md (ANCHORS.md §1)",
    params: &[
        super::ON_OUTPUT,
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
        let params = OpenCode::checked(p)?;
        Ok(super::builder(move || super::with_on(params.on, Box::new(OpenCode::new(&params)))))
    },
};

/// The parameters of `opencode` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct OpenCodeParams {
    pub on: On,
    pub protect: u64,
    pub minimum: u64,
    pub turns: usize,
    pub protected_tools: List,
    pub placeholder: String,
}

/// opencode's end-of-turn prune.
#[derive(Clone)]
pub struct OpenCode {
    protect: u64,
    minimum: u64,
    turns: usize,
    protected_tools: Vec<String>,
    placeholder: String,
    seen: Seen,
    /// The most a turn start found to prune, and how many turn starts it saw; whether it pruned.
    peak: Peak,
    turn_starts: usize,
    fired: bool,
}

/// What the walk needs of the results in the context (since the last compaction), kept as they
/// arrive. Positions are offsets into [`View::results`], whose first result has conversation-wide
/// index `first`.
///
/// Why this is the walk's answer: results arrive oldest first with non-decreasing turns, so the
/// protected turns are a suffix of the context; an output is only ever pruned here, once, when it
/// is outside that suffix, and the suffix only moves forward; so the walk's first pruned output,
/// where it stops, is the newest one pruned, and everything between it and the suffix is as it
/// arrived (its estimate unchanged, its content present or left whole by the split).
#[derive(Debug, Clone, Default)]
struct Seen {
    /// Compactions met when these sums were started (a compaction restarts the context).
    compactions: usize,
    /// Conversation-wide index of the context's first result.
    first: usize,
    /// `counted[k]`: the estimates of the first `k` results that the walk counts (not errored,
    /// not of a protected tool); one element more than results seen.
    counted: Vec<u64>,
    /// Positions of the counted results whose content is present (what a prune would clear).
    prunable: Vec<usize>,
    /// `prunable_sum[k]`: the estimates of the first `k` of `prunable`.
    prunable_sum: Vec<u64>,
    /// How many of `prunable` are pruned (always the oldest ones).
    pruned: usize,
}

impl OpenCode {
    /// The parameters of `p`, read and checked.
    fn checked(p: &Params) -> Result<OpenCodeParams, SpecError> {
        let params: OpenCodeParams = p.typed()?;
        p.at_least("turns", params.turns, 1)?;
        Ok(params)
    }

    /// A fresh policy with checked parameters.
    fn new(p: &OpenCodeParams) -> OpenCode {
        OpenCode {
            protect: p.protect,
            minimum: p.minimum,
            turns: p.turns,
            protected_tools: p.protected_tools.clone(),
            placeholder: p.placeholder.clone(),
            seen: Seen::default(),
            peak: Peak::default(),
            turn_starts: 0,
            fired: false,
        }
    }

    /// Brings [`Seen`] up to the results in `view`: restarted after a compaction, extended by the
    /// results that arrived since the last request.
    fn catch_up(&mut self, view: &View<'_>) {
        let first = view.results.first().map_or(0, |r| r.index);
        let seen = &mut self.seen;
        let restarted = seen.compactions != view.compactions
            || seen.first != first
            || seen.counted.len() > view.results.len() + 1;
        if restarted || seen.counted.is_empty() {
            *seen = Seen {
                compactions: view.compactions,
                first,
                counted: vec![0],
                prunable_sum: vec![0],
                ..Seen::default()
            };
        }
        for (position, r) in view.results.iter().enumerate().skip(seen.counted.len() - 1) {
            let counted = !r.result.is_error && !self.protected_tools.iter().any(|t| t == r.tool());
            let estimate = if counted { view.tokens(Estimator::OpenCode, &r.output()) } else { 0 };
            let total = seen.counted.last().copied().unwrap_or(0) + estimate;
            seen.counted.push(total);
            if counted && matches!(r.content, Content::Present(_)) {
                seen.prunable.push(position);
                let sum = seen.prunable_sum.last().copied().unwrap_or(0) + estimate;
                seen.prunable_sum.push(sum);
            }
        }
    }
}

impl Policy for OpenCode {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        super::fork_of(self)
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        self.catch_up(view);
        // Prune ran when the previous turn ended: only at the first request of a new human turn.
        if !view.turn_start || view.request == 0 {
            return;
        }
        // At prune time the newest user turn was the one that just ended (view.turn - 1).
        let last_ended = view.turn.saturating_sub(1);
        let protected_from = (last_ended + 1).saturating_sub(self.turns);
        let seen = &mut self.seen;
        // The walk covers the results from just after the newest pruned one up to the protected
        // turns, newest first, adding up estimates; an output joins the prune list once the sum
        // (its own estimate included) exceeds `protect`, and so does every older one: the
        // unpruned prunable outputs below `over`, `prunable[pruned..upto]`.
        let end = view.results.partition_point(|r| r.turn < protected_from);
        let total = seen.counted[end];
        // The walk's sum at position j is total - counted[j]: it exceeds `protect` for the
        // positions below `over` (counted is non-decreasing).
        let over = seen.counted[..end].partition_point(|&c| c.saturating_add(self.protect) < total);
        let upto = seen.prunable.partition_point(|&position| position < over);
        self.turn_starts += 1;
        if upto <= seen.pruned {
            return;
        }
        let pruned = seen.prunable_sum[upto] - seen.prunable_sum[seen.pruned];
        self.peak.see(pruned);
        if pruned > self.minimum {
            self.fired = true;
            for &position in &seen.prunable[seen.pruned..upto] {
                edits.push(Edit::Replace(view.results[position].index, self.placeholder.clone()));
            }
            seen.pruned = upto;
        }
    }

    fn report(&self) -> PolicyReport {
        let template = if self.turn_starts == 0 {
            "prunes only when a new human turn starts; none started after the first".to_owned()
        } else {
            format!(
                "prunes at a turn start once the outputs beyond the newest {} tokens, before the last {} \
                 turn(s), pass {} tokens; peak {{peak}}",
                self.protect, self.turns, self.minimum
            )
        };
        PolicyReport {
            unfired: (!self.fired).then(|| Unfired::new(template, self.peak.0)),
            ..PolicyReport::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Content, Edit, Estimator, OpenCode, Policy, View};
    use crate::policy::PolicySpec;
    use crate::policy::testing::{Convo, draw, replay_policy, replay_spec, text};
    use crate::tokens::DecideWith;

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

    /// `prune()` as opencode writes it, walking the whole history back at every turn's end: what
    /// the running sums must agree with.
    struct Walk(OpenCode);

    impl Policy for Walk {
        fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
            let p = &self.0;
            if !view.turn_start || view.request == 0 {
                return;
            }
            let last_ended = view.turn.saturating_sub(1);
            let protected_from = (last_ended + 1).saturating_sub(p.turns);
            let (mut total, mut pruned) = (0u64, 0u64);
            let mut to_prune = Vec::new();
            for r in view.results.iter().rev() {
                if r.turn >= protected_from {
                    continue;
                }
                if r.result.is_error || p.protected_tools.iter().any(|t| t == r.tool()) {
                    continue;
                }
                if matches!(r.content, Content::Pruned | Content::Replaced(_)) {
                    break;
                }
                let estimate = view.tokens(Estimator::OpenCode, &r.output());
                total += estimate;
                if total <= p.protect {
                    continue;
                }
                if let Content::Present(_) = r.content {
                    pruned += estimate;
                    to_prune.push(r.index);
                }
            }
            if pruned > p.minimum {
                edits.extend(to_prune.into_iter().rev().map(|i| Edit::Replace(i, p.placeholder.clone())));
            }
        }
    }

    /// A session of many short turns: outputs below and above the split threshold, errors, the
    /// protected `skill` tool, and compactions in some seeds.
    fn generated(seed: u64) -> Convo {
        let mut s = seed;
        let mut c = Convo::new().system("sys").user("go").request();
        for step in 0..120 {
            match draw(&mut s, 6) {
                0 | 1 => c = c.user("more").request(),
                2 if step > 40 && seed % 3 == 0 && draw(&mut s, 8) == 0 => c = c.compaction("summary"),
                _ => {}
            }
            let bytes = [4, 30, 400, 1_200, 4_000][draw(&mut s, 5) as usize] + draw(&mut s, 50) as usize;
            let output = if draw(&mut s, 4) == 0 { "é🦀x".repeat(bytes / 8 + 1) } else { text(bytes) };
            let tool = ["read", "bash", "skill"][draw(&mut s, 3) as usize];
            c = if draw(&mut s, 10) == 0 { c.tool_error(tool, output) } else { c.tool(tool, output) };
            c = c.request();
        }
        c
    }

    #[test]
    fn the_running_sums_prune_what_the_walk_prunes() {
        let specs = [
            "opencode",
            "opencode:protect=0,minimum=0",
            "opencode:protect=1000,minimum=0,turns=1",
            "opencode:protect=2000,minimum=3000",
            "opencode:protect=500,minimum=8000,turns=3,protected_tools=skill,bash",
            "opencode:protect=4000,minimum=100,protected_tools=",
            "opencode:on=content",
            "opencode:protect=0,minimum=0,on=content",
            "opencode:protect=2000,minimum=3000,on=content",
        ];
        let mut replaced = 0;
        for spec in specs {
            let parsed = PolicySpec::parse(spec).unwrap_or_else(|e| panic!("{e}"));
            for seed in 0..12 {
                for decide in [DecideWith::Anchor, DecideWith::Real] {
                    let params = OpenCode::checked(&parsed.params).unwrap();
                    let reference = Box::new(Walk(OpenCode::new(&params)));
                    let reference = crate::policy::with_on(params.on, reference);
                    let walk = replay_policy(generated(seed), reference, decide);
                    let sums = replay_policy(generated(seed), parsed.build(), decide);
                    let case = format!("{spec}, seed {seed}, {decide:?}");
                    assert_eq!(sums.edits, walk.edits, "{case}");
                    assert_eq!(sums.run, walk.run, "{case}");
                    replaced += walk.edits.iter().flatten().count();
                }
            }
        }
        // The comparison means something only if prunes happened.
        assert!(replaced > 2_000, "{replaced} outputs replaced");
    }
}
