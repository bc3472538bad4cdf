//! The real and hand-made logs of the formats read from a user's own machine that issue 26 added
//! last: Inspect `.eval` zips, OpenCode session storage, aider's chat history. Each is read
//! through detection and checked against an independent count of the same files written here.

use std::io::Read;
use std::path::{Path, PathBuf};

use ctxbudget::input;
use ctxbudget::model::{Conversation, Item, Trace};
use serde_json::{Map, Value};

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(path)
}

fn requests(t: &Trace) -> usize {
    t.conversations.iter().map(Conversation::requests).sum()
}

fn tool_results(t: &Trace) -> usize {
    t.conversations.iter().map(Conversation::tool_results).sum()
}

/// The recorded prompt sizes of every request, in order.
fn recorded(t: &Trace) -> Vec<Option<u64>> {
    let sizes = t.conversations.iter().flat_map(|c| &c.items).filter_map(|i| match i {
        Item::Request(r) => Some(r.usage.map(|u| u.input_tokens)),
        _ => None,
    });
    sizes.collect()
}

/// The entries of a zip, by name, as JSON.
fn zip_entries(path: &Path) -> Vec<(String, Value)> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut entries = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        entries.push((entry.name().to_owned(), serde_json::from_str(&text).unwrap()));
    }
    entries
}

/// (model events, `role: tool` messages of the final transcripts, recorded `input_tokens`) of
/// an `.eval`, counted from its sample entries.
fn count_eval(entries: &[(String, Value)]) -> (usize, usize, Vec<u64>) {
    let (mut events, mut tools, mut usage) = (0, 0, Vec::new());
    for (_, sample) in entries.iter().filter(|(n, _)| n.starts_with("samples/")) {
        let model_events = sample["events"].as_array().unwrap().iter().filter(|e| e["event"] == "model");
        for e in model_events {
            events += 1;
            usage.extend(e["output"]["usage"]["input_tokens"].as_u64());
        }
        tools += sample["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").count();
    }
    usage.sort_unstable();
    (events, tools, usage)
}

/// The log's JSON form, as `inspect log convert --to json` writes it: the header's fields, its
/// `version` and `eval` first as Inspect writes them, then the samples (in `order`).
fn json_form(entries: &[(String, Value)], order: &[&str]) -> String {
    let header = entries.iter().find(|(n, _)| n == "header.json").unwrap().1.as_object().unwrap();
    let sample =
        |id: &str| entries.iter().find(|(n, _)| n == &format!("samples/{id}.json")).unwrap().1.clone();
    let samples = Value::Array(order.iter().map(|id| sample(id)).collect());
    let mut rest: Map<String, Value> = header.clone();
    rest.remove("version");
    rest.remove("eval");
    rest.insert("samples".into(), samples);
    let rest = Value::Object(rest).to_string();
    format!("{{\"version\":{},\"eval\":{},{}", header["version"], header["eval"], &rest[1..])
}

fn same_as_json_form(eval: &Path, order: &[&str]) -> Trace {
    let trace = input::load(eval, None).unwrap();
    assert_eq!(trace.format, "inspect-eval");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("log.json");
    std::fs::write(&json, json_form(&zip_entries(eval), order)).unwrap();
    let from_json = input::load(&json, None).unwrap();
    assert_eq!(from_json.format, "inspect");
    assert_eq!(trace.conversations, from_json.conversations, "the .eval reads as its JSON form does");
    assert_eq!(trace.warnings, from_json.warnings);
    trace
}

#[test]
fn an_inspect_eval_zip_reads_its_samples_and_usage_as_its_json_form() {
    let path = fixture("inspect/popularity.eval");
    let (events, tools, usage) = count_eval(&zip_entries(&path));
    let order: Vec<String> = (1..=10).map(|i| format!("{i}_epoch_1")).collect();
    let trace = same_as_json_form(&path, &order.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!((requests(&trace), tool_results(&trace)), (events, tools));
    let mut sizes: Vec<u64> = recorded(&trace).into_iter().map(Option::unwrap).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, usage);
    assert_eq!((events, usage.iter().sum::<u64>()), (10, 620));
    let ids: Vec<&str> = trace.conversations.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids[..3], ["1/epoch-1", "2/epoch-1", "3/epoch-1"], "Inspect's order, numbers by value");
}

