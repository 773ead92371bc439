#!/usr/bin/env bash
# A profile-guided (PGO) build of `lamina`: the `dist` profile (fat LTO, one codegen unit)
# compiled twice, the second time with the branch and call counts of a training run of
# the first. Results are unchanged (PGO moves code, never semantics); only speed differs.
#
#   scripts/build-pgo.sh [--out PATH] [--quick] [--check-with BIN]
#
# Writes the binary to target/pgo/lamina (or PATH). Needs `llvm-profdata` matching rustc's
# LLVM: the rustup component `llvm-tools` (installed here when missing). --quick trains on
# tiny workloads. --check-with BIN builds nothing: it runs the training set with BIN, so a
# training command broken by a change of the CLI fails fast (CI runs it with --quick).
#
# The training set is built from the repository alone (no ../shared) and is deliberately
# not the benchmark trace of scripts/bench-e2e.sh: traces made by `lamina trace gen` with
# other seeds, sizes and patterns, the bundled traces/demo.trace, on several devices,
# FTLs and schedulers, with and without preconditioning and GC. docs/performance.md
# ("Profile-guided build") gives the measured effect on workloads inside and outside it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/pgo/lamina
QUICK=0
CHECK=
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift ;;
    --quick) QUICK=1 ;;
    --check-with) CHECK=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "build-pgo: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

WORK=$ROOT/target/pgo-work
mkdir -p "$WORK"
if [ -n "$CHECK" ]; then
  GEN=$CHECK
else
  sysroot=$(rustc --print sysroot)
  host=$(rustc -vV | awk '/^host:/{print $2}')
  profdata=$sysroot/lib/rustlib/$host/bin/llvm-profdata
  if [ ! -x "$profdata" ]; then
    rustup component add llvm-tools >/dev/null 2>&1 || true
  fi
  [ -x "$profdata" ] || { echo "build-pgo: $profdata is missing (rustup component add llvm-tools)" >&2; exit 2; }
  rm -rf "$WORK/profiles"
  mkdir -p "$WORK/profiles" "$(dirname "$OUT")"
  echo "== build-pgo: instrumented build"
  RUSTFLAGS="-Cprofile-generate=$WORK/profiles" \
    cargo build --quiet --profile dist -p lamina-cli --target-dir "$ROOT/target/pgo-gen"
  GEN=$ROOT/target/pgo-gen/dist/lamina
fi

N=200000; PCBLOCKS=32 # 32 blocks per plane: the smallest that default over-provisioning allows
if [ $QUICK = 1 ]; then N=5000; fi

echo "== build-pgo: training runs"
"$GEN" trace gen --requests "$N" --rate 12000 --read-ratio 0.6 --sizes 4k-128k --footprint 150GiB \
  --seed 11 -o "$WORK/uniform.trace" >/dev/null
"$GEN" trace gen --requests "$((N / 2))" --rate 8000 --read-ratio 0.3 --sizes 4k,8k,16k,32k \
  --pattern zipf:0.9 --footprint 6GiB --seed 12 -o "$WORK/zipf.trace" >/dev/null
"$GEN" trace gen --requests "$((N / 4))" --rate 50000 --read-ratio 0.7 --sizes 4k-32k \
  --pattern mix:0.5:4:uniform --footprint 8GiB --seed 13 -o "$WORK/mix.trace" >/dev/null
train() { "$GEN" run -q "$@" >/dev/null; }
# The replay on MQSim's device, prefill of unwritten pages on (the default).
train --preset mqsim-default "$WORK/uniform.trace"
# Small pages, many page operations per request (SSDsim-like geometry).
train --preset die-binding-4x2 --set nand.geometry.channels=8 --set nand.geometry.chips_per_channel=4 \
  --set nand.geometry.pages_per_block=64 --set nand.geometry.page_size_bytes=2048 \
  --set ftl.overprovisioning=0.1 "$WORK/uniform.trace"
# Preconditioned small device: GC, wear levelling, multi-plane scheduling.
for s in fcfs multiplane; do
  train --preset mqsim-default --set nand.geometry.blocks_per_plane=$PCBLOCKS \
    --set precondition.fill_fraction=0.9 --set sched.scheduler="\"$s\"" \
    --set ftl.allocation='"die-aligned"' "$WORK/zipf.trace"
done
# Saturated arrivals with a bounded host queue.
train --preset mqsim-default --set host.queue_depth=256 "$WORK/mix.trace"
# The bundled trace on the other presets and FTLs.
train --preset mbm traces/demo.trace
train --preset mbm --set ftl.kind='"mbm"' --set sched.scheduler='"mbm"' traces/demo.trace
train --preset mqsim-default --set ftl.mapping='"cached"' traces/demo.trace
# Preconditioning to steady state on its own (the bulk fill and GC passes).
cat >"$WORK/pc.toml" <<EOF
preset = "mqsim-default"
[nand.geometry]
channels = 4
chips_per_channel = 4
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = $PCBLOCKS
pages_per_block = 256
page_size_bytes = 8192
[precondition]
fill_fraction = 1.0
EOF
train --config "$WORK/pc.toml" traces/demo.trace

if [ -n "$CHECK" ]; then
  echo "build-pgo: every training run passed with $CHECK"
  exit 0
fi

echo "== build-pgo: merging profiles"
"$profdata" merge -o "$WORK/merged.profdata" "$WORK/profiles"

echo "== build-pgo: optimized build"
RUSTFLAGS="-Cprofile-use=$WORK/merged.profdata" \
  cargo build --quiet --profile dist -p lamina-cli --target-dir "$ROOT/target/pgo-use"
cp "$ROOT/target/pgo-use/dist/lamina" "$OUT"
echo "build-pgo: $OUT"
