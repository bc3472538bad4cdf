//! Value axes: round upper bounds and ticks whose labels share one format per axis, so distinct
//! ticks always read apart. Pure arithmetic plus plotters' `Ranged` glue; nothing is drawn here.

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;

/// A nice upper bound for an axis: `value` rounded up to 1, 2 or 5 × a power of ten.
pub fn nice_ceiling(value: f64) -> f64 {
    if !value.is_finite() || value <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(value.log10().floor());
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|v| *v >= value)
        .unwrap_or(10.0 * magnitude)
}

/// The ticks of a value axis and the one format all their labels share. Both are chosen once per
/// axis, from the step between ticks: as many decimals as the step needs, and thousands as `k` on
/// the whole axis once its largest tick reaches 10,000 (0 is `0` either way). Formatting each
/// value on its own, `{:.0}` with `k` from 10,000, gave one axis `8000, 10k, 12k` and a small one
/// `0 0 1 2 2 2`; here distinct ticks always get distinct labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    /// The labelled values, ascending, 1, 2 or 5 × a power of ten apart.
    pub values: Vec<f64>,
    /// Unlabelled values between them, for the light grid.
    pub light: Vec<f64>,
    /// Whether every label is in thousands, with a `k`.
    thousands: bool,
    /// Decimals of every label.
    decimals: usize,
}

impl Ticks {
    /// At most `max` ticks (`max` ≥ 2: a range has two ends) over `lo..=hi`, at least `min_step`
    /// apart: 1 for counts such as tokens or requests, whose fractions mean nothing.
    pub fn new(lo: f64, hi: f64, max: usize, min_step: f64) -> Ticks {
        let step = tick_step((hi - lo) / max.saturating_sub(1).max(1) as f64, min_step);
        let values = multiples(lo, hi, step);
        // A fifth or a half of the step, where that is still a step the axis allows.
        let light = [5.0, 2.0]
            .iter()
            .map(|d| step / d)
            .find(|sub| *sub >= min_step.max(f64::MIN_POSITIVE) && is_nice(*sub))
            .map_or_else(Vec::new, |sub| multiples(lo, hi, sub));
        let thousands = values.iter().any(|v| v.abs() >= 10_000.0);
        let unit_step = if thousands { step / 1000.0 } else { step };
        let decimals = (-unit_step.log10().floor()).max(0.0) as usize;
        Ticks { values, light, thousands, decimals }
    }

    /// The linear axis `lo..hi` with these ticks on it.
    pub fn axis(self, lo: f64, hi: f64) -> TickedAxis {
        let labelled = self.values.iter().map(|v| (*v, self.label(v))).collect();
        TickedAxis::new(lo..hi, labelled, self.light)
    }

    /// The label of tick `v`.
    pub fn label(&self, v: &f64) -> String {
        let decimals = self.decimals;
        if v.abs() < 1e-12 {
            "0".to_owned()
        } else if self.thousands {
            format!("{:.decimals$}k", v / 1000.0)
        } else {
            format!("{v:.decimals$}")
        }
    }
}

/// A percent axis over `lo..hi` with at most `max` ticks, each labelled with a `%`.
pub fn percent_axis(lo: f64, hi: f64, max: usize) -> TickedAxis {
    let ticks = Ticks::new(lo, hi, max, 0.0);
    let labelled = ticks.values.iter().map(|v| (*v, format!("{}%", ticks.label(v)))).collect();
    TickedAxis::new(lo..hi, labelled, ticks.light.clone())
}

/// A linear axis that draws the ticks it is given, each with its own label ([`Ticks::axis`]).
pub struct TickedAxis {
    linear: RangedCoordf64,
    ticks: Vec<(f64, String)>,
    light: Vec<f64>,
}

impl TickedAxis {
    /// The axis `range` with labelled `ticks` and unlabelled `light` grid lines.
    pub fn new(range: std::ops::Range<f64>, ticks: Vec<(f64, String)>, light: Vec<f64>) -> TickedAxis {
        TickedAxis { linear: range.into(), ticks, light }
    }
}

impl Ranged for TickedAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.ticks.iter().map(|(v, _)| *v).collect()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.linear.range()
    }
}

impl ValueFormatter<f64> for TickedAxis {
    fn format_ext(&self, value: &f64) -> String {
        self.ticks.iter().find(|(v, _)| v == value).map_or_else(String::new, |(_, label)| label.clone())
    }
}

/// The smallest of 1, 2 and 5 × a power of ten that is at least `raw` and `min_step`.
fn tick_step(raw: f64, min_step: f64) -> f64 {
    let wanted = if raw.is_finite() && raw > 0.0 { raw.max(min_step) } else { min_step.max(1.0) };
    let magnitude = 10f64.powf(wanted.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= wanted * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// Whether `step` is 1, 2 or 5 × a power of ten.
fn is_nice(step: f64) -> bool {
    let mantissa = step / 10f64.powf(step.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-6)
}

/// The multiples of `step` in `lo..=hi`, each computed from its index so no error accumulates.
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}
