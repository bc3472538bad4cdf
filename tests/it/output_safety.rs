//! Output safety: ctxbudget never alters its inputs, and an interrupted run never leaves a
//! half-written output.
//!
//! - Every command is run over a folder of inputs (traces in several formats and a policies file)
//!   and the folder is hashed before and after: same names, same bytes, same modification times.
//! - A report run is killed (SIGKILL, which no program can clean up after) while it writes its
//!   files, over a folder that already holds a complete report of other inputs. Afterwards every
//!   file in the folder is whole: either the old report's version or the new one's, byte for byte.
//!   The old index is removed before the first new file is renamed into place and the new one
//!   written last, so an index exists only beside a complete report of its own run: the old one
//!   when the kill came while the inputs were read, the new one when it came after the last file.
//!   The new files are written into a hidden `.ctxbudget-*` folder inside the report directory
//!   first and moved in only once all are written, so a run that fails while writing (a full
//!   disk; here a file-size limit) leaves the previous report whole. A killed run may leave that
//!   folder or a hidden `.ctxbudget-*` temporary file; the next report run into that folder
//!   removes them.
//! - CSV cells from logs are never spreadsheet formulas, and a report is not written into a folder
//!   of someone else's files without `--force` (docs/hostile-input.md).
//! - The same for a single `--output` file: it holds the old bytes or the new ones, never a part.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::{ctxbudget, files_under, root};

/// Every file under `dir` (relative path) with a hash of its bytes and its modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u128, SystemTime)> {
    files_under(dir, &[""])
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let modified = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p.strip_prefix(dir).unwrap().to_owned(), (xxhash_rust::xxh3::xxh3_128(&bytes), modified))
        })
        .collect()
}

#[test]
fn inputs_are_byte_identical_after_every_command() {
    let inputs = tempfile::tempdir().unwrap();
    let outputs = tempfile::tempdir().unwrap();
    for (from, to) in [
        ("tests/fixtures/native/small.jsonl", "native.jsonl"),
        ("tests/fixtures/codex/rollout-0.40.jsonl", "codex/rollout.jsonl"),
        ("tests/fixtures/claude-stream/agent_log_raw.txt", "stream/agent_log_raw.txt"),
        ("tests/fixtures/openai-chat/messages.json", "chat.json"),
        ("tests/fixtures/cassette/chat-and-anthropic.yaml", "cassette.yaml"),
        ("tests/fixtures/swe-agent/v1-function-calling.traj", "run.traj"),
    ] {
        let to = inputs.path().join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root().join(from), &to).unwrap();
    }
    let policies = inputs.path().join("policies.toml");
    std::fs::write(&policies, "[[policy]]\nkind = \"keep-turns\"\nn = 1\n").unwrap();
    let before = snapshot(inputs.path());
    assert_eq!(before.len(), 7);
    let dir = inputs.path().as_os_str();
    let out = |name: &str| outputs.path().join(name);
    let runs: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["replay".into(), dir.into(), "--policies".into(), policies.clone().into()],
        vec![
            "replay".into(),
            dir.into(),
            "--format".into(),
            "csv".into(),
            "--output".into(),
            out("r.csv").into(),
        ],
        vec!["replay".into(), dir.into(), "--transform".into(), "spill".into(), "--per-request".into()],
        vec![
            "reconcile".into(),
            dir.into(),
            "--output".into(),
            out("rec.json").into(),
            "--format".into(),
            "json".into(),
        ],
        vec![
            "sweep".into(),
            dir.into(),
            "--output".into(),
            out("s.md").into(),
            "--format".into(),
            "markdown".into(),
        ],
        vec!["compare".into(), dir.into(), "--policies".into(), policies.clone().into()],
        vec![
            "cost".into(),
            dir.into(),
            "--output".into(),
            out("c.csv").into(),
            "--format".into(),
            "csv".into(),
        ],
        vec!["calibrate".into(), dir.into()],
        vec!["report".into(), dir.into(), "--out".into(), out("report").into()],
        vec!["split".into(), inputs.path().join("native.jsonl").into()],
        vec!["count".into(), inputs.path().join("chat.json").into()],
    ];
    for args in &runs {
        let o = ctxbudget().args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(snapshot(inputs.path()), before, "{args:?} changed the inputs");
    }
    assert!(out("report/index.html").is_file());
}

