//! The bodies of ctxbudget's fuzz targets (one thin file per target under `fuzz_targets/`).
//!
//! Each body feeds arbitrary bytes to one of ctxbudget's parsers and, when the parser accepts
//! them, pushes what it produced through the rest of the pipeline, so a fuzzer that finds a
//! strange-but-accepted input also exercises measuring, every policy, the replay, reconcile and the
//! JSON export on it. A panic anywhere is a bug: ctxbudget must answer bad input with an error or
//! a warning. The invariants checked here (a timeline row is the sum of its categories, a context
//! never holds more than everything sent, an accepted spec builds) are cheap enough to run on
//! every input. Counting uses the `estimate` tokenizer so that an execution stays fast.

use std::path::Path;

use ctxbudget::analysis::reconcile;
use ctxbudget::format::{self, Format};
use ctxbudget::measure::{MeasureOptions, MeasuredConversation};
use ctxbudget::model::{Conversation, Item, Output, Request, ToolResult, Trace};
use ctxbudget::pipeline::{self, Job};
use ctxbudget::policy::{self, PolicySpec};
use ctxbudget::replay::replay;
use ctxbudget::result::{ReplayReport, Run};
use ctxbudget::split::{FIRST_LINE_CHARS, ToolOutput};
use ctxbudget::tokens::{Meter, Tokenizer};
use ctxbudget::transform::{self, Transform};

const PATH: &str = "fuzz-input";

fn meter() -> Meter {
    Meter::new(Tokenizer::Estimate, Tokenizer::Estimate)
}

/// Every registered policy with its defaults.
fn default_policies() -> Vec<PolicySpec> {
    policy::registry()
        .iter()
        .map(|k| PolicySpec::parse(k.name).expect("every registered policy parses with its defaults"))
        .collect()
}

fn check_runs(runs: &[Run]) {
    for run in runs {
        assert_eq!(run.summary.requests, run.rows.len());
        for row in &run.rows {
            assert_eq!(row.categories.total(), row.context_tokens, "a row is the sum of its categories");
            assert!(row.shared_prefix_tokens <= row.previous_context_tokens);
        }
        let peak = run.rows.iter().map(|r| r.context_tokens).max().unwrap_or(0);
        assert_eq!(run.summary.peak_context_tokens, peak);
    }
}

/// Detection on `data` must not panic, whatever the bytes; `guess` agrees with `detect`.
pub fn detect(data: &[u8]) {
    for whole in [true, false] {
        format::with_head(Path::new(PATH), data, whole, |head| {
            let guessed = format::guess(head).map(|f| f.name());
            let first = format::all().into_iter().find(|f| f.detect(head)).map(|f| f.name());
            assert_eq!(guessed, first);
        });
    }
}

/// Reads `data` with the format called `name`; when it reads, measures and replays every
/// conversation under every policy, reconciles it and renders the JSON report.
pub fn importer(name: &str, data: &[u8]) {
    let format: &dyn Format = format::by_name(name).expect("a known format name");
    format::with_head(Path::new(PATH), data, true, |head| {
        format.detect(head);
    });
    let Ok(trace) = format.read(&mut &data[..], Path::new(PATH)) else { return };
    exercise(&trace);
}

/// The rest of the pipeline on a trace an importer accepted.
pub fn exercise(trace: &Trace) {
    pipeline::link_warnings(trace);
    let meter = meter();
    let policies = default_policies();
    let transforms: Vec<Box<dyn Transform>> =
        vec![transform::parse("truncate:codex:bytes=64").expect("a valid transform")];
    for transforms in [&[][..], &transforms[..]] {
        let job = Job {
            thresholds: vec![0, 256],
            policies: policies.clone(),
            resplit: !transforms.is_empty(),
            transforms,
            overhead: if transforms.is_empty() { 0 } else { 100 },
            input_format: None,
            // Calibrated (as the command line does by default) when no overhead is given.
            calibrate: true,
            reuse: true,
            harness_compaction: Default::default(),
        };
        let (runs, _warnings) = pipeline::replay_trace_with_warnings(PATH, trace, &job, &meter);
        check_runs(&runs);
        let report =
            ReplayReport { runs: runs.into_iter().map(|r| r.summary).collect(), ..Default::default() };
        ctxbudget::export::ExportFormat::Json.exporter().render(&report, false).expect("JSON renders");
    }
    let opts = MeasureOptions::default();
    for conversation in &trace.conversations {
        let measured = MeasuredConversation::new(conversation, &meter, &opts);
        let sent = reconcile::sent_contexts(PATH, conversation, &measured);
        let samples = ctxbudget::calibrate::samples(&measured);
        reconcile::reconcile(PATH, trace.format, conversation, sent, &samples, Tokenizer::Estimate);
    }
}

