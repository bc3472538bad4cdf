//! Content kinds and the provider's ratio per kind (`--tokenizer provider`, where the provider's
//! tokenizer is not public): each measured text is one of four kinds ([`Kind::of_item`]), and
//! each kind gets its own provider tokens per o200k token, fitted from the usage deltas
//! ([`fit`]).
//!
//! **The kinds.** A tool call (name and JSON arguments) is [`Kind::Arguments`]; a tool result is
//! [`Kind::Code`] where its output looks like source code by its line shape ([`looks_like_code`]),
//! else [`Kind::ToolOutput`]; every other text (user, assistant, system, reasoning, a compaction
//! summary) is [`Kind::Prose`]. An image is none of them: its size is the provider's own rule
//! applied to its dimensions, provider tokens already, and it is never scaled.
//!
//! **The fit.** Between two consecutive recorded requests, the provider counted
//! `y_{k+1} − y_k = Σ_kind r_kind · Δx_kind` of what was appended, `Δx_kind` the o200k count of the
//! appended texts of each kind. Over the pairs the single ratio uses, the ratios are the weighted
//! least squares solution (each pair weighted by `1 / Δx`, its total append, so a pair counts by
//! its relative error), refitted on the pairs whose relative residual is within 3 scaled
//! median absolute deviations of the median (a cache miss or a reminder does not pull the fit).
//! A kind is fitted only where it makes at least [`MIN_SHARE`] of the appended tokens and
//! [`MIN_PAIRS`] pairs append at least [`MIN_KIND_TOKENS`] of it, and its ratio lies within
//! [`BOUNDS`] times the single ratio; otherwise it takes the single ratio and the others are
//! refitted.
//!
//! **Few appends.** A ratio fitted on a few small appends is unstable: each append also carries
//! tokens the log does not hold (structure, reminders), a large share of a small one. So each
//! kind's ratio is moved toward the single ratio by its evidence `n` (report tokens of the kind
//! in the appends the fit kept), with the credibility weight `n / (n +` [`CREDIBILITY`]`)`, and
//! then held within [`BAND`] times the single ratio. Pure: no I/O.

use crate::measure::{Category, MeasuredItem};

/// Number of kinds.
pub const KINDS: usize = 4;

/// Smallest share of the appended tokens a kind is fitted from.
pub const MIN_SHARE: f64 = 0.05;

/// Fewest pairs that append at least [`MIN_KIND_TOKENS`] of a kind for it to be fitted.
pub const MIN_PAIRS: usize = 5;

/// Tokens of a kind a pair must append to count towards [`MIN_PAIRS`].
pub const MIN_KIND_TOKENS: f64 = 50.0;

/// A fitted kind's ratio must lie within these multiples of the single ratio (farther out, the
/// kind takes the single ratio).
pub const BOUNDS: (f64, f64) = (0.5, 2.0);

/// Report tokens of evidence at which a kind's own ratio and the single ratio weigh the same
/// ([`fit`]: the credibility weight `n / (n + CREDIBILITY)`). Chosen by the leave-one-out error on
/// the shared corpus (docs/calibration.md, "Few appends"): the smallest mean relative error of
/// the formats fitted per kind among 0, 1 000, 2 000, 3 000, 4 000, 5 000 and 10 000.
pub const CREDIBILITY: f64 = 4_000.0;

/// A kind's ratio, after the credibility weight, is held within these multiples of the single
/// ratio: the range of the ratios the shared corpus's conversations fitted per kind on at least
/// 10 000 tokens of evidence (0.903–1.542, docs/calibration.md, "Few appends").
pub const BAND: (f64, f64) = (0.9, 1.55);

/// What a measured text is, for its ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Messages and summaries.
    Prose,
    /// Tool outputs that are source code.
    Code,
    /// Other tool outputs.
    ToolOutput,
    /// Tool calls.
    Arguments,
}

impl Kind {
    /// Every kind, in the order of the arrays of this module.
    pub const ALL: [Kind; KINDS] = [Kind::Prose, Kind::Code, Kind::ToolOutput, Kind::Arguments];

