//! Tests of the OpenClaw policy: its TTL and ratio triggers, its soft trim and hard clear, and
//! the tracked state checked against recomputing every request on generated sessions.

use std::collections::BTreeMap;

use super::{
    Capabilities, Content, Edit, IMAGE_CHARS, OpenClaw, Policy, PolicyReport, PrefixMax, ResultState, View,
};
use crate::measure::{MeasureOptions, MeasuredConversation};
use crate::model::Conversation;
use crate::policy::PolicySpec;
use crate::policy::testing::{Convo, THRESHOLD, draw, meter, replay_spec, text};
use crate::replay::replay;
use crate::result::Run;
use crate::tokens::DecideWith;

/// A user prompt at minute 0, then steps one minute apart, each with a 10,000-char output.
fn session(steps: usize) -> Convo {
    let mut c = Convo::new().user("go").at(0.0).request();
    for i in 0..steps {
        c = c.assistant("ok").tool("read", text(10_000)).at(1.0 + i as f64).request();
    }
    c
}

/// A window of 25,000 tokens = 100,000 chars: soft trim from 30,000 chars, hard clear from 50,000.
const WIDE: &str = "openclaw:context_window=25000,min_prunable_tool_chars=10000";
/// A window of 20,000 tokens = 80,000 chars: hard clear from 40,000.
const SMALL: &str = "openclaw:context_window=20000,min_prunable_tool_chars=10000,on=content";

#[test]
fn a_ttl_of_0_turns_the_pruning_off() {
    // Upstream: `if (!lastTouch || ttlMs <= 0) shouldPrune = false`. A 15-minute gap before
    // request 9 would hard-clear under a 1 s TTL; under 0 nothing happens, with a warning.
    let spec = "openclaw:ttl=0,context_window=20000,min_prunable_tool_chars=10000";
    let r = replay_spec(session(8).at(20.0).request(), spec);
    assert!(r.edits.iter().all(Vec::is_empty));
    assert_eq!(
        r.warnings,
        ["`ttl=0` turns OpenClaw's cache-ttl pruning off (as OpenClaw does): it never fires"]
    );
    let r = replay_spec(session(8).at(20.0).request(), &spec.replace("ttl=0", "ttl=1s"));
    assert!(!r.cleared_before(9).is_empty());
}

#[test]
fn never_fires_inside_the_ttl() {
    let r = replay_spec(session(8), SMALL);
    assert!(r.edits.iter().all(Vec::is_empty), "requests one minute apart never pass a 5 min TTL");
    assert!(r.warnings.is_empty());
}

// Before request 9 (after the idle gap) the context without the system prompt is "go" and 8
// steps of "ok" + a call ("read" + "{}") + a 91-char summary + 10,000 chars: 80,794 chars.
// The last three assistant messages are those of steps 5-7, so results 5-7 are protected and
// results 0-4 prunable. A soft trim leaves 1,500 + "\n...\n" + 1,500 + an 82-char note =
// 3,087 chars, freeing 6,913 each: 80,794 - 5 × 6,913 = 46,229 chars after soft trims.

#[test]
fn after_an_idle_gap_soft_trims_for_that_request_only() {
    let r = replay_spec(session(8).at(20.0).request(), WIDE);
    // 46,229 / 100,000 = 0.46 < 0.5: soft trims only.
    assert_eq!(r.cleared_before(9), [0, 1, 2, 3, 4]);
    let trimmed = r.replacement(9, 0).unwrap();
    assert!(trimmed.starts_with(&format!("{}\n...\n{}", text(1_500), text(1_500))));
    assert!(
        trimmed.ends_with(
            "\n\n[Tool result trimmed: kept first 1500 chars and last 1500 chars of 10000 chars.]"
        )
    );
    assert_eq!(trimmed.len(), 3_087);
    // Transient: the request after (inside the TTL again) re-sends everything.
    let r = replay_spec(session(8).at(20.0).request().at(20.5).request(), WIDE);
    assert_eq!(r.prune_requests(), [9, 10], "pruned at 9, restored at 10");
    assert!(r.cleared_before(10).is_empty());
}

#[test]
fn the_unrecorded_overhead_is_not_in_the_estimated_context() {
    // OpenClaw estimates the messages' chars only; `--overhead` stands for the system prompt
    // and tool schemas, so 20,000 tokens of it (80,000 chars, enough for a hard clear at
    // 0.5 of this window) change nothing: soft trims only, as without it.
    let plain = replay_spec(session(8).at(20.0).request(), WIDE);
    let padded = replay_spec(session(8).overhead(20_000).at(20.0).request(), WIDE);
    assert_eq!(padded.edits, plain.edits);
    assert_eq!(padded.run.rows[9].categories.unrecorded, 20_000);
}

