//! The tokenizer tables built in the arena (`ctxbudget::arena`, installed here as the binary
//! installs it) count like tables built by the system allocator: each exact counter against a
//! tiktoken-rs encoding built outside the arena, on the bundled traces' texts and on texts chosen
//! to reach rare tokens (long words, non-ASCII, whitespace runs, digits).

use ctxbudget::arena::{Allocator, in_use};
use ctxbudget::tokens::{Backend, Tokenizer};

#[global_allocator]
static ALLOCATOR: Allocator = Allocator;

/// Every line of the bundled traces (JSON, so every kind of text they hold, escaped or not),
/// and texts that reach the vocabulary's rarer corners.
fn texts() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .expect("traces/")
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .flat_map(|f| f.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    texts.extend([
        "Pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism".to_owned(),
        "日本語のテキスト、中文文本，한국어 텍스트, Ελληνικά, русский текст, עברית, العربية".to_owned(),
        "emoji 🦀🚀👩‍💻 and combining e\u{301}\u{302} marks".to_owned(),
        format!("{}x{}\n\n\t{}", " ".repeat(300), "\t".repeat(50), "\r\n".repeat(40)),
        "1234567890 3.14159 0xDEADBEEF 1e-10 ١٢٣".to_owned(),
        "fn main() { println!(\"{:?}\", vec![1, 2, 3].iter().map(|x| x * 2).collect::<Vec<_>>()); }"
            .to_owned(),
    ]);
    texts
}

#[test]
fn tables_built_in_the_arena_count_like_tables_built_outside_it() {
    let texts = texts();
    assert!(texts.len() > 50, "only {} texts", texts.len());
    let before = in_use();
    let o200k = tiktoken_rs::o200k_base().unwrap();
    let cl100k = tiktoken_rs::cl100k_base().unwrap();
    assert_eq!(in_use(), before, "the references are built outside the arena");
    for (tokenizer, reference) in [(Tokenizer::O200k, &o200k), (Tokenizer::Cl100k, &cl100k)] {
        for backend in Backend::ALL {
            let counter = tokenizer.counter_with(backend);
            let was = in_use();
            counter.prepare();
            // The arena is handed out in chunks of 1 MB; every encoding's build needs more.
            assert!(
                in_use() > was,
                "{tokenizer} {backend}: the tables were not built in the arena ({} → {} bytes)",
                was,
                in_use()
            );
            for text in &texts {
                let want = reference.encode_ordinary(text).len() as u64;
                assert_eq!(
                    counter.count(text),
                    want,
                    "{tokenizer} {backend}: {:?}",
                    &text[..text.len().min(80)]
                );
            }
        }
    }
}
