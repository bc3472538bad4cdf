//! `mini-swe-agent`: mini-swe-agent trajectories (`<instance>.traj.json`, one JSON document).
//!
//! Schema facts (`FORMATS.md` §9 of the shared corpus; mini-swe-agent
//! `src/minisweagent/agents/default.py`, `environments/local.py`): either the v1 object
//! `{info{exit_status, submission, model_stats, mini_version, config}, messages[],
//! trajectory_format:"mini-swe-agent-1", instance_id}` or a bare list of messages (the project's
//! test fixture). Messages are `{role, content, extra?}`, sent in order.
//!
//! - **One request per assistant message**, placed just before it. Its usage is the raw
//!   OpenAI-compatible response kept in `extra.response`: prompt size = `usage.prompt_tokens`
//!   (cached tokens are a subset), id = `response.id`, time = `extra.timestamp` or
//!   `response.created` (Unix seconds).
//! - **The call is the one fenced block** ```` ```bash ```` (or ```` ```mswea_bash_command ````,
//!   the newer tag) in the assistant text, found as mini-swe-agent's `parse_action` does
//!   (`` ```bash\s*\n(.*?)\n``` ``, exactly one match): tool name `bash`, arguments = the command
//!   (stripped), id synthesised `step-N` (N counts calls from 1). The text minus the command is
//!   assistant text, so text + arguments are exactly the bytes sent. A reply with zero or several
//!   blocks made no call: it stays assistant text.
//! - **Its result is the next `user` message** (link by adjacency; there are no ids), and that
//!   message counts **wholly** as the tool result: `<returncode>…</returncode>` + `<output>…`
//!   (or `<warning>` + `<output_head>`/`<elided_chars>`/`<output_tail>` for long output, or the
//!   timeout template) is mini-swe-agent's rendering of the command's output, made tool-side
//!   before anything reaches the model — what the seed's framework would store as the tool's
//!   output, including the truncation the seed leaves to the tool.
//! - The **submission** (the last `user` message, or a v2 `role:"exit"` message: the output of
//!   the `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff` command after its first line)
//!   is the result of that last call. It follows the last request, so it changes no request's
//!   context, only the tool-output totals.
//! - Other `user` messages are user text; after the first assistant message they are harness
//!   feedback (format errors: "Please always provide EXACTLY ONE action…") and marked `meta`.
//! - v2 tool-calling runs: an assistant `tool_calls` list (OpenAI shape) gives the calls and
//!   `role:"tool"` messages (`tool_call_id`) the results.
//!
//! Detection must not take OpenAI chat arrays (also bare message lists): a bare list is claimed
//! only when its messages have just `role`/`content`/`extra`, none has `tool_calls` or
//! `tool_call_id`, and the head shows the `<returncode>` convention and a ```` ```bash ```` /
//! ```` ```mswea_bash_command ```` block.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::look_alike::LookAlike;
use super::shared::{content_text, openai_call, openai_usage, read_document, split_action, unix_seconds};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Output, Request, ToolResult, Trace};

/// mini-swe-agent `.traj.json` files.
pub struct MiniSweAgent;

/// The fence tags mini-swe-agent's default and newer configs parse actions from.
const FENCES: [&str; 2] = ["```bash", "```mswea_bash_command"];

impl Format for MiniSweAgent {
    fn look_alike(&self) -> Option<LookAlike> {
        // mini-swe-agent's observation template starts `<returncode>N</returncode>`.
        let line: fn(&str) -> bool = |l| l.starts_with("<returncode>") && l.contains("</returncode>");
        Some(LookAlike { line: Some(line), lines_are: "tool results of mini-swe-agent", ..LookAlike::NONE })
    }

