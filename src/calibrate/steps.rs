//! Content the log marks but does not hold, sized from the step the recorded prompt takes across
//! the mark: a **step marker**. Two kinds:
//!
//! - **server-side content** ([`Category::ServerSide`]): an item an importer puts where the
//!   provider added content of its own (a Codex `web_search_call`, whose results the Responses API
//!   adds to the context and the rollout does not record). The importer cannot size it; the
//!   calibration gives it the size here: what of it stays in the context ("Sent once" below).
//! - **an injection the agent makes** at a tool call it records: Claude Code's `EnterPlanMode`
//!   ([`PLAN_MODE_TOOL`]), after which plan mode's instructions are sent with every request; the
//!   calibration adds the size as an [`Category::Unrecorded`] item before the next request (the
//!   overhead changes there).
//!
//! **The size.** A marker lies between two recorded requests `i < j` of one segment (no compaction
//! between them): the last recorded request before it and the first after it, of those the fit
//! keeps. Of the recorded step `y_j − y_i`, what the replay appends between them accounts for
//! `b·(x_j − x_i) + c·(n_j − n_i)` (the fit's ratio, per kind where fitted, and framing); the rest,
//! never negative, is the marker's, split evenly where several markers lie between the same two
//! requests. The growth `d` (tens of tokens a request) is not taken off: it is fitted after the
//! markers are sized, from the gaps they leave. A marker with no such pair (no recorded request
//! after it in its segment) keeps the size it has of its own where it has one (a native trace's
//! `unseen` item; only where the calibration is applied, [`own_sizes`]), else takes the median of
//! the sized markers of the conversation, else 0.
//!
//! **Sent once.** Content can also be in one request's prompt and leave at the next: on a real
//! Codex 0.104 rollout each web search's results are in the prompt of the call that searched and
//! gone from the next call's, while on a 0.125 one they stay (docs/unseen-context.md, "Server-side
//! content"). A marker is sized as what **stays**: where the recorded prompt falls at the next
//! kept request of the segment (no marker between) by at least [`TRANSIENT_SHARE`] of the
//! marker's step, less what the replay appends there, the fall is taken off the step. The
//! request that sent it is then under-predicted by what it sent once; the later ones are not
//! over-predicted by it.
//!
//! **Leave-one-out.** The fit that predicts request `k` is made without `y_k` ([`super::fit`]'s
//! `skip`): a marker right before `k` is then sized from the step between the recorded requests
//! around `k` (`y_{k−1}` to `y_{k+1}`, less what the replay appends from `k−1` to `k+1`), so the
//! size of the content that request `k` first sends is not read off `y_k`. The appends across a
//! marker are kept out of the ratio and the framing (their step is not what the log holds).
//! Pure: no I/O.

use super::kinds::Kind;
use super::{KINDS, Sample, positions, scale};
use crate::measure::{Category, MeasuredItem, overhead_measure};
use crate::model::Tokens;

/// The tool call after which Claude Code sends plan mode's instructions with every request (its
/// result says "Entered plan mode"); the log holds the call and its result, not the instructions.
pub const PLAN_MODE_TOOL: &str = "EnterPlanMode";

/// The share of a marker's step that the recorded prompt must fall by at the next request for the
/// step to count as sent with one request only (module doc, "Sent once"); a smaller fall is taken
/// as the noise of the appends' count, and the step as staying. Set before measuring, not tuned.
pub const TRANSIENT_SHARE: f64 = 0.5;

/// What a step marker is, or `None` for an item that is not one.
pub fn marker(item: &MeasuredItem) -> Option<Marker> {
    match item {
        MeasuredItem::Text { category: Category::ServerSide, measure, .. } => {
            Some(Marker::Server(measure.tokens))
        }
        MeasuredItem::ToolCall { name, .. } if name == PLAN_MODE_TOOL => Some(Marker::Injection),
        _ => None,
    }
}

/// A step marker ([`marker`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Server-side content, with the size the importer gave it (0 where it could not tell).
    Server(Tokens),
    /// An injection the agent makes after a tool call it records.
    Injection,
}

