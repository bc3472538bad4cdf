//! The risk of pruning what is still used: of the tool results a run pruned, how many did the
//! agent reuse afterwards, when nothing else in the context still sent held what it reused
//! (docs/reuse.md).
//!
//! A result is **reused after prune** when some term of it (a path, identifier or line, as
//! [`crate::reuse_index`] defines them) has its first use in the response to a request at which
//! the run had removed the content of every result holding the term (and, for a policy on the
//! seed's contents, the term is not in that result's summary, which stays). The replay tells which
//! result was pruned at which request through [`Recording`], a wrapper around the policy that
//! watches its edits and its compactions (a compaction the policy makes removes every result it
//! summarises away, summary and content, for good), so the replay engine is untouched. A result
//! the log itself cleared (Claude Code's microcompact) holds no term from the request after the
//! clearing on, when the run applies the log's clearings (every harness mode but `off`). Per run:
//! results pruned, of which reused ([`RunReuse`]), and the tokens their pruned parts held. Linear
//! in the first uses plus a log per lookup. Pure: no I/O, no printing.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use crate::measure::{MeasuredConversation, MeasuredItem};
use crate::model::Tokens;
use crate::policy::{Capabilities, Content, Edit, On, Policy, PolicyReport, View};
use crate::replay::{Keep, replay_keeping};
use crate::result::Run;
use crate::tokens::Meter;

/// Of the results a run pruned, those reused later, and the tokens involved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunReuse {
    /// Results whose content (or whole output, for a policy on whole outputs) the run removed
    /// or replaced before some request.
    pub pruned_results: usize,
    /// Of those, results reused after prune.
    pub reused_results: usize,
    /// Tokens of what the run removed from the reused results (contents, or whole outputs).
    pub reused_tokens: Tokens,
}

impl RunReuse {
    /// `reused_results / pruned_results`, 0 when nothing was pruned.
    pub fn share(&self) -> f64 {
        if self.pruned_results == 0 { 0.0 } else { self.reused_results as f64 / self.pruned_results as f64 }
    }
}

impl AddAssign for RunReuse {
    fn add_assign(&mut self, other: RunReuse) {
        self.pruned_results += other.pruned_results;
        self.reused_results += other.reused_results;
        self.reused_tokens += other.reused_tokens;
    }
}

/// The requests at which a run did not send each result's content: per result, half-open
/// ranges of request indices (`to` is `usize::MAX` while it stays pruned).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneLog {
    /// `(result, from, to)`, by result then in the order recorded (sorted by [`Recording::into_log`]).
    ranges: Vec<(usize, usize, usize)>,
    /// Results a compaction of the run summarised away, with the request before which it did:
    /// gone whole (summary too) from then on.
    compacted: BTreeMap<usize, usize>,
}

impl PruneLog {
    /// Whether the run had removed result `result`'s content when request `request` was made.
    pub fn pruned_at(&self, result: usize, request: usize) -> bool {
        self.compacted_at(result, request)
            || self.ranges_of(result).iter().any(|&(_, from, to)| from <= request && request < to)
    }

    /// The ranges of result `result`, in the order recorded.
    fn ranges_of(&self, result: usize) -> &[(usize, usize, usize)] {
        let start = self.ranges.partition_point(|r| r.0 < result);
        let end = start + self.ranges[start..].partition_point(|r| r.0 == result);
        &self.ranges[start..end]
    }

    /// Whether a compaction of the run had summarised result `result` away (summary and content)
    /// when request `request` was made.
    pub fn compacted_at(&self, result: usize, request: usize) -> bool {
        self.compacted.get(&result).is_some_and(|&from| from <= request)
    }

    /// The first request at which result `result`'s content was not sent, if any.
    pub fn first_pruned(&self, result: usize) -> Option<usize> {
        let pruned = self.ranges_of(result).first().map(|r| r.1);
        let compacted = self.compacted.get(&result).copied();
        pruned.into_iter().chain(compacted).min()
    }

    /// Results pruned or summarised away at some request, each once: those only pruned, then
    /// those summarised away, each in order.
    pub fn results(&self) -> impl Iterator<Item = usize> + '_ {
        let firsts = self.ranges.iter().enumerate().filter(|(k, r)| *k == 0 || self.ranges[k - 1].0 != r.0);
        let pruned = firsts.map(|(_, r)| r.0).filter(|r| !self.compacted.contains_key(r));
        pruned.chain(self.compacted.keys().copied())
    }
}

