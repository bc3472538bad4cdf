//! `langchain` beside `ClearToolUsesEdit.apply` as LangChain writes it: `langchain-ai/langchain`
//! `libs/langchain_v1/langchain/agents/middleware/context_editing.py` (read at `925aa15`):
//!
//! ```python
//! tokens = count_tokens(messages)
//! if tokens <= self.trigger: return
//! candidates = [(idx, msg) for idx, msg in enumerate(messages) if isinstance(msg, ToolMessage)]
//! if self.keep >= len(candidates): candidates = []
//! elif self.keep: candidates = candidates[: -self.keep]
//! for idx, tool_message in candidates:
//!     ai_message = next((m for m in reversed(messages[:idx]) if isinstance(m, AIMessage)), None)
//!     if ai_message is None: continue
//!     tool_call = next((call for call in ai_message.tool_calls if call.get("id") == tool_message.tool_call_id), None)
//!     if tool_call is None: continue
//!     if (tool_message.name or tool_call["name"]) in excluded_tools: continue
//!     messages[idx] = tool_message.model_copy(update={"content": self.placeholder, ...})
//!     if self.clear_at_least > 0: ... if cleared_tokens >= self.clear_at_least: break
//! ```
//!
//! on a deep copy of the request's messages (`wrap_model_call`), so nothing persists. The
//! messages, built here from the items: each user text (and a compaction summary) is a
//! `HumanMessage`, each model response with text, reasoning or calls one `AIMessage` holding its
//! calls, each tool result a `ToolMessage`; the system prompt and the calibrated overhead are not
//! messages (`request.system_message` is apart).
//!
//! The count, `count_tokens_approximately` (`libs/core/langchain_core/messages/utils.py`, read at
//! `911f4d4`):
//!
//! ```python
//! for message in convert_to_messages(messages):
//!     message_chars = len(message.content)            # a str content
//!     if isinstance(message, AIMessage) and message.tool_calls:
//!         message_chars += len(repr(message.tool_calls))
//!     if isinstance(message, ToolMessage): message_chars += len(message.tool_call_id)
//!     message_chars += len(_get_message_openai_role(message))   # user, assistant, tool
//!     if message.name and count_name: message_chars += len(message.name)
//!     token_count += math.ceil(message_chars / 4.0) + 3.0
//! ```
//!
//! each message on its own. A call is `{'name': …, 'args': …, 'id': …, 'type': 'tool_call'}`, its
//! `args` what `json.loads` gives for its arguments (`parse_tool_call`, `or {}`); arguments that
//! are not a JSON object are a custom tool's free text, `{'__arg1': text}` as `langchain_openai`
//! holds a Responses API `custom_tool_call` (the reprs are built here as strings from
//! `serde_json`'s parse, apart from the policy's counting parser). A tool message
//! is named after its tool (LangGraph's `ToolNode`). Modelled, as the policy documents: an AI
//! message's content is a string of its text, reasoning and server-side content. Chars are the
//! library's measured char counts of the texts the replay sends (a result's summary and content
//! as the seed splits them), and `len` of the texts the test builds. Modelled: `on=content`
//! clears only a result the seed splits.

use std::collections::BTreeSet;

use ctxbudget::measure::{Category, MeasuredItem};
use serde_json::Value;

use super::{Cleared, On, Session, THRESHOLD, prunable, requests, results};

const PLACEHOLDER: &str = "[cleared]";

/// `ceil(chars / 4) + 3`.
fn message(chars: u64) -> u64 {
    chars.div_ceil(4) + 3
}

