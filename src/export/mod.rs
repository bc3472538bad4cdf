//! The way out: rendering a replay report as a terminal table, CSV, JSON or Markdown, and writing it
//! safely.
//!
//! Each format is one file behind the [`Exporter`] trait, which turns a [`ReplayReport`] into bytes;
//! the table-like formats share the column definitions in [`columns`]. [`Output`] owns the target:
//! `-` is stdout, a file is checked before any work starts (so a bad path fails fast) and written
//! through a temporary file that is renamed into place, so an interrupted run never leaves a
//! half-written report. What is not a regular file (`/dev/null`, a pipe, a terminal) is written in
//! place, since renaming over it would replace the device with a file; a symbolic link is followed,
//! and its target replaced.

pub mod analysis;
pub mod bill;
pub mod columns;
pub mod compaction;
pub mod csv;
pub mod fit;
pub mod json;
pub mod markdown;
pub mod recommend;
pub mod reconcile;
pub mod staged;
pub mod table;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::result::{ReplayReport, RequestRow, RunSummary};

/// Renders a report.
pub trait Exporter {
    /// Writes the report to `out`, in parts as they are made where the format allows.
    /// `per_request` selects the per-request timeline over the run summaries.
    fn write(&self, report: &ReplayReport, per_request: bool, out: &mut dyn Write) -> Result<()>;

    /// The bytes [`Exporter::write`] writes.
    fn render(&self, report: &ReplayReport, per_request: bool) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write(report, per_request, &mut out)?;
        Ok(out)
    }
}

/// A per-request report written in parts: the head (once the columns' stats are known), the rows,
/// file by file, then the tail. For a replay that reads its inputs twice instead of holding every
/// row (`replay --per-request --low-memory`, automatic above 256 MB of input): the first pass adds
/// up the stats, the second writes. [`Exporter::write`] of a whole report goes through the same
/// three calls, so both write the same bytes. The terminal table and Markdown are written so; CSV
/// and JSON need no stats and are streamed in one pass.
pub trait TimelineParts: Sync {
    /// Everything before the first row.
    fn head(&self, stats: &columns::ColumnStats, out: &mut dyn Write) -> std::io::Result<()>;
    /// One row, as its line (or lines), appended to `line`.
    fn draw_row(&self, stats: &columns::ColumnStats, cells: &[String], line: &mut String);
    /// Everything after the last row (the totals of `report`'s runs).
    fn tail(&self, stats: &columns::ColumnStats, report: &ReplayReport, out: &mut dyn Write) -> Result<()>;
}

/// [`Exporter::write`] of a whole per-request report through its [`TimelineParts`].
pub(crate) fn write_timeline(
    parts: &dyn TimelineParts,
    report: &ReplayReport,
    out: &mut dyn Write,
) -> Result<()> {
    let runs = columns::timeline_parts(&report.runs);
    let stats = columns::timeline_stats(&runs);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    parts.head(&stats, &mut out)?;
    write_timeline_rows(parts, &stats, &runs, &mut out, |_| ())?;
    parts.tail(&stats, report, &mut out)?;
    out.flush()?;
    Ok(())
}

/// The rows of `runs`, in order, drawn by `parts` into `out`; each row's cells are also handed to
/// `each` (a caller checking what it draws needs not make them again).
pub fn write_timeline_rows(
    parts: &dyn TimelineParts,
    stats: &columns::ColumnStats,
    runs: &[(&RunSummary, &[RequestRow])],
    out: &mut dyn Write,
    mut each: impl FnMut(&[String]),
) -> std::io::Result<()> {
    let mut line = String::new();
    for &(run, rows) in runs {
        for r in rows {
            let cells = columns::timeline_row(run, r);
            line.clear();
            parts.draw_row(stats, &cells, &mut line);
            out.write_all(line.as_bytes())?;
            each(&cells);
        }
    }
    Ok(())
}

/// What `write` writes, as a string: a table drawn into memory.
pub(crate) fn drawn(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    write(&mut out).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("a table is drawn from strings")
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Terminal table, fitted to a width or wide.
    Table(fit::Fit),
    /// Comma-separated values.
    Csv,
    /// The JSON contract.
    Json,
    /// GitHub-flavoured Markdown tables.
    Markdown,
}

impl ExportFormat {
    /// How this format writes a per-request report in parts, when it needs its columns' stats
    /// first (the terminal table and Markdown).
    pub fn timeline_parts(self) -> Option<Box<dyn TimelineParts>> {
        match self {
            ExportFormat::Table(fit) => Some(Box::new(table::TableExporter::new(fit))),
            ExportFormat::Markdown => Some(Box::new(markdown::MarkdownExporter)),
            ExportFormat::Csv | ExportFormat::Json => None,
        }
    }

