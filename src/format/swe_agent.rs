//! `swe-agent`: SWE-agent trajectories (`<instance>.traj`, one JSON document).
//!
//! Schema facts (`FORMATS.md` §8 of the shared corpus; SWE-agent `sweagent/agent/agents.py`,
//! `save_trajectory`): `{trajectory[], history[], info{model_stats}, …}`. `history` holds the
//! messages the agent sent, in order; it is what is replayed. `trajectory` (per step: action,
//! observation, response) is used only where `history` stops early (below).
//!
//! - **One request per assistant message**, placed just before it: everything before it in
//!   `history` is what that call sent.
//! - **v1 function calling**: an assistant message's `tool_calls` (OpenAI shape) are the calls;
//!   a `role:"tool"` message is a result, linked by the first id of its `tool_call_ids` list
//!   (SWE-agent allows one call per response, so the list has one id; a result listing several
//!   is linked to the first).
//! - **v0 text actions**: the assistant message has an `action` (the command it parsed from the
//!   text) and no `tool_calls`. The call is synthesised: id `step-N` (N counts actions from 1, as
//!   the trajectory's steps do), name = the action's first word (`find_file`, `edit`, `submit`,
//!   `curl`), arguments = the action. The message text minus the action is assistant text, so
//!   text + arguments are exactly the bytes sent. The `role:"user"` message right after it is
//!   its result: there are no ids, so the link is adjacency.
//! - **The whole observation message counts as the tool result**, including the lines SWE-agent
//!   wraps around the command output (`(Open file: …)`, `(Current directory: …)`, `bash-$`): that
//!   rendered text is what the agent stores and sends for the call, as a tool result would be in
//!   the seed's framework.
//! - Other `user` messages are user text; the demonstration (`is_demo`) and any harness feedback
//!   after the first assistant message (format errors) are marked `meta` (not a human turn).
//! - `history` often stops early: at the last model call, so the last action's observation
//!   (usually the `submit` diff) is missing (v0 runs), or even before the last call's reply
//!   (some v1 runs keep 4 of 5 steps). Assistant messages with a call are matched to trajectory
//!   steps by number; when the history's last call is the same action as its step, the step's
//!   observation becomes the missing result, and later steps are appended as request, response
//!   text, call (synthesised `step-N`, arguments = the action) and result. An appended result
//!   after the last request changes no request's context, only the tool-output totals.
//! - Messages of several `agent`s become one conversation each, named after the agent.
//! - **Usage**: only the aggregate `info.model_stats.tokens_sent` (sum of prompt tokens over all
//!   calls) with `api_calls`, recorded as the conversation's total (on the first conversation
//!   when there are several agents). Zeros mean "not recorded" (replays, demonstrations): no total.
//!   There are no timestamps.
//!
//! Assumption: every call saw the whole `history` before it. SWE-agent's history processors
//! (`sweagent/agent/history_processors.py`, e.g. `LastNObservations`, configured as
//! `last_n_observations` with `n: 5` in SWE-agent's docs) may have replaced old observations in
//! what each call actually sent ("Old environment output: (N lines omitted)"), so with one
//! configured the replay without a policy overstates the recorded context; `keep-results:n=5`
//! approximates that processor (it keeps the instance prompt too, which is user text here).

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::look_alike::LookAlike;
use super::shared::{content_text, openai_call, read_document, split_action, str_at};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Output, RecordedTotal, Request, ToolResult, Trace};

/// SWE-agent `.traj` files.
pub struct SweAgent;

impl Format for SweAgent {
    fn look_alike(&self) -> Option<LookAlike> {
        // The `OBSERVATION:` header of its next-step templates, and the state line v0 appends.
        let line: fn(&str) -> bool = |l| {
            l.trim_end() == "OBSERVATION:"
                || (l.starts_with("(Current directory: ") || l.starts_with("(Open file: "))
                    && l.trim_end().ends_with(')')
        };
        Some(LookAlike { line: Some(line), lines_are: "observations of SWE-agent", ..LookAlike::NONE })
    }