/// A native trace big enough that a report takes a few seconds and writes megabytes.
fn long_trace(path: &Path, requests: usize) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "{{\"type\":\"user\",\"text\":\"go\"}}").unwrap();
    for i in 0..requests {
        let tool = ["bash", "Read", "Grep"][i % 3];
        writeln!(
            f,
            "{{\"type\":\"request\",\"timestamp\":\"2026-01-01T00:{:02}:{:02}.000Z\"}}",
            (i / 60) % 60,
            i % 60
        )
        .unwrap();
        writeln!(
            f,
            "{{\"type\":\"tool_call\",\"call_id\":\"c{i}\",\"name\":\"{tool}\",\"arguments\":\"{{}}\"}}"
        )
        .unwrap();
        let output = format!("line {i} of the output\\n").repeat(5 + i % 40);
        writeln!(f, "{{\"type\":\"tool_result\",\"call_id\":\"c{i}\",\"output\":\"{output}\"}}").unwrap();
    }
    writeln!(f, "{{\"type\":\"request\"}}").unwrap();
}

/// Visible files under `dir` with their bytes (hidden temporaries, and the hidden folder a report
/// is built in, left out).
fn visible(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files_under(dir, &[""])
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().to_owned())
        .filter(|p| !p.components().any(|c| c.as_os_str().to_string_lossy().starts_with('.')))
        .map(|rel| {
            let bytes = std::fs::read(dir.join(&rel)).unwrap();
            (rel, bytes)
        })
        .collect()
}

/// Starts `command`, waits until the names of the files in `watch` pass `started` (the writing has
/// begun), waits `delay` more and kills the process. Returns whether it was killed before
/// finishing.
fn kill_while_writing(
    command: &mut Command,
    watch: &Path,
    started: impl Fn(&[String]) -> bool,
    delay: Duration,
) -> bool {
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        let begun = std::fs::read_dir(watch).is_ok_and(|entries| {
            let names: Vec<String> =
                entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
            started(&names)
        });
        if begun || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    std::thread::sleep(delay);
    let killed = child.try_wait().unwrap().is_none();
    child.kill().ok();
    child.wait().unwrap();
    killed
}

#[cfg(unix)]
#[test]
fn a_report_killed_while_writing_leaves_only_whole_files_and_no_index_of_a_mix() {
    let work = tempfile::tempdir().unwrap();
    let long = work.path().join("long.jsonl");
    long_trace(&long, 4000);
    let small = root().join("tests/fixtures/native/small.jsonl");
    let report = |input: &Path, out: &Path| {
        ctxbudget()
            .arg("report")
            .arg(input)
            .arg("--out")
            .arg(out)
            .args(["--tokenizer", "estimate"])
            .assert()
            .success();
    };
    // The two complete reports every file must be one of.
    let (old_dir, new_dir) = (work.path().join("old"), work.path().join("new"));
    report(&small, &old_dir);
    report(&long, &new_dir);
    let (old, new) = (visible(&old_dir), visible(&new_dir));
    assert!(
        new[Path::new("timeline.csv")].len() > 1_000_000,
        "the new report is big enough to take a while to write"
    );
    let mut killed_while_writing = 0;
    for attempt in 0..4u64 {
        let out = work.path().join(format!("out-{attempt}"));
        report(&small, &out);
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("ctxbudget"));
        cmd.arg("report").arg(&long).arg("--out").arg(&out).args(["--tokenizer", "estimate"]);
        // The first time, killed as soon as a temporary file appears: the inputs are being read
        // (timeline.csv is written as they are), nothing is replaced yet. Then as soon as the old
        // index is gone, the renaming has begun: killed after 0, 5 and 10 ms more.
        let killed = if attempt == 0 {
            let reading = |names: &[String]| names.iter().any(|n| n.starts_with(".ctxbudget-"));
            kill_while_writing(&mut cmd, &out, reading, Duration::ZERO)
        } else {
            let renaming = |names: &[String]| !names.iter().any(|n| n == "index.html");
            kill_while_writing(&mut cmd, &out, renaming, Duration::from_millis(5 * (attempt - 1)))
        };
        let now = visible(&out);
        for (name, bytes) in &now {
            let whole = old.get(name) == Some(bytes) || new.get(name) == Some(bytes);
            assert!(whole, "attempt {attempt}: {} is neither the old nor the new version", name.display());
        }
        if now.contains_key(Path::new("index.html")) {
            assert!(now == new || now == old, "attempt {attempt}: an index beside a mix of two reports");
        }
        if killed && !now.contains_key(Path::new("index.html")) {
            killed_while_writing += 1;
        }
        // The next run completes the report and removes what the killed one left.
        report(&long, &out);
        assert!(visible(&out) == new, "attempt {attempt}: the next run did not complete the report");
        let leftovers: Vec<PathBuf> = files_under(&out, &[""])
            .into_iter()
            .filter(|p| p.components().any(|c| c.as_os_str().to_string_lossy().starts_with(".ctxbudget-")))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
    // Timing decides where each kill lands; report how many hit the writing (not an assertion:
    // the invariants above held either way).
    println!("{killed_while_writing} of 4 runs were killed while writing the report");
}

