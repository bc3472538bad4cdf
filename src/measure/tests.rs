//! Unit tests of `measure` (a sibling file, so `measure.rs` stays under 800 lines).
use super::*;
use crate::model::ToolResult;
use crate::tokens::Tokenizer;

fn result(output: Output) -> Item {
    Item::ToolResult(ToolResult { call_id: "c".into(), name: None, output, is_error: false, images: 0 })
}

fn measured(items: Vec<Item>, resplit: bool) -> MeasuredConversation {
    let conv = Conversation { id: "main".into(), items, recorded_total: None };
    let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
    MeasuredConversation::new(&conv, &meter, &MeasureOptions { resplit, ..Default::default() })
}

#[test]
fn results_link_to_the_latest_call_of_their_id_since_the_last_compaction() {
    let call = |id: &str| Item::ToolCall { call_id: id.into(), name: "t".into(), arguments: "{}".into() };
    let answer = |id: &str| {
        Item::ToolResult(ToolResult {
            call_id: id.into(),
            name: None,
            output: Output::Raw { output: "x".into() },
            is_error: false,
            images: 0,
        })
    };
    let m = measured(
        vec![
            call("a"),                          // call 0
            call("b"),                          // call 1
            answer("b"),                        // → 1
            answer("a"),                        // → 0
            call("a"),                          // call 2, the id used again
            answer("a"),                        // → 2
            answer("zz"),                       // no such call
            Item::Compaction { summary: None }, // calls 0-2 are gone
            answer("a"),                        // → none
            call("a"),                          // call 3
            Item::User { text: "u".into(), meta: false, images: 0 },
            answer("a"), // → 3
        ],
        false,
    );
    assert_eq!(m.result_calls(), [Some(1), Some(0), Some(2), None, None, Some(3)]);
    assert_eq!(m.tool_calls(), 4);
    // Worked out once; a clone keeps it.
    assert!(std::ptr::eq(m.result_calls(), m.result_calls()));
    assert_eq!(m.clone().result_calls(), m.result_calls());
}

#[test]
fn framing_goes_before_each_request_for_the_items_appended_since_and_restarts_at_a_compaction() {
    let user = || Item::User { text: "u".into(), meta: false, images: 0 };
    let request = || Item::Request(crate::model::Request::default());
    let call = Item::ToolCall { call_id: "c".into(), name: "t".into(), arguments: "{}".into() };
    let items = vec![
        user(),
        request(),
        call,
        result(Output::Raw { output: "x".into() }),
        request(),
        Item::Compaction { summary: Some("s".into()) },
        request(),
    ];
    let mut m = measured(items, false);
    m.add_framing(2.5);
    let framing: Vec<Tokens> = m
        .items
        .iter()
        .filter_map(|i| match i {
            MeasuredItem::Text { category: Category::Framing, measure, .. } => Some(measure.tokens),
            MeasuredItem::Request { .. } => Some(0),
            _ => None,
        })
        .collect();
    // 1 item: round(2.5) = 3 (half away from zero); 3 items: round(7.5) = 8, so 5 more; after
    // the compaction its summary alone: 3 again.
    assert_eq!(framing, [3, 0, 5, 0, 3, 0]);
    let before = m.items.len();
    m.add_framing(0.0);
    assert_eq!(m.items.len(), before, "no framing, no items");
}

#[test]
fn overhead_is_sent_first_and_again_after_each_compaction() {
    let conv = Conversation {
        id: "main".into(),
        items: vec![
            Item::User { text: "hi".into(), meta: false, images: 0 },
            Item::Compaction { summary: Some("s".into()) },
            Item::User { text: "again".into(), meta: false, images: 0 },
        ],
        recorded_total: None,
    };
    let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
    let m = MeasuredConversation::new(&conv, &meter, &MeasureOptions { overhead: 500, ..Default::default() });
    let kinds: Vec<String> = m
        .items
        .iter()
        .map(|i| match i {
            MeasuredItem::Text { category, measure, .. } => {
                format!("{}:{}", category.name(), measure.tokens)
            }
            MeasuredItem::Compaction { .. } => "compaction".into(),
            _ => "other".into(),
        })
        .collect();
    assert_eq!(kinds, ["unrecorded:500", "user:0", "compaction", "unrecorded:500", "user:1"]);
    // Every estimator counts the overhead as the same number of tokens.
    let o = overhead_measure(500);
    assert_eq!((o.tokens, o.estimate, o.decide, o.bytes / 4, o.chars.utf16 / 4), (500, 500, 500, 500, 500));
    let m = MeasuredConversation::new(&conv, &meter, &MeasureOptions::default());
    assert_eq!(m.items.len(), 3, "no overhead, no item");
}