    fn name(&self) -> &'static str {
        "mini-swe-agent"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let o = head.outline();
        if o.is_object() {
            if o.value(".trajectory_format").is_some_and(|f| f.starts_with("mini-swe-agent")) {
                return true;
            }
            // v1 writes `info` first (`exit_status`, `submission`, … `mini_version`, `config`);
            // a SWE-agent .traj starts with `environment` or `trajectory`.
            return o.first_key() == Some("info")
                && ["exit_status", "mini_version", "config"].iter().any(|k| o.has(&format!(".info.{k}")))
                && !o.has(".trajectory")
                && !o.has(".history");
        }
        o.is_array()
            && o.has("[].role")
            && o.keys("[]").all(|k| matches!(k, "role" | "content" | "extra"))
            && head.text.contains("<returncode>")
            && FENCES.iter().any(|f| head.text.contains(f))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let doc = read_document(input, path)?;
        let (messages, prefix) = match &doc {
            Value::Array(m) => (m, ""),
            Value::Object(_) => match doc.get("messages").and_then(Value::as_array) {
                Some(m) => (m, "messages"),
                None => {
                    return Err(TraceError::content(
                        path,
                        "no `messages` array: a mini-swe-agent trajectory is {info, messages, trajectory_format} or a list of messages",
                    ));
                }
            },
            _ => return Err(TraceError::content(path, "expected a JSON object or a list of messages")),
        };
        let mut r = Reader { conversation: Conversation::new("main"), ..Default::default() };
        for (i, m) in messages.iter().enumerate() {
            r.place = format!("{}: {prefix}[{i}]", path.display());
            r.message(m).map_err(|e| TraceError::content(path, format!("{prefix}[{i}]: {e}")))?;
        }
        let mut trace = Trace { format: "mini-swe-agent", ..Default::default() };
        trace.warnings.extend(r.bad_usage.warning());
        trace.conversations.push(r.conversation);
        Ok(trace)
    }
}

/// Byte ranges of the commands in `text`, found as `re.findall(r"```bash\s*\n(.*?)\n```", text,
/// re.DOTALL)` does for each known fence tag.
pub fn fenced_commands(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut found = Vec::new();
    for fence in FENCES {
        let mut from = 0;
        while let Some(at) = text[from..].find(fence).map(|i| from + i) {
            let after = at + fence.len();
            // `\s*\n`: a run of whitespace that contains a newline; the command starts after the
            // run's last newline (the greedy `\s*` gives back only that much).
            let ws = text[after..].len() - text[after..].trim_start().len();
            let Some(nl) = text[after..after + ws].rfind('\n') else {
                from = after;
                continue;
            };
            let start = after + nl + 1;
            // `(.*?)\n````: up to the first "\n```" after the start. (An empty command right
            // after the tag's newline, which the regex would still match, is not found here.)
            match text[start..].find("\n```") {
                Some(len) => {
                    found.push(start..start + len);
                    from = start + len + 4;
                }
                None => break,
            }
        }
    }
    found.sort_by_key(|r| r.start);
    found
}

#[derive(Default)]
struct Reader {
    conversation: Conversation,
    /// Ids of the last assistant message's calls that have no result yet.
    pending: Vec<String>,
    /// The last assistant message made one text call and nothing has followed it yet.
    text_call_open: bool,
    seen_assistant: bool,
    names: HashMap<String, String>,
    steps: usize,
    /// Where the message being read is (`path: messages[i]`), to name a bad usage field.
    place: String,
    bad_usage: super::shared::BadUsage,
}

impl Reader {
    fn push(&mut self, item: Item) {
        self.conversation.items.push(item);
    }

    fn message(&mut self, m: &Value) -> Result<(), String> {
        let role = m.get("role").and_then(Value::as_str).ok_or("expected a message with a string `role`")?;
        let (text, images) = content_text(m.get("content"));
        let text_call_open = std::mem::take(&mut self.text_call_open);
        match role {
            "system" => self.push(Item::System { text }),
            "assistant" => self.assistant(m, text),
            "user" if text_call_open => self.result(None, text, images),
            "user" => self.push(Item::User { text, meta: self.seen_assistant, images }),
            "tool" => {
                let id = m.get("tool_call_id").and_then(Value::as_str).map(str::to_owned);
                self.result(id, text, images);
            }
            // v2 submission: the output of the last command.
            "exit" if !self.pending.is_empty() => self.result(None, text, images),
            "exit" => {}
            other => {
                return Err(format!(
                    "unknown role `{other}` (expected system, user, assistant, tool or exit)"
                ));
            }
        }
        Ok(())
    }

