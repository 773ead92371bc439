#!/usr/bin/env bash
# Run MQSim and Lamina on the same trace (docs/model.md, "Like-for-like with MQSim"):
# issue #16's light random 4 KiB trace (scripts/mapping-synth-traces.sh), MQSim's own
# default ssdconfig.xml with Ideal_Mapping_Table false (its default cached mapping) and
# true (ideal mapping), against Lamina's `mqsim-default` preset with the NVMe host
# interface, ideal mapping and MQSim's CMT size (233016 entries). Prints the read and
# write means of each run.
#
# MQSim is not part of Lamina: build it yourself (github.com/CMU-SAFARI/MQSim, `make`)
# and point --mqsim (or $MQSIM_DIR) at the directory holding the MQSim binary and its
# ssdconfig.xml; without it the script skips (exit 0). Stock MQSim reports one mean for
# all requests (Device_Response_Time, whole µs) and per-transaction means without the
# host interface; the exact per-type means need a per-request log, which stock MQSim
# does not write. If the MQSim binary writes one to $MQSIM_REQLOG (a local
# instrumentation, docs/model.md), lines `H type start_sector sectors arrival_ns
# enqueue_ns completion_ns` (type 1 = read), the script computes the exact means from it.
#
# Usage: scripts/mqsim-compare.sh [DIR] [--bin LAMINA] [--mqsim MQSIM_DIR]
#   DIR defaults to target/mqsim-compare.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/mqsim-compare; bin=""; mq=${MQSIM_DIR:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --mqsim) mq=$2; shift 2 ;;
    -*) echo "mqsim-compare: unknown option $1 (use --bin LAMINA, --mqsim DIR)" >&2; exit 2 ;;
    *) dir=$1; shift ;;
  esac
done
skip() { echo "SKIP: mqsim-compare: $*"; exit 0; }
[ -n "$mq" ] || skip "MQSim not given (set MQSIM_DIR or --mqsim to a built CMU-SAFARI/MQSim checkout)"
[ -x "$mq/MQSim" ] || skip "no MQSim binary in $mq (build it there with make)"
[ -f "$mq/ssdconfig.xml" ] || skip "no ssdconfig.xml in $mq"
mq=$(cd "$mq" && pwd)
if [ -z "$bin" ]; then
  cargo build --release --quiet -p lamina-cli
  bin=target/release/lamina
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
scripts/mapping-synth-traces.sh "$dir" --bin "$bin" >/dev/null
trace=$dir/light-4k.trace
(cd "$mq" && git rev-parse HEAD 2>/dev/null || echo "MQSim commit unknown (not a git checkout)") \
  | sed 's/^/MQSim: /'

# The trace is already MQSim's ASCII layout (time_ns device start_sector sectors
# type, 1 = read); the workload file points one trace-based flow at it, every
# channel, chip, die and plane, with the sample workload's write cache mode.
bash scripts/mqsim-workload.sh "$trace" > "$dir/workload.xml"

# Mean response (µs) of type $2 (1 = read, 0 = write) from a per-request log.
log_mean() { awk -v t="$2" '$1 == "H" && $2 == t { s += $7 - $5; n++ } END { if (n) printf "%.3f", s / n / 1000; else printf "n/a" }' "$1"; }
# A value of a tag from MQSim's result file.
tag() { grep -o "<$2>[^<]*" "$1" | head -1 | sed 's/.*>//'; }

printf '%-34s %12s %12s  %s\n' run "read mean" "write mean" "notes"
for mapping in cached ideal; do
  ideal=false; [ "$mapping" = ideal ] && ideal=true
  sed "s#<Ideal_Mapping_Table>[a-z]*<#<Ideal_Mapping_Table>$ideal<#" "$mq/ssdconfig.xml" > "$dir/ssd-$mapping.xml"
  cp "$dir/workload.xml" "$dir/wl-$mapping.xml"
  rm -f "$dir/mqsim-$mapping.log"
  MQSIM_REQLOG=$dir/mqsim-$mapping.log "$mq/MQSim" -i "$dir/ssd-$mapping.xml" -w "$dir/wl-$mapping.xml" \
    < /dev/null > "$dir/mqsim-$mapping.out" 2>&1
  res=$dir/wl-${mapping}_scenario_1.xml
  [ -f "$res" ] || { echo "mqsim-compare: MQSim wrote no $res (see $dir/mqsim-$mapping.out)" >&2; exit 1; }
  stock="stock: all-request mean $(tag "$res" Device_Response_Time) us, read transaction $(tag "$res" Average_Read_Transaction_Turnaround_Time) us"
  if [ -s "$dir/mqsim-$mapping.log" ]; then
    printf '%-34s %12s %12s  %s\n' "MQSim $mapping" "$(log_mean "$dir/mqsim-$mapping.log" 1)" \
      "$(log_mean "$dir/mqsim-$mapping.log" 0)" "$stock"
  else
    printf '%-34s %12s %12s  %s\n' "MQSim $mapping" n/a n/a "$stock (no per-request log)"
  fi
done

# Lamina: the doc's commands (preconditioned 14 % sequential fill, no overwrites).
lam() {
  local name=$1; shift
  "$bin" run --preset mqsim-default "$trace" --quiet \
    --set precondition.fill_fraction=0.14 --set precondition.max_overwrite_passes=0 \
    --set host.interface.kind='"nvme"' "$@" --latency-log "$dir/lamina-$name.csv"
  awk -F, 'NR > 1 { s[$2] += $5; n[$2]++ } END { printf "%-34s %12.3f %12.3f\n", "Lamina '"$name"'", s["read"] / n["read"] / 1000, s["write"] / n["write"] / 1000 }' \
    "$dir/lamina-$name.csv"
}
lam cached --set ftl.mapping='"cached"' --set ftl.cmt_entries=233016
lam ideal
