#!/usr/bin/env bash
# Generate the trace of experiments/mapping-mqsim.toml into DIR (default
# target/mapping-synth): issue #16's "10 k random 4 KiB requests at light load" —
# 10,000 requests of 4 KiB, 70 % reads, uniform over 64 GiB, Poisson at 200 IOPS
# (requests almost never overlap), seed 1. Deterministic.
# Usage: scripts/mapping-synth-traces.sh [DIR] [--bin LAMINA] [--requests N]
set -euo pipefail
cd "$(dirname "$0")/.."
script=mapping-synth-traces; default_dir=target/mapping-synth; default_n=10000
# shellcheck source=scripts/synth-args.sh
. scripts/synth-args.sh
"$bin" trace gen --requests "$n" --rate 200 --read-ratio 0.7 --sizes 4k \
  --footprint 64GiB --seed 1 -o "$dir/light-4k.trace"
echo "mapping-synth-traces: $dir/light-4k.trace ($n requests)"
