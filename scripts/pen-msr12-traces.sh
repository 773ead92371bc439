#!/usr/bin/env bash
# Generate the synthetic analogues of pen-partial-erase's 12 MSR Cambridge workloads
# (experiments/pen-msr12.toml) into DIR (default target/pen-msr12): one trace per volume,
# named after it. Every number and its source is in docs/results.md, "PEN on analogues of
# the paper's 12 MSR workloads"; in short:
#   write share   published per volume where found (state-based-die-binding Table 1,
#                 layer-aware-chip-redirection Table 2, soml-read Table 2), else 80 %
#   footprint     the volume's working-set size (libCacheSim's MSR table) divided by 16,
#                 as the `pen` device is 1/16 of soml-read's 8-chip SSD; at most 12 GiB
#                 (the two volumes whose working set exceeds the device); 1309 MiB, the
#                 median of the seven sourced volumes, where none was found
#   sizes         the write and read sizes of the shared hm_0 sample (measured), the read
#                 sizes of prxy_0, src2_0 and prn_1 from soml-read Table 2
#   pattern       20 % of requests continue one of 4 sequential streams (the hm_0
#                 sample: 19.5 % of its writes start where a recent request ended), the
#                 rest Zipf 0.9 (a choice: no published skew found)
# 20,000 requests each, Poisson at 300 IOPS (as scripts/pen-synth-traces.sh), seeds 11-22
# in the order below (volumes with the same numbers differ only in their seed).
# Deterministic. Usage: scripts/pen-msr12-traces.sh [DIR] [--bin LAMINA] [--requests N]
set -euo pipefail
cd "$(dirname "$0")/.."
script=pen-msr12-traces; default_dir=target/pen-msr12; default_n=20000
# shellcheck source=scripts/synth-args.sh
. scripts/synth-args.sh

# Request sizes of the shared sample ../shared/traces/msr-csv/hm_0-window1k.csv
# (bytes, count): 492 writes (mean 7,278 B) and 508 reads (mean 12,025 B).
cat > "$dir/hm0-writes.hist" <<'EOF'
512 17
1024 22
1536 16
2048 2
2560 5
3072 15
3584 1
4096 237
4608 2
5632 2
7680 5
8192 93
12288 1
16384 48
20480 1
24576 6
28672 1
32768 1
36864 14
40960 3
EOF
cat > "$dir/hm0-reads.hist" <<'EOF'
512 5
1024 4
1536 2
2048 2
2560 2
3072 1
3584 1
4096 310
5632 2
7168 1
8192 30
9216 1
10240 1
12288 18
13312 1
13824 1
14848 1
15360 1
16384 24
20480 4
20992 1
24576 5
28672 2
29184 3
31232 1
31744 1
32768 59
36864 2
40960 1
65536 21
EOF
# soml-read Table 2's read-size breakdown (share of reads below 2, 4, 8, 16, 32 KiB),
# each bucket at its upper bound and the rest at 64 KiB, in parts per thousand.
readhist() { # NAME  P<2K P<4K P<8K P<16K P<32K
  awk -v a="$2" -v b="$3" -v c="$4" -v d="$5" -v e="$6" 'BEGIN {
    printf "2048 %d\n4096 %d\n8192 %d\n16384 %d\n32768 %d\n65536 %d\n",
      a*1000, (b-a)*1000, (c-b)*1000, (d-c)*1000, (e-d)*1000, (1-e)*1000 }' > "$dir/$1-reads.hist"
}
readhist prxy_0 0.01 0.83 0.86 0.89 0.96
readhist src2_0 0.02 0.82 0.85 0.89 0.98
readhist prn_1 0 0.44 0.64 0.68 0.71

seed=10
gen() { # VOLUME WRITE_SHARE FOOTPRINT [READ_SIZES]
  local reads=${4:-$dir/hm0-reads.hist}
  seed=$((seed + 1))
  "$bin" trace gen --requests "$n" --rate 300 --seed "$seed" --read-ratio "$(awk -v w="$2" 'BEGIN { printf "%.4f", 1 - w }')" \
    --sizes "empirical:$reads" --write-sizes "empirical:$dir/hm0-writes.hist" \
    --pattern mix:0.2:4:zipf:0.9 --footprint "$3" -o "$dir/$1.trace"
}
# The five volumes the paper names.
gen prn_1 0.146 5521MiB "$dir/prn_1-reads.hist"
gen proj_0 0.80 698MiB
gen proj_1 0.80 12GiB
gen prxy_0 0.9434 130MiB "$dir/prxy_0-reads.hist"
gen usr_1 0.80 12GiB
# Seven more MSR Cambridge volumes.
gen hm_0 0.65 335MiB
gen prn_0 0.80 1309MiB
gen rsrch_0 0.3431 1309MiB
gen src2_0 0.89 1309MiB "$dir/src2_0-reads.hist"
gen ts_0 0.82 1309MiB
gen wdev_0 0.80 1309MiB
gen web_0 0.70 1309MiB
echo "pen-msr12-traces: 12 traces in $dir ($n requests each)"