/// Python's `repr` of a str: quoted with `'` unless it holds `'` and no `"`, escapes for the
/// backslash, the quote, `\t`, `\n`, `\r` and the non-printable chars met in logs.
fn py_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::from(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control()
                || (c.is_whitespace() && c != ' ')
                || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}') =>
            {
                let n = u32::from(c);
                out.push_str(&match n {
                    0..=0xff => format!("\\x{n:02x}"),
                    0x100..=0xffff => format!("\\u{n:04x}"),
                    _ => format!("\\U{n:08x}"),
                });
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `repr` of a float: shortest digits, positional when the decimal point is within 16
/// places (and then with `.0` if no fraction), else `d.ddde±XX`.
fn py_float(x: f64) -> String {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    let e = format!("{:e}", x.abs());
    let (mantissa, exp) = e.split_once('e').expect("{:e} has an exponent");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let decpt = exp.parse::<i64>().expect("an integer exponent") + 1;
    let n = digits.len() as i64;
    let body = if decpt <= -4 || decpt > 16 {
        let e = decpt - 1;
        format!("{mantissa}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    } else if decpt <= 0 {
        format!("0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt >= n {
        format!("{digits}{}.0", "0".repeat((decpt - n) as usize))
    } else {
        format!("{}.{}", &digits[..decpt as usize], &digits[decpt as usize..])
    };
    format!("{sign}{body}")
}

/// Python's `repr` of what `json.loads` gives.
fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) if n.is_f64() => py_float(n.as_f64().expect("an f64")),
        Value::Number(n) => n.to_string(),
        Value::String(s) => py_str(s),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => {
            let items: Vec<String> =
                o.iter().map(|(k, v)| format!("{}: {}", py_str(k), py_repr(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// `repr` of a tool call as LangChain holds it.
fn tool_call(name: &str, arguments: &str, id: &str) -> String {
    let Ok(parsed) = serde_json::from_str::<Value>(arguments) else {
        return tool_call_repr(name, &format!("{{'__arg1': {}}}", py_str(arguments)), id);
    };
    let args = match parsed {
        Value::Object(o) if !o.is_empty() => py_repr(&Value::Object(o)),
        Value::Null | Value::Bool(false) => "{}".into(),
        Value::Number(n) if n.as_f64() == Some(0.0) => "{}".into(),
        Value::String(s) if s.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "{}".into(),
        Value::Object(_) => "{}".into(),
        _ => format!("{{'__arg1': {}}}", py_str(arguments)),
    };
    tool_call_repr(name, &args, id)
}

fn tool_call_repr(name: &str, args: &str, id: &str) -> String {
    format!("{{'name': {}, 'args': {args}, 'id': {}, 'type': 'tool_call'}}", py_str(name), py_str(id))
}

/// An AI message being built: its content's chars and its calls' reprs and ids.
#[derive(Default)]
struct Ai {
    chars: u64,
    calls: Vec<String>,
    ids: BTreeSet<String>,
}

impl Ai {
    fn tokens(&self) -> u64 {
        let repr =
            if self.calls.is_empty() { 0 } else { format!("[{}]", self.calls.join(", ")).chars().count() };
        message(self.chars + "assistant".len() as u64 + repr as u64)
    }
}

/// The approximate count of the messages in `items`, and for each tool result in them (by item
/// position) whether its call is in the nearest AI message before it.
fn messages(items: &[MeasuredItem], offset: usize) -> (u64, Vec<(usize, bool)>) {
    let (mut tokens, mut ais): (u64, Vec<Ai>) = (0, Vec::new());
    // Turn-scoped texts (hidden reasoning and what goes with it) are sent until the next human
    // turn starts.
    let last_turn = items.iter().rposition(|i| matches!(i, MeasuredItem::Text { turn_start: true, .. }));
    // Whether the current response has opened its AI message.
    let mut opened = false;
    let mut tool_messages = Vec::new();
    let open = |opened: &mut bool, ais: &mut Vec<Ai>| {
        if !*opened {
            *opened = true;
            ais.push(Ai::default());
        }
    };
    for (k, item) in items.iter().enumerate() {
        match item {
            MeasuredItem::Request { .. } => opened = false,
            MeasuredItem::Text { category, measure, turn_scoped, .. } => match category {
                Category::System | Category::Unrecorded | Category::Framing | Category::Images => {}
                Category::Assistant
                | Category::Thinking
                | Category::HiddenReasoning
                | Category::ServerSide => {
                    open(&mut opened, &mut ais);
                    if !(*turn_scoped && last_turn.is_some_and(|t| k < t)) {
                        ais.last_mut().expect("opened").chars += measure.chars.chars;
                    }
                }
                _ => tokens += message(measure.chars.chars + "user".len() as u64),
            },
            MeasuredItem::ToolCall { call_id, name, arguments, .. } => {
                open(&mut opened, &mut ais);
                let ai = ais.last_mut().expect("opened");
                ai.calls.push(tool_call(name, arguments, call_id));
                ai.ids.insert(call_id.clone());
            }
            MeasuredItem::ToolResult(sizes, r) => {
                let (summary, content) = sizes.split_at(THRESHOLD);
                let sent = summary.chars.chars + content.map_or(0, |c| c.chars.chars);
                let id = r.call_id.chars().count() as u64;
                let name = r.name.as_deref().unwrap_or("").chars().count() as u64;
                tokens += message(sent + id + name + "tool".len() as u64);
                let found = ais.last().is_some_and(|ai| ai.ids.contains(&r.call_id));
                tool_messages.push((offset + k, found));
            }
            MeasuredItem::Compaction { summary } => {
                if let Some(s) = summary {
                    tokens += message(s.chars.chars + "user".len() as u64);
                }
            }
            // The anchor sessions record no clearing.
            MeasuredItem::Cleared { .. } => {}
        }
    }
    (tokens + ais.iter().map(Ai::tokens).sum::<u64>(), tool_messages)
}

fn expected(s: &Session, on: On, trigger: u64, keep: usize) -> Vec<Cleared> {
    let all = results(&s.measured);
    requests(&s.measured)
        .iter()
        .map(|req| {
            let (count, tool_messages) = messages(&s.measured.items[req.start..req.end], req.start);
            let mut cleared = Cleared::default();
            if count <= trigger {
                return cleared;
            }
            let candidates = if keep >= tool_messages.len() { 0 } else { tool_messages.len() - keep };
            for &(position, call_found) in &tool_messages[..candidates] {
                let r = &all[all.partition_point(|r| r.position < position)];
                if call_found && prunable(r, on) {
                    cleared.results.insert(r.index, PLACEHOLDER.to_owned());
                }
            }
            cleared
        })
        .collect()
}

#[test]
fn langchain_clears_what_clear_tool_uses_clears_on_every_corpus_session() {
    let specs = [
        "langchain",
        "langchain:on=content",
        "langchain:trigger=20000",
        "langchain:trigger=20000,on=content",
        "langchain:trigger=5000,keep=0",
        "langchain:trigger=5000,keep=0,on=content",
    ];
    super::check("langchain", &specs, str::to_owned, |s, spec, on| {
        let (trigger, keep) = if spec.contains("trigger=20000") {
            (20_000, 3)
        } else if spec.contains("keep=0") {
            (5_000, 0)
        } else {
            (100_000, 3)
        };
        expected(s, on, trigger, keep)
    });
}
