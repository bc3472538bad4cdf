#!/usr/bin/env bash
# Runs ctxbudget's fuzz targets one after another, single job, each for SECONDS (default 300),
# and prints per target the executions, run time and whether it crashed. Crashing inputs are left
# in fuzz/artifacts/<target>/ by libFuzzer. Seeds: run `python3 fuzz/seed.py` first.
#
#   bash fuzz/run.sh [SECONDS] [TARGET...]      (every target when none is named)
#
# The toolchain is stable: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z flags. No sanitizer
# (`-s none`): the project is safe Rust, and release builds keep debug assertions and overflow
# checks on (cargo-fuzz's default), so arithmetic overflow is caught as a crash.
set -u
cd "$(dirname "$0")"
seconds=${1:-300}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(RUSTC_BOOTSTRAP=1 cargo fuzz list)
fi
export RUSTC_BOOTSTRAP=1
cargo fuzz build -s none >/dev/null 2>&1 || { echo "build failed: run 'RUSTC_BOOTSTRAP=1 cargo fuzz build -s none' in fuzz/" >&2; exit 2; }
mkdir -p logs
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log="logs/$t.log"
  start=$(date +%s)
  cargo fuzz run -s none "$t" -- -max_total_time="$seconds" -max_len=65536 -timeout=20 \
    -rss_limit_mb=4096 -print_final_stats=1 >"$log" 2>&1
  status=$?
  took=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  crashes=$(ls "artifacts/$t" | wc -l)
  printf '%-28s execs %10s  seconds %5s  exit %3s  artifacts %s\n' "$t" "${execs:-?}" "$took" "$status" "$crashes"
done
