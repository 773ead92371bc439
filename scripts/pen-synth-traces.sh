#!/usr/bin/env bash
# Generate the synthetic write-dominant traces of experiments/pen*.toml into DIR (default
# target/pen-synth): analogues of the kinds of workload pen-partial-erase evaluates (its
# 12 revised-SNIA/MSR traces are not available to us, and its Table 2 is missing from our
# copy), 20,000 requests each, Poisson at 300 IOPS (the specs scale time for load),
# over 12 GiB of the 16 GiB logical space of the scaled `pen` device, seed 5:
#   seq    90 % writes of 64 KiB in 8 sequential streams (large sequential writers)
#   hot    90 % writes of 4-64 KiB, Zipf 0.9 over the footprint (hot/cold skew)
#   rand   80 % writes of 16-64 KiB, uniform (high coverage: every logical block touched)
#   small  95 % writes of 4 or 8 KiB, Zipf 0.99 (small random writes, proxy-like)
# Deterministic. Usage: scripts/pen-synth-traces.sh [DIR] [--bin LAMINA] [--requests N]
set -euo pipefail
cd "$(dirname "$0")/.."
script=pen-synth-traces; default_dir=target/pen-synth; default_n=20000
# shellcheck source=scripts/synth-args.sh
. scripts/synth-args.sh
gen() { "$bin" trace gen --requests "$n" --rate 300 --footprint 12GiB --seed 5 -o "$dir/$1.trace" "${@:2}"; }
gen seq --read-ratio 0.1 --sizes 64k --pattern seq:8
gen hot --read-ratio 0.1 --sizes 4k-64k --pattern zipf:0.9
gen rand --read-ratio 0.2 --sizes 16k-64k --pattern uniform
gen small --read-ratio 0.05 --sizes 4k,8k --pattern zipf:0.99
echo "pen-synth-traces: $dir/{seq,hot,rand,small}.trace ($n requests each)"
