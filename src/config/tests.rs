//! Unit tests of the configuration: command lines resolved, and the usage errors of bad ones.

use super::*;
use clap::Parser;

fn config(args: &[&str]) -> Result<Config, UsageError> {
    Config::from_cli(Cli::try_parse_from(args).unwrap())
}

#[test]
fn default_policies_parse() {
    assert_eq!(policies(&[]).unwrap().len(), 4);
}

#[test]
fn a_bad_policy_is_a_usage_error() {
    let e = config(&["ctxbudget", "replay", "x", "--policy", "nope"]).err().unwrap();
    assert!(e.0.starts_with("unknown policy `nope`"), "{e}");
}

#[test]
fn agent_flags_add_their_folders_under_home() {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let Some(home) = home.filter(|h| !h.as_os_str().is_empty()) else { return };
    let Config::Reconcile(c) = config(&["ctxbudget", "reconcile", "x", "--codex"]).ok().unwrap() else {
        panic!()
    };
    assert_eq!(c.source.paths, [PathBuf::from("x"), home.join(".codex/sessions")]);
    let Config::Replay(c) = config(&["ctxbudget", "replay", "--claude"]).ok().unwrap() else { panic!() };
    assert_eq!(c.input.source.paths, [home.join(".claude/projects")]);
}

#[test]
fn reconcile_without_inputs_is_a_usage_error() {
    let e = config(&["ctxbudget", "reconcile"]).err().unwrap();
    assert!(e.0.contains("--claude/--codex"), "{e}");
    let e = config(&["ctxbudget", "reconcile", "x", "--input-format", "nope"]).err().unwrap();
    assert!(e.0.starts_with("unknown input format `nope`"), "{e}");
}

#[test]
fn decide_with_defaults_to_each_anchor_and_keeps_the_tokenizer_names() {
    let Config::Replay(c) = config(&["ctxbudget", "replay", "x"]).ok().unwrap() else { panic!() };
    assert_eq!((c.input.decide, c.input.decide_with), (DecideWith::Anchor, Tokenizer::Estimate));
    for (arg, expected) in [
        ("real", DecideWith::Real),
        ("estimate", DecideWith::Tokenizer(Tokenizer::Estimate)),
        ("o200k", DecideWith::Tokenizer(Tokenizer::O200k)),
        ("cl100k", DecideWith::Tokenizer(Tokenizer::Cl100k)),
    ] {
        let Config::Replay(c) = config(&["ctxbudget", "replay", "x", "--decide-with", arg]).ok().unwrap()
        else {
            panic!()
        };
        assert_eq!(c.input.decide, expected, "{arg}");
    }
}

#[test]
fn transforms_are_parsed_in_order_and_bad_ones_are_usage_errors() {
    let args = ["ctxbudget", "replay", "x", "--transform", "spill:head=3", "--transform", "truncate:codex"];
    let Config::Replay(c) = config(&args).ok().unwrap() else { panic!() };
    let specs: Vec<String> = c.input.transforms.iter().map(|t| t.spec()).collect();
    assert_eq!(specs, ["spill:head=3", "truncate:codex"]);
    let e = config(&["ctxbudget", "replay", "x", "--transform", "gzip"]).err().unwrap();
    assert!(e.0.starts_with("unknown transform `gzip`"), "{e}");
}

#[test]
fn an_unknown_input_format_lists_the_valid_ones() {
    let e = config(&["ctxbudget", "replay", "x", "--input-format", "goose"]).err().unwrap();
    assert!(e.0.contains("valid: auto, claude-code, "), "{e}");
    for format in crate::format::all() {
        assert!(e.0.contains(format.name()), "{e}");
    }
}
