//! `openclaw` — OpenClaw session pruning in `cache-ttl` mode, with its defaults.
//!
//! Source: `openclaw/openclaw`, `docs/concepts/session-pruning.md`,
//! `src/agents/pi-extensions/context-pruning/settings.ts` (`DEFAULT_CONTEXT_PRUNING_SETTINGS`:
//! `ttl` 5 min, `keepLastAssistants` 3, `softTrimRatio` 0.3, `hardClearRatio` 0.5,
//! `minPrunableToolChars` 50,000, `softTrim {maxChars 4000, headChars 1500, tailChars 1500}`,
//! `hardClear {enabled, placeholder "[Old tool result content cleared]"}`), `pruner.ts`
//! (`pruneContextMessages`) and `extension.ts` (the TTL gate). ANCHORS.md §5.
//!
//! Mechanism: prune only when the last call is at least `ttl` old (the prompt cache has expired,
//! so rewriting the prefix costs nothing extra). The window is estimated in chars (chars ≈ tokens ×
//! 4; default 200,000 tokens). Tool results before the `keep_last_assistants`-th last assistant
//! message and after the first user message are prunable (never ones with images, never denied
//! tools). If the context is at least `soft_trim_ratio` of the window, every prunable result longer
//! than `soft_trim_max_chars` is cut to its head and tail with a note of its size; if it is still at
//! least `hard_clear_ratio` and the prunable results hold at least `min_prunable_tool_chars`, they
//! are replaced by the placeholder, oldest first, until the ratio falls under `hard_clear_ratio`.
//!
//! Decisions:
//! - **Persistence.** The documented behaviour projects the pruned messages for that one request
//!   ("pruning is transient per request"), so the next request, inside the TTL, re-sends the
//!   unpruned history (OpenClaw PR #137021: "pruning never saved a cache write and instead added
//!   one uncached request", fixed by persisting the projection). `sticky=false` (default)
//!   reproduces the documented behaviour, `sticky=true` the fix.
//! - **Chars in the seed's model.** A tool result's text is its summary and its content; only the
//!   content can be trimmed or cleared, so the chars a result frees and the prunable total are
//!   counted on the content, and the context on everything sent except the system prompt (which
//!   OpenClaw keeps out of the message list), plus 8,000 chars per tool-result image.
//! - **No timestamps.** Without them the TTL gate never opens: the policy never fires and reports a
//!   warning. The newer per-request `maxToolResultChars` cap is not part of the pruning the
//!   anchor describes and is left out; so is the later rule that prunes images beyond the newest 3.

use super::gemini::{utf16_head, utf16_tail};
use super::{Content, Edit, Estimator, GapWatch, Kind, Param, Policy, ResultState, View, wildcard_match};
use crate::model::Millis;
use crate::tokens::Measure;

/// OpenClaw's default hard-clear placeholder.
pub const PLACEHOLDER: &str = "[Old tool result content cleared]";

/// OpenClaw counts each image block as this many chars.
const IMAGE_CHARS: u64 = 8_000;

