//! The way in: finding trace files under the paths a user gives, and reading each one through the
//! format that recognises it. The only module besides `export` that touches the file system.
//!
//! Directories are walked recursively in sorted order (so output never depends on the order the
//! OS lists files), symbolic links are followed only to places inside the folder walked unless
//! `--follow` (and a directory at most once: no loops), and files that are obviously not traces
//! (`*.md`, Claude Code's `*.meta.json`, the files beside a Cline task's
//! `api_conversation_history.json`, which is read with them) are passed over, as are FIFOs, sockets
//! and devices (opening a FIFO would block; a FIFO named explicitly, such as the `/dev/fd/63` of a
//! shell's `<(zcat session.jsonl.gz)`, is read, opened without blocking and given
//! [`PIPE_WAIT`] for a writer to show: [`open_input`]).
//!
//! **Bad files.** An empty file, a binary file (a NUL byte in its first bytes, but for an Inspect
//! `.eval` zip, the one binary format read) and a file no format
//! recognises (the first two with `--input-format` too) are errors when named explicitly; in a
//! directory walk they are passed over by their content ([`not_a_log`], the same decision from
//! the same first bytes as [`load`]) and counted in the folder's one line with the files passed
//! over by extension (with `--input-format`, each is read and skipped with its own warning); a
//! folder named on the command line that holds no
//! file to read is a warning (not an error: a script may well walk an empty day's folder); a run
//! with no file at all builds no tokenizer tables. A UTF-8 byte-order mark at the start of a file
//! is ignored. An error that names a place in a JSON document gets the line that place starts on.
//!
//! **Hidden entries (decision).** A directory is walked because a user named it (or asked for it
//! with `--claude`/`--codex`), so hidden *directories* inside it are walked too: agents and
//! workflows keep logs in dot-folders (the corpus's stream-json logs sit under `.ai-workflow/`).
//! Skipped are the folders that hold tool state rather than sessions — version-control metadata
//! (`.git`, `.hg`, `.svn`, `.jj`) and Python environments and caches (`.venv`, `.tox`,
//! `.mypy_cache`, `.pytest_cache`, `.ruff_cache`) — see [`SKIPPED_DIRS`], and hidden *files*
//! (`.DS_Store`, `.gitignore`, …; all but aider's `.aider.llm.history`, and its
//! `.aider.chat.history.md` when no LLM log is beside it), which are never traces and would each be an "unrecognised file"
//! warning. A hidden file or directory named explicitly is read like any other.
//!
//! [`agent_homes`] gives the places agents write sessions to, read in place: `~/.claude/projects`
//! (Claude Code), `~/.codex/sessions` (Codex CLI), Cline's and Roo Code's task folders in VS Code's
//! global storage, and OpenCode's `~/.local/share/opencode/storage`. A file is read in one pass: the first bytes go to detection, then
//! the same bytes and the rest of the file stream into the format's reader.

use std::fs::File;
use std::io::{BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use crate::counts::StoredCounts;
pub use crate::error::describe_io;
use crate::error::{PolicyFileError, TraceError};
use crate::format::{self, Format, HEAD_BYTES};
use crate::model::Trace;
use crate::policy::PolicySpec;

mod not_a_log;
pub use not_a_log::{NOT_LOG_EXTENSIONS, not_a_log};
use not_a_log::{is_obviously_not_a_trace, not_a_log_extension, not_logs_line};

/// Files found under the given paths, and problems met on the way.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Files to read, in a stable order: each given path in turn, sorted within directories.
    pub files: Vec<PathBuf>,
    /// Whether each file was named explicitly (rather than found in a directory).
    pub explicit: Vec<bool>,
    /// Paths that could not be walked (missing, unreadable), with the reason.
    pub errors: Vec<String>,
    /// Folders named on the command line that hold no file to read, each named in a warning.
    pub warnings: Vec<String>,
}

impl Discovered {
    /// What a report starts from: the walk's warnings and errors, in that order.
    pub fn problems(&self) -> (Vec<String>, Vec<String>) {
        (self.warnings.clone(), self.errors.clone())
    }
}

