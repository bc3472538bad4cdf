//! Import: read, detect and parse every file of the shared corpus into the normalised model, per
//! corpus folder (one agent or wire format each) and all together; throughput in file bytes. And
//! the walk that finds those files (`input::discover`), in files found per second: it once asked
//! for every directory's canonical path, which read each component of the path as a link.
//!
//! `import-formats` sets the formats without a real sample in the corpus beside Claude Code on the
//! same conversation: the main conversation of the corpus's largest Claude Code session, written
//! in each format by `benches/common/fair/` (same texts, calls and outputs, so records are of
//! comparable sizes), to `target/bench-inputs/import-formats/`. `import-fixtures` times the same
//! formats on small records: the first lines of that session beside each other format's fixture
//! (`tests/fixtures/<format>/`) with its records repeated to about [`formats::SIZE`] bytes
//! ([`formats`] says how), written to `target/bench-inputs/import/`. Both stay on disk to be run
//! again under a profiler.

#[path = "common/mod.rs"]
mod common;
#[path = "common/fair/mod.rs"]
mod fair;

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ctxbudget::input;

fn import(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let files = common::files_with_sizes(&corpus);
    let mut groups: Vec<(String, Vec<(PathBuf, u64)>)> = Vec::new();
    for (path, size) in &files {
        let folder = path.strip_prefix(&corpus).ok().and_then(|p| p.iter().next());
        let folder = folder.map_or_else(|| "other".to_owned(), |f| f.to_string_lossy().into_owned());
        match groups.iter_mut().find(|(name, _)| *name == folder) {
            Some((_, list)) => list.push((path.clone(), *size)),
            None => groups.push((folder, vec![(path.clone(), *size)])),
        }
    }
    groups.push(("corpus".to_owned(), files));
    let mut group = c.benchmark_group("import");
    group.sample_size(10);
    for (name, files) in &groups {
        group.throughput(Throughput::Bytes(files.iter().map(|f| f.1).sum()));
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                for (path, _) in files {
                    // Files no format reads are part of a real walk too; their error is the result.
                    let _ = std::hint::black_box(input::load(path, None));
                }
            })
        });
    }
    group.finish();
}

/// The same conversation in each format, imported with detection, in input bytes per second (for
/// the `.eval` zip, its entries' bytes inflated: the JSON the importer parses).
fn import_formats(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let script = fair::corpus_script(&corpus);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-inputs/import-formats");
    let _ = std::fs::remove_dir_all(&dir);
    let inputs = fair::write_all(&script, &dir);
    let mut group = c.benchmark_group("import-formats");
    group.sample_size(10);
    for i in &inputs {
        let trace = input::load(&i.path, None).unwrap_or_else(|e| panic!("{}: {e}", i.path.display()));
        let requests: usize = trace.conversations.iter().map(|c| c.requests()).sum();
        println!("import-formats/{}: {} bytes, {requests} requests", i.format, i.bytes);
        group.throughput(Throughput::Bytes(i.bytes));
        group.bench_function(i.format, |b| b.iter(|| std::hint::black_box(input::load(&i.path, None))));
    }
    group.finish();
}

/// Each format's same-sized input of small records imported with detection, in input bytes per
/// second (for the `.eval` zip, its entries' bytes inflated).
fn import_fixtures(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let inputs = formats::write_all(&corpus);
    let mut group = c.benchmark_group("import-fixtures");
    group.sample_size(10);
    for i in &inputs {
        group.throughput(Throughput::Bytes(i.bytes));
        group.bench_function(i.format, |b| b.iter(|| std::hint::black_box(input::load(&i.path, None))));
    }
    group.finish();
}

fn discover(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let found = input::discover(std::slice::from_ref(&corpus)).files.len();
    let mut group = c.benchmark_group("discover");
    group.throughput(Throughput::Elements(found as u64));
    group.bench_function("corpus", |b| {
        b.iter(|| std::hint::black_box(input::discover(std::slice::from_ref(&corpus))))
    });
    group.finish();
}

criterion_group!(benches, import, import_formats, import_fixtures, discover);
criterion_main!(benches);

/// The same-sized inputs of `import-fixtures`, written from the fixtures and the corpus.
mod formats {
    use std::io::{Read, Write};
    use std::path::{Path, PathBuf};

    use ctxbudget::input;
    use serde_json::Value;

    /// About how many bytes each input holds (each is the first repeat count at or past it).
    pub const SIZE: usize = 2 << 20;