#[test]
fn hard_clears_oldest_first_until_under_the_ratio() {
    // 46,229 / 80,000 = 0.58 ≥ 0.5 and 5 × 3,087 prunable chars ≥ 10,000: clear oldest first,
    // each freeing 3,087 - 33: 43,175 (0.54), 40,121 (0.50), 37,067 (0.46) → three clears.
    let r = replay_spec(session(8).at(20.0).request(), SMALL);
    assert_eq!(r.cleared_before(9), [0, 1, 2, 3, 4]);
    for i in 0..3 {
        assert_eq!(r.replacement(9, i), Some("[Old tool result content cleared]"), "result {i}");
    }
    assert!(r.replacement(9, 3).unwrap().ends_with("of 10000 chars.]"), "trimmed, not cleared");
    // Below the prunable floor nothing is hard-cleared.
    let r = replay_spec(
        session(8).at(20.0).request(),
        "openclaw:context_window=20000,min_prunable_tool_chars=20000",
    );
    assert!(r.replacement(9, 0).unwrap().ends_with("of 10000 chars.]"));
}

#[test]
fn sticky_keeps_the_pruned_state() {
    let c = session(8).at(20.0).request().at(20.5).request();
    let r = replay_spec(c, &format!("{SMALL},sticky=true"));
    assert_eq!(r.prune_requests(), [9]);
    assert!(r.run.rows[10].context_tokens < r.run.rows[8].context_tokens);
}

#[test]
fn denied_tools_and_images_are_never_pruned() {
    let r = replay_spec(session(8).at(20.0).request(), &format!("{WIDE},tools_deny=RE*"));
    assert!(r.edits.iter().all(Vec::is_empty));
    let mut c = Convo::new().user("go").at(0.0).request();
    c = c.assistant("ok").tool_with_images("read", text(10_000), 1).at(1.0).request();
    for i in 0..7 {
        c = c.assistant("ok").tool("read", text(10_000)).at(2.0 + i as f64).request();
    }
    let r = replay_spec(c.at(30.0).request(), WIDE);
    assert_eq!(r.cleared_before(9), [1, 2, 3, 4]);
}

#[test]
fn without_timestamps_it_warns_and_never_fires() {
    let mut c = Convo::new().user("go").request();
    for _ in 0..8 {
        c = c.assistant("ok").tool("read", text(10_000)).request();
    }
    let r = replay_spec(c, SMALL);
    assert!(r.edits.iter().all(Vec::is_empty));
    assert_eq!(
        r.warnings,
        ["the trace records no timestamps, so `openclaw` (which prunes after an idle gap) never fires"]
    );
}

#[test]
fn ratios_must_be_fractions_and_the_window_positive() {
    for (spec, key) in [
        ("openclaw:soft_trim_ratio=-1", "soft_trim_ratio"),
        ("openclaw:soft_trim_ratio=1e308", "soft_trim_ratio"),
        ("openclaw:soft_trim_ratio=1.01", "soft_trim_ratio"),
        ("openclaw:hard_clear_ratio=NaN", "hard_clear_ratio"),
        ("openclaw:hard_clear_ratio=inf", "hard_clear_ratio"),
        ("openclaw:hard_clear_ratio=-infinity", "hard_clear_ratio"),
    ] {
        let e = PolicySpec::parse(spec).unwrap_err().to_string();
        assert!(e.starts_with(&format!("bad value for `{key}` in `{spec}`: must be a fraction")), "{e}");
    }
    assert!(PolicySpec::parse("openclaw:soft_trim_ratio=0,hard_clear_ratio=1").is_ok());
    for spec in ["openclaw:context_window=0", "openclaw:context_window=4611686018427387904"] {
        let e = PolicySpec::parse(spec).unwrap_err().to_string();
        assert!(e.starts_with(&format!("bad value for `context_window` in `{spec}`")), "{e}");
    }
}

#[test]
fn the_prefix_tree_finds_the_first_running_sum_above_a_bound() {
    let mut seed = 7u64;
    let mut tree = PrefixMax::default();
    let mut values: Vec<i64> = Vec::new();
    for step in 0..300 {
        let value = (draw(&mut seed, 200) as i64) - 60;
        if step % 3 == 2 {
            let at = draw(&mut seed, values.len() as u64) as usize;
            values[at] = value;
            tree.set(at, value);
        } else {
            values.push(value);
            tree.push(value);
        }
        for bound in [-100, -1, 0, 50, 500, 5_000] {
            let mut sum = 0;
            let expected = values.iter().position(|v| {
                sum += v;
                sum > bound
            });
            assert_eq!(tree.first_above(bound), expected, "{values:?} above {bound}");
        }
    }
}

/// The policy as first written, recomputing everything from the view before every request:
/// what the tracked state must agree with.
struct Reference(OpenClaw);

enum Was {
    Keep,
    Trim(String),
    Clear,
}

