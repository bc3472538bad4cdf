//! `aider`: aider's LLM log, `.aider.llm.history` (written beside the repository when aider runs
//! with `--llm-history-file`), which holds every request as it was sent.
//!
//! The log is text. Each request starts with a line `TO LLM <local time>`; its messages follow,
//! separated by `-------` lines, each line of a message prefixed by its role (`SYSTEM `, `USER `,
//! `ASSISTANT `). The reply follows a line `LLM RESPONSE <local time>`, its lines prefixed
//! `ASSISTANT `. aider rebuilds the whole prompt for every request (system prompt, repo map, the
//! files in the chat, the chat so far), so each request is read as the full history it sent and
//! the requests are chained as `wire::Chains` chains VCR cassettes: a request whose
//! history continues the previous one's extends its conversation; one that does not (the repo map
//! or a file changed, the chat was cleared) starts the next (`main`, `main-2`, …).
//!
//! aider has no tool calls: the files and the repo map it sends are user text, so there is no tool
//! result for a policy to prune. **Not in the log:** usage (aider prints `Tokens: N sent` in the
//! chat history, `.aider.chat.history.md`, rounded to thousands in recent versions) and the
//! times' zone (local time), so requests carry no time.
//!
//! The chat history `.aider.chat.history.md` is read by [`aider_chat`](super::aider_chat), with
//! a warning that it lacks the system prompt, the repo map and the file contents; a directory
//! walk reads it only when this log is not beside it.
//!
//! The lines of the message being read are gathered as slices of the text in one list reused for
//! every message, so a message costs one allocation (its text), not one per line.

use std::io::BufRead;
use std::path::Path;

use super::shared::read_text;
use super::wire::Chains;
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Item, Request, Trace};

/// The name aider gives the log (a hidden file, which a directory walk reads all the same).
pub const LOG_FILE: &str = ".aider.llm.history";
/// The line that starts a request.
const TO_LLM: &str = "TO LLM ";
/// The line that starts a reply.
const RESPONSE: &str = "LLM RESPONSE ";

/// aider's `.aider.llm.history`.
pub struct Aider;

impl Format for Aider {
    fn name(&self) -> &'static str {
        "aider"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        head.text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.starts_with(TO_LLM))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let text = read_text(input, path)?;
        let mut chains = Chains::default();
        let mut request: Option<Vec<Item>> = None;
        let mut reply: Option<Vec<Item>> = None;
        let mut message = Message::default();
        for (n, line) in text.lines().enumerate() {
            if line.starts_with(TO_LLM) {
                message.end(reply.as_mut().or(request.as_mut()));
                finish(&mut chains, &mut request, &mut reply);
                request = Some(Vec::new());
            } else if line.starts_with(RESPONSE) {
                message.end(request.as_mut());
                reply = Some(Vec::new());
            } else if line == "-------" {
                message.end(reply.as_mut().or(request.as_mut()));
            } else if let Some((role, rest)) = role_of(line) {
                if request.is_none() {
                    return Err(TraceError::line(path, n + 1, "a message before the first `TO LLM` line"));
                }
                if message.role.is_some_and(|r| r != role) {
                    message.end(reply.as_mut().or(request.as_mut()));
                }
                message.role = Some(role);
                message.lines.push(rest);
            } else if !line.trim().is_empty() {
                return Err(TraceError::line(
                    path,
                    n + 1,
                    "expected a line starting with SYSTEM, USER or ASSISTANT (an aider LLM log)",
                ));
            }
        }
        message.end(reply.as_mut().or(request.as_mut()));
        finish(&mut chains, &mut request, &mut reply);
        let (conversations, warnings) = chains.finish(|_, id| id.to_owned());
        Ok(Trace { format: self.name(), conversations, warnings })
    }
}

/// The role of a message line and the text after its prefix.
fn role_of(line: &str) -> Option<(&'static str, &str)> {
    ["SYSTEM", "USER", "ASSISTANT"].into_iter().find_map(|role| {
        let rest = line.strip_prefix(role)?;
        if rest.is_empty() { Some((role, "")) } else { rest.strip_prefix(' ').map(|r| (role, r)) }
    })
}

/// The message being read: its role and its lines (without the role), in a list reused for
/// every message.
#[derive(Default)]
struct Message<'a> {
    role: Option<&'static str>,
    lines: Vec<&'a str>,
}

impl Message<'_> {
    /// Appends the message to `to` (when there is one and a request to take it) and empties it.
    fn end(&mut self, to: Option<&mut Vec<Item>>) {
        let role = self.role.take();
        if let (Some(role), Some(to)) = (role, to) {
            let text = self.lines.join("\n");
            to.push(match role {
                "SYSTEM" => Item::System { text },
                "USER" => Item::User { text, meta: false, images: 0 },
                _ => Item::Assistant { text },
            });
        }
        self.lines.clear();
    }
}

/// Hands a request and its reply to the chains.
fn finish(chains: &mut Chains, request: &mut Option<Vec<Item>>, reply: &mut Option<Vec<Item>>) {
    if let Some(history) = request.take() {
        chains.push("main", history, Request::default(), reply.take().unwrap_or_default(), Vec::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shared::testing::{FOREIGN, kinds};
    use crate::format::with_head;

    const LOG: &str = "TO LLM 2025-01-31T11:21:36\n-------\nSYSTEM Act as an expert.\nSYSTEM \n-------\nUSER hi\n\
                       LLM RESPONSE 2025-01-31T11:21:41\nASSISTANT hello\nASSISTANT \nASSISTANT bye\n\
                       TO LLM 2025-01-31T11:22:00\n-------\nSYSTEM Act as an expert.\nSYSTEM \n-------\nUSER hi\n\
                       -------\nASSISTANT hello\nASSISTANT \nASSISTANT bye\n-------\nUSER more\n\
                       LLM RESPONSE 2025-01-31T11:22:05\nASSISTANT done\n\
                       TO LLM 2025-01-31T11:30:00\n-------\nSYSTEM Another prompt.\n-------\nUSER new\n";

    #[test]
    fn requests_that_continue_a_history_chain_and_others_start_a_conversation() {
        let t = Aider.read(&mut LOG.as_bytes(), Path::new(".aider.llm.history")).unwrap();
        let ids: Vec<&str> = t.conversations.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["main", "main-2"]);
        let c = &t.conversations[0];
        assert_eq!(
            kinds(&c.items),
            ["system", "user", "request", "assistant", "user", "request", "assistant"]
        );
        assert_eq!(c.items[0], Item::System { text: "Act as an expert.\n".into() });
        assert_eq!(c.items[3], Item::Assistant { text: "hello\n\nbye".into() });
        assert_eq!(kinds(&t.conversations[1].items), ["system", "user", "request"]);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn a_line_without_a_role_is_an_error_naming_it() {
        let e = Aider.read(&mut "TO LLM t\n-------\nUSER a\nnope\n".as_bytes(), Path::new("h")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "h:4: expected a line starting with SYSTEM, USER or ASSISTANT (an aider LLM log)"
        );
    }

    #[test]
    fn detects_the_log_by_its_first_line() {
        let detects = |text: &str| with_head(Path::new("h"), text.as_bytes(), true, |h| Aider.detect(h));
        assert!(detects(LOG));
        assert!(!detects("# aider chat started at 2025-01-31 11:21:30\n"));
        for (what, text) in FOREIGN {
            assert!(!detects(text), "{what}");
        }
    }
}