#[test]
fn a_raw_output_splits_only_above_the_threshold() {
    let m = measured(vec![result(Output::Raw { output: "x".repeat(40) })], false);
    let MeasuredItem::ToolResult(sizes, r) = &m.items[0] else { panic!() };
    let (summary, content) = sizes.split_at(40);
    assert_eq!((summary.bytes, content), (40, None));
    let (summary, content) = sizes.split_at(39);
    assert_eq!(summary.bytes, "1 lines | …".len() as u64 + 40);
    assert_eq!(content.map(|c| c.bytes), Some(40));
    assert_eq!(r.summary_at(sizes, 39), format!("1 lines | {}…", "x".repeat(40)));
}

#[test]
fn a_presplit_output_is_kept_at_every_threshold_unless_resplit() {
    let out = Output::Split { summary: "sum".into(), content: Some("c".repeat(10)) };
    let m = measured(vec![result(out.clone())], false);
    let MeasuredItem::ToolResult(sizes, r) = &m.items[0] else { panic!() };
    assert_eq!(sizes.split_at(1_000_000).1.map(|c| c.bytes), Some(10));
    assert_eq!(r.summary_at(sizes, 0), "sum");
    let m = measured(vec![result(out)], true);
    let MeasuredItem::ToolResult(sizes, r) = &m.items[0] else { panic!() };
    assert_eq!(sizes.split_at(1_000).1, None);
    assert_eq!(*r.text, format!("sum\n{}", "c".repeat(10)));
}

#[test]
fn a_presplit_output_counts_the_newline_between_summary_and_content_as_resplit_does() {
    let out = Output::Split { summary: "sum".into(), content: Some("content of ten".into()) };
    let conv = |resplit| {
        let conv = Conversation { id: "main".into(), items: vec![result(out.clone())], recorded_total: None };
        let meter = Meter::new(Tokenizer::O200k, Tokenizer::Cl100k);
        MeasuredConversation::new(&conv, &meter, &MeasureOptions { resplit, ..Default::default() })
    };
    let (kept, resplit) = (conv(false), conv(true));
    let (MeasuredItem::ToolResult(kept, _), MeasuredItem::ToolResult(resplit, _)) =
        (&kept.items[0], &resplit.items[0])
    else {
        panic!()
    };
    // "sum\ncontent of ten": 18 bytes, as the tool sent it and as --resplit measures it.
    let (k, r) = (kept.output(), resplit.output());
    assert_eq!((k.bytes, k.chars.chars, k.chars.utf16), (18, 18, 18));
    assert_eq!((k.bytes, k.chars), (r.bytes, r.chars));
    // "sum", "\n", "content of ten" are 1 + 1 + 3 tokens in o200k and cl100k; so is the joined text.
    assert_eq!((k.tokens, k.decide), (5, 5));
    assert_eq!((k.tokens, k.decide), (r.tokens, r.decide));
    // The replayed context still counts summary and content apart.
    let (summary, content) = kept.split_at(0);
    assert_eq!(summary.bytes + content.unwrap().bytes, 17);
    // Without content the summary is the whole output; the parts fit in the sizes' padding.
    let m = measured(vec![result(Output::Split { summary: "sum".into(), content: None })], false);
    let MeasuredItem::ToolResult(sizes, _) = &m.items[0] else { panic!() };
    assert_eq!(sizes.output().bytes, 3);
    assert_eq!(std::mem::size_of::<ResultSizes>(), 2 * std::mem::size_of::<TextSize>() + 8);
}

