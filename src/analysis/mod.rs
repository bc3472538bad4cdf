//! Analyses over replayed conversations: pure computations on the measured model and replay
//! results, returning documented serde structs for the exporters. No I/O, no printing.

pub mod reconcile;
