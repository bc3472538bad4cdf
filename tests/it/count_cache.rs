//! `--count-cache`: exact counts kept between runs change no output byte, are really used, are the
//! same bytes at any thread count, and a file that cannot be used is named, never trusted.

use crate::common;

use std::path::Path;

use common::{corpus, ctxbudget, root};
use ctxbudget::counts::StoredCounts;

/// Stdout and stderr of a successful run.
fn run(args: &[&str]) -> (Vec<u8>, String) {
    let out = ctxbudget().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stderr}");
    (out.stdout, stderr)
}

/// The input tokens of every run of a `replay --format json` output, summed.
fn total(json: &[u8]) -> u64 {
    let r: ctxbudget::result::ReplayReport = serde_json::from_slice(json).unwrap();
    r.runs.iter().map(|run| run.total_input_tokens).sum()
}

fn kept(path: &Path) -> StoredCounts {
    StoredCounts::decode(&std::fs::read(path).unwrap()).expect("a usable count cache")
}

/// The analyses' JSON, and the per-request replay and reconciliation, with and without the file.
const COMMANDS: [&[&str]; 6] = [
    &["replay", "traces", "--per-request", "--format", "json"],
    &["reconcile", "traces", "--per-request", "--format", "json"],
    &["sweep", "traces", "--format", "json"],
    &["compare", "traces", "--format", "json"],
    &["cost", "traces", "--format", "json"],
    &["calibrate", "traces", "--format", "json"],
];

#[test]
fn kept_counts_change_no_output_byte() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("counts.ctxcounts");
    let cache_arg = cache.to_str().unwrap();
    for (i, args) in COMMANDS.iter().enumerate() {
        let (plain, _) = run(args);
        let with = |extra: &[&str]| run(&[*args, &["--count-cache", cache_arg], extra].concat());
        let (cold, stderr) = with(&[]);
        assert_eq!(plain, cold, "{args:?}: a first run with the file");
        assert!(!stderr.contains("count cache"), "{stderr}");
        let (warm, stderr) = with(&["-j", "1"]);
        assert_eq!(plain, warm, "{args:?}: a run that finds its counts kept");
        assert!(!stderr.contains("count cache"), "{stderr}");
        if i == 0 {
            assert!(kept(&cache).section("o200k/tiktoken").len() > 50, "the traces' texts are kept");
        }
    }
    // Each counter's counts are kept apart: `tests/counters.rs`, with every counter built.
}

#[test]
fn the_report_is_the_same_files_with_kept_counts() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("counts.ctxcounts");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run(&["report", "traces", "--out", a.to_str().unwrap()]);
    for _ in 0..2 {
        run(&["report", "traces", "--out", b.to_str().unwrap(), "--count-cache", cache.to_str().unwrap()]);
        for name in ["index.html", "report.json", "timeline.csv"] {
            let (x, y) = (std::fs::read(a.join(name)).unwrap(), std::fs::read(b.join(name)).unwrap());
            assert!(x == y, "{name} differs with the count cache");
        }
    }
}

#[test]
fn kept_counts_are_used_rather_than_counted_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("counts.ctxcounts");
    let args = ["replay", "traces", "--format", "json", "--count-cache", cache.to_str().unwrap()];
    let (honest, _) = run(&args);
    // Every kept count made 1,000 larger: a run that reads them must report larger contexts.
    let mut forged = StoredCounts::default();
    let entries = kept(&cache).section("o200k/tiktoken").iter().map(|&(k, n)| (k, n + 1000)).collect();
    forged.merge("o200k/tiktoken", entries);
    std::fs::write(&cache, forged.encode()).unwrap();
    let (lied_to, _) = run(&args);
    assert!(total(&lied_to) > total(&honest) + 1000, "the kept counts were not used");
}

