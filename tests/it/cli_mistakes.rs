//! Mistakes a newcomer makes on the command line, each answered with what was likely meant
//! (issue 28, "Mistakes that teach" and "Defaults that tell"): one test per mistake, asserting the
//! hint, and that the forms the hints teach are accepted and mean what they say.

use crate::common::ctxbudget;

const SMALL: &str = "tests/fixtures/native/small.jsonl";
/// A Claude Code session whose tools are `Read`, `Bash`, ...
const CLAUDE: &str = "tests/fixtures/cache-trap/session.jsonl";

/// Runs the binary from the repository root: (exit code, stdout, stderr).
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = ctxbudget().args(args).output().unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn a_policy_spec_given_to_policies_suggests_policy() {
    let (code, out, err) = run(&["compare", SMALL, "--policies", "keep-turns:n=3"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert!(err.contains("did you mean `--policy keep-turns:n=3`?"), "{err}");
    // A file that exists is read as a file, with no such hint.
    let (code, _, err) = run(&["compare", SMALL, "--policies", "Cargo.toml"]);
    assert_eq!(code, Some(2));
    assert!(!err.contains("did you mean"), "{err}");
}

#[test]
fn a_policy_value_without_its_key_suggests_the_key() {
    for spec in ["keep-turns=3", "keep-turns:3"] {
        let (code, _, err) = run(&["compare", SMALL, "--policy", spec]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("did you mean `keep-turns:n=3`?"), "{spec}: {err}");
    }
    let (code, _, err) = run(&["replay", SMALL, "--policy", "keep-turn:n=3"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("did you mean `keep-turns`"), "{err}");
}

#[test]
fn sizes_and_counts_take_k_and_kib_suffixes() {
    let (code, out, err) = run(&["sweep", SMALL, "--thresholds", "0,1KB,2KiB", "--format", "csv"]);
    assert_eq!(code, Some(0), "{err}");
    let thresholds: Vec<&str> = out.lines().skip(1).filter_map(|l| l.split(',').next()).collect();
    assert_eq!(thresholds, ["0", "1000", "2048"], "{out}");
    let (code, out, _) = run(&["replay", SMALL, "--threshold", "1k", "--policy", "none", "--format", "csv"]);
    assert_eq!(code, Some(0));
    let header: Vec<&str> = out.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|h| *h == "threshold").unwrap();
    assert_eq!(out.lines().nth(1).unwrap().split(',').nth(column), Some("1000"), "{out}");
    // Tokens in a policy parameter: `40k` is 40,000, the same run as the plain number.
    let with = |spec: &str| run(&["compare", SMALL, "--policy", spec, "--format", "csv"]);
    let (code, suffixed, err) = with("budget:max=40k,target=20k");
    assert_eq!(code, Some(0), "{err}");
    let (_, plain, _) = with("budget:max=40000,target=20000");
    assert_eq!(suffixed.replace("max=40k,target=20k", "max=40000,target=20000"), plain);
    let (code, _, err) = run(&["replay", SMALL, "--threshold", "1x"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("KiB") && err.contains("40k is 40,000"), "{err}");
}

#[test]
fn a_tolerance_below_one_without_a_percent_sign_is_a_warning() {
    let (code, _, err) = run(&["sweep", SMALL, "--tolerance", "0.05", "--format", "csv"]);
    assert_eq!(code, Some(0));
    assert!(err.contains("warning: --tolerance 0.05 is read as 0.05%"), "{err}");
    assert!(err.contains("`--tolerance 5%`"), "{err}");
    for clear in ["5%", "5", "0.05%"] {
        let (_, _, err) = run(&["sweep", SMALL, "--tolerance", clear, "--format", "csv"]);
        assert!(!err.contains("--tolerance"), "{clear}: {err}");
    }
}

#[test]
fn durations_take_one_syntax_in_flags_and_policy_parameters() {
    let compare = |args: &[&str]| {
        let mut all = vec!["compare", CLAUDE, "--format", "csv"];
        all.extend(args);
        run(&all)
    };
    let (code, minutes, err) = compare(&["--policy", "openclaw:ttl=5min", "--cache-ttl", "5min"]);
    assert_eq!(code, Some(0), "{err}");
    let (_, short, _) = compare(&["--policy", "openclaw:ttl=5m", "--cache-ttl", "5m"]);
    assert_eq!(minutes.replace("ttl=5min", "ttl=5m"), short);
    let (_, compound, _) = compare(&["--policy", "openclaw:ttl=1h30m", "--cache-ttl", "90m"]);
    let (_, plain, _) = compare(&["--policy", "openclaw:ttl=90", "--cache-ttl", "5400s"]);
    assert_eq!(compound.replace("ttl=1h30m", "ttl=90"), plain);
    let (code, _, err) = compare(&["--policy", "openclaw:ttl=5mn"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("5min") && err.contains("1h30m"), "{err}");
}

#[test]
fn a_tool_name_that_no_tool_of_the_input_has_is_a_warning_naming_the_closest() {
    let (code, _, err) = run(&["compare", CLAUDE, "--policy", "claude-code-micro:tools=read,Read"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("names the tool `read`, which no tool of the inputs is called"), "{err}");
    assert!(err.contains("did you mean `Read`?"), "{err}");
    assert!(!err.contains("`Read`, which"), "{err}");
    // OpenClaw's patterns are case-insensitive: `read` matches `Read`.
    let (_, _, err) = run(&["compare", CLAUDE, "--policy", "openclaw:tools_allow=read"]);
    assert!(!err.contains("names the tool"), "{err}");
    // A parameter left at its default names no tool of this input on purpose.
    let (_, _, err) = run(&["compare", SMALL, "--policy", "claude-code-micro"]);
    assert!(!err.contains("names the tool"), "{err}");
}

/// `HOME` for an agent-folder test: `.claude/projects` holding one session, no `.codex`.
fn claude_only_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let projects = home.path().join(".claude/projects/p");
    std::fs::create_dir_all(&projects).unwrap();
    std::fs::copy(crate::common::root().join(CLAUDE), projects.join("s.jsonl")).unwrap();
    home
}

#[test]
fn a_missing_agent_folder_is_a_warning_and_the_others_are_read() {
    let home = claude_only_home();
    let out = ctxbudget()
        .env("HOME", home.path())
        .args(["replay", "--claude", "--codex", "--policy", "none", "--format", "csv"])
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("s.jsonl"), "{stdout}");
    let codex = home.path().join(".codex/sessions");
    assert!(
        stderr.contains(&format!("warning: {}: no such folder, so --codex reads nothing", codex.display()))
    );
    assert!(!stderr.contains("error"), "{stderr}");
    // With no other input, nothing to read is an error.
    let out = ctxbudget().env("HOME", home.path()).args(["replay", "--codex"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stderr).unwrap().contains("no agent folder asked for exists"));
}

/// Copies the folder `from` (a fixture) to `to`, recursively.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `--cline` and `--opencode` read the folders those agents keep (Linux's paths, as
/// `input::AgentHome` gives them), and `--roo` with no Roo Code folder is a warning naming it.
#[cfg(target_os = "linux")]
#[test]
fn the_cline_opencode_and_roo_flags_read_their_agents_folders() {
    let home = tempfile::tempdir().unwrap();
    let fixtures = crate::common::root().join("tests/fixtures");
    let cline =
        home.path().join(".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1700000000000");
    copy_dir(&fixtures.join("cline/task"), &cline);
    copy_dir(&fixtures.join("opencode/storage"), &home.path().join(".local/share/opencode/storage"));
    let out = ctxbudget()
        .env("HOME", home.path())
        .args(["replay", "--cline", "--opencode", "--roo", "--policy", "none", "--format", "csv"])
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.lines().any(|l| l.contains("saoudrizwan.claude-dev") && l.contains(",cline,")),
        "{stdout}"
    );
    assert!(stdout.lines().any(|l| l.contains("opencode/storage") && l.contains(",opencode,")), "{stdout}");
    let roo = home.path().join(".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks");
    assert!(
        stderr.contains(&format!("warning: {}: no such folder, so --roo reads nothing", roo.display())),
        "{stderr}"
    );
}

#[test]
fn no_path_says_the_bundled_traces_are_read_and_how_to_read_your_own() {
    let (code, _, err) = run(&["replay", "--policy", "none", "--format", "csv"]);
    assert_eq!(code, Some(0));
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note:")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("bundled sample traces in traces") && notes[0].contains("--claude"), "{err}");
    let (_, _, err) = run(&["replay", "traces", "--policy", "none", "--format", "csv"]);
    assert!(!err.contains("note:"), "{err}");
}

#[test]
fn an_input_that_is_no_log_prints_its_error_and_no_table() {
    for command in ["sweep", "compare", "cost", "calibrate", "replay", "reconcile"] {
        let (code, out, err) = run(&[command, "Cargo.toml"]);
        assert_eq!(code, Some(1), "{command}");
        assert_eq!(out, "", "{command}");
        assert!(err.starts_with("error: Cargo.toml: not a recognised trace format"), "{command}: {err}");
    }
    // JSON is still written, every command's with the error in `errors`, where a script reads it.
    for command in ["sweep", "compare", "cost", "calibrate", "replay", "reconcile", "recommend"] {
        let (code, out, _) = run(&[command, "Cargo.toml", "--format", "json"]);
        assert_eq!(code, Some(1), "{command}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let errors = v["errors"].as_array().unwrap_or_else(|| panic!("{command}: no errors in {out}"));
        let named = |e: &serde_json::Value| {
            e["file"] == "Cargo.toml"
                && e["message"].as_str().is_some_and(|m| m.starts_with("not a recognised trace format"))
        };
        assert!(errors.iter().any(named), "{command}: {errors:?}");
    }
}

#[test]
fn a_folder_walk_passes_over_source_files_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["main.rs", "lib.rs", "Cargo.toml", "logo.PNG"] {
        std::fs::write(dir.path().join(name), "fn main() {}\n").unwrap();
    }
    std::fs::copy(crate::common::root().join(SMALL), dir.path().join("s.jsonl")).unwrap();
    let (code, out, err) =
        run(&["replay", dir.path().to_str().unwrap(), "--policy", "none", "--format", "csv"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("s.jsonl"), "{out}");
    let expected = format!(
        "warning: {}: 4 file(s) passed over as no agent log, by their extension (.rs 2, .png 1, .toml 1); \
         name a file to read it anyway\n",
        dir.path().display()
    );
    assert_eq!(err, expected);
    // Named explicitly, a file is read whatever its extension (and refused by content).
    let named = dir.path().join("main.rs");
    let (code, _, err) = run(&["replay", named.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("not a recognised trace format"), "{err}");
}

#[test]
fn a_folder_walk_passes_over_logs_by_name_that_are_no_logs_by_content_in_the_same_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();
    std::fs::write(dir.path().join("notes.json"), "notes, not JSON\n").unwrap();
    std::fs::write(dir.path().join("cut.json"), "{\"messages\": [1, 2,, 3]}\n").unwrap();
    std::fs::write(dir.path().join("data.bin"), b"\x00\x01\x02").unwrap();
    std::fs::write(dir.path().join("readme.txt"), "plain text\n").unwrap();
    std::fs::copy(crate::common::root().join(SMALL), dir.path().join("s.jsonl")).unwrap();
    let (code, out, err) =
        run(&["replay", dir.path().to_str().unwrap(), "--policy", "none", "--format", "csv"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().filter(|l| l.contains("s.jsonl")).count(), 1, "{out}");
    let expected = format!(
        "warning: {}: 6 file(s) passed over as no agent log, by their extension (.rs 1) and by their \
         content (cut.json: its JSON breaks at line 1, column 20; data.bin: binary; empty.jsonl: empty; \
         and 2 more); name a file to read it anyway\n",
        dir.path().display()
    );
    assert_eq!(err, expected);
    // Named explicitly, each still gets its own clear error.
    let named = dir.path().join("notes.json");
    let (code, _, err) = run(&["replay", named.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.starts_with(&format!("error: {}: not a recognised trace format", named.display())), "{err}");
    // With a format forced, detection does not decide: each is read, and skipped with its reason.
    let (_, _, err) =
        run(&["replay", dir.path().to_str().unwrap(), "--input-format", "native", "--format", "csv"]);
    assert!(err.contains("empty.jsonl: skipped: the file is empty"), "{err}");
    assert!(!err.contains("by their content"), "{err}");
}

#[test]
fn a_max_reuse_below_one_without_a_percent_sign_is_a_warning() {
    let (code, _, err) = run(&["recommend", SMALL, "--max-reuse", "0.25", "--format", "csv"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("warning: --max-reuse 0.25 is read as 0.25%"), "{err}");
    assert!(err.contains("`--max-reuse 25%`"), "{err}");
    let (_, _, err) = run(&["recommend", SMALL, "--max-reuse", "25%", "--format", "csv"]);
    assert!(!err.contains("--max-reuse"), "{err}");
}

#[test]
fn every_command_given_a_policy_warns_of_a_tool_name_no_tool_of_the_input_has() {
    for command in ["replay", "sweep", "compare", "cost", "recommend"] {
        for format in ["csv", "json"] {
            let (code, out, err) =
                run(&[command, CLAUDE, "--policy", "claude-code-micro:tools=read", "--format", format]);
            assert_eq!(code, Some(0), "{command}: {err}");
            let warning = "names the tool `read`, which no tool of the inputs is called";
            assert_eq!(err.matches(warning).count(), 1, "{command}: {err}");
            assert!(err.contains("did you mean `Read`?"), "{command}: {err}");
            if format == "json" {
                assert!(out.contains(warning), "{command}: the JSON's warnings lack it");
            }
        }
    }
    // The issue's own example: `exclude_tools=read` when the tool is `Read`.
    let (code, _, err) =
        run(&["replay", CLAUDE, "--policy", "anthropic:exclude_tools=read", "--format", "csv"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("`exclude_tools` names the tool `read`") && err.contains("did you mean `Read`?"),
        "{err}"
    );
}

#[test]
fn completions_and_the_man_page_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (code, out, err) = run(&["completions", shell]);
        assert_eq!(code, Some(0), "{shell}: {err}");
        for sub in ["replay", "sweep", "compare", "cost", "calibrate", "reconcile", "report", "man"] {
            assert!(out.contains(sub), "{shell} completions lack {sub}");
        }
    }
    let (code, out, _) = run(&["man"]);
    assert_eq!(code, Some(0));
    assert!(out.contains(".TH ctxbudget"), "{out}");
    assert!(out.contains("completions") && out.contains("reconcile"));
    let (code, _, err) = run(&["completions", "tcsh"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("possible values: bash"), "{err}");
}
