#!/usr/bin/env bash
# Generate synthetic analogues of mbm-ftl's six workloads (Table II: mean read / write
# size and read ratio) into DIR (default target/mbm-synth), for the mbm experiments.
# Sizes are uniform over [mean/2, 3·mean/2] in 512-byte steps (so the mean is the
# table's to within a sector); addresses Zipf 0.9 over 16 GiB (the table gives no
# locality); Poisson at 2,000 IOPS (experiments scale time for load), seed 11; N requests
# each (default 20,000). Deterministic.
#   usr1vm0    reads 40.91 KB, writes 10.28 KB, 40.42 % reads   (user home directories)
#   stg-1vm0   reads 24.92 KB, writes  9.19 KB, 15.19 % reads   (web staging)
#   web-1vm0   reads 29.99 KB, writes  8.59 KB, 29.88 % reads   (web/SQL server)
#   src1-1vm2  reads 19.11 KB, writes 32.50 KB, 25.37 % reads   (source control)
#   financial  reads  2.38 KB, writes  3.85 KB, 21.96 % reads   (financial institution)
#   msnfs      reads 14.88 KB, writes 10.60 KB, 79.57 % reads   (MSN file system)
# Usage: scripts/mbm-synth-traces.sh [DIR] [--bin LAMINA] [--requests N]
set -euo pipefail
cd "$(dirname "$0")/.."
script=mbm-synth-traces; default_dir=target/mbm-synth; default_n=20000
# shellcheck source=scripts/synth-args.sh
. scripts/synth-args.sh
# A uniform range in 512-byte sectors around a mean given in KB (10^3 bytes).
range() { python3 -c "m=round($1*1000/512); lo=max(1,round(m/2)); hi=2*m-lo; print(f'{lo*512}-{hi*512}')"; }
gen() { # name read_kb write_kb read_percent
  "$bin" trace gen --requests "$n" --rate 2000 --read-ratio "$4%" --sizes "$(range "$2")" \
    --write-sizes "$(range "$3")" --pattern zipf:0.9 --footprint 16GiB --seed 11 -o "$dir/$1.trace"
}
gen usr1vm0 40.91 10.28 40.42
gen stg-1vm0 24.92 9.19 15.19
gen web-1vm0 29.99 8.59 29.88
gen src1-1vm2 19.11 32.50 25.37
gen financial 2.38 3.85 21.96
gen msnfs 14.88 10.60 79.57
echo "mbm-synth-traces: $dir/{usr1vm0,stg-1vm0,web-1vm0,src1-1vm2,financial,msnfs}.trace ($n requests each)"
