#!/usr/bin/env bash
# Whole-process speed of `lamina`, as a user runs it: wall time from process start to
# exit and peak RSS (`/usr/bin/time -v`), median of several runs, for the workloads of
# issue #14 and README's Performance section.
#
#   scripts/bench-e2e.sh [--quick] [--runs N] [--bin PATH | --pgo] [--base PATH] [CASE...]
#
# Cases (default: all but sweep):
#   mqsim      1 M requests of ../shared/bench/gen_trace.py (its defaults) on mqsim-default
#   mqsim-zero the same with host.unwritten_reads = zero (no prefill)
#   ssdsim     the same trace on SSDsim 2.1's geometry (../shared/bench/ssdsim-geometry.toml)
#   saturated  200 k IOPS offered (gen_trace.py --iops 200000), mqsim-default
#   scale4m    4 M requests (gen_trace.py -n 4000000), mqsim-default
#   pc256      preconditioning a 256 GiB device to steady state (8 KiB pages)
#   pc512      the same at 512 GiB
#   scale-pairs  RUNS alternating pairs of the mqsim case and scale4m, with the ratio
#              of each pair's wall times (issue #14: 4 M requests in <= 4.2x the time of 1 M)
#   sat-pairs  RUNS alternating pairs of the mqsim case and the saturated trace with a
#              bounded host queue (host.queue_depth = 256), with each pair's ratio of
#              rates (issue #14: the saturated trace at >= 70 % of the unsaturated rate)
#   span-pairs RUNS alternating pairs of the mqsim case and the same trace confined to
#              2 GiB (gen_trace.py --span-gib 2), with the ratio of each pair's wall
#              times: the same requests on a random-access footprint 100x smaller, to
#              tell time spent on cache misses from time spent on instructions
#              (docs/performance.md, "Round of 2026-11-29 (third session)";
#              scripts/bench-instr.sh span2 counts its instructions)
#   sweep      lamina sweep experiments/die-binding.toml with --threads 1 and 2
#   sweep-pairs  RUNS alternating pairs of that sweep with --threads 1 and 2, with each
#              pair's speed-up (issue #14: >= 1.8x on 2 threads); with --quick the tiny
#              spec experiments/ci/die-binding-tiny.toml
#   vs-mqsim   the mqsim case side by side with MQSim (needs --mqsim DIR): RUNS pairs,
#              Lamina then MQSim, and the ratio of each pair's wall times
#   vs-ssdsim  the ssdsim case side by side with SSDsim 2.1 (needs --ssdsim DIR)
#
# --base PATH: a second `lamina` (e.g. the build before a change). The cases mqsim,
# mqsim-zero, ssdsim, saturated, scale4m, pc256 and pc512 then run as RUNS alternating
# pairs, PATH then the binary, with each pair's ratio of wall times (new / base), and the
# two binaries' JSON reports of the last pair must say the same (scripts/same-report.py:
# a speed change must not change a result), or the script fails. The other cases run the
# binary alone.
#
# --mqsim DIR: a built MQSim (github.com/CMU-SAFARI/MQSim, `make`): DIR holds the MQSim
# binary and its default ssdconfig.xml. MQSim replays the same trace with the workload
# file of scripts/mqsim-workload.sh (Initial_Occupancy_Percentage 70). The machine
# class's VM has run on hosts where Lamina's speed differs 3x; whether another simulator
# slows by the same factor is unknown, so a ratio counts only from pairs run together.
#
# --ssdsim DIR: a built SSDsim 2.1 (e.g. github.com/huaicheng/ssdsim; gcc -O2 -fcommon):
# DIR holds the binary `ssd` and SSDsim's default page.parameters, of which the script
# changes only the channel and chip counts (8 channels x 4 chips; the rest of the default
# file is ../shared/bench/ssdsim-geometry.toml). The trace's addresses are wrapped as
# Lamina wraps them, inside the 60,397,976 logical sectors both simulators have on this
# geometry. Stock SSDsim 2.1 never finishes a trace: at its end it stops advancing its
# clock while requests are outstanding. It needs a small fix: move the clock to the next
# device event there, as it does mid-trace (docs/performance.md, "2026-11-28").
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
BASE=
PGO=0
MQSIM_DIR=
SSDSIM_DIR=
CASES=()
while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1; RUNS=1 ;;
    --runs) RUNS=$2; shift ;;
    --bin) BIN=$2; shift ;;
    --base) BASE=$2; shift ;;
    --pgo) PGO=1 ;;
    --mqsim) MQSIM_DIR=$2; shift ;;
    --ssdsim) SSDSIM_DIR=$2; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    -*) echo "bench-e2e: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) CASES+=("$1") ;;
  esac
  shift