    /// The exporter for this format.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            ExportFormat::Table(fit) => Box::new(table::TableExporter::new(fit)),
            ExportFormat::Csv => Box::new(csv::CsvExporter),
            ExportFormat::Json => Box::new(json::JsonExporter),
            ExportFormat::Markdown => Box::new(markdown::MarkdownExporter),
        }
    }
}

/// Where a report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Standard output.
    Stdout,
    /// A file, replaced atomically.
    File(PathBuf),
}

impl Output {
    /// `-` (or nothing) is stdout; anything else a file path.
    pub fn from_arg(arg: Option<&Path>) -> Output {
        match arg {
            None => Output::Stdout,
            Some(p) if p.as_os_str() == "-" => Output::Stdout,
            Some(p) => Output::File(p.to_owned()),
        }
    }

    /// Checks, before any work, that the file can be written and is not one of the inputs.
    pub fn check(&self, inputs: &[PathBuf]) -> Result<()> {
        let Output::File(path) = self else { return Ok(()) };
        let parent = dir_of(path);
        if path.is_dir() {
            bail!("cannot write {}: it is a directory; give a file name (or `-` for stdout)", path.display());
        }
        if !parent.is_dir() {
            bail!(
                "cannot write {}: the directory {} does not exist; create it first",
                path.display(),
                parent.display()
            );
        }
        // Resolved through its deepest existing folder: a file not written yet inside an input
        // folder is refused too (the next walk of that folder would read it as a trace). `-` is
        // what standard input reads: `replay - -o in.jsonl < in.jsonl` would replace its input.
        if let Ok(out) = resolve(path) {
            for input in inputs {
                let input = crate::input::given(input);
                if input.canonicalize().is_ok_and(|i| i == out || out.starts_with(&i)) {
                    bail!(
                        "refusing to write {}: it is an input (or inside one); choose another output path",
                        path.display()
                    );
                }
            }
        }
        if is_special(path) {
            // Written in place when the report is ready; opening it now would block on a pipe
            // with no reader yet, or give the reader an end of file before the report.
            return Ok(());
        }
        // Probe that a file can be created where the target is replaced, without touching it.
        drop(AtomicFile::create(path)?);
        Ok(())
    }

    /// Checks, once the inputs are found, that the output file is none of the files `found`: a
    /// file reached through a symbolic link inside a folder read, or the one standard input is
    /// redirected from, is no path given, so [`Output::check`] does not see it (`replay walk -o
    /// ext/real.jsonl`, with `walk/l.jsonl -> ../ext/real.jsonl`, replaced it). Files are told
    /// apart by identity, one `stat` each; an output that does not exist yet is none of them.
    pub fn check_found(&self, found: &[PathBuf]) -> Result<()> {
        use crate::input::file_id;
        let Output::File(path) = self else { return Ok(()) };
        let Ok(out) = file_id(path) else { return Ok(()) };
        if let Some(file) = found.iter().find(|f| file_id(f).is_ok_and(|id| id == out)) {
            bail!(
                "refusing to write {}: it is an input (found as {}); choose another output path",
                path.display(),
                file.display()
            );
        }
        Ok(())
    }

    /// A writer for output written as it is made (in parts), finished by [`Streamed::finish`]:
    /// stdout, a file written in place when it is not a regular file, or an [`AtomicFile`].
    pub fn stream(&self) -> Result<Streamed> {
        match self {
            Output::Stdout => Ok(Streamed::Stdout(std::io::stdout())),
            Output::File(path) => stream_to(path),
        }
    }

    /// Serialises `value` as indented JSON straight into the output (never whole in memory),
    /// followed by `end`.
    pub fn write_json(&self, value: &impl serde::Serialize, end: &[u8]) -> Result<()> {
        let mut out = self.stream()?;
        let mut buffered = std::io::BufWriter::new(&mut out);
        // Through `io::Error`, which gives back a write error as it was: a closed pipe stays one.
        serde_json::to_writer_pretty(&mut buffered, value).map_err(std::io::Error::from)?;
        buffered.write_all(end)?;
        buffered.flush()?;
        drop(buffered);
        out.finish()
    }

    /// Writes `bytes`: to stdout, or to a temporary file renamed over the target.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        match self {
            Output::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush()).map_err(|e| named(e, "stdout"))?;
                Ok(())
            }
            Output::File(path) => write_atomically(path, bytes),
        }
    }
}

