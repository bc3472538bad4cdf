//! The chat messages of the context one by one, for a policy whose anchor counts each message on
//! its own (LangChain's `count_tokens_approximately` rounds per message and reads the tool calls'
//! texts). The replay keeps them only for a policy that asks ([`super::Capabilities::message_sizes`]),
//! so the other policies' replays do no more work: [`super::View::message_sizes`] is `None` for
//! them.
//!
//! Tool results are not among these messages: they are [`super::View::results`], one tool
//! message each. The system prompt, the `--overhead` that stands for it and the calibration's
//! framing are no message either. The list only grows between two requests of a context, but
//! for one change: when a human turn starts, the turn-scoped reasoning of the turns before leaves
//! the assistant messages that held it ([`MessageSizes::unchanged`] says from where a policy
//! that keeps per-message sums must look again). A compaction starts a new list.

use std::ops::Range;

use crate::tokens::TextSize;

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A user text, or a compaction summary (sent as user text).
    User,
    /// One model response: its text, reasoning and server-side content together, and its calls.
    Assistant,
}

/// One user or assistant message of the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// Its texts as sent now: the user text; the response's text, reasoning and server-side
    /// content (not its calls), without the turn-scoped reasoning already dropped.
    pub size: TextSize,
    /// Its tool calls, as indices into [`MessageSizes::calls`] (empty for a user message).
    pub calls: Range<usize>,
}

/// A tool call's texts as the trace records them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallText<'a> {
    /// The id that links it to its result.
    pub call_id: &'a str,
    /// The tool's name.
    pub name: &'a str,
    /// The arguments as sent (usually JSON text), before any policy clears them.
    pub arguments: &'a str,
    /// Chars of the call as LangChain holds it, `len(repr(tool_call))`
    /// ([`super::langchain::call_repr_chars`]): worked out once per conversation, on the first
    /// replay that keeps the messages, and kept with the measured conversation for the others.
    pub repr_chars: u64,
}

/// The user and assistant messages of the context, in order, with their tool calls.
#[derive(Debug, Clone, Default)]
pub struct MessageSizes<'a> {
    /// The messages, oldest first.
    pub messages: Vec<Message>,
    /// The tool calls of the context in order; each assistant message holds a run of them.
    pub calls: Vec<CallText<'a>>,
    /// Messages before this index are as the previous request of this context saw them; those
    /// from it on are new or changed (0 after a compaction).
    pub unchanged: usize,
    /// For each tool result of the conversation, by [`super::ResultState::index`], the chars of
    /// its call id and tool name (what a LangChain `ToolMessage` adds besides its content and
    /// role): counted once per conversation.
    pub results: &'a [u64],
}
