//! A report directory's new files, built beside the old ones and moved in only when all are
//! written: a run that fails on the way (a full disk, a chart that cannot be drawn, an input
//! that turns out unreadable) leaves the previous report whole, index included.
//!
//! The new files go to a hidden folder inside the report directory (named with
//! [`super::TEMP_PREFIX`], so the same file system: moving a file in is a rename, which needs no
//! space and cannot be cut half-way). Moving in retires the old index first and writes the new
//! one last, so an index only ever stands beside a complete report of its own run. Dropped
//! without [`Staged::move_in`], the folder and what it holds are removed.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The folder a report is built in before it replaces the one in its directory.
pub struct Staged {
    dir: tempfile::TempDir,
    out: PathBuf,
    /// The files written, relative to both folders, in the order they are moved in.
    names: Vec<String>,
}

impl Staged {
    /// Creates the hidden folder in the report directory `out` (which exists), with `subdirs`.
    pub fn create(out: &Path, subdirs: &[&str]) -> Result<Staged> {
        let dir = tempfile::Builder::new()
            .prefix(super::TEMP_PREFIX)
            .tempdir_in(out)
            .with_context(|| format!("cannot write into {}", out.display()))?;
        for sub in subdirs {
            let path = dir.path().join(sub);
            std::fs::create_dir(&path).with_context(|| format!("cannot create {}", path.display()))?;
        }
        Ok(Staged { dir, out: out.to_owned(), names: Vec::new() })
    }

    /// Where the file `name` (relative to the report directory) is written for now; the caller
    /// writes it, and it is moved in with the others.
    pub fn path(&mut self, name: &str) -> PathBuf {
        self.names.push(name.to_owned());
        self.dir.path().join(name)
    }

    /// Writes the file `name` (relative to the report directory).
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let mut file = self.file(name)?;
        file.write_all(bytes)?;
        Ok(file.finish()?)
    }

    /// Starts writing the file `name` (relative to the report directory), buffered; its errors
    /// name the file where it will stand (`cannot write REPORT/NAME: …`), not the hidden folder.
    pub fn file(&mut self, name: &str) -> Result<StagedFile> {
        let shown = self.out.join(name);
        let path = self.path(name);
        let file =
            std::fs::File::create(&path).with_context(|| format!("cannot write {}", shown.display()))?;
        Ok(StagedFile { out: std::io::BufWriter::with_capacity(1 << 16, file), shown })
    }

    /// Moves every file written into the report directory, `index` last after the old `index` is
    /// removed; `before` runs once the old index is gone, before any file is replaced (to remove
    /// files of the old report that this one does not replace). A file that is a symbolic link in
    /// the report directory stays a link, and its target is replaced.
    pub fn move_in(self, index: &str, before: impl FnOnce()) -> Result<()> {
        super::retire_index(&self.out, index)?;
        before();
        let (last, rest): (Vec<&String>, Vec<&String>) = self.names.iter().partition(|n| *n == index);
        for name in rest.into_iter().chain(last) {
            let (from, to) = (self.dir.path().join(name), self.out.join(name));
            let target = super::resolve_link(&to);
            if std::fs::rename(&from, &target).is_err() {
                // Another file system (a link's target elsewhere): copied through a temporary
                // file beside the target, renamed as every output is.
                let bytes =
                    std::fs::read(&from).with_context(|| format!("cannot read {}", from.display()))?;
                super::write_atomically(&to, &bytes)?;
            }
        }
        Ok(())
    }
}

/// A file of a [`Staged`] report being written.
pub struct StagedFile {
    out: std::io::BufWriter<std::fs::File>,
    shown: PathBuf,
}

impl StagedFile {
    /// Flushes what is buffered.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.flush()
    }

    fn named(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(e.kind(), format!("cannot write {}: {e}", self.shown.display()))
    }
}

impl Write for StagedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf).map_err(|e| self.named(e))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush().map_err(|e| self.named(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_report_dropped_leaves_the_old_one_whole_and_no_folder() {
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("index.html"), "old index").unwrap();
        std::fs::write(out.path().join("a.csv"), "old a").unwrap();
        let mut staged = Staged::create(out.path(), &["charts"]).unwrap();
        staged.write("a.csv", b"new a").unwrap();
        staged.write("charts/x.svg", b"new x").unwrap();
        drop(staged);
        let names: Vec<_> = std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert_eq!(std::fs::read(out.path().join("a.csv")).unwrap(), b"old a");
        assert_eq!(std::fs::read(out.path().join("index.html")).unwrap(), b"old index");
    }

    #[test]
    fn a_staged_report_moved_in_replaces_the_files_and_the_index_last() {
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir(out.path().join("charts")).unwrap();
        std::fs::write(out.path().join("index.html"), "old index").unwrap();
        std::fs::write(out.path().join("charts/old.svg"), "old").unwrap();
        let mut staged = Staged::create(out.path(), &["charts"]).unwrap();
        staged.write("index.html", b"new index").unwrap();
        staged.write("a.csv", b"new a").unwrap();
        staged.write("charts/x.svg", b"new x").unwrap();
        let charts = out.path().join("charts");
        staged
            .move_in("index.html", || {
                assert!(!out.path().join("index.html").exists(), "the old index is gone first");
                std::fs::remove_file(charts.join("old.svg")).unwrap();
            })
            .unwrap();
        assert_eq!(std::fs::read(out.path().join("index.html")).unwrap(), b"new index");
        assert_eq!(std::fs::read(out.path().join("a.csv")).unwrap(), b"new a");
        assert_eq!(std::fs::read(charts.join("x.svg")).unwrap(), b"new x");
        let left: Vec<_> = std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 3, "the staging folder is gone: {left:?}");
    }
}