/// How temporary files start: hidden, and recognisably ours. A run killed while writing (`kill -9`,
/// a power cut; Ctrl-C too, which ends the process without unwinding) can leave one behind, never a
/// half-written output; [`remove_leftovers`] removes them from a report directory.
pub const TEMP_PREFIX: &str = ".ctxbudget-";

/// Removes the temporary files and staging folders an interrupted run left in a report directory
/// and in its `subdirs`, before a run writes its own there.
pub fn remove_leftovers(dir: &Path, subdirs: &[&str]) {
    for d in std::iter::once(dir.to_owned()).chain(subdirs.iter().map(|s| dir.join(s))) {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let ours = e.file_name().to_str().is_some_and(|n| n.starts_with(TEMP_PREFIX));
            // Best effort: a leftover that cannot be removed is harmless (hidden, never read).
            match e.file_type() {
                Ok(t) if ours && t.is_file() => {
                    std::fs::remove_file(e.path()).ok();
                }
                // A report's staging folder ([`staged::Staged`]).
                Ok(t) if ours && t.is_dir() => {
                    std::fs::remove_dir_all(e.path()).ok();
                }
                _ => {}
            }
        }
    }
}

/// Removes a report directory's `index` page before any of its other files is replaced, so that
/// an interrupted run leaves no index beside files of another run (the index is written last, so
/// an index exists only when everything it links to is complete and from the same run).
pub fn retire_index(dir: &Path, index: &str) -> Result<()> {
    match std::fs::remove_file(dir.join(index)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot replace {}", dir.join(index).display())),
    }
}

/// Removes the regular files of `dir` whose names `stale` accepts (a report's charts that this
/// run does not write again). Best effort, like the temporaries [`remove_leftovers`] removes: a file
/// that cannot be removed is left, and the page never links it.
pub fn remove_stale(dir: &Path, stale: impl Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let matched = e.file_name().to_str().is_some_and(&stale);
        if matched && e.file_type().is_ok_and(|t| t.is_file()) {
            std::fs::remove_file(e.path()).ok();
        }
    }
}

/// The directory a file path is in (`.` for a bare file name).
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Whether `path` exists and is neither a regular file nor a directory (following links): a
/// character device such as `/dev/null`, a pipe, a socket.
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// `path` made absolute through its deepest existing ancestor (symlinks resolved), so that a file
/// or directory not created yet can be compared with the inputs.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    let base = loop {
        let candidate = if existing.as_os_str().is_empty() { Path::new(".") } else { existing };
        if let Ok(c) = candidate.canonicalize() {
            break c;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => bail!("cannot resolve {}", path.display()),
        }
    };
    Ok(rest.iter().rev().fold(base, |p, name| p.join(name)))
}

/// The file a symbolic link points to (so that the link stays a link and its target is
/// replaced), or `path` itself when it is not a link or its target cannot be resolved.
pub(crate) fn resolve_link(path: &Path) -> PathBuf {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if link { path.canonicalize().unwrap_or_else(|_| path.to_owned()) } else { path.to_owned() }
}

/// Writes `bytes` to `path` through a temporary file in the same directory, then renames it. A
/// path that is not a regular file (`/dev/null`, a pipe) is written in place; a symbolic link's
/// target is the file replaced.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut out = stream_to(path)?;
    out.write_all(bytes)?;
    out.finish()
}

/// `path` written in place when it is not a regular file, else through an [`AtomicFile`].
fn stream_to(path: &Path) -> Result<Streamed> {
    if is_special(path) {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        return Ok(Streamed::InPlace(f, path.to_owned()));
    }
    Ok(Streamed::File(AtomicFile::create(path)?))
}

/// A regular file written through a temporary file beside it (named with [`TEMP_PREFIX`]) and
/// renamed over it by [`AtomicFile::persist`]; dropped without that, the target is untouched and the
/// temporary file removed. A symbolic link is followed and its target replaced.
pub struct AtomicFile {
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl AtomicFile {
    /// Starts writing `path`.
    pub fn create(path: &Path) -> Result<AtomicFile> {
        let target = resolve_link(path);
        let dir = dir_of(&target);
        let tmp = tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .tempfile_in(dir)
            .with_context(|| format!("cannot write in {}", dir.display()))?;
        Ok(AtomicFile { tmp, target })
    }

    /// Renames the file into place.
    pub fn persist(self) -> Result<()> {
        // A temporary file is private (0600); the report is a normal file others may read.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            self.tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).ok();
        }
        self.tmp.as_file().sync_all().ok();
        let target = self.target;
        self.tmp.persist(&target).with_context(|| format!("cannot replace {}", target.display()))?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.flush()
    }
}

