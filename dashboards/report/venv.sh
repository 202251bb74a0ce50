# Sourced by dashboards/report/*.sh and ci/test/report.sh after ci/lib/common.sh.
# ensure_report_venv: creates (once) the Python venv the report generator runs in, from the pinned
# dashboards/report/requirements.txt, in $BENCH_CACHE (it survives fresh clones) and links it as
# .tools/report-venv. A matching stamp (requirements hash + Python version) makes a warm call a
# file read. One venv per requirements hash: a run of another commit beside this one (another
# clone, CI) must not rebuild the venv this one is using. Prints nothing on stdout; sets REPORT_PYTHON.
ensure_report_venv() {
  local req="$BENCH_ROOT/dashboards/report/requirements.txt"
  local hash venv stamp
  hash=$(sha256sum "$req" | cut -d' ' -f1)
  venv="$BENCH_CACHE/venvs/report-${hash:0:12}"
  stamp="$hash $(python3 --version 2>&1)"
  mkdir -p "$BENCH_CACHE/venvs" "$BENCH_TOOLS"
  # Several callers (matrix runner, tests) may start at once: one install at a time.
  exec {venv_lock}>"$BENCH_CACHE/venvs/report.lock"
  flock "$venv_lock"
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.bench-stamp" 2>/dev/null)" != "$stamp" ]; then
    python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
    log "creating the report venv in $venv (pinned dashboards/report/requirements.txt)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
    printf '%s\n' "$stamp" > "$venv/.bench-stamp"
  fi
  exec {venv_lock}>&-
  ln -sfn "$venv" "$BENCH_TOOLS/report-venv"
  REPORT_PYTHON="$venv/bin/python"
}

# prom_cli URL ARGS...: the report's Prometheus client on the command line (python -m
# benchreport.prometheus --url URL ARGS...: value, settled, span; text-sum with URL "" reads a
# /metrics page on stdin), the one client the test harness uses too. Needs ensure_report_venv first.
prom_cli() {
  local url=$1; shift
  PYTHONPATH="$BENCH_ROOT/dashboards/report${PYTHONPATH:+:$PYTHONPATH}" \
    "$REPORT_PYTHON" -m benchreport.prometheus ${url:+--url "$url"} "$@"
}
