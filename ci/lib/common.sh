# Shell helpers for ci/ scripts (the test harness, the local cluster, the demo): the product's own
# (lib/common.sh: paths, log, die, free_port, apt_install, go_build_tool) plus what only the harness
# needs. Source it: . "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../../lib/common.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/lib/common.sh"

# part_packages PART: the Debian packages ci/test/<part>/packages.txt lists (comments dropped); none
# for a part without that file.
part_packages() {
  local list="$BENCH_ROOT/ci/test/$1/packages.txt"
  [ ! -f "$list" ] || sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list"
}

require_root() {
  [ "$(id -u)" -eq 0 ] || die "$1 needs root (it starts containerd, kubelet and changes iptables); run it as root"
}

# offline_chart_copy DIR: copies charts/bench (symlinks resolved) into DIR/bench and drops the
# dependency list from its Chart.yaml: the subcharts cannot be downloaded here, so this chart's own
# templates render unchanged without them (as with every subchart disabled, as the local cluster's
# values charts/bench/ci/08-local-cluster-values.yaml have it). Prints DIR/bench.
offline_chart_copy() {
  local dst=$1/bench
  rm -rf "$dst"; mkdir -p "$1"
  cp -rL "$BENCH_ROOT/charts/bench" "$dst"
  rm -f "$dst/Chart.lock"; rm -rf "$dst/charts"
  awk '/^dependencies:/ {skip=1; next} skip && /^[^[:space:]#-]/ {skip=0} !skip' \
    "$BENCH_ROOT/charts/bench/Chart.yaml" > "$dst/Chart.yaml"
  grep -q '^dependencies:' "$dst/Chart.yaml" && die "could not drop dependencies from $dst/Chart.yaml"
  printf '%s\n' "$dst"
}
