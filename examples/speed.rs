//! The speed harness behind `benches/peers.sh`: each command measures one thing inside one process
//! and prints one JSON object per line, for the script to put beside the other measurements.
//!
//! ```text
//! speed texts DIR OUT                  every distinct text a default replay of DIR counts, as JSON lines
//! speed count TEXTS [-j N] [--counter C] [--tokenizer T]
//!                                      the bare counter on those texts (one cold pass)
//! speed grid DIR [-j N] [--thresholds SPEC] [--policies 'P;P;...']
//!                                      a whole replay of DIR at every threshold × policy (no output)
//! speed long DIR OUT [--times K]       writes OUT/long-1.jsonl (DIR's conversation with the most
//!                                      requests) and OUT/long-K.jsonl (K distinct copies in a row)
//! speed scale SHORT LONG [--rounds R] [--policies 'P;P;...']
//!                                      load + measure + replay time of LONG over SHORT, per policy
//! speed sweep-scale SHORT LONG [--rounds R] [--thresholds SPEC] [--policies 'P;P;...']
//!                                      load + measure + threshold sweep of LONG over SHORT, and the
//!                                      sweep alone
//! speed cache TEXTS [-j N]             count-cache lookups: one shared cache against one per thread
//! speed sweep DIR [-j N] [--thresholds SPEC] [--policies 'P;P;...']
//!                                      DIR measured once, then `ctxbudget sweep`'s threshold sweep
//!                                      (no per-tool part) under each policy
//! speed phases DIR [-j N]             the stages of a whole replay one after the other: building the
//!                                      tokenizer's tables, import, measure (split and count),
//!                                      replay under the default policies
//! speed engine DIR [--thresholds SPEC] [--policies 'P;P;...']
//!                                      the replay engine alone (texts measured first), per policy
//! ```
//!
//! Build with `cargo build --release --example speed`; `benches/peers.sh` runs it.

#[path = "../benches/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ctxbudget::analysis::sweep::parse_thresholds;
use ctxbudget::input;
use ctxbudget::measure::{MeasureOptions, MeasuredConversation};
use ctxbudget::model::{Conversation, Item, Output, Trace};
use ctxbudget::pipeline::Job;
use ctxbudget::policy::PolicySpec;
use ctxbudget::replay::replay;
use ctxbudget::tokens::{Backend, CountCache, DecideWith, Meter, Tokenizer};
use rayon::prelude::*;
use serde_json::json;

/// The eight policies of the sweep goal: the four defaults and four anchors, three of them
/// non-sticky (recomputed before every request).
const SWEEP_POLICIES: &str = "none;keep-turns:n=3;keep-results:n=5;budget:max=100000,target=50000;anthropic;langchain;swe-agent;opencode";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else { usage() };
    let options = Options::parse(&args[1..]);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(options.jobs).build().expect("a thread pool");
    pool.install(|| match command.as_str() {
        "texts" => texts(&options),
        "count" => count(&options),
        "grid" => grid(&options),
        "long" => long(&options),
        "scale" => scale(&options),
        "sweep-scale" => sweep_scale(&options),
        "cache" => cache(&options),
        "engine" => engine(&options),
        "sweep" => sweep(&options),
        "phases" => phases(&options),
        _ => usage(),
    });
}

fn usage() -> ! {
    eprintln!(
        "usage: speed texts|count|grid|long|scale|sweep-scale|cache|engine|sweep|phases ... (see examples/speed.rs)"
    );
    std::process::exit(2)
}

/// Positional arguments and the options every command shares.
struct Options {
    positional: Vec<String>,
    jobs: usize,
    counter: Backend,
    tokenizer: Tokenizer,
    thresholds: Vec<usize>,
    policies: Vec<PolicySpec>,
    times: usize,
    rounds: usize,
}