    /// The kind of `item`; `None` for what is not a measured text (a request, unrecorded content,
    /// framing).
    pub fn of_item(item: &MeasuredItem) -> Option<Kind> {
        match item {
            MeasuredItem::Text {
                category: Category::Unrecorded | Category::Framing | Category::Images,
                ..
            } => None,
            MeasuredItem::Text { .. } | MeasuredItem::Compaction { summary: Some(_) } => Some(Kind::Prose),
            MeasuredItem::ToolCall { .. } => Some(Kind::Arguments),
            MeasuredItem::ToolResult(_, r) if looks_like_code(&r.text) => Some(Kind::Code),
            MeasuredItem::ToolResult(..) => Some(Kind::ToolOutput),
            MeasuredItem::Compaction { summary: None }
            | MeasuredItem::Request { .. }
            | MeasuredItem::Cleared { .. } => None,
        }
    }

    /// Index in the arrays of this module.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Lines of a text [`looks_like_code`] reads.
const CODE_LINES: usize = 200;

/// Whether `text` looks like source code: of its first [`CODE_LINES`] non-blank lines (a `cat -n`
/// or Claude Code `Read` line-number prefix, `   12→` or `    12\t`, is ignored), at least 40% end
/// with `{ } ; ( ) , :` or `=>`, or start with a comment marker or a common keyword.
pub fn looks_like_code(text: &str) -> bool {
    let (mut lines, mut code) = (0usize, 0usize);
    for line in text.lines().filter(|l| !l.trim().is_empty()).take(CODE_LINES) {
        lines += 1;
        code += usize::from(is_code_line(strip_number(line).trim()));
    }
    lines > 0 && code * 10 >= lines * 4
}

/// `line` without a leading line number and its separator (`→` or a tab).
fn strip_number(line: &str) -> &str {
    let rest = line.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return line;
    }
    let after = &rest[digits..];
    after.strip_prefix('→').or_else(|| after.strip_prefix('\t')).unwrap_or(line)
}

/// Whether one trimmed line has the shape of code.
fn is_code_line(line: &str) -> bool {
    const ENDS: [&str; 8] = ["{", "}", ";", "(", ")", ",", ":", "=>"];
    const STARTS: [&str; 16] = [
        "//",
        "/*",
        "* ",
        "#",
        "fn ",
        "def ",
        "class ",
        "import ",
        "from ",
        "use ",
        "pub ",
        "let ",
        "const ",
        "return ",
        "if ",
        "function ",
    ];
    ENDS.iter().any(|e| line.ends_with(e)) || STARTS.iter().any(|s| line.starts_with(s))
}

/// One append between two recorded requests: its report tokens of each kind and the provider's
/// count of it.
pub type Append = ([f64; KINDS], f64);

/// The ratio of each kind fitted from `appends` (see the module doc), `single` for a kind with too
/// little data; `None` when no kind qualifies (every kind would take `single`).
pub fn fit(appends: &[Append], single: f64) -> Option<[f64; KINDS]> {
    let total: f64 = appends.iter().map(|a| a.0.iter().sum::<f64>()).sum();
    let mut free: Vec<usize> = (0..KINDS)
        .filter(|&k| {
            let share = appends.iter().map(|a| a.0[k]).sum::<f64>() / total;
            let pairs = appends.iter().filter(|a| a.0[k] >= MIN_KIND_TOKENS).count();
            share >= MIN_SHARE && pairs >= MIN_PAIRS
        })
        .collect();
    while !free.is_empty() {
        let (ratios, evidence) = robust(appends, &free, single)?;
        let (lo, hi) = (BOUNDS.0 * single, BOUNDS.1 * single);
        // The kind farthest outside the bounds takes the single ratio; the rest are refitted.
        let worst = free
            .iter()
            .copied()
            .filter(|&k| !(lo..=hi).contains(&ratios[k]))
            .max_by(|&a, &b| distance(ratios[a], lo, hi).total_cmp(&distance(ratios[b], lo, hi)));
        match worst {
            Some(k) => free.retain(|&f| f != k),
            None => return Some(shrunk(ratios, &evidence, single)),
        }
    }
    None
}