#[test]
fn a_gpt_4_log_keeps_its_cl100k_counts_under_the_default_provider() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gpt-4.json");
    let text = "日本語の文章を数えます。東京都の天気は晴れで、気温は二十五度です。";
    let messages: Vec<_> = (0..6)
        .map(|i| serde_json::json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("{i} {text}")}))
        .collect();
    std::fs::write(&log, serde_json::json!({"model": "gpt-4-0613", "messages": messages}).to_string())
        .unwrap();
    let cache = dir.path().join("counts.ctxcounts");
    let args =
        ["replay", log.to_str().unwrap(), "--format", "json", "--count-cache", cache.to_str().unwrap()];
    let (first, _) = run(&args);
    let section = kept(&cache).section("cl100k/tiktoken").to_vec();
    assert!(section.len() >= 6, "the cl100k counts are kept: {section:?}");
    // Every kept cl100k count made 1,000 larger: the next run must use them, not count again.
    let mut lied = StoredCounts::default();
    lied.merge("cl100k/tiktoken", section.iter().map(|&(k, n)| (k, n + 1000)).collect());
    std::fs::write(&cache, lied.encode()).unwrap();
    let (second, _) = run(&args);
    assert!(total(&second) > total(&first) + 1000, "the kept cl100k counts were not used");
}

#[test]
fn the_file_is_the_same_bytes_at_any_thread_count_and_left_alone_when_nothing_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for jobs in ["1", "2", "3"] {
        let cache = dir.path().join(format!("counts-{jobs}.ctxcounts"));
        run(&["sweep", "traces", "-j", jobs, "--count-cache", cache.to_str().unwrap()]);
        files.push(std::fs::read(&cache).unwrap());
    }
    assert!(files.windows(2).all(|w| w[0] == w[1]), "the count cache differs with -j");
    // A run with nothing new does not rewrite it (an atomic rewrite would give a new inode).
    let cache = dir.path().join("counts-1.ctxcounts");
    let inode = || std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&cache).unwrap());
    let before = inode();
    run(&["compare", "traces", "--count-cache", cache.to_str().unwrap()]);
    assert_eq!(inode(), before, "rewritten though nothing was new");
    // New texts (another tokenizer's counts) are added, and the file replaced.
    run(&["compare", "traces", "--tokenizer", "cl100k", "--count-cache", cache.to_str().unwrap()]);
    assert_ne!(inode(), before);
    assert!(!kept(&cache).section("cl100k/tiktoken").is_empty());
}

#[test]
fn a_run_with_nothing_exact_to_keep_creates_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("counts.ctxcounts");
    run(&["replay", "traces", "--tokenizer", "estimate", "--count-cache", cache.to_str().unwrap()]);
    assert!(!cache.exists());
    run(&["replay", "traces", "--tokenizer", "cl100k", "--count-cache", cache.to_str().unwrap()]);
    assert!(!kept(&cache).section("cl100k/tiktoken").is_empty());
}

#[test]
fn the_environment_variable_names_the_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("counts.ctxcounts");
    let out = ctxbudget().args(["replay", "traces"]).env("CTXBUDGET_COUNT_CACHE", &cache).output().unwrap();
    assert!(out.status.success());
    assert!(!kept(&cache).is_empty());
}

#[test]
fn a_count_cache_that_cannot_be_used_is_named_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("counts.ctxcounts");
    let (plain, _) = run(&["replay", "traces", "--format", "json"]);
    let cases: [(&[u8], &str); 2] = [
        (b"ctxbudget count cache 1 0.0.1\nold", "written by format and version 1 0.0.1"),
        (b"", "not a ctxbudget count cache"),
    ];
    let damaged = {
        let mut good = StoredCounts::default();
        good.merge("o200k/tiktoken", vec![(1, 2), (3, 4)]);
        let mut bytes = good.encode();
        bytes.truncate(bytes.len() - 3);
        bytes
    };
    for (bytes, why) in cases.iter().copied().chain([(&damaged[..], "damaged (checksum mismatch)")]) {
        std::fs::write(&cache, bytes).unwrap();
        let (out, stderr) =
            run(&["replay", "traces", "--format", "json", "--count-cache", cache.to_str().unwrap()]);
        assert_eq!(out, plain);
        let named = format!("warning: count cache {}: {why}", cache.display());
        assert!(stderr.contains(&named), "expected `{named}` in: {stderr}");
        assert!(stderr.contains("counting afresh"), "{stderr}");
        assert!(kept(&cache).len() > 50, "replaced by a usable file");
    }
}

