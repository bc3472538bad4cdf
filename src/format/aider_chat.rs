//! `aider-chat`: aider's chat history, `.aider.chat.history.md`, which aider writes beside the
//! repository on every run (`aider/io.py`, `append_chat_history`, in Aider-AI/aider). It is what
//! the terminal showed, not what was sent: the system prompt, the repo map and the files in the
//! chat, most of each prompt, are missing, and every file gets a warning saying so. When
//! `.aider.llm.history` is beside it, a directory walk reads that instead ([`super::aider`]).
//!
//! - `# aider chat started at <time>` starts a run: a conversation of its own (`main`, `main-2`, …).
//! - `#### <text>` lines are what the user typed (consecutive ones are one message).
//! - `> <text>` lines are aider's own output, not sent to the model; among them
//!   `> Tokens: <N> sent, …` reports one model call. Each such line is one request, placed before
//!   the reply it produced, with `N` (plus `cache write` and `cache hit` when printed) as its
//!   recorded prompt size. aider prints `N` rounded above 1,000 (`2.3k`): such sizes are read as
//!   printed (2,300) and the warning counts them.
//! - Every other line after a user message is the assistant's reply (a reply with no `Tokens:`
//!   line still gets a request, without a recorded size).
//!
//! Detection: a first non-blank line starting with `# aider chat started at`.

use std::io::BufRead;
use std::path::Path;

use super::look_alike::LookAlike;
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Request, Trace, Usage};

/// aider's chat history (markdown).
pub struct AiderChat;

/// The chat history's file name.
pub const CHAT_FILE: &str = ".aider.chat.history.md";
/// The line that starts a run.
const STARTED: &str = "# aider chat started at";

impl Format for AiderChat {
    fn look_alike(&self) -> Option<LookAlike> {
        // `> Tokens: 2.3k sent, 150 received.`: aider's report of one request (`#### ` user
        // lines alone are Markdown headings anywhere).
        let line: fn(&str) -> bool = |l| {
            l.strip_prefix("> Tokens: ")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()) && r.contains(" sent"))
        };
        Some(LookAlike { line: Some(line), lines_are: "the chat history aider writes", ..LookAlike::NONE })
    }

    fn name(&self) -> &'static str {
        "aider-chat"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        head.text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.starts_with(STARTED))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let text = super::shared::read_text(input, path)?;
        Ok(read_chat(&text))
    }
}

/// What is being read: the run's items, the reply being written, and whether a request was
/// placed for it.
#[derive(Default)]
struct Run {
    items: Vec<Item>,
    user: Vec<String>,
    reply: Vec<String>,
    /// Index of the request placed before the current reply, if any.
    request: Option<usize>,
}

impl Run {
    fn end_user(&mut self) {
        if !self.user.is_empty() {
            self.end_reply();
            self.items.push(Item::User { text: self.user.join("\n"), meta: false, images: 0 });
            self.user.clear();
            self.request = None;
        }
    }

    fn end_reply(&mut self) {
        let text = self.reply.join("\n");
        self.reply.clear();
        if !text.trim().is_empty() {
            self.items.push(Item::Assistant { text: text.trim().to_owned() });
        }
    }

    /// A request before the reply that starts now (or the reply's next call).
    fn place_request(&mut self) -> usize {
        self.end_reply();
        self.items.push(Item::Request(Request::default()));
        self.request = Some(self.items.len() - 1);
        self.items.len() - 1
    }
}

/// The chat history's conversations.
pub fn read_chat(text: &str) -> Trace {
    let mut conversations = Vec::new();
    let mut run = Run::default();
    let (mut rounded, mut tokens_lines) = (0, 0);
    let finish = |run: &mut Run, conversations: &mut Vec<Conversation>| {
        run.end_user();
        run.end_reply();
        let items = std::mem::take(&mut run.items);
        if !items.is_empty() {
            let id = if conversations.is_empty() {
                "main".to_owned()
            } else {
                format!("main-{}", conversations.len() + 1)
            };
            conversations.push(Conversation { id, items, recorded_total: None });
        }
        run.request = None;
    };
    for line in text.lines() {
        if line.starts_with(STARTED) {
            finish(&mut run, &mut conversations);
        } else if let Some(typed) = line.strip_prefix("####") {
            run.end_reply();
            run.user.push(typed.strip_prefix(' ').unwrap_or(typed).to_owned());
        } else if let Some(said) = line.strip_prefix('>') {
            run.end_user();
            if let Some((size, was_rounded)) = tokens_sent(said.trim()) {
                tokens_lines += 1;
                rounded += usize::from(was_rounded);
                // The call this line reports: the request placed before the reply, else a new one.
                let at = match run.request.take() {
                    Some(at) => at,
                    None => run.place_request(),
                };
                run.end_reply();
                if let Item::Request(r) = &mut run.items[at] {
                    r.usage = Some(size);
                }
            }
        } else {
            run.end_user();
            let after_user = matches!(run.items.last(), Some(Item::User { .. }));
            if after_user && !line.trim().is_empty() {
                run.place_request();
            }
            if run.request.is_some() || !run.reply.is_empty() {
                run.reply.push(line.to_owned());
            }
        }
    }
    finish(&mut run, &mut conversations);
    let mut warning = "read from aider's chat history alone, which lacks the system prompt, the repo map and the \
                       files in the chat (most of each prompt): the replay is far smaller than what was sent; \
                       start aider with `--llm-history-file .aider.llm.history` to record them"
        .to_owned();
    if rounded > 0 {
        warning += &format!(
            "; {rounded} of {tokens_lines} `Tokens:` line(s) print the size rounded (`2.3k`), read as printed"
        );
    }
    Trace { format: AiderChat.name(), conversations, warnings: vec![warning] }
}