    fn name(&self) -> &'static str {
        "swe-agent"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let o = head.outline();
        // An OpenHands `{trajectory: [events]}` also has actions and observations, but with `source`.
        o.is_object()
            && !o.has(".trajectory[].source")
            && ((o.has(".trajectory[].action")
                && (o.has(".trajectory[].observation") || o.has(".trajectory[].response")))
                || (o.has(".history[].role") && o.has(".history[].agent")))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let doc = read_document(input, path)?;
        from_document(&doc, path)
    }
}

/// A call of the last assistant message that has no result yet.
struct Pending {
    call_id: String,
    /// Synthesised from a v0 text action (its result is the next `user` message).
    text_action: bool,
}

#[derive(Default)]
struct Agent {
    conversation: Conversation,
    names: HashMap<String, String>,
    pending: Vec<Pending>,
    /// The previous history message of this agent was an assistant message.
    after_assistant: bool,
    seen_assistant: bool,
    /// The `action` of the last assistant message.
    last_action: Option<String>,
    /// Calls synthesised or recorded so far (for `step-N` ids).
    steps: usize,
    /// Assistant messages that carried a call (each is one trajectory step).
    calls: usize,
}

impl Agent {
    /// A v0 text action: the text minus the action is assistant text, the action is a call with a
    /// synthesised id. Returns the id.
    fn text_call(&mut self, text: &str, action: &str) -> String {
        self.steps += 1;
        let call_id = format!("step-{}", self.steps);
        let (rest, arguments) = split_action(text, action);
        let name = arguments.split_whitespace().next().unwrap_or("action").to_owned();
        if !rest.trim().is_empty() {
            self.conversation.items.push(Item::Assistant { text: rest });
        }
        self.names.insert(call_id.clone(), name.clone());
        self.pending.push(Pending { call_id: call_id.clone(), text_action: true });
        self.conversation.items.push(Item::ToolCall { call_id: call_id.clone(), name, arguments });
        call_id
    }

    fn result(&mut self, call_id: String, output: String, images: u32) {
        self.pending.retain(|p| p.call_id != call_id);
        let name = self.names.get(&call_id).cloned();
        self.conversation.items.push(Item::ToolResult(ToolResult {
            call_id,
            name,
            output: Output::Raw { output },
            is_error: false,
            images,
        }));
    }
}

fn from_document(doc: &Value, path: &Path) -> Result<Trace, TraceError> {
    let history = doc.get("history").and_then(Value::as_array).ok_or_else(|| {
        TraceError::content(path, "no `history` array: a SWE-agent .traj keeps the messages it sent there")
    })?;
    let mut agents: Vec<Agent> = Vec::new();
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    for (i, m) in history.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).ok_or_else(|| {
            TraceError::content(path, format!("history[{i}]: expected a message object with a string `role`"))
        })?;
        let agent_name = m.get("agent").and_then(Value::as_str).unwrap_or("main").to_owned();
        let index = *by_name.entry(agent_name.clone()).or_insert_with(|| {
            agents.push(Agent { conversation: Conversation::new(agent_name), ..Default::default() });
            agents.len() - 1
        });
        let a = &mut agents[index];
        let (text, images) = content_text(m.get("content"));
        let after_assistant = std::mem::replace(&mut a.after_assistant, role == "assistant");
        match role {
            "system" => a.conversation.items.push(Item::System { text }),
            "assistant" => assistant(a, m, text),
            "tool" => {
                let ids = m.get("tool_call_ids").and_then(Value::as_array);
                let id = ids
                    .and_then(|ids| ids.first())
                    .or_else(|| m.get("tool_call_id"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| a.pending.first().map(|p| p.call_id.clone()))
                    .ok_or_else(|| {
                        TraceError::content(
                            path,
                            format!(
                                "history[{i}]: a `tool` message with no `tool_call_ids` and no call to answer"
                            ),
                        )
                    })?;
                a.result(id, text, images);
            }
            "user" => {
                let answers = after_assistant && a.pending.len() == 1 && a.pending[0].text_action;
                if answers {
                    let id = a.pending[0].call_id.clone();
                    a.result(id, text, images);
                } else {
                    let demo = m.get("is_demo").and_then(Value::as_bool).unwrap_or(false);
                    a.conversation.items.push(Item::User { text, meta: demo || a.seen_assistant, images });
                }
            }
            other => {
                return Err(TraceError::content(
                    path,
                    format!(
                        "history[{i}]: unknown role `{other}` (expected system, user, assistant or tool)"
                    ),
                ));
            }
        }
    }
    if let Some(a) = agents.iter_mut().rev().find(|a| a.seen_assistant) {
        complete_from_trajectory(a, doc);
    }
    let mut trace = Trace { format: "swe-agent", ..Default::default() };
    let stats = doc.get("info").and_then(|i| i.get("model_stats"));
    let sent = stats.and_then(|s| s.get("tokens_sent")).and_then(Value::as_u64).unwrap_or(0);
    let calls = stats.and_then(|s| s.get("api_calls")).and_then(Value::as_u64).unwrap_or(0);
    if let Some(first) = agents.first_mut().filter(|_| sent > 0) {
        first.conversation.recorded_total = Some(RecordedTotal { input_tokens: sent, calls });
    }
    if agents.len() > 1 {
        trace.warnings.push(format!(
            "{}: {} agents' messages read as separate conversations; the recorded total is on the first",
            path.display(),
            agents.len()
        ));
    }
    trace.conversations = agents.into_iter().map(|a| a.conversation).collect();
    if trace.conversations.is_empty() {
        trace.conversations.push(Conversation::new("main"));
    }
    Ok(trace)
}

