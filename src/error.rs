//! Typed errors at the seams: reading a trace, parsing a policy spec, writing an export.
//!
//! Each error names what it is about (the file and line or request, the spec and key, the output
//! path) and says what to do, so the application layer can print it once and move on to the next
//! file. The command layer (`cmd`) adds context with `anyhow`; the library returns these.

use std::path::PathBuf;

/// A short, actionable description of an I/O error.
pub fn describe_io(e: &std::io::Error) -> String {
    match (e.kind(), e.raw_os_error()) {
        (std::io::ErrorKind::NotFound, _) => "no such file or directory".into(),
        (std::io::ErrorKind::PermissionDenied, _) => {
            "permission denied (check the file's permissions)".into()
        }
        (_, Some(5)) => "input/output error (the device or file system failed to read it; copy the file \
                         elsewhere and retry)"
            .into(),
        (_, Some(6)) => {
            "no such device or address (a socket or a device, not a file: pass a regular file)".into()
        }
        (_, Some(40)) => "too many levels of symbolic links (a symlink loop: fix or remove the link)".into(),
        (_, Some(20)) => {
            "not a directory (a file stands where a directory is needed: choose another path)".into()
        }
        (std::io::ErrorKind::IsADirectory, _) => "is a directory".into(),
        _ => e.to_string(),
    }
}

/// A trace file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read: {}", describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// No known format matches the file.
    #[error(
        "{path}: not a recognised trace format (tried {tried}){broken}; pass --input-format to choose one"
    )]
    Unrecognised {
        /// The file.
        path: PathBuf,
        /// The formats that were tried.
        tried: String,
        /// Where a file that starts as one JSON document stops being valid JSON (`; its JSON
        /// breaks at line …`), when it does: a mistake early in a document hides its format. Then
        /// what it resembles, when it carries a known agent's marks (`format::look_alike`).
        broken: String,
    },
    /// The file is empty (or only blank): there is nothing to replay.
    #[error("{path}: the file is empty; nothing to replay (a session not written yet?)")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The file holds binary data, not text: no trace format can read it.
    #[error(
        "{path}: not a text file (binary data: a NUL byte at byte {offset}); ctxbudget reads session logs written as JSON, JSON Lines or YAML"
    )]
    NotText {
        /// The file.
        path: PathBuf,
        /// Offset of the first NUL byte.
        offset: usize,
    },
    /// The content is not what the format expects, at a given line (1-based).
    #[error("{path}:{line}: {message}")]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// The content is not what the format expects, somewhere without a line number.
    #[error("{path}: {message}")]
    Content {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
}

impl TraceError {
    /// An error at a 1-based line.
    pub fn line(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        TraceError::Line { path: path.into(), line, message: message.into() }
    }

    /// The warning for a file a directory walk found but could not read, which is skipped.
    pub fn skip_warning(&self) -> String {
        match self {
            TraceError::Unrecognised { path, tried, broken } => {
                format!("{}: skipped: not a recognised trace format (tried {tried}){broken}", path.display())
            }
            TraceError::Empty { path } => format!("{}: skipped: the file is empty", path.display()),
            TraceError::NotText { path, offset } => {
                format!("{}: skipped: not a text file (a NUL byte at byte {offset})", path.display())
            }
            other => format!("skipped: {other}"),
        }
    }

    /// Whether a directory walk skips the file with a warning rather than failing on it: no
    /// format recognised it, it is empty or it is not text.
    pub fn is_skippable(&self) -> bool {
        matches!(
            self,
            TraceError::Unrecognised { .. } | TraceError::Empty { .. } | TraceError::NotText { .. }
        )
    }

    /// An error about the whole file.
    pub fn content(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        TraceError::Content { path: path.into(), message: message.into() }
    }
}

/// A `--policies` file could not be read or holds a mistake.
#[derive(Debug, thiserror::Error)]
pub enum PolicyFileError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or not shaped as `[[policy]]` tables.
    #[error("{path}: {message}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// A policy in the file is not a valid spec (unknown kind, unknown key, bad value).
    #[error("{path}: policy #{number}: {source}")]
    Spec {
        /// The file.
        path: PathBuf,
        /// 1-based position of the `[[policy]]` table in the file.
        number: usize,
        /// What is wrong with it.
        source: Box<SpecError>,
    },
}

/// A policy or transform spec could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The name is not a known policy.
    #[error("unknown policy `{name}` in `{spec}`; valid policies: {valid}")]
    UnknownName {
        /// The whole spec.
        spec: String,
        /// The unknown name.
        name: String,
        /// Valid names, comma-separated.
        valid: String,
    },
    /// A key is not a parameter of the policy.
    #[error("policy `{policy}` has no parameter `{key}` (in `{spec}`); valid keys: {valid}")]
    UnknownKey {
        /// The whole spec.
        spec: String,
        /// Policy name.
        policy: String,
        /// The unknown key.
        key: String,
        /// Valid keys, comma-separated (or "none").
        valid: String,
    },
    /// A value does not parse or is out of range.
    #[error("bad value for `{key}` in `{spec}`: {message}")]
    BadValue {
        /// The whole spec.
        spec: String,
        /// The key.
        key: String,
        /// Why.
        message: String,
    },
    /// The name is not a known transform.
    #[error("unknown transform `{spec}`; valid transforms: {valid}")]
    UnknownTransform {
        /// The whole spec.
        spec: String,
        /// Valid names, comma-separated.
        valid: String,
    },
    /// A key is not a parameter of the transform.
    #[error("transform `{transform}` has no parameter `{key}` (in `{spec}`); valid keys: {valid}")]
    UnknownTransformKey {
        /// The whole spec.
        spec: String,
        /// Transform name.
        transform: String,
        /// The unknown key.
        key: String,
        /// Valid keys, comma-separated (or "none").
        valid: String,
    },
    /// The spec is not `name` or `name:key=value,...`.
    #[error("cannot parse `{spec}`: {message} (expected `name` or `name:key=value,key=value`)")]
    Syntax {
        /// The whole spec.
        spec: String,
        /// Why.
        message: String,
    },
}
