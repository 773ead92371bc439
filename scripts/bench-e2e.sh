#!/usr/bin/env bash
# Whole-process speed of `lamina`, as a user runs it: wall time from process start to
# exit and peak RSS (`/usr/bin/time -v`), median of several runs, for the workloads of
# issue #14 and README's Performance section.
#
#   scripts/bench-e2e.sh [--quick] [--runs N] [--bin PATH | --pgo] [CASE...]
#
# Cases (default: all but sweep):
#   mqsim      1 M requests of ../shared/bench/gen_trace.py (its defaults) on mqsim-default
#   mqsim-zero the same with host.unwritten_reads = zero (no prefill)
#   ssdsim     the same trace on SSDsim 2.1's geometry (../shared/bench/ssdsim-geometry.toml)
#   saturated  200 k IOPS offered (gen_trace.py --iops 200000), mqsim-default
#   scale4m    4 M requests (gen_trace.py -n 4000000), mqsim-default
#   pc256      preconditioning a 256 GiB device to steady state (8 KiB pages)
#   pc512      the same at 512 GiB
#   sweep      lamina sweep experiments/die-binding.toml with --threads 1 and 2
#
# --quick: 20 k-request traces, 8 GiB preconditioning, one run each (a smoke test of the
# script; CI runs it). Needs python3 and ../shared beside the repository for the
# generated traces; builds `lamina` with the dist profile unless --bin is given, or with
# the dist profile and profile-guided optimisation (scripts/build-pgo.sh) with --pgo.
# Only public tools: bash, python3, /usr/bin/time, sort, awk.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SHARED=${LAMINA_SHARED:-$ROOT/../shared}
RUNS=3
QUICK=0
BIN=
PGO=0
CASES=()
while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1; RUNS=1 ;;
    --runs) RUNS=$2; shift ;;
    --bin) BIN=$2; shift ;;
    --pgo) PGO=1 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "bench-e2e: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) CASES+=("$1") ;;
  esac
  shift
done
[ ${#CASES[@]} -gt 0 ] || CASES=(mqsim mqsim-zero ssdsim saturated scale4m pc256 pc512)
[ -x /usr/bin/time ] || { echo "bench-e2e: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
[ -f "$SHARED/bench/gen_trace.py" ] || { echo "bench-e2e: $SHARED/bench/gen_trace.py not found (set LAMINA_SHARED)" >&2; exit 2; }
if [ -z "$BIN" ] && [ $PGO = 1 ]; then
  bash scripts/build-pgo.sh >&2
  BIN=$ROOT/target/pgo/lamina
elif [ -z "$BIN" ]; then
  cargo build --quiet --profile dist -p lamina-cli
  BIN=$ROOT/target/dist/lamina
fi
WORK=${LAMINA_BENCH_DIR:-$ROOT/target/bench-e2e}
mkdir -p "$WORK"
N=1000000; N4=4000000; PCGIB=256; PCGIB2=512
if [ $QUICK = 1 ]; then N=20000; N4=80000; PCGIB=8; PCGIB2=16; fi

trace() { # NAME ARGS... -> path of a generated trace (made once)
  local f=$WORK/$1.trace; shift
  [ -s "$f" ] || python3 "$SHARED/bench/gen_trace.py" "$@" "$f" >/dev/null
  echo "$f"
}

# One measured command, RUNS times: prints "median_s min_s max_s peak_rss_mib".
measure() {
  local walls=() rss=0 out=$WORK/time.txt
  for _ in $(seq "$RUNS"); do
    if ! /usr/bin/time -v -o "$out" "$@" >/dev/null 2>"$WORK/stderr.txt"; then
      cat "$WORK/stderr.txt" >&2; echo "bench-e2e: failed: $*" >&2; exit 1
    fi
    local w; w=$(awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$out")
    local r; r=$(awk -F': ' '/Maximum resident set size/{print int($2/1024)}' "$out")
    walls+=("$w"); [ "$r" -gt "$rss" ] && rss=$r
  done
  printf '%s\n' "${walls[@]}" | sort -g | awk -v rss="$rss" '{a[NR]=$1} END {printf "%.2f %.2f %.2f %d\n", a[int((NR+1)/2)], a[1], a[NR], rss}'
}

row() { # CASE COMMAND...
  local name=$1; shift
  read -r med lo hi rss < <(measure "$@")
  printf '| %-10s | %6s s | %6s–%s s | %5s MiB |\n' "$name" "$med" "$lo" "$hi" "$rss"
}

pc_config() { # GIB -> config file preconditioning a GIB device (8 KiB pages) to steady state
  local gib=$1 f=$WORK/pc$1.toml
  # 4 ch x 4 chips x 2 dies x 2 planes = 64 planes; a block of 256 x 8 KiB pages is
  # 2 MiB, so a block per plane is 128 MiB: GIB * 8 blocks per plane (the geometry of
  # crates/ftl/examples/precondition_256g.rs).
  cat >"$f" <<EOF
preset = "mqsim-default"
[nand.geometry]
channels = 4
chips_per_channel = 4
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = $((gib * 8))
pages_per_block = 256
page_size_bytes = 8192
[precondition]
fill_fraction = 1.0
EOF
  echo "$f"
}

echo "lamina: $("$BIN" --version 2>/dev/null || echo "$BIN"); $RUNS run(s) per case; $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo '| case       | median   | range          | peak RSS  |'
echo '|---|---|---|---|'
for c in "${CASES[@]}"; do
  case $c in
    mqsim) row mqsim "$BIN" run --preset mqsim-default -q "$(trace base -n $N)" ;;
    mqsim-zero) row mqsim-zero "$BIN" run --preset mqsim-default -q --set host.unwritten_reads=zero "$(trace base -n $N)" ;;
    ssdsim) row ssdsim "$BIN" run --config "$SHARED/bench/ssdsim-geometry.toml" -q "$(trace base -n $N)" ;;
    saturated) row saturated "$BIN" run --preset mqsim-default -q "$(trace sat -n $N --iops 200000)" ;;
    scale4m) row scale4m "$BIN" run --preset mqsim-default -q "$(trace four -n $N4)" ;;
    pc256) row pc${PCGIB}g "$BIN" run --config "$(pc_config $PCGIB)" -q "$(trace tiny -n 1000)" ;;
    pc512) row pc${PCGIB2}g "$BIN" run --config "$(pc_config $PCGIB2)" -q "$(trace tiny -n 1000)" ;;
    sweep)
      spec=experiments/die-binding.toml
      [ $QUICK = 1 ] && spec=experiments/ci/die-binding-tiny.toml
      for t in 1 2; do
        rm -rf "$WORK/sweep$t"
        row "sweep -j$t" "$BIN" sweep "$spec" --out "$WORK/sweep$t" --threads $t
      done ;;
    *) echo "bench-e2e: unknown case $c (see --help)" >&2; exit 2 ;;
  esac
done