/// Directories a walk does not enter: tool state, not sessions.
pub const SKIPPED_DIRS: [&str; 9] =
    [".git", ".hg", ".svn", ".jj", ".venv", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache"];

/// Session folders of the agents ctxbudget can read in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentHome {
    /// Claude Code: `~/.claude/projects`.
    Claude,
    /// Codex CLI: `~/.codex/sessions`.
    Codex,
    /// Cline's task folders in VS Code's global storage ([`VSCODE_GLOBAL_STORAGE`]).
    Cline,
    /// Roo Code's task folders in VS Code's global storage.
    Roo,
    /// OpenCode's JSON-file session storage: `~/.local/share/opencode/storage`.
    OpenCode,
}

/// VS Code's global storage under the home directory, where Cline and Roo Code keep their tasks:
/// `~/.config/Code/User/globalStorage` on Linux, `~/Library/Application Support/...` on macOS,
/// `%APPDATA%` (`~/AppData/Roaming/...`) on Windows (docs/formats.md, Cline).
pub const VSCODE_GLOBAL_STORAGE: &str = if cfg!(target_os = "macos") {
    "Library/Application Support/Code/User/globalStorage"
} else if cfg!(windows) {
    "AppData/Roaming/Code/User/globalStorage"
} else {
    ".config/Code/User/globalStorage"
};

impl AgentHome {
    /// Every agent, in the order their flags are listed.
    pub const ALL: [AgentHome; 5] =
        [AgentHome::Claude, AgentHome::Codex, AgentHome::Cline, AgentHome::Roo, AgentHome::OpenCode];

    /// The folder under the home directory.
    pub fn relative(self) -> PathBuf {
        match self {
            AgentHome::Claude => PathBuf::from(".claude/projects"),
            AgentHome::Codex => PathBuf::from(".codex/sessions"),
            AgentHome::Cline => Path::new(VSCODE_GLOBAL_STORAGE).join("saoudrizwan.claude-dev/tasks"),
            AgentHome::Roo => Path::new(VSCODE_GLOBAL_STORAGE).join("rooveterinaryinc.roo-cline/tasks"),
            AgentHome::OpenCode => PathBuf::from(".local/share/opencode/storage"),
        }
    }

    /// The command-line flag that asks for it.
    pub fn flag(self) -> &'static str {
        match self {
            AgentHome::Claude => "--claude",
            AgentHome::Codex => "--codex",
            AgentHome::Cline => "--cline",
            AgentHome::Roo => "--roo",
            AgentHome::OpenCode => "--opencode",
        }
    }
}

/// The session folders of `agents` under `home` (normally `$HOME`), in the order given. A folder
/// that does not exist is still returned: [`discover`] reports it as missing.
pub fn agent_homes(home: &Path, agents: &[AgentHome]) -> Vec<PathBuf> {
    agents.iter().map(|a| home.join(a.relative())).collect()
}

/// A `--policies` file is read up to this many bytes (a policy is a few lines).
const MAX_POLICIES_BYTES: u64 = 16 << 20;

/// Reads `reader` to its end, or `None` when it holds more than `limit` bytes (only `limit` + 1
/// are read): a device or a pipe with no end (`/dev/zero`) stops there instead of taking all the
/// machine's memory.
pub fn read_up_to(reader: impl std::io::Read, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    reader.take(limit + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// Reads `path` whole, but not beyond `limit` bytes: more is an error ([`read_up_to`];
/// `compare --policies /dev/zero` took 3 GB in 8 s before, and went on).
fn read_at_most(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    read_up_to(std::fs::File::open(path)?, limit)?.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("more than {} MiB (a stream with no end?)", limit >> 20),
        )
    })
}

/// Reads the policies of a `--policies` TOML file ([`crate::policy::file`]).
pub fn read_policies(path: &Path) -> Result<Vec<PolicySpec>, PolicyFileError> {
    let io = |source| PolicyFileError::Io { path: path.to_owned(), source };
    let bytes = read_at_most(path, MAX_POLICIES_BYTES).map_err(io)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        io(std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
    })?;
    crate::policy::file::parse(&text, path)
}

