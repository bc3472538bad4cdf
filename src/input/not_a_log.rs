//! Which files a directory walk passes over as no agent log: by name (documentation, subagent
//! metadata, a Cline task's companion files, OpenCode's storage records), by extension (source,
//! build files, images: [`NOT_LOG_EXTENSIONS`]) and by content ([`not_a_log`]: empty, binary, or
//! no format recognises its first bytes, the same decision [`super::load`] makes), and the one line
//! per folder that counts them ([`not_logs_line`]).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::format::{self, HEAD_BYTES};

/// Names of files a directory walk passes over: documentation, Claude Code subagent metadata, the
/// files of a Cline task folder read with its history (or not sessions at all), when the history is
/// beside them, and the records of an OpenCode storage folder but its sessions (read through them).
pub(super) fn is_obviously_not_a_trace(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".md")
        || name.ends_with(".meta.json")
        || (format::cline::COMPANION_FILES.contains(&name)
            && path.with_file_name(format::cline::HISTORY_FILE).is_file())
        || format::opencode::is_storage_record(path)
}

/// Extensions of files a directory walk passes over as no agent log: source code, build files,
/// styles, images, fonts, binaries and test snapshots (a log is JSON, JSON Lines, YAML or text:
/// `.json`, `.jsonl`, `.traj`, `.yaml`, `.txt`, `.log`, aider's `.history`, or no extension).
/// Walking a project folder would otherwise try every source file as a trace, each a warning.
/// They are counted in one line per folder named ([`super::discover_following`]); a file named
/// explicitly is read whatever its name.
pub const NOT_LOG_EXTENSIONS: &[&str] = &[
    "rs", "py", "pyc", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "c", "h", "cc", "cpp", "hpp", "java",
    "kt", "rb", "php", "cs", "swift", "scala", "sh", "bash", "zsh", "toml", "lock", "ini", "cfg", "css",
    "scss", "html", "htm", "svg", "png", "jpg", "jpeg", "gif", "webp", "ico", "pdf", "wasm", "so", "o", "a",
    "dll", "exe", "rlib", "woff2", "ttf", "snap",
];

/// The extension of `path` when it marks a file that is no agent log ([`NOT_LOG_EXTENSIONS`]),
/// compared case-insensitively.
pub(super) fn not_a_log_extension(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    NOT_LOG_EXTENSIONS.contains(&ext.as_str()).then_some(ext)
}

/// How many of the files passed over by their content [`not_logs_line`] names.
const NAMED_NOT_LOGS: usize = 3;

/// The line naming the files of folder `dir` passed over: by extension (how many, and of which)
/// and by content (`by_content`: how many, and the first few, each with why, named from `dir`).
pub(super) fn not_logs_line(
    dir: &Path,
    by_extension: &std::collections::BTreeMap<String, usize>,
    by_content: &[(PathBuf, TraceError)],
) -> Option<String> {
    let extension: usize = by_extension.values().sum();
    let total = extension + by_content.len();
    if total == 0 {
        return None;
    }
    let mut counts: Vec<(&String, &usize)> = by_extension.iter().collect();
    counts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let listed: Vec<String> = counts.iter().map(|(ext, n)| format!(".{ext} {n}")).collect();
    let mut why = Vec::new();
    if extension > 0 {
        why.push(format!("by their extension ({})", listed.join(", ")));
    }
    if !by_content.is_empty() {
        let named: Vec<String> = by_content
            .iter()
            .take(NAMED_NOT_LOGS)
            .map(|(path, e)| {
                format!("{}: {}", path.strip_prefix(dir).unwrap_or(path).display(), not_a_log_why(e))
            })
            .collect();
        let more = by_content.len().saturating_sub(NAMED_NOT_LOGS);
        let more = if more > 0 { format!("; and {more} more") } else { String::new() };
        why.push(format!("by their content ({}{more})", named.join("; ")));
    }
    Some(format!(
        "{}: {total} file(s) passed over as no agent log, {}; name a file to read it anyway",
        dir.display(),
        why.join(" and ")
    ))
}

/// Why a file is no log, in a few words ([`not_a_log`]'s error).
fn not_a_log_why(e: &TraceError) -> String {
    match e {
        TraceError::Empty { .. } => "empty".into(),
        TraceError::NotText { .. } => "binary".into(),
        TraceError::Unrecognised { broken, .. } if broken.contains("its JSON breaks") => {
            let at = broken.trim_start_matches("; ");
            at.split(": ").next().unwrap_or(at).to_owned()
        }
        TraceError::Unrecognised { broken, .. } if broken.contains("one JSON array") => {
            "one JSON array, not JSON Lines".into()
        }
        // What it resembles, when a format's marks are in it (`format::look_alike`).
        TraceError::Unrecognised { broken, .. } if broken.contains("--input-format") => {
            format!("no format recognises it{broken}")
        }
        _ => "no format recognises it".into(),
    }
}

/// What a directory walk makes of the file `path`, from its first bytes read as [`super::load`] reads
/// them: `None` when it is a log to read, else why no format can read it (it is empty, not text,
/// or no format recognises it: [`TraceError::is_skippable`]), so that the walk passes it over
/// with the files it passes over by name. A file that cannot be opened or read here is left to
/// [`super::load`], which says why.
pub fn not_a_log(path: &Path) -> Option<TraceError> {
    let file = File::open(path).ok()?;
    let whole_len = file.metadata().map(|m| m.len()).ok();
    let mut head = Vec::with_capacity(HEAD_BYTES);
    file.take(HEAD_BYTES as u64).read_to_end(&mut head).ok()?;
    let whole = whole_len == Some(head.len() as u64);
    if head.starts_with(super::BOM) {
        head.drain(..super::BOM.len());
    }
    super::format_of(path, &head, whole, None).err().filter(TraceError::is_skippable)
}
