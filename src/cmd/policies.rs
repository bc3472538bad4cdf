//! `ctxbudget policies`: every policy and record-time transform with its parameters.

use std::process::ExitCode;

use anyhow::Result;

use super::{EXIT_OK, stdout};
use crate::policy::registry;

/// Prints [`policies_text`].
pub(super) fn run() -> Result<ExitCode> {
    stdout(&policies_text())?;
    Ok(ExitCode::from(EXIT_OK))
}

/// The text of `ctxbudget policies`: every policy, then every record-time transform, each with
/// its parameters (`key=default  meaning`) and source.
pub fn policies_text() -> String {
    let mut out = String::from(
        "Policies (--policy name:key=value,...; --policies FILE). Each decides with its anchor's own\n\
         estimate unless --decide-with says otherwise.\n\n",
    );
    let transforms = crate::transform::registry().iter().map(|k| (k.name, k.about, k.source, k.params));
    let policies = registry().iter().map(|k| (k.name, k.about, k.source, k.params));
    for (name, about, source, params) in policies {
        push_entry(&mut out, name, about, source, params);
    }
    out.push_str("Record-time transforms (--transform name[:key=value,...], applied before the split).\n\n");
    for (name, about, source, params) in transforms {
        push_entry(&mut out, name, about, source, params);
    }
    out
}

fn push_entry(out: &mut String, name: &str, about: &str, source: &str, params: &[crate::policy::Param]) {
    out.push_str(&format!("{name}\n    {about}\n    source: {source}\n"));
    for p in params {
        let default = if p.default.is_empty() { "\"\"" } else { p.default };
        out.push_str(&format!("    {}={}  {}\n", p.key, default, p.about));
    }
    out.push('\n');
}
