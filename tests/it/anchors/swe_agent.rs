//! `swe-agent` beside `LastNObservations` as SWE-agent writes it: `SWE-agent/SWE-agent`
//! `sweagent/agent/history_processors.py` (indexed at `669b8f9`), `_get_omit_indices` and
//! `__call__`:
//!
//! ```python
//! last_removed_idx = max(0, (len(observation_indices) // self.polling) * self.polling - self.n)
//! # Note: We never remove the first observation, as it is the instance template
//! return observation_indices[1:last_removed_idx]
//! ...
//! data["content"] = f"Old environment output: ({num_text_lines} lines omitted)"
//! if num_images > 0: data["content"] += f" ({num_images} images omitted)"
//! ```
//!
//! Run on the full history before every query, not stored. Modelled: the instance template is the
//! first observation (a user message in recorded traces, never a tool result), so the
//! observations are it and the context's tool results; the line count is Python's
//! `len(text.splitlines())` of the whole output (computed here from the text).

use super::{Cleared, On, Session, prunable, python_splitlines, requests, results, within};

fn expected(s: &Session, on: On, n: usize, polling: usize) -> Vec<Cleared> {
    let all = results(&s.measured);
    requests(&s.measured)
        .iter()
        .map(|req| {
            let context = within(&all, req.start..req.end);
            let observations = 1 + context.len();
            let last_removed = ((observations / polling) * polling).saturating_sub(n);
            let mut cleared = Cleared::default();
            // observation_indices[1:last_removed]: the tool results 0 .. last_removed - 1.
            for r in context.iter().take(last_removed.saturating_sub(1)) {
                if !prunable(r, on) {
                    continue;
                }
                let mut text =
                    format!("Old environment output: ({} lines omitted)", python_splitlines(&r.whole()));
                if r.result.images > 0 {
                    text += &format!(" ({} images omitted)", r.result.images);
                }
                cleared.results.insert(r.index, text);
            }
            cleared
        })
        .collect()
}

#[test]
fn swe_agent_elides_what_last_n_observations_elides_on_every_corpus_session() {
    let specs = [
        "swe-agent",
        "swe-agent:on=content",
        "swe-agent:n=2,polling=3",
        "swe-agent:n=2,polling=3,on=content",
    ];
    super::check("swe-agent", &specs, str::to_owned, |s, spec, on| {
        let (n, polling) = if spec.contains("polling=3") { (2, 3) } else { (5, 1) };
        expected(s, on, n, polling)
    });
}