    /// One input: the format that reads it, the file given to `input::load`, and its bytes.
    pub struct Input {
        pub format: &'static str,
        pub path: PathBuf,
        pub bytes: u64,
    }

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn write(path: &Path, text: &str) -> u64 {
        std::fs::create_dir_all(path.parent().expect("a file in a folder"))
            .expect("a writable target folder");
        std::fs::write(path, text).expect("a writable target folder");
        text.len() as u64
    }

    /// `head`, then `body` repeated until the text reaches [`SIZE`], each copy passed through
    /// `renamed(copy number, body)` so ids stay unique.
    fn repeated(head: &str, body: &str, renamed: impl Fn(usize, &str) -> String) -> String {
        let mut out = head.to_owned();
        let mut copy = 0;
        while out.len() < SIZE {
            out += &renamed(copy, body);
            copy += 1;
        }
        out
    }

    /// Writes every input under `target/bench-inputs/import/`, checks each reads as its format
    /// with requests (the bench must not time an error), and says what each holds.
    pub fn write_all(corpus: &Path) -> Vec<Input> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-inputs/import");
        let _ = std::fs::remove_dir_all(&dir);
        let inputs = vec![
            claude_code(corpus, &dir),
            cline(&dir),
            text_log("aider", "aider/.aider.llm.history", &dir.join("aider/.aider.llm.history"), 0, ""),
            text_log(
                "aider-chat",
                "aider-chat/.aider.chat.history.md",
                &dir.join("aider-chat/chat.md"),
                0,
                "",
            ),
            text_log("codex-exec", "codex-exec/run.jsonl", &dir.join("codex-exec/run.jsonl"), 1, "\"item_"),
            text_log(
                "codex-legacy",
                "codex-legacy/rollout-2025-08-20.jsonl",
                &dir.join("codex-legacy/rollout.jsonl"),
                1,
                ":\"call_",
            ),
            inspect_eval(&dir),
            opencode(&dir),
        ];
        for i in &inputs {
            let trace = input::load(&i.path, None).unwrap_or_else(|e| panic!("{}: {e}", i.path.display()));
            assert_eq!(trace.format, i.format, "{}", i.path.display());
            let requests: usize = trace.conversations.iter().map(|c| c.requests()).sum();
            let results: usize = trace.conversations.iter().map(|c| c.tool_results()).sum();
            assert!(requests > 0, "{}", i.path.display());
            println!(
                "import-fixtures/{}: {} bytes, {requests} requests, {results} tool results",
                i.format, i.bytes
            );
        }
        inputs
    }

    /// The first lines of a real Claude Code session (2.6 MB, the corpus's largest) up to [`SIZE`].
    fn claude_code(corpus: &Path, dir: &Path) -> Input {
        let source = corpus.join("claude-code/codemie-code/session-624a4a58.jsonl");
        let text = std::fs::read_to_string(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        let mut out = String::new();
        for line in text.split_inclusive('\n') {
            if out.len() >= SIZE {
                break;
            }
            out += line;
        }
        let path = dir.join("claude-code/session.jsonl");
        Input { format: "claude-code", bytes: write(&path, &out), path }
    }

    /// A text log: its first `header_lines` lines once, the rest repeated, each copy's ids
    /// (strings starting with `id_prefix`) given the copy's number.
    fn text_log(
        format: &'static str,
        fixture_name: &str,
        path: &Path,
        header_lines: usize,
        id_prefix: &str,
    ) -> Input {
        let text = fixture(fixture_name);
        let cut = text.split_inclusive('\n').take(header_lines).map(str::len).sum::<usize>();
        let (head, body) = text.split_at(cut);
        let out = repeated(head, body, |copy, body| {
            if id_prefix.is_empty() {
                body.to_owned()
            } else {
                body.replace(id_prefix, &format!("{id_prefix}{copy}_"))
            }
        });
        Input { format, bytes: write(path, &out), path: path.to_owned() }
    }

    /// The Cline task's messages repeated (tool-use ids renamed per copy), and its
    /// `ui_messages.json` entries repeated with `conversationHistoryIndex` moved along, so every
    /// request keeps its recorded usage.
    fn cline(dir: &Path) -> Input {
        let history: Vec<Value> =
            serde_json::from_str(&fixture("cline/task/api_conversation_history.json")).unwrap();
        let ui: Vec<Value> = serde_json::from_str(&fixture("cline/task/ui_messages.json")).unwrap();
        let one = serde_json::to_string(&history).unwrap();
        let (mut all_history, mut all_ui) = (Vec::new(), Vec::new());
        let mut copy = 0;
        while serde_json::to_string(&all_history).unwrap().len() < SIZE - one.len() {
            let renamed = one.replace("toolu_", &format!("toolu_{copy}_"));
            all_history.extend(serde_json::from_str::<Vec<Value>>(&renamed).unwrap());
            for entry in &ui {
                let mut entry = entry.clone();
                if let Some(i) =
                    entry.get("conversationHistoryIndex").and_then(Value::as_i64).filter(|&i| i >= 0)
                {
                    entry["conversationHistoryIndex"] = (i + (copy * history.len()) as i64).into();
                } else if copy > 0 {
                    continue;
                }
                all_ui.push(entry);
            }
            copy += 1;
        }
        let path = dir.join("cline/task/api_conversation_history.json");
        let bytes = write(&path, &serde_json::to_string(&all_history).unwrap())
            + write(&dir.join("cline/task/ui_messages.json"), &serde_json::to_string(&all_ui).unwrap());
        Input { format: "cline", bytes, path }
    }

    /// Inspect's `popularity.eval` with its samples repeated under new ids (deflated, as Inspect
    /// writes them). Its bytes are the entries' inflated bytes: the JSON the importer parses.
    fn inspect_eval(dir: &Path) -> Input {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/inspect/popularity.eval");
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&source).unwrap()).unwrap();
        let mut entries = Vec::new();
        for i in 0..zip.len() {
            let mut entry = zip.by_index(i).unwrap();
            let mut text = String::new();
            entry.read_to_string(&mut text).unwrap();
            entries.push((entry.name().to_owned(), text));
        }
        let path = dir.join("inspect-eval/log.eval");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut out = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let options = zip::write::SimpleFileOptions::default();
        let (mut bytes, mut copy) = (0, 0);
        let put = |name: &str, text: &str, out: &mut zip::ZipWriter<std::fs::File>| {
            out.start_file(name, options).unwrap();
            out.write_all(text.as_bytes()).unwrap();
            text.len()
        };
        for (name, text) in entries.iter().filter(|(n, _)| !n.starts_with("samples/")) {
            bytes += put(name, text, &mut out);
        }
        while bytes < SIZE {
            for (name, text) in entries.iter().filter(|(n, _)| n.starts_with("samples/")) {
                // `samples/<id>_epoch_<n>.json`: the id gets the copy's number.
                let renamed = name.replacen("samples/", &format!("samples/{copy}0"), 1);
                bytes += put(&renamed, text, &mut out);
            }
            copy += 1;
        }
        out.finish().unwrap();
        Input { format: "inspect-eval", bytes: bytes as u64, path }
    }

    /// The OpenCode session's messages and their parts repeated, each copy's message ids
    /// renumbered so that they sort after the copy before (OpenCode reads them in id order).
    fn opencode(dir: &Path) -> Input {
        let storage = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode/storage");
        let out = dir.join("opencode/storage");
        let session_dir = std::fs::read_dir(storage.join("session")).unwrap().next().unwrap().unwrap().path();
        let session_file = std::fs::read_dir(&session_dir).unwrap().next().unwrap().unwrap().path();
        let session_id = session_file.file_stem().unwrap().to_string_lossy().into_owned();
        let path = out
            .join("session")
            .join(session_dir.file_name().unwrap())
            .join(session_file.file_name().unwrap());
        let mut bytes = write(&path, &std::fs::read_to_string(&session_file).unwrap());
        let mut messages: Vec<PathBuf> = std::fs::read_dir(storage.join("message").join(&session_id))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        messages.sort();
        let mut copy = 0;
        while (bytes as usize) < SIZE {
            for message in &messages {
                let id = message.file_stem().unwrap().to_string_lossy().into_owned();
                let new_id = format!("msg_{copy:05}{}", &id["msg_".len()..]);
                let text = std::fs::read_to_string(message).unwrap().replace(&id, &new_id);
                bytes += write(&out.join("message").join(&session_id).join(format!("{new_id}.json")), &text);
                for part in std::fs::read_dir(storage.join("part").join(&id)).unwrap() {
                    let part = part.unwrap().path();
                    let text = std::fs::read_to_string(&part).unwrap().replace(&id, &new_id);
                    bytes += write(&out.join("part").join(&new_id).join(part.file_name().unwrap()), &text);
                }
            }
            copy += 1;
        }
        Input { format: "opencode", bytes, path }
    }
}