/// Reads a count cache file ([`crate::counts`]): `None` when there is none yet; an error naming
/// the file when it cannot be read or used.
pub fn read_counts(path: &Path) -> Result<Option<StoredCounts>, CountsUnusable> {
    let unusable = |why: String, foreign: bool| CountsUnusable {
        why: format!("count cache {}: {why}", path.display()),
        foreign,
    };
    match std::fs::read(path) {
        Ok(bytes) => StoredCounts::decode(&bytes).map(Some).map_err(|e| {
            let foreign = !bytes.is_empty() && e == crate::counts::CountsError::NotCounts;
            unusable(e.to_string(), foreign)
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unusable(describe_io(&e), false)),
    }
}

/// Why a `--count-cache` file cannot be used.
#[derive(Debug)]
pub struct CountsUnusable {
    /// The file and the reason, for a warning or an error.
    pub why: String,
    /// The file holds something other than a count cache (and is not empty): it may be a user's
    /// file named by mistake, so it must not be replaced.
    pub foreign: bool,
}

/// The file a path given as `-` reads: standard input, as a file the loaders open like any other
/// (each file is read once, from its start to its end, so a pipe reads as a file would).
pub const STDIN_PATH: &str = "/dev/stdin";

/// The file a path given on the command line reads: `-` is standard input ([`STDIN_PATH`], where
/// the system has one, so that what it is redirected from can be told: the output checks compare
/// it with theirs), any other path itself.
pub fn given(path: &Path) -> &Path {
    let stdin = Path::new(STDIN_PATH);
    if path.as_os_str() == "-" && stdin.exists() { stdin } else { path }
}

/// Finds the trace files under `paths` ([`discover_following`] without `--follow`).
pub fn discover(paths: &[PathBuf]) -> Discovered {
    discover_following(paths, false)
}

/// Finds the trace files under `paths`; `-` is standard input ([`given`]). In a folder, a
/// symbolic link that leads out of it is followed only when `follow` is set (as ripgrep's
/// `--follow`): `replay /proc/self/` would otherwise walk the whole file system through `root`
/// and `cwd`; those passed over are counted in one warning per folder. Files found in a folder
/// that no format can read ([`not_a_log`]) are passed over too: [`discover_logs`].
pub fn discover_following(paths: &[PathBuf], follow: bool) -> Discovered {
    discover_logs(paths, follow, true)
}

/// [`discover_following`], which passes over the files found in a folder that no format can read
/// (empty, binary, or recognised by none: [`not_a_log`]) when `by_content` is set, counting them
/// in the folder's one line with those passed over by extension; else (a format forced with
/// `--input-format`, which reads what detection would not) each is left to be read. Each file's
/// first bytes are read on the current rayon pool, in parallel. A file named is never passed over.
pub fn discover_logs(paths: &[PathBuf], follow: bool, by_content: bool) -> Discovered {
    let mut found = Discovered::default();
    for path in paths {
        let path = given(path);
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                let mut walk = Walk {
                    seen: std::collections::BTreeMap::new(),
                    inside: if follow { None } else { path.canonicalize().ok() },
                    left_out: Vec::new(),
                    not_logs: std::collections::BTreeMap::new(),
                };
                let (files, errors) = (found.files.len(), found.errors.len());
                walk_dir(path, &mut walk, &mut found);
                let not_logs = if by_content { pass_over_not_logs(&mut found, files) } else { Vec::new() };
                if let Some(first) = walk.left_out.first() {
                    found.warnings.push(format!(
                        "{}: {} symbolic link(s) leading out of this folder not followed (first: {}); pass \
                         --follow to read through them",
                        path.display(),
                        walk.left_out.len(),
                        first.display()
                    ));
                }
                found.warnings.extend(not_logs_line(path, &walk.not_logs, &not_logs));
                if found.files.len() == files && found.errors.len() == errors {
                    found.warnings.push(format!(
                        "{}: no file to read in this folder (hidden files, `*.md`, `*.meta.json` and \
                         folders such as `.git` are passed over)",
                        path.display()
                    ));
                }
            }
            Ok(_) => {
                found.files.push(path.to_owned());
                found.explicit.push(true);
            }
            Err(e) => found.errors.push(format!("{}: {}", path.display(), describe_followed(path, &e))),
        }
    }
    read_once(&mut found);
    found
}

