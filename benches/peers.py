"""Measures ctxbudget against its speed goals and its peer (Python tiktoken); prints Markdown.

Run it through `benches/peers.sh`, which builds the binaries and installs tiktoken first. Every
ratio is taken within one round, both sides measured back to back under the same load, and each
round is repeated: the table gives the median and the range over the rounds. Nothing is written
outside the work directory (default /tmp/ctxbudget-peers).

usage: peers.py [--work DIR] [--rounds N] [--big-mb MB] [--no-big]
"""

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
CTXBUDGET = ROOT / "target" / "release" / "ctxbudget"
SPEED = ROOT / "target" / "release" / "examples" / "speed"
PEER = ROOT / "benches" / "peer_tiktoken.py"
RANK_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
SWEEP_THRESHOLDS = "0..7936:+256"


def run(cmd, **kw):
    """Runs `cmd`, returns (wall seconds, stdout)."""
    start = time.perf_counter()
    out = subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True, **kw)
    return time.perf_counter() - start, out.stdout


def pair(cmd):
    """Wall seconds of two copies of `cmd` run at once."""
    start = time.perf_counter()
    procs = [subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL) for _ in range(2)]
    for p in procs:
        p.wait()
    return time.perf_counter() - start


def speed(*args):
    return json.loads(run([SPEED, *args])[1].strip().splitlines()[-1])


def untabled(phases):
    """Seconds of a `speed phases` run but its tables: import, measure and replay."""
    return phases["import_s"] + phases["measure_s"] + phases["replay_s"]


def speed_lines(*args):
    return [json.loads(line) for line in run([SPEED, *args])[1].strip().splitlines()]


def tiktoken_cache(work: Path) -> Path:
    """TIKTOKEN_CACHE_DIR filled with tiktoken-rs's rank files (byte-identical to OpenAI's), each
    named by the sha1 of its usual URL, which is where Python tiktoken looks before downloading."""
    meta = json.loads(run(["cargo", "metadata", "--format-version", "1"], cwd=ROOT)[1])
    crate = next(p for p in meta["packages"] if p["name"] == "tiktoken-rs")
    assets = Path(crate["manifest_path"]).parent / "assets"
    cache = work / "tiktoken-cache"
    cache.mkdir(parents=True, exist_ok=True)
    for name in ["o200k_base", "cl100k_base"]:
        key = hashlib.sha1(RANK_URL.format(name).encode()).hexdigest()
        shutil.copyfile(assets / f"{name}.tiktoken", cache / key)
    return cache


def mutate(value, prefix):
    """Every long string value (not keys, not embedded JSON) gets `prefix` in front, so a copy of
    a trace has texts of its own to count."""
    if isinstance(value, dict):
        return {k: mutate(v, prefix) for k, v in value.items()}
    if isinstance(value, list):
        return [mutate(v, prefix) for v in value]
    if isinstance(value, str) and len(value) >= 64 and value[:1] not in "{[":
        return prefix + value
    return value


def copy_trace(src: Path, dst: Path, prefix: str):
    dst.parent.mkdir(parents=True, exist_ok=True)
    text = src.read_text(encoding="utf-8", errors="surrogateescape")
    if src.suffix in (".jsonl", ".txt"):
        lines = []
        for line in text.split("\n"):
            try:
                lines.append(json.dumps(mutate(json.loads(line), prefix), ensure_ascii=False))
            except ValueError:
                lines.append(line)
        out = "\n".join(lines)
    elif src.suffix in (".json", ".traj"):
        try:
            out = json.dumps(mutate(json.loads(text), prefix), ensure_ascii=False)
        except ValueError:
            out = text
    else:
        out = text
    dst.write_text(out, encoding="utf-8", errors="surrogateescape")