/// The size of every marker, by segment ([`positions`]) and by its order in the segment (the
/// markers since the segment's compaction, [`Sample::marks`]), fitted with the model's ratio
/// (`kinds`) and framing on the recorded requests but `skip` (see the module doc). `own` is the
/// size each marker has of its own, in the same order ([`own_sizes`]).
pub fn sizes(
    samples: &[Sample],
    (ratio, kinds, framing): (f64, Option<[f64; KINDS]>, f64),
    skip: Option<usize>,
    own: &[Vec<Tokens>],
) -> Vec<Vec<f64>> {
    let pos = positions(samples);
    let count = pos.last().map_or(0, |p| p.0 + 1);
    let mut out: Vec<Vec<Option<f64>>> = (0..count)
        .map(|seg| {
            let marks = samples.iter().zip(&pos).filter(|(_, p)| p.0 == seg).map(|(s, _)| s.marks).max();
            vec![None; marks.unwrap_or(0) as usize]
        })
        .collect();
    let model = |s: &Sample| scale(ratio, kinds, s) + framing * s.items as f64;
    // Consecutive kept recorded requests of one segment.
    let kept: Vec<usize> =
        (0..samples.len()).filter(|&i| Some(i) != skip && samples[i].recorded.is_some()).collect();
    // The recorded step from request `i` to `j` that the replay's appends do not explain.
    let unexplained = |i: usize, j: usize| {
        let (si, sj) = (&samples[i], &samples[j]);
        sj.recorded.unwrap_or(0) as f64 - si.recorded.unwrap_or(0) as f64 - (model(sj) - model(si))
    };
    for (w, &j) in kept.iter().enumerate().skip(1) {
        let i = kept[w - 1];
        let (si, sj) = (&samples[i], &samples[j]);
        if pos[i].0 != pos[j].0 || sj.marks <= si.marks {
            continue;
        }
        let step = unexplained(i, j);
        // What falls again at the next kept request, with no marker between: content sent with
        // request `j` only (see the module doc), not what stays.
        let fall = kept
            .get(w + 1)
            .filter(|&&l| pos[l].0 == pos[j].0 && samples[l].marks == sj.marks)
            .map_or(0.0, |&l| (-unexplained(j, l)).max(0.0));
        let stays = if fall >= TRANSIENT_SHARE * step { step - fall } else { step };
        let each = stays.max(0.0) / f64::from(sj.marks - si.marks);
        for m in si.marks..sj.marks {
            out[pos[j].0][m as usize] = Some(each);
        }
    }
    let sized: Vec<f64> = out.iter().flatten().flatten().copied().collect();
    let fallback = super::median(sized);
    out.into_iter()
        .enumerate()
        .map(|(seg, v)| {
            v.into_iter()
                .enumerate()
                .map(|(m, size)| {
                    let own = own.get(seg).and_then(|o| o.get(m)).copied().filter(|&t| t > 0);
                    size.or(own.map(|t| t as f64)).or(fallback).unwrap_or(0.0)
                })
                .collect()
        })
        .collect()
}

/// The markers' own sizes ([`Marker::Server`]'s; 0 for an injection), by segment and order as in
/// [`sizes`].
pub fn own_sizes(items: &[MeasuredItem]) -> Vec<Vec<Tokens>> {
    let mut out = vec![Vec::new()];
    for (segment, ordinal, m) in located(items).into_iter().flatten() {
        if out.len() <= segment {
            out.resize(segment + 1, Vec::new());
        }
        if out[segment].len() <= ordinal {
            out[segment].resize(ordinal + 1, 0);
        }
        out[segment][ordinal] = if let Marker::Server(t) = m { t } else { 0 };
    }
    out
}

/// The provider tokens the markers in `s`'s context stand for: the sum of the first
/// [`Sample::marks`] sizes of its segment.
pub fn in_context(sizes: &[Vec<f64>], segment: usize, s: &Sample) -> f64 {
    sizes.get(segment).map_or(0.0, |v| v.iter().take(s.marks as usize).sum())
}

/// The running sums of `sizes` per segment, from 0: [`in_context`] of a sample is
/// `sums[segment][marks]`, looked up instead of summed (a fit takes it at every request).
pub fn running_sums(sizes: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let sums = |v: &Vec<f64>| {
        std::iter::once(0.0)
            .chain(v.iter().scan(0.0, |sum, x| {
                *sum += x;
                Some(*sum)
            }))
            .collect()
    };
    sizes.iter().map(sums).collect()
}

