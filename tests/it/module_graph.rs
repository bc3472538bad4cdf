//! The crate's top-level modules form a DAG: no module reaches itself through `crate::` paths.
//!
//! Reads every `src/**/*.rs`, takes the top-level module each file belongs to (`src/policy/gemini.rs`
//! is `policy`), and adds an edge for every `crate::other` it names outside test-only code
//! (`#[cfg(test)]` items and files declared `#[cfg(test)] mod name;`): a module's unit tests may
//! drive it through a later stage, as the policy tests do through the replay. Doc links count: a
//! link up the stack is a dependency a reader follows. The CLI layer (`cmd`, `cli`, `config`,
//! `main`, `lib`) may use anything and is left out; the library must not name it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules that are the command-line program, not the library.
const CLI_LAYER: &[&str] = &["cmd", "cli", "config", "lib", "main"];

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read src dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The top-level module a file under `src` belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("non-empty path");
    let first = first.as_os_str().to_string_lossy();
    first.strip_suffix(".rs").unwrap_or(&first).to_owned()
}

/// Where the code after `from` stops being inside the `{ ... }` block opened at or after `from`:
/// braces are counted outside comments, strings, raw strings and char literals.
fn block_end(text: &str, from: usize) -> usize {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 1);
            }
            b'r' if matches!(b.get(i + 1), Some(b'#' | b'"')) && raw_prefix(b, i) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let start = i + 2 + hashes;
                    i = text[start..].find(&close).map_or(b.len(), |n| start + n + close.len() - 1);
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i = text[i + 2..].find('\'').map_or(b.len(), |n| i + 2 + n);
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Whether the `r` at `i` starts a raw string (`r"`, `r#"`, `br"`), not ends an identifier.
fn raw_prefix(b: &[u8], i: usize) -> bool {
    !ident_byte(b, i) || (b[i - 1] == b'b' && !ident_byte(b, i - 1))
}

/// Whether the byte before `i` continues an identifier (so `r` at `i` is not a raw-string prefix).
fn ident_byte(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// `text` without its `#[cfg(test)]` items; the names of test-only modules declared as files.
fn without_tests(text: &str) -> (String, Vec<String>) {
    const MARK: &str = "#[cfg(test)]";
    let mut kept = String::new();
    let mut test_files = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        kept.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        let end = block_end(item, 0);
        let decl = item[..end].trim();
        let words: Vec<&str> = decl.strip_suffix(';').unwrap_or("").split_whitespace().collect();
        if let [.., "mod", name] = words[..] {
            test_files.push(name.to_owned());
        }
        rest = &item[end..];
    }
    kept.push_str(rest);
    (kept, test_files)
}

/// The modules named as `crate::name` in `text`.
fn crate_paths(text: &str) -> BTreeSet<String> {
    text.match_indices("crate::")
        .filter(|(at, _)| !ident_byte(text.as_bytes(), *at))
        .map(|(at, m)| {
            let tail = &text[at + m.len()..];
            let len = tail.find(|c: char| !(c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()));
            tail[..len.unwrap_or(tail.len())].to_owned()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// Edges `module -> {module it names}` with, per edge, the files that make it.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The top-level module graph of the crate's library code.
fn module_graph(src: &Path) -> Graph {
    let files = rust_files(src);
    let texts: Vec<(PathBuf, String)> =
        files.iter().map(|f| (f.clone(), std::fs::read_to_string(f).expect("read source"))).collect();
    let mut test_only: BTreeSet<PathBuf> = BTreeSet::new();
    for (file, text) in &texts {
        let dir = if file.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs") {
            file.parent().expect("parent").to_path_buf()
        } else {
            file.with_extension("")
        };
        for name in without_tests(text).1 {
            test_only.insert(dir.join(format!("{name}.rs")));
            test_only.insert(dir.join(&name).join("mod.rs"));
        }
    }
    let mut graph = Graph::new();
    for (file, text) in &texts {
        let from = module_of(src, file);
        if test_only.contains(file) || CLI_LAYER.contains(&from.as_str()) {
            continue;
        }
        let rel = file.strip_prefix(src).expect("under src").display().to_string();
        for to in crate_paths(&without_tests(text).0) {
            if to != from {
                graph.entry(from.clone()).or_default().entry(to).or_default().insert(rel.clone());
            }
        }
    }
    graph
}

/// A cycle through `start`, if there is one, as the modules in order.
fn cycle_from(graph: &Graph, start: &str) -> Option<Vec<String>> {
    let mut path = vec![start.to_owned()];
    let mut seen = BTreeSet::new();
    fn walk(g: &Graph, start: &str, path: &mut Vec<String>, seen: &mut BTreeSet<String>) -> bool {
        let here = path.last().expect("non-empty").clone();
        for next in g.get(&here).into_iter().flat_map(|e| e.keys()) {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(g, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    walk(graph, start, &mut path, &mut seen).then_some(path)
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_library_modules_import_each_other_without_a_cycle() {
    let graph = module_graph(&src_dir());
    assert!(graph.contains_key("replay") && graph.contains_key("policy"), "graph read: {graph:?}");
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_from(&graph, m))
        .map(|cycle| {
            let mut steps = Vec::new();
            for (i, from) in cycle.iter().enumerate() {
                let to = &cycle[(i + 1) % cycle.len()];
                let files: Vec<&String> = graph[from][to].iter().collect();
                steps.push(format!("{from} -> {to} (in {files:?})"));
            }
            steps.join(", ")
        })
        .collect();
    assert!(cycles.is_empty(), "import cycles between top-level modules:\n{}", cycles.join("\n"));
}

#[test]
fn the_library_does_not_name_the_command_line_layer() {
    let graph = module_graph(&src_dir());
    let up: Vec<String> = graph
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |(t, files)| (from, t, files)))
        .filter(|(_, to, _)| CLI_LAYER.contains(&to.as_str()))
        .map(|(from, to, files)| format!("{from} -> {to} (in {files:?})"))
        .collect();
    assert!(up.is_empty(), "library modules naming the CLI layer:\n{}", up.join("\n"));
}

#[test]
fn test_only_code_is_left_out_and_a_cycle_is_found() {
    let text = "use crate::a;\n#[cfg(test)]\nmod tests {\n    let s = \"}\";\n    use crate::b;\n}\n#[cfg(test)]\nmod testing;\nuse crate::c::{x};\n";
    let (kept, test_files) = without_tests(text);
    assert_eq!(crate_paths(&kept), ["a", "c"].map(String::from).into());
    assert_eq!(test_files, ["testing"]);
    let mut g = Graph::new();
    for (a, b) in [("x", "y"), ("y", "z"), ("z", "x"), ("z", "w")] {
        g.entry(a.into()).or_default().entry(b.into()).or_default().insert(format!("{a}.rs"));
    }
    assert_eq!(cycle_from(&g, "x"), Some(vec!["x".into(), "y".into(), "z".into()]));
    assert_eq!(cycle_from(&g, "w"), None);
}
