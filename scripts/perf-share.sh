#!/usr/bin/env bash
# The share of the simulation thread's samples that falls in chosen functions, for one
# `lamina` binary or two run alternately: a measure of a small speed change that the
# host's own speed does not move.
#
#   scripts/perf-share.sh [--runs N] [--regex RE] [--top K] --bin PATH [--base PATH] -- ARGS...
#
# Each run is `perf record -F 4000 PATH ARGS...` (with --base: BASE and PATH in turn,
# N runs each; default 4). For each run it prints the simulation (main) thread's
# user-space samples, those in symbols matching RE (an extended regular expression;
# default: every symbol), and their share. Then the median share per binary and, with
# --base, the K symbols (default 15) whose summed sample counts differ most between the
# two binaries.
#
# Why: on the shared 2-core VM of the machine class two copies of the same binary run
# at the same moment differed by 0.69-1.08x in wall time, so a change worth a few
# percent cannot be seen in wall-time pairs (docs/performance.md, "Round of 2026-12-01
# (fifteenth session)"). A slower host slows every function of a run alike; the share of
# the samples in the functions a change touches moves only with the change (spread about
# +-1 point between runs of one binary there). Instruction counts (scripts/bench-instr.sh)
# judge changes that remove work; this judges changes that remove stalls (cache misses,
# store-forwarding), which instruction counts do not see. A share that falls only
# because time moved to other functions is no gain: check the --top list and the totals.
#
# Example: scripts/perf-share.sh --bin target/dist/lamina --base /tmp/old-lamina \
#   --regex 'Simulation::run$|TraceReader' -- run --preset mqsim-default -q trace.txt
#
# Needs perf (linux-tools) and python3. The main thread is the one named after the
# executable (perf's `comm`, its first 15 characters); helper threads are named
# lamina-trace, lamina-stats, lamina-prefill, lamina-pretouch and are not counted.
set -euo pipefail

RUNS=4 RE='.' TOP=15 BIN='' BASE=''
usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --regex) RE=$2; shift 2 ;;
    --top) TOP=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    --base) BASE=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "perf-share: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$BIN" ] || { echo "perf-share: --bin PATH is required (see --help)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "perf-share: give the lamina arguments after -- (see --help)" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf-share: perf not found (install linux-tools for this kernel)" >&2; exit 2; }
for b in "$BIN" $BASE; do
  [ -x "$b" ] || { echo "perf-share: $b is not an executable" >&2; exit 2; }
done
if [ -n "$BASE" ] && [ "$(basename "$BASE" | cut -c1-15)" = "$(basename "$BIN" | cut -c1-15)" ]; then
  echo "perf-share: --bin and --base need different file names (perf tells their threads apart by name)" >&2
  exit 2
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SIDES=("$BIN")
[ -z "$BASE" ] || SIDES=("$BASE" "$BIN")

# Record every run; keep the main thread's user-space samples per symbol ("count<TAB>symbol").
for i in $(seq 1 "$RUNS"); do
  for b in "${SIDES[@]}"; do
    comm=$(basename "$b" | cut -c1-15)
    perf record -q -F 4000 -o "$WORK/perf.data" "$b" "$@" >/dev/null 2>"$WORK/stderr" || {
      echo "perf-share: $b $* failed:" >&2; cat "$WORK/stderr" >&2; exit 1; }
    perf report -i "$WORK/perf.data" --no-children --comm "$comm" --sort dso,sym -n --stdio 2>/dev/null \
      | awk '/^ +[0-9.]+%/ && $3 != "[kernel.kallsyms]" { n = $2; $1 = $2 = $3 = ""; sub(/^ +/, ""); print n "\t" $0 }' \
      > "$WORK/syms.$i.$comm"
  done
done

# Each run's share in run order, the medians per binary, and with two binaries the symbols
# that differ most.
python3 - "$WORK" "$RE" "$TOP" "$RUNS" "${SIDES[@]}" <<'EOF'
import collections, os, re, statistics, sys
work, pattern, top, runs, sides = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
comms = [os.path.basename(s)[:15] for s in sides]
shares = collections.defaultdict(list)
sums = collections.defaultdict(collections.Counter)
for i in range(1, runs + 1):
    for comm in comms:
        total = matched = 0
        for line in open(f"{work}/syms.{i}.{comm}"):
            n, sym = line.rstrip("\n").split("\t", 1)
            total += int(n)
            sums[comm][sym] += int(n)
            if re.search(pattern, sym):
                matched += int(n)
        share = 100.0 * matched / total if total else 0.0
        shares[comm].append(share)
        print(f"{comm:16} user samples {total:7d}  matching {matched:7d}  share {share:6.2f} %")
print()
for comm in comms:
    s = shares[comm]
    print(f"{comm:16} median share {statistics.median(s):6.2f} % over {len(s)} runs "
          f"(range {min(s):.2f}-{max(s):.2f}); user samples summed {sum(sums[comm].values())}")
if len(comms) == 2:
    a, b = comms
    syms = set(sums[a]) | set(sums[b])
    rows = sorted(syms, key=lambda k: -abs(sums[b][k] - sums[a][k]))[:top]
    print(f"\nsymbols whose summed samples differ most ({a} -> {b}):")
    for k in rows:
        print(f"{sums[a][k]:8d} {sums[b][k]:8d} {sums[b][k] - sums[a][k]:+8d}  {k[:100]}")
EOF
