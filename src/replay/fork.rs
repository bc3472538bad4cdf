//! One conversation replayed under one policy at several thresholds, the work they share done once.
//!
//! A threshold reaches the engine only where a tool result is split
//! ([`crate::measure::ResultSizes::split_at`]), so two thresholds replay alike item for item up to
//! the first result they split differently; the seed's rule splits an output of more bytes than the
//! threshold, so over ascending thresholds a result's split changes once at most, and the first and
//! last thresholds of a part tell whether that result parts them. The
//! replays start as one; at a result that splits the thresholds still together two ways, the
//! replay is **forked**: the engine, the run's totals and rows so far ([`Replaying::fork`]),
//! the policy's state (`fork`, given by the caller: for [`crate::policy::Policy`] objects,
//! [`crate::policy::Policy::fork`]) and the agent's trigger beside it are copied, and each copy
//! goes on with its own thresholds from that result. Each run is thus item for item the replay
//! [`super::replay_keeping`] makes at its threshold (the same steps in the same order, on a copy of
//! the same state), and the grid replays each conversation's shared prefixes once. A policy (or
//! trigger) that cannot be copied is replayed again from the first item for the thresholds that
//! part from it there: slower, the same runs. Depth first, one copy per part left pending; no
//! threads, so the same input gives the same runs in the same order. Pure: no I/O.

use std::ops::Range;

use super::{Keep, Replaying, beside, harness_of};
use crate::measure::{MeasuredConversation, MeasuredItem};
use crate::policy::Policy;
use crate::result::Run;
use crate::tokens::Meter;

/// The run of a part of the thresholds, which split every result of the conversation alike.
pub struct Forked<P> {
    /// Indices of those thresholds in the list given (ascending, consecutive).
    pub thresholds: Range<usize>,
    /// The run, at the first of them (its `threshold`).
    pub run: Run,
    /// The policy after the run, for what it recorded.
    pub policy: P,
    /// `(t, n)`: the run was forked from the run of the thresholds starting at index `t` (listed
    /// before it), its first `n` rows copied from that run's; `None`: replayed from the first item.
    pub forked_from: Option<(usize, usize)>,
}

/// A replay in progress for the thresholds `group`, from item `from` on.
struct Branch<'a, P> {
    replaying: Replaying<'a>,
    policy: P,
    trigger: Option<Box<dyn Policy>>,
    group: Range<usize>,
    from: usize,
    forked_from: Option<(usize, usize)>,
}

/// Replays `conversation` under a policy made by `fresh` at each of `thresholds` (ascending, as
/// [`MeasuredConversation::split_plan`] gives them), keeping what `keep` says, the replays sharing
/// their common prefixes; `fork` copies the policy's state (`None`: it cannot). One run per set of
/// thresholds that split the conversation alike, in threshold order: with thresholds that split it
/// pairwise differently, one per threshold.
pub fn replay_forked<P: Policy>(
    conversation: &MeasuredConversation,
    thresholds: &[usize],
    fresh: &dyn Fn() -> P,
    fork: &dyn Fn(&P) -> Option<P>,
    meter: &Meter,
    keep: Keep,
) -> Vec<Forked<P>> {
    let start = |group: Range<usize>| {
        let mut policy = fresh();
        let (harness, mut trigger) = harness_of(conversation, &policy);
        let threshold = thresholds[group.start];
        let replaying = beside(&mut policy, trigger.as_mut(), |p| {
            Replaying::new(conversation, threshold, p, meter, keep, harness)
        });
        Box::new(Branch { replaying, policy, trigger, group, from: 0, forked_from: None })
    };
    // At most one run per threshold, and one branch pending per part.
    let mut done = Vec::with_capacity(thresholds.len());
    let mut pending = Vec::with_capacity(thresholds.len());
    if !thresholds.is_empty() {
        pending.push(start(0..thresholds.len()));
    }
    let mut edits = Vec::new();
    // Boxed: a branch (engine and policy) is large, and is moved into and out of `pending`.
    while let Some(mut b) = pending.pop() {
        for (position, item) in conversation.items.iter().enumerate().skip(b.from) {
            if let (MeasuredItem::ToolResult(sizes, _), true) = (item, b.group.len() > 1) {
                // Split or not as the seed's rule says (more bytes than the threshold): one change
                // at most over ascending thresholds, so the first and the last tell.
                let first = sizes.split_at(thresholds[b.group.start]);
                if sizes.split_at(thresholds[b.group.end - 1]) != first {
                    let alike =
                        b.group.clone().take_while(|&i| sizes.split_at(thresholds[i]) == first).count();
                    let rest = b.group.start + alike..b.group.end;
                    b.group.end = rest.start;
                    pending.push(part(&b, rest, position, fork, thresholds).unwrap_or_else(&start));
                }
            }
            beside(&mut b.policy, b.trigger.as_mut(), |p| b.replaying.item(position, item, p, &mut edits));
        }
        let Branch { replaying, policy, group, forked_from, .. } = *b;
        done.push(Forked { thresholds: group, run: replaying.finish(), policy, forked_from });
    }
    done.sort_by_key(|f| f.thresholds.start);
    done
}

/// A copy of `b` for the thresholds `rest`, to go on from the item at `position`; `Err(rest)` when
/// its policy or trigger cannot be copied.
fn part<'a, P>(
    b: &Branch<'a, P>,
    rest: Range<usize>,
    position: usize,
    fork: &dyn Fn(&P) -> Option<P>,
    thresholds: &[usize],
) -> Result<Box<Branch<'a, P>>, Range<usize>> {
    let Some(policy) = fork(&b.policy) else { return Err(rest) };
    let trigger = match &b.trigger {
        Some(t) => match t.fork() {
            Some(t) => Some(t),
            None => return Err(rest),
        },
        None => None,
    };
    let mut replaying = b.replaying.fork();
    replaying.set_threshold(thresholds[rest.start]);
    let forked_from = Some((b.group.start, b.replaying.rows.len()));
    Ok(Box::new(Branch { replaying, policy, trigger, group: rest, from: position, forked_from }))
}
