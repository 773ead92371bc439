# Shared by the synthetic-trace scripts (sourced, not run): parses
# `[DIR] [--bin LAMINA] [--requests N]` into $dir, $bin and $n (defaults: $default_dir,
# a freshly built target/release/lamina, $default_n) and creates $dir. $script names the
# caller in error messages.
dir=$default_dir; bin=""; n=$default_n
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --requests) n=$2; shift 2 ;;
    -*) echo "$script: unknown option $1 (use --bin LAMINA, --requests N)" >&2; exit 2 ;;
    *) dir=$1; shift ;;
  esac
done
if [ -z "$bin" ]; then
  cargo build --release --quiet -p lamina-cli
  bin=target/release/lamina
fi
mkdir -p "$dir"
