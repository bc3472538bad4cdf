//! Test helpers shared by the analyses: a counter of one token per byte (so every expected number can
//! be checked by hand), item builders and the small conversations the tests replay.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::measure::{MeasureOptions, MeasuredConversation};
use crate::model::{Conversation, Item, Output, Request, Tokens, ToolResult};
use crate::time::parse_rfc3339;
use crate::tokens::{Counter, Meter, Tokenizer};

/// One token per byte; counts its calls.
pub struct Bytes(pub Arc<AtomicUsize>);

impl Counter for Bytes {
    fn tokenizer(&self) -> Tokenizer {
        Tokenizer::O200k
    }
    fn count(&self, text: &str) -> Tokens {
        self.0.fetch_add(1, Ordering::SeqCst);
        text.len() as Tokens
    }
}

/// A meter of one token per byte, reporting and deciding alike, and its call counter.
pub fn meter() -> (Meter, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    (Meter::with_counters(Box::new(Bytes(calls.clone())), Box::new(Bytes(calls.clone()))), calls)
}

/// A human user message.
pub fn user(text: &str) -> Item {
    Item::User { text: text.into(), meta: false, images: 0 }
}

/// A request boundary, optionally timestamped (RFC 3339).
pub fn request(at: Option<&str>) -> Item {
    Item::Request(Request { timestamp: at.and_then(parse_rfc3339), ..Default::default() })
}

/// A raw tool result.
pub fn result(call_id: &str, tool: &str, output: String) -> Item {
    Item::ToolResult(ToolResult {
        call_id: call_id.into(),
        name: Some(tool.into()),
        output: Output::Raw { output },
        is_error: false,
        images: 0,
    })
}

/// Measures `items` as conversation `main`.
pub fn measured(items: Vec<Item>, meter: &Meter) -> MeasuredConversation {
    let conv = Conversation { id: "main".into(), items, recorded_total: None };
    MeasuredConversation::new(&conv, meter, &MeasureOptions { reuse: true, ..MeasureOptions::default() })
}

/// The cache trap: "hi" (2) and a 100-byte `read` result (summary 93 + content 100 at threshold
/// 16), request 0; a 1,000-byte user message, request 1; requests 2 and 3 with nothing new.
/// Pruning the result after request 1 frees 100 tokens and forces the cached message to be written
/// again.
pub fn cache_trap(times: [Option<&str>; 4]) -> Vec<Item> {
    vec![
        user("hi"),
        result("a", "read", "x".repeat(100)),
        request(times[0]),
        user(&"y".repeat(1000)),
        request(times[1]),
        request(times[2]),
        request(times[3]),
    ]
}