impl Options {
    fn parse(args: &[String]) -> Options {
        let mut o = Options {
            positional: Vec::new(),
            jobs: 1,
            counter: Backend::default(),
            tokenizer: Tokenizer::O200k,
            thresholds: vec![256],
            policies: common::default_policies(),
            times: 16,
            rounds: 5,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || it.next().cloned().unwrap_or_else(|| usage());
            match a.as_str() {
                "-j" | "--jobs" => o.jobs = value().parse().unwrap_or_else(|_| usage()),
                "--counter" => o.counter = value().parse().unwrap_or_else(|_| usage()),
                "--tokenizer" => o.tokenizer = value().parse().unwrap_or_else(|_| usage()),
                "--thresholds" => o.thresholds = parse_thresholds(&value()).unwrap_or_else(|_| usage()),
                "--policies" => o.policies = policies(&value()),
                "--times" => o.times = value().parse().unwrap_or_else(|_| usage()),
                "--rounds" => o.rounds = value().parse().unwrap_or_else(|_| usage()),
                _ => o.positional.push(a.clone()),
            }
        }
        o
    }

    fn path(&self, i: usize) -> PathBuf {
        PathBuf::from(self.positional.get(i).unwrap_or_else(|| usage()))
    }

    /// The meter `ctxbudget replay --tokenizer T` uses (T o200k unless `--tokenizer` says
    /// otherwise: the numbers of docs/performance.md were measured with o200k; policies decide with
    /// their anchors), on the chosen backend.
    fn meter(&self) -> Meter {
        Meter::with_backend(self.tokenizer, Tokenizer::Estimate, self.counter).deciding(DecideWith::Anchor)
    }
}

/// `P;P;...`, or `sweep` (the eight of the sweep goal), or `all` (every registered policy).
fn policies(text: &str) -> Vec<PolicySpec> {
    if text == "all" {
        return common::every_policy();
    }
    let text = if text == "sweep" { SWEEP_POLICIES } else { text };
    text.split(';').map(|s| PolicySpec::parse(s.trim()).unwrap_or_else(|e| panic!("{e}"))).collect()
}

fn read_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| serde_json::from_str(l).expect("one JSON string per line")).collect()
}

fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// `speed texts DIR OUT`: the texts a default replay of DIR counts, one JSON string per line.
fn texts(o: &Options) {
    let texts = common::replayed_texts_with(&o.path(0), 256, common::default_policies());
    let mut out = String::new();
    for t in &texts {
        out.push_str(&serde_json::to_string(t).expect("a string serialises"));
        out.push('\n');
    }
    std::fs::write(o.path(1), out).expect("writable output");
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    println!("{}", json!({"texts": texts.len(), "bytes": bytes}));
}

/// `speed count TEXTS`: the bare counter, one cold pass over the texts (the tables are built
/// first and timed apart); with `--rounds R`, R − 1 more passes, the best of which is `warm_s`.
fn count(o: &Options) {
    let texts = read_texts(&o.path(0));
    let counter = o.tokenizer.counter_with(o.counter);
    let start = Instant::now();
    counter.prepare();
    let init = start.elapsed();
    let start = Instant::now();
    let tokens: u64 = texts.par_iter().map(|t| counter.count(t)).sum();
    let elapsed = start.elapsed();
    // More passes (`--rounds`, beyond the first), for the warm figure: the best of them.
    let mut warm = f64::NAN;
    for _ in 1..o.rounds {
        let start = Instant::now();
        std::hint::black_box(texts.par_iter().map(|t| counter.count(t)).sum::<u64>());
        warm = seconds(start.elapsed()).min(if warm.is_nan() { f64::MAX } else { warm });
    }
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    println!(
        "{}",
        json!({"counter": o.counter.name(), "tokenizer": o.tokenizer.name(), "jobs": o.jobs,
               "init_s": seconds(init), "count_s": seconds(elapsed), "warm_s": warm, "bytes": bytes, "tokens": tokens,
               "mb_per_s": bytes as f64 / seconds(elapsed) / 1e6})
    );
}

/// `speed grid DIR`: a whole replay (find, read, measure, replay) at every threshold × policy.
fn grid(o: &Options) {
    let start = Instant::now();
    let meter = o.meter();
    let job = Job {
        thresholds: o.thresholds.clone(),
        policies: o.policies.iter().map(|p| PolicySpec::parse(p.as_str()).expect("parsed once")).collect(),
        ..Job::default()
    };
    let found = input::discover(&[o.path(0)]);
    let replayed = ctxbudget::pass::replay(&found, &job, &meter, false, &|| {}, |_, f| f.runs.len());
    let runs: usize = replayed.output.iter().sum();
    println!(
        "{}",
        json!({"thresholds": o.thresholds.len(), "policies": o.policies.len(), "runs": runs,
               "jobs": o.jobs, "seconds": seconds(start.elapsed())})
    );
}

