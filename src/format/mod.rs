//! Recorded-session formats: one file per format behind the [`Format`] trait, plus auto-detection.
//!
//! Each format answers "is this mine?" from the first bytes of a file ([`Format::detect`], in the
//! spirit of inferno's `Collapse::is_applicable`) and turns a reader into the normalised
//! [`Trace`]. [`guess`] tries them in a fixed order. Everything downstream sees
//! only the model. Formats never open files or print: they read from the reader they are given and
//! report problems as [`TraceError`]s (fatal) or trace warnings (the rest of the file is usable).

pub mod aider;
pub mod aider_chat;
pub mod anthropic_messages;
pub mod cassette;
pub mod claude_code;
pub mod claude_stream;
pub mod cline;
pub mod codex;
pub mod codex_exec;
pub mod codex_legacy;
mod context_edits;
mod fields;
pub mod gemini_cli;
pub mod inspect;
pub mod inspect_eval;
pub mod look_alike;
pub mod mini_swe_agent;
pub mod native;
pub mod openai_chat;
pub mod openai_responses;
pub mod opencode;
pub mod openhands;
pub mod shared;
pub mod swe_agent;
mod wire;

use std::cell::OnceCell;
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use crate::error::TraceError;
use crate::model::Trace;

/// How many bytes of a file detection looks at.
pub const HEAD_BYTES: usize = 64 * 1024;

/// The start of a file, as detection sees it. Its outline and its document are worked out once,
/// when a format first asks, and shared by every format that asks after it.
pub struct Head<'a> {
    /// The file path (for formats recognised partly by name).
    pub path: &'a Path,
    /// Up to [`HEAD_BYTES`] bytes, lossily decoded.
    pub text: &'a str,
    /// The first non-blank line parsed as JSON, when it is complete and valid.
    pub first_json_line: Option<&'a Value>,
    outline: OnceCell<shared::Outline>,
    document: OnceCell<Option<Value>>,
}

impl<'a> Head<'a> {
    /// The `type` field of the first JSON line, if it is an object with a string `type`.
    pub fn first_type(&self) -> Option<&'a str> {
        self.first_json_line?.get("type")?.as_str()
    }

    /// The keys and short values of the head's first JSON value ([`shared::Outline::scan`]).
    pub fn outline(&self) -> &shared::Outline {
        self.outline.get_or_init(|| shared::Outline::scan(self.text))
    }

    /// The head as one JSON document, its open brackets closed (`wire::head_document`).
    pub fn document(&self) -> Option<&Value> {
        self.document.get_or_init(|| wire::head_document(self)).as_ref()
    }
}

/// One recorded-session format.
pub trait Format: Sync {
    /// Name used by `--input-format` and in reports.
    fn name(&self) -> &'static str;
    /// Whether a file that starts like `head` is in this format.
    fn detect(&self, head: &Head<'_>) -> bool;
    /// Reads a whole trace. `path` is used only to name the file in errors and warnings.
    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError>;
    /// The marks this format's files carry where another format reads them as plain text, or no
    /// format recognises them ([`look_alike`]); `None` for formats that need none.
    fn look_alike(&self) -> Option<look_alike::LookAlike> {
        None
    }
}

/// Every format, in detection order (most specific first).
pub fn all() -> Vec<&'static dyn Format> {
    vec![
        &claude_code::ClaudeCode,
        &swe_agent::SweAgent,
        &mini_swe_agent::MiniSweAgent,
        &openhands::OpenHands,
        &gemini_cli::GeminiCli,
        &claude_stream::ClaudeStream,
        &codex::Codex,
        &codex_exec::CodexExec,
        &codex_legacy::CodexLegacy,
        &cline::Cline,
        &aider::Aider,
        &aider_chat::AiderChat,
        &opencode::OpenCode,
        &native::Native,
        &openai_chat::OpenAiChat,
        &anthropic_messages::AnthropicMessages,
        &openai_responses::OpenAiResponses,
        &cassette::Cassette,
        &inspect::Inspect,
        &inspect_eval::InspectEval,
    ]
}

/// The names of every format, comma-separated.
pub fn names() -> String {
    all().iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
}

/// The format called `name`.
pub fn by_name(name: &str) -> Option<&'static dyn Format> {
    all().into_iter().find(|f| f.name() == name)
}