/// Each ratio of `ratios` moved toward `single` by the evidence of its kind (`evidence`: report
/// tokens of the kind in the appends the fit kept), the credibility weight `n / (n +`
/// [`CREDIBILITY`]`)`, then held within [`BAND`] times `single`.
fn shrunk(mut ratios: [f64; KINDS], evidence: &[f64; KINDS], single: f64) -> [f64; KINDS] {
    for (r, n) in ratios.iter_mut().zip(evidence) {
        let w = n / (n + CREDIBILITY);
        *r = (single + w * (*r - single)).clamp(BAND.0 * single, BAND.1 * single);
    }
    ratios
}

/// How far `r` lies outside `[lo, hi]`, relative to the bound it passes.
fn distance(r: f64, lo: f64, hi: f64) -> f64 {
    if r < lo { (lo - r) / lo } else { (r - hi) / hi }
}

/// The weighted least squares ratios of the `free` kinds (the others at `single`), refitted twice
/// on the appends whose relative residual is within 3 scaled MADs of the median (at least 2%);
/// and the report tokens of each kind in the appends of the last fit (its evidence).
fn robust(appends: &[Append], free: &[usize], single: f64) -> Option<([f64; KINDS], [f64; KINDS])> {
    let mut kept: Vec<&Append> = appends.iter().collect();
    let mut ratios = solve(&kept, free, single)?;
    for _ in 0..2 {
        let residual = |a: &Append| {
            let x: f64 = a.0.iter().sum();
            (a.1 - (0..KINDS).map(|k| ratios[k] * a.0[k]).sum::<f64>()) / x
        };
        let rel: Vec<f64> = appends.iter().map(residual).collect();
        let mid = median(rel.clone());
        let mad = 1.4826 * median(rel.iter().map(|r| (r - mid).abs()).collect());
        let limit = 3.0 * mad.max(0.02);
        kept = appends.iter().zip(&rel).filter(|(_, r)| (*r - mid).abs() <= limit).map(|p| p.0).collect();
        ratios = solve(&kept, free, single)?;
    }
    let mut evidence = [0.0; KINDS];
    for (x, _) in kept {
        for (n, x) in evidence.iter_mut().zip(x) {
            *n += x;
        }
    }
    Some((ratios, evidence))
}

/// The median of `v` (the lower of an even count; 0 for none).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0.0)
}

/// Weighted least squares (weights `1 / Σx`) of `y − single · Σ_fixed x = Σ_free r · x` over
/// `appends`; `None` when the normal equations are singular.
fn solve(appends: &[&Append], free: &[usize], single: f64) -> Option<[f64; KINDS]> {
    let n = free.len();
    let mut a = vec![vec![0.0; n + 1]; n];
    for (x, y) in appends.iter().map(|a| (&a.0, a.1)) {
        let w = 1.0 / x.iter().sum::<f64>();
        let fixed: f64 = (0..KINDS).filter(|k| !free.contains(k)).map(|k| single * x[k]).sum();
        for (i, &ki) in free.iter().enumerate() {
            for (j, &kj) in free.iter().enumerate() {
                a[i][j] += w * x[ki] * x[kj];
            }
            a[i][n] += w * x[ki] * (y - fixed);
        }
    }
    let r = gauss(a)?;
    let mut out = [single; KINDS];
    for (i, &k) in free.iter().enumerate() {
        out[k] = r[i];
    }
    Some(out)
}

/// Solves the augmented `n × (n+1)` system by Gaussian elimination with partial pivoting; `None`
/// when a pivot is (nearly) zero.
fn gauss(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let n = a.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        let scale = a.iter().map(|row| row[col].abs()).fold(0.0, f64::max);
        if a[pivot][col].abs() <= 1e-12 * scale.max(1e-300) {
            return None;
        }
        a.swap(col, pivot);
        let (top, below) = a.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for row in below.iter_mut() {
            let f = row[col] / pivot_row[col];
            for (cell, p) in row.iter_mut().zip(pivot_row).skip(col) {
                *cell -= f * p;
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|c| a[row][c] * x[c]).sum();
        x[row] = (a[row][n] - s) / a[row][row];
    }
    Some(x)
}