/// `speed long DIR OUT`: the conversation of DIR with the most requests, alone and as `times`
/// copies in a row, in the native format. Every copy's texts are made distinct (a copy number in
/// front) so the long trace really has `times` as much to count, and call ids and timestamps are
/// shifted so the copies read as one session.
fn long(o: &Options) {
    let found = input::discover(&[o.path(0)]);
    let longest = found
        .files
        .par_iter()
        .filter_map(|p| input::load(p, None).ok())
        .flat_map_iter(|t: Trace| t.conversations)
        .max_by_key(|c| (requests(c), c.items.len(), c.id.clone()))
        .expect("a conversation under DIR");
    let out = o.path(1);
    std::fs::create_dir_all(&out).expect("a writable output directory");
    let span = timestamps(&longest).map_or(0, |(first, last)| last - first + 1);
    for k in [1, o.times] {
        let mut c = Conversation::new("long");
        for copy in 0..k {
            c.items.extend(longest.items.iter().map(|i| relabel(i, copy, span * copy as i64)));
        }
        let mut bytes = Vec::new();
        ctxbudget::format::native::write(&[c], &mut bytes).expect("writing to memory cannot fail");
        std::fs::write(out.join(format!("long-{k}.jsonl")), bytes).expect("writable output");
    }
    println!("{}", json!({"requests": requests(&longest), "items": longest.items.len(), "times": o.times}));
}

fn requests(c: &Conversation) -> usize {
    c.items.iter().filter(|i| matches!(i, Item::Request(_))).count()
}

fn timestamps(c: &Conversation) -> Option<(i64, i64)> {
    let all: Vec<i64> = c
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Request(r) => r.timestamp,
            _ => None,
        })
        .collect();
    Some((*all.iter().min()?, *all.iter().max()?))
}

/// Item `i` of copy `copy`: texts prefixed with the copy number, ids suffixed, times shifted.
fn relabel(i: &Item, copy: usize, shift: i64) -> Item {
    let text = |t: &String| if copy == 0 { t.clone() } else { format!("[{copy}] {t}") };
    let id = |t: &String| format!("{t}#{copy}");
    match i {
        Item::System { text: t } => Item::System { text: text(t) },
        Item::User { text: t, meta, images } => Item::User { text: text(t), meta: *meta, images: *images },
        Item::Assistant { text: t } => Item::Assistant { text: text(t) },
        Item::Thinking { text: t } => Item::Thinking { text: text(t) },
        Item::Unseen { kind, tokens } => Item::Unseen { kind: *kind, tokens: *tokens },
        Item::Cleared(c) => Item::Cleared(ctxbudget::model::Cleared {
            call_ids: c.call_ids.iter().map(id).collect(),
            ..c.clone()
        }),
        Item::ToolCall { call_id, name, arguments } => {
            Item::ToolCall { call_id: id(call_id), name: name.clone(), arguments: text(arguments) }
        }
        Item::ToolResult(r) => {
            let mut r = r.clone();
            r.call_id = id(&r.call_id);
            r.output = match &r.output {
                Output::Raw { output } => Output::Raw { output: text(output) },
                Output::Split { summary, content } => {
                    Output::Split { summary: text(summary), content: content.as_ref().map(text) }
                }
            };
            Item::ToolResult(r)
        }
        Item::Request(r) => {
            let mut r = r.clone();
            r.id = r.id.as_ref().map(id);
            r.timestamp = r.timestamp.map(|t| t + shift);
            Item::Request(r)
        }
        Item::Compaction { summary } => Item::Compaction { summary: summary.as_ref().map(text) },
    }
}

/// `speed scale SHORT LONG`: per policy, the best of `rounds` times to load, measure (with a
/// fresh meter, so every text is counted) and replay each file, and the replay alone; the
/// tokenizer's tables are built before any timing.
fn scale(o: &Options) {
    o.meter().prepare();
    let defaults = common::default_policies();
    let mut groups: Vec<(String, Vec<&PolicySpec>)> =
        vec![("default policies".into(), defaults.iter().collect())];
    groups.extend(o.policies.iter().map(|p| (p.as_str().to_owned(), vec![p])));
    for (label, specs) in groups {
        let mut requests = [0usize; 2];
        let (whole, engine) = short_and_long(o, |f, meter, measured| {
            for spec in &specs {
                for m in measured {
                    let run = replay(m, 256, &mut *spec.build(), meter);
                    requests[f] = run.summary.requests;
                }
            }
        });
        println!(
            "{}",
            json!({"policies": label, "requests": requests, "whole_s": whole, "replay_s": engine,
                   "whole_ratio": whole[1] / whole[0], "replay_ratio": engine[1] / engine[0]})
        );
    }
}