#[cfg(unix)]
#[test]
fn an_output_file_killed_while_written_holds_the_old_bytes_or_the_new_ones() {
    let work = tempfile::tempdir().unwrap();
    let long = work.path().join("long.jsonl");
    long_trace(&long, 4000);
    let args = [
        "--per-request",
        "--format",
        "csv",
        "--tokenizer",
        "estimate",
        "--policy",
        "none",
        "--policy",
        "keep-turns",
    ];
    let reference = work.path().join("reference.csv");
    let started = Instant::now();
    ctxbudget().arg("replay").arg(&long).args(args).arg("--output").arg(&reference).assert().success();
    let took = started.elapsed();
    let new = std::fs::read(&reference).unwrap();
    assert!(new.len() > 1_000_000);
    // Kills spread over the run, most near its end, where the file is written.
    for (attempt, share) in [0.5, 0.8, 0.9, 0.95, 0.98, 1.0].into_iter().enumerate() {
        let dir = work.path().join(format!("out-{attempt}"));
        std::fs::create_dir(&dir).unwrap();
        let out = dir.join("timeline.csv");
        std::fs::write(&out, "old report\n").unwrap();
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("ctxbudget"))
            .arg("replay")
            .arg(&long)
            .args(args)
            .arg("--output")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(took.mul_f64(share));
        child.kill().ok();
        child.wait().unwrap();
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes == b"old report\n" || bytes == new, "attempt {attempt}: {} bytes", bytes.len());
    }
}

/// A write that fails (a full disk: `/dev/full` where the system has one) names the output, for a
/// file and for stdout, whether the output is written whole or as it is made.
#[test]
fn a_failed_write_names_the_output() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("skipped: this system has no /dev/full");
        return;
    }
    for args in [&["--format", "json"][..], &["--per-request", "--format", "csv"], &[]] {
        let out = ctxbudget().args(["replay", "traces"]).args(args).arg("-o").arg(full).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("error: cannot write /dev/full: No space left on device"),
            "{args:?}: {stderr}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_ctxbudget"))
        .arg("split")
        .arg(root().join("README.md"))
        .stdout(std::fs::File::options().write(true).open(full).unwrap())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("error: cannot write stdout: No space"));
}

