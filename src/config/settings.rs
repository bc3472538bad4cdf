//! The `settings` of every command's JSON: each option that changed the numbers, by name, with
//! its value as the run used it (defaults included), so a script can tell two outputs apart by
//! what produced them. Names follow the flags (`--cache-ttl` is `cache_ttl_ms`, in milliseconds
//! as the cache model holds it; `--tolerance` and `--max-reuse` are fractions, 0.05 for 5%);
//! `null` means "not set": `input_format` detected per file, `overhead` calibrated per
//! conversation, `cache_ttl_ms` a cache that never expires. Options that change only speed or
//! where the output goes (`-j`, `--count-cache`, `--low-memory`, `--output`) are not settings.

use serde_json::{Value, json};

use super::{
    CalibrateConfig, CompareConfig, InputConfig, RecommendConfig, ReconcileConfig, ReplayConfig,
    ReportConfig, SourceConfig, SweepConfig,
};
use crate::analysis::cost::CacheModel;
use crate::policy::PolicySpec;
use crate::result::Settings;

/// The tokenizer and the input format: what every command counts and reads with.
fn source(s: &SourceConfig) -> Settings {
    let mut out = Settings::new();
    out.insert("tokenizer".into(), json!(s.tokenizer.name()));
    out.insert("input_format".into(), json!(s.input_format.map(|f| f.name())));
    out
}

/// [`source`] and how the replay is measured: the policies' estimator, the transforms, the
/// re-split, the unrecorded overhead and what the replay does with the log's own compactions.
fn input(i: &InputConfig) -> Settings {
    let mut out = source(&i.source);
    out.insert("decide_with".into(), json!(i.decide.name()));
    out.insert("transforms".into(), json!(i.transforms.iter().map(|t| t.spec()).collect::<Vec<_>>()));
    out.insert("resplit".into(), json!(i.resplit));
    out.insert("overhead".into(), json!(i.overhead));
    out.insert("harness_compaction".into(), json!(i.harness_compaction.name()));
    out
}

/// The specs of `policies`, as given.
fn specs(policies: &[PolicySpec]) -> Value {
    json!(policies.iter().map(PolicySpec::as_str).collect::<Vec<_>>())
}

/// The prices and the cache lifetime.
fn cache(out: &mut Settings, cache: &CacheModel) {
    out.insert("prices".into(), json!(cache.prices));
    out.insert("cache_ttl_ms".into(), json!(cache.ttl_ms));
}

/// `replay`'s settings.
pub fn replay(c: &ReplayConfig) -> Settings {
    let mut out = input(&c.input);
    out.insert("policies".into(), specs(&c.policies));
    out.insert("threshold".into(), json!(c.threshold));
    out
}

/// `sweep`'s settings.
pub fn sweep(c: &SweepConfig) -> Settings {
    let mut out = input(&c.input);
    let s = &c.settings;
    out.insert("policy".into(), json!(s.policy.as_str()));
    out.insert("thresholds".into(), json!(s.thresholds));
    out.insert("tolerance".into(), json!(s.tolerance));
    out.insert("tools".into(), json!(s.top_tools));
    cache(&mut out, &s.cache);
    out
}

/// `compare`'s and `cost`'s settings.
pub fn compare(c: &CompareConfig) -> Settings {
    let mut out = input(&c.input);
    let s = &c.settings;
    out.insert("policies".into(), specs(&s.policies));
    out.insert("threshold".into(), json!(s.threshold));
    out.insert("window".into(), json!(s.window));
    cache(&mut out, &s.cache);
    out
}

/// `recommend`'s settings.
pub fn recommend(c: &RecommendConfig) -> Settings {
    let mut out = input(&c.input);
    let s = &c.settings;
    out.insert("policies".into(), specs(&s.policies));
    out.insert("thresholds".into(), json!(s.thresholds));
    out.insert("window".into(), json!(s.window));
    out.insert("max_reuse".into(), json!(s.max_reuse));
    out.insert("tools".into(), json!(s.top_tools));
    cache(&mut out, &s.cache);
    out
}

/// `report`'s settings: the sweep's and the comparison's (`report.json`).
pub fn report(c: &ReportConfig) -> Settings {
    let mut out = input(&c.input);
    out.insert("policy".into(), json!(c.sweep.policy.as_str()));
    out.insert("thresholds".into(), json!(c.sweep.thresholds));
    out.insert("tolerance".into(), json!(c.sweep.tolerance));
    out.insert("tools".into(), json!(c.sweep.top_tools));
    out.insert("policies".into(), specs(&c.compare.policies));
    out.insert("threshold".into(), json!(c.compare.threshold));
    out.insert("window".into(), json!(c.compare.window));
    out.insert("timelines".into(), json!(c.timelines));
    cache(&mut out, &c.compare.cache);
    out
}

/// `calibrate`'s settings.
pub fn calibrate(c: &CalibrateConfig) -> Settings {
    input(&c.input)
}

/// `reconcile`'s settings.
pub fn reconcile(c: &ReconcileConfig) -> Settings {
    source(&c.source)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::config::Config;

    fn config(args: &[&str]) -> Config {
        let cli = crate::cli::Cli::try_parse_from(std::iter::once("ctxbudget").chain(args.iter().copied()));
        Config::from_cli(cli.unwrap()).unwrap()
    }

    #[test]
    fn settings_hold_each_option_as_the_run_used_it() {
        let Config::Compare(c) = config(&[
            "compare",
            "x.jsonl",
            "--policy",
            "keep-turns:n=3",
            "--threshold",
            "1k",
            "--cache-ttl",
            "1h",
            "--tokenizer",
            "cl100k",
        ]) else {
            panic!("compare")
        };
        let s = super::compare(&c);
        assert_eq!(s["policies"], serde_json::json!(["keep-turns:n=3"]));
        assert_eq!(s["threshold"], 1000);
        assert_eq!(s["cache_ttl_ms"], 3_600_000);
        assert_eq!(s["tokenizer"], "cl100k");
        assert_eq!(s["overhead"], serde_json::Value::Null);
        assert_eq!(s["prices"]["name"], "anthropic");
        assert_eq!(s["harness_compaction"], "simulated");
        let Config::Sweep(c) = config(&["sweep", "x.jsonl", "--tolerance", "2%", "--overhead", "500"]) else {
            panic!("sweep")
        };
        let s = super::sweep(&c);
        assert_eq!((s["tolerance"].as_f64(), s["overhead"].as_u64()), (Some(0.02), Some(500)));
        let Config::Report(c) =
            config(&["report", "x.jsonl", "--harness-compaction", "off", "--timelines", "3", "--out", "r"])
        else {
            panic!("report")
        };
        let s = super::report(&c);
        assert_eq!(
            (&s["harness_compaction"], &s["timelines"]),
            (&serde_json::json!("off"), &serde_json::json!(3))
        );
        assert_eq!((s["policy"].as_str(), s["threshold"].as_u64()), (Some("keep-turns:n=3"), Some(256)));
    }
}
