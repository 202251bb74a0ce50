#!/usr/bin/env bash
# Runs a recorded run again: the values its merged summary's provenance holds (make results with
# RELEASE, the matrix runner), with this checkout's chart when it is the version that ran (and its
# subcharts the ones Chart.lock pins), in the same release and namespace unless given, with a new
# run id; then merged and reported as a one-variant matrix run (dashboards/report/matrix.sh).
# Usage: dashboards/report/rerun.sh --summary FILE --out DIR [--chart DIR] [--matrix PROGRAM] [matrix.sh options...]
#   --matrix: the matrix runner to run (default dashboards/report/matrix.sh; on the project's local
#   cluster ci/e2e/matrix, which make rerun LOCAL=1 passes).
#   e.g. --repeats 3 (the same run three times, with intervals), --kubeconfig FILE, --release NAME,
#   --namespace NS, -f extra.yaml (values left out of the record as secrets).
. "$(dirname "$0")/../../lib/common.sh"

main() {
  local summary="" out="" chart="$BENCH_ROOT/charts/bench" matrix="$BENCH_ROOT/dashboards/report/matrix.sh" target
  local -a rest=()
  while [ $# -gt 0 ]; do
    case $1 in
      --summary) summary=${2:?--summary needs a summary.json}; shift 2 ;;
      --out) out=${2:?--out needs a folder}; shift 2 ;;
      --chart) chart=${2:?--chart needs a folder}; shift 2 ;;
      --matrix) matrix=${2:?--matrix needs a program}; shift 2 ;;
      -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; return 0 ;;
      *) rest+=("$1"); shift ;;
    esac
  done
  [ -n "$summary" ] || die "--summary FILE is required (a merged summary.json: make results, the matrix runner)"
  [ -f "$summary" ] || die "--summary '$summary' does not exist"
  [ -n "$out" ] || die "--out DIR is required (where the new run's summary and report go)"
  [ -x "$matrix" ] || die "--matrix '$matrix' is not an executable program"
  mkdir -p "$out"
  # the release and namespace that ran it, on stdout; the values beside the new run
  target=$(bash "$BENCH_ROOT/dashboards/report/report.sh" rerun --summary "$summary" --chart "$chart" \
    --out "$out/rerun-values.yaml") || die "cannot rerun $summary (above)"
  local release=${target% *} namespace=${target#* }
  log "rerun of $summary: release $release, namespace $namespace, values $out/rerun-values.yaml"
  exec "$matrix" --out "$out" --chart "$chart" --release "$release" \
    --namespace "$namespace" "${rest[@]}" "rerun:$out/rerun-values.yaml"
}

main "$@"