/// Conversation ids, tool names and paths come from the logs: a cell a spreadsheet would run as a
/// formula is written with a leading `'` in every CSV (`replay --format csv` and the report's
/// CSVs), while negative numbers stay numbers.
#[test]
fn csv_cells_from_logs_never_reach_a_spreadsheet_as_formulas() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let lines = [
        r#"{"type":"conversation","id":"=HYPERLINK(\"http://x\")"}"#,
        r#"{"type":"user","text":"go"}"#,
        r#"{"type":"request","usage":{"input_tokens":40}}"#,
        r#"{"type":"tool_call","call_id":"c1","name":"@SUM(1)","arguments":"{}"}"#,
        r#"{"type":"tool_result","call_id":"c1","name":"@SUM(1)","output":"a\nb\nc\n"}"#,
        r#"{"type":"request","usage":{"input_tokens":60}}"#,
    ];
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    let csv =
        ctxbudget().arg("replay").arg(&trace).args(["--format", "csv", "--per-request"]).output().unwrap();
    assert!(csv.status.success(), "{}", String::from_utf8_lossy(&csv.stderr));
    let text = String::from_utf8(csv.stdout).unwrap();
    assert!(text.contains(",\"'=HYPERLINK(\"\"http://x\"\")\","), "{text}");
    let out = dir.path().join("report");
    ctxbudget()
        .arg("report")
        .arg(&trace)
        .arg("--out")
        .arg(&out)
        .args(["--tokenizer", "estimate"])
        .assert()
        .success();
    for name in ["timeline.csv", "sweep-tools.csv", "calibration.csv", "compare.csv", "cost.csv"] {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        for line in text.lines() {
            for cell in line.split(',') {
                let cell = cell.trim_start_matches('"');
                assert!(!cell.starts_with(['=', '@']), "{name}: {line}");
            }
        }
    }
    let tools = std::fs::read_to_string(out.join("sweep-tools.csv")).unwrap();
    assert!(tools.contains("'@SUM(1)"), "{tools}");
}

/// `report --out` into a folder of the user's own files is refused (exit 2, nothing touched)
/// unless `--force`; a folder holding a previous report is written into as before.
#[test]
fn a_report_into_a_folder_of_user_files_is_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mine");
    std::fs::create_dir_all(out.join("charts")).unwrap();
    std::fs::write(out.join("index.html"), "my homepage").unwrap();
    std::fs::write(out.join("charts/timeline-1.svg"), "my drawing").unwrap();
    let before = snapshot(&out);
    let small = root().join("tests/fixtures/native/small.jsonl");
    let report = |force: bool| {
        let mut c = ctxbudget();
        c.arg("report").arg(&small).arg("--out").arg(&out).args(["--tokenizer", "estimate"]);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let refused = report(false);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(refused.stderr).unwrap(),
        format!(
            "error: refusing to write the report into {}: it holds files but no previous report (report.json \
             not found); choose an empty or new --out, or pass --force to write there anyway\n",
            out.display()
        )
    );
    assert_eq!(snapshot(&out), before, "nothing was touched");
    assert!(report(true).status.success());
    assert!(out.join("report.json").is_file());
    // Now it holds a report: written into again without --force.
    assert!(report(false).status.success());
}

/// A report that fails once the inputs are read (here a file-size limit, as a full disk would:
/// report.json is 27 KB, the limit 16 KB) leaves the previous report whole, index included, and
/// no staging folder.
#[cfg(target_os = "linux")]
#[test]
fn a_report_that_fails_while_written_leaves_the_previous_report_whole() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("report");
    let old_input = root().join("tests/fixtures/codex/rollout-0.40.jsonl");
    ctxbudget()
        .arg("report")
        .arg(&old_input)
        .arg("--out")
        .arg(&out)
        .args(["--tokenizer", "estimate"])
        .assert()
        .success();
    let old = visible(&out);
    assert!(old.contains_key(Path::new("index.html")));
    let bin = assert_cmd::cargo::cargo_bin("ctxbudget");
    let small = root().join("tests/fixtures/native/small.jsonl");
    // SIGXFSZ ignored: a write past the limit fails with EFBIG instead of killing the process.
    let script = "trap '' XFSZ; ulimit -f 16; exec \"$0\" report \"$1\" --out \"$2\" --tokenizer estimate";
    let o = Command::new("bash").arg("-c").arg(script).arg(&bin).arg(&small).arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    assert!(visible(&out) == old, "the previous report changed: {stderr}");
    let hidden: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
}
