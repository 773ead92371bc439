#!/usr/bin/env bash
# Compare two `lamina` binaries on a reference set of runs, byte for byte.
#
# Usage: scripts/ref-compare.sh OLD_BIN NEW_BIN [OUT_DIR]
#
# A change that is meant to be a pure speed-up (a shortcut on the hot path, a cheaper
# data structure) must leave every result unchanged. This runs the bundled trace and
# the shared samples (../shared/traces, those present) under every transaction
# scheduler, a write buffer, die-aligned allocation, preconditioning and `--verify`,
# with both binaries, and compares the JSON reports: every field of the old report must
# be in the new one with the same value (the build-naming `schema_version` and
# `lamina_version` aside), and a field only the new report has must be null or 0 — a
# later schema may add sections (`pen`, `mapping`, …) and counters (`mirror_reads`)
# that a run without the feature leaves null or at 0, but may not change a number. Prints one line per run and exits non-zero if any
# report differs.
set -euo pipefail
old=${1:?usage: ref-compare.sh OLD_BIN NEW_BIN [OUT_DIR]}
new=${2:?usage: ref-compare.sh OLD_BIN NEW_BIN [OUT_DIR]}
out=${3:-$(mktemp -d)}
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="$root/../shared/traces"
mkdir -p "$out"

traces=("$root/traces/demo.trace")
for t in mqsim-ascii/tpcc.trace mqsim-ascii/websearch.trace msr-csv/hm_0-window1k.csv \
  ssdsim-ascii/financial1-head10k.ascii ssdsim-ascii/dtrs.ascii systor17/vdi-sample.csv.gz \
  blkparse/hadoop.blkparse flashnet/msr-cut-rw20-80.trace; do
  [ -f "$shared/$t" ] && traces+=("$shared/$t")
done

# name|arguments (each run also gets the trace)
cases=(
  "fcfs|--preset mqsim-default"
  "multiplane|--preset mqsim-default --set sched.scheduler=\"multiplane\""
  "multiplane-aligned|--preset mqsim-default --set sched.scheduler=\"multiplane\" --set ftl.allocation=\"die-aligned\""
  "sprinkler|--preset mqsim-default --set sched.scheduler=\"sprinkler\" --set host.queue_depth=32"
  "soml|--preset soml-tlc64 --set sched.scheduler=\"soml\""
  "buffer-fast|--preset mqsim-default --set sched.scheduler=\"multiplane\" --time-scale 1/20 --set buffer.size_bytes=8388608"
  "precond-verify|--preset mqsim-default --set nand.geometry.blocks_per_plane=64 --set precondition.fill_fraction=0.9 --verify"
)

# Same results: old ⊆ new as described above (scripts/same-report.py).
same() {
  python3 "$root/scripts/same-report.py" "$1" "$2"
}

fail=0
for tr in "${traces[@]}"; do
  tn=$(basename "$tr")
  for c in "${cases[@]}"; do
    name=${c%%|*}
    args=${c#*|}
    for which in old new; do
      bin=$old
      [ "$which" = new ] && bin=$new
      # shellcheck disable=SC2086
      if ! eval "\"$bin\" run -q --json \"$out/$tn.$name.$which.json\" $args \"$tr\"" \
        >"$out/$tn.$name.$which.log" 2>&1; then
        echo "error $which" >"$out/$tn.$name.$which.json"
      fi
    done
    if grep -q '^error' "$out/$tn.$name.old.json" "$out/$tn.$name.new.json"; then
      echo "ERROR   $tn $name (see $out/$tn.$name.{old,new}.log)"
      fail=1
    elif same "$out/$tn.$name.old.json" "$out/$tn.$name.new.json" 2>"$out/$tn.$name.diff"; then
      echo "same    $tn $name"
    else
      echo "DIFFERS $tn $name ($(head -1 "$out/$tn.$name.diff"); see $out/$tn.$name.{old,new}.json)"
      fail=1
    fi
  done
done
exit $fail