#[test]
fn a_spill_makes_the_result_one_the_tool_split_with_a_summary_of_the_whole_output() {
    let spill = [crate::transform::parse("spill:over=100,head=1,tail=1").unwrap()];
    let output: String = (1..=50).map(|i| format!("row {i}\n")).collect(); // 341 bytes
    let conv =
        Conversation { id: "main".into(), items: vec![result(Output::Raw { output })], recorded_total: None };
    let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
    let m = MeasuredConversation::new(
        &conv,
        &meter,
        &MeasureOptions { transforms: &spill, ..Default::default() },
    );
    let MeasuredItem::ToolResult(sizes, r) = &m.items[0] else { panic!() };
    // Not `3 lines | [saved to …`: the seed's automatic summary of the sketch.
    assert_eq!(sizes.presplit, Some(true));
    assert!(r.summary.starts_with("50 lines, 341 bytes, saved to /tmp/spill/output-"), "{}", r.summary);
    assert_eq!(*r.text, "row 1\n[... 48 lines omitted ...]\nrow 50");
    assert_eq!(r.summary_at(sizes, 1_000_000), r.summary.as_str(), "kept at every threshold");
    assert_eq!(sizes.output().bytes, (r.summary.len() + 1 + r.text.len()) as u64);
    assert_eq!(r.recorded_bytes, 341);
}

#[test]
fn splits_at_counts_the_outputs_the_threshold_splits() {
    let raw = |n: usize| result(Output::Raw { output: "x".repeat(n) });
    let presplit = result(Output::Split { summary: "s".into(), content: Some("c".into()) });
    let m = measured(vec![raw(10), raw(100), presplit, raw(50)], false);
    // The pre-split output counts at every threshold; raw ones when longer than it.
    let counts: Vec<usize> = [0, 9, 10, 49, 50, 99, 100].iter().map(|&t| m.splits_at(t)).collect();
    assert_eq!(counts, [4, 4, 3, 3, 2, 2, 1]);
}

#[test]
fn the_split_plan_is_the_same_for_thresholds_in_any_order() {
    let raw = |n: usize| result(Output::Raw { output: "x".repeat(n) });
    let presplit = result(Output::Split { summary: "s".into(), content: Some("c".into()) });
    let m = measured(vec![raw(10), raw(100), presplit, raw(50)], false);
    // Ascending thresholds take the binary search; the same set reversed, the pass per threshold.
    let ascending = [0, 9, 10, 10, 49, 50, 99, 100, 200];
    let (slots, firsts) = m.split_plan(&ascending);
    assert_eq!(slots, [0, 0, 1, 1, 1, 2, 2, 3, 3]);
    assert_eq!(firsts, [0, 10, 50, 100]);
    let descending: Vec<usize> = ascending.iter().rev().copied().collect();
    let (slots, firsts) = m.split_plan(&descending);
    assert_eq!(firsts, [200, 99, 49, 9]);
    let of = |plan: &[usize], ts: &[usize], k: usize| ts[plan.iter().position(|&s| s == plan[k]).unwrap()];
    for (k, &t) in descending.iter().enumerate() {
        assert_eq!(m.splits_at(of(&slots, &descending, k)), m.splits_at(t));
    }
}

#[test]
fn a_derived_number_is_worked_out_once_per_slot() {
    let m = measured(vec![result(Output::Raw { output: "abc".into() })], false);
    let MeasuredItem::ToolResult(_, r) = &m.items[0] else { panic!() };
    let (first, second) = (CacheSlot::new(0), CacheSlot::new(1));
    assert_eq!(r.derived(first, |t| t.len() as u64), 3);
    assert_eq!(r.derived(first, |_| unreachable!("kept")), 3);
    assert_eq!(r.derived(second, |_| 7), 7, "slots are apart");
}

#[test]
fn user_text_starts_a_turn_unless_injected() {
    let m = measured(
        vec![
            Item::User { text: "hi".into(), meta: false, images: 0 },
            Item::User { text: "<reminder>".into(), meta: true, images: 0 },
        ],
        false,
    );
    let starts: Vec<bool> =
        m.items.iter().map(|i| matches!(i, MeasuredItem::Text { turn_start: true, .. })).collect();
    assert_eq!(starts, [true, false]);
}
