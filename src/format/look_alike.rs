//! Look-alikes: files that one format reads without error but not as what they are, and files no
//! format reads that carry a known agent's marks. Each format can declare a [`LookAlike`]: a cheap
//! test of one line of text that marks its tool results where another format would see plain
//! message text (Cline's `[read_file for 'a.rs'] Result:`, mini-swe-agent's `<returncode>`,
//! SWE-agent's `OBSERVATION:`, OpenHands' `EXECUTION RESULT of [x]:`, aider's `> Tokens: N sent`),
//! and the keys that mark one of its JSON Lines records whatever the record's type (a Codex
//! rollout line's `timestamp`, `type`, `payload`). A trace with no tool result whose user text
//! holds another format's marks gets one warning naming that format and the `--input-format` that
//! reads it ([`warning`]); a file no format recognises is described by the agent whose records or
//! text it resembles ([`unrecognised`]). Text from the log is quoted cut short and with its control
//! characters escaped.

use super::{Format, Head, all};
use crate::model::{Item, Trace};

/// How one format's files can be told when another format reads them, or none does.
pub struct LookAlike {
    /// Whether one line of a message's text is one of this format's marks (`None`: its tool
    /// results are structured, never plain text).
    pub line: Option<fn(&str) -> bool>,
    /// What the marked lines are, as a warning names them ("tool results of mini-swe-agent").
    pub lines_are: &'static str,
    /// Keys that together mark one of its JSON Lines records, whatever the record's type (empty
    /// when it writes no JSON Lines).
    pub record_keys: &'static [&'static str],
    /// What such a record is, as an error names it ("a Codex CLI rollout line").
    pub records_are: &'static str,
    /// What to do besides `--input-format NAME` (empty, or a clause starting with `, `).
    pub advice: &'static str,
}

impl LookAlike {
    /// No marks: the base the formats' declarations fill in (`..LookAlike::NONE`).
    pub const NONE: LookAlike =
        LookAlike { line: None, lines_are: "", record_keys: &[], records_are: "", advice: "" };
}

/// How many characters of a log's line a message quotes.
const SHOWN: usize = 60;

/// A warning for a trace read with no tool result whose user text holds the tool-result marks
/// of another format: which format, how many lines, one of them, and how to read it as that.
pub fn warning(trace: &Trace) -> Option<String> {
    if trace.conversations.iter().any(|c| c.tool_results() > 0) {
        return None;
    }
    let texts = trace.conversations.iter().flat_map(|c| &c.items).filter_map(|item| match item {
        Item::User { text, .. } => Some(text.as_str()),
        _ => None,
    });
    let found = best_match(texts.flat_map(str::lines), trace.format)?;
    Some(format!(
        "read as `{}` with no tool result, but {} line(s) of its user text look like {} (`{}`): read it with \
         `--input-format {}`{}",
        trace.format,
        found.lines,
        found.look.lines_are,
        shown(found.example),
        found.format.name(),
        found.look.advice
    ))
}

/// What a file no format recognises resembles, as a clause to append to that error (`; …`):
/// a first JSON line with the keys of a known agent's records but a record type no format reads
/// (a layout of that agent this build does not know), or text with a format's marks.
pub fn unrecognised(head: &Head<'_>) -> Option<String> {
    if let Some(line) = head.first_json_line.and_then(serde_json::Value::as_object) {
        for format in all() {
            let Some(look) = format.look_alike() else { continue };
            let keys = look.record_keys;
            if keys.is_empty() || !keys.iter().all(|k| line.contains_key(*k)) {
                continue;
            }
            let kind = line.get("type").and_then(serde_json::Value::as_str);
            let kind = kind.map_or_else(|| "no `type`".to_owned(), |t| format!("type `{}`", shown(t)));
            let keys = keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
            return Some(format!(
                "; its first line carries the keys of {} ({keys}) but its record ({kind}) is of a layout no format \
                 here reads: try `--input-format {}`{} (records it does not know are counted in a warning), and \
                 if that reads nothing, the file is in a layout of that agent ctxbudget does not read yet",
                look.records_are,
                format.name(),
                look.advice
            ));
        }
    }
    // A JSON document's marks are inside its strings; other text's are its lines.
    let mut strings = Vec::new();
    if let Some(doc) = head.document() {
        collect_strings(doc, &mut strings);
    }
    let lines: Box<dyn Iterator<Item = &str>> = if strings.is_empty() {
        Box::new(head.text.lines())
    } else {
        Box::new(strings.into_iter().flat_map(str::lines))
    };
    let found = best_match(lines, "")?;
    Some(format!(
        "; its text looks like {} ({} line(s) such as `{}`): read it with `--input-format {}`{}",
        found.look.lines_are,
        found.lines,
        shown(found.example),
        found.format.name(),
        found.look.advice
    ))
}

