//! `complexity-trap` — observation masking as evaluated in "The Complexity Trap" (Lindenbauer et
//! al., JetBrains Research / TUM, arXiv 2508.21433, NeurIPS 2025 DL4Code), with the paper's best
//! setting M = 10. A preset of [`keep-turns`](super::keep_turns) with the paper's placeholder.
//!
//! Source: ANCHORS.md §6; the paper's code (`JetBrains-Research/the-complexity-trap`, a SWE-agent
//! fork) masks with SWE-agent's `LastNObservations(n=M)` in
//! `sweagent/agent/history_processors.py`: the last M turns' observations are kept verbatim, older
//! ones become `Old environment output: (N lines omitted)`; reasoning and actions are kept.
//!
//! **Unit of M.** A "turn" in the paper is an agent step of SWE-agent: one LLM call, one action,
//! one observation. In our model that is a *request*, not a human turn: SWE-bench tasks have a
//! single human turn, so counting human turns would never mask anything. M = 10 therefore means
//! that an output is sent with the 10 requests that follow it and masked from the 11th on — exactly
//! `keep-turns:n=10`. With one observation per step (SWE-agent) this is `LastNObservations(n=10)`;
//! with parallel tool calls (several results per request) all results of the last M steps are kept,
//! which is what "the last M turns' observations" says. The mask is monotonic, so replaying it as
//! sticky gives the same contexts as recomputing it per request.

use super::keep_turns::KeepTurns;
use super::{Kind, On, Param};

/// The `complexity-trap` policy.
pub const KIND: Kind = Kind {
    name: "complexity-trap",
    about: "observation masking with the paper's M = 10: keep the last M turns' outputs, mask older \
            ones with SWE-agent's placeholder",
    source: "Lindenbauer et al., The Complexity Trap (arXiv 2508.21433), SWE-agent LastNObservations (ANCHORS.md §6)",
    params: &[
        super::ON_OUTPUT,
        Param { key: "m", default: "10", about: "agent turns (requests) whose outputs stay verbatim" },
    ],
    build: |p| {
        let ComplexityTrapParams { on, m } = p.typed()?;
        let m = p.at_least("m", m, 1)?;
        Ok(super::builder(move || super::with_on(on, Box::new(KeepTurns::with_swe_placeholder(m)))))
    },
};

/// The parameters of `complexity-trap`.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComplexityTrapParams {
    /// Whole outputs or the seed's contents.
    pub on: On,
    /// Agent turns (requests) whose outputs stay verbatim.
    pub m: usize,
}

#[cfg(test)]
mod tests {
    use crate::policy::testing::{Convo, lines, replay_spec};

    #[test]
    fn masks_each_output_after_the_ten_requests_that_follow_it() {
        let mut c = Convo::new().user("task").request();
        for _ in 0..14 {
            c = c.tool("bash", lines(4, 30)).request();
        }
        let masked = replay_spec(c, "complexity-trap");
        // Result k first goes out with request k + 1 and is masked before request k + 11.
        assert!(masked.cleared_before(10).is_empty());
        assert_eq!(masked.cleared_before(11), [0]);
        assert_eq!(masked.replacement(11, 0), Some("Old environment output: (4 lines omitted)"));
        assert_eq!(masked.cleared_before(14), [3]);
        assert_eq!(masked.prune_requests(), [11, 12, 13, 14]);
    }

    #[test]
    fn is_keep_turns_with_a_placeholder() {
        let c = || {
            let mut c = Convo::new().user("task").request();
            for _ in 0..14 {
                c = c.tool("bash", lines(4, 30)).request();
            }
            c
        };
        // On the seed's contents, as keep-turns works.
        let trap = replay_spec(c(), "complexity-trap:m=3,on=content");
        let keep = replay_spec(c(), "keep-turns:n=3");
        assert_eq!(trap.prune_requests(), keep.prune_requests());
        for k in 0..trap.edits.len() {
            assert_eq!(trap.cleared_before(k), keep.cleared_before(k), "request {k}");
        }
        // Same contents removed; the placeholder is what differs.
        let (t, k) = (&trap.run.rows[14], &keep.run.rows[14]);
        assert_eq!(t.categories.tool_contents, k.categories.tool_contents);
        assert_eq!(t.categories.placeholders, 11 * 41);
        assert_eq!(k.categories.placeholders, 0);
    }
}
