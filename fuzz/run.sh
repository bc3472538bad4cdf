#!/usr/bin/env bash
# Runs ctxbudget's fuzz targets one after another, single job, each for SECONDS (default 300),
# and prints per target the executions, the seconds fuzzed and the crashes found (with the panic
# message). Crashing inputs are left in fuzz/artifacts/<target>/ by libFuzzer, logs in fuzz/logs/.
# Seeds: run `python3 fuzz/seed.py` first.
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
export RUSTC_BOOTSTRAP=1
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi
cargo fuzz build -s none >/dev/null 2>&1 || { echo "build failed: run 'RUSTC_BOOTSTRAP=1 cargo fuzz build -s none' in fuzz/" >&2; exit 2; }
mkdir -p logs
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log="logs/$t.log"
  before=$(ls "artifacts/$t" | wc -l)
  cargo fuzz run -s none "$t" -- -max_total_time="$seconds" -max_len=65536 -timeout=20 \
    -rss_limit_mb=4096 -print_final_stats=1 >"$log" 2>&1
  status=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  fuzzed=$(grep -o '^Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*')
  if [ -z "$fuzzed" ] && [ -n "${execs:-}" ] && [ "${rate:-0}" -gt 0 ]; then fuzzed=$((execs / rate)); fi
  crashes=$(( $(ls "artifacts/$t" | wc -l) - before ))
  why=$(grep -m1 -A1 "panicked at" "$log" | tr '\n' ' ' | cut -c1-160)
  printf '%-26s execs %10s  seconds %5s  exit %3s  new crashes %s %s\n' "$t" "${execs:-?}" "${fuzzed:-?}" "$status" "$crashes" "$why"
done