/// The `openclaw` policy.
pub const KIND: Kind = Kind {
    name: "openclaw",
    about: "cache-ttl session pruning: after an idle gap of `ttl`, soft-trim then hard-clear old tool \
            results while the context fills the estimated window",
    source: "OpenClaw docs/concepts/session-pruning.md, src/agents/pi-extensions/context-pruning/ (ANCHORS.md §5)",
    params: &[
        Param {
            key: "ttl",
            default: "5m",
            about: "prune only when the previous request is at least this old",
        },
        Param {
            key: "keep_last_assistants",
            default: "3",
            about: "tool results after the n-th last assistant message stay",
        },
        Param {
            key: "soft_trim_ratio",
            default: "0.3",
            about: "soft-trim when the context is this fraction of the window",
        },
        Param {
            key: "hard_clear_ratio",
            default: "0.5",
            about: "hard-clear while the context is at least this fraction",
        },
        Param {
            key: "min_prunable_tool_chars",
            default: "50000",
            about: "hard-clear only if prunable results hold this many chars",
        },
        Param {
            key: "soft_trim_max_chars",
            default: "4000",
            about: "results longer than this are soft-trimmed",
        },
        Param {
            key: "soft_trim_head_chars",
            default: "1500",
            about: "chars kept from the start by a soft trim",
        },
        Param {
            key: "soft_trim_tail_chars",
            default: "1500",
            about: "chars kept from the end by a soft trim",
        },
        Param { key: "hard_clear", default: "true", about: "whether hard-clearing is enabled" },
        Param { key: "placeholder", default: PLACEHOLDER, about: "text in place of a hard-cleared result" },
        Param { key: "context_window", default: "200000", about: "window in tokens (chars = tokens × 4)" },
        Param {
            key: "tools_allow",
            default: "",
            about: "only these tools are pruned (`*` wildcards; empty = all)",
        },
        Param {
            key: "tools_deny",
            default: "",
            about: "these tools are never pruned (`*` wildcards; deny wins)",
        },
        Param {
            key: "sticky",
            default: "false",
            about: "persist the pruned messages (PR #137021) instead of one request",
        },
    ],
    build: |p| {
        Ok(Box::new(OpenClaw {
            ttl: p.duration_ms("ttl", "m")?,
            keep_last_assistants: p.get("keep_last_assistants")?,
            soft_trim_ratio: p.get("soft_trim_ratio")?,
            hard_clear_ratio: p.get("hard_clear_ratio")?,
            min_prunable_tool_chars: p.get("min_prunable_tool_chars")?,
            max_chars: p.get("soft_trim_max_chars")?,
            head_chars: p.get("soft_trim_head_chars")?,
            tail_chars: p.get("soft_trim_tail_chars")?,
            hard_clear: p.get("hard_clear")?,
            placeholder: p.text("placeholder").to_owned(),
            window_chars: p.get::<u64>("context_window")? * 4,
            allow: p.list("tools_allow"),
            deny: p.list("tools_deny"),
            sticky: p.get("sticky")?,
            gaps: GapWatch::default(),
        }))
    },
};

/// OpenClaw's cache-TTL session pruning.
pub struct OpenClaw {
    ttl: Millis,
    keep_last_assistants: usize,
    soft_trim_ratio: f64,
    hard_clear_ratio: f64,
    min_prunable_tool_chars: u64,
    max_chars: usize,
    head_chars: usize,
    tail_chars: usize,
    hard_clear: bool,
    placeholder: String,
    window_chars: u64,
    allow: Vec<String>,
    deny: Vec<String>,
    sticky: bool,
    gaps: GapWatch,
}

/// What happens to one prunable result.
enum Fate {
    Keep,
    Trim(String),
    Clear,
}

impl OpenClaw {
    /// Chars of the text measured by `m`: its JavaScript length, or 4 × its tokens when deciding
    /// with a tokenizer.
    fn chars(view: &View<'_>, m: &Measure) -> u64 {
        if view.anchored() { m.utf16 } else { 4 * view.tokens(Estimator::Real, m) }
    }

    fn tool_prunable(&self, tool: &str) -> bool {
        let allowed = self.allow.is_empty() || self.allow.iter().any(|p| wildcard_match(p, tool));
        allowed && !self.deny.iter().any(|p| wildcard_match(p, tool))
    }

    /// `softTrimToolResultMessage`: head, `...`, tail and a note with the original size.
    fn soft_trim(&self, text: &str) -> Option<String> {
        let raw = text.encode_utf16().count();
        if raw <= self.max_chars || self.head_chars + self.tail_chars >= raw {
            return None;
        }
        let (head, tail) = (utf16_head(text, self.head_chars), utf16_tail(text, self.tail_chars));
        Some(format!(
            "{head}\n...\n{tail}\n\n[Tool result trimmed: kept first {} chars and last {} chars of {raw} chars.]",
            self.head_chars, self.tail_chars
        ))
    }

