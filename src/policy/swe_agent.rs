//! `swe-agent` — SWE-agent's `LastNObservations` history processor, with its defaults.
//!
//! Source: `SWE-agent/SWE-agent`, `sweagent/agent/history_processors.py` `LastNObservations(n,
//! polling=1, always_remove_output_for_tags={"remove_output"}, always_keep_output_for_tags={"keep_output"})`:
//! "used in the original paper to elide all but the last 5 observations"; elided observations
//! become `Old environment output: (N lines omitted)` (plus ` (M images omitted)`), N being
//! Python's `len(text.splitlines())`. ANCHORS.md §3.
//!
//! Mechanism: a history processor runs on the full history before every query and its output is
//! not stored (non-sticky; its docstring warns that it "will break prompt caching"). The
//! observations are counted, `last_removed = (count // polling) * polling - n`, and observations 1
//! to `last_removed - 1` are elided: observation 0, SWE-agent's instance template, is never removed.
//! With `polling` > 1 the cut moves only every `polling` steps, keeping between `n` and
//! `n + polling` observations.
//!
//! In our model the instance template is the first user message (never a tool result), so the
//! count is 1 + the tool results in the context, and tool results `0 .. last_removed - 1` are
//! elided. The tags (`keep_output`, `remove_output`) have no counterpart in recorded traces.

use std::borrow::Cow;

use super::estimator::PYTHON_LINES;
use super::{Capabilities, Content, Edit, Kind, On, Param, Policy, ResultState, View};

/// The `swe-agent` policy.
pub const KIND: Kind = Kind {
    name: "swe-agent",
    about: "LastNObservations: before every query, elide all but the last n observations \
            (recomputed, not stored)",
    source: "SWE-agent/SWE-agent sweagent/agent/history_processors.py LastNObservations (indexed at 669b8f9); \
             differences: docs/policies.md (ANCHORS.md §3)",
    params: &[
        super::ON_OUTPUT,
        Param { key: "n", default: "5", about: "observations kept (the paper's setting is 5)" },
        Param { key: "polling", default: "1", about: "move the cut only every `polling` steps" },
    ],
    build: |p| {
        let SweAgentParams { on, n, polling } = p.typed()?;
        let (n, polling) = (p.at_least("n", n, 1)?, p.at_least("polling", polling, 1)?);
        Ok(super::builder(move || {
            super::with_on(on, Box::new(SweAgent { n, polling, elided: 0, compactions: 0 }))
        }))
    },
};

/// The parameters of `swe-agent` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct SweAgentParams {
    pub on: On,
    pub n: usize,
    pub polling: usize,
}

/// SWE-agent's observation elision.
///
/// The elided observations are always the oldest ones up to a cut that only moves forward (until
/// a compaction starts a new context), so before each request the policy gives only the newly
/// elided ones after [`Edit::KeepPrevious`]: the same context as recomputing the whole set, in
/// time linear in the trace.
#[derive(Clone)]
pub struct SweAgent {
    n: usize,
    polling: usize,
    /// Results of the current context (from its first) already elided.
    elided: usize,
    /// Compactions seen: a new one starts a context with nothing elided.
    compactions: usize,
}

impl Policy for SweAgent {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        super::fork_of(self)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { sticky: false, ..Capabilities::default() }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        if view.compactions != self.compactions {
            self.compactions = view.compactions;
            self.elided = 0;
        }
        let observations = 1 + view.results.len();
        let last_removed = ((observations / self.polling) * self.polling).saturating_sub(self.n);
        let elided = last_removed.saturating_sub(1).min(view.results.len());
        edits.push(Edit::KeepPrevious);
        for r in &view.results[self.elided.min(elided)..elided] {
            if let Content::Present(_) = r.content {
                edits.push(Edit::Replace(r.index, placeholder(r, true)));
            }
        }
        self.elided = self.elided.max(elided);
    }
}

/// SWE-agent's text for an elided observation: `Old environment output: (N lines omitted)`, and
/// ` (M images omitted)` when `with_images` and the result has images.
pub fn placeholder(r: &ResultState<'_>, with_images: bool) -> String {
    let lines = match r.sizes.presplit {
        // Counted once per output, not once per replay (a sweep replays it at every threshold).
        None => r.result.derived(PYTHON_LINES, |text| python_line_count(text) as u64) as usize,
        _ => python_line_count(&observation_text(r)),
    };
    let mut text = format!("Old environment output: ({lines} lines omitted)");
    if with_images && r.result.images > 0 {
        text.push_str(&format!(" ({} images omitted)", r.result.images));
    }
    text
}

/// The observation as the agent saw it: the whole output (summary and content of a pre-split one).
fn observation_text<'a>(r: &'a ResultState<'a>) -> Cow<'a, str> {
    match r.sizes.presplit {
        Some(true) => format!("{}\n{}", r.result.summary, r.result.text).into(),
        Some(false) => r.result.summary.as_str().into(),
        None => r.result.text.as_str().into(),
    }
}