/// The first format that recognises `head`.
pub fn guess(head: &Head<'_>) -> Option<&'static dyn Format> {
    all().into_iter().find(|f| f.detect(head))
}

/// A warning for a trace read with no tool result whose text looks like the tool results of a
/// known agent's format (which format it resembles, and how to read it as that):
/// [`look_alike::warning`].
pub fn look_alike(trace: &Trace) -> Option<String> {
    look_alike::warning(trace)
}

/// Builds a [`Head`] from the first bytes of a file and calls `f` with it. `whole` says whether
/// `bytes` is the entire file (then a last line without a newline is complete).
pub fn with_head<R>(path: &Path, bytes: &[u8], whole: bool, f: impl FnOnce(&Head<'_>) -> R) -> R {
    let whole = whole && bytes.len() <= HEAD_BYTES;
    let bytes = &bytes[..bytes.len().min(HEAD_BYTES)];
    // Valid UTF-8 (nearly every head) is checked by the fast validator; `from_utf8_lossy` walks
    // the bytes in chunks and took 2.4% of a `--tokenizer estimate` replay of the 1 GB corpus.
    let text = match std::str::from_utf8(bytes) {
        Ok(valid) => std::borrow::Cow::Borrowed(valid),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    // Only a line that ended inside the head is complete.
    let complete = whole || text.trim_start().len() > first_line.trim_start().len();
    let first_json_line: Option<Value> =
        if complete { serde_json::from_str(first_line.trim()).ok() } else { None };
    f(&Head {
        path,
        text: &text,
        first_json_line: first_json_line.as_ref(),
        outline: OnceCell::new(),
        document: OnceCell::new(),
    })
}

/// Reads JSON Lines: calls `each(line_number, value)` for every non-blank line.
///
/// A last line without a newline that is not valid JSON is a session still being written: it is
/// skipped with a warning, also when it is cut in the middle of a UTF-8 character. Any other
/// invalid line is an error naming the line (and the column, on the line). Invalid UTF-8 is an
/// error naming the line.
pub fn read_json_lines(
    input: &mut dyn BufRead,
    path: &Path,
    warnings: &mut Vec<String>,
    each: impl FnMut(usize, Value) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    read_json_lines_as(input, path, warnings, each)
}

/// [`read_json_lines`], each line read as a `T`: typed records that keep only what an importer
/// uses, so the rest of a line is checked as JSON but never built (a Claude Code line repeats a
/// tool's whole result in `toolUseResult`, nearly half the bytes of a session).
pub fn read_json_lines_as<T: serde::de::DeserializeOwned>(
    input: &mut dyn BufRead,
    path: &Path,
    warnings: &mut Vec<String>,
    mut each: impl FnMut(usize, T) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let n = input
            .read_until(b'\n', &mut buf)
            .map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        let ended = buf.last() == Some(&b'\n');
        let not_utf8 = |at: usize| {
            let why = format!("invalid UTF-8 at byte {at} of the line; {}", shared::NOT_UTF8);
            TraceError::line(path, line_no, why)
        };
        // A last line cut in the middle of a character (a session still being written, whose
        // writer had not flushed the rest of it) is a cut-off line like any other: its valid
        // part is parsed, and only a part that is complete JSON makes the cut byte an error.
        let (text, cut_at) = match std::str::from_utf8(&buf) {
            Ok(text) => (text, None),
            Err(e) if !ended && e.error_len().is_none() => {
                let at = e.valid_up_to();
                (std::str::from_utf8(&buf[..at]).unwrap_or_default(), Some(at))
            }
            Err(e) => return Err(not_utf8(e.valid_up_to())),
        };
        // Without its line end, so that an error's column is on the line (not column 0 of the next).
        let text = text.strip_suffix('\n').map_or(text, |t| t.strip_suffix('\r').unwrap_or(t));
        let incomplete = |warnings: &mut Vec<String>| {
            warnings.push(format!(
                "{}:{line_no}: last line is incomplete (a session still being written?); replayed what is complete",
                path.display()
            ));
        };
        if text.trim().is_empty() {
            if cut_at.is_some() {
                incomplete(warnings);
                return Ok(());
            }
            continue;
        }
        match serde_json::from_str::<T>(text) {
            Ok(v) => match cut_at {
                Some(at) => return Err(not_utf8(at)),
                None => each(line_no, v)?,
            },
            Err(e) if !ended && e.is_eof() => {
                incomplete(warnings);
                return Ok(());
            }
            Err(e) => {
                // The position within a one-line document is just the column.
                let why = shared::describe_json_error(&e).replace(" at line 1 column ", " at column ");
                return Err(TraceError::line(
                    path,
                    line_no,
                    format!(
                        "invalid JSON: {why}; fix or delete this line (only the last line of a session still being written may be cut off)"
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Lines = Result<Vec<(usize, Value)>, TraceError>;

    fn lines(input: &str) -> (Lines, Vec<String>) {
        let mut warnings = Vec::new();
        let mut out = Vec::new();
        let r = read_json_lines(&mut input.as_bytes(), Path::new("t.jsonl"), &mut warnings, |n, v| {
            out.push((n, v));
            Ok(())
        });
        (r.map(|_| out), warnings)
    }

    #[test]
    fn json_lines_skip_blank_lines_and_number_from_one() {
        let (r, w) = lines("{\"a\":1}\n\n{\"a\":2}\n");
        let got = r.unwrap();
        assert_eq!(got.iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec![1, 3]);
        assert!(w.is_empty());
    }

    #[test]
    fn a_truncated_last_line_is_a_warning() {
        let (r, w) = lines("{\"a\":1}\n{\"a\":");
        assert_eq!(r.unwrap().len(), 1);
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("t.jsonl:2: last line is incomplete"), "{w:?}");
    }

    #[test]
    fn malformed_json_mid_file_names_the_line() {
        let (r, _) = lines("{\"a\":1}\n{oops}\n{\"a\":2}\n");
        let e = r.unwrap_err().to_string();
        assert!(e.starts_with("t.jsonl:2: invalid JSON"), "{e}");
    }

    #[test]
    fn a_last_line_cut_in_the_middle_of_a_character_is_a_cut_off_line() {
        let utf8 = |input: &[u8]| {
            let mut warnings = Vec::new();
            let r = read_json_lines(&mut &input[..], Path::new("t.jsonl"), &mut warnings, |_, _| Ok(()));
            (r.map_err(|e| e.to_string()), warnings)
        };
        let (r, w) = utf8(b"{\"a\":1}\n{\"a\":\"caf\xc3");
        assert!(r.is_ok(), "{r:?}");
        assert!(w.len() == 1 && w[0].starts_with("t.jsonl:2: last line is incomplete"), "{w:?}");
        // Not when the line ends, nor when the bad byte is not a character's cut start, nor when
        // what comes before the cut is complete JSON.
        for bad in [&b"{\"a\":\"caf\xc3\n"[..], b"{\"a\":\"\xff", b"{\"a\":1}\xc3"] {
            let (r, _) = utf8(bad);
            assert!(r.as_ref().is_err_and(|e| e.starts_with("t.jsonl:1: invalid UTF-8")), "{r:?}");
        }
    }

    #[test]
    fn an_error_on_a_line_ending_in_a_newline_gives_its_column_on_the_line() {
        for input in ["{\"a\":1}\n{\"a\":\n", "{\"a\":1}\r\n{\"a\":\r\n"] {
            let (r, _) = lines(input);
            let e = r.unwrap_err().to_string();
            assert!(e.starts_with("t.jsonl:2: invalid JSON: EOF while parsing a value at column 5;"), "{e}");
        }
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let mut warnings = Vec::new();
        let input: &[u8] = b"{\"a\":1}\n{\"a\":\"\xff\"}\n";
        let r = read_json_lines(&mut &input[..], Path::new("t.jsonl"), &mut warnings, |_, _| Ok(()));
        let e = r.unwrap_err().to_string();
        assert!(e.starts_with("t.jsonl:2: invalid UTF-8"), "{e}");
    }

    #[test]
    fn head_parses_only_a_complete_first_line() {
        with_head(Path::new("x"), b"{\"type\":\"user\"}\n{", false, |h| {
            assert_eq!(h.first_type(), Some("user"))
        });
        with_head(Path::new("x"), b"{\"type\":\"us", false, |h| assert!(h.first_json_line.is_none()));
        with_head(Path::new("x"), b"{\"type\":\"user\"}", true, |h| assert_eq!(h.first_type(), Some("user")));
    }
}
