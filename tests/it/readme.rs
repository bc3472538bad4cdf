//! README's examples on the bundled traces (and on fixtures of this repository) are the binary's
//! output: each command is run and every line README shows for it must be a line of what it
//! prints, so that an example cannot go stale when a column or a number changes. (The examples on
//! the shared corpus are checked by hand, their commands beside them; these need nothing but the
//! checkout.)

use crate::common;

use common::{ctxbudget, root};

/// README, as lines.
fn readme() -> Vec<String> {
    std::fs::read_to_string(root().join("README.md")).unwrap().lines().map(str::to_owned).collect()
}

/// The lines README shows after the line `$ COMMAND`, up to the end of its code block or the next
/// `$ ` line.
fn shown_after(readme: &[String], command: &str) -> Vec<String> {
    let at = readme.iter().position(|l| l == &format!("$ {command}")).unwrap_or_else(|| {
        panic!("README shows no `$ {command}`");
    });
    readme[at + 1..].iter().take_while(|l| !l.starts_with("```") && !l.starts_with("$ ")).cloned().collect()
}

/// What `args` prints on stdout, as lines (and it succeeds).
fn printed(args: &[&str]) -> Vec<String> {
    lines_of(ctxbudget().args(args))
}

/// What README's `command` (`ctxbudget ARGS`, or `ctxbudget ARGS < FILE` with FILE relative to the
/// checkout) prints on stdout, as lines (and it succeeds).
fn printed_as_shown(command: &str) -> Vec<String> {
    let (args, stdin) = match command.split_once(" < ") {
        Some((args, file)) => (args, Some(file)),
        None => (command, None),
    };
    let mut cmd = ctxbudget();
    cmd.args(args.split_whitespace().skip(1));
    if let Some(file) = stdin {
        cmd.pipe_stdin(root().join(file)).unwrap();
    }
    lines_of(&mut cmd)
}

/// The lines `cmd` prints on stdout (and it succeeds).
fn lines_of(cmd: &mut assert_cmd::Command) -> Vec<String> {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect()
}

#[test]
fn the_quick_tour_tables_are_what_replay_prints() {
    let readme = readme();
    let command = "ctxbudget replay traces/explore-split.jsonl traces/non-ascii-review.jsonl --policy none \
                   --policy keep-turns:n=3 --format markdown";
    let shown = shown_after(&readme, command);
    let out = printed_as_shown(command);
    // README shows the whole output, its two tables and their headings.
    let nonblank = |lines: &[String]| lines.iter().filter(|l| !l.is_empty()).cloned().collect::<Vec<_>>();
    assert_eq!(nonblank(&shown), nonblank(&out));
}

#[test]
fn the_per_request_csv_rows_are_what_replay_prints() {
    let readme = readme();
    let command =
        "ctxbudget replay traces/explore-split.jsonl --per-request --policy keep-turns:n=2 --format csv";
    let shown = shown_after(&readme, command);
    let out = printed_as_shown(command);
    // README shows the header and the first rows.
    assert!(shown.len() >= 3, "{shown:?}");
    assert_eq!(shown, out[..shown.len()]);
}

#[test]
fn the_split_example_is_what_split_prints() {
    let command = "ctxbudget split --threshold 64 < tests/fixtures/split/compiler-error.txt";
    assert_eq!(shown_after(&readme(), command), printed_as_shown(command));
}

#[test]
fn the_count_example_is_what_count_prints() {
    let command = "ctxbudget count < tests/fixtures/count/git-log-stat.txt";
    assert_eq!(shown_after(&readme(), command), printed_as_shown(command));
}

#[test]
fn the_findings_of_the_main_command_are_what_report_prints() {
    let readme = readme();
    let out_dir = tempfile::tempdir().unwrap();
    let out = printed(&["report", "--out", out_dir.path().to_str().unwrap()]);
    // The findings README opens with, on the bundled traces; the last line names the folder.
    let (wrote, findings) = out.split_last().unwrap();
    assert!(wrote.starts_with("wrote ") && wrote.ends_with("(23 files)"), "{wrote}");
    assert!(findings.len() >= 5);
    for line in findings {
        assert!(readme.contains(line), "README does not show: {line}");
    }
    assert!(readme.iter().any(|l| l == "wrote reports/index.html (23 files)"));
}
