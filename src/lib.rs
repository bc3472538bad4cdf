//! ctxbudget: replay recorded LLM-agent conversations to measure and tune their context-token budget.
//!
//! # As a library
//!
//! The crate root holds what a library user needs: the seed's [`ToolOutput`] and its split, the
//! trace model ([`Conversation`], [`Item`], [`Request`], [`ToolResult`]), the [`Policy`] trait with
//! what implementing one needs ([`View`], [`ResultState`], [`Edit`]), a replay builder
//! ([`Replayer`]) and the analyses' entry points ([`compare`], [`sweep`] and their results).
//! `default-features = false` leaves out the charts and the HTML report (the `charts` feature).
//!
//! ```
//! use ctxbudget::{Conversation, Edit, Item, Policy, Replayer, Request, ToolOutput, ToolResult, View};
//!
//! // The seed's automatic split of a tool output.
//! let out: ToolOutput = String::from("bash: cargo test — exit 0").into();
//! assert_eq!((out.summary.as_str(), out.content), ("bash: cargo test — exit 0", None));
//!
//! // A policy: before each request, prune the content of every result seen by 2 earlier requests.
//! struct ClearOld;
//! impl Policy for ClearOld {
//!     fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
//!         for r in view.results.iter().filter(|r| view.request - r.first_request >= 2) {
//!             if r.present().is_some() {
//!                 edits.push(Edit::Prune(r.index));
//!             }
//!         }
//!     }
//! }
//!
//! // A conversation: three large reads, one request after each.
//! let mut c = Conversation::new("main");
//! for k in 0..3 {
//!     let call_id = format!("c{k}");
//!     c.items.push(Item::ToolCall { call_id: call_id.clone(), name: "read".into(), arguments: "{}".into() });
//!     let output = ctxbudget::model::Output::Raw { output: "some line\n".repeat(100) };
//!     c.items.push(Item::ToolResult(ToolResult { call_id, name: None, output, is_error: false, images: 0 }));
//!     c.items.push(Item::Request(Request::default()));
//! }
//! let trace = ctxbudget::model::Trace { format: "native", conversations: vec![c], warnings: vec![] };
//!
//! let runs = Replayer::new()
//!     .overhead(0)
//!     .policy(ctxbudget::PolicySpec::parse("none")?)
//!     .policy(ctxbudget::policy_fn("clear-old", || Box::new(ClearOld)))
//!     .replay("example", &trace);
//! let (none, clear_old) = (&runs[0].summary, &runs[1].summary);
//! assert!(clear_old.total_input_tokens < none.total_input_tokens);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The pipeline
//!
//! The pipeline flows one way:
//! traces on disk → [`format`](mod@format) (one module per recorded format, auto-detected) → the normalised
//! [`model`] → [`measure`] (record-time [`transform`]s, the seed's [`split`] and real token counts
//! from [`tokens`], each text once) → [`policy`] + [`replay`] (request by request, pure) →
//! [`result`] → [`export`]. [`calibrate`] adds what the logs do not hold (the overhead and the
//! provider's tokens per report token), fitted from the recorded usage.
//! [`input`] is the only place that touches the file system on the way in, [`export`] on the way out;
//! [`pipeline`] ties them together and [`pass`] walks a corpus with one memory policy. [`counts`] is
//! the format of the file that keeps exact counts between runs (`--count-cache`).
//!
//! The library's documented surface is the root's re-exports and the modules this paragraph names;
//! the others stay `pub` for the binary, the integration tests and the benchmarks, and the binary's
//! own (`cli`, `config`, and `cmd`, which runs each command for `main.rs`) are hidden from these
//! docs.
#![deny(missing_docs)]

pub mod analysis;
pub mod calibrate;
#[cfg(feature = "charts")]
pub mod chart;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cmd;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod config;
pub mod counts;
pub mod error;
pub mod export;
mod facade;
pub mod format;
pub mod harness;
pub mod input;
pub mod measure;
pub mod model;
pub mod pass;
pub mod pipeline;
pub mod policy;
pub mod replay;
#[cfg(feature = "charts")]
pub mod report;
pub mod result;
pub mod reuse_index;
pub mod spec;
pub mod split;
pub mod time;
pub mod tokens;
pub mod transform;
pub mod unseen;

pub use analysis::compare::{CompareSettings, Comparison, PolicySource, compare, compare_sources};
pub use analysis::cost::CacheModel;
pub use analysis::sweep::{Sweep, SweepSettings, sweep, sweep_with};
pub use facade::{PolicyFn, Replayer, policy_fn};
pub use harness::HarnessCompaction;
pub use input::load;
pub use measure::MeasuredConversation;
pub use model::{Conversation, Item, Output, Request, Tokens, ToolResult, Trace};
pub use policy::{Capabilities, Content, Edit, On, Policy, PolicyReport, PolicySpec, ResultState, View};
pub use result::{CompactionTotals, RequestRow, Run, RunSummary};
pub use split::{SUMMARY_THRESHOLD, ToolOutput};
pub use tokens::{DecideWith, Measure, Meter, Tokenizer};

/// `m` locked, also after a thread panicked while holding it: every mutex here guards sums, maps of
/// plain numbers or parts kept in order, which a panic elsewhere leaves whole.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