impl Reference {
    fn eligible(&self, view: &View<'_>, r: &ResultState<'_>) -> bool {
        let p = &self.0;
        let before_cutoff = p.keep_last_assistants == 0
            || r.assistant_messages + p.keep_last_assistants <= view.assistant_messages;
        before_cutoff
            && r.turn >= 1
            && r.result.images == 0
            && matches!(r.content, Content::Present(_) | Content::Replaced(_))
            && p.tool_prunable(r.tool())
    }
}

impl Policy for Reference {
    fn capabilities(&self) -> Capabilities {
        Capabilities { sticky: self.0.sticky, ..Capabilities::default() }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let Some(gap) = self.0.gaps.gap(view) else { return };
        let p = &self.0;
        if p.ttl <= 0 || gap < p.ttl || view.assistant_messages < p.keep_last_assistants {
            return;
        }
        let mut sent = view.context;
        sent -= view.system;
        let images: u64 = view.results.iter().map(|r| u64::from(r.result.images)).sum();
        let mut total = OpenClaw::chars(view, &sent) + IMAGE_CHARS * images;
        let ratio = |total: u64| total as f64 / p.window_chars as f64;
        if ratio(total) < p.soft_trim_ratio {
            return;
        }
        let mut prunable: Vec<(&ResultState<'_>, Was, u64)> = Vec::new();
        for r in view.results.iter().filter(|r| self.eligible(view, r)) {
            match r.content {
                Content::Present(c) => {
                    let before = OpenClaw::chars(view, &c);
                    match p.soft_trim(&r.result.text) {
                        Some(trimmed) => {
                            let after = OpenClaw::chars(view, &view.measure(&trimmed));
                            total = total + after - before;
                            prunable.push((r, Was::Trim(trimmed), after));
                        }
                        None => prunable.push((r, Was::Keep, before)),
                    }
                }
                Content::Replaced(m) => prunable.push((r, Was::Keep, OpenClaw::chars(view, &m))),
                Content::None | Content::Pruned => {}
            }
        }
        if p.hard_clear && ratio(total) >= p.hard_clear_ratio {
            let prunable_chars: u64 = prunable.iter().map(|(_, _, chars)| chars).sum();
            if prunable_chars >= p.min_prunable_tool_chars {
                let cleared = view.measure(&p.placeholder);
                let placeholder = OpenClaw::chars(view, &cleared);
                for (r, fate, chars) in &mut prunable {
                    if ratio(total) < p.hard_clear_ratio {
                        break;
                    }
                    if r.content == Content::Replaced(cleared) {
                        continue;
                    }
                    *fate = Was::Clear;
                    total = total + placeholder - *chars;
                }
            }
        }
        for (r, fate, _) in prunable {
            match fate {
                Was::Keep => {}
                Was::Trim(text) => edits.push(Edit::Replace(r.index, text)),
                Was::Clear => edits.push(Edit::Replace(r.index, p.placeholder.clone())),
            }
        }
    }

    fn report(&self) -> PolicyReport {
        self.0.report()
    }
}

/// Records the edits in force before each request by result index: a non-sticky set merged
/// into the previous one after [`Edit::KeepPrevious`], which it counts.
struct InForce {
    inner: Box<dyn Policy>,
    log: Vec<BTreeMap<usize, String>>,
    previous: BTreeMap<usize, String>,
    compactions: usize,
    kept: usize,
}

impl Policy for InForce {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        self.inner.before_request(view, edits);
        if view.compactions != self.compactions {
            self.previous.clear();
            self.compactions = view.compactions;
        }
        let keep = !self.inner.capabilities().sticky && edits.contains(&Edit::KeepPrevious);
        self.kept += usize::from(keep);
        let mut set = if keep { self.previous.clone() } else { BTreeMap::new() };
        for e in edits.iter() {
            match e {
                Edit::Replace(i, text) => set.insert(*i, text.clone()),
                Edit::KeepPrevious => None,
                other => panic!("openclaw only replaces contents: {other:?}"),
            };
        }
        self.previous = set.clone();
        self.log.push(set);
    }
}

/// A conversation drawn from `seed`: results of every size (unsplit ones, ones shorter than a
/// placeholder, non-ASCII ones, ones with images, a result before the first user message),
/// replies, new human turns, idle gaps, untimed requests and, for some seeds, compactions.
fn generated(seed: u64) -> Convo {
    let mut s = seed;
    let mut c = Convo::new().system("sys").tool("read", text(400)).at(0.0).request().user("go");
    let mut minute = 0.0;
    for step in 0..70 {
        match draw(&mut s, 12) {
            0 => c = c.user("more"),
            1 | 2 => c = c.assistant("ok"),
            3 if step > 20 && seed % 3 == 0 => c = c.compaction("summary"),
            _ => {}
        }
        for _ in 0..1 + usize::from(draw(&mut s, 5) == 0) {
            let bytes = [4, 30, 120, 300, 900][draw(&mut s, 5) as usize] + draw(&mut s, 50) as usize;
            let output = if draw(&mut s, 4) == 0 { "é🦀x".repeat(bytes / 8 + 1) } else { text(bytes) };
            let tool = ["read", "bash", "grep"][draw(&mut s, 3) as usize];
            c = if draw(&mut s, 12) == 0 {
                c.tool_with_images(tool, output, 1)
            } else {
                c.tool(tool, output)
            };
        }
        minute += [0.1, 0.5, 2.0, 7.0][draw(&mut s, 4) as usize];
        c = if draw(&mut s, 15) == 0 { c.untimed() } else { c.at(minute) };
        c = c.request();
    }
    c
}

