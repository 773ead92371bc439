#!/usr/bin/env bash
# Generate the synthetic traces of experiments/soml-synth.toml into DIR (default
# target/soml-synth): 100,000 requests each, 90 % reads of 4 or 8 KiB, uniform over
# 64 GiB, Poisson at 10 k, 20 k and 40 k IOPS, seed 7. Deterministic.
# Usage: scripts/soml-synth-traces.sh [DIR] [--bin LAMINA] [--requests N]
set -euo pipefail
cd "$(dirname "$0")/.."
script=soml-synth-traces; default_dir=target/soml-synth; default_n=100000
# shellcheck source=scripts/synth-args.sh
. scripts/synth-args.sh
for rate in 10000 20000 40000; do
  "$bin" trace gen --requests "$n" --rate "$rate" --read-ratio 0.9 --sizes 4k,8k \
    --footprint 64GiB --seed 7 -o "$dir/small-r$rate.trace"
done
echo "soml-synth-traces: $dir/small-r{10000,20000,40000}.trace ($n requests each)"
