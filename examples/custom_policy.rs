//! A prune policy written outside the crate, compared with two built-in ones on the bundled traces.
//!
//! `clear-older-than:2` removes the content of every tool result that two earlier requests have
//! already sent (the summary stays, as the seed's prune leaves it). It is replayed on `traces/`
//! beside the registry's `keep-turns:n=3` and `keep-results:n=5`, and a small table shows each
//! policy's total and peak input tokens and its savings against `none`. Run from the repository
//! root:
//!
//! ```sh
//! cargo run --release --example custom_policy
//! ```

use std::path::{Path, PathBuf};

use ctxbudget::{CacheModel, Comparison, Edit, Policy, PolicySpec, Replayer, Trace, View, policy_fn};

/// Prunes every tool result's content once `requests` earlier requests have sent it. It keeps the
/// default [`Policy::capabilities`], the seed's prune: its prunes persist, on the seed's content.
struct ClearOlderThan {
    requests: usize,
}

impl Policy for ClearOlderThan {
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        for result in view.results {
            let age = view.request - result.first_request;
            if age >= self.requests && result.present().is_some() {
                edits.push(Edit::Prune(result.index));
            }
        }
    }
}

/// The bundled traces, by file name.
fn bundled_traces() -> Vec<(String, Trace)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let trace = ctxbudget::load(&p, None).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (format!("traces/{}", p.file_name().unwrap_or_default().to_string_lossy()), trace)
        })
        .collect()
}

/// `none`, two built-ins and the custom policy, compared on `traces` at the default threshold.
fn comparison(traces: &[(String, Trace)]) -> Comparison {
    let spec = |s: &str| PolicySpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    let replayer = Replayer::new()
        .policy(spec("keep-turns:n=3"))
        .policy(spec("keep-results:n=5"))
        .policy(policy_fn("clear-older-than:2", || Box::new(ClearOlderThan { requests: 2 })));
    let traces: Vec<(&str, &Trace)> = traces.iter().map(|(p, t)| (p.as_str(), t)).collect();
    replayer.compare(&traces, 200_000, CacheModel::default())
}

/// The comparison as a small text table.
fn table(c: &Comparison) -> String {
    let mut out = format!("{:<20} {:>12} {:>10} {:>8}\n", "policy", "input tokens", "peak", "savings");
    for row in &c.policies {
        out += &format!(
            "{:<20} {:>12} {:>10} {:>7.1}%\n",
            row.policy,
            row.total_input_tokens,
            row.peak_context_tokens,
            100.0 * row.savings
        );
    }
    out
}

fn main() {
    let traces = bundled_traces();
    let c = comparison(&traces);
    print!("{}", table(&c));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_custom_policy_is_replayed_beside_the_built_ins_and_saves_tokens() {
        let c = comparison(&bundled_traces());
        let labels: Vec<&str> = c.policies.iter().map(|p| p.policy.as_str()).collect();
        assert_eq!(labels, ["none", "keep-turns:n=3", "keep-results:n=5", "clear-older-than:2"]);
        let custom = &c.policies[3];
        assert!(custom.requests > 0 && custom.requests == c.policies[0].requests);
        assert!(custom.pruned_tokens > 0, "{custom:?}");
        assert!(custom.total_input_tokens < c.policies[0].total_input_tokens);
        assert_eq!(table(&c).lines().count(), 5);
    }
}