/// Takes out of `found` the files from place `from` on (found in one folder, never named) that no
/// format can read ([`not_a_log`]), and returns them with why, in order.
fn pass_over_not_logs(found: &mut Discovered, from: usize) -> Vec<(PathBuf, TraceError)> {
    use rayon::prelude::*;
    let verdicts: Vec<Option<TraceError>> = found.files[from..].par_iter().map(|f| not_a_log(f)).collect();
    let mut passed_over = Vec::new();
    let kept: Vec<PathBuf> = found
        .files
        .drain(from..)
        .zip(verdicts)
        .filter_map(|(file, verdict)| match verdict {
            Some(e) => {
                passed_over.push((file, e));
                None
            }
            None => Some(file),
        })
        .collect();
    found.explicit.truncate(from);
    found.explicit.extend(std::iter::repeat_n(false, kept.len()));
    found.files.extend(kept);
    passed_over
}

/// Keeps the first of the files found that are one file (given twice, given and found in a folder
/// given too, or reached again through a link), each later one named in a warning: counted twice,
/// a session would weigh double in every total. A file kept is explicit if any of its names was.
/// One `stat` per file (the 2,492 files of the generated 1 GB corpus: about a millisecond).
fn read_once(found: &mut Discovered) {
    let mut first: std::collections::BTreeMap<FileId, usize> = std::collections::BTreeMap::new();
    let (mut files, mut explicit) = (Vec::with_capacity(found.files.len()), Vec::new());
    for (path, named) in std::mem::take(&mut found.files).into_iter().zip(std::mem::take(&mut found.explicit))
    {
        let Ok(id) = file_id(&path) else {
            files.push(path);
            explicit.push(named);
            continue;
        };
        match first.get(&id) {
            Some(&k) => {
                explicit[k] |= named;
                let also = if files[k] == path {
                    String::new()
                } else {
                    format!(" (first as {})", files[k].display())
                };
                found
                    .warnings
                    .push(format!("{}: given or found more than once{also}; read once", path.display()));
            }
            None => {
                first.insert(id, files.len());
                files.push(path);
                explicit.push(named);
            }
        }
    }
    (found.files, found.explicit) = (files, explicit);
}

/// What tells a directory (or a file) apart however it is reached: its device and inode where
/// there are such (one `stat`), its canonical path elsewhere.
#[cfg(unix)]
pub type FileId = (u64, u64);
/// What tells a directory (or a file) apart however it is reached: its canonical path here.
#[cfg(not(unix))]
pub type FileId = PathBuf;

/// The [`FileId`] of what `path` names (links followed).
#[cfg(unix)]
pub fn file_id(path: &Path) -> std::io::Result<FileId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).map(|m| (m.dev(), m.ino()))
}

/// The [`FileId`] of what `path` names (links followed).
#[cfg(not(unix))]
pub fn file_id(path: &Path) -> std::io::Result<FileId> {
    path.canonicalize()
}

/// One folder's walk: the directories walked, and where links may lead.
struct Walk {
    /// The directories walked already, each with the path it was first walked as (following a
    /// symlinked directory twice would loop).
    seen: std::collections::BTreeMap<FileId, PathBuf>,
    /// The folder's canonical path, when links that lead out of it are not followed.
    inside: Option<PathBuf>,
    /// The links not followed.
    left_out: Vec<PathBuf>,
    /// Files passed over as no agent log, by extension ([`NOT_LOG_EXTENSIONS`]).
    not_logs: std::collections::BTreeMap<String, usize>,
}

impl Walk {
    /// Whether the link `path` may be followed: always with `--follow`, else when it leads inside
    /// the folder walked (or nowhere: following it says it is broken or a loop).
    fn may_follow(&mut self, path: &Path) -> bool {
        let Some(inside) = &self.inside else { return true };
        match path.canonicalize() {
            Ok(target) if !target.starts_with(inside) => {
                self.left_out.push(path.to_owned());
                false
            }
            _ => true,
        }
    }
}