/// A policy that records, request by request, which results the policy it wraps has removed the
/// content of, and otherwise behaves exactly as that policy (same edits, stickiness, unit and
/// warnings): the replay of it is the replay of the policy.
pub struct Recording {
    inner: Box<dyn Policy>,
    /// Results removed for the current request, with the request they were first removed at.
    current: BTreeMap<usize, usize>,
    log: PruneLog,
}

impl Recording {
    /// Records `inner`.
    pub fn new(inner: Box<dyn Policy>) -> Recording {
        Recording { inner, current: BTreeMap::new(), log: PruneLog::default() }
    }

    /// A copy of the recording and of the policy it records, in their state now
    /// ([`Policy::fork`]); `None` when that policy cannot be copied.
    pub fn fork(&self) -> Option<Recording> {
        Some(Recording { inner: self.inner.fork()?, current: self.current.clone(), log: self.log.clone() })
    }

    /// After a run of `conversation` at `threshold`: its reuse, and the policy's trigger when it
    /// did not fire ([`PolicyReport::unfired`]).
    pub fn reuse(
        self,
        conversation: &MeasuredConversation,
        threshold: usize,
    ) -> (RunReuse, Option<crate::policy::Unfired>) {
        let (caps, unfired) = (self.inner.capabilities(), self.inner.report().unfired);
        // The log's clearings take results out of what this run sends, unless its harness drops them.
        let clearings = crate::replay::run_harness(conversation, &caps).applies_clearings();
        (run_reuse(conversation, &self.into_log(), threshold, caps.on, clearings), unfired)
    }

    /// What was recorded.
    pub fn into_log(mut self) -> PruneLog {
        for (result, from) in std::mem::take(&mut self.current) {
            self.log.ranges.push((result, from, usize::MAX));
        }
        // By result, each result's ranges in the order recorded: that is by their first request
        // (a result's next range starts after its last one ended), so no stable sort is needed.
        self.log.ranges.sort_unstable_by_key(|r| (r.0, r.1));
        self.log
    }
}

impl Policy for Recording {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    fn compact(&mut self, view: &View<'_>) -> Option<crate::policy::compact::Compaction> {
        let compaction = self.inner.compact(view)?;
        // Every result in the context before the kept tail goes, summary and content.
        let kept_from = compaction.keep_from.unwrap_or(usize::MAX);
        for r in view.results.iter().filter(|r| r.position < kept_from) {
            self.log.compacted.entry(r.index).or_insert(view.request);
        }
        Some(compaction)
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        self.inner.before_request(view, edits);
        let request = view.request;
        // What the replay will remove: a prune or replacement of a result whose content is there.
        let removed = edits.iter().filter_map(|e| match e {
            Edit::Prune(i) | Edit::Replace(i, _) => Some(*i),
            Edit::ClearCall(..) | Edit::KeepPrevious => None,
        });
        let removed = removed.filter(|&i| {
            view.result(i).is_some_and(|r| matches!(r.content, Content::Present(_) | Content::Replaced(_)))
        });
        let accumulates = self.inner.capabilities().sticky || edits.contains(&Edit::KeepPrevious);
        if accumulates {
            for i in removed {
                self.current.entry(i).or_insert(request);
            }
            return;
        }
        // A non-sticky policy's edits are the whole set for this request.
        let mut now: Vec<usize> = removed.collect();
        now.sort_unstable();
        now.dedup();
        let ranges = &mut self.log.ranges;
        self.current.retain(|&i, &mut from| {
            let kept = now.binary_search(&i).is_ok();
            if !kept {
                ranges.push((i, from, request));
            }
            kept
        });
        for i in now {
            self.current.entry(i).or_insert(request);
        }
    }

    fn report(&self) -> PolicyReport {
        self.inner.report()
    }
}

/// A [`PruneLog`] laid out by result for the lookups of [`run_reuse`] (one per holder of every first
/// use, per run): each result's ranges and compaction found by index, not searched for.
struct ByResult {
    /// Result `r`'s ranges are `log.ranges[starts[r]..starts[r + 1]]`.
    starts: Vec<usize>,
    /// The request from which a compaction summarised result `r` away (`usize::MAX`: never).
    compacted: Vec<usize>,
}

