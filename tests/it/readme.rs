//! README's examples on the bundled traces, and those of docs/cli.md on the bundled traces and on
//! fixtures of this repository, are the binary's output: each command is run and the lines shown
//! for it must be what it prints, so that an example cannot go stale when a column or a number
//! changes. (The examples on the shared corpus, in the other docs pages, are checked by hand, their
//! commands beside them; these need nothing but the checkout.) README and the docs pages link
//! only to files that exist.

use crate::common;

use common::{ctxbudget, root};

/// The line that stands for lines left out of an example.
const GAP: &str = "…";

/// A file of the checkout (`README.md`, `docs/cli.md`), as lines.
fn page(path: &str) -> Vec<String> {
    std::fs::read_to_string(root().join(path)).unwrap().lines().map(str::to_owned).collect()
}

/// README, as lines.
fn readme() -> Vec<String> {
    page("README.md")
}

/// The lines a page shows after the line `$ COMMAND`, up to the end of its code block or the next
/// `$ ` line.
fn shown_after(page: &[String], command: &str) -> Vec<String> {
    let at = page.iter().position(|l| l == &format!("$ {command}")).unwrap_or_else(|| {
        panic!("the page shows no `$ {command}`");
    });
    page[at + 1..].iter().take_while(|l| !l.starts_with("```") && !l.starts_with("$ ")).cloned().collect()
}

/// What `args` prints on stdout, as lines (and it succeeds).
fn printed(args: &[&str]) -> Vec<String> {
    lines_of(ctxbudget().args(args))
}

/// What a page's `command` (`ctxbudget ARGS`, or `ctxbudget ARGS < FILE` with FILE relative to the
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

/// `shown` is `out` with runs of lines left out, each marked by a line `…`: the lines between two
/// marks stand together in `out`, in order, and without a mark at either end the example starts
/// (or ends) where the output does. Trailing blank lines do not count.
fn assert_shows_with_gaps(shown: &[String], out: &[String]) {
    let trim = |lines: &[String]| {
        let end = lines.iter().rposition(|l| !l.is_empty()).map_or(0, |i| i + 1);
        lines[..end].to_vec()
    };
    let (shown, out) = (trim(shown), trim(out));
    assert!(!shown.is_empty(), "nothing shown");
    let open_start = shown[0] == GAP;
    let open_end = shown[shown.len() - 1] == GAP;
    let mut at = 0;
    for (k, run) in shown.split(|l| l == GAP).filter(|run| !run.is_empty()).enumerate() {
        let found = if k == 0 && !open_start {
            assert!(
                out.starts_with(run),
                "not printed from the first line on, together (mark left-out lines with `…`): {run:#?}\nprinted: {out:#?}"
            );
            0
        } else {
            (at..=out.len().saturating_sub(run.len())).find(|&i| out[i..].starts_with(run)).unwrap_or_else(
                || panic!("not printed (in this order, together): {run:#?}\nprinted: {out:#?}"),
            )
        };
        at = found + run.len();
    }
    assert!(open_end || at == out.len(), "the example leaves out the last lines without a `…`");
}

#[test]
fn the_quick_tour_tables_are_what_replay_prints() {
    let cli = page("docs/cli.md");
    let command = "ctxbudget replay traces/explore-split.jsonl traces/non-ascii-review.jsonl --policy none \
                   --policy keep-turns:n=3 --format markdown";
    let shown = shown_after(&cli, command);
    let out = printed_as_shown(command);
    // The page shows the whole output, its two tables and their headings.
    let nonblank = |lines: &[String]| lines.iter().filter(|l| !l.is_empty()).cloned().collect::<Vec<_>>();
    assert_eq!(nonblank(&shown), nonblank(&out));
}

#[test]
fn the_per_request_csv_rows_are_what_replay_prints() {
    let cli = page("docs/cli.md");
    let command =
        "ctxbudget replay traces/explore-split.jsonl --per-request --policy keep-turns:n=2 --format csv";
    let shown = shown_after(&cli, command);
    let out = printed_as_shown(command);
    // The page shows the header and the first rows.
    assert!(shown.len() >= 3, "{shown:?}");
    assert_eq!(shown, out[..shown.len()]);
}

#[test]
fn the_split_example_is_what_split_prints() {
    let command = "ctxbudget split --threshold 64 < tests/fixtures/split/compiler-error.txt";
    assert_eq!(shown_after(&page("docs/cli.md"), command), printed_as_shown(command));
}

#[test]
fn the_count_example_is_what_count_prints() {
    let command = "ctxbudget count < tests/fixtures/count/git-log-stat.txt";
    assert_eq!(shown_after(&page("docs/cli.md"), command), printed_as_shown(command));
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

#[test]
fn the_threshold_job_is_what_sweep_prints() {
    let command = "ctxbudget sweep traces/ --format markdown";
    assert_shows_with_gaps(&shown_after(&readme(), command), &printed_as_shown(command));
}

#[test]
fn the_policy_job_is_what_compare_prints() {
    let command = "ctxbudget compare traces/ --format markdown";
    assert_shows_with_gaps(&shown_after(&readme(), command), &printed_as_shown(command));
}

#[test]
fn the_charts_job_is_what_report_prints() {
    let shown = shown_after(&readme(), "ctxbudget report traces/ --out reports");
    // Run into a folder of its own, then name it as README does.
    let out_dir = tempfile::tempdir().unwrap();
    let dir = out_dir.path().to_str().unwrap();
    let out: Vec<String> = printed(&["report", "traces/", "--out", dir])
        .into_iter()
        .map(|l| l.replace(dir, "reports"))
        .collect();
    assert_shows_with_gaps(&shown, &out);
    // README's picture is one of the charts the report draws.
    assert!(out_dir.path().join("charts/timeline-001.png").is_file());
    let picture = root().join("docs/img/timeline.png");
    let bytes = std::fs::metadata(&picture).expect("README's picture is in the checkout").len();
    assert!(bytes < 100_000, "README's picture is {bytes} bytes; keep it under 100 KB");
    assert!(readme().iter().any(|l| l.contains("(docs/img/timeline.png)")));
}

/// Every relative link target (`](path)` or `](path#anchor)`) of a Markdown file.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        let path = target.split('#').next().unwrap();
        if !path.is_empty() && !path.contains("://") && !path.starts_with("mailto:") && !path.contains(' ') {
            links.push(path.to_owned());
        }
    }
    links
}

#[test]
fn every_relative_link_of_readme_and_the_docs_resolves() {
    let mut pages = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for link in relative_links(&text) {
            if !page.parent().unwrap().join(&link).exists() {
                broken.push(format!("{}: {link}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:#?}");
}

#[test]
fn readme_names_no_path_outside_the_checkout() {
    for line in readme() {
        assert!(!line.contains("../"), "README points outside the checkout: {line}");
    }
}
