//! ctxbudget: replay recorded LLM-agent conversations to measure and tune their context-token budget.
//!
//! The pipeline flows one way:
//! traces on disk → [`format`](mod@format) (one module per recorded format, auto-detected) → the normalised
//! [`model`] → [`measure`] (record-time [`transform`]s, the seed's [`split`] and real token counts
//! from [`tokens`], each text once) → [`policy`] + [`replay`] (request by request, pure) →
//! [`result`] → [`export`]. [`calibrate`] adds what the logs do not hold (the overhead and the
//! provider's tokens per report token), fitted from the recorded usage.
//! [`input`] is the only place that touches the file system on the way in, [`export`] on the way out;
//! [`pipeline`] ties them together for the command line in `main.rs`. [`counts`] is the format of
//! the file that keeps exact counts between runs (`--count-cache`).
#![deny(missing_docs)]

pub mod analysis;
pub mod app;
pub mod calibrate;
pub mod chart;
pub mod cli;
pub mod config;
pub mod counts;
pub mod error;
pub mod export;
pub mod format;
pub mod input;
pub mod measure;
pub mod model;
pub mod pipeline;
pub mod policy;
pub mod replay;
pub mod report;
pub mod result;
pub mod split;
pub mod time;
pub mod tokens;
pub mod transform;
pub mod unseen;

/// `m` locked, also after a thread panicked while holding it: every mutex here guards sums, maps of
/// plain numbers or parts kept in order, which a panic elsewhere leaves whole.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