    fn eligible(&self, view: &View<'_>, r: &ResultState<'_>) -> bool {
        let before_cutoff = self.keep_last_assistants == 0
            || r.assistant_messages + self.keep_last_assistants <= view.assistant_messages;
        before_cutoff
            && r.turn >= 1
            && r.result.images == 0
            && matches!(r.content, Content::Present(_) | Content::Replaced(_))
            && self.tool_prunable(r.tool())
    }
}

impl Policy for OpenClaw {
    fn sticky(&self) -> bool {
        self.sticky
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let Some(gap) = self.gaps.gap(view) else { return };
        if gap < self.ttl || view.assistant_messages < self.keep_last_assistants {
            return;
        }
        let mut sent = view.context;
        sent -= view.system;
        let images: u64 = view.results.iter().map(|r| u64::from(r.result.images)).sum();
        let mut total = Self::chars(view, &sent) + IMAGE_CHARS * images;
        let ratio = |total: u64| total as f64 / self.window_chars as f64;
        if ratio(total) < self.soft_trim_ratio {
            return;
        }
        // Soft trim, and the chars of each prunable result's content after it.
        let mut prunable: Vec<(&ResultState<'_>, Fate, u64)> = Vec::new();
        for r in view.results.iter().filter(|r| self.eligible(view, r)) {
            match r.content {
                Content::Present(c) => {
                    let before = Self::chars(view, &c);
                    match self.soft_trim(&r.result.text) {
                        Some(trimmed) => {
                            let after = Self::chars(view, &view.measure(&trimmed));
                            total = total + after - before;
                            prunable.push((r, Fate::Trim(trimmed), after));
                        }
                        None => prunable.push((r, Fate::Keep, before)),
                    }
                }
                Content::Replaced(p) => prunable.push((r, Fate::Keep, Self::chars(view, &p))),
                Content::None | Content::Pruned => {}
            }
        }
        if self.hard_clear && ratio(total) >= self.hard_clear_ratio {
            let prunable_chars: u64 = prunable.iter().map(|(_, _, chars)| chars).sum();
            if prunable_chars >= self.min_prunable_tool_chars {
                let cleared = view.measure(&self.placeholder);
                let placeholder = Self::chars(view, &cleared);
                for (r, fate, chars) in &mut prunable {
                    if ratio(total) < self.hard_clear_ratio {
                        break;
                    }
                    // Cleared at an earlier request (sticky): clearing it again frees nothing, and
                    // an edit that changes nothing is not one to give.
                    if r.content == Content::Replaced(cleared) {
                        continue;
                    }
                    *fate = Fate::Clear;
                    total = total + placeholder - *chars;
                }
            }
        }
        for (r, fate, _) in prunable {
            match fate {
                Fate::Keep => {}
                Fate::Trim(text) => edits.push(Edit::Replace(r.index, text)),
                Fate::Clear => edits.push(Edit::Replace(r.index, self.placeholder.clone())),
            }
        }
    }

    fn warnings(&self) -> Vec<String> {
        self.gaps.warnings(KIND.name)
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::testing::{Convo, replay_spec, text};

    /// A user prompt at minute 0, then steps one minute apart, each with a 10,000-char output.
    fn session(steps: usize) -> Convo {
        let mut c = Convo::new().user("go").at(0.0).request();
        for i in 0..steps {
            c = c.assistant("ok").tool("read", text(10_000)).at(1.0 + i as f64).request();
        }
        c
    }

    /// A window of 25,000 tokens = 100,000 chars: soft trim from 30,000 chars, hard clear from 50,000.
    const WIDE: &str = "openclaw:context_window=25000,min_prunable_tool_chars=10000";
    /// A window of 20,000 tokens = 80,000 chars: hard clear from 40,000.
    const SMALL: &str = "openclaw:context_window=20000,min_prunable_tool_chars=10000";

    #[test]
    fn never_fires_inside_the_ttl() {
        let r = replay_spec(session(8), SMALL);
        assert!(r.edits.iter().all(Vec::is_empty), "requests one minute apart never pass a 5 min TTL");
        assert!(r.warnings.is_empty());
    }

    // Before request 9 (after the idle gap) the context without the system prompt is "go" and 8
    // steps of "ok" + a call ("read" + "{}") + a 91-char summary + 10,000 chars: 80,794 chars.
    // The last three assistant messages are those of steps 5-7, so results 5-7 are protected and
    // results 0-4 prunable. A soft trim leaves 1,500 + "\n...\n" + 1,500 + an 82-char note =
    // 3,087 chars, freeing 6,913 each: 80,794 - 5 × 6,913 = 46,229 chars after soft trims.

    #[test]
    fn after_an_idle_gap_soft_trims_for_that_request_only() {
        let r = replay_spec(session(8).at(20.0).request(), WIDE);
        // 46,229 / 100,000 = 0.46 < 0.5: soft trims only.
        assert_eq!(r.cleared_before(9), [0, 1, 2, 3, 4]);
        let trimmed = r.replacement(9, 0).unwrap();
        assert!(trimmed.starts_with(&format!("{}\n...\n{}", text(1_500), text(1_500))));
        assert!(trimmed.ends_with(
            "\n\n[Tool result trimmed: kept first 1500 chars and last 1500 chars of 10000 chars.]"
        ));
        assert_eq!(trimmed.len(), 3_087);
        // Transient: the request after (inside the TTL again) re-sends everything.
        let r = replay_spec(session(8).at(20.0).request().at(20.5).request(), WIDE);
        assert_eq!(r.prune_requests(), [9, 10], "pruned at 9, restored at 10");
        assert!(r.cleared_before(10).is_empty());
    }

    #[test]
    fn hard_clears_oldest_first_until_under_the_ratio() {
        // 46,229 / 80,000 = 0.58 ≥ 0.5 and 5 × 3,087 prunable chars ≥ 10,000: clear oldest first,
        // each freeing 3,087 - 33: 43,175 (0.54), 40,121 (0.50), 37,067 (0.46) → three clears.
        let r = replay_spec(session(8).at(20.0).request(), SMALL);
        assert_eq!(r.cleared_before(9), [0, 1, 2, 3, 4]);
        for i in 0..3 {
            assert_eq!(r.replacement(9, i), Some("[Old tool result content cleared]"), "result {i}");
        }
        assert!(r.replacement(9, 3).unwrap().ends_with("of 10000 chars.]"), "trimmed, not cleared");
        // Below the prunable floor nothing is hard-cleared.
        let r = replay_spec(
            session(8).at(20.0).request(),
            "openclaw:context_window=20000,min_prunable_tool_chars=20000",
        );
        assert!(r.replacement(9, 0).unwrap().ends_with("of 10000 chars.]"));
    }

    #[test]
    fn sticky_keeps_the_pruned_state() {
        let c = session(8).at(20.0).request().at(20.5).request();
        let r = replay_spec(c, &format!("{SMALL},sticky=true"));
        assert_eq!(r.prune_requests(), [9]);
        assert!(r.run.rows[10].context_tokens < r.run.rows[8].context_tokens);
    }

    #[test]
    fn denied_tools_and_images_are_never_pruned() {
        let r = replay_spec(session(8).at(20.0).request(), &format!("{WIDE},tools_deny=RE*"));
        assert!(r.edits.iter().all(Vec::is_empty));
        let mut c = Convo::new().user("go").at(0.0).request();
        c = c.assistant("ok").tool_with_images("read", text(10_000), 1).at(1.0).request();
        for i in 0..7 {
            c = c.assistant("ok").tool("read", text(10_000)).at(2.0 + i as f64).request();
        }
        let r = replay_spec(c.at(30.0).request(), WIDE);
        assert_eq!(r.cleared_before(9), [1, 2, 3, 4]);
    }

    #[test]
    fn without_timestamps_it_warns_and_never_fires() {
        let mut c = Convo::new().user("go").request();
        for _ in 0..8 {
            c = c.assistant("ok").tool("read", text(10_000)).request();
        }
        let r = replay_spec(c, SMALL);
        assert!(r.edits.iter().all(Vec::is_empty));
        assert_eq!(
            r.warnings,
            ["the trace records no timestamps, so `openclaw` (which prunes after an idle gap) never fires"]
        );
    }
}
