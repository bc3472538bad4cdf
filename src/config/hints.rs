//! Hints for the mistakes a newcomer makes on the command line: each usage error says what was
//! likely meant (`--policy` for a spec given to `--policies`, `keep-turns:n=3` for `keep-turns=3`,
//! the closest policy names), and a form that may be read otherwise than meant (`--tolerance
//! 0.05`) is a warning printed before the run. Pure: the messages are returned, never printed.

use std::path::Path;

use super::UsageError;
use crate::cli::{self, Cli};

/// The warning for a `--tolerance` written as a bare number below 1 (`0.05`): it is read as
/// 0.05%, and may have been meant as the fraction 0.05 (5%).
pub fn tolerance_notice(text: &str) -> Option<String> {
    percent_notice("--tolerance", text)
}

/// The warning for a percentage option `flag` (`--tolerance`, `--max-reuse`) written as a bare
/// number below 1 (`0.05`): a bare number is a percentage, so it is read as 0.05%, and may have
/// been meant as the fraction 0.05 (5%). `5%`, `5` and `0.05%` are read one way and say nothing.
pub fn percent_notice(flag: &str, text: &str) -> Option<String> {
    let t = text.trim();
    let v: f64 = t.parse().ok()?;
    // Rounded to nine decimals: 0.05 x 100 is 5.000000000000001 in binary floating point.
    let percent = (v * 100.0 * 1e9).round() / 1e9;
    (v > 0.0 && v < 1.0).then(|| {
        format!(
            "{flag} {t} is read as {t}% (a bare number is a percentage); for {percent}% write \
             `{flag} {percent}%`, to keep {t}% write `{flag} {t}%`"
        )
    })
}

/// Warnings about how the command line was written, printed before the run: a `--tolerance` or
/// `--max-reuse` that may be read otherwise than meant ([`percent_notice`]).
pub fn notices(cli: &Cli) -> Vec<String> {
    let percent = match &cli.command {
        cli::Command::Sweep(a) => Some(("--tolerance", &a.tolerance)),
        cli::Command::Report(a) => Some(("--tolerance", &a.tolerance)),
        cli::Command::Recommend(a) => Some(("--max-reuse", &a.max_reuse)),
        _ => None,
    };
    percent.and_then(|(flag, t)| percent_notice(flag, t)).into_iter().collect()
}

/// The usage error for a policy spec that does not parse, with what was likely meant: the
/// parameter syntax for `keep-turns=3` or `keep-turns:3` (`keep-turns:n=3`), the closest policy
/// names for a misspelt one.
pub(super) fn policy_error(spec: &str, e: crate::error::SpecError) -> UsageError {
    use crate::error::SpecError;
    let registry = crate::policy::registry();
    let spec = spec.trim();
    let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
    // `keep-turns=3` (no colon) or `keep-turns:3` (no key): the value of the kind's first parameter.
    let (name, value) = match name.split_once('=') {
        Some((name, value)) if rest.is_empty() => (name.trim(), Some(value.trim())),
        _ if !rest.is_empty() && !rest.contains('=') => (name.trim(), Some(rest.trim())),
        _ => (name.trim(), None),
    };
    let hint = match (registry.iter().find(|k| k.name == name), value, &e) {
        // `keep-turns:n` names a key without its value: the error says so, with no guess.
        (Some(kind), Some(value), SpecError::UnknownName { .. } | SpecError::Syntax { .. })
            if !kind.params.iter().any(|p| p.key == value) =>
        {
            match kind.params.first() {
                Some(p) => format!(
                    "; did you mean `{name}:{}={value}`? (parameters follow a colon, as key=value)",
                    p.key
                ),
                None => format!("; `{name}` takes no parameters"),
            }
        }
        (None, _, SpecError::UnknownName { .. }) => {
            let close = crate::spec::closest_names(name, registry.iter().map(|k| k.name), 3);
            match close.as_slice() {
                [] => String::new(),
                names => format!("; did you mean {}?", quoted_or(names)),
            }
        }
        _ => String::new(),
    };
    UsageError(format!("{e}{hint}"))
}

/// `` `a`, `b` or `c` ``.
fn quoted_or(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The hint for a `--policies FILE` that cannot be read: when no such file exists and FILE reads
/// as a policy spec (`keep-turns:n=3`, or a policy's name), `--policy` was likely meant.
pub(super) fn policies_file_hint(file: &Path) -> String {
    let text = file.to_string_lossy();
    let name = text.split(':').next().unwrap_or("");
    let spec_like =
        text.contains(':') || text.contains('=') || crate::policy::registry().iter().any(|k| k.name == name);
    if file.exists() || !spec_like {
        return String::new();
    }
    format!(
        "; --policies reads a TOML file of policies: for the policy `{text}`, did you mean `--policy {text}`?"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tolerance_below_one_is_named_with_the_percent_it_may_have_meant() {
        let notice = tolerance_notice("0.05").unwrap();
        assert!(notice.contains("read as 0.05%") && notice.contains("`--tolerance 5%`"), "{notice}");
        for clear in ["5%", "5", "1", "0", "0.05%", "lots"] {
            assert_eq!(tolerance_notice(clear), None, "{clear}");
        }
        let notice = percent_notice("--max-reuse", "0.25").unwrap();
        assert!(notice.contains("--max-reuse 0.25 is read as 0.25%"), "{notice}");
        assert!(notice.contains("`--max-reuse 25%`"), "{notice}");
    }

    #[test]
    fn a_policy_error_names_the_likely_spec() {
        let hint = |spec: &str| policy_error(spec, crate::policy::PolicySpec::parse(spec).unwrap_err()).0;
        assert!(hint("budget=40k").contains("did you mean `budget:max=40k`?"), "{}", hint("budget=40k"));
        assert!(hint("none:x").contains("`none` takes no parameters"), "{}", hint("none:x"));
        assert!(!hint("keep-turns:n").contains("did you mean"), "{}", hint("keep-turns:n"));
        assert!(hint("opencod").contains("did you mean `opencode`, "), "{}", hint("opencod"));
        assert!(!hint("zzzzzz").contains("did you mean"), "{}", hint("zzzzzz"));
    }

    #[test]
    fn only_a_missing_file_that_reads_as_a_spec_suggests_policy() {
        assert!(policies_file_hint(Path::new("keep-turns:n=3")).contains("`--policy keep-turns:n=3`"));
        assert!(policies_file_hint(Path::new("keep-results")).contains("`--policy keep-results`"));
        assert_eq!(policies_file_hint(Path::new("missing/policies.toml")), "");
    }
}