impl ByResult {
    /// `log` of a conversation with `results` tool results (results beyond them, which an index
    /// never names, are left out).
    fn of(log: &PruneLog, results: usize) -> ByResult {
        let mut starts = Vec::with_capacity(results + 1);
        let mut k = 0;
        for r in 0..=results {
            while k < log.ranges.len() && log.ranges[k].0 < r {
                k += 1;
            }
            starts.push(k);
        }
        let mut compacted = vec![usize::MAX; results];
        for (&r, &from) in log.compacted.range(..results) {
            compacted[r] = from;
        }
        ByResult { starts, compacted }
    }

    /// [`PruneLog::compacted_at`].
    fn compacted_at(&self, log: &PruneLog, result: usize, request: usize) -> bool {
        match self.compacted.get(result) {
            Some(&from) => from <= request,
            None => log.compacted_at(result, request),
        }
    }

    /// [`PruneLog::pruned_at`].
    fn pruned_at(&self, log: &PruneLog, result: usize, request: usize) -> bool {
        let Some(&end) = self.starts.get(result + 1) else { return log.pruned_at(result, request) };
        self.compacted_at(log, result, request)
            || log.ranges[self.starts[result]..end]
                .iter()
                .any(|&(_, from, to)| from <= request && request < to)
    }
}

/// The reuse of a run of `conversation` at `threshold` whose prunes `log` recorded, on the unit
/// `on` (a policy on whole outputs removes summaries too). With `clearings` (the run applies the
/// log's clearings: [`crate::harness::Harness::applies_clearings`]) a result the log cleared is
/// absent, summary and all, from the request it is cleared for on: it holds no term there, and
/// a use whose other holders the run pruned loses its last copy all the same. Only the results
/// the run pruned are counted as reused.
pub fn run_reuse(
    conversation: &MeasuredConversation,
    log: &PruneLog,
    threshold: usize,
    on: On,
    clearings: bool,
) -> RunReuse {
    if log.ranges.is_empty() && log.compacted.is_empty() {
        // Nothing pruned: no use can have lost every holder.
        return RunReuse::default();
    }
    let index = &conversation.reuse;
    let by_result = ByResult::of(log, index.results);
    // A use made before the run's first prune lost nothing; the uses come in request order.
    let first =
        log.ranges.iter().map(|r| r.1).chain(log.compacted.values().copied()).min().unwrap_or(usize::MAX);
    let uses = &index.uses[index.uses.partition_point(|u| u.request < first)..];
    let mut reused = vec![false; index.results];
    let cleared = |result, request| clearings && index.cleared_at(result, request);
    for u in uses {
        let lost = u.holders.iter().all(|h| {
            cleared(h.result, u.request)
                || by_result.pruned_at(log, h.result, u.request)
                    && (on == On::Output || !h.in_summary || by_result.compacted_at(log, h.result, u.request))
        });
        if lost {
            for h in u.holders.iter().filter(|h| by_result.pruned_at(log, h.result, u.request)) {
                if let Some(r) = reused.get_mut(h.result) {
                    *r = true;
                }
            }
        }
    }
    let count = reused.iter().filter(|&&r| r).count();
    let mut out = RunReuse { pruned_results: log.results().count(), reused_results: count, reused_tokens: 0 };
    if count == 0 {
        return out;
    }
    let results = conversation.items.iter().filter_map(|i| match i {
        MeasuredItem::ToolResult(sizes, _) => Some(sizes),
        _ => None,
    });
    for (k, sizes) in results.enumerate().filter(|(k, _)| reused.get(*k) == Some(&true)) {
        let (summary, content) = sizes.split_at(threshold);
        let content = content.map_or(0, |c| c.tokens);
        let whole = on == On::Output || log.compacted.contains_key(&k);
        out.reused_tokens += if whole { summary.tokens + content } else { content };
    }
    out
}