fn assistant(a: &mut Agent, m: &Value, text: String) {
    a.conversation.items.push(Item::Request(Request::default()));
    a.seen_assistant = true;
    a.pending.clear();
    let action = m.get("action").and_then(Value::as_str).map(str::to_owned);
    for block in m.get("thinking_blocks").and_then(Value::as_array).into_iter().flatten() {
        let thinking = str_at(block, "thinking");
        if !thinking.is_empty() {
            a.conversation.items.push(Item::Thinking { text: thinking });
        }
    }
    let calls = m.get("tool_calls").and_then(Value::as_array).filter(|c| !c.is_empty());
    if let Some(calls) = calls {
        a.calls += 1;
        if !text.is_empty() {
            a.conversation.items.push(Item::Assistant { text });
        }
        for call in calls {
            a.steps += 1;
            let (call_id, name, arguments) = openai_call(call, format!("step-{}", a.steps));
            a.names.insert(call_id.clone(), name.clone());
            a.pending.push(Pending { call_id: call_id.clone(), text_action: false });
            a.conversation.items.push(Item::ToolCall { call_id, name, arguments });
        }
    } else if let Some(act) = action.as_deref().filter(|s| !s.trim().is_empty()) {
        a.calls += 1;
        a.text_call(&text, act);
    } else if !text.is_empty() {
        a.conversation.items.push(Item::Assistant { text });
    }
    a.last_action = action;
}

