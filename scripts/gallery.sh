#!/usr/bin/env bash
# Regenerates the pictures of docs/gallery.md in docs/img/: the PNG charts `ctxbudget report` draws
# for the bundled traces/ and for one real recorded session of the shared corpus
# (../shared/corpus, beside the checkout). README's picture, docs/img/timeline.png, is the first of
# them again (the timeline of traces/build-and-test.jsonl). The charts carry no timestamp: running
# this twice writes the same bytes.
#
#   scripts/gallery.sh                 # builds the release binary first
#   CTXBUDGET=path/to/ctxbudget scripts/gallery.sh
#   scripts/gallery.sh --check         # writes nothing: names each picture a fresh render changes
#                                      # (compared byte for byte), exit 1 when there is one
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
case "${1:-}" in
    --check) check=true ;;
    "") ;;
    *) echo "usage: scripts/gallery.sh [--check]" >&2; exit 2 ;;
esac

bin=${CTXBUDGET:-target/release/ctxbudget}
if [ -z "${CTXBUDGET:-}" ]; then
    cargo build --release --quiet
fi
session=../shared/corpus/claude-code/codemie-code/session-624a4a58.jsonl
if [ ! -f "$session" ]; then
    echo "gallery.sh: $session not found (the shared corpus sits beside the checkout)" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Reports print their findings and any warnings; the gallery needs only their charts.
"$bin" report traces/ --out "$work/traces" >/dev/null 2>&1
"$bin" report "$session" --out "$work/session" >/dev/null 2>&1

# Copies a fresh render to its place in docs/img, or under --check compares the two.
stale=0
place() {
    if $check; then
        if ! cmp -s "$1" "$2"; then
            echo "stale: $2"
            stale=1
        fi
    else
        cp "$1" "$2"
    fi
}

mkdir -p docs/img
for chart in sweep policies calibration; do
    place "$work/traces/charts/$chart.png" "docs/img/traces-$chart.png"
done
place "$work/traces/charts/timeline-001.png" docs/img/timeline.png
for chart in sweep timeline-001; do
    place "$work/session/charts/$chart.png" "docs/img/session-$chart.png"
done
if $check; then
    [ "$stale" = 0 ] && echo "docs/img: every picture is what this binary draws"
    exit "$stale"
fi
ls -l docs/img/*.png | awk '{ total += $5; print $5, $NF } END { print total, "bytes in all" }'
