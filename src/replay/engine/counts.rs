//! What the replay's context holds, counted as the policies' [`crate::policy::View`] documents
//! them: chat messages, OpenHands-style events and assistant messages, and the state of the
//! response being read. Pure: no I/O.

/// Message, event and assistant-message counts of the current context, and the state of the
/// response being read (the items between two request boundaries).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counts {
    pub(super) messages: usize,
    pub(super) events: usize,
    pub(super) assistant_messages: usize,
    /// The current response already has its assistant message.
    response_message: bool,
    /// Tool calls in the current response.
    response_calls: usize,
}

impl Counts {
    /// A user text, or a compaction summary (sent as user text).
    pub(super) fn user(&mut self) {
        self.messages += 1;
        self.events += 1;
    }

    /// Assistant text or reasoning: part of the response's one assistant message, and its event
    /// unless a tool call already made one.
    pub(super) fn assistant_text(&mut self) {
        self.open_response();
    }

    /// A tool call: an action event, which the response's text (if any came first) is the thought of.
    pub(super) fn tool_call(&mut self) {
        if !self.open_response() && self.response_calls > 0 {
            self.events += 1;
        }
        self.response_calls += 1;
    }

    /// Starts the response's assistant message and event if not done; returns whether it did.
    fn open_response(&mut self) -> bool {
        if self.response_message {
            return false;
        }
        self.response_message = true;
        self.messages += 1;
        self.events += 1;
        self.assistant_messages += 1;
        true
    }

    /// A tool result: one message (a tool message) and one observation event.
    pub(super) fn tool_result(&mut self) {
        self.messages += 1;
        self.events += 1;
    }

    /// A request boundary: the next items belong to a new response.
    pub(super) fn request(&mut self) {
        self.response_message = false;
        self.response_calls = 0;
    }
}