def generate(big: Path, megabytes: int) -> list:
    """Copies of the shared corpus under `big/NNN/`, every copy's texts made distinct, until they
    weigh `megabytes`. Kept between runs (a marker file records the size); returns the copies."""
    marker = big / f".generated-{megabytes}mb"
    files = [p for p in CORPUS.rglob("*") if p.is_file() and not p.name.endswith((".md", ".meta.json"))]
    corpus_bytes = sum(p.stat().st_size for p in files)
    copies = max(1, -(-megabytes * 1_000_000 // corpus_bytes))
    if not marker.exists():
        shutil.rmtree(big, ignore_errors=True)
        for k in range(copies):
            for f in files:
                copy_trace(f, big / f"{k:03}" / f.relative_to(CORPUS), "" if k == 0 else f"[copy {k}] ")
        marker.write_text(str(copies))
    return sorted(p for p in big.iterdir() if p.is_dir())


def peak_rss_mb(cmd):
    """Wall seconds and peak resident set size (MB) of `cmd`, from /usr/bin/time -v."""
    start = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-v", *map(str, cmd)], check=False, capture_output=True, text=True)
    wall = time.perf_counter() - start
    rss = next(int(l.split(":")[1]) for l in out.stderr.splitlines() if "Maximum resident set size" in l)
    errors = sum(1 for l in out.stderr.splitlines() if l.startswith("error:"))
    return wall, rss / 1024, errors, out.returncode


def stat(values):
    values = sorted(values)
    return statistics.median(values), values[0], values[-1]


def fmt(values, unit="×", digits=2):
    med, lo, hi = stat(values)
    return f"{med:.{digits}f}{unit} ({lo:.{digits}f}–{hi:.{digits}f})"


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    rustc = run(["rustc", "--version"])[1].strip()
    return f"{os.cpu_count()} cores ({os.sched_getaffinity(0).__len__()} usable), {cpu}, {rustc}, {platform.system()}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/ctxbudget-peers")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--big-mb", type=int, default=1024)
    ap.add_argument("--no-big", action="store_true")
    args = ap.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"skipped: {CORPUS} not found")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache(work))
    threads = str(len(os.sched_getaffinity(0)))
    load_before = os.getloadavg()

    texts = work / "texts.jsonl"
    facts = speed("texts", CORPUS, texts)
    speed("long", CORPUS, work, "--times", "16")
    r = {k: [] for k in ["py_loop", "py_whole", "e2e_1_py", "e2e_n_py", "e2e_1_py_loop", "sweep", "threads",
                         "machine", "bare_1", "bare_n", "bare_rs", "cache", "same", "py_tokens",
                         "bare_scaling", "sweep_16", "sweep_16_alone", "untabled"]}
    scale = {}
    for _ in range(args.rounds):
        peer = json.loads(run([sys.executable, PEER, texts, "o200k_base", threads])[1])
        one, _ = run([CTXBUDGET, "replay", CORPUS, "--tokenizer", "o200k", "-j", "1", "--format", "json", "-o", work / "out-1.json"])
        many, _ = run([CTXBUDGET, "replay", CORPUS, "--tokenizer", "o200k", "-j", threads, "--format", "json", "-o", work / "out-n.json"])
        one_rs, _ = run([CTXBUDGET, "replay", CORPUS, "--tokenizer", "o200k", "-j", "1", "--counter", "tiktoken-rs", "--format", "json",
                         "-o", work / "out-rs.json"])
        sweep, _ = run([SPEED, "sweep", CORPUS, "-j", threads, "--thresholds", SWEEP_THRESHOLDS, "--policies", "sweep"])
        bare_1 = speed("count", texts, "-j", "1")
        bare_n = speed("count", texts, "-j", threads)
        bare_rs = speed("count", texts, "-j", "1", "--counter", "tiktoken-rs")
        alone, _ = run([SPEED, "count", texts, "-j", "1"])
        both = pair([SPEED, "count", texts, "-j", "1"])
        cache = speed("cache", texts, "-j", threads)
        # The replay's stages one after the other, its tables built before the clock starts: how
        # two threads would scale if the tables cost nothing.
        staged_1, staged_n = (speed("phases", CORPUS, "-j", j) for j in ("1", threads))
        r["untabled"].append(untabled(staged_1) / untabled(staged_n))
        for line in speed_lines("scale", work / "long-1.jsonl", work / "long-16.jsonl", "--policies", "all"):
            scale.setdefault(line["policies"], []).append(line)
        swept = speed("sweep-scale", work / "long-1.jsonl", work / "long-16.jsonl", "--thresholds",
                      SWEEP_THRESHOLDS, "--policies", "sweep", "--rounds", "3")
        r["sweep_16"].append(swept["whole_ratio"])
        r["sweep_16_alone"].append(swept["sweep_ratio"])
        # Python's program: importing tiktoken, loading the encoding, counting (not reading its input).
        py_whole = peer["init_s"] + peer["count_s"]
        r["py_loop"].append(peer["count_s"])
        r["py_whole"].append(py_whole)
        r["e2e_1_py"].append(py_whole / one)
        r["e2e_1_py_loop"].append(peer["count_s"] / one)
        r["e2e_n_py"].append((peer["init_s"] + peer["batch_s"]) / many)
        r["sweep"].append(sweep / many)
        r["threads"].append(one / many)
        r["machine"].append(2 * alone / both)
        # Bare counter: building the tables and counting the texts, as any counting program must.
        r["bare_1"].append((bare_1["init_s"] + bare_1["count_s"]) / one)
        r["bare_n"].append((bare_n["init_s"] + bare_n["count_s"]) / many)
        r["bare_rs"].append((bare_rs["init_s"] + bare_rs["count_s"]) / one_rs)
        r["bare_scaling"].append((bare_1["init_s"] + bare_1["count_s"]) / (bare_n["init_s"] + bare_n["count_s"]))
        r["cache"].append(cache["shared_over_per_thread"])
        r["same"].append((work / "out-1.json").read_bytes() == (work / "out-n.json").read_bytes()
                         == (work / "out-rs.json").read_bytes())
        r["py_tokens"].append(peer["tokens"] == peer["batch_tokens"] == bare_1["tokens"] == bare_rs["tokens"])
    load_after = os.getloadavg()

    rows = [
        ("Whole replay (import, split, 4 default policies, o200k), 1 thread, vs Python tiktoken 0.14 loading o200k "
         f"and counting the same {facts['texts']:,} distinct texts ({facts['bytes'] / 1e6:.1f} MB) in a loop",
         fmt(r["e2e_1_py"]), "≥ 2×"),
        ("… against the loop alone (Python's encoding already loaded)", fmt(r["e2e_1_py_loop"]), ""),
        (f"… ctxbudget on {threads} threads vs `encode_ordinary_batch` on {threads} threads",
         fmt(r["e2e_n_py"]), "≥ 2×"),
        ("Sweep, 32 thresholds × 8 policies (4 default, anthropic, langchain, swe-agent, opencode), "
         f"measured once, over one replay, {threads} threads each", fmt(r["sweep"]), "≤ 1.3×"),
    ]
    defaults = scale.pop("default policies")
    requests = defaults[0]["requests"]
    rows.append((f"16× longer trace ({requests[0]} → {requests[1]} requests, distinct texts), the 4 default "
                 "policies: load + count + replay (replay alone, warm)",
                 f"{fmt([l['whole_ratio'] for l in defaults], '×', 1)} "
                 f"({stat([l['replay_ratio'] for l in defaults])[0]:.1f}×)", "≤ 17×"))
    worst = max(scale, key=lambda k: stat([l["whole_ratio"] for l in scale[k]])[0])
    rows.append((f"… each of the {len(scale)} policies alone, the worst ({worst})",
                 f"{fmt([l['whole_ratio'] for l in scale[worst]], '×', 1)} "
                 f"({stat([l['replay_ratio'] for l in scale[worst]])[0]:.1f}×)", "≤ 17×"))
    rows.append(("… its threshold sweep, 32 thresholds × 8 policies as above: load + count + sweep (sweep alone)",
                 f"{fmt(r['sweep_16'], '×', 1)} ({stat(r['sweep_16_alone'])[0]:.1f}×)", "≤ 17×"))
    rows += [
        (f"{threads} threads over 1 thread, whole replay of the shared corpus", fmt(r["threads"]), "≥ 1.8×"),
        (f"… what the machine gave at the time: two single-thread counting processes at once over one",
         fmt(r["machine"]), "(2× ideal)"),
        (f"… what the bare counter gives on the same texts: its tables and one cold pass, {threads} threads over 1",
         fmt(r["bare_scaling"]), ""),
        (f"… the replay's stages with its tables already built (import, measure, replay: `speed phases`), "
         f"{threads} threads over 1", fmt(r["untabled"]), ""),
        (f"Same output bytes on 1 and {threads} threads, and with `--counter tiktoken-rs`",
         "yes" if all(r["same"]) else "NO", "yes"),
        ("End-to-end over bare counter (its tables + one cold pass over the same texts), 1 thread",
         fmt([100 * v for v in r["bare_1"]], "%", 0), "≥ 80%"),
        (f"… the same on {threads} threads", fmt([100 * v for v in r["bare_n"]], "%", 0), "≥ 80%"),
        ("… the same with `--counter tiktoken-rs` (1 thread)", fmt([100 * v for v in r["bare_rs"]], "%", 0), ""),
        (f"Count cache: lookups on {threads} threads, one shared cache over one cache per thread",
         fmt(r["cache"]), "≈ 1×"),
    ]
    if not args.no_big:
        copies = generate(work / "big", args.big_mb)
        size = sum(p.stat().st_size for c in copies for p in c.rglob("*") if p.is_file()) / 1e6
        wall, rss, errors, code = peak_rss_mb([CTXBUDGET, "replay", *copies, "--tokenizer", "o200k", "-j", threads,
                                               "--format", "json", "-o", work / "big.json"])
        rows.append((f"Peak RSS, whole replay of a generated {size:,.0f} MB corpus ({len(copies)} copies of "
                     f"the shared corpus, texts made distinct), {threads} threads; {wall:.1f} s, "
                     f"{size / wall:.0f} MB/s, {errors} unreadable files, exit {code}", f"{rss:.0f} MB", "< 300 MB"))
        replay_wall = wall
        # The analyses on the same corpus: each file is analysed as it is measured (sweep and report
        # do not hold the inputs above 256 MB: each file's tools are swept as it is read, and the
        # files whose guess of the recommendation missed are read again).
        for analysis in ["sweep", "compare", "cost", "calibrate"]:
            wall, rss, errors, code = peak_rss_mb([CTXBUDGET, analysis, *copies, "--tokenizer", "o200k", "-j", threads,
                                                   "--format", "json", "-o", work / f"big-{analysis}.json"])
            ratio = f" ({wall / replay_wall:.2f}× the replay, one run each)" if analysis == "sweep" else ""
            rows.append((f"… `{analysis}` of it; {wall:.1f} s{ratio}, exit {code}", f"{rss:.0f} MB", "< 300 MB"))
        shutil.rmtree(work / "big-report", ignore_errors=True)
        wall, rss, errors, code = peak_rss_mb([CTXBUDGET, "report", *copies, "--tokenizer", "o200k", "-j", threads,
                                               "--out", work / "big-report"])
        rows.append((f"… `report` of it (holds the charted conversations' rows); {wall:.1f} s, exit {code}",
                     f"{rss:.0f} MB", "< 300 MB"))
        part = copies[: max(1, len(copies) // 4)]
        # The part's texts, for its bare counter: a folder of links to its copies.
        linked = work / "part"
        shutil.rmtree(linked, ignore_errors=True)
        linked.mkdir()
        for c in part:
            (linked / c.name).symlink_to(c.resolve())
        part_texts = work / "texts-part.jsonl"
        part_facts = speed("texts", linked, part_texts)
        p = {k: [] for k in ["threads", "e2e_1", "e2e_n", "bare", "one", "many", "same"]}
        for _ in range(max(1, args.rounds // 2)):
            one, _ = run([CTXBUDGET, "replay", *part, "--tokenizer", "o200k", "-j", "1", "--format", "json", "-o", work / "part-1.json"])
            many, _ = run([CTXBUDGET, "replay", *part, "--tokenizer", "o200k", "-j", threads, "--format", "json", "-o", work / "part-n.json"])
            bare_1 = speed("count", part_texts, "-j", "1")
            bare_n = speed("count", part_texts, "-j", threads)
            p["one"].append(one)
            p["many"].append(many)
            p["threads"].append(one / many)
            p["e2e_1"].append(100 * (bare_1["init_s"] + bare_1["count_s"]) / one)
            p["e2e_n"].append(100 * (bare_n["init_s"] + bare_n["count_s"]) / many)
            p["bare"].append((bare_1["init_s"] + bare_1["count_s"]) / (bare_n["init_s"] + bare_n["count_s"]))
            p["same"].append((work / "part-1.json").read_bytes() == (work / "part-n.json").read_bytes())
        part_mb = sum(q.stat().st_size for c in part for q in c.rglob("*") if q.is_file()) / 1e6
        rows += [
            (f"{threads} threads over 1 thread, whole replay of {len(part)} generated copies ({part_mb:.0f} MB; "
             f"{stat(p['one'])[0]:.2f} s → {stat(p['many'])[0]:.2f} s; same bytes: {'yes' if all(p['same']) else 'NO'})",
             fmt(p["threads"]), "≥ 1.8×"),
            (f"… what the bare counter gives on their {part_facts['texts']:,} distinct texts "
             f"({part_facts['bytes'] / 1e6:.0f} MB), {threads} threads over 1", fmt(p["bare"]), ""),
            (f"End-to-end over bare counter on those copies, 1 thread", fmt(p["e2e_1"], "%", 0), "≥ 80%"),
            (f"… the same on {threads} threads", fmt(p["e2e_n"], "%", 0), "≥ 80%"),
        ]

    print(f"Machine: {machine()}")
    print(f"Load average before / after: {load_before[0]:.2f} / {load_after[0]:.2f}; {args.rounds} rounds, "
          "median (min–max)")
    print(f"Python tiktoken: load + loop {fmt(r['py_whole'], ' s', 3)}, loop alone {fmt(r['py_loop'], ' s', 3)}; "
          f"token totals equal to ctxbudget's (both counters): {'yes' if all(r['py_tokens']) else 'NO'}")
    print()
    print("| goal | measured | target |")
    print("|---|---:|---:|")
    for label, value, target in rows:
        print(f"| {label} | {value} | {target} |")
    print()
    print("16× longer trace, per policy: load + count + replay (replay alone, warm), median")
    print()
    print("| policy | whole | replay alone |")
    print("|---|---:|---:|")
    for label, lines in scale.items():
        print(f"| {label} | {stat([l['whole_ratio'] for l in lines])[0]:.1f}× "
              f"| {stat([l['replay_ratio'] for l in lines])[0]:.1f}× |")


if __name__ == "__main__":
    main()
