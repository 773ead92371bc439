#!/usr/bin/env bash
# Generate synthetic analogues of the read-dominant workloads of soml-read Table 2 (the
# ten with ≥ 50 % reads) into DIR (default target/soml-table2), for
# experiments/soml-table2.toml. Each trace has the workload's read ratio and its read
# request size breakdown from Table 2's columns 4–8 (cumulative fractions of reads below
# 2, 4, 8, 16 and 32 KB). Our reading of the columns, since the table gives only the
# cumulative fractions: "< X KB" counts requests of at most X KB (BS78 and ch19 have
# 0.98–1.0 of their reads "< 4KB" and none "< 2KB", so their 4 KB requests must be in
# that column); each bucket's requests take the bucket's upper size (2, 4, 8, 16, 32 KiB)
# and the rest 64 KiB. Writes draw from the same sizes (Table 2 gives no write sizes).
# Uniform addresses over 64 GiB, Poisson arrivals at 10,000 IOPS (the experiment's load
# axis scales time), seed 7, 20,000 requests each (--requests N). Deterministic.
# Usage: scripts/soml-table2-traces.sh [DIR] [--bin LAMINA] [--requests N]
set -euo pipefail
cd "$(dirname "$0")/.."
script=soml-table2-traces; default_dir=target/soml-table2; default_n=20000
# shellcheck source=scripts/synth-args.sh
. scripts/synth-args.sh
# name, read %, cumulative fractions of reads < 2, 4, 8, 16, 32 KB (Table 2).
while read -r name ratio c2 c4 c8 c16 c32; do
  hist="$dir/$name.sizes"
  awk -v c2="$c2" -v c4="$c4" -v c8="$c8" -v c16="$c16" -v c32="$c32" 'BEGIN {
    split("2k 4k 8k 16k 32k 64k", size, " ");
    cum[1] = c2; cum[2] = c4; cum[3] = c8; cum[4] = c16; cum[5] = c32; cum[6] = 1;
    prev = 0;
    for (i = 1; i <= 6; i++) {
      w = int((cum[i] - prev) * 100 + 0.5); prev = cum[i];
      if (w > 0) printf "%s %d\n", size[i], w;
    }
  }' > "$hist"
  "$bin" trace gen --requests "$n" --rate 10000 --read-ratio "$ratio%" --sizes "empirical:$hist" \
    --footprint 64GiB --seed 7 -o "$dir/$name.trace"
done <<'TABLE'
24HRS8 70.3 0 0.03 0.43 0.43 0.44
BS78 55 0 0.98 0.98 0.99 0.99
CFS13 63.2 0 0.84 0.85 0.86 0.94
DDR20 90.6 0.19 0.69 0.72 0.74 0.79
hm_1 93.8 0 0.01 0.87 0.87 0.88
LMBE2 82.9 0.01 0.14 0.16 0.21 0.35
mds_0 98.2 0.05 0.53 0.56 0.61 0.68
prn_1 85.4 0 0.44 0.64 0.68 0.71
stg_1 93.0 0.02 0.05 0.06 0.06 0.07
web_1 85.4 0.11 0.23 0.25 0.27 0.31
TABLE
echo "soml-table2-traces: 10 traces in $dir ($n requests each)"
