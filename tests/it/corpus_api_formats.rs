//! The API wire formats on the shared corpus (`../shared/corpus/openai-chat/` and
//! `../shared/corpus/api-wire-cassettes/`): every file imports without error, through the format
//! auto-detection picks, with the tool-result count `PROVENANCE.md` lists (cassettes: counted
//! independently, see [`CASSETTES`]), and files with recorded usage yield per-request recorded
//! sizes. Also: none of these formats claims a file of the other agents' folders. Skipped, with
//! a printed reason, when the corpus is absent.

use crate::common;

use std::path::{Path, PathBuf};

use ctxbudget::format::{self, HEAD_BYTES};
use ctxbudget::model::Item;

/// The formats this test file is about.
const API_FORMATS: [&str; 5] =
    ["openai-chat", "anthropic-messages", "openai-responses", "cassette", "inspect"];

/// Cassettes, for which `PROVENANCE.md` says "see FORMATS": (file under `api-wire-cassettes/`,
/// tool results, requests with a recorded prompt size). Counted independently of ctxbudget with
/// this command, run in `../shared/corpus/api-wire-cassettes/pydantic-ai/tests/models/cassettes`
/// (per endpoint, the tool results in its last request body; interactions whose response records
/// a non-zero prompt):
///
/// ```sh
/// for f in */*.yaml; do python3 -c "
/// import yaml,sys,json
/// d=yaml.safe_load(open(sys.argv[1]))
/// last={}
/// for i in d['interactions']:
///     last[i['request']['uri'].split('?')[0].rsplit('/',1)[-1]]=json.dumps(i['request']['parsed_body'])
/// n=sum(b.count('\"tool_result\"')+b.count('\"role\": \"tool\"')+b.count('\"function_call_output\"')+b.count('\"functionResponse\"') for b in last.values())
/// u=sum(1 for i in d['interactions'] if (i['response']['parsed_body'].get('usage') or {}).get('input_tokens',1) and (i['response']['parsed_body'].get('usage') or i['response']['parsed_body'].get('usageMetadata')))
/// print(sys.argv[1], 'flows', len(last), 'tool results', n, 'interactions', len(d['interactions']), 'with nonzero usage', u)
/// " $f; done
/// ```
///
/// It printed: `test_anthropic/…` flows 1, tool results 4, interactions 2, nonzero usage 2;
/// `test_openai/…` flows 2, tool results 3, interactions 4, nonzero usage 4;
/// `test_openai_responses/…` flows 1, tool results 2, interactions 2, nonzero usage 1 (its first
/// response records `input_tokens: 0`, which the importer does not take as a size).
const CASSETTES: [(&str, usize, usize); 3] = [
    ("pydantic-ai/tests/models/cassettes/test_anthropic/test_multiple_parallel_tool_calls.yaml", 4, 2),
    ("pydantic-ai/tests/models/cassettes/test_openai/test_multiple_agent_tool_calls.yaml", 3, 4),
    ("pydantic-ai/tests/models/cassettes/test_openai_responses/test_openai_responses_model_retry.yaml", 2, 1),
];

fn corpus() -> Option<PathBuf> {
    common::corpus_root()
}

/// Every file under `dir`, hidden folders included, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn detectors(path: &Path) -> Vec<&'static str> {
    let bytes = std::fs::read(path).unwrap();
    let whole = bytes.len() <= HEAD_BYTES;
    format::with_head(path, &bytes, whole, |head| {
        format::all().into_iter().filter(|f| f.detect(head)).map(|f| f.name()).collect()
    })
}

/// (tool results, recorded usage says "yes") that `PROVENANCE.md` lists for a corpus file; the
/// count is `None` where the table says "see FORMATS".
fn provenance(corpus: &Path, relative: &str) -> Option<(Option<usize>, bool)> {
    let text = std::fs::read_to_string(corpus.join("PROVENANCE.md")).unwrap();
    let row = text.lines().find(|l| l.starts_with(&format!("| `{relative}`")))?;
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    Some((cells[5].replace(',', "").parse().ok(), cells[7].starts_with("yes")))
}

