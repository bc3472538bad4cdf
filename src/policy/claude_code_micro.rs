//! `claude-code-micro` — Claude Code's time-based microcompact, **reverse-engineered**.
//!
//! Source: ANCHORS.md §2. Public: microcompact was introduced in Claude Code v1.0.68 ("clears old
//! tool calls automatically"). The mechanism and constants come from community analyses of the
//! closed-source client (zhanghandong's "harness engineering" ch. 11, bug-ops/zeph#2699,
//! tetsuo-ai/agenc-core#463), so they are indicative: when the gap since the last assistant message
//! exceeds about 60 minutes (the prompt cache has expired, so clearing costs no extra cache write),
//! all but the ~5 most recent results of the compactable tools (Read, Bash, Grep, Glob, WebSearch,
//! WebFetch, Edit, Write) are replaced by `[Old tool result content cleared]`. The cleared ids are
//! recorded in the session (`microcompact_boundary`), so the clear persists (sticky).
//!
//! The last assistant message is the previous request's response, so the gap is the time since the
//! previous request. The count-based "cached" variant, which edits the server-side cache instead,
//! is not modelled. Traces without timestamps get a warning and the policy never fires.

use super::{Content, Edit, GapWatch, Kind, List, Minutes, On, Param, Policy, PolicyReport, View};
use crate::model::Millis;

/// The text Claude Code writes for a cleared tool result (the one its logged clearings are
/// replayed with).
pub const PLACEHOLDER: &str = crate::model::CLEARED_PLACEHOLDER;

/// The `claude-code-micro` policy.
pub const KIND: Kind = Kind {
    name: "claude-code-micro",
    about: "after an idle gap of about an hour, clear all but the 5 most recent results of the \
            compactable tools (reverse-engineered)",
    source: "Claude Code microcompact, time-based path (reverse-engineered; ANCHORS.md §2)",
    params: &[
        super::ON_OUTPUT,
        Param {
            key: "gap",
            default: "60m",
            about: "idle time since the previous request that triggers a clear",
        },
        Param { key: "keep", default: "5", about: "most recent compactable results kept" },
        Param {
            key: "tools",
            default: "Read,Bash,Grep,Glob,WebSearch,WebFetch,Edit,Write",
            about: "compactable tools (exact names)",
        },
        Param { key: "placeholder", default: PLACEHOLDER, about: "text in place of a cleared result" },
    ],
    build: |p| {
        let params: ClaudeCodeMicroParams = p.typed()?;
        Ok(super::builder(move || {
            let p = params.clone();
            super::with_on(
                p.on,
                Box::new(ClaudeCodeMicro {
                    gap: p.gap.0,
                    keep: p.keep,
                    tools: p.tools,
                    placeholder: p.placeholder,
                    gaps: GapWatch::default(),
                }),
            )
        }))
    },
};

/// The parameters of `claude-code-micro` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ClaudeCodeMicroParams {
    pub on: On,
    pub gap: Minutes,
    pub keep: usize,
    pub tools: List,
    pub placeholder: String,
}

/// Claude Code's idle microcompact.
pub struct ClaudeCodeMicro {
    gap: Millis,
    keep: usize,
    tools: Vec<String>,
    placeholder: String,
    gaps: GapWatch,
}

impl Policy for ClaudeCodeMicro {
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let Some(gap) = self.gaps.gap(view) else { return };
        if gap <= self.gap {
            return;
        }
        let compactable: Vec<_> =
            view.results.iter().filter(|r| self.tools.iter().any(|t| t == r.tool())).collect();
        let older = compactable.len().saturating_sub(self.keep);
        for r in &compactable[..older] {
            if let Content::Present(_) = r.content {
                edits.push(Edit::Replace(r.index, self.placeholder.clone()));
            }
        }
    }

    fn report(&self) -> PolicyReport {
        PolicyReport { warnings: self.gaps.warnings(KIND.name), ..PolicyReport::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::testing::{Convo, replay_spec, text};

    /// Eight Read results and one TodoWrite, one minute apart from minute 0.
    fn session() -> Convo {
        let mut c = Convo::new().user("go").at(0.0).request();
        for i in 0..8 {
            c = c.tool("Read", text(500)).at(1.0 + i as f64).request();
        }
        c.tool("TodoWrite", text(500)).at(9.0).request()
    }

    #[test]
    fn after_an_hour_idle_clears_all_but_the_last_five_compactable_results() {
        // Request 10 comes 61 minutes after request 9.
        let r = replay_spec(session().at(70.0).request(), "claude-code-micro");
        assert!((0..10).all(|k| r.cleared_before(k).is_empty()), "no gap over an hour before");
        // Results 0-7 are Read, 8 is TodoWrite (not compactable): the last five Reads (3-7) stay.
        assert_eq!(r.cleared_before(10), [0, 1, 2]);
        assert_eq!(r.replacement(10, 0), Some("[Old tool result content cleared]"));
        assert!(r.warnings.is_empty());
    }

    #[test]
    fn an_idle_gap_of_exactly_the_threshold_does_not_fire() {
        let r = replay_spec(session().at(69.0).request(), "claude-code-micro");
        assert!(r.edits.iter().all(Vec::is_empty), "60 minutes is not more than 60");
    }

    #[test]
    fn a_request_without_a_timestamp_hides_the_gap_after_it() {
        // Minute 9, then an untimed request, then minute 70: the gap before the last request is
        // unknown, not the 61 minutes since minute 9, so nothing is cleared.
        let r = replay_spec(session().untimed().request().at(70.0).request(), "claude-code-micro");
        assert!(r.edits.iter().all(Vec::is_empty), "{:?}", r.edits);
        // With that request made at minute 9.5, the gap before the last one is known (60.5
        // minutes) and it fires.
        let r = replay_spec(session().at(9.5).request().at(70.0).request(), "claude-code-micro");
        assert_eq!(r.cleared_before(11), [0, 1, 2]);
    }

    #[test]
    fn without_timestamps_it_warns_and_never_fires() {
        let c = Convo::new().user("go").request().steps(8, "Read", 500);
        let r = replay_spec(c, "claude-code-micro");
        assert!(r.edits.iter().all(Vec::is_empty));
        assert_eq!(
            r.warnings,
            [
                "the trace records no timestamps, so `claude-code-micro` (which prunes after an idle gap) never fires"
            ]
        );
        // Some timestamps missing: the warning says how many.
        let c = Convo::new()
            .user("go")
            .at(0.0)
            .request()
            .tool("Read", text(500))
            .untimed()
            .request()
            .at(5.0)
            .request();
        let r = replay_spec(c, "claude-code-micro");
        assert_eq!(
            r.warnings,
            ["1 of 3 requests have no timestamp; `claude-code-micro` (which prunes after an idle gap) \
              cannot fire on them or on the request after each"]
        );
    }
}
