#!/usr/bin/env bash
# Every command's output on the bundled traces and the shared corpus, written to one folder, so
# that a refactor can be checked byte for byte:
#   scripts/golden.sh target/release/ctxbudget /tmp/before   # on the old commit
#   scripts/golden.sh target/release/ctxbudget /tmp/after    # on the new one
#   diff -r /tmp/before /tmp/after
# Each output file holds stdout; `.err` beside it holds stderr and the exit code.
set -uo pipefail
bin=$(realpath "$1")
out=$2
cd "$(dirname "$0")/.."
corpus=../shared/corpus
rm -rf "$out" && mkdir -p "$out"
run() { # name, args...
  local name=$1; shift
  "$bin" "$@" >"$out/$name" 2>"$out/$name.err"
  echo "exit $?" >>"$out/$name.err"
}
anchors=(--policy none --policy opencode --policy anthropic --policy gemini --policy swe-agent
  --policy openhands --policy langchain --policy openclaw --policy keep-turns:n=3 --policy budget:max=40000,target=20000)
for src in traces corpus; do
  paths=(traces); [ "$src" = corpus ] && paths=("$corpus")
  for f in table csv json markdown; do
    run "$src.replay.$f" replay "${paths[@]}" --format "$f"
    run "$src.sweep.$f" sweep "${paths[@]}" --format "$f"
    run "$src.compare.$f" compare "${paths[@]}" --format "$f"
    run "$src.cost.$f" cost "${paths[@]}" --format "$f"
    run "$src.calibrate.$f" calibrate "${paths[@]}" --format "$f"
  done
  run "$src.replay-per-request.csv" replay "${paths[@]}" --per-request --format csv
  run "$src.replay-per-request.json" replay "${paths[@]}" --per-request --format json
  run "$src.replay-per-request.table" replay "${paths[@]}" --per-request --format table
  run "$src.compare-anchors.json" compare "${paths[@]}" "${anchors[@]}" --format json
  run "$src.compare-overhead0.table" compare "${paths[@]}" --overhead 0
  run "$src.reconcile.json" reconcile "${paths[@]}" --per-request --format json
  run "$src.reconcile.table" reconcile "${paths[@]}"
  run "$src.replay-j1.json" replay "${paths[@]}" -j 1 --format json
  # A fixed folder, so that the "wrote …" line is the same whatever $out is.
  rm -rf "target/golden-report-$src"
  "$bin" report "${paths[@]}" --out "target/golden-report-$src" >"$out/$src.report.stdout" 2>"$out/$src.report.err"
  echo "exit $?" >>"$out/$src.report.err"
  mv "target/golden-report-$src" "$out/$src.report"
done
run policies policies
printf 'line one\nline two\n%.0s' $(seq 200) >"$out/split-input.txt"
run split.txt split "$out/split-input.txt"
run split.json split "$out/split-input.txt" --json
run count.txt count "$out/split-input.txt"
run bad.replay replay Cargo.toml
