#!/usr/bin/env bash
# Instructions executed by `lamina`, counted by valgrind's callgrind: a measure of the
# simulator's work that does not move with the host. Wall times of the same binary moved
# by 25 % between two runs seconds apart on the machine class (docs/performance.md), so
# a change of a few percent cannot be seen in them; its instruction count can: the same
# binary on the same trace counts the same instructions on every run to within 0.01 %
# (the helper threads' timing moves how often the main thread waits for them).
#
#   scripts/bench-instr.sh [--quick] [--bin PATH] [--base PATH] [-n N] [CASE...]
#
# Cases (default: both):
#   mqsim   the first N requests (default 200,000) of ../shared/bench/gen_trace.py's
#           default trace on mqsim-default, prefill on (the `mqsim` case of
#           scripts/bench-e2e.sh, shortened: callgrind runs about 20x slower)
#   ssdsim  the first N requests (default 50,000) of the same trace on SSDsim 2.1's
#           geometry (../shared/bench/ssdsim-geometry.toml)
#   span2   the mqsim case with every request inside 2 GiB instead of 200 GiB
#           (gen_trace.py --span-gib 2; not run by default): the same requests on a
#           random-access footprint 100x smaller (docs/performance.md, "Round of
#           2026-11-29 (third session)"; scripts/bench-e2e.sh span-pairs times it)
#
# For each case it prints the instructions of the whole process and of its main thread,
# which runs the simulation (setup, the prefill pass, the replay and the report; the
# trace's parsing, the statistics and the other helper threads run beside it), and the
# main thread's instructions per request and per flash page operation (host and GC
# reads and programs, read-modify-write reads: the report's counts).
# --base PATH: the same for a second binary, and the change in percent; both reports
# must say the same (scripts/same-report.py: a speed change must not change a result),
# or the script fails.
#
# Instructions are not time: a cache miss costs hundreds of instructions' time and is
# one instruction here. Use this for changes that remove work; judge changes that move
# memory accesses with alternating wall-time pairs (scripts/bench-e2e.sh).
#
# --quick: 5,000 requests per case (a smoke test of the script). Needs valgrind, python3,
# awk and ../shared beside the repository.
# Builds `lamina` with the dist profile unless --bin is given.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SHARED=${LAMINA_SHARED:-$ROOT/../shared}
BIN=
BASE=
N=
QUICK=0
CASES=()
while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1 ;;
    --bin) BIN=$2; shift ;;
    --base) BASE=$2; shift ;;
    -n) N=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-instr: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) CASES+=("$1") ;;
  esac
  shift
done
[ ${#CASES[@]} -gt 0 ] || CASES=(mqsim ssdsim)
for tool in valgrind python3 awk; do
  command -v $tool > /dev/null || { echo "bench-instr: $tool not found (install it: valgrind, python3, awk)" >&2; exit 2; }
done
[ -f "$SHARED/bench/gen_trace.py" ] \
  || { echo "bench-instr: $SHARED/bench/gen_trace.py not found (put ../shared beside the repository or set LAMINA_SHARED)" >&2; exit 2; }
if [ -z "$BIN" ]; then
  cargo build --quiet --profile dist -p lamina-cli
  BIN=$ROOT/target/dist/lamina
fi
for b in "$BIN" $BASE; do
  [ -x "$b" ] || { echo "bench-instr: $b is not an executable" >&2; exit 2; }
done

WORK=${LAMINA_BENCH_DIR:-$ROOT/target/bench-instr}
mkdir -p "$WORK"

# The first n requests of gen_trace.py's default 1 M-request trace (its requests do not
# depend on how many follow), or with a span in GiB, of that trace confined to the span.
trace() {
  local n=$1 span=${2:-} t=$WORK/gen-$1${2:+-span$2}.trace
  if [ ! -s "$t" ]; then
    python3 "$SHARED/bench/gen_trace.py" -n "$n" ${span:+--span-gib "$span"} "$t.tmp" > /dev/null
    mv "$t.tmp" "$t"
  fi
  echo "$t"
}

# measure LABEL BIN ARGS...: run BIN under callgrind, one count per thread; prints
# "process main pageops requests" (main: the main thread, which runs the simulation).
measure() {
  local label=$1 bin=$2; shift 2
  local out=$WORK/$label.callgrind json=$WORK/$label.json
  rm -f "$out"* "$json"
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out" "$bin" "$@" -q --json "$json" \
    > /dev/null 2> "$WORK/$label.valgrind.txt" \
    || { echo "bench-instr: $label failed (see $WORK/$label.valgrind.txt)" >&2; exit 1; }
  python3 - "$out" "$json" <<'EOF'
import glob, json, sys
def summary(path):
    for line in open(path):
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])
    sys.exit(f"bench-instr: no summary line in {path}")
# One file per thread: OUT-01 is the main thread.
files = sorted(glob.glob(sys.argv[1] + "-*"))
if not files or not files[0].endswith("-01"):
    sys.exit("bench-instr: callgrind wrote no per-thread output")
counts = [summary(f) for f in files]
r = json.load(open(sys.argv[2]))
f, gc = r["flash"], r["gc"]
pages = f["host_reads"] + f["host_programs"] + f["gc_programs"] + f["rmw_reads"] + gc["reads"]
print(sum(counts), counts[0], pages, r["trace"]["requests"])
EOF
}

printf '%-8s %-10s %14s %14s %12s %12s\n' case binary "process instr" "main thread" "per request" "per page op"
for c in "${CASES[@]}"; do
  case $c in
    mqsim) n=${N:-200000}; span=; args=(run --preset mqsim-default) ;;
    ssdsim) n=${N:-50000}; span=; args=(run --config "$SHARED/bench/ssdsim-geometry.toml") ;;
    span2) n=${N:-200000}; span=2; args=(run --preset mqsim-default) ;;
    *) echo "bench-instr: unknown case $c (mqsim, ssdsim, span2)" >&2; exit 2 ;;
  esac
  [ $QUICK = 1 ] && n=5000
  t=$(trace "$n" $span)
  sides=(new)
  [ -n "$BASE" ] && sides=(base new)
  declare -A main=()
  for side in "${sides[@]}"; do
    b=$BIN; [ $side = base ] && b=$BASE
    counts=$(measure "$c-$side" "$b" "${args[@]}" "$t")
    read -r total m pages reqs <<< "$counts"
    main[$side]=$m
    awk -v c="$c" -v side=$side -v t="$total" -v m="$m" -v p="$pages" -v r="$reqs" \
      'BEGIN { printf "%-8s %-10s %14.0f %14.0f %12.0f %12.0f\n", c, side, t, m, m / r, m / p }'
  done
  if [ -n "$BASE" ]; then
    # A speed change may not change a result: the reports must agree, as
    # scripts/ref-compare.sh requires (a later schema may only add null or 0 fields).
    python3 "$ROOT/scripts/same-report.py" "$WORK/$c-base.json" "$WORK/$c-new.json" \
      || { echo "bench-instr: $c: the two binaries' reports differ" >&2; exit 1; }
    awk -v c="$c" -v a="${main[base]}" -v b="${main[new]}" \
      'BEGIN { printf "%-8s %-10s %14s %+13.2f%%\n", c, "change", "", (b - a) * 100 / a }'
  fi
  unset main
done