/// Completes `history` from `trajectory` where it stops early: the last call's result when it is
/// missing, then any later steps (request, text, call, result each).
fn complete_from_trajectory(a: &mut Agent, doc: &Value) {
    let Some(steps) = doc.get("trajectory").and_then(Value::as_array) else { return };
    let field = |step: &Value, key: &str| step.get(key).and_then(Value::as_str).map(str::to_owned);
    // The history's last call must be the trajectory step of the same number, or we cannot align.
    let Some(aligned) = a.calls.checked_sub(1).and_then(|k| steps.get(k)) else { return };
    if field(aligned, "action").as_deref().map(str::trim) != a.last_action.as_deref().map(str::trim) {
        return;
    }
    if let (Some(p), Some(observation)) = (a.pending.first(), field(aligned, "observation")) {
        let id = p.call_id.clone();
        a.result(id, observation, 0);
    }
    for step in &steps[a.calls..] {
        let (Some(action), Some(observation)) = (field(step, "action"), field(step, "observation")) else {
            return;
        };
        a.conversation.items.push(Item::Request(Request::default()));
        let response = field(step, "response").or_else(|| field(step, "thought")).unwrap_or_default();
        let id = a.text_call(&response, &action);
        a.result(id, observation, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shared::testing::{FOREIGN, kinds};
    use crate::format::with_head;

    fn read(text: &str) -> Trace {
        SweAgent.read(&mut text.as_bytes(), Path::new("t.traj")).unwrap()
    }

    const V0: &str = r#"{
  "environment": "swe_main",
  "trajectory": [
    {"action": "ls\n", "observation": "a.py\n", "response": "r", "thought": "t"},
    {"action": "submit\n", "observation": "\ndiff --git a/a.py b/a.py\n", "response": "r", "thought": "t"}
  ],
  "history": [
    {"role": "system", "content": "SETTING", "agent": "primary"},
    {"role": "user", "content": "demo", "agent": "primary", "is_demo": true},
    {"role": "user", "content": "issue", "agent": "primary"},
    {"role": "assistant", "content": "Let's look.\n```\nls\n```", "thought": "Let's look.\n", "action": "ls\n", "agent": "primary"},
    {"role": "user", "content": "a.py\n(Open file: n/a)\nbash-$", "agent": "primary"},
    {"role": "assistant", "content": "Done.\n```\nsubmit\n```", "thought": "Done.\n", "action": "submit\n", "agent": "primary"}
  ],
  "info": {"exit_status": "submitted", "model_stats": {"tokens_sent": 1234, "tokens_received": 5, "api_calls": 2}}
}"#;

    #[test]
    fn v0_text_actions_become_synthesised_calls_linked_by_adjacency() {
        let t = read(V0);
        let c = &t.conversations[0];
        assert_eq!(c.id, "primary");
        let order = "system user user request assistant call result request assistant call result";
        assert_eq!(kinds(&c.items), order.split(' ').collect::<Vec<_>>());
        assert_eq!(c.requests(), 2);
        assert_eq!(c.tool_results(), 2, "{:#?}", c.items);
        assert!(matches!(&c.items[1], Item::User { meta: true, .. }), "the demo is meta");
        assert!(matches!(&c.items[2], Item::User { meta: false, .. }), "the issue is a human turn");
        match (&c.items[4], &c.items[5], &c.items[6]) {
            (Item::Assistant { text }, Item::ToolCall { call_id, name, arguments }, Item::ToolResult(r)) => {
                assert_eq!(text, "Let's look.\n```\n\n```");
                assert_eq!((call_id.as_str(), name.as_str(), arguments.as_str()), ("step-1", "ls", "ls"));
                assert_eq!(r.call_id, "step-1");
                assert_eq!(r.name.as_deref(), Some("ls"));
                assert_eq!(r.output.full_text(), "a.py\n(Open file: n/a)\nbash-$");
            }
            other => panic!("{other:?}"),
        }
        let Some(Item::ToolResult(last)) = c.items.last() else { panic!("{:?}", c.items.last()) };
        assert_eq!((last.call_id.as_str(), last.name.as_deref()), ("step-2", Some("submit")));
        assert_eq!(last.output.full_text(), "\ndiff --git a/a.py b/a.py\n");
        assert_eq!(c.recorded_total, Some(RecordedTotal { input_tokens: 1234, calls: 2 }));
    }

    const V1: &str = r#"{
  "trajectory": [{"action": "ls", "observation": "a.py", "response": "r", "thought": "t", "messages": []}],
  "history": [
    {"role": "system", "content": "SETTING", "agent": "main", "message_type": "system_prompt"},
    {"role": "user", "content": [{"type": "text", "text": "issue", "cache_control": {"type": "ephemeral"}}], "agent": "main", "message_type": "observation"},
    {"role": "assistant", "content": "Let's list.", "thought": "Let's list.", "action": "ls", "agent": "main", "message_type": "action",
     "tool_calls": [{"function": {"arguments": "{\"command\":\"ls\"}", "name": "bash"}, "id": "call_1", "type": "function"}]},
    {"role": "tool", "content": "a.py\n(Open file: n/a)", "agent": "main", "message_type": "observation", "tool_call_ids": ["call_1"]}
  ],
  "info": {"model_stats": {"tokens_sent": 0, "tokens_received": 0, "api_calls": 0}},
  "replay_config": "{}",
  "environment": "main"
}"#;

    #[test]
    fn v1_tool_messages_link_by_their_tool_call_ids_list() {
        let t = read(V1);
        let c = &t.conversations[0];
        assert_eq!((c.id.as_str(), c.requests(), c.tool_results()), ("main", 1, 1));
        assert!(matches!(&c.items[1], Item::User { text, meta: false, .. } if text == "issue"));
        match (&c.items[4], &c.items[5]) {
            (Item::ToolCall { call_id, name, arguments }, Item::ToolResult(r)) => {
                assert_eq!((call_id.as_str(), name.as_str()), ("call_1", "bash"));
                assert_eq!(arguments, "{\"command\":\"ls\"}");
                assert_eq!((r.call_id.as_str(), r.name.as_deref()), ("call_1", Some("bash")));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c.recorded_total, None, "zeros mean not recorded");
    }

    #[test]
    fn steps_missing_from_history_are_appended_from_the_trajectory() {
        let two_steps = V1.replacen(
            r#""messages": []}],"#,
            r#""messages": []}, {"action": "submit", "observation": "diff", "response": "All done.", "thought": "All done."}],"#,
            1,
        );
        let t = read(&two_steps);
        let c = &t.conversations[0];
        assert_eq!((c.requests(), c.tool_results()), (2, 2));
        let tail: Vec<&Item> = c.items.iter().rev().take(4).rev().collect();
        match tail.as_slice() {
            [
                Item::Request(_),
                Item::Assistant { text },
                Item::ToolCall { call_id, name, .. },
                Item::ToolResult(r),
            ] => {
                assert_eq!(text, "All done.");
                assert_eq!((call_id.as_str(), name.as_str()), ("step-2", "submit"));
                assert_eq!((r.call_id.as_str(), r.output.full_text().as_ref()), ("step-2", "diff"));
            }
            other => panic!("{other:?}"),
        }
        // A trajectory that does not line up with the history adds nothing.
        let misaligned = two_steps.replacen(r#"{"action": "ls""#, r#"{"action": "pwd""#, 1);
        assert_eq!(read(&misaligned).conversations[0].requests(), 1);
    }

    #[test]
    fn a_format_error_after_an_actionless_reply_is_meta_user_text() {
        let t = read(
            r#"{"trajectory": [], "history": [
            {"role": "user", "content": "issue", "agent": "main"},
            {"role": "assistant", "content": "I think...", "agent": "main"},
            {"role": "user", "content": "Your output was not formatted correctly.", "agent": "main"}]}"#,
        );
        let c = &t.conversations[0];
        assert_eq!((c.requests(), c.tool_results()), (1, 0));
        assert!(matches!(&c.items[3], Item::User { meta: true, .. }));
    }

    #[test]
    fn errors_name_the_json_path() {
        let e = SweAgent.read(&mut r#"{"trajectory": []}"#.as_bytes(), Path::new("t.traj")).unwrap_err();
        assert!(e.to_string().starts_with("t.traj: no `history` array"), "{e}");
        let e = SweAgent
            .read(&mut r#"{"history": [{"content": "x"}]}"#.as_bytes(), Path::new("t.traj"))
            .unwrap_err();
        assert_eq!(e.to_string(), "t.traj: history[0]: expected a message object with a string `role`");
    }

    #[test]
    fn detects_both_layouts_and_nothing_else() {
        for doc in [V0, V1] {
            with_head(Path::new("x.traj"), doc.as_bytes(), true, |h| assert!(SweAgent.detect(h)));
        }
        // Cut off after the first step, as a large file's head is.
        with_head(Path::new("x.traj"), &V1.as_bytes()[..120], false, |h| assert!(SweAgent.detect(h)));
        for (what, text) in FOREIGN {
            with_head(Path::new("x"), text.as_bytes(), true, |h| assert!(!SweAgent.detect(h), "{what}"));
        }
    }
}