done
[ ${#CASES[@]} -gt 0 ] || CASES=(mqsim mqsim-zero ssdsim saturated scale4m pc256 pc512 scale-pairs sat-pairs)
[ -x /usr/bin/time ] || { echo "bench-e2e: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
[ -f "$SHARED/bench/gen_trace.py" ] || { echo "bench-e2e: $SHARED/bench/gen_trace.py not found (set LAMINA_SHARED)" >&2; exit 2; }
if [ -z "$BIN" ] && [ $PGO = 1 ]; then
  bash scripts/build-pgo.sh >&2
  BIN=$ROOT/target/pgo/lamina
elif [ -z "$BIN" ]; then
  cargo build --quiet --profile dist -p lamina-cli
  BIN=$ROOT/target/dist/lamina
fi
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "bench-e2e: --base $BASE is not an executable" >&2; exit 2; }
WORK=${LAMINA_BENCH_DIR:-$ROOT/target/bench-e2e}
mkdir -p "$WORK"
N=1000000; N4=4000000; PCGIB=256; PCGIB2=512
if [ $QUICK = 1 ]; then N=20000; N4=80000; PCGIB=8; PCGIB2=16; fi

trace() { # NAME ARGS... -> path of a generated trace (made once)
  local f=$WORK/$1.trace; shift
  [ -s "$f" ] || python3 "$SHARED/bench/gen_trace.py" "$@" "$f" >/dev/null
  echo "$f"
}

# Median, minimum and maximum of the arguments.
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "%s %s %s\n", a[int((NR+1)/2)], a[1], a[NR]}'; }

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
  echo "$(med "${walls[@]}") $rss"
}

# One run of a command: prints "wall_s cpu_s peak_rss_mib".
once() {
  local out=$WORK/time1.txt
  if ! /usr/bin/time -v -o "$out" "$@" >/dev/null 2>"$WORK/stderr.txt" </dev/null; then
    cat "$WORK/stderr.txt" >&2; echo "bench-e2e: failed: $*" >&2; exit 1
  fi
  awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); w=0; for(i=1;i<=n;i++) w=w*60+a[i]}
    /User time/{c+=$2} /System time/{c+=$2} /Maximum resident set size/{r=int($2/1024)}
    END {printf "%.2f %.2f %d\n", w, c, r}' "$out"
}