/// Walks `dir`, unless it was walked already (following a symlinked directory twice would loop).
/// A directory is known by [`FileId`]. Canonical paths told before, but `canonicalize` reads every
/// component of every directory's path as a link: the generated 1 GB corpus (2,492 files in 3,764
/// directories) took 27,780 `readlink` calls (`strace -c`), and its walk went from 57–70 ms to
/// 30–31 ms without them (the shared corpus's from 1.1–1.6 to 0.65–0.7 ms; three runs each, a
/// throwaway timestamp patch). An entry's type comes with the directory listing; only a symbolic
/// link is followed with a `stat`.
///
/// Not `walkdir` (2.5.1, read in its source): it opens and sorts a directory before
/// `filter_entry` sees it, so a refused link out of the folder or a skipped `.git` would be listed
/// and, unreadable, reported as an error; and its loop check covers ancestors only, where this walk
/// also names a folder reached a second time.
fn walk_dir(dir: &Path, w: &mut Walk, found: &mut Discovered) {
    match file_id(dir) {
        Ok(id) => {
            if let Some(first) = w.seen.get(&id) {
                // A link back to a folder above is a loop, not a second copy: passed over quietly.
                if !dir.starts_with(first) {
                    found.warnings.push(format!(
                        "{}: given or found more than once (first as {}); read once",
                        dir.display(),
                        first.display()
                    ));
                }
                return;
            }
            w.seen.insert(id, dir.to_owned());
        }
        Err(e) => {
            found.errors.push(format!("{}: {}", dir.display(), describe_io(&e)));
            return;
        }
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            found.errors.push(format!("{}: {}", dir.display(), describe_io(&e)));
            return;
        }
    };
    let mut entries: Vec<(PathBuf, std::io::Result<std::fs::FileType>)> =
        entries.filter_map(|e| e.ok().map(|e| (e.path(), e.file_type()))).collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, file_type) in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let hidden = name.starts_with('.');
        // A link is followed to what it points at (a link to a file is read as that file).
        let kind = match file_type {
            Ok(t) if t.is_symlink() && !w.may_follow(&path) => continue,
            Ok(t) if t.is_symlink() => std::fs::metadata(&path).map(|m| m.file_type()),
            other => other,
        };
        match kind {
            Ok(t) if t.is_dir() && SKIPPED_DIRS.contains(&name) => {}
            Ok(t) if t.is_dir() => walk_dir(&path, w, found),
            // FIFOs, sockets and devices are never sessions, and opening a FIFO would block.
            Ok(t) if !t.is_file() => {}
            // aider's logs are hidden files beside the repository: the hidden files read. The
            // chat history only when the LLM log, which holds what was sent, is not beside it.
            Ok(_) if name == crate::format::aider_chat::CHAT_FILE => {
                if !path.with_file_name(crate::format::aider::LOG_FILE).is_file() {
                    found.files.push(path);
                    found.explicit.push(false);
                }
            }
            Ok(_) if hidden && name != crate::format::aider::LOG_FILE => {}
            Ok(_) if is_obviously_not_a_trace(&path) => {}
            Ok(_) => match not_a_log_extension(&path) {
                Some(ext) => *w.not_logs.entry(ext).or_default() += 1,
                None => {
                    found.files.push(path);
                    found.explicit.push(false);
                }
            },
            Err(e) => found.errors.push(format!("{}: {}", path.display(), describe_followed(&path, &e))),
        }
    }
}

/// [`describe_io`] of an error met following `path`, which says so when `path` is a symbolic link
/// to nothing: "no such file or directory" about a link that `ls` lists sends the user looking
/// for the wrong file.
fn describe_followed(path: &Path, e: &std::io::Error) -> String {
    match std::fs::read_link(path) {
        Ok(target) if e.kind() == std::io::ErrorKind::NotFound => format!(
            "broken symbolic link (it points to {}, which does not exist: fix or remove the link)",
            target.display()
        ),
        _ => describe_io(e),
    }
}

/// Whether `file` can be read again, to the same bytes: a regular file can, while standard input,
/// a pipe (`<(zcat …)`) or a named pipe is gone once read (and opening a named pipe again waits
/// for a writer that never comes). A command that would read its inputs twice holds those
/// instead.
pub fn rereadable(file: &Path) -> bool {
    std::fs::metadata(file).is_ok_and(|m| m.is_file())
}

/// The size in bytes of a file (0 for one that cannot be read: reading it will say why).
pub fn size(file: &Path) -> u64 {
    std::fs::metadata(file).map_or(0, |m| m.len())
}

/// How long a named pipe given as an input may stay silent before it is an error, if nothing
/// is writing to it by then.
pub const PIPE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Opens an input without ever blocking on the open, with the bytes read from it already (empty
/// but for a named pipe that had to be probed). A named pipe (FIFO) is opened non-blocking (a
/// plain `open` waits for a writer for ever) and waited on for [`PIPE_WAIT`]: if nothing has come
/// by then and no process has it open for writing, it is an error naming the pipe, and the other
/// inputs are still read. A writer that is there but slow is waited for.
pub fn open_input(path: &Path) -> std::io::Result<(File, Vec<u8>)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            return open_pipe(path);
        }
    }
    Ok((File::open(path)?, Vec::new()))
}

