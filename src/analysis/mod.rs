//! Analyses over replays: the threshold sweep, the policy comparison, the cache-aware cost model,
//! the calibration of token estimates against real counts, and the reconciliation of replayed
//! contexts with the usage providers recorded.
//!
//! Each analysis takes conversations that were measured once ([`crate::measure`]) and replays them
//! as often as it needs (replays never recount a text), returning plain serde structs for the
//! exporters, charts and the HTML report. Pure: nothing here prints, reads or writes files.

pub mod calibration;
pub mod compare;
pub mod cost;
pub mod prices;
pub mod recommend;
pub mod reconcile;
pub mod reuse;
pub mod summarization;
pub mod sweep;
#[cfg(test)]
mod testing;