/// The recorded usage of a `Tokens: N sent, [W cache write, ][H cache hit, ]R received.` line,
/// and whether any count was rounded (`2.3k`).
fn tokens_sent(line: &str) -> Option<(Usage, bool)> {
    let rest = line.strip_prefix("Tokens: ")?;
    let mut usage = Usage::default();
    let mut rounded = false;
    let mut sent = None;
    for field in rest.split(", ") {
        let field = field.trim().trim_end_matches('.');
        let (number, what) = field.split_once(' ')?;
        let (n, was_rounded) = count(number)?;
        rounded |= was_rounded;
        match what.trim() {
            "sent" => sent = Some(n),
            "cache write" => usage.cache_write_tokens = Some(n),
            "cache hit" => usage.cache_read_tokens = Some(n),
            w if w.starts_with("received") => usage.output_tokens = Some(n),
            _ => {}
        }
        if what.trim().starts_with("received") {
            break;
        }
    }
    let sent = sent?;
    usage.input_tokens = sent + usage.cache_write_tokens.unwrap_or(0) + usage.cache_read_tokens.unwrap_or(0);
    Some((usage, rounded))
}

/// A count as aider prints it: `812`, `1,234`, `2.3k`, `12k`; whether it was rounded.
fn count(s: &str) -> Option<(u64, bool)> {
    if let Some(k) = s.strip_suffix('k') {
        let v: f64 = k.parse().ok()?;
        return ((0.0..1e12).contains(&v)).then(|| ((v * 1000.0).round() as u64, true));
    }
    s.replace(',', "").parse().ok().map(|n| (n, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAT: &str = "\n# aider chat started at 2025-01-31 11:21:30\n\n> /usr/bin/aider --model gpt-4o\n> Aider v0.72.1\n\n\
                        #### make parse ignore empty items\n\nI will filter them.\n\nparse.py\n```python\nreturn [x for x in s if x]\n```\n\n\
                        > Tokens: 2.3k sent, 150 received. Cost: $0.01 message, $0.01 session.  \n> Applied edit to parse.py  \n\n\
                        #### thanks\n\nYou're welcome.\n\n> Tokens: 2,512 sent, 1.0k cache hit, 8 received.\n\n\
                        # aider chat started at 2025-02-01 09:00:00\n\n#### hi\n\nHello.\n";

    #[test]
    fn each_tokens_line_is_a_request_before_its_reply_and_runs_are_conversations() {
        let t = read_chat(CHAT);
        let ids: Vec<&str> = t.conversations.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["main", "main-2"]);
        let sizes: Vec<Option<u64>> = t
            .conversations
            .iter()
            .flat_map(|c| &c.items)
            .filter_map(
                |i| if let Item::Request(r) = i { Some(r.usage.map(|u| u.input_tokens)) } else { None },
            )
            .collect();
        assert_eq!(sizes, [Some(2300), Some(3512), None]);
        let main = &t.conversations[0].items;
        assert!(matches!(&main[1], Item::Request(_)), "{main:?}");
        assert!(
            matches!(&main[2], Item::Assistant { text } if text.starts_with("I will filter them.")),
            "{main:?}"
        );
        assert!(t.warnings[0].contains("lacks the system prompt, the repo map"), "{:?}", t.warnings);
        assert!(
            t.warnings[0].contains("2 of 2 `Tokens:` line(s) print the size rounded"),
            "{:?}",
            t.warnings
        );
    }

    #[test]
    fn counts_read_as_aider_prints_them() {
        assert_eq!(count("1,234"), Some((1234, false)));
        assert_eq!(count("2.3k"), Some((2300, true)));
        assert_eq!(count("x"), None);
    }
}