/// A format whose marks lines are tested for: how many carry them, and the first that does.
struct Match<'t> {
    format: &'static dyn Format,
    look: LookAlike,
    test: fn(&str) -> bool,
    lines: usize,
    example: &'t str,
}

/// The format other than `own` whose line test the most `lines` pass (the first in detection
/// order on a tie), or `None` when no line passes any.
fn best_match<'t>(lines: impl Iterator<Item = &'t str>, own: &str) -> Option<Match<'t>> {
    let mut candidates: Vec<Match<'t>> = all()
        .into_iter()
        .filter(|f| f.name() != own)
        .filter_map(|format| {
            let look = format.look_alike()?;
            Some(Match { format, test: look.line?, look, lines: 0, example: "" })
        })
        .collect();
    for line in lines {
        for c in &mut candidates {
            if (c.test)(line) {
                if c.lines == 0 {
                    c.example = line;
                }
                c.lines += 1;
            }
        }
    }
    let best = candidates.iter().map(|c| c.lines).max().filter(|&n| n > 0)?;
    candidates.into_iter().find(|c| c.lines == best)
}

/// Every string in `value`, in document order.
fn collect_strings<'v>(value: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    match value {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// A log's line as a message quotes it: its first [`SHOWN`] characters, trimmed, control
/// characters escaped (`\u{1b}`), so a log cannot drive the terminal or break a CSV or HTML cell.
fn shown(line: &str) -> String {
    let mut out = String::new();
    for c in line.trim().chars().take(SHOWN) {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::with_head;
    use crate::model::Conversation;
    use std::path::Path;

    fn trace_of(format: &'static str, user: &[&str]) -> Trace {
        let mut c = Conversation::new("main");
        c.items = user.iter().map(|t| Item::User { text: (*t).to_owned(), meta: false, images: 0 }).collect();
        Trace { format, conversations: vec![c], warnings: Vec::new() }
    }

    #[test]
    fn each_signature_names_its_format() {
        for (text, name, marked) in [
            ("[read_file for 'a.rs'] Result:\nfn main() {}", "cline", 1),
            ("<returncode>0</returncode>\n<output>\nok\n</output>", "mini-swe-agent", 1),
            ("OBSERVATION:\nfile.py\n", "swe-agent", 1),
            ("a.py\n(Open file: n/a)\n(Current directory: /repo)\nbash-$", "swe-agent", 2),
            ("EXECUTION RESULT of [execute_bash]:\nok", "openhands", 1),
            ("> Tokens: 2.3k sent, 150 received. Cost: $0.01 message", "aider-chat", 1),
        ] {
            let w = warning(&trace_of("openai-chat", &[text])).unwrap_or_else(|| panic!("{text}"));
            assert!(w.contains(&format!("--input-format {name}`")), "{w}");
            assert!(
                w.starts_with(&format!("read as `openai-chat` with no tool result, but {marked} line(s)")),
                "{w}"
            );
        }
    }

    #[test]
    fn plain_text_its_own_format_and_traces_with_results_get_no_warning() {
        let plain = ["#### A heading\nObservation: fine", "[link] Result: none", "returncode 0"];
        assert_eq!(warning(&trace_of("openai-chat", &plain)), None);
        assert_eq!(warning(&trace_of("mini-swe-agent", &["<returncode>0</returncode>"])), None);
    }

    #[test]
    fn the_most_marked_format_wins_and_log_text_is_neutralised() {
        let w = warning(&trace_of(
            "openai-chat",
            &["OBSERVATION:", "<returncode>1</returncode> \u{1b}[2J", "<returncode>0</returncode>"],
        ))
        .unwrap();
        assert!(w.contains("2 line(s)") && w.contains("--input-format mini-swe-agent"), "{w}");
        assert!(w.contains("\\u{1b}[2J") && !w.contains('\u{1b}'), "{w}");
    }

    #[test]
    fn an_unknown_layout_of_a_known_agent_is_named() {
        let head = |text: &str| with_head(Path::new("x.jsonl"), text.as_bytes(), true, unrecognised);
        let codex = head("{\"timestamp\":\"t\",\"type\":\"session_header\",\"payload\":{}}\n");
        let codex = codex.unwrap();
        assert!(codex.contains("Codex CLI rollout") && codex.contains("`--input-format codex`"), "{codex}");
        assert!(codex.contains("type `session_header`"), "{codex}");
        let claude = head("{\"type\":\"checkpoint\",\"uuid\":\"u\",\"sessionId\":\"s\"}\n").unwrap();
        assert!(
            claude.contains("Claude Code") && claude.contains("`--input-format claude-code`"),
            "{claude}"
        );
        let aider = head("#### fix it\n\n> Tokens: 1.2k sent, 30 received.\n").unwrap();
        assert!(aider.contains("`--input-format aider-chat`"), "{aider}");
        assert_eq!(head("{\"a\":1}\n"), None);
        assert_eq!(head("# Notes\n\n#### heading\n"), None);
    }
}
