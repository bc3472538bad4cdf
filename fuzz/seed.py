#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/ (gitignored).

Seeds come from the shared corpus (../shared/corpus beside the checkout), the repository's own
fixtures and bundled traces, and `ctxbudget policies` (for the spec parsers). Nothing here is
committed: run it before fuzzing, as docs/hostile-input.md ("Fuzzing") says.

Large real sessions make poor seeds (libFuzzer works best on small inputs), so they are shrunk
while keeping their structure: every JSON value keeps its keys, strings are cut to 200 characters
and lists to their first and last few items; JSON Lines files are cut into windows of 25
consecutive lines. Usage: python3 fuzz/seed.py [--corpus DIR]
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Shared-corpus folder -> fuzz target.
CORPUS_DIRS = {
    "claude-code": "format_claude_code",
    "claude-code-stream-json": "format_claude_stream",
    "codex-cli": "format_codex",
    "gemini-cli": "format_gemini_cli",
    "mini-swe-agent": "format_mini_swe_agent",
    "openai-chat": "format_openai_chat",
    "openhands": "format_openhands",
    "swe-agent": "format_swe_agent",
    "api-wire-cassettes": "format_cassette",
}

# tests/fixtures folder -> fuzz target.
FIXTURE_DIRS = {
    "anthropic-messages": "format_anthropic_messages",
    "cache-trap": "format_native",
    "cassette": "format_cassette",
    "claude-stream": "format_claude_stream",
    "codex": "format_codex",
    "gemini-cli": "format_gemini_cli",
    "inspect": "format_inspect",
    "mini-swe-agent": "format_mini_swe_agent",
    "native": "format_native",
    "openai-chat": "format_openai_chat",
    "openai-responses": "format_openai_responses",
    "openhands": "format_openhands",
    "policies": "format_native",
    "swe-agent": "format_swe_agent",
}

MAX_STRING = 200
KEEP_ITEMS = 4
WINDOW = 25
MAX_SEED = 48 * 1024


def shrink(v):
    """The same JSON shape, with long strings cut and long lists thinned."""
    if isinstance(v, str):
        return v[:MAX_STRING]
    if isinstance(v, list):
        items = v if len(v) <= 2 * KEEP_ITEMS else v[:KEEP_ITEMS] + v[-KEEP_ITEMS:]
        return [shrink(x) for x in items]
    if isinstance(v, dict):
        return {k: shrink(x) for k, x in v.items()}
    return v


class Seeds:
    def __init__(self, out):
        self.out = out
        self.counts = {}

    def add(self, target, data):
        if isinstance(data, str):
            data = data.encode()
        if not data or len(data) > MAX_SEED:
            return
        d = os.path.join(self.out, target)
        os.makedirs(d, exist_ok=True)
        name = hashlib.sha1(data).hexdigest()
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        self.counts[target] = self.counts.get(target, 0) + 1
        # Every seed of an importer also seeds detection (its head is what detection sees).
        if target.startswith("format_"):
            self.add("detect", data[:8192])


def json_lines_windows(text):
    lines = [l for l in text.splitlines() if l.strip()]
    starts = sorted({0, max(0, len(lines) // 2 - WINDOW // 2), max(0, len(lines) - WINDOW)})
    for s in starts:
        out = []
        for line in lines[s:s + WINDOW]:
            try:
                out.append(json.dumps(shrink(json.loads(line)), ensure_ascii=False))
            except ValueError:
                out.append(line[:MAX_STRING])
        yield "\n".join(out) + "\n"


def seeds_of_file(path):
    """Seeds derived from one trace file."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) <= 8 * 1024:
        yield raw
    text = raw.decode("utf-8", "replace")
    if path.endswith((".yaml", ".yml")):
        yield raw[:MAX_SEED]
        return
    try:
        doc = json.loads(text)
    except ValueError:
        yield from json_lines_windows(text)
        return
    small = shrink(doc)
    yield json.dumps(small, indent=2, ensure_ascii=False)
    yield json.dumps(small, ensure_ascii=False)


def walk(d):
    for base, _dirs, files in sorted(os.walk(d)):
        for name in sorted(files):
            if not name.endswith((".md", ".meta.json", ".py")):
                yield os.path.join(base, name)


def registry_text():
    """`ctxbudget policies`, from the release build (built if needed)."""
    cmd = ["cargo", "run", "--release", "--quiet", "--bin", "ctxbudget", "--", "policies"]
    return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout


def parse_registry(text):
    """(policies, transforms): lists of (name, [(key, default)]), from the listing's layout: a
    name alone on an unindented line, then indented lines: what it does, its source, and one
    `key=default  meaning` line per parameter."""
    sections, current, entry, indented = ([], []), 0, None, 0
    for line in text.splitlines():
        if line.startswith("Record-time transforms"):
            current, entry = 1, None
        elif line and not line.startswith(" ") and " " not in line.strip():
            entry, indented = (line.strip(), []), 0
            sections[current].append(entry)
        elif line.startswith("    ") and entry is not None:
            indented += 1
            if indented > 2:
                key, _, rest = line.strip().partition("=")
                entry[1].append((key, rest.split("  ")[0]))
    return sections


def spec_seeds(kinds):
    for name, params in kinds:
        yield name
        for key, default in params:
            yield f"{name}:{key}={default}"
        if params:
            yield f"{name}:" + ",".join(f"{k}={d}" for k, d in params)


def toml_seeds(policies):
    for name, params in policies:
        body = "".join(f'{k} = "{d}"\n' for k, d in params)
        yield f'[[policy]]\nkind = "{name}"\nname = "{name}-x"\n{body}'
    yield "".join(f'[[policy]]\nkind = "{n}"\n\n' for n, _ in policies)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--out", default=os.path.join(HERE, "corpus"))
    args = ap.parse_args()
    seeds = Seeds(args.out)
    if os.path.isdir(args.corpus):
        for folder, target in CORPUS_DIRS.items():
            for path in walk(os.path.join(args.corpus, folder)):
                for s in seeds_of_file(path):
                    seeds.add(target, s)
    else:
        print(f"note: {args.corpus} not found; seeding from the repository's fixtures only", file=sys.stderr)
    for folder, target in FIXTURE_DIRS.items():
        for path in walk(os.path.join(ROOT, "tests", "fixtures", folder)):
            for s in seeds_of_file(path):
                seeds.add(target, s)
    for path in walk(os.path.join(ROOT, "traces")):
        for s in seeds_of_file(path):
            seeds.add("format_native", s)
    # Tool outputs for the split: a threshold (2 bytes, little endian) then the text.
    for path in walk(os.path.join(ROOT, "tests", "fixtures")):
        with open(path, "rb") as f:
            text = f.read()[:4096]
        for threshold in (0, 80, 256):
            seeds.add("split", threshold.to_bytes(2, "little") + text)
    policies, transforms = parse_registry(registry_text())
    for s in spec_seeds(policies):
        seeds.add("policy_spec", s)
    for s in spec_seeds(transforms):
        seeds.add("transform_spec", s)
    for s in toml_seeds(policies):
        seeds.add("policy_file", s)
    for target, n in sorted(seeds.counts.items()):
        print(f"{target:28} {n:5} seeds")


if __name__ == "__main__":
    main()
