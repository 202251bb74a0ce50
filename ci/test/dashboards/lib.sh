# Shell helpers for the dashboards test and picture rendering: a real Prometheus (Debian 2.42) with
# the remote-write receiver and native histograms, a real nginx backend, and a real k6 run pushing
# into that Prometheus. Everything binds 127.0.0.1 and lives under one work dir.
# Source after ci/lib/common.sh. Callers own cleanup: call stop_started_processes from a trap.

DASH_PIDS=()

# The checkout's Python packages for the python3 these scripts start (check.py, render.py and
# assertions.py import benchdashboards and benchreport): harness/pythonpath.py reads pyproject.toml.
PYTHONPATH=$(python3 "$BENCH_ROOT/ci/test/harness/pythonpath.py")${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH

# wait_for_http URL SECONDS: waits until URL answers 2xx, or fails.
wait_for_http() {
  local url=$1 deadline=$((SECONDS + $2))
  until curl -fsS -o /dev/null "$url" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "$url did not answer within $2 s"
    sleep 0.2
  done
}

# wait_for_port PORT SECONDS: waits until 127.0.0.1:PORT accepts a TCP connection, or fails.
wait_for_port() {
  local deadline=$((SECONDS + $2))
  until (exec 3<> "/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "nothing accepts connections on 127.0.0.1:$1 after $2 s"
    sleep 0.1
  done
}

# prom_query_value URL EXPR: the summed value of an instant query (empty if no series).
prom_query_value() {
  python3 "$BENCH_ROOT/ci/tools/dashboards/assertions.py" query "$1" "$2"
}

# wait_for_prom_value URL EXPR WANT SECONDS: waits until EXPR's value is WANT. Remote write is
# asynchronous: k6's last push can land after k6 has exited, so readers wait for the count k6
# itself reported. Returns 1 with a log line on timeout (the caller's checks then show the gap).
wait_for_prom_value() {
  local url=$1 expr=$2 want=$3 deadline=$((SECONDS + $4)) got
  while got=$(prom_query_value "$url" "$expr"); [ "$got" != "$want" ]; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "after $4 s Prometheus has $expr = '${got}', want $want"
      return 1
    fi
    sleep 0.2
  done
}

# start_prometheus WORKDIR PORT [SCRAPE_CONFIGS]: Prometheus 2.42 as our own process (never the
# packaged service), its own config and data dir, remote-write receiver and native histograms on.
# SCRAPE_CONFIGS: optional YAML appended to the config (a `scrape_configs:` block); default none.
start_prometheus() {
  local dir=$1 port=$2 scrape=${3:-}
  mkdir -p "$dir/prometheus-data"
  printf 'global:\n  scrape_interval: 15s\n%s\n' "$scrape" > "$dir/prometheus.yml"
  prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/prometheus-data" \
    --web.listen-address="127.0.0.1:$port" --web.enable-remote-write-receiver \
    --enable-feature=native-histograms --log.level=warn > "$dir/prometheus.log" 2>&1 &
  DASH_PIDS+=($!)
  wait_for_http "http://127.0.0.1:$port/-/ready" 30
}

# start_backend_nginx WORKDIR PORT: the chart's backend nginx.conf on 127.0.0.1:PORT.
start_backend_nginx() {
  local dir=$1 port=$2 files="$BENCH_ROOT/charts/bench/files/backend"
  mkdir -p "$dir/bodies"
  sh "$files/make-bodies.sh" "$dir/bodies"
  sed -e "s|BENCH_PORT|127.0.0.1:$port|" -e "s|BENCH_BODIES_DIR|$dir/bodies|" \
    -e "s|/tmp/nginx.pid|$dir/nginx.pid|" "$files/nginx.conf" > "$dir/nginx.conf"
  nginx -c "$dir/nginx.conf" -g 'daemon off;' > "$dir/nginx.log" 2>&1 &
  DASH_PIDS+=($!)
  wait_for_http "http://127.0.0.1:$port/healthz" 15
}

# start_stall_server PORT: accepts TCP connections (kernel backlog) and never answers: requests to it
# end in a client timeout.
start_stall_server() {
  python3 -c 'import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1024)
time.sleep(86400)' "$1" &
  DASH_PIDS+=($!)
  wait_for_port "$1" 15
}

# run_k6_remote_write PROM_PORT TESTID SCRIPT [k6 args...]: a real k6 run pushing into Prometheus
# with native histograms, tagged with the run id like the chart does.
run_k6_remote_write() {
  local port=$1 testid=$2 script=$3; shift 3
  K6_PROMETHEUS_RW_SERVER_URL="http://127.0.0.1:$port/api/v1/write" \
  K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true \
  K6_PROMETHEUS_RW_PUSH_INTERVAL=1s \
    k6 run --quiet --no-color -o experimental-prometheus-rw --tag "testid=$testid" \
      --tag controller=none "$@" "$script"
}

# stop_started_processes: stops what this file started, by pid.
stop_started_processes() {
  local pid status
  for pid in "${DASH_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || continue # already gone
    status=0
    wait "$pid" 2>/dev/null || status=$?
    # 143 = ended by our SIGTERM, as asked
    [ "$status" -eq 0 ] || [ "$status" -eq 143 ] || log "process $pid exited with status $status"
  done
  DASH_PIDS=()
  return 0
}
