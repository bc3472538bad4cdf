//! Unit tests of `input` (a sibling file, so `input.rs` stays under 800 lines).
use super::*;

/// A one-line native log: what a walk reads (a file no format reads, such as `{}`, it passes over).
const LOG: &str = "{\"type\":\"user\",\"text\":\"hi\"}\n";

#[test]
fn directories_are_walked_in_sorted_order_with_hidden_folders_but_not_vcs_or_docs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("b/sub")).unwrap();
    std::fs::create_dir_all(root.join(".hidden")).unwrap();
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    for f in [
        "b/sub/z.jsonl",
        "a.jsonl",
        "b/y.json",
        ".hidden/x.jsonl",
        ".hidden/.DS_Store",
        ".git/objects/o.jsonl",
        "README.md",
        "b/agent.meta.json",
    ] {
        std::fs::write(root.join(f), LOG).unwrap();
    }
    let found = discover(&[root.to_owned()]);
    let rel: Vec<String> =
        found.files.iter().map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(rel, [".hidden/x.jsonl", "a.jsonl", "b/sub/z.jsonl", "b/y.json"]);
    assert!(found.errors.is_empty());
}

#[test]
fn a_hidden_file_named_explicitly_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(".session.jsonl");
    std::fs::write(&p, "{}").unwrap();
    let found = discover(std::slice::from_ref(&p));
    assert_eq!(found.files, [p]);
    assert_eq!(found.explicit, [true]);
}

#[test]
fn agent_homes_are_read_in_place_under_home() {
    let homes = agent_homes(Path::new("/home/u"), &[AgentHome::Claude, AgentHome::Codex]);
    assert_eq!(homes, [PathBuf::from("/home/u/.claude/projects"), PathBuf::from("/home/u/.codex/sessions")]);
}

#[cfg(unix)]
#[cfg(target_os = "linux")]
#[test]
fn every_agent_folder_is_where_its_agent_keeps_sessions_on_linux() {
    let homes = agent_homes(Path::new("/h"), &AgentHome::ALL);
    let want = [
        "/h/.claude/projects",
        "/h/.codex/sessions",
        "/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
        "/h/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks",
        "/h/.local/share/opencode/storage",
    ];
    assert_eq!(homes, want.map(PathBuf::from));
    let flags: Vec<&str> = AgentHome::ALL.iter().map(|a| a.flag()).collect();
    assert_eq!(flags, ["--claude", "--codex", "--cline", "--roo", "--opencode"]);
}

#[test]
fn a_symlink_loop_is_walked_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::write(dir.path().join("d/t.jsonl"), LOG).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("d/loop")).unwrap();
    let found = discover(&[dir.path().to_owned()]);
    assert_eq!(found.files.len(), 1, "{:?}", found.files);
}

#[test]
fn one_file_given_twice_found_in_a_folder_or_through_a_link_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let (d, t) = (dir.path().join("d"), dir.path().join("d/t.jsonl"));
    std::fs::create_dir(&d).unwrap();
    std::fs::write(&t, LOG).unwrap();
    std::fs::write(d.join("u.jsonl"), LOG).unwrap();
    std::os::unix::fs::symlink(&t, d.join("v.jsonl")).unwrap();
    let found = discover(&[d.join("u.jsonl"), d.clone(), t.clone()]);
    assert_eq!(found.files, [d.join("u.jsonl"), t.clone()]);
    assert_eq!(found.explicit, [true, true], "t.jsonl was named too");
    let shown = |p: &Path| p.display().to_string();
    assert_eq!(
        found.warnings,
        [
            format!("{}: given or found more than once; read once", shown(&d.join("u.jsonl"))),
            format!(
                "{}: given or found more than once (first as {}); read once",
                shown(&d.join("v.jsonl")),
                shown(&t)
            ),
            format!("{}: given or found more than once; read once", shown(&t)),
        ]
    );
}

#[test]
fn a_missing_path_is_reported_not_fatal() {
    let found = discover(&[PathBuf::from("/definitely/not/here")]);
    assert_eq!(found.errors, ["/definitely/not/here: no such file or directory"]);
}

#[test]
fn an_empty_file_matches_no_format() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty.jsonl");
    std::fs::write(&p, "").unwrap();
    let e = load(&p, None).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("{}: the file is empty; nothing to replay (a session not written yet?)", p.display())
    );
}

#[test]
fn a_file_larger_than_the_head_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.jsonl");
    let line = format!("{{\"type\":\"user\",\"text\":\"{}\"}}\n", "x".repeat(1000));
    std::fs::write(&p, line.repeat(200)).unwrap();
    let t = load(&p, None).unwrap();
    assert_eq!(t.format, "native");
    assert_eq!(t.conversations[0].items.len(), 200);
}

#[test]
fn a_walk_passes_over_the_files_no_format_reads_and_names_the_first_few_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (name, text) in [
        ("a.jsonl", LOG),
        ("b.json", "{}"),
        ("c.jsonl", ""),
        ("d.log", "plain"),
        ("e.txt", "x"),
        ("f.rs", ""),
    ] {
        std::fs::write(root.join(name), text).unwrap();
    }
    let found = discover(&[root.to_owned()]);
    assert_eq!(found.files, [root.join("a.jsonl")]);
    assert_eq!(found.explicit, [false]);
    assert_eq!(
        found.warnings,
        [format!(
            "{}: 5 file(s) passed over as no agent log, by their extension (.rs 1) and by their content \
             (b.json: no format recognises it; c.jsonl: empty; d.log: no format recognises it; and 1 more); \
             name a file to read it anyway",
            root.display()
        )]
    );
    // Not by content: every file under a log's name is kept, to be read with the format forced.
    let found = discover_logs(&[root.to_owned()], false, false);
    assert_eq!(found.files.len(), 5, "{:?}", found.files);
    // Named, a file is never passed over.
    assert_eq!(discover(&[root.join("b.json")]).files, [root.join("b.json")]);
    assert!(not_a_log(&root.join("a.jsonl")).is_none());
    assert!(matches!(not_a_log(&root.join("c.jsonl")), Some(TraceError::Empty { .. })));
}