/// For the two files given (SHORT, LONG), the best of `--rounds` times of loading, measuring and
/// then `work` (given the file's place, the meter and the measured conversations), and of `work`
/// alone.
fn short_and_long(
    o: &Options,
    mut work: impl FnMut(usize, &Meter, &[MeasuredConversation]),
) -> ([f64; 2], [f64; 2]) {
    let files = [o.path(0), o.path(1)];
    let mut whole = [f64::MAX; 2];
    let mut alone = [f64::MAX; 2];
    for _ in 0..o.rounds {
        for (f, path) in files.iter().enumerate() {
            let start = Instant::now();
            let meter = o.meter();
            let trace = input::load(path, None).expect("a readable trace");
            let opts = MeasureOptions::default();
            let measured: Vec<MeasuredConversation> =
                trace.conversations.iter().map(|c| MeasuredConversation::new(c, &meter, &opts)).collect();
            let loaded = Instant::now();
            work(f, &meter, &measured);
            let end = Instant::now();
            whole[f] = whole[f].min(seconds(end - start));
            alone[f] = alone[f].min(seconds(end - loaded));
        }
    }
    (whole, alone)
}

/// `speed sweep-scale SHORT LONG`: load + measure + the threshold sweep of [`sweep`] (every policy
/// of `--policies` at every threshold, no per-tool part) of LONG over SHORT, and the sweep alone;
/// the tables are built first, as in [`scale`], so that both sides count only their own work.
fn sweep_scale(o: &Options) {
    use ctxbudget::analysis::sweep::{DEFAULT_TOLERANCE, SweepSettings, sweep};
    o.meter().prepare();
    let (whole, alone) = short_and_long(o, |_, meter, measured| {
        let conversations: Vec<&MeasuredConversation> = measured.iter().collect();
        for spec in &o.policies {
            let settings = SweepSettings {
                thresholds: o.thresholds.clone(),
                policy: spec.clone(),
                tolerance: DEFAULT_TOLERANCE,
                top_tools: 0,
                cache: Default::default(),
            };
            std::hint::black_box(sweep(&conversations, &settings, meter));
        }
    });
    println!(
        "{}",
        json!({"thresholds": o.thresholds.len(), "policies": o.policies.len(), "whole_s": whole, "sweep_s": alone,
               "whole_ratio": whole[1] / whole[0], "sweep_ratio": alone[1] / alone[0]})
    );
}

/// `speed cache TEXTS`: every text looked up (all hits) in one cache shared by the threads, and
/// in one cache per thread; equal times mean the shared cache's locks are not a contention point.
fn cache(o: &Options) {
    const PASSES: usize = 50;
    let texts = read_texts(&o.path(0));
    let filled = || {
        let cache = CountCache::default();
        for t in &texts {
            cache.get_or_count(t, |t| t.len() as u64);
        }
        cache
    };
    let shared = filled();
    let own: Vec<CountCache> = (0..o.jobs).map(|_| filled()).collect();
    let lookups = |cache: &CountCache, part: &[String]| -> u64 {
        let mut sum = 0;
        for _ in 0..PASSES {
            for t in part {
                sum += cache.get_or_count(t, |_| unreachable!("every text is cached"));
            }
        }
        sum
    };
    let chunk = texts.len().div_ceil(o.jobs);
    let mut best = [f64::MAX; 2];
    for _ in 0..o.rounds {
        for (k, shared_cache) in [true, false].into_iter().enumerate() {
            let start = Instant::now();
            let sum: u64 = texts
                .par_chunks(chunk)
                .enumerate()
                .map(|(i, part)| lookups(if shared_cache { &shared } else { &own[i] }, part))
                .sum();
            std::hint::black_box(sum);
            best[k] = best[k].min(seconds(start.elapsed()));
        }
    }
    let n = (texts.len() * PASSES) as f64;
    println!(
        "{}",
        json!({"jobs": o.jobs, "lookups": n, "shared_ns": best[0] / n * 1e9 * o.jobs as f64,
               "per_thread_ns": best[1] / n * 1e9 * o.jobs as f64, "shared_over_per_thread": best[0] / best[1]})
    );
}

