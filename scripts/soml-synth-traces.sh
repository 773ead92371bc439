#!/usr/bin/env bash
# Generate the synthetic traces of experiments/soml-synth.toml into DIR (default
# target/soml-synth): 100,000 requests each, 90 % reads of 4 or 8 KiB, uniform over
# 64 GiB, Poisson at 10 k, 20 k and 40 k IOPS, seed 7. Deterministic.
# Usage: scripts/soml-synth-traces.sh [DIR] [--bin LAMINA] [--requests N]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/soml-synth; bin=""; n=100000
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --requests) n=$2; shift 2 ;;
    -*) echo "soml-synth-traces: unknown option $1 (use --bin LAMINA, --requests N)" >&2; exit 2 ;;
    *) dir=$1; shift ;;
  esac
done
if [ -z "$bin" ]; then
  cargo build --release --quiet -p lamina-cli
  bin=target/release/lamina
fi
mkdir -p "$dir"
for rate in 10000 20000 40000; do
  "$bin" trace gen --requests "$n" --rate "$rate" --read-ratio 0.9 --sizes 4k,8k \
    --footprint 64GiB --seed 7 -o "$dir/small-r$rate.trace"
done
echo "soml-synth-traces: $dir/small-r{10000,20000,40000}.trace ($n requests each)"
