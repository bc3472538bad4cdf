//! The recommendation as a corpus pass: [`recommend`] walks the files once, keeping each
//! conversation's grid (small: one cell per pair), and, when the inputs are small enough to hold
//! ([`super::holds`]), the files too; the per-tool step, which needs the answer first, then runs
//! over the held files or a second read of the files (which counts nothing: the meter's cache has
//! every text by then).
//!
//! Nothing here prints: progress is a callback, problems come back as strings.

use super::{Walked, again, holds, walk};
use crate::analysis::recommend::{self, ConversationGrid, RecommendSettings, Recommendation, ToolPlan};
use crate::input::Discovered;
use crate::pipeline::{Job, MeasuredFile};
use crate::tokens::Meter;

/// Recommends a (policy, threshold) over the files `found`, loaded and measured as `job` says
/// with `meter`, on the current rayon pool: the same bytes as
/// [`crate::analysis::recommend::recommend`] over every conversation held, in the memory of
/// [`holds`]`(found, low_memory)`. `progress` is called once per file read.
pub fn recommend(
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    settings: &RecommendSettings,
    low_memory: bool,
    progress: &(dyn Fn() + Sync),
) -> Walked<Recommendation> {
    let hold = holds(found, low_memory);
    let first = |_: usize, file: MeasuredFile, meter: &Meter| {
        let grids: Vec<ConversationGrid> =
            file.conversations.iter().map(|c| recommend::grid_of(c, settings, meter)).collect();
        (grids, hold.then_some(file))
    };
    let Walked { output: parts, read, errors, warnings, inputs, tools } =
        walk(first, found, job, meter, progress);
    // Only the files that gave a conversation are read again (noted before the grids move out).
    let places: Vec<usize> =
        parts.iter().enumerate().filter(|(_, (g, _))| !g.is_empty()).map(|(i, _)| i).collect();
    let (grids, files): (Vec<Vec<ConversationGrid>>, Vec<Option<MeasuredFile>>) = parts.into_iter().unzip();
    let grids: Vec<ConversationGrid> = grids.into_iter().flatten().collect();
    let (mut out, pick) = recommend::finish(&grids, settings);
    let Some(plan) = ToolPlan::of(&out, pick, &grids, settings) else {
        return Walked { output: out, read, errors, warnings, inputs, tools };
    };
    let mut sum = Vec::new();
    if hold {
        for file in files.iter().flatten() {
            for c in &file.conversations {
                recommend::add_tool_cells(&mut sum, plan.cells(c, settings, meter));
            }
        }
    } else {
        let second = again(found, places);
        let cells = |_: usize, file: MeasuredFile, meter: &Meter| {
            file.conversations.iter().map(|c| plan.cells(c, settings, meter)).collect::<Vec<_>>()
        };
        for part in walk(cells, &second, job, meter, progress).output.into_iter().flatten() {
            recommend::add_tool_cells(&mut sum, part);
        }
    }
    plan.finish(&mut out, &sum, settings);
    Walked { output: out, read, errors, warnings, inputs, tools }
}