/// Replays `conversation` at `threshold` under `policy` (keeping of each request what `keep` says,
/// as [`replay_keeping`]) and measures the run's reuse: what the comparison and the
/// recommendation call for each run, with the policy's trigger when it did not fire
/// ([`PolicyReport::unfired`]).
pub fn replay_with_reuse(
    conversation: &MeasuredConversation,
    threshold: usize,
    policy: Box<dyn Policy>,
    meter: &Meter,
    keep: Keep,
) -> (Run, RunReuse, Option<crate::policy::Unfired>) {
    let mut recording = Recording::new(policy);
    let run = replay_keeping(conversation, threshold, &mut recording, meter, keep);
    let (reuse, unfired) = recording.reuse(conversation, threshold);
    (run, reuse, unfired)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{measured, meter, request, result, user};
    use crate::model::Item;

    fn call(id: &str, arguments: &str) -> Item {
        Item::ToolCall { call_id: id.into(), name: "tool".into(), arguments: arguments.into() }
    }

    /// Removes the contents of `results` before request `at`, and keeps them removed if sticky (a
    /// non-sticky one removes them for that request only); on the unit `on`.
    struct PruneAt {
        results: Vec<usize>,
        at: usize,
        sticky: bool,
        on: On,
    }
    impl Policy for PruneAt {
        fn capabilities(&self) -> Capabilities {
            Capabilities { sticky: self.sticky, on: self.on, ..Capabilities::default() }
        }
        fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
            if view.request == self.at {
                edits.extend(self.results.iter().map(|&i| Edit::Prune(i)));
            }
        }
    }

    /// A file read whose content names `compute_total_cost` (not in its first line, the summary),
    /// then an edit that uses it in the response to request 1. With `second`, another result holds
    /// the identifier too.
    fn session(second: bool) -> Vec<Item> {
        let read = "fn main() {}\nfn compute_total_cost() -> u64 { 0 }\n".to_owned();
        let mut items =
            vec![user("fix the cost"), call("c1", r#"{"path":"a.txt"}"#), result("c1", "read", read)];
        if second {
            items.push(call("c2", r#"{"pattern":"cost"}"#));
            items.push(result("c2", "grep", "hits:\na.txt: fn compute_total_cost() -> u64\n".into()));
        }
        items.extend([
            request(None),
            Item::Assistant { text: "Looking.".into() },
            request(None),
            call("e", r#"{"old_string":"compute_total_cost","new_string":"total_cost"}"#),
            result("e", "edit", "ok".into()),
            request(None),
        ]);
        items
    }

    fn reuse_of(items: Vec<Item>, policy: PruneAt) -> (Run, RunReuse) {
        let meter = meter().0;
        let m = measured(items, &meter);
        let (run, reuse, _) = replay_with_reuse(&m, 16, Box::new(policy), &meter, Keep::Rows);
        (run, reuse)
    }

    fn sticky(results: &[usize], at: usize) -> PruneAt {
        PruneAt { results: results.to_vec(), at, sticky: true, on: On::Content }
    }

    #[test]
    fn an_identifier_used_after_its_only_result_was_pruned_is_reused() {
        let (run, reuse) = reuse_of(session(false), sticky(&[0], 1));
        let content = run.rows[0].categories.tool_contents;
        assert_eq!(reuse, RunReuse { pruned_results: 1, reused_results: 1, reused_tokens: content });
        assert!(content > 0 && (reuse.share() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_use_before_the_prune_is_not_reuse_after_it() {
        let (_, reuse) = reuse_of(session(false), sticky(&[0], 2));
        assert_eq!((reuse.pruned_results, reuse.reused_results, reuse.reused_tokens), (1, 0, 0));
    }

    #[test]
    fn a_term_another_result_still_sends_is_not_reused_until_both_are_pruned() {
        let (_, one) = reuse_of(session(true), sticky(&[0], 1));
        assert_eq!((one.pruned_results, one.reused_results), (1, 0));
        let (_, both) = reuse_of(session(true), sticky(&[0, 1], 1));
        assert_eq!((both.pruned_results, both.reused_results), (2, 2));
    }

    #[test]
    fn a_term_in_the_summary_survives_a_content_prune_but_not_a_whole_output_one() {
        let mut items = session(false);
        items[2] = result("c1", "read", "fn compute_total_cost() -> u64 { 0 }\n// the end of it\n".into());
        let (_, content) = reuse_of(items.clone(), sticky(&[0], 1));
        assert_eq!(content.reused_results, 0, "the summary still names it");
        let (_, output) = reuse_of(items, PruneAt { on: On::Output, ..sticky(&[0], 1) });
        assert_eq!(output.reused_results, 1);
    }

    #[test]
    fn a_non_sticky_prune_counts_only_at_the_requests_it_applies_to() {
        let transient = |at| PruneAt { results: vec![0], at, sticky: false, on: On::Content };
        let (_, at_use) = reuse_of(session(false), transient(1));
        assert_eq!((at_use.pruned_results, at_use.reused_results), (1, 1));
        let (_, before) = reuse_of(session(false), transient(0));
        assert_eq!((before.pruned_results, before.reused_results), (1, 0), "sent again at request 1");
    }

    /// Compacts once, before request `at`, keeping nothing but the system prompt.
    struct CompactAt(usize);
    impl Policy for CompactAt {
        fn capabilities(&self) -> Capabilities {
            Capabilities { compacts: true, ..Capabilities::default() }
        }
        fn before_request(&mut self, _: &View<'_>, _: &mut Vec<Edit>) {}
        fn compact(&mut self, view: &View<'_>) -> Option<crate::policy::compact::Compaction> {
            (view.request == self.0).then_some(crate::policy::compact::Compaction {
                summary: crate::policy::compact::Summary::Tokens(10),
                keep_from: None,
                prompt_tokens: 0,
                whole_context: true,
                cache: crate::policy::compact::CallCache::Prefix,
                pairs: None,
            })
        }
    }

    #[test]
    fn a_result_a_compaction_summarised_away_counts_as_pruned_summary_and_all() {
        let meter = meter().0;
        // The identifier is in the read's first line (its summary): a content prune keeps it,
        // a compaction does not.
        let mut items = session(false);
        items[2] = result("c1", "read", "fn compute_total_cost() -> u64 { 0 }\n// the end of it\n".into());
        let m = measured(items, &meter);
        let (run, reuse, _) = replay_with_reuse(&m, 16, Box::new(CompactAt(1)), &meter, Keep::Rows);
        assert_eq!(run.summary.compaction.compactions, 1, "the policy compacted before request 1");
        let whole = run.rows[0].categories.tool_contents + run.rows[0].categories.tool_summaries;
        assert_eq!(reuse, RunReuse { pruned_results: 1, reused_results: 1, reused_tokens: whole });
        let (_, late, _) = replay_with_reuse(&m, 16, Box::new(CompactAt(2)), &meter, Keep::Rows);
        // Before request 2 the edit's own result goes too.
        assert_eq!((late.pruned_results, late.reused_results), (2, 0), "used before the compaction");
    }

    #[test]
    fn the_log_laid_out_by_result_answers_as_the_log() {
        // Results 0..6 (and 9, beyond the 6 an index would name), ranges recorded out of order,
        // two compactions.
        let mut recording = Recording::new(Box::new(sticky(&[], 0)));
        recording.log.ranges =
            vec![(3, 2, 4), (1, 0, 1), (3, 5, usize::MAX), (1, 3, 6), (9, 1, 2), (0, 7, 8)];
        recording.current.insert(5, 4);
        recording.log.compacted = BTreeMap::from([(1, 5), (4, 2), (9, 3)]);
        let log = recording.into_log();
        let by_result = ByResult::of(&log, 6);
        let mut pruned = 0;
        for result in 0..11 {
            for request in 0..10 {
                let at = log.pruned_at(result, request);
                assert_eq!(by_result.pruned_at(&log, result, request), at, "{result} at {request}");
                let compacted = log.compacted_at(result, request);
                assert_eq!(by_result.compacted_at(&log, result, request), compacted, "{result} at {request}");
                pruned += usize::from(at);
            }
        }
        assert!(pruned > 20, "the log prunes something: {pruned}");
    }

    #[test]
    fn recording_a_policy_changes_nothing_in_its_replay() {
        let meter = meter().0;
        let m = measured(session(true), &meter);
        for policy in ["none", "keep-results:n=0", "keep-turns:n=1", "anthropic"] {
            let spec = crate::policy::PolicySpec::parse(policy).unwrap();
            let plain = crate::replay::replay(&m, 16, &mut *spec.build(), &meter);
            let (recorded, _, _) = replay_with_reuse(&m, 16, spec.build(), &meter, Keep::Rows);
            assert_eq!(plain, recorded, "{policy}");
        }
    }
}