/// Output being written as it is made ([`Output::stream`]).
pub enum Streamed {
    /// Standard output.
    Stdout(std::io::Stdout),
    /// What is not a regular file, written in place, and its path.
    InPlace(std::fs::File, PathBuf),
    /// A regular file, renamed into place when finished.
    File(AtomicFile),
}

impl Streamed {
    /// Flushes the output, or renames the file into place.
    pub fn finish(mut self) -> Result<()> {
        self.flush()?;
        match self {
            Streamed::File(f) => f.persist(),
            Streamed::Stdout(_) | Streamed::InPlace(..) => Ok(()),
        }
    }

    /// What the output is called in an error: `stdout` or its path.
    fn name(&self) -> String {
        match self {
            Streamed::Stdout(_) => "stdout".into(),
            Streamed::InPlace(_, path) => path.display().to_string(),
            Streamed::File(f) => f.target.display().to_string(),
        }
    }
}

/// `e` saying which output failed (`cannot write NAME: …`), of the same kind, so that a closed
/// pipe is still recognised as one.
fn named(e: std::io::Error, name: &str) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("cannot write {name}: {e}"))
}

/// Every error names the output (`cannot write NAME: …`): a full disk says which file it could not write.
impl Write for Streamed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = match self {
            Streamed::Stdout(out) => out.write(buf),
            Streamed::InPlace(f, _) => f.write(buf),
            Streamed::File(f) => f.write(buf),
        };
        written.map_err(|e| named(e, &self.name()))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let flushed = match self {
            Streamed::Stdout(out) => out.flush(),
            Streamed::InPlace(f, _) => f.flush(),
            Streamed::File(f) => f.flush(),
        };
        flushed.map_err(|e| named(e, &self.name()))
    }
}

/// Writes numbered parts that arrive in any order, from any thread, in number order: a part is
/// written as soon as every part before it has been, so only the parts that finished early wait in
/// memory (files taken in input order finish in about that order).
pub struct InOrder<W> {
    state: std::sync::Mutex<InOrderState<W>>,
}

struct InOrderState<W> {
    out: W,
    next: usize,
    waiting: std::collections::BTreeMap<usize, Vec<u8>>,
    error: Option<std::io::Error>,
}

impl<W: Write> InOrder<W> {
    /// Parts from number 0 on, written to `out`.
    pub fn new(out: W) -> InOrder<W> {
        InOrder {
            state: std::sync::Mutex::new(InOrderState {
                out,
                next: 0,
                waiting: Default::default(),
                error: None,
            }),
        }
    }

    /// Part `number` as it was rendered: an empty part when it could not be (so that the parts
    /// after it are still written), whose error is given back to be reported after the pass.
    pub fn put_rendered<E>(&self, number: usize, rendered: Result<Vec<u8>, E>) -> Result<(), E> {
        match rendered {
            Ok(part) => {
                self.put(number, part);
                Ok(())
            }
            Err(e) => {
                self.put(number, Vec::new());
                Err(e)
            }
        }
    }

    /// Part `number` (each number once); after a write error, parts are dropped.
    pub fn put(&self, number: usize, part: Vec<u8>) {
        let mut s = crate::lock(&self.state);
        if s.error.is_some() {
            return;
        }
        s.waiting.insert(number, part);
        loop {
            let next = s.next;
            let Some(part) = s.waiting.remove(&next) else { break };
            if let Err(e) = s.out.write_all(&part) {
                s.error = Some(e);
                s.waiting.clear();
                return;
            }
            s.next += 1;
        }
    }