#[cfg(unix)]
fn open_pipe(path: &Path) -> std::io::Result<(File, Vec<u8>)> {
    use rustix::event::{PollFd, PollFlags, Timespec};
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let file = File::options().read(true).custom_flags(OFlags::NONBLOCK.bits() as i32).open(path)?;
    let wait = Timespec { tv_sec: PIPE_WAIT.as_secs() as _, tv_nsec: 0 };
    let ready = rustix::event::poll(&mut [PollFd::new(&file, PollFlags::IN)], Some(&wait))?;
    let mut ahead = Vec::new();
    if ready == 0 {
        // Nothing came: a read that would block means a writer holds the pipe open; one that
        // reads nothing, that none does.
        let mut byte = [0u8];
        match (&file).read(&mut byte) {
            Ok(0) => {
                return Err(std::io::Error::other(format!(
                    "a named pipe that nothing writes to (nothing came within {} s): start the program \
                     that writes it first, or pass a regular file",
                    PIPE_WAIT.as_secs()
                )));
            }
            Ok(_) => ahead.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    let flags = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
    Ok((file, ahead))
}

/// The UTF-8 byte-order mark some editors put at the start of a text file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads one trace file, detecting its format unless `forced`. An empty file, UTF-16 text and
/// binary data are errors either way.
pub fn load(path: &Path, forced: Option<&'static dyn Format>) -> Result<Trace, TraceError> {
    let io = |source| TraceError::Io { path: path.to_owned(), source };
    let (file, ahead) = open_input(path).map_err(io)?;
    let whole_len = file.metadata().map(|m| m.len()).ok();
    let mut file = BufReader::with_capacity(1 << 16, Cursor::new(ahead).chain(file));
    let mut head = Vec::with_capacity(HEAD_BYTES);
    (&mut file).take(HEAD_BYTES as u64).read_to_end(&mut head).map_err(io)?;
    let whole = whole_len == Some(head.len() as u64);
    // A byte-order mark (a file saved by a Windows editor) is not part of the JSON.
    if head.starts_with(BOM) {
        head.drain(..BOM.len());
    }
    let format = format_of(path, &head, whole, forced)?;
    // What detection would have chosen, to say so when a forced format finds nothing.
    let detected = forced.map(|_| {
        format::with_head(path, &head, whole, |h| {
            format::guess(h).ok_or_else(|| format::look_alike::unrecognised(h))
        })
    });
    let mut reader = BufReader::new(Cursor::new(head).chain(file));
    let mut trace = format.read(&mut reader, path).map_err(|e| locate(e, path))?;
    let requests: usize = trace.conversations.iter().map(|c| c.requests()).sum();
    let nothing = trace.conversations.iter().all(|c| c.items.is_empty());
    if detected.is_none() && nothing && trace.warnings.is_empty() {
        // A Claude Code file of only `summary` lines: read without error, it would give nothing
        // and say nothing (a file whose lines were all passed over with a warning says so).
        trace.warnings.push(format!(
            "read as `{}`, it holds nothing to replay (no message, no model request)",
            format.name()
        ));
    }
    trace.warnings.extend(format::look_alike(&trace));
    if let Some(detected) = detected {
        let elsewhere = detected.as_ref().map_or(true, |d| d.name() != format.name());
        if requests == 0 && elsewhere {
            let reads_as = match detected {
                Ok(d) => format!("it reads as `{}`", d.name()),
                Err(resembles) => format!("no format recognises it{}", resembles.unwrap_or_default()),
            };
            trace.warnings.push(format!(
                "read as `{}` (--input-format), it holds no request: {reads_as}",
                format.name()
            ));
        }
    }
    Ok(trace)
}

/// The format that reads the file `path`, which starts with `head` (all of it when `whole`, a
/// byte-order mark taken off): `forced`, or the one detection finds. Whether the format is
/// detected or forced (`--input-format`): no format reads an empty file, UTF-16 or binary data,
/// and each says so better than a format's first error would.
fn format_of(
    path: &Path,
    head: &[u8],
    whole: bool,
    forced: Option<&'static dyn Format>,
) -> Result<&'static dyn Format, TraceError> {
    if whole && head.iter().all(u8::is_ascii_whitespace) {
        return Err(TraceError::Empty { path: path.to_owned() });
    }
    if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
        // What a Windows shell's `>` writes: text, but not UTF-8.
        return Err(TraceError::content(
            path,
            "UTF-16 text (the file starts with a UTF-16 byte-order mark); session logs are UTF-8: \
             re-save the file as UTF-8",
        ));
    }
    // An Inspect `.eval` log is the one binary format read (a zip of JSON).
    let eval_zip = format::inspect_eval::is_eval_zip(path, head)
        && forced.is_none_or(|f| f.name() == format::inspect_eval::InspectEval.name());
    if let Some(offset) = head.iter().position(|&b| b == 0).filter(|_| !eval_zip) {
        return Err(TraceError::NotText { path: path.to_owned(), offset });
    }
    match forced {
        Some(f) => Ok(f),
        // No other format reads a zip: its head is not made text for them (lossily, at 30
        // instructions a byte).
        None if eval_zip => Ok(&format::inspect_eval::InspectEval),
        None => {
            // What it resembles, when nothing reads it (a layout of a known agent this build
            // does not read, a format's marks in plain text).
            let resembles =
                |h: &format::Head<'_>| format::guess(h).ok_or_else(|| format::look_alike::unrecognised(h));
            format::with_head(path, head, whole, resembles).map_err(|resembles| TraceError::Unrecognised {
                path: path.to_owned(),
                tried: format::names(),
                broken: broken_json(head, whole)
                    + &array_in_json_lines(path, head)
                    + &resembles.unwrap_or_default(),
            })
        }
    }
}