#[test]
fn a_file_that_is_not_a_count_cache_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    let mine = b"{\"not\": \"a count cache\"}\nmy notes\n";
    std::fs::write(&notes, mine).unwrap();
    let out =
        ctxbudget().args(["replay", "traces", "--count-cache", notes.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let named = format!("--count-cache: count cache {}: not a ctxbudget count cache", notes.display());
    assert!(stderr.contains(&named) && stderr.contains("left as it is"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read(&notes).unwrap(), mine);
}

#[test]
fn a_file_among_the_inputs_or_in_no_folder_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces");
    std::fs::create_dir(&traces).unwrap();
    std::fs::copy(root().join("traces/build-and-test.jsonl"), traces.join("a.jsonl")).unwrap();
    let inside = traces.join("counts.ctxcounts");
    let missing = dir.path().join("no-such-folder/counts.ctxcounts");
    for (cache, why) in [(&inside, "it is an input (or inside one)"), (&missing, "does not exist")] {
        let out = ctxbudget()
            .args(["replay", traces.to_str().unwrap(), "--count-cache", cache.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--count-cache") && stderr.contains(why), "{stderr}");
        assert!(out.stdout.is_empty());
        assert!(!cache.exists());
    }
}

#[cfg(unix)]
#[test]
fn an_output_that_is_the_count_cache_is_refused_and_the_cache_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("counts.ctxcounts");
    run(&["replay", "traces", "--format", "csv", "--count-cache", cache.to_str().unwrap()]);
    let before = std::fs::read(&cache).unwrap();
    // The same file by its name, or through a link to it.
    let link = dir.path().join("out.csv");
    std::os::unix::fs::symlink(&cache, &link).unwrap();
    for output in [&cache, &link] {
        for command in ["replay", "reconcile", "sweep", "compare", "cost", "calibrate"] {
            let out = ctxbudget()
                .args([
                    command,
                    "traces",
                    "--count-cache",
                    cache.to_str().unwrap(),
                    "-o",
                    output.to_str().unwrap(),
                ])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{command}: {}", String::from_utf8_lossy(&out.stderr));
            let refused = format!(
                "error: refusing to write {}: it is the --count-cache file; choose another output path\n",
                output.display()
            );
            assert_eq!(String::from_utf8_lossy(&out.stderr), refused);
            assert!(out.stdout.is_empty());
        }
    }
    assert_eq!(std::fs::read(&cache).unwrap(), before, "the counts are not replaced by a report");
}

#[test]
fn on_the_shared_corpus_kept_counts_change_no_output_byte() {
    let Some(dir) = corpus("") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("counts.ctxcounts");
    let corpus = dir.to_str().unwrap();
    let args = ["replay", corpus, "--format", "json", "--decide-with", "cl100k"];
    let (plain, _) = run(&args);
    for jobs in ["2", "1"] {
        let (with, _) = run(&[&args[..], &["-j", jobs, "--count-cache", cache.to_str().unwrap()]].concat());
        assert!(with == plain, "-j {jobs}: output differs with the count cache");
    }
    let k = kept(&cache);
    assert!(k.section("o200k/tiktoken").len() > 8000, "{}", k.section("o200k/tiktoken").len());
    assert!(k.section("cl100k/tiktoken").len() > 8000, "the decision counter's counts are kept too");
}