# RUNS alternating pairs of two commands, the functions side_a then side_b: one line per
# pair on stderr, then a row with each side's median wall time and the median ratio B/A
# (or, with a third argument `rate`, A/B: B's rate over A's when both run the same requests).
pairs() { # NAME_A NAME_B [rate]
  local ra=() rb=() ratios=() wa ca ma wb cb mb rss_a=0 rss_b=0
  local fmt='%.2f' expr='b / a' unit=x what="pairwise wall-time ratio $2 / $1"
  if [ "${3:-}" = rate ]; then
    fmt='%.3f' expr='a / b' unit= what="pairwise wall-time ratio $1 / $2 (rate of $2 / rate of $1)"
  fi
  for i in $(seq "$RUNS"); do
    read -r wa ca ma < <(side_a)
    read -r wb cb mb < <(side_b)
    [ -n "$wa" ] && [ -n "$wb" ] || exit 1 # a run failed (its error is printed above)
    [ "$ma" -gt "$rss_a" ] && rss_a=$ma; [ "$mb" -gt "$rss_b" ] && rss_b=$mb
    ra+=("$wa"); rb+=("$wb")
    ratios+=("$(awk -v a="$wa" -v b="$wb" "BEGIN {printf \"$fmt\", $expr}")")
    echo "pair $i: $1 $wa s wall ($ca s CPU, $ma MiB), $2 $wb s wall ($cb s CPU, $mb MiB): ${ratios[-1]}$unit" >&2
  done
  local a b r
  read -r -a a < <(med "${ra[@]}"); read -r -a b < <(med "${rb[@]}"); read -r -a r < <(med "${ratios[@]}")
  printf '| %-10s | %6s s | %6s–%s s | %5s MiB |\n' "$1" "${a[0]}" "${a[1]}" "${a[2]}" "$rss_a"
  printf '| %-10s | %6s s | %6s–%s s | %5s MiB |\n' "$2" "${b[0]}" "${b[1]}" "${b[2]}" "$rss_b"
  printf '| %-10s | %6s%s | %6s–%s%s | %s |\n' "ratio" "${r[0]}" "$unit" "${r[1]}" "${r[2]}" "$unit" "$what"
}

row() { # CASE COMMAND...
  local name=$1; shift
  read -r med lo hi rss < <(measure "$@")
  [ -n "$med" ] || exit 1 # the run failed (its error is printed above)
  printf '| %-10s | %6s s | %6s–%s s | %5s MiB |\n' "$name" "$med" "$lo" "$hi" "$rss"
}

# A case run by the binary alone, or with --base as alternating pairs of both binaries
# whose JSON reports must say the same (scripts/same-report.py; the runs are quiet, so
# standard output has nothing to compare).
single() { # CASE LAMINA-ARGUMENTS...
  local name=$1; shift
  if [ -z "$BASE" ]; then
    row "$name" "$BIN" "$@"
    return
  fi
  AB_ARGS=("$@")
  side_a() { once "$BASE" "${AB_ARGS[@]}" --json "$WORK/report-base.json"; }
  side_b() { once "$BIN" "${AB_ARGS[@]}" --json "$WORK/report-new.json"; }
  rm -f "$WORK/report-base.json" "$WORK/report-new.json"
  pairs "$name-base" "$name"
  if ! python3 "$ROOT/scripts/same-report.py" "$WORK/report-base.json" "$WORK/report-new.json"; then
    echo "bench-e2e: $name: the reports of --base and the binary differ ($WORK/report-base.json, $WORK/report-new.json)" >&2
    exit 1
  fi
  echo "$name: the two binaries' JSON reports say the same" >&2
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
[ -z "$BASE" ] || echo "base: $BASE ($("$BASE" --version 2>/dev/null || echo "no --version"))"
# The host CPU and its caches: the same VM class has run on hosts whose speed for Lamina
# differs 3x (docs/performance.md, "How we measure").
cpu=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
caches=$(for d in /sys/devices/system/cpu/cpu0/cache/index*; do
  [ -r "$d/size" ] && printf 'L%s %s %s, ' "$(cat "$d/level")" "$(cat "$d/type")" "$(cat "$d/size")"; done 2>/dev/null || true)
echo "cpu: ${cpu:-unknown}; ${caches%, } (as the guest sees them)"
echo
echo '| case       | median   | range          | peak RSS  |'
echo '|---|---|---|---|'
for c in "${CASES[@]}"; do
  case $c in
    mqsim) single mqsim run --preset mqsim-default -q "$(trace base -n $N)" ;;
    mqsim-zero) single mqsim-zero run --preset mqsim-default -q --set host.unwritten_reads=zero "$(trace base -n $N)" ;;
    ssdsim) single ssdsim run --config "$SHARED/bench/ssdsim-geometry.toml" -q "$(trace base -n $N)" ;;
    saturated) single saturated run --preset mqsim-default -q "$(trace sat -n $N --iops 200000)" ;;
    scale4m) single scale4m run --preset mqsim-default -q "$(trace four -n $N4)" ;;
    pc256) single pc${PCGIB}g run --config "$(pc_config $PCGIB)" -q "$(trace tiny -n 1000)" ;;
    pc512) single pc${PCGIB2}g run --config "$(pc_config $PCGIB2)" -q "$(trace tiny -n 1000)" ;;
    scale-pairs)
      T1=$(trace base -n $N); T4=$(trace four -n $N4)
      side_a() { once "$BIN" run --preset mqsim-default -q "$T1"; }
      side_b() { once "$BIN" run --preset mqsim-default -q "$T4"; }
      pairs "n=$N" "n=$N4" ;;
    span-pairs)
      T1=$(trace base -n $N); T2=$(trace span2 -n $N --span-gib 2)
      side_a() { once "$BIN" run --preset mqsim-default -q "$T1"; }
      side_b() { once "$BIN" run --preset mqsim-default -q "$T2"; }
      pairs 200GiB 2GiB ;;
    sat-pairs)
      T1=$(trace base -n $N); TS=$(trace sat -n $N --iops 200000)
      side_a() { once "$BIN" run --preset mqsim-default -q "$T1"; }
      side_b() { once "$BIN" run --preset mqsim-default -q --set host.queue_depth=256 "$TS"; }
      pairs unsat sat-qd256 rate ;;
    sweep)
      spec=experiments/die-binding.toml
      [ $QUICK = 1 ] && spec=experiments/ci/die-binding-tiny.toml
      for t in 1 2; do
        rm -rf "$WORK/sweep$t"
        row "sweep -j$t" "$BIN" sweep "$spec" --out "$WORK/sweep$t" --threads $t
      done ;;
    sweep-pairs)
      SPEC=experiments/die-binding.toml
      [ $QUICK = 1 ] && SPEC=experiments/ci/die-binding-tiny.toml
      # Each side starts from an empty output directory (a sweep resumes otherwise).
      side_a() { rm -rf "$WORK/sweep-p1"; once "$BIN" sweep "$SPEC" --out "$WORK/sweep-p1" --threads 1; }
      side_b() { rm -rf "$WORK/sweep-p2"; once "$BIN" sweep "$SPEC" --out "$WORK/sweep-p2" --threads 2; }
      pairs sweep-j1 sweep-j2 rate ;;
    vs-mqsim)
      [ -n "$MQSIM_DIR" ] || { echo "bench-e2e: case vs-mqsim needs --mqsim DIR (a built MQSim)" >&2; exit 2; }
      [ -x "$MQSIM_DIR/MQSim" ] && [ -f "$MQSIM_DIR/ssdconfig.xml" ] \
        || { echo "bench-e2e: --mqsim $MQSIM_DIR: no MQSim binary or ssdconfig.xml there (build MQSim with make)" >&2; exit 2; }
      T=$(trace base -n $N)
      bash scripts/mqsim-workload.sh "$T" >"$WORK/mqsim-wl.xml"
      cp "$MQSIM_DIR/ssdconfig.xml" "$WORK/mqsim-ssd.xml"
      side_a() { once "$BIN" run --preset mqsim-default -q "$T"; }
      side_b() { once "$MQSIM_DIR/MQSim" -i "$WORK/mqsim-ssd.xml" -w "$WORK/mqsim-wl.xml"; }
      pairs lamina MQSim ;;
    vs-ssdsim)
      [ -n "$SSDSIM_DIR" ] || { echo "bench-e2e: case vs-ssdsim needs --ssdsim DIR (a built SSDsim 2.1)" >&2; exit 2; }
      [ -x "$SSDSIM_DIR/ssd" ] && [ -f "$SSDSIM_DIR/page.parameters" ] \
        || { echo "bench-e2e: --ssdsim $SSDSIM_DIR: no ssd binary or page.parameters there (build SSDsim first)" >&2; exit 2; }
      T=$(trace base -n $N)
      S=$WORK/ssdsim; mkdir -p "$S"
      awk '/^chip number\[[0-9]+\]/ {split($0, f, /[][]/); sub(/=.*/, f[2] < 8 ? "= 4;" : "= 0;")}
        /^channel number/ {sub(/=.*/, "= 8;")}
        /^chip number *=/ {sub(/=.*/, "= 32;")} {print}' "$SSDSIM_DIR/page.parameters" >"$S/page.parameters"
      # Same columns and units (time ns, device, sector, sectors, 1 = read); Lamina's wrap.
      awk -v cap=60397976 '{ if ($3 + $4 > cap) { $3 %= cap; if ($3 + $4 > cap) $3 = cap - $4 } print }' "$T" >"$S/trace"
      printf '#!/usr/bin/env bash\ncd "%s" && echo trace | "%s/ssd" >stdout.txt; rc=$?\n[ $rc -le 1 ]  # SSDsim exits 1 when done\n' \
        "$S" "$SSDSIM_DIR" >"$S/run"; chmod +x "$S/run"
      side_a() { once "$BIN" run --config "$SHARED/bench/ssdsim-geometry.toml" -q "$T"; }
      side_b() { once "$S/run"; }
      pairs lamina SSDsim ;;
    *) echo "bench-e2e: unknown case $c (see --help)" >&2; exit 2 ;;
  esac
done