/// `len(text.splitlines())` in Python: lines end at `\n`, `\r`, `\r\n`, `\v`, `\f`, `\x1c`-`\x1e`,
/// `\x85`, U+2028 and U+2029; a last line without an ending counts too.
///
/// Read byte by byte (every replay of a sweep counts the lines of every elided output): in UTF-8
/// no byte of a multi-byte character is ASCII, `0xc2` or `0xe2`, so the three non-ASCII breaks are
/// exactly the byte sequences `c2 85`, `e2 80 a8` and `e2 80 a9`. Eight bytes at a time where none
/// of them can start a break (every break starts with a byte below `0x1f` or above `0x7f`).
pub fn python_line_count(text: &str) -> usize {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let bytes = text.as_bytes();
    let (mut count, mut open, mut i) = (0, false, 0);
    while i < bytes.len() {
        if let Some(&word) = bytes[i..].first_chunk::<8>() {
            let word = u64::from_le_bytes(word);
            // Some byte is below 0x1f (a classic test: exact for "some byte", since it can only
            // err on bytes above a true one) or has its high bit set.
            if (word.wrapping_sub(0x1f * LOW) & !word & HIGH) | (word & HIGH) == 0 {
                open = true;
                i += 8;
                continue;
            }
        }
        let next = |k: usize| bytes.get(i + k).copied();
        let width = match bytes[i] {
            b'\n' | 0x0b | 0x0c | 0x1c..=0x1e => 1,
            b'\r' if next(1) == Some(b'\n') => 2,
            b'\r' => 1,
            0xc2 if next(1) == Some(0x85) => 2,
            0xe2 if next(1) == Some(0x80) && matches!(next(2), Some(0xa8 | 0xa9)) => 3,
            _ => 0,
        };
        if width == 0 {
            open = true;
            i += 1;
        } else {
            count += 1;
            open = false;
            i += width;
        }
    }
    count + usize::from(open)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing::{Convo, lines, replay_spec};

    /// The char-by-char reading of Python's rule, to check the byte-wise one against.
    fn reference_line_count(text: &str) -> usize {
        let mut count = 0;
        let mut open = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\r' => {
                    if chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    count += 1;
                    open = false;
                }
                '\n' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}'
                | '\u{2029}' => {
                    count += 1;
                    open = false;
                }
                _ => open = true,
            }
        }
        count + usize::from(open)
    }

    #[test]
    fn line_count_reads_bytes_as_python_reads_chars() {
        // Every pair and triple of pieces that matter: breaks, their look-alikes (other chars
        // sharing a first byte: U+00E9 is c3 a9, U+0080 is c2 80, U+2014 is e2 80 94, U+2029's
        // neighbour U+202A is e2 80 aa) and plain text.
        let pieces = [
            "a", "\n", "\r", "\r\n", "\u{b}", "\u{1d}", "\u{85}", "\u{2028}", "\u{2029}", "é", "\u{80}", "—",
            "\u{202a}", "日",
        ];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let text = format!("{a}{b}{c}");
                    assert_eq!(python_line_count(&text), reference_line_count(&text), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn line_count_reads_long_texts_as_python_reads_chars() {
        // The pieces between runs of plain text long enough to be read eight bytes at a time, at
        // every offset within a word.
        let pieces =
            ["\n", "\r", "\r\n", "\u{b}", "\u{1e}", "\u{1f}", "\u{85}", "\u{2028}", "é", "—", "\t", "~"];
        for a in pieces {
            for b in pieces {
                for pad in 0..9 {
                    let text =
                        format!("{a}{}{b}{}{a}plain text here{b}", "x".repeat(pad), "y".repeat(17 - pad));
                    assert_eq!(python_line_count(&text), reference_line_count(&text), "{text:?}");
                }
            }
        }
        assert_eq!(python_line_count(&"abcdefgh\n".repeat(100)), 100);
    }

    #[test]
    fn python_splitlines_counts() {
        assert_eq!(python_line_count(""), 0);
        assert_eq!(python_line_count("a"), 1);
        assert_eq!(python_line_count("a\n"), 1);
        assert_eq!(python_line_count("a\n\nb"), 3);
        assert_eq!(python_line_count("a\r\nb\rc\u{2028}d\u{c}"), 4);
    }

    #[test]
    fn keeps_the_last_n_observations_and_recomputes_every_request() {
        // Seven outputs of 3 lines each.
        let mut c = Convo::new().user("task").request();
        for _ in 0..7 {
            c = c.tool("bash", lines(3, 10)).request();
        }
        let r = replay_spec(c, "swe-agent:n=5");
        // Before request k there are k results and 1 + k observations: last_removed = k + 1 - 5,
        // so observations 1 .. k - 4, the first k - 5 results, are elided.
        assert!(r.cleared_before(5).is_empty());
        assert_eq!(r.cleared_before(6), [0]);
        assert_eq!(r.cleared_before(7), [0, 1]);
        assert_eq!(r.replacement(7, 1), Some("Old environment output: (3 lines omitted)"));
        // Not stored: every request sends the elisions again, and each request moves the cut.
        assert_eq!(r.prune_requests(), [6, 7]);
        assert_eq!(r.run.rows[7].categories.placeholders, 2 * 41);
    }

    #[test]
    fn polling_moves_the_cut_every_polling_steps() {
        let mut c = Convo::new().user("task").request();
        for _ in 0..12 {
            c = c.tool("bash", lines(2, 10)).request();
        }
        let r = replay_spec(c, "swe-agent:n=5,polling=3");
        // last_removed = ((1 + k) // 3) * 3 - 5: k = 5 → 1 (nothing), k = 8 → 4 (0-2),
        // k = 11 → 7 (0-5); in between it stays.
        let counts: Vec<usize> = (0..=12).map(|k| r.cleared_before(k).len()).collect();
        assert_eq!(counts, [0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 6, 6]);
        assert_eq!(r.prune_requests(), [8, 11]);
    }

    #[test]
    fn images_are_mentioned() {
        let c = Convo::new()
            .user("t")
            .request()
            .tool_with_images("view", lines(2, 20), 2)
            .request()
            .tool("bash", lines(1, 20))
            .request();
        let r = replay_spec(c, "swe-agent:n=1");
        assert_eq!(r.replacement(2, 0), Some("Old environment output: (2 lines omitted) (2 images omitted)"));
    }
}