#[test]
fn an_inspect_eval_of_log_version_3_expands_its_message_pool() {
    let path = fixture("inspect/message-pool.eval");
    let entries = zip_entries(&path);
    let (events, tools, usage) = count_eval(&entries);
    let trace = same_as_json_form(&path, &["0_epoch_1"]);
    assert_eq!((requests(&trace), tool_results(&trace), usage.len()), (events, tools, 0));
    assert_eq!((events, tools), (6, 5));
    // Every call's context is the pool ranges it names: the last call sent the whole transcript
    // but its own reply, counted here from the pool.
    let sample = &entries.iter().find(|(n, _)| n.starts_with("samples/")).unwrap().1;
    let last = sample["events"].as_array().unwrap().iter().rfind(|e| e["event"] == "model").unwrap();
    let sent: u64 = last["input_refs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[1].as_u64().unwrap() - r[0].as_u64().unwrap())
        .sum();
    let transcript = sample["messages"].as_array().unwrap().len() as u64;
    assert_eq!(sent + 1, transcript);
}

#[test]
fn a_zip_that_is_not_an_inspect_log_is_binary_not_a_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("photos.zip");
    let mut bytes = b"PK\x03\x04".to_vec();
    bytes.extend([0u8; 40]);
    bytes.extend(b"holiday.jpg");
    std::fs::write(&path, bytes).unwrap();
    let e = input::load(&path, None).unwrap_err().to_string();
    assert!(e.contains("not a text file") || e.contains("binary"), "{e}");
}

/// (step-start parts, tool parts, each step-finish's input + cache read + cache write) of an
/// OpenCode session, counted from the part files of its messages.
fn count_opencode(storage: &Path, session: &str) -> (usize, usize, Vec<u64>) {
    let read = |p: PathBuf| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let sorted = |dir: PathBuf| {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files
    };
    let (mut steps, mut tools, mut sizes) = (0, 0, Vec::new());
    for message in sorted(storage.join("message").join(session)) {
        let id = read(message)["id"].as_str().unwrap().to_owned();
        for part in sorted(storage.join("part").join(id)).into_iter().map(read) {
            match part["type"].as_str().unwrap() {
                "step-start" => steps += 1,
                "tool" => tools += 1,
                "step-finish" => {
                    let t = &part["tokens"];
                    let n = |p: &str| t.pointer(p).unwrap().as_u64().unwrap();
                    sizes.push(n("/input") + n("/cache/read") + n("/cache/write"));
                }
                _ => {}
            }
        }
    }
    (steps, tools, sizes)
}

#[test]
fn an_opencode_session_reads_its_steps_tool_parts_and_recorded_tokens() {
    let storage = fixture("opencode/storage");
    let session = "ses_6a1f0c2b3ffeAbCdEfGhIjKlMn";
    let (steps, tools, sizes) = count_opencode(&storage, session);
    // A walk of the data folder finds the session file alone: messages, parts and projects are
    // read through it or are not traces.
    let found = input::discover(&[fixture("opencode")]).files;
    assert_eq!(found.len(), 1, "{found:?}");
    let trace = input::load(&found[0], None).unwrap();
    assert_eq!(trace.format, "opencode");
    assert_eq!(trace.conversations.len(), 1);
    assert_eq!(trace.conversations[0].id, session);
    assert_eq!((requests(&trace), tool_results(&trace)), (steps, tools));
    assert_eq!(recorded(&trace), sizes.iter().map(|&n| Some(n)).collect::<Vec<_>>());
    assert_eq!((steps, tools, sizes.iter().sum::<u64>()), (4, 4, 51_668));
    let errors = trace.conversations[0]
        .items
        .iter()
        .filter(|i| matches!(i, Item::ToolResult(r) if r.is_error))
        .count();
    assert_eq!(errors, 2, "the failed edit and the call left running");
    assert!(
        trace.warnings.iter().any(|w| w.starts_with("1 tool output(s) were pruned by OpenCode")),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn an_aider_chat_history_alone_reads_its_token_lines_and_says_what_it_lacks() {
    let dir = fixture("aider-chat");
    let found = input::discover(std::slice::from_ref(&dir)).files;
    assert_eq!(found, [dir.join(".aider.chat.history.md")], "read although hidden and markdown");
    let text = std::fs::read_to_string(&found[0]).unwrap();
    let runs = text.lines().filter(|l| l.starts_with("# aider chat started at")).count();
    let token_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("> Tokens: ")).collect();
    let trace = input::load(&found[0], None).unwrap();
    assert_eq!(trace.format, "aider-chat");
    assert_eq!((trace.conversations.len(), requests(&trace)), (runs, token_lines.len()));
    assert_eq!(recorded(&trace), [Some(2300), Some(4104), Some(2410)]);
    assert!(trace.warnings[0].contains("lacks the system prompt, the repo map"), "{:?}", trace.warnings);
    assert_eq!(tool_results(&trace), 0, "aider has no tool calls");
}

#[test]
fn a_walk_prefers_aiders_llm_log_to_the_chat_history_beside_it() {
    let dir = fixture("aider");
    assert!(dir.join(".aider.chat.history.md").is_file());
    assert_eq!(input::discover(std::slice::from_ref(&dir)).files, [dir.join(".aider.llm.history")]);
}
