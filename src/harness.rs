//! Which agent wrote a log, and what a replay does with the compactions it recorded
//! (`--harness-compaction`). A log written by an agent that compacts by itself (Claude Code, Codex,
//! opencode) recorded its compactions where the *recorded* context reached the agent's trigger;
//! under a counterfactual policy the replay can keep them there, drop them and apply the agent's
//! trigger to the policy's own context (`policy::compact::harness`), or drop them.
//! [`Harness`] is that choice resolved for one conversation, from its format; a measured
//! conversation carries it to the replay. The same mode decides the tool-result clearings the log
//! recorded (Claude Code's microcompact and Anthropic's server-side context editing,
//! `src/measure/cleared.rs`), the harness's own context management too: kept under `recorded` and
//! under `simulated` (microcompact's trigger is not
//! documented, only reverse-engineered, and by that account reads idle time and a count of
//! results, not the context's size: there is nothing to simulate; context editing's trigger reads
//! the size, but its settings are not in the responses), dropped under `off`
//! ([`Harness::applies_clearings`]; docs/compaction.md, "Recorded clearings"). The as-recorded
//! baseline keeps both whatever the mode. Pure data: no I/O, no policy built here.

/// What a replay does with the compactions the log itself recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HarnessCompaction {
    /// Kept where they were recorded: the context restarts there under every policy.
    Recorded,
    /// Dropped, and the trigger of the agent that wrote the log applied to each policy's own
    /// context (for a log whose agent's compaction is not known: as `Recorded`).
    #[default]
    Simulated,
    /// Dropped: the context never restarts but where a policy compacts.
    Off,
}

impl HarnessCompaction {
    /// The name the option and the outputs use.
    pub fn name(self) -> &'static str {
        match self {
            HarnessCompaction::Recorded => "recorded",
            HarnessCompaction::Simulated => "simulated",
            HarnessCompaction::Off => "off",
        }
    }
}

/// The compaction policy of the agent whose logs `format` reads, when that agent compacts by
/// itself by default and the format records where it did: Claude Code (`claude-code`, and
/// `claude-stream`, its `-p` output), Codex (`codex`, `codex-exec`) and opencode. Not OpenHands
/// (its condenser is a configuration choice, off in many setups, and the `openhands` reader does
/// not read condensation events), nor the formats of other agents or of raw API traffic.
pub fn agent_policy(format: &str) -> Option<&'static str> {
    match format {
        "claude-code" | "claude-stream" => Some("compact:claude-code"),
        "codex" | "codex-exec" => Some("compact:codex"),
        "opencode" => Some("compact:opencode"),
        _ => None,
    }
}

/// The harness's compaction as one conversation is replayed: the mode, the agent's compaction
/// policy when the mode is `Simulated`, and the agent's compaction policy whatever the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Harness {
    /// What the replay does with the log's compactions.
    pub mode: HarnessCompaction,
    /// The agent's compaction policy run beside every policy (set only when `mode` is
    /// `Simulated`).
    pub policy: Option<&'static str>,
    /// The compaction policy of the agent that wrote the log ([`agent_policy`]), in every mode:
    /// that trigger, run by the harness or chosen as a policy, reads the replay's estimate of the
    /// provider's reported usage (`src/replay/reported.rs`).
    pub agent: Option<&'static str>,
}

impl Harness {
    /// The log's compactions kept where they were recorded (of a log whose agent is not known).
    pub const RECORDED: Harness = Harness { mode: HarnessCompaction::Recorded, policy: None, agent: None };

    /// `mode` for a conversation read by `format`: `Simulated` needs the agent's trigger
    /// ([`agent_policy`]) and is `Recorded` without one.
    pub fn resolve(mode: HarnessCompaction, format: &str) -> Harness {
        let agent = agent_policy(format);
        match (mode, agent) {
            (HarnessCompaction::Simulated, Some(policy)) => Harness { mode, policy: Some(policy), agent },
            (HarnessCompaction::Simulated, None) => Harness::RECORDED,
            (mode, _) => Harness { mode, policy: None, agent },
        }
    }

    /// Whether the replay drops the log's own compactions.
    pub fn drops_recorded(self) -> bool {
        self.mode != HarnessCompaction::Recorded
    }

    /// Whether the replay applies the tool-result clearings the log recorded (Claude Code's
    /// microcompact, `src/measure/cleared.rs`): the harness's own context management, like its
    /// compactions. Dropped under `Off`; kept under `Recorded`, and under `Simulated` too, since
    /// microcompact's trigger is not documented (only reverse-engineered: docs/compaction.md,
    /// "Recorded clearings"), so there is no trigger to simulate.
    pub fn applies_clearings(self) -> bool {
        self.mode != HarnessCompaction::Off
    }
}

impl Default for Harness {
    fn default() -> Harness {
        Harness::RECORDED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_needs_a_known_agent_and_the_other_modes_do_not() {
        let cc = Harness::resolve(HarnessCompaction::Simulated, "claude-code");
        assert_eq!(cc.policy, Some("compact:claude-code"));
        assert!(cc.drops_recorded());
        assert_eq!(Harness::resolve(HarnessCompaction::Simulated, "codex").policy, Some("compact:codex"));
        assert_eq!(Harness::resolve(HarnessCompaction::Simulated, "native"), Harness::RECORDED);
        assert_eq!(Harness::resolve(HarnessCompaction::Simulated, "openhands"), Harness::RECORDED);
        let off = Harness::resolve(HarnessCompaction::Off, "native");
        assert!(off.drops_recorded() && off.policy.is_none());
        let recorded = Harness::resolve(HarnessCompaction::Recorded, "claude-code");
        assert!(!recorded.drops_recorded() && recorded.policy.is_none());
        // The recorded clearings are kept but under `off`.
        assert!(recorded.applies_clearings() && cc.applies_clearings() && !off.applies_clearings());
        // The agent is known in every mode: its trigger, chosen as a policy, reads the usage.
        assert_eq!(recorded.agent, Some("compact:claude-code"));
        assert_eq!(off.agent, None);
        assert_eq!(Harness::resolve(HarnessCompaction::Off, "opencode").agent, Some("compact:opencode"));
    }
}