/// Where `head` (a file's first bytes, all of it when `whole`) stops being valid JSON, as
/// `; its JSON breaks at line L, column C: why`, when it starts as one JSON document (`{` or `[`)
/// and is not JSON Lines (whose first line is a document of its own). Empty otherwise, and for a
/// document only cut short by the end of a head that is not the whole file.
fn broken_json(head: &[u8], whole: bool) -> String {
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    if !matches!(head.get(start), Some(b'{' | b'[')) {
        return String::new();
    }
    let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(head) else { return String::new() };
    let first_line = head[start..].split(|&b| b == b'\n').next().unwrap_or_default();
    let json_lines = serde_json::from_slice::<serde::de::IgnoredAny>(first_line).is_ok();
    if json_lines || (e.is_eof() && !whole) {
        return String::new();
    }
    let why = e.to_string();
    let why = why.split(" at line ").next().unwrap_or(&why);
    format!("; its JSON breaks at line {}, column {}: {why}", e.line(), e.column())
}

/// `; it is one JSON array, not JSON Lines …` when a file named as JSON Lines (`.jsonl`,
/// `.ndjson`) holds a JSON array: saved whole by a tool that meant to write one object per line,
/// its name sends the user looking for a broken line. Empty otherwise.
fn array_in_json_lines(path: &Path, head: &[u8]) -> String {
    let lines =
        path.extension().is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("ndjson"));
    let array = head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    if lines && array {
        "; it holds one JSON array, not JSON Lines (one object per line): write each element on its own line, or \
         rename it to .json if it is a JSON document"
            .into()
    } else {
        String::new()
    }
}

/// Files larger than this are not read again to find the line of an error.
const LOCATE_LIMIT: u64 = 256 << 20;

/// An error that names a place in a JSON document (`messages[3].content: …`) gets the line that
/// place starts on, so every error names a line when the file has one. The file is read again
/// only on error, only when it is at most [`LOCATE_LIMIT`] bytes, and only when it can be (a
/// regular file, as [`rereadable`] asks: opening a named pipe again waited for ever for a writer).
fn locate(e: TraceError, path: &Path) -> TraceError {
    let TraceError::Content { message, .. } = &e else { return e };
    let Some((at, _)) = message.split_once(": ") else { return e };
    if std::fs::metadata(path).map_or(true, |m| !m.is_file() || m.len() > LOCATE_LIMIT) {
        return e;
    }
    let Ok(bytes) = std::fs::read(path) else { return e };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    match format::shared::line_of_json_path(text, at) {
        Some(line) => TraceError::Line { path: path.to_owned(), line, message: message.clone() },
        None => e,
    }
}

#[cfg(test)]
mod tests;
