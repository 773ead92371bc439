#!/usr/bin/env bash
# PEN Fig. 15b from a finished `lamina sweep experiments/pen-timeline.toml` directory:
# for each trace and load, the write latency over time of NFTL with block erase only and with PEN
# on one axis (mean and maximum per window), as OUT_DIR/pen-fig15b-<trace>-<load>.png
# (+ .csv),
# and how PEN's windows compare with the baseline's (printed).
# Usage: scripts/pen-timeline.sh SWEEP_DIR [OUT_DIR] [--bin LAMINA] [--windows N]
set -euo pipefail
sweep=${1:?usage: scripts/pen-timeline.sh SWEEP_DIR [OUT_DIR] [--bin LAMINA] [--windows N]}
shift
out=docs/img
if [[ $# -gt 0 && $1 != --* ]]; then out=$1; shift; fi
bin=target/release/lamina
windows=100
while [[ $# -gt 0 ]]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --windows) windows=$2; shift 2 ;;
    *) echo "pen-timeline: unknown argument $1" >&2; exit 2 ;;
  esac
done
csv=$sweep/results.csv
[[ -f $csv ]] || { echo "pen-timeline: $csv not found (run the sweep first)" >&2; exit 2; }
mkdir -p "$out"
# The run key of (trace, load, system) from the results table's named columns.
key() {
  awk -F, -v t="$1" -v l="$2" -v s="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["trace"] == t && $col["load"] == l && $col["system"] == s { print $col["key"] }' "$csv"
}
combos=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { print $col["trace"] "," $col["load"] }' "$csv" | sort -u)
for combo in $combos; do
  trace=${combo%,*}
  load=${combo#*,}
  base=$(key "$trace" "$load" nftl)
  pen=$(key "$trace" "$load" nftl-pen)
  [[ -n $base && -n $pen ]] || { echo "pen-timeline: $trace at load $load lacks an nftl or nftl-pen run" >&2; exit 2; }
  name=${trace%.trace}
  echo "$name, load $load:"
  "$bin" plot timeline "$sweep/runs/$base.latency.csv" "$sweep/runs/$pen.latency.csv" \
    --names nftl,nftl-pen --op write --windows "$windows" \
    --title "PEN Fig. 15b: write latency over time ($name, load $load, NFTL, 7 % OP)" \
    --out "$out/pen-fig15b-$name-$load.png"
done
