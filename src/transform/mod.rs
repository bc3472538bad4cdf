//! Record-time transforms: changes a tool or harness makes to an output *before* it enters the
//! history and is split (truncation, spilling a huge output to a file and keeping a sketch).
//!
//! They are combinable with any prune policy and applied once per output when a conversation is
//! measured. Pure functions of the output text: no I/O.

/// A change applied to every raw tool output before the split.
pub trait Transform: Send + Sync {
    /// The spec that names this transform and its parameters.
    fn spec(&self) -> String;
    /// The transformed output, or `None` when this output is left as it is.
    fn apply(&self, output: &str, tool: Option<&str>) -> Option<String>;
}
