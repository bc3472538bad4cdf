//! How each agent's summarisation call uses the prompt cache decides its price
//! (docs/compaction.md, "Billing"). The calls an agent makes with prompt caching off (OpenHands'
//! condenser, Goose's compaction and tool-pair calls) are billed at the plain input price: on a
//! corpus session, `cost` and `compare` list each call of `compact:openhands`, `compact:goose`
//! and `compact:goose-tools` as `uncached`, with nothing read, and price it at the input and
//! output rates of the session's model in the built-in table, below what the same tokens cost as
//! a cache write. opencode's call sets cache breakpoints but shares no cached prefix: nothing is
//! read and all of it is written. A call that sends the conversation (`compact:claude-code`) is
//! still priced at the read and write rates. The expected figures are computed here from the
//! JSON's token counts and the table's rates. Corpus tests: they fail when `CI` is set and the
//! corpus is missing, and are skipped with a printed reason otherwise.

use ctxbudget::analysis::prices::{ModelPrice, PriceTable};
use ctxbudget::input::load;
use ctxbudget::model::Item;
use serde_json::Value;

use crate::common;

/// A Claude Code session where the uncached policies compact (`ctxbudget cost FILE --policy
/// compact:openhands --policy compact:goose-tools --policy compact:goose`).
const SESSION: &str = "claude-code/codemie-code/session-3fe1b6bc.jsonl";

/// Each policy whose calls have caching off, and how many calls it makes at least.
const UNCACHED: [(&str, usize); 3] =
    [("compact:openhands", 2), ("compact:goose-tools", 2), ("compact:goose", 1)];
const CACHED: &str = "compact:claude-code:pct=50";
/// opencode's trigger at a window the session reaches (at the default 200k it never compacts).
const WRITTEN: &str = "compact:opencode:window=120000";

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("`{key}` is a number in {v}"))
}

fn n(v: &Value, key: &str) -> f64 {
    v[key].as_u64().unwrap_or_else(|| panic!("`{key}` is a count in {v}")) as f64
}

/// The one model the session's requests name, as the built-in table prices it.
fn rates(path: &std::path::Path) -> ModelPrice {
    let trace = load(path, None).unwrap_or_else(|e| panic!("{e}"));
    let mut models: Vec<&str> = trace
        .conversations
        .iter()
        .flat_map(|c| &c.items)
        .filter_map(|i| match i {
            Item::Request(r) => r.model.as_deref(),
            _ => None,
        })
        .collect();
    models.sort_unstable();
    models.dedup();
    assert_eq!(models.len(), 1, "one model: {models:?}");
    let table = PriceTable::built_in();
    let found = table.lookup(Some(models[0]));
    assert!(!found.fallback, "{} is in the table", models[0]);
    found.price.clone()
}

/// The compaction events of `policy` in `doc`.
fn events<'a>(doc: &'a Value, policy: &str) -> Vec<&'a Value> {
    let all = doc["compaction_events"].as_array().expect("compaction_events");
    all.iter().filter(|e| e["policy"] == policy).map(|e| &e["event"]).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn calls_with_caching_off_pay_the_input_price_opencode_s_writes_all_and_cached_ones_read_and_write() {
    let Some(corpus) = common::corpus_root() else { return };
    let path = corpus.join(SESSION);
    let price = rates(&path);
    // Anthropic's rows: the input price is below the 5-minute write price it replaces.
    assert!(price.input < price.write_5m, "{price:?}");
    let per = 1e-6;
    for command in ["cost", "compare"] {
        let mut cmd = common::ctxbudget();
        cmd.args([command, path.to_str().unwrap(), "--format", "json", "--harness-compaction", "off"]);
        for p in UNCACHED.iter().map(|u| u.0).chain([CACHED, WRITTEN]) {
            cmd.args(["--policy", p]);
        }
        let out = cmd.output().expect("the binary runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let prices = &doc["cache"]["prices"];
        assert_eq!((f(prices, "input"), f(prices, "write")), (1.0, 1.25), "{command}: anthropic preset");
        for (policy, at_least) in UNCACHED {
            let calls = events(&doc, policy);
            assert!(calls.len() >= at_least, "{command}: {policy} compacts {at_least}+ times: {calls:?}");
            let (mut usd, mut units, mut as_written) = (0.0, 0.0, 0.0);
            for e in &calls {
                let (input, output) = (n(e, "input_tokens"), n(e, "output_tokens"));
                assert!(input > 0.0 && input <= 200_000.0, "{e}: under any long-context bound");
                assert_eq!((&e["uncached"], n(e, "read_tokens")), (&Value::Bool(true), 0.0), "{e}");
                let want = (input * price.input + output * price.output) * per;
                assert!(close(f(e, "cost_usd"), want), "{command} {policy}: {e} against {want}");
                // In input-token equivalents: input at 1, output at Anthropic's 5.
                assert!(close(f(e, "cost"), input + 5.0 * output), "{command} {policy}: {e}");
                usd += f(e, "cost_usd");
                units += f(e, "cost");
                as_written += (input * price.write_5m + output * price.output) * per;
            }
            let rows = doc["policies"].as_array().expect("policies");
            let run = &rows.iter().find(|r| r["policy"] == policy).expect("the policy's row")["cost"];
            assert!(close(f(run, "summarization_cost_usd"), usd), "{command} {policy}: {run}");
            assert!(close(f(run, "summarization_cost"), units), "{command} {policy}: {run}");
            assert!(usd < as_written, "{command} {policy}: {usd} below the write price's {as_written}");
        }
        let written = events(&doc, WRITTEN);
        assert!(!written.is_empty(), "{command}: {WRITTEN} compacts");
        for e in written {
            let (input, output) = (n(e, "input_tokens"), n(e, "output_tokens"));
            assert!(e.get("uncached").is_none() && n(e, "read_tokens") == 0.0, "{command}: {e}");
            let want = (input * price.write_5m + output * price.output) * per;
            assert!(close(f(e, "cost_usd"), want), "{command} {WRITTEN}: {e} against {want}");
            assert!(close(f(e, "cost"), 1.25 * input + 5.0 * output), "{command} {WRITTEN}: {e}");
        }
        let cached = events(&doc, CACHED);
        assert!(!cached.is_empty(), "{command}: {CACHED} compacts");
        for e in cached {
            let (input, read, output) = (n(e, "input_tokens"), n(e, "read_tokens"), n(e, "output_tokens"));
            assert!(e.get("uncached").is_none() && read > 0.0, "{command}: {e}");
            let want = (read * price.read + (input - read) * price.write_5m + output * price.output) * per;
            assert!(close(f(e, "cost_usd"), want), "{command} {CACHED}: {e} against {want}");
        }
    }
}
