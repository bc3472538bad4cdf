//! The user and assistant messages of the context one by one ([`MessageSizes`]), kept as items
//! arrive for a policy that asks for them ([`crate::policy::Capabilities::message_sizes`]): a push per
//! message and per call, a sum per text, and at each human turn a subtraction per turn-scoped
//! text it drops. The same messages as the engine's counts ([`crate::policy::View::messages`]):
//! each user text and compaction summary is one, each model response with text, reasoning or a
//! call is one assistant message.

use crate::measure::{Category, MeasuredConversation, MeasuredItem, MessageTexts};
use crate::policy::langchain::call_repr_chars;
use crate::policy::{CallText, Message, MessageSizes, Role};
use crate::tokens::TextSize;

impl<'a> super::Engine<'a> {
    /// Keeps the messages one by one for the view, from the start of the replay of
    /// `conversation`; gives each of its tool calls' [`CallText::repr_chars`], in order.
    pub(in crate::replay) fn track_messages(&mut self, conversation: &'a MeasuredConversation) -> &'a [u64] {
        let texts = message_texts(conversation);
        let mut tracker = Tracker::default();
        tracker.sizes.calls.reserve(texts.calls.len());
        tracker.sizes.messages.reserve(texts.messages);
        tracker.sizes.results = &texts.results;
        self.tracker = Some(tracker);
        &texts.calls
    }

    /// Passes the tracker to `f`, when the policy reads the messages.
    pub(super) fn tracked(&mut self, f: impl FnOnce(&mut Tracker<'a>)) {
        if let Some(t) = &mut self.tracker {
            f(t);
        }
    }
}

/// Each tool call's [`CallText::repr_chars`] and each tool result's [`MessageSizes::results`],
/// in order, and how many messages a context can hold: worked out on the first replay of
/// `conversation` that keeps the messages and kept with it, so a sweep's other replays of it
/// (other policies, thresholds and parameters) read them.
fn message_texts(conversation: &MeasuredConversation) -> &MessageTexts {
    conversation.message_texts().get_or_init(|| {
        let mut texts =
            MessageTexts { calls: Vec::with_capacity(conversation.tool_calls()), ..Default::default() };
        texts.results.reserve(conversation.result_calls().len());
        // One assistant message per response (a request closes one, and one may follow the last
        // request), one user message per user text or summary, and the summary of a compaction
        // the replay makes.
        let mut messages = 2;
        for item in &conversation.items {
            match item {
                MeasuredItem::ToolCall { call_id, name, arguments, .. } => {
                    texts.calls.push(call_repr_chars(call_id, name, arguments));
                }
                MeasuredItem::ToolResult(_, r) => {
                    let tool = r.name.as_deref().unwrap_or("");
                    texts.results.push(r.call_id.chars().count() as u64 + tool.chars().count() as u64);
                }
                MeasuredItem::Text { category, .. } => messages += usize::from(user_message(*category)),
                MeasuredItem::Compaction { .. } | MeasuredItem::Request { .. } => messages += 1,
                MeasuredItem::Cleared { .. } => {}
            }
        }
        texts.messages = messages;
        texts
    })
}

/// Whether a text of `category` is a user message of its own ([`Tracker::text`]).
fn user_message(category: Category) -> bool {
    !matches!(
        category,
        Category::System
            | Category::Unrecorded
            | Category::Framing
            | Category::Images
            | Category::Assistant
            | Category::Thinking
            | Category::HiddenReasoning
            | Category::ServerSide
    )
}

/// The messages of the current context and the state of the response being read.
#[derive(Debug, Clone, Default)]
pub(super) struct Tracker<'a> {
    /// What the view shows.
    pub(super) sizes: MessageSizes<'a>,
    /// The current response's assistant message, once opened.
    open: Option<usize>,
    /// Turn-scoped texts in assistant messages: (message, size), dropped when a turn starts.
    turn_scoped: Vec<(usize, TextSize)>,
    /// Each thinking text's assistant message and size, by ordinal, where the log's clearings
    /// clear thinking ([`Tracker::cleared_thinking`]).
    thinking: Vec<(usize, TextSize)>,
}

impl<'a> Tracker<'a> {
    /// A text item of `category` (what the engine counts as a message or part of one), which
    /// may start a human turn.
    pub(super) fn text(&mut self, category: Category, size: TextSize, turn_start: bool, turn_scoped: bool) {
        if turn_start {
            self.drop_turn_scoped();
        }
        if user_message(category) {
            self.user(size);
        } else if matches!(
            category,
            Category::Assistant | Category::Thinking | Category::HiddenReasoning | Category::ServerSide
        ) {
            let m = self.open();
            self.sizes.messages[m].size += size;
            if turn_scoped {
                self.turn_scoped.push((m, size));
            }
        }
    }

    /// A user message (a user text or a compaction summary).
    pub(super) fn user(&mut self, size: TextSize) {
        let at = self.sizes.calls.len();
        self.sizes.messages.push(Message { role: Role::User, size, calls: at..at });
    }

    /// A tool call of the current response.
    pub(super) fn tool_call(&mut self, call: CallText<'a>) {
        let m = self.open();
        self.sizes.calls.push(call);
        self.sizes.messages[m].calls.end = self.sizes.calls.len();
    }

    /// The current response's assistant message, opened if needed.
    fn open(&mut self) -> usize {
        *self.open.get_or_insert_with(|| {
            let at = self.sizes.calls.len();
            self.sizes.messages.push(Message {
                role: Role::Assistant,
                size: TextSize::default(),
                calls: at..at,
            });
            self.sizes.messages.len() - 1
        })
    }

    /// A thinking text of the current response was added (its ordinal is the count so far).
    pub(super) fn thinking_text(&mut self, size: TextSize) {
        let m = self.open();
        self.thinking.push((m, size));
    }

    /// The thinking text of ordinal `i` leaves its message (the engine checked it is still in
    /// the context).
    pub(super) fn cleared_thinking(&mut self, i: usize) {
        let Some(&(m, size)) = self.thinking.get(i) else { return };
        if let Some(message) = self.sizes.messages.get_mut(m) {
            message.size -= size;
            self.sizes.unchanged = self.sizes.unchanged.min(m);
        }
    }

    /// A human turn starts: the turn-scoped texts of the turns before leave their messages.
    fn drop_turn_scoped(&mut self) {
        for (m, size) in std::mem::take(&mut self.turn_scoped) {
            self.sizes.messages[m].size -= size;
            self.sizes.unchanged = self.sizes.unchanged.min(m);
        }
    }

    /// A request was made: the next items belong to a new response, and the messages so far are
    /// what it saw.
    pub(super) fn end_request(&mut self) {
        self.open = None;
        self.sizes.unchanged = self.sizes.messages.len();
    }

    /// The context was replaced: no message is left.
    pub(super) fn compaction(&mut self) {
        self.sizes.messages.clear();
        self.sizes.calls.clear();
        self.sizes.unchanged = 0;
        self.open = None;
        self.turn_scoped.clear();
    }
}