    fn assistant(&mut self, m: &Value, text: String) {
        let response = m.get("extra").and_then(|e| e.get("response"));
        let usage = match response.and_then(|r| r.get("usage")).and_then(openai_usage).transpose() {
            Ok(usage) => usage,
            Err(why) => {
                self.bad_usage.note(format!("{}.extra.response.usage", self.place), why);
                None
            }
        };
        let id = response.and_then(|r| r.get("id")).and_then(Value::as_str).map(str::to_owned);
        let timestamp = unix_seconds(m.get("extra").and_then(|e| e.get("timestamp")))
            .or_else(|| unix_seconds(response.and_then(|r| r.get("created"))));
        let model = response.and_then(|r| r.get("model")).and_then(Value::as_str).map(str::to_owned);
        self.push(Item::Request(Request { id, timestamp, usage, model }));
        self.seen_assistant = true;
        self.pending.clear();
        if let Some(calls) = m.get("tool_calls").and_then(Value::as_array).filter(|c| !c.is_empty()) {
            if !text.is_empty() {
                self.push(Item::Assistant { text });
            }
            for call in calls {
                self.steps += 1;
                let (call_id, name, arguments) = openai_call(call, format!("step-{}", self.steps));
                self.names.insert(call_id.clone(), name.clone());
                self.pending.push(call_id.clone());
                self.push(Item::ToolCall { call_id, name, arguments });
            }
            return;
        }
        let commands = fenced_commands(&text);
        let [command] = commands.as_slice() else {
            self.push(Item::Assistant { text });
            return;
        };
        self.steps += 1;
        let call_id = format!("step-{}", self.steps);
        let (rest, arguments) = split_action(&text, &text[command.clone()]);
        if !rest.trim().is_empty() {
            self.push(Item::Assistant { text: rest });
        }
        self.names.insert(call_id.clone(), "bash".into());
        self.pending.push(call_id.clone());
        self.text_call_open = true;
        self.push(Item::ToolCall { call_id, name: "bash".into(), arguments });
    }

