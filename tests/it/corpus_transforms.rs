//! Record-time transforms against the cuts the agents themselves recorded in the shared corpus:
//! the mini-swe-agent trajectories' long outputs, rebuilt around their recorded ends, come out of
//! `truncate:mini` byte for byte with the template those runs used.

use crate::common;

use ctxbudget::input;
use ctxbudget::model::{Item, Output};
use ctxbudget::transform::{self, mini::WARNING};

/// The corpus's mini-swe-agent runs (v1.15.0, SWE-bench configs; PROVENANCE.md) wrote
/// `default.yaml`'s wording, which `mini.yaml` also had before v2.0.0: each truncated observation
/// is the `<returncode>` line and then exactly what `truncate:mini:template=default` writes for an
/// output with the recorded head, tail and elided count; `template=mini` (v2.0's JSON) does not.
#[test]
fn the_mini_swe_agent_trajectories_show_default_yaml_cuts() {
    let Some(dir) = common::corpus("mini-swe-agent") else { return };
    let default = transform::parse("truncate:mini:template=default").unwrap();
    let mini = transform::parse("truncate:mini").unwrap();
    let mut cuts = Vec::new();
    for path in common::files_under(&dir, &[".traj.json"]) {
        let trace = input::load(&path, None).unwrap();
        for item in trace.conversations.iter().flat_map(|c| &c.items) {
            let Item::ToolResult(r) = item else { continue };
            let text = r.output.full_text();
            let Some(body) = text.split_once("</returncode>\n").map(|(_, b)| b) else { continue };
            let Some(cut) = body.strip_prefix(&format!("{WARNING}<output_head>\n")) else { continue };
            // The recorded ends: 5,000 chars each, around the count of chars elided between them.
            let head: String = cut.chars().take(5_000).collect();
            let rest = &cut[head.len()..];
            let count = rest
                .strip_prefix("\n</output_head>\n<elided_chars>\n")
                .and_then(|r| r.split_once(" characters elided\n"))
                .unwrap_or_else(|| panic!("{}: no count after the head", path.display()));
            let elided: usize = count.0.parse().unwrap();
            let tail_block = body.strip_suffix("\n</output_tail>").expect("the tail closes the observation");
            let tail: String = {
                let chars: Vec<char> = tail_block.chars().collect();
                chars[chars.len() - 5_000..].iter().collect()
            };
            let original = format!("{head}{}{tail}", "x".repeat(elided));
            assert_eq!(
                default.apply(&original, r.name.as_deref()),
                Some(Output::Raw { output: body.to_owned() }),
                "{}",
                path.display()
            );
            let Some(Output::Raw { output: json }) = mini.apply(&original, r.name.as_deref()) else {
                panic!("template=mini leaves a cut output as it is")
            };
            assert!(json.starts_with("{\n  \"output_head\": \"") && json != body);
            cuts.push(elided);
        }
    }
    // One long output in each of the two SWE-bench trajectories.
    assert_eq!(cuts.len(), 2, "{cuts:?}");
}
