#!/usr/bin/env bash
# Measures ctxbudget's speed goals against its peer, Python tiktoken, and prints a Markdown table
# (docs/performance.md). Builds the release binary and the speed harness, installs tiktoken in a
# virtual environment under the work directory (default /tmp/ctxbudget-peers, never committed) and
# runs benches/peers.py, which works offline from there on. Options go to peers.py:
#   --rounds N (default 5)   --big-mb MB (default 1024)   --no-big   --work DIR
set -euo pipefail
cd "$(dirname "$0")/.."
work=/tmp/ctxbudget-peers
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [[ ${args[i]} == --work ]]; then work=${args[i + 1]}; fi
done
cargo build --release --quiet --bin ctxbudget --example speed
if [[ ! -x $work/venv/bin/python ]]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet tiktoken
fi
exec "$work/venv/bin/python" benches/peers.py --work "$work" "$@"
