//! Which provider a conversation's usage comes from, read from the model its log names or else
//! from the format's name, whether that provider's tokenizer is public, and the ratio a
//! provider's conversations take when their log records too little usage to fit one. Pure: no
//! I/O.

/// Under `--tokenizer provider`, the ratio of a conversation whose provider's tokenizer is not
/// public, that records too little usage to fit one, read by a format with no default
/// (the agent's, `calibrate::agent_default`): the median over the corpus conversations of that provider with a fitted
/// ratio (docs/calibration.md, "Without usage"), and no overhead (it is the agent's).
pub fn provider_default(format: &str, model: Option<&str>) -> Option<f64> {
    match provider(format, model).0 {
        "Anthropic" => Some(1.25),
        "Google" => Some(1.07),
        _ => None,
    }
}

/// The provider a format's recorded usage comes from, and whether its tokenizer is public.
pub fn provider_of(format: &str) -> (&'static str, bool) {
    if format.contains("claude") || format.contains("anthropic") {
        ("Anthropic", false)
    } else if format.contains("gemini") {
        ("Google", false)
    } else if format.contains("codex") || format.contains("openai") {
        ("OpenAI", true)
    } else {
        ("unknown", false)
    }
}

/// The provider of a model the log names, and whether its tokenizer is public: `claude-*`
/// Anthropic, `gemini-*` Google, `gpt-*`, `chatgpt-*`, `codex-*` and the o-series (`o1`, `o3-mini`,
/// `o4-mini`, …) OpenAI, read after any `provider/` prefix (`openai/gpt-4o-mini`,
/// `google/gemini-3-pro-preview`) and anywhere in a cloud name (`us.anthropic.claude-…`); `None`
/// for a model none of these names.
pub fn provider_of_model(model: &str) -> Option<(&'static str, bool)> {
    let model = model.trim().to_ascii_lowercase();
    let name = model.rsplit('/').next().unwrap_or_default();
    let o_series = name.strip_prefix('o').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    if name.contains("claude") {
        Some(("Anthropic", false))
    } else if name.contains("gemini") {
        Some(("Google", false))
    } else if o_series || ["gpt-", "chatgpt", "codex"].iter().any(|p| name.starts_with(p)) {
        Some(("OpenAI", true))
    } else {
        None
    }
}

/// The first of `models` (a conversation's, in order) whose provider [`provider_of_model`] knows.
pub fn known_model<'a>(mut models: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    models.find(|m| provider_of_model(m).is_some())
}

/// The provider of a conversation read by `format` whose log names `model`
/// ([`known_model`]): the model's where it is known, else the format's ([`provider_of`]).
pub fn provider(format: &str, model: Option<&str>) -> (&'static str, bool) {
    model.and_then(provider_of_model).unwrap_or_else(|| provider_of(format))
}

/// Whether the conversation's provider ([`provider`]) is OpenAI, whose tokenizers are public.
pub(super) fn openai(format: &str, model: Option<&str>) -> bool {
    provider(format, model) == ("OpenAI", true)
}