/// Specs that make every branch fire on [`generated`] conversations, sticky and not.
fn specs() -> Vec<String> {
    let trim = "soft_trim_max_chars=100,soft_trim_head_chars=20,soft_trim_tail_chars=20";
    let long = "p".repeat(150);
    let base = [
        format!("openclaw:ttl=1m,context_window=1000,{trim},min_prunable_tool_chars=0"),
        "openclaw:ttl=1s,context_window=1000,min_prunable_tool_chars=0".to_owned(),
        format!(
            "openclaw:ttl=1s,context_window=2000,keep_last_assistants=0,{trim},min_prunable_tool_chars=3000"
        ),
        format!("openclaw:ttl=1s,context_window=1500,keep_last_assistants=1,{trim},tools_deny=grep"),
        format!(
            "openclaw:ttl=3m,context_window=800,soft_trim_ratio=0.1,hard_clear_ratio=0.9,placeholder={long},\
             min_prunable_tool_chars=0"
        ),
        format!("openclaw:ttl=1s,context_window=1500,hard_clear=false,{trim}"),
        format!(
            "openclaw:ttl=1s,context_window=3000,soft_trim_ratio=0,hard_clear_ratio=0,{trim},tools_allow=read"
        ),
        "openclaw:ttl=1s,context_window=3000,soft_trim_ratio=1,hard_clear_ratio=1,min_prunable_tool_chars=0"
            .to_owned(),
    ];
    base.iter()
        .flat_map(|s| [s.clone(), format!("{s},sticky=true")])
        .flat_map(|s| [format!("{s},on=content"), s])
        .collect()
}

/// Replays `convo` under `policy`: the run, the edits in force before each request, the
/// warnings and how many requests kept the previous set.
fn replay_in_force(
    convo: Convo,
    policy: Box<dyn Policy>,
    decide: DecideWith,
) -> (Run, Vec<BTreeMap<usize, String>>, Vec<String>, usize) {
    let meter = meter(decide);
    let conversation = Conversation { id: "main".into(), items: convo.items(), recorded_total: None };
    let measured = MeasuredConversation::new(&conversation, &meter, &MeasureOptions::default());
    let mut recorder =
        InForce { inner: policy, log: Vec::new(), previous: BTreeMap::new(), compactions: 0, kept: 0 };
    let run = replay(&measured, THRESHOLD, &mut recorder, &meter);
    (run, recorder.log, recorder.inner.report().warnings, recorder.kept)
}

#[test]
fn the_tracked_state_edits_exactly_as_recomputing_every_request_does() {
    let (mut trims, mut clears, mut kept) = (0, 0, 0);
    for spec in specs() {
        let parsed = PolicySpec::parse(&spec).unwrap_or_else(|e| panic!("{e}"));
        for seed in 0..9 {
            for decide in [DecideWith::Anchor, DecideWith::Real] {
                let params = OpenClaw::checked(&parsed.params).unwrap();
                let reference = Box::new(Reference(OpenClaw::new(&params)));
                let direct = crate::policy::with_on(params.on, reference);
                let (run, log, warnings, _) = replay_in_force(generated(seed), direct, decide);
                let tracked = replay_in_force(generated(seed), parsed.build(), decide);
                let case = format!("{spec}, seed {seed}, {decide:?}");
                for (k, (got, want)) in tracked.1.iter().zip(&log).enumerate() {
                    assert_eq!(got, want, "edits in force before request {k}: {case}");
                }
                assert_eq!(tracked.0, run, "{case}");
                assert_eq!(tracked.2, warnings, "{case}");
                let placeholders =
                    log.iter().flatten().filter(|(_, t)| t.starts_with("[Old") || t.starts_with("ppp"));
                clears += placeholders.count();
                trims += log.iter().flatten().filter(|(_, t)| t.ends_with("chars.]")).count();
                kept += tracked.3;
            }
        }
    }
    // The comparison means something only if the branches ran.
    assert!(trims > 1_000 && clears > 1_000 && kept > 1_000, "{trims} trims, {clears} clears, {kept} kept");
}