/// `speed engine DIR`: DIR measured once, then the replays alone (summaries only), per policy, on
/// one thread: what a sweep adds to a replay.
fn engine(o: &Options) {
    let meter = o.meter();
    let measured = common::measured(&o.path(0), &meter);
    let conversations: Vec<&MeasuredConversation> = measured.iter().collect();
    let requests: usize = conversations.iter().map(|c| c.requests()).sum();
    for spec in &o.policies {
        let mut best = f64::MAX;
        for _ in 0..o.rounds {
            let start = Instant::now();
            for c in &conversations {
                for &t in &o.thresholds {
                    std::hint::black_box(ctxbudget::replay::replay_summary(c, t, &mut *spec.build(), &meter));
                }
            }
            best = best.min(seconds(start.elapsed()));
        }
        let runs = conversations.len() * o.thresholds.len();
        println!(
            "{}",
            json!({"policy": spec.as_str(), "runs": runs, "seconds": best,
                   "us_per_run": best / runs as f64 * 1e6, "ns_per_request": best / (requests * o.thresholds.len()) as f64 * 1e9})
        );
    }
}

/// `speed sweep DIR`: what `ctxbudget sweep` does (find, read and measure every file once, then
/// replay every conversation at every threshold), under each policy in turn, without the per-tool
/// recommendations.
fn sweep(o: &Options) {
    use ctxbudget::analysis::sweep::{DEFAULT_TOLERANCE, SweepSettings, sweep};
    let start = Instant::now();
    let meter = o.meter();
    let all = common::measured(&o.path(0), &meter);
    let conversations: Vec<&MeasuredConversation> = all.iter().collect();
    let measured = start.elapsed();
    let mut rows = 0;
    for spec in &o.policies {
        let settings = SweepSettings {
            thresholds: o.thresholds.clone(),
            policy: PolicySpec::parse(spec.as_str()).expect("parsed once"),
            tolerance: DEFAULT_TOLERANCE,
            top_tools: 0,
            cache: Default::default(),
        };
        rows += sweep(&conversations, &settings, &meter).rows.len();
    }
    println!(
        "{}",
        json!({"thresholds": o.thresholds.len(), "policies": o.policies.len(), "rows": rows, "jobs": o.jobs,
               "measure_s": seconds(measured), "seconds": seconds(start.elapsed())})
    );
}

/// `speed phases DIR`: a whole replay's stages one after the other (each on the pool), to show
/// where its time goes.
fn phases(o: &Options) {
    let meter = o.meter();
    let start = Instant::now();
    meter.prepare();
    let tables = start.elapsed();
    let start = Instant::now();
    let found = input::discover(&[o.path(0)]);
    let traces: Vec<Trace> = found.files.par_iter().filter_map(|p| input::load(p, None).ok()).collect();
    let import = start.elapsed();
    let start = Instant::now();
    let opts = MeasureOptions::default();
    let measured: Vec<MeasuredConversation> = traces
        .par_iter()
        .flat_map_iter(|t| t.conversations.iter().map(|c| MeasuredConversation::new(c, &meter, &opts)))
        .collect();
    let measure = start.elapsed();
    let start = Instant::now();
    let defaults = common::default_policies();
    let runs: usize = measured
        .par_iter()
        .map(|m| defaults.iter().map(|p| replay(m, 256, &mut *p.build(), &meter).rows.len()).sum::<usize>())
        .sum();
    let replayed = start.elapsed();
    let bytes: usize = found.files.iter().map(|p| std::fs::metadata(p).map_or(0, |m| m.len() as usize)).sum();
    println!(
        "{}",
        json!({"jobs": o.jobs, "tables_s": seconds(tables), "import_s": seconds(import), "measure_s": seconds(measure),
               "replay_s": seconds(replayed), "corpus_bytes": bytes, "distinct_texts": meter.distinct_texts(), "rows": runs})
    );
}
