use super::*;
use crate::export::columns::{self, Tabular};
use crate::export::table;
use proptest::prelude::*;

#[test]
fn the_width_is_columns_or_100_and_wide_is_wide() {
    assert_eq!(Fit::new(false, None), Fit::Columns(100));
    assert_eq!(Fit::new(false, Some("132")), Fit::Columns(132));
    assert_eq!(Fit::new(false, Some(" 80\n")), Fit::Columns(80));
    assert_eq!(Fit::new(false, Some("")), Fit::Columns(100));
    assert_eq!(Fit::new(false, Some("0")), Fit::Columns(100));
    assert_eq!(Fit::new(false, Some("-5")), Fit::Columns(100));
    assert_eq!(Fit::new(false, Some("12")), Fit::Columns(MIN_WIDTH));
    assert_eq!(Fit::new(true, Some("80")), Fit::Wide);
}

#[test]
fn numbers_get_thousands_separators_and_nothing_else_does() {
    for (cell, grouped) in [
        ("0", "0"),
        ("999", "999"),
        ("1000", "1,000"),
        ("1243308", "1,243,308"),
        ("-1234", "-1,234"),
        ("-123", "-123"),
        ("65536.1194", "65,536.1194"),
        ("1234.5%", "1,234.5%"),
        ("37.6%", "37.6%"),
        ("", ""),
        ("12a4567", "12a4567"),
        ("2026-01-01", "2026-01-01"),
        ("1.2.3", "1.2.3"),
        ("1234.", "1234."),
    ] {
        assert_eq!(group_thousands(cell), grouped, "{cell}");
        assert_eq!(separators(cell), grouped.len() - cell.len(), "{cell}");
    }
}

#[test]
fn a_long_path_keeps_its_file_name() {
    let path = "../shared/corpus/claude-code/codemie-code/claude/incremental-subagents/turn-2/subagents/agent-a485154.jsonl";
    assert_eq!(shorten_path(path, 200), path);
    assert_eq!(shorten_path(path, 30), "../shared…/agent-a485154.jsonl");
    assert_eq!(shorten_path(path, 24), "../…/agent-a485154.jsonl");
    assert_eq!(shorten_path(path, 22), "…/agent-a485154.jsonl");
    assert_eq!(shorten_path(path, 12), "agent-…jsonl");
    assert_eq!(shorten_path("no-slash-at-all-here.jsonl", 10), "no-sl…sonl");
    for w in 1..path.len() {
        assert!(shorten_path(path, w).width() <= w, "{w}");
    }
}

#[test]
fn text_is_cut_in_its_middle_by_display_width() {
    assert_eq!(shorten_middle("3fe1b6bc-1c2d-4e5f", 9), "3fe1…4e5f");
    // Wide characters count two columns each.
    let cut = shorten_middle("日本語のツール名です", 9);
    assert!(cut.width() <= 9 && cut.contains('…'), "{cut}");
    assert_eq!(shorten_middle("abc", 0), "");
}

#[test]
fn wrapping_breaks_after_spaces_commas_and_colons() {
    assert_eq!(wrap("budget:max=100000,target=50000", 12), ["budget:", "max=100000,", "target=50000"]);
    assert_eq!(
        wrap("never fired (peak context 9877 tokens)", 14),
        ["never fired", "(peak context", "9877 tokens)"]
    );
    assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
    assert_eq!(wrap("", 4), [""]);
}

proptest! {
    /// Wrapped lines fit, and only spaces are lost.
    #[test]
    fn wrapped_lines_fit_and_keep_the_text(text in "[a-z日 ,:]{0,60}", width in 2usize..30) {
        let lines = wrap(&text, width);
        for l in &lines {
            prop_assert!(l.width() <= width, "{l:?}");
        }
        let kept: String = lines.concat().chars().filter(|c| *c != ' ').collect();
        let all: String = text.chars().filter(|c| *c != ' ').collect();
        prop_assert_eq!(kept, all);
    }

    /// A fitted table of any cells is no wider than its width (a run's table: a path, an id, a
    /// policy and numbers up to `u64::MAX`), and draws the same cells at any width it fits in.
    #[test]
    fn a_fitted_table_is_no_wider_than_its_width(
        rows in prop::collection::vec(
            ("[a-z/.]{0,120}", "[a-z0-9日-]{0,40}", "[a-z:=,0-9 ]{0,50}", prop::collection::vec(any::<u64>(), 9)),
            0..6,
        ),
        width in 60usize..160,
    ) {
        let headers = columns::RUNS_BRIEF_HEADERS.to_vec();
        let rows = rows
            .into_iter()
            .map(|(trace, conversation, policy, numbers)| {
                let mut row = vec![trace, conversation, policy];
                row.extend(numbers.iter().map(u64::to_string));
                row
            })
            .collect();
        let drawn = table::render_fitted(&Tabular { headers, rows }, Fit::Columns(width));
        let widths: Vec<usize> = drawn.lines().map(UnicodeWidthStr::width).collect();
        prop_assert!(widths.iter().all(|&w| w <= width), "{widths:?}\n{drawn}");
        prop_assert!(widths.windows(2).all(|w| w[0] == w[1]), "a frame of one width\n{drawn}");
    }
}

#[test]
fn the_columns_kept_are_dropped_from_the_last_when_they_cannot_fit() {
    let t = Tabular {
        headers: columns::TOTALS_HEADERS.to_vec(),
        rows: vec![
            ["keep-turns:n=3", "256", "4", "26", "8204", "67206", "37.6%", "12296", "8"]
                .map(str::to_owned)
                .to_vec(),
        ],
    };
    let wide = table::render_fitted(&t, Fit::Wide);
    assert_eq!(wide, table::render_tabular(&t), "wide is the table as it was");
    let fitted = table::render_fitted(&t, Fit::Columns(100));
    assert!(
        fitted.contains("67,206") && fitted.contains("12,296") && fitted.contains("(tokens)"),
        "{fitted}"
    );
    assert!(!fitted.contains("256"), "threshold is not kept\n{fitted}");
    let narrow = table::render_fitted(&t, Fit::Columns(50));
    assert!(narrow.lines().all(|l| l.width() <= 50), "{narrow}");
    assert!(narrow.contains("keep-turns:n=3") && !narrow.contains("12,296"), "{narrow}");
}

#[test]
fn every_view_keeps_columns_of_its_table() {
    for v in VIEWS {
        for k in v.keep {
            assert!(v.headers.contains(k), "{k} is not a column of {:?}", v.headers);
        }
        assert_eq!(view(v.headers), Some(&v), "one view per table");
    }
}