    /// The writer, once parts `0..count` have all been written; else the first write error, or an
    /// error naming the first part that never came.
    pub fn finish(self, count: usize) -> std::io::Result<W> {
        let s = self.state.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        match s.error {
            Some(e) => Err(e),
            None if s.next == count && s.waiting.is_empty() => Ok(s.out),
            None => Err(std::io::Error::other(format!("part {} of {count} was never written", s.next))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_arriving_in_any_order_from_any_thread_are_written_in_number_order() {
        let parts: Vec<Vec<u8>> = (0..200).map(|i| format!("part {i}\n").into_bytes()).collect();
        let whole: Vec<u8> = parts.concat();
        for seed in 0..5usize {
            // A different order each time, put from four threads.
            let mut order: Vec<usize> = (0..parts.len()).collect();
            order.sort_by_key(|&i| (i * 7919 + seed * 104_729) % 211);
            let sink = InOrder::new(Vec::new());
            std::thread::scope(|scope| {
                for chunk in order.chunks(50) {
                    let (sink, parts) = (&sink, &parts);
                    scope.spawn(move || chunk.iter().for_each(|&i| sink.put(i, parts[i].clone())));
                }
            });
            assert_eq!(sink.finish(parts.len()).unwrap(), whole);
        }
        let sink = InOrder::new(Vec::new());
        sink.put(0, b"a".to_vec());
        sink.put(2, b"c".to_vec());
        let e = sink.finish(3).unwrap_err().to_string();
        assert_eq!(e, "part 1 of 3 was never written");
    }

    #[test]
    fn a_part_that_could_not_be_rendered_is_empty_and_the_parts_after_it_are_written() {
        let sink = InOrder::new(Vec::new());
        assert_eq!(sink.put_rendered(2, Ok::<_, &str>(b"c".to_vec())), Ok(()));
        assert_eq!(sink.put_rendered(1, Err::<Vec<u8>, _>("no")), Err("no"));
        assert_eq!(sink.put_rendered(0, Ok::<_, &str>(b"a".to_vec())), Ok(()));
        assert_eq!(sink.finish(3).unwrap(), b"ac");
    }

    #[test]
    fn an_atomic_file_dropped_unpersisted_leaves_the_target_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        std::fs::write(&target, "old").unwrap();
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"new").unwrap();
        drop(f);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"new").unwrap();
        f.persist().unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[test]
    fn a_missing_directory_fails_before_any_work() {
        let e = Output::File("/no/such/dir/out.csv".into()).check(&[]).unwrap_err().to_string();
        assert_eq!(
            e,
            "cannot write /no/such/dir/out.csv: the directory /no/such/dir does not exist; create it first"
        );
    }

    #[test]
    fn a_directory_is_not_an_output_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = Output::File(dir.path().to_owned()).check(&[]).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "cannot write {}: it is a directory; give a file name (or `-` for stdout)",
                dir.path().display()
            )
        );
    }

    #[test]
    fn an_output_equal_to_an_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("t.jsonl");
        std::fs::write(&input, "x").unwrap();
        let e = Output::File(input.clone()).check(std::slice::from_ref(&input)).unwrap_err().to_string();
        assert!(e.contains("it is an input"), "{e}");
        assert_eq!(std::fs::read(&input).unwrap(), b"x");
        // A file not written yet inside an input folder is refused too, and not created.
        let new = dir.path().join("new.csv");
        let e = Output::File(new.clone()).check(&[dir.path().to_owned()]).unwrap_err().to_string();
        assert!(e.contains("it is an input (or inside one)"), "{e}");
        assert!(!new.exists());
        Output::File(new).check(&[input]).unwrap();
    }

    #[test]
    fn a_report_directory_loses_its_leftover_temporaries_and_then_its_index() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("charts")).unwrap();
        for f in
            ["index.html", "data.csv", ".ctxbudget-abc", "charts/.ctxbudget-def", "charts/a.svg", ".keep"]
        {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        remove_leftovers(dir.path(), &["charts"]);
        assert!(dir.path().join("index.html").is_file());
        retire_index(dir.path(), "index.html").unwrap();
        retire_index(dir.path(), "index.html").unwrap();
        let mut left: Vec<String> = Vec::new();
        for d in ["", "charts"] {
            for e in std::fs::read_dir(dir.path().join(d)).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_file() {
                    left.push(format!("{d}/{}", e.file_name().to_string_lossy()));
                }
            }
        }
        left.sort();
        assert_eq!(left, ["/.keep", "/data.csv", "charts/a.svg"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_written_in_place_and_stays_a_pipe() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo is not available");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let out = Output::File(fifo.clone());
        write_atomically(&fifo, b"report").unwrap();
        assert_eq!(reader.join().unwrap(), b"report");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing created beside it");
        // The check before work neither opens it (which would block with no reader) nor creates
        // a probe beside it.
        out.check(&[]).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_stays_a_link_and_its_target_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let target = dir.path().join("real/r.json");
        let link = dir.path().join("r.json");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        Output::File(link.clone()).check(&[]).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path().join("real")).unwrap().count(), 1);
    }

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        std::fs::write(&p, "old").unwrap();
        write_atomically(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
