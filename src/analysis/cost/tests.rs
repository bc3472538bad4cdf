//! Unit tests of the cost model: request costs, run totals and the USD bill, priced by hand.
use super::*;
use crate::analysis::testing::{cache_trap, measured, meter};
use crate::model::Item;
use crate::policy::PolicySpec;
use crate::replay::replay;
use crate::result::Run;

fn run(items: Vec<Item>, spec: &str) -> Run {
    let (meter, _) = meter();
    let m = measured(items, &meter);
    let mut policy = PolicySpec::parse(spec).unwrap().build();
    replay(&m, 16, &mut *policy, &meter)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn a_prune_that_saves_tokens_can_cost_more_on_a_warm_cache() {
    let model = CacheModel { prices: Prices::anthropic(), ttl_ms: Some(300_000) };
    let none = run(cache_trap([None; 4]), "none");
    let pruned = run(cache_trap([None; 4]), "keep-turns:n=2");
    // Contexts: none 195, 1195, 1195, 1195 = 3780; keep-turns:n=2 prunes a (100) before request 2.
    assert_eq!(none.summary.total_input_tokens, 3780);
    assert_eq!(pruned.summary.total_input_tokens, 3580);
    let (n, _) = cost_of_run(&none.rows, &model);
    let (p, events) = cost_of_run(&pruned.rows, &model);
    // none: 195×1.25 + (1000×1.25 + 195×0.1) + 1195×0.1 + 1195×0.1 = 243.75 + 1269.5 + 119.5 + 119.5.
    assert!(close(n.cost, 1752.25), "{}", n.cost);
    // pruned: request 2 shares only "hi" + a's summary (95) and writes the 1,000-byte message again.
    // 243.75 + 1269.5 + (1000×1.25 + 95×0.1) + 1095×0.1 = 2882.25.
    assert!(close(p.cost, 2882.25), "{}", p.cost);
    assert!(p.input_tokens < n.input_tokens && p.cost > n.cost);
    assert_eq!(
        (p.read_tokens, p.write_tokens, p.rewritten_tokens),
        (195 + 95 + 1095, 195 + 1000 + 1000, 1000)
    );
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(
        (e.request, e.freed_tokens, e.rewritten_tokens, e.cold, e.later_requests),
        (2, 100, 1000, false, 1)
    );
    // 1000 × (1.25 − 0.1) = 1150 extra now; 100 × 0.1 = 10 saved per later request: 115 to break even.
    assert!(close(e.rewrite_cost, 1150.0) && close(e.saving_per_request, 10.0));
    assert!(close(e.break_even_requests.unwrap(), 115.0));
    assert!(!e.pays_off());
}

#[test]
fn content_pruned_as_soon_as_it_arrives_was_never_cached_and_is_not_written_again() {
    use crate::analysis::testing::{request, result, user};
    // Request 0 sends "hi", a 100-byte result (summary 93 + content 100) and a 1,000-byte
    // message: 1195. A 400-byte result arrives; before request 1 the budget prunes a's content
    // and, still over the target, the new content too.
    let items = vec![
        user("hi"),
        result("a", "read", "x".repeat(100)),
        user(&"y".repeat(1000)),
        request(None),
        result("b", "read", "z".repeat(400)),
        request(None),
        request(None),
    ];
    let r = run(items, "budget:max=1500,target=1200");
    let row = &r.rows[1];
    assert_eq!((row.previous_context_tokens, row.shared_prefix_tokens), (1195, 95));
    assert_eq!((row.freed_tokens, row.changed_results), (500, 2));
    // Of the previous context, the message (1000) is still sent after the cut: that is the
    // rewrite. The 400 freed from b were never sent, so they take nothing off it.
    assert_eq!(row.previous_kept_tokens, 1095);
    let model = CacheModel { prices: Prices::anthropic(), ttl_ms: None };
    let (totals, events) = cost_of_run(&r.rows, &model);
    assert_eq!((events.len(), events[0].rewritten_tokens), (1, 1000));
    assert_eq!(totals.rewritten_tokens, 1000);
}

#[test]
fn a_compaction_ends_the_requests_a_prune_can_pay_off_over() {
    let model = CacheModel { prices: Prices::anthropic(), ttl_ms: None };
    let mut items = cache_trap([None; 4]);
    items.push(crate::analysis::testing::request(None));
    let (_, events) = cost_of_run(&run(items.clone(), "keep-turns:n=2").rows, &model);
    // The prune before request 2 is followed by requests 3 and 4.
    assert_eq!((events[0].request, events[0].later_requests), (2, 2));
    // With the context compacted after request 3, only request 3 sends what the prune freed.
    items.insert(items.len() - 1, Item::Compaction { summary: Some("so far".into()) });
    let (_, events) = cost_of_run(&run(items, "keep-turns:n=2").rows, &model);
    assert_eq!((events[0].request, events[0].later_requests), (2, 1));
}

#[test]
fn the_same_prune_after_an_idle_gap_longer_than_the_ttl_is_free() {
    let times = [
        Some("2025-01-01T00:00:00Z"),
        Some("2025-01-01T00:01:00Z"),
        Some("2025-01-01T00:20:00Z"), // 19 minutes idle: the cache expired
        Some("2025-01-01T00:21:00Z"),
    ];
    let model = CacheModel { prices: Prices::anthropic(), ttl_ms: Some(300_000) };
    let (n, _) = cost_of_run(&run(cache_trap(times), "none").rows, &model);
    let (p, events) = cost_of_run(&run(cache_trap(times), "keep-turns:n=2").rows, &model);
    // Request 2 is cold under both: none writes 1195, pruned writes 1095.
    assert!(close(n.cost, 243.75 + 1269.5 + 1195.0 * 1.25 + 119.5), "{}", n.cost);
    assert!(close(p.cost, 243.75 + 1269.5 + 1095.0 * 1.25 + 109.5), "{}", p.cost);
    assert!(p.cost < n.cost);
    assert_eq!(n.cold_requests, 2);
    assert!(events[0].cold && events[0].rewritten_tokens == 0 && events[0].pays_off());
    // A cache that never expires makes the idle gap irrelevant again.
    let forever = CacheModel { prices: Prices::anthropic(), ttl_ms: None };
    let (p, _) = cost_of_run(&run(cache_trap(times), "keep-turns:n=2").rows, &forever);
    assert!(close(p.cost, 2882.25));
}

#[test]
fn without_a_cache_the_cost_is_the_input_token_count() {
    let model = CacheModel { prices: Prices::none(), ttl_ms: Some(300_000) };
    for spec in ["none", "keep-turns:n=2"] {
        let r = run(cache_trap([None; 4]), spec);
        let (t, _) = cost_of_run(&r.rows, &model);
        assert!(close(t.cost, r.summary.total_input_tokens as f64));
    }
}

#[test]
fn openai_charges_no_write_premium() {
    let model = CacheModel { prices: Prices::openai(), ttl_ms: None };
    let (p, _) = cost_of_run(&run(cache_trap([None; 4]), "keep-turns:n=2").rows, &model);
    // Written 195 + 1000 + 1000 at 1, read 195 + 95 + 1095 at 0.1.
    assert!(close(p.cost, 2195.0 + 138.5), "{}", p.cost);
}

#[test]
fn prices_parse_presets_and_explicit_usd() {
    assert_eq!(Prices::parse("anthropic").unwrap(), Prices::anthropic());
    let p = Prices::parse("input=2, write=2.5,read=0.2").unwrap();
    assert_eq!((p.input, p.write, p.read, p.unit.as_str()), (2.0, 2.5, 0.2, "USD"));
    assert!(close(p.cost(1_000_000, 1_000_000), 2.7));
    let p = Prices::parse("input=3").unwrap();
    assert_eq!((p.write, p.read), (3.0, 3.0));
    for bad in
        ["antropic", "write=1", "input=-1", "input=1,cache=2", "input=1,input=2", "input=1e308", "input=inf"]
    {
        assert!(Prices::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn anthropic_prices_writes_to_a_cache_over_5_minutes_at_the_1_hour_price() {
    let anthropic = Prices::anthropic;
    assert_eq!(anthropic().for_ttl(Some(300_000)).write, 1.25);
    assert_eq!(anthropic().for_ttl(Some(60_000)).write, 1.25);
    assert_eq!(anthropic().for_ttl(Some(3_600_000)).write, 2.0);
    assert_eq!(anthropic().for_ttl(Some(300_001)).write, 2.0);
    assert_eq!(anthropic().for_ttl(None).write, 2.0);
    assert_eq!(anthropic().for_ttl(None).name, "anthropic");
    // Other prices do not depend on the TTL.
    assert_eq!(Prices::openai().for_ttl(None), Prices::openai());
    let custom = Prices::parse("input=2,write=2.5,read=0.2").unwrap();
    assert_eq!(custom.clone().for_ttl(Some(3_600_000)), custom);
}

#[test]
fn ttls_parse_with_units() {
    assert_eq!(parse_ttl("5m"), Ok(Some(300_000)));
    assert_eq!(parse_ttl("300s"), Ok(Some(300_000)));
    assert_eq!(parse_ttl("1h"), Ok(Some(3_600_000)));
    assert_eq!(parse_ttl("0"), Ok(Some(0)));
    assert_eq!(parse_ttl("never"), Ok(None));
    assert!(parse_ttl("5").is_err() && parse_ttl("m").is_err() && parse_ttl("5d").is_err());
    for t in ["5m", "1h", "90s", "250ms", "never"] {
        assert_eq!(format_ttl(parse_ttl(t).unwrap()), t);
    }
}