/// For each item, where it is a marker: the segment it counts in ([`positions`]: the segment of
/// the next request; a compaction after a request starts the next one) and its order among the
/// markers since the last compaction (as [`Sample::marks`] counts them).
fn located(items: &[MeasuredItem]) -> Vec<Option<(usize, usize, Marker)>> {
    let (mut segment, mut seen, mut compacted, mut ordinal) = (0, false, false, 0);
    items
        .iter()
        .map(|item| {
            match item {
                MeasuredItem::Compaction { .. } => (compacted, ordinal) = (true, 0),
                MeasuredItem::Request { .. } => {
                    if seen && compacted {
                        segment += 1;
                    }
                    (seen, compacted) = (true, false);
                }
                _ => {}
            }
            let m = marker(item)?;
            ordinal += 1;
            Some((if seen && compacted { segment + 1 } else { segment }, ordinal - 1, m))
        })
        .collect()
}

/// Gives every marker of `items` its size (`sizes`, rounded): server-side content takes it as its
/// count; an injection adds an [`Category::Unrecorded`] item of it before the next request.
pub fn apply(items: &mut Vec<MeasuredItem>, sizes: &[Vec<f64>]) {
    if sizes.iter().all(Vec::is_empty) {
        return;
    }
    let old = std::mem::take(items);
    let located = located(&old);
    let mut pending = 0;
    for (mut item, at) in old.into_iter().zip(located) {
        if let MeasuredItem::Request { .. } = item
            && pending > 0
        {
            items.push(super::unrecorded(std::mem::take(&mut pending)));
        }
        if let Some((segment, ordinal, m)) = at {
            let size = sizes.get(segment).and_then(|v| v.get(ordinal)).copied().unwrap_or(0.0);
            let size = size.round().max(0.0) as Tokens;
            match (m, &mut item) {
                (Marker::Server(_), MeasuredItem::Text { measure, .. }) => *measure = overhead_measure(size),
                (Marker::Injection, _) => pending += size,
                _ => {}
            }
        }
        items.push(item);
    }
}

/// A walk's clearing markers ([`MeasuredItem::Cleared`]) in a sample's terms: each result a
/// marker clears leaves the context and its kind, and the placeholder it is sent as comes in as
/// tool output; each thinking text it clears leaves the context and prose.
#[derive(Debug, Default)]
pub struct Clearing {
    clearing: crate::measure::cleared::Clearing,
    /// Each tool result's kind so far, where the samples are split by kind.
    kinds: Option<Vec<Option<Kind>>>,
}

impl Clearing {
    /// A walk's, with the samples split by kind where `by_kind`.
    pub fn new(by_kind: bool) -> Clearing {
        Clearing { kinds: by_kind.then(Vec::new), ..Clearing::default() }
    }

    /// Notes `item`; at a clearing marker, takes the results and thinking it clears out of
    /// `context` and `kinds`, adds the placeholders to `kinds`, and returns their tokens (for
    /// `context`).
    pub fn step(&mut self, item: &MeasuredItem, context: &mut Tokens, kinds: &mut [Tokens; KINDS]) -> Tokens {
        if let (MeasuredItem::ToolResult(..), Some(k)) = (item, &mut self.kinds) {
            k.push(Kind::of_item(item));
        }
        let cleared = self.clearing.step(item);
        let MeasuredItem::Cleared { placeholder, .. } = item else { return 0 };
        let thinking = self.clearing.thinking();
        *context = context.saturating_sub(thinking);
        if self.kinds.is_some() {
            kinds[Kind::Prose.index()] = kinds[Kind::Prose.index()].saturating_sub(thinking);
        }
        for &(i, tokens) in &cleared {
            *context = context.saturating_sub(tokens);
            if let Some(k) = self.kinds.as_ref().and_then(|k| k.get(i).copied().flatten()) {
                kinds[k.index()] = kinds[k.index()].saturating_sub(tokens);
            }
        }
        let added = placeholder.tokens * cleared.len() as Tokens;
        if self.kinds.is_some() {
            kinds[Kind::ToolOutput.index()] += added;
        }
        added
    }
}

#[cfg(test)]
mod tests;