/// A small conversation with results of several sizes, timestamps and a compaction, for
/// replaying fuzzed policies on.
fn sample_conversation() -> Conversation {
    let mut c = Conversation::new("main");
    let result = |id: &str, output: String| {
        Item::ToolResult(ToolResult {
            call_id: id.into(),
            name: Some("bash".into()),
            output: Output::Raw { output },
            is_error: false,
            images: 0,
        })
    };
    let call =
        |id: &str| Item::ToolCall { call_id: id.into(), name: "bash".into(), arguments: "{\"c\":1}".into() };
    let request =
        |ms: i64| Item::Request(Request { id: None, timestamp: Some(ms), usage: None, model: None });
    c.items.push(Item::System { text: "system prompt".into() });
    c.items.push(Item::User { text: "do it".into(), meta: false, images: 0 });
    for i in 0..12i64 {
        let id = format!("c{i}");
        c.items.push(request(1_700_000_000_000 + i * 400_000));
        c.items.push(Item::Assistant { text: "running".into() });
        c.items.push(call(&id));
        c.items.push(result(&id, format!("line\n{}", "é x".repeat(30 * (i as usize + 1)))));
        if i == 5 {
            c.items.push(Item::User { text: "next".into(), meta: false, images: 0 });
        }
        if i == 9 {
            c.items.push(Item::Compaction { summary: Some("summary".into()) });
        }
    }
    c.items.push(request(1_700_010_000_000));
    c
}

fn replay_specs(specs: &[PolicySpec]) {
    let meter = meter();
    let conversation = sample_conversation();
    let measured = MeasuredConversation::new(&conversation, &meter, &MeasureOptions::default());
    for spec in specs {
        for threshold in [0, 100] {
            let mut policy = spec.build();
            let run = replay(&measured, threshold, &mut *policy, &meter);
            check_runs(std::slice::from_ref(&run));
            policy.report();
        }
    }
}

/// A policy spec: parses or errors; an accepted spec builds and replays.
pub fn policy_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(spec) = PolicySpec::parse(text) {
        replay_specs(&[spec]);
    }
}

/// A `--policies` TOML file: parses or errors; accepted policies build and replay.
pub fn policy_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(specs) = policy::file::parse(text, Path::new("policies.toml")) {
        replay_specs(&specs);
    }
}

/// Outputs a fuzzed transform is applied to.
fn sample_outputs() -> Vec<String> {
    vec![
        String::new(),
        "x".into(),
        "a\nb\r\nc\rd\n".repeat(50),
        "日本語のテキスト\n".repeat(400),
        format!("{}\n{}", "y".repeat(20_000), "z\n".repeat(3000)),
    ]
}

/// A transform spec: parses or errors; an accepted transform is applied to a few outputs.
pub fn transform_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(t) = transform::parse(text) {
        let again = transform::parse(&t.spec()).expect("a transform's own spec parses again");
        assert_eq!(again.spec(), t.spec());
        for output in sample_outputs() {
            for tool in [None, Some("bash"), Some("")] {
                t.apply(&output, tool);
            }
        }
    }
}

/// The seed's split of a fuzzed output at a fuzzed threshold (the first two bytes), checked
/// against the seed's rules, then every transform applied to the same output.
pub fn split(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let threshold = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let text = String::from_utf8_lossy(&data[2..]);
    let out = ToolOutput::from_output(&text, threshold);
    match &out.content {
        None => {
            assert!(text.len() <= threshold);
            assert_eq!(out.summary, text);
        }
        Some(content) => {
            assert!(text.len() > threshold);
            assert_eq!(content.as_str(), text);
            assert!(out.summary.ends_with('…'));
            let lines = text.lines().count();
            assert!(out.summary.starts_with(&format!("{lines} lines | ")));
            let first: String = text.lines().next().unwrap_or("").chars().take(FIRST_LINE_CHARS).collect();
            assert_eq!(out.summary, format!("{lines} lines | {first}…"));
            assert_eq!(out.sent_text(), format!("{}\n{}", out.summary, content));
        }
    }
    for kind in transform::registry() {
        let t = transform::parse(kind.name).expect("every transform parses with its defaults");
        t.apply(&text, Some("bash"));
    }
}
