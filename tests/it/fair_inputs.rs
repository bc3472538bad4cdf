//! The inputs of the `import-formats` bench (`benches/common/fair/`): one real conversation of the
//! shared corpus written in every format the bench compares. Each written input must read, with
//! detection, as its format, to one request per model call of the conversation and one tool result
//! per call (aider, which has no tool calls, to none), or the bench would compare different
//! conversations.

#[path = "../../benches/common/fair/mod.rs"]
mod fair;

use ctxbudget::input;

use crate::common;

#[test]
fn every_format_reads_the_conversation_to_the_same_requests_and_tool_results() {
    let Some(corpus) = common::corpus_root() else { return };
    let script = fair::corpus_script(&corpus);
    // The session's main conversation: 55 requests and 48 tool results as Claude Code records it;
    // split to one call per model call, as counted here.
    assert!(script.steps() > 50 && script.calls() > 40, "{} steps, {} calls", script.steps(), script.calls());
    let dir = tempfile::tempdir().unwrap();
    let inputs = fair::write_all(&script, dir.path());
    assert_eq!(inputs.len(), 7);
    for i in &inputs {
        let trace = input::load(&i.path, None).unwrap_or_else(|e| panic!("{}: {e}", i.format));
        assert_eq!(trace.format, i.format);
        let requests: usize = trace.conversations.iter().map(|c| c.requests()).sum();
        let results: usize = trace.conversations.iter().map(|c| c.tool_results()).sum();
        assert_eq!(requests, script.steps(), "{}: requests", i.format);
        let calls = if i.format == "aider" { 0 } else { script.calls() };
        assert_eq!(results, calls, "{}: tool results", i.format);
        assert_eq!(trace.conversations.len(), 1, "{}: conversations", i.format);
        assert!(i.bytes > 500_000, "{}: {} bytes", i.format, i.bytes);
    }
}