    /// A result for `id`, or for the first pending call.
    fn result(&mut self, id: Option<String>, output: String, images: u32) {
        let call_id = match id {
            Some(id) => id,
            None if !self.pending.is_empty() => self.pending[0].clone(),
            None => format!("step-{}", self.steps),
        };
        self.pending.retain(|p| *p != call_id);
        let name = self.names.get(&call_id).cloned();
        self.push(Item::ToolResult(ToolResult {
            call_id,
            name,
            output: Output::Raw { output },
            is_error: false,
            images,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shared::testing::{FOREIGN, kinds};
    use crate::format::with_head;
    use crate::model::Usage;

    fn read(text: &str) -> Trace {
        MiniSweAgent.read(&mut text.as_bytes(), Path::new("t.traj.json")).unwrap()
    }

    const BARE: &str = r#"[
  {"role": "system", "content": "Reply with ONE ```mswea_bash_command block."},
  {"role": "user", "content": "Please solve this issue: x"},
  {"role": "assistant", "content": "Look first.\n\n```mswea_bash_command\nls -la\n```"},
  {"role": "user", "content": "<returncode>0</returncode>\n<output>\na.py\n</output>"},
  {"role": "assistant", "content": "Two at once:\n```mswea_bash_command\nls\n```\n```mswea_bash_command\npwd\n```"},
  {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."},
  {"role": "assistant", "content": "Submit.\n```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```"},
  {"role": "user", "content": "diff --git a/a.py b/a.py\n"}
]"#;

    #[test]
    fn the_fenced_command_is_the_call_and_the_next_user_message_its_result() {
        let t = read(BARE);
        let c = &t.conversations[0];
        let order =
            "system user request assistant call result request assistant user request assistant call result";
        assert_eq!(kinds(&c.items), order.split(' ').collect::<Vec<_>>());
        match (&c.items[3], &c.items[4], &c.items[5]) {
            (Item::Assistant { text }, Item::ToolCall { call_id, name, arguments }, Item::ToolResult(r)) => {
                assert_eq!(text, "Look first.\n\n```mswea_bash_command\n\n```");
                assert_eq!(
                    (call_id.as_str(), name.as_str(), arguments.as_str()),
                    ("step-1", "bash", "ls -la")
                );
                assert_eq!((r.call_id.as_str(), r.name.as_deref()), ("step-1", Some("bash")));
                assert_eq!(r.output.full_text(), "<returncode>0</returncode>\n<output>\na.py\n</output>");
            }
            other => panic!("{other:?}"),
        }
        // Two blocks: no call; the format error is harness text.
        assert!(matches!(&c.items[7], Item::Assistant { .. }));
        assert!(matches!(&c.items[8], Item::User { meta: true, .. }));
        // The submission is the result of the last call.
        let Some(Item::ToolResult(last)) = c.items.last() else { panic!() };
        assert_eq!(
            (last.call_id.as_str(), last.output.full_text().as_ref()),
            ("step-2", "diff --git a/a.py b/a.py\n")
        );
    }

    #[test]
    fn per_call_usage_comes_from_the_raw_response() {
        let t = read(
            r#"{"info": {"exit_status": "Submitted", "mini_version": "1.15.0"}, "messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "```bash\nls\n```", "extra": {"response": {"id": "gen-1", "created": 1763511296,
              "usage": {"prompt_tokens": 1500, "completion_tokens": 164, "prompt_tokens_details": {"cached_tokens": 1000}}}}}
            ], "trajectory_format": "mini-swe-agent-1"}"#,
        );
        let c = &t.conversations[0];
        let Item::Request(r) = &c.items[1] else { panic!("{:?}", c.items[1]) };
        assert_eq!(r.id.as_deref(), Some("gen-1"));
        assert_eq!(r.timestamp, Some(1_763_511_296_000));
        let want = Usage {
            input_tokens: 1500,
            cache_read_tokens: Some(1000),
            cache_write_tokens: None,
            output_tokens: Some(164),
            cost_micro_usd: None,
        };
        assert_eq!(r.usage, Some(want));
    }

    #[test]
    fn v2_tool_calls_and_exit_messages_link_by_id() {
        let t = read(
            r#"{"info": {"config": {}}, "messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "<returncode>0</returncode>"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
            {"role": "exit", "content": "the diff", "extra": {"exit_status": "Submitted"}}
            ], "trajectory_format": "mini-swe-agent-1"}"#,
        );
        let results: Vec<(&str, Option<&str>)> = t.conversations[0]
            .items
            .iter()
            .filter_map(|i| match i {
                Item::ToolResult(r) => Some((r.call_id.as_str(), r.name.as_deref())),
                _ => None,
            })
            .collect();
        assert_eq!(results, [("c1", Some("bash")), ("c2", Some("bash"))]);
    }

    #[test]
    fn fences_are_found_as_the_python_regex_finds_them() {
        let ranges = |t: &str| fenced_commands(t).into_iter().map(|r| t[r].to_owned()).collect::<Vec<_>>();
        assert_eq!(ranges("```bash\nls\n```"), ["ls"]);
        assert_eq!(ranges("```bash  \n\n  cd x\n  ls\n```"), ["  cd x\n  ls"]);
        assert_eq!(ranges("```bash ls\n```"), Vec::<String>::new(), "no newline after the tag");
        assert_eq!(ranges("```bashrc\nx\n```"), Vec::<String>::new());
        assert_eq!(ranges("```bash\na\n```\ntext\n```bash\nb\n```"), ["a", "b"]);
        assert_eq!(ranges("```python\nx\n```"), Vec::<String>::new());
    }

    #[test]
    fn an_unknown_role_is_an_error_naming_the_message() {
        let e = MiniSweAgent
            .read(
                &mut r#"{"info": {}, "messages": [{"role": "user", "content": "x"}, {"role": "robot"}]}"#
                    .as_bytes(),
                Path::new("t.json"),
            )
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json: messages[1]: unknown role `robot` (expected system, user, assistant, tool or exit)"
        );
    }

    #[test]
    fn detects_both_shapes_but_not_openai_chat_arrays_or_other_formats() {
        with_head(Path::new("x"), BARE.as_bytes(), true, |h| assert!(MiniSweAgent.detect(h)));
        let v1_cut = "{\n  \"info\": {\n    \"exit_status\": \"Submitted\",\n    \"submission\": \"diff --git a/x b/x\\n";
        with_head(Path::new("x"), v1_cut.as_bytes(), false, |h| assert!(MiniSweAgent.detect(h)));
        let tagged = r#"{"messages": [], "trajectory_format": "mini-swe-agent-1"}"#;
        with_head(Path::new("x"), tagged.as_bytes(), true, |h| assert!(MiniSweAgent.detect(h)));
        for (what, text) in FOREIGN {
            with_head(Path::new("x"), text.as_bytes(), true, |h| assert!(!MiniSweAgent.detect(h), "{what}"));
        }
        // The same conversation as the bare list, but written as OpenAI chat with tool calls.
        let chat = BARE.replacen(
            r#"{"role": "user", "content": "<returncode>0"#,
            r#"{"role": "tool", "tool_call_id": "c1", "content": "<returncode>0"#,
            1,
        );
        with_head(Path::new("x"), chat.as_bytes(), true, |h| assert!(!MiniSweAgent.detect(h)));
    }
}