struct Imported {
    format: &'static str,
    conversations: usize,
    requests: usize,
    tool_results: usize,
    recorded: usize,
}

fn import(path: &Path) -> Imported {
    let trace = ctxbudget::input::load(path, None).unwrap_or_else(|e| panic!("{e}"));
    let items = || trace.conversations.iter().flat_map(|c| c.items.iter());
    Imported {
        format: trace.format,
        conversations: trace.conversations.len(),
        requests: trace.conversations.iter().map(|c| c.requests()).sum(),
        tool_results: trace.conversations.iter().map(|c| c.tool_results()).sum(),
        recorded: items().filter(|i| matches!(i, Item::Request(r) if r.usage.is_some())).count(),
    }
}

#[test]
fn openai_chat_corpus_files_import_with_the_tool_results_provenance_lists() {
    let Some(corpus) = corpus() else { return };
    let all = files(&corpus.join("openai-chat"));
    assert!(!all.is_empty());
    for path in all {
        let relative = path.strip_prefix(&corpus).unwrap().to_string_lossy().into_owned();
        let (results, has_usage) =
            provenance(&corpus, &relative).unwrap_or_else(|| panic!("{relative} not in PROVENANCE.md"));
        let got = import(&path);
        println!(
            "{relative}: {} conversations, {} requests, {} tool results, {} recorded",
            got.conversations, got.requests, got.tool_results, got.recorded
        );
        assert_eq!(got.format, "openai-chat", "{relative}");
        assert_eq!(Some(got.tool_results), results, "{relative}");
        // tau-bench records no usage; a file that did would have to yield recorded sizes.
        assert_eq!(got.recorded > 0, has_usage, "{relative}");
    }
}

#[test]
fn cassettes_import_with_independently_counted_tool_results_and_recorded_sizes() {
    let Some(corpus) = corpus() else { return };
    let dir = corpus.join("api-wire-cassettes");
    let all = files(&dir);
    assert_eq!(
        all.len(),
        CASSETTES.len(),
        "a cassette was added or removed: count it and list it in CASSETTES"
    );
    for path in all {
        let relative = path.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
        let (_, results, recorded) = *CASSETTES
            .iter()
            .find(|c| c.0 == relative)
            .unwrap_or_else(|| panic!("{relative}: not in CASSETTES"));
        let corpus_relative = format!("api-wire-cassettes/{relative}");
        let (listed, has_usage) = provenance(&corpus, &corpus_relative).unwrap();
        assert_eq!(listed, None, "{relative}: PROVENANCE.md now lists a count; compare with it");
        let got = import(&path);
        println!(
            "{relative}: {} conversations, {} requests, {} tool results, {} recorded",
            got.conversations, got.requests, got.tool_results, got.recorded
        );
        assert_eq!(got.format, "cassette", "{relative}");
        assert_eq!(got.tool_results, results, "{relative}");
        assert!(has_usage, "PROVENANCE.md lists recorded usage for every cassette");
        assert_eq!(got.recorded, recorded, "{relative}: requests with a recorded size");
    }
}

#[test]
fn the_api_corpus_files_are_recognised_by_exactly_one_format() {
    let Some(corpus) = corpus() else { return };
    for (dir, want) in [("openai-chat", "openai-chat"), ("api-wire-cassettes", "cassette")] {
        for path in files(&corpus.join(dir)) {
            assert_eq!(detectors(&path), [want], "{}", path.display());
        }
    }
}

#[test]
fn no_api_format_claims_another_agents_corpus_file() {
    let Some(corpus) = corpus() else { return };
    let others = [
        "claude-code",
        "claude-code-stream-json",
        "codex-cli",
        "swe-agent",
        "mini-swe-agent",
        "openhands",
        "gemini-cli",
    ];
    let mut checked = 0;
    for dir in others {
        for path in files(&corpus.join(dir)) {
            let claimed: Vec<&str> =
                detectors(&path).into_iter().filter(|f| API_FORMATS.contains(f)).collect();
            assert!(claimed.is_empty(), "{} is claimed by {claimed:?}", path.display());
            checked += 1;
        }
    }
    println!("{checked} files of other agents checked");
    assert!(checked > 0);
}
