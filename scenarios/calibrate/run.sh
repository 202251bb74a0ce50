#!/usr/bin/env bash
# Load-generator calibration: on this machine, in one run, against the same local nginx
# (the chart's backend nginx.conf, one worker on one core, 127.0.0.1), with the same body and
# connection count, measures:
#   wrk (closed loop, the machine's physical reference), vegeta (open model at a fixed rate),
#   bare k6 (scenarios/calibrate/bare.js), bench's static and dynamic scenarios with every measurement on,
# each at its ceiling (offered rate far above what one core sends) and at one fixed rate, with
# keep-alive, with Connection: close and over TLS. CPU and memory come from the kernel (measure.py).
# The generator is pinned to one core, nginx (and the API server for dynamic) to the other, so the
# figures are per runner core. Prints the ratios; results land in OUT/results.jsonl and
# OUT/report.txt. NOT a timed test and not part of `make test`.
#
# Usage: scenarios/calibrate/run.sh [--rounds N] [--duration S] [--connections N] [--rate R] [--sweep R,R,...]
#                            [--sweep-close R,...] [--sweep-tls R,...] [--sweep-only]
#                            [--body PATH] [--no-dynamic] [--no-tls] [--no-close] [--out DIR]
#   --rounds N       repeat every measurement N times, interleaved (default 2)
#   --duration S     seconds of load per measurement (default 5)
#   --connections N  connections = k6 VUs = wrk -c = vegeta -max-connections (default 100)
#   --rate R         the fixed rate for vegeta vs k6 vs bench (default 2000 req/s)
#   --sweep R,...    rates at which bench static's added latency over vegeta is measured, with the
#                    shipped runner settings (default 1000,2000,3000,4000,5000; "" = none)
#   --sweep-close R,...  the same with `Connection: close` on every request (default 500,1000,1500,2000)
#   --sweep-tls R,...    the same over TLS, a handshake per request (default 100,200,300,400)
#   --sweep-only     only the sweeps (--rounds times), no ceilings, pairs or memory (about 4 minutes
#                    a round with every mode)
#   --soak S         also hold bench static at --rate for S seconds with the shipped settings (memory,
#                    GC cycles and tail over a long run; the published tests ran 180 s)
#   --body PATH      request path on the backend (default /bytes/1k)
#   --memory-only    only the memory per VU of bare k6, bench static and bench dynamic (sizing a
#                    runner's memory; about 5 minutes)
#   --pairs-only     only the probe and the PAIRED overhead runs (bench static and dynamic against
#                    bare k6 on one core, --rounds pairs each; about 1 minute a round)
# Default run: about 8 minutes on a 2-core machine.
. "$(dirname "$0")/../../lib/common.sh"
. "$BENCH_ROOT/lib/apiserver.sh"

# VEGETA_VERSION: pinned, with why, in one file.
. "$BENCH_ROOT/scenarios/calibrate/versions.env"
OFFERED_PROBE=50000 # the probe offers this rate: far above what one core sends

ROUNDS=2 DURATION=5 CONNECTIONS=100 RATE=2000 BODY=/bytes/1k SOAK=0
# Swept rates per mode: each list brackets the rate a runner core holds within 1 ms of vegeta's p99.
SWEEP=1000,2000,3000,4000,5000 SWEEP_CLOSE=500,1000,1500,2000 SWEEP_TLS=100,200,300,400
DYNAMIC=true MEMORY_ONLY=false PAIRS_ONLY=false SWEEP_ONLY=false TLS=true CLOSE=true OUT=$BENCH_ROOT/.tools/calibrate
WORK="" PIDS=()

usage() { sed -n '13,32p' "$0" | sed 's/^# \{0,1\}//'; }

positive_int() { # positive_int FLAG VALUE
  [[ $2 =~ ^[1-9][0-9]*$ ]] || die "invalid $1 '$2': expected a whole number >= 1"
}

rate_list() { # rate_list FLAG VALUE: rates like 1000,2000,4000, or "" for none
  [[ $2 =~ ^([1-9][0-9]*(,[1-9][0-9]*)*)?$ ]] || die "invalid $1 '$2': expected rates like 1000,2000,4000"
}

parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --rounds) positive_int "$1" "${2:-}"; ROUNDS=$2; shift 2 ;;
      --duration) positive_int "$1" "${2:-}"; DURATION=$2; shift 2 ;;
      --connections) positive_int "$1" "${2:-}"; CONNECTIONS=$2; shift 2 ;;
      --rate) positive_int "$1" "${2:-}"; RATE=$2; shift 2 ;;
      --soak) [[ ${2:-} =~ ^[0-9]+$ ]] || die "invalid --soak '${2:-}': expected seconds, e.g. 180"; SOAK=$2; shift 2 ;;
      --sweep) rate_list "$1" "${2-}"; SWEEP=$2; shift 2 ;;
      --sweep-close) rate_list "$1" "${2-}"; SWEEP_CLOSE=$2; shift 2 ;;
      --sweep-tls) rate_list "$1" "${2-}"; SWEEP_TLS=$2; shift 2 ;;
      --sweep-only) SWEEP_ONLY=true; shift ;;
      --body) [[ ${2:-} =~ ^/bytes/(0|1k|4k|100k|1m)$ ]] || die "invalid --body '${2:-}': expected /bytes/0, /bytes/1k, /bytes/4k, /bytes/100k or /bytes/1m"
        BODY=$2; shift 2 ;;
      --no-dynamic) DYNAMIC=false; shift ;;
      --memory-only) MEMORY_ONLY=true; shift ;;
      --pairs-only) PAIRS_ONLY=true; shift ;;
      --no-tls) TLS=false; shift ;;
      --no-close) CLOSE=false; shift ;;
      --out) [ -n "${2:-}" ] || die "--out needs a directory"; OUT=$2; shift 2 ;;
      -h | --help) usage; exit 0 ;;
      *) die "unknown argument '$1' (see --help)" ;;
    esac
  done
}

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill "$pid"; fi
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || [ $? -ne 127 ] || log "process $pid was already reaped"
  done
  if [ -n "$WORK" ] && [ -d "$WORK" ]; then rm -rf "$WORK"; fi
}

wait_for_url() {
  local i
  for i in $(seq 1 100); do
    if curl -ksf -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  die "$1 does not answer after 10 s"
}

# pick_cpus: the generator gets one core, the servers another (GEN_CPU, SERVER_CPU).
pick_cpus() {
  local cpus
  cpus=$(nproc)
  [ "$cpus" -ge 2 ] || die "needs at least 2 CPUs (one for the generator, one for nginx); this machine has $cpus"
  SERVER_CPU=0 GEN_CPU=1
}

# start_nginx: the chart's backend nginx.conf, one worker pinned to SERVER_CPU, plain and TLS ports.
start_nginx() {
  local files=$BENCH_ROOT/charts/bench/files/backend conf=$WORK/nginx.conf
  PORT_HTTP=$(free_port) PORT_TLS=$(free_port)
  sh "$files/make-bodies.sh" "$WORK/bodies"
  # ECDSA P-256: cheap for nginx to sign, so the TLS figures measure the client's handshakes.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=bench.local \
    -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
  sed -e "s#/tmp/#$WORK/#g" -e "s#BENCH_BODIES_DIR#$WORK/bodies#" \
      -e "s#worker_processes auto;#worker_processes 1;#" \
      -e "s#listen BENCH_PORT reuseport;#listen 127.0.0.1:$PORT_HTTP reuseport; listen 127.0.0.1:$PORT_TLS ssl reuseport; ssl_certificate $WORK/tls.crt; ssl_certificate_key $WORK/tls.key;#" \
      "$files/nginx.conf" > "$conf"
  if grep -Eq "^[^#]*BENCH_" "$conf"; then die "placeholders left in $conf"; fi
  taskset -c "$SERVER_CPU" nginx -c "$conf" -p "$WORK" -e "$WORK/nginx-error.log" -g 'daemon off;' 2>"$WORK/nginx.stderr" &
  PIDS+=($!)
  wait_for_url "http://127.0.0.1:$PORT_HTTP/healthz"
  wait_for_url "https://127.0.0.1:$PORT_TLS/healthz"
}

# start_apiserver: a bare API server (lib/apiserver.sh; binaries from ci/cluster/build.sh) on SERVER_CPU,
# an admin token and a Deployment for dynamic.js to scale. No kubelet: scaling changes the API only,
# which is all the churn VU's cost on the runner depends on (its polls and probes).
start_apiserver() {
  local b
  for b in etcd kube-apiserver kubectl; do
    if [ ! -x "$BENCH_CACHE/bin/$b" ]; then
      log "no $BENCH_CACHE/bin/$b (make cluster-build builds it, about 15 min): dynamic.js is skipped"
      DYNAMIC=false
      return 0
    fi
  done
  local kube=$WORK/kube token
  token=$(openssl rand -hex 16)
  mkdir -p "$kube"
  printf '%s,admin,uid-admin,"system:masters"\n' "$token" > "$kube/tokens.csv"
  start_bare_apiserver "$kube" "$kube/tokens.csv" PIDS taskset -c "$SERVER_CPU"
  KUBECONFIG_CAL=$kube/admin.kubeconfig
  write_token_kubeconfig "$KUBECONFIG_CAL" "$token"
  "$BENCH_CACHE/bin/kubectl" --kubeconfig "$KUBECONFIG_CAL" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: bench-cal}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: bench-backend, namespace: bench-cal}
spec:
  replicas: 2
  selector: {matchLabels: {app.kubernetes.io/component: backend}}
  template:
    metadata: {labels: {app.kubernetes.io/component: backend}}
    spec: {containers: [{name: nginx, image: bench/backend:local}]}
EOF
}

# ---- one measurement ----------------------------------------------------------------------------

# record ROUND TOOL MODE KIND OFFERED MEASURE_JSON RESULT_FILE RESULT_FORMAT: appends one JSON line.
record() {
  python3 "$BENCH_ROOT/scenarios/calibrate/report.py" record --round "$1" --tool "$2" --mode "$3" --kind "$4" \
    --offered "$5" --duration "$DURATION" --connections "$CONNECTIONS" --measure "$6" --result "$7" \
    --format "$8" --load "$(cut -d' ' -f1 /proc/loadavg)" >> "$OUT/results.jsonl"
  tail -1 "$OUT/results.jsonl" | python3 "$BENCH_ROOT/scenarios/calibrate/report.py" line >&2
}

url_for() { # url_for MODE
  case $1 in tls) echo "https://127.0.0.1:$PORT_TLS" ;; *) echo "http://127.0.0.1:$PORT_HTTP" ;; esac
}

run_wrk() { # run_wrk ROUND MODE
  local url headers=() m
  url=$(url_for "$2")$BODY
  if [ "$2" != keepalive ]; then headers=(-H "Connection: close"); fi
  taskset -c "$GEN_CPU" python3 "$BENCH_ROOT/scenarios/calibrate/measure.py" -- \
    wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "${headers[@]}" "$url" >"$WORK/wrk.out" 2>"$WORK/wrk.err"
  m=$(tail -1 "$WORK/wrk.out") # measure.py prints its JSON last, after wrk's own output
  record "$1" wrk "$2" ceiling 0 "$m" "$WORK/wrk.out" wrk
}

# run_k6 ROUND TOOL MODE KIND RATE: TOOL = bare | static | dynamic
run_k6() {
  local round=$1 tool=$2 mode=$3 kind=$4 rate=$5 base port m script result format
  base=$(url_for "$mode") port=$(free_port)
  rm -rf "$WORK/k6"; mkdir -p "$WORK/k6"
  local keepalive=true
  if [ "$mode" != keepalive ]; then keepalive=false; fi
  case $tool in
    bare) script=$BENCH_ROOT/scenarios/calibrate/bare.js result=$WORK/k6/export.json format=k6-export ;;
    *) script=$BENCH_ROOT/scenarios/$tool.js result=$WORK/k6/summary.json format=bench ;;
  esac
  env CAL_URL="$base$BODY" CAL_RATE="$rate" CAL_DURATION="$DURATION" CAL_CONNECTIONS="$CONNECTIONS" \
      CAL_KEEPALIVE="$keepalive" \
      BENCH_TARGET_URL="$base" BENCH_PATH="$BODY" BENCH_RATE="$rate" BENCH_DURATION="${DURATION}s" \
      BENCH_CONNECTIONS="$CONNECTIONS" BENCH_KEEPALIVE="$keepalive" BENCH_SUMMARY_DIR="$WORK/k6" \
      BENCH_TESTID="cal-$tool" BENCH_NAMESPACE=bench-cal BENCH_KUBECONFIG="${KUBECONFIG_CAL:-}" \
      BENCH_CHURN_PATTERN=3:1s,2:1s \
    taskset -c "$GEN_CPU" python3 "$BENCH_ROOT/scenarios/calibrate/measure.py" --k6-api "127.0.0.1:$port" -- \
      k6 run -q --paused --address "127.0.0.1:$port" --summary-export "$WORK/k6/export.json" "$script" \
      >"$WORK/k6/stdout" 2>"$WORK/k6/stderr"
  m=$(tail -1 "$WORK/k6/stdout") # measure.py's JSON, after k6's summary
  [ -s "$result" ] || { tail -5 "$WORK/k6/stderr" >&2; die "k6 $tool ($mode, $kind) wrote no $result"; }
  record "$round" "$tool" "$mode" "$kind" "$rate" "$m" "$result" "$format"
}

# run_pair ROUND TOOL: bare k6 and TOOL at the same time on the generator core, resumed at the same
# instant, both offered the probe's 1.25 x (keep-alive). They share the core over the same seconds,
# so machine noise hits both alike: their requests per CPU-second is the overhead ratio.
run_pair() {
  local round=$1 tool=$2 over resume who port pids_pair=() script
  over=$(times_rate "${PROBE[keepalive]}" 1.25)
  resume=$(python3 -c 'import time; print(time.time() + 20)') # both VU sets initialised by then
  for who in bare "$tool"; do
    port=$(free_port)
    rm -rf "$WORK/pair-$who"; mkdir -p "$WORK/pair-$who"
    case $who in bare) script=$BENCH_ROOT/scenarios/calibrate/bare.js ;; *) script=$BENCH_ROOT/scenarios/$who.js ;; esac
    env CAL_URL="http://127.0.0.1:$PORT_HTTP$BODY" CAL_RATE="$over" CAL_DURATION="$DURATION" CAL_CONNECTIONS="$CONNECTIONS" \
        BENCH_TARGET_URL="http://127.0.0.1:$PORT_HTTP" BENCH_PATH="$BODY" BENCH_RATE="$over" BENCH_DURATION="${DURATION}s" \
        BENCH_CONNECTIONS="$CONNECTIONS" BENCH_SUMMARY_DIR="$WORK/pair-$who" BENCH_TESTID="cal-$who" \
        BENCH_NAMESPACE=bench-cal BENCH_KUBECONFIG="${KUBECONFIG_CAL:-}" BENCH_CHURN_PATTERN=3:1s,2:1s \
      taskset -c "$GEN_CPU" python3 "$BENCH_ROOT/scenarios/calibrate/measure.py" --k6-api "127.0.0.1:$port" --resume-at "$resume" -- \
        k6 run -q --paused --address "127.0.0.1:$port" --summary-export "$WORK/pair-$who/export.json" "$script" \
        >"$WORK/pair-$who/stdout" 2>"$WORK/pair-$who/stderr" &
    pids_pair+=($!)
  done
  wait "${pids_pair[@]}"
  record "$round" bare keepalive "pair-$tool" "$over" "$(tail -1 "$WORK/pair-bare/stdout")" "$WORK/pair-bare/export.json" k6-export
  record "$round" "$tool" keepalive "pair-$tool" "$over" "$(tail -1 "$WORK/pair-$tool/stdout")" "$WORK/pair-$tool/summary.json" bench
}

run_vegeta() { # run_vegeta ROUND [RATE KIND MODE]
  local m rate=${2:-$RATE} kind=${3:-fixed} mode=${4:-keepalive} flags=()
  # close and tls: a new connection per request (Go then sends Connection: close), as bench's do;
  # the TLS server's certificate is the calibration's own, self-signed.
  case $mode in close) flags=(-keepalive=false) ;; tls) flags=(-keepalive=false -insecure) ;; *) flags=(-keepalive) ;; esac
  printf 'GET %s%s\n' "$(url_for "$mode")" "$BODY" > "$WORK/targets"
  m=$(taskset -c "$GEN_CPU" python3 "$BENCH_ROOT/scenarios/calibrate/measure.py" -- \
    vegeta attack -targets "$WORK/targets" -rate "$rate/s" -duration "${DURATION}s" "${flags[@]}" \
      -max-connections "$CONNECTIONS" -output "$WORK/vegeta.bin" 2>"$WORK/vegeta.err")
  # every request's latency: vegeta's own report stops at p99
  vegeta encode --to csv "$WORK/vegeta.bin" > "$WORK/vegeta.csv"
  record "$1" vegeta "$mode" "$kind" "$rate" "$m" "$WORK/vegeta.csv" vegeta-csv
}

# sweep_rates MODE: the rates swept in MODE (--sweep, --sweep-close, --sweep-tls).
sweep_rates() {
  case $1 in keepalive) echo "$SWEEP" ;; close) echo "$SWEEP_CLOSE" ;; tls) echo "$SWEEP_TLS" ;; esac
}

# run_sweep ROUND: in each mode, at each of its swept rates, vegeta then bench static with the
# shipped runner settings (the local k6 carries the chart's GOGC/GOMEMLIMIT, scenarios/runner/build.sh),
# and static at --rate with Go's default collector (GOGC=100) to show what the setting is worth.
run_sweep() {
  local mode rate
  for mode in "${MODES[@]}"; do
    for rate in $(sweep_rates "$mode" | tr , ' '); do
      run_vegeta "$1" "$rate" "sweep-$rate" "$mode"
      run_k6 "$1" static "$mode" "sweep-$rate" "$rate"
    done
  done
  GOGC=100 run_k6 "$1" static keepalive fixed-gogc100 "$RATE"
}

# memory_per_vus TOOL: RSS after VU initialisation with CONNECTIONS and CONNECTIONS+1000 VUs. With
# GOGC=5 the collector runs often, so RSS follows the live heap (what a runner must fit in memory)
# rather than init garbage, which runners with GOGC=off keep until their GOMEMLIMIT.
memory_per_vus() {
  local tool=$1 vus port m script
  for vus in "$CONNECTIONS" $((CONNECTIONS + 1000)); do
    port=$(free_port)
    case $tool in bare) script=$BENCH_ROOT/scenarios/calibrate/bare.js ;; *) script=$BENCH_ROOT/scenarios/$tool.js ;; esac
    mkdir -p "$WORK/mem"
    m=$(env GOGC=5 CAL_URL="http://127.0.0.1:$PORT_HTTP/healthz" CAL_RATE=10 CAL_DURATION=1 CAL_CONNECTIONS="$vus" \
        BENCH_TARGET_URL="http://127.0.0.1:$PORT_HTTP" BENCH_PATH=/healthz BENCH_RATE=10 BENCH_DURATION=1s \
        BENCH_CONNECTIONS="$vus" BENCH_SUMMARY_DIR="$WORK/mem" \
      taskset -c "$GEN_CPU" python3 "$BENCH_ROOT/scenarios/calibrate/measure.py" --k6-api "127.0.0.1:$port" -- \
        k6 run -q --paused --address "127.0.0.1:$port" "$script" 2>/dev/null | tail -1)
    printf '{"tool": "%s", "kind": "memory", "vus": %s, "measure": %s}\n' "$tool" "$vus" "$m" >> "$OUT/results.jsonl"
  done
}

# probe_ceilings: bare k6 offered OFFERED_PROBE req/s once per mode. The ceiling runs then offer
# 1.25 x what it achieved (overloaded, but without spending the core on dropping 40k iterations/s).
declare -A PROBE
probe_ceilings() {
  local mode
  for mode in "${MODES[@]}"; do
    run_k6 0 bare "$mode" probe "$OFFERED_PROBE"
    PROBE[$mode]=$(tail -1 "$OUT/results.jsonl" | python3 -c 'import json, sys; print(int(json.load(sys.stdin)["achieved"]))')
  done
}
times_rate() { python3 -c "import sys; print(max(1, round(float(sys.argv[1]) * float(sys.argv[2]))))" "$1" "$2"; }

run_round() {
  local r=$1 mode over
  log "round $r/$ROUNDS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  for mode in "${MODES[@]}"; do
    over=$(times_rate "${PROBE[$mode]}" 1.25)
    run_wrk "$r" "$mode"
    run_k6 "$r" bare "$mode" ceiling "$over"
    run_k6 "$r" static "$mode" ceiling "$over"
  done
  run_pair "$r" static
  if [ "$DYNAMIC" = true ]; then run_pair "$r" dynamic; fi
  run_vegeta "$r"
  run_k6 "$r" bare keepalive fixed "$RATE"
  run_k6 "$r" static keepalive fixed "$RATE"
  run_sweep "$r"
}

main() {
  parse_args "$@"
  local t0=$SECONDS
  apt_install nginx-light wrk openssl curl python3
  bash "$BENCH_ROOT/scenarios/runner/build.sh" >/dev/null
  go_build_tool vegeta "$VEGETA_VERSION" github.com/tsenart/vegeta/v12 "github.com/tsenart/vegeta/v12@$VEGETA_VERSION"
  pick_cpus
  WORK=$(mktemp -d /tmp/bench-calibrate.XXXXXX)
  chmod 755 "$WORK" # nginx workers (nobody) read the bodies
  trap cleanup EXIT
  mkdir -p "$OUT"
  : > "$OUT/results.jsonl"
  start_nginx
  if [ "$DYNAMIC" = true ]; then start_apiserver; fi
  log "nginx (1 worker) on cpu$SERVER_CPU, generators on cpu$GEN_CPU; body $BODY, $CONNECTIONS connections," \
    "${DURATION}s per measurement, $ROUNDS rounds"
  MODES=(keepalive)
  if [ "$CLOSE" = true ]; then MODES+=(close); fi
  if [ "$TLS" = true ]; then MODES+=(tls); fi
  if [ "$PAIRS_ONLY" = true ]; then
    MODES=(keepalive)
    probe_ceilings
    local r
    for r in $(seq 1 "$ROUNDS"); do
      log "pairs round $r/$ROUNDS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
      run_pair "$r" static
      if [ "$DYNAMIC" = true ]; then run_pair "$r" dynamic; fi
    done
  elif [ "$SWEEP_ONLY" = true ]; then
    local r
    for r in $(seq 1 "$ROUNDS"); do
      log "sweep round $r/$ROUNDS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
      run_sweep "$r"
    done
  elif [ "$MEMORY_ONLY" = false ]; then
    probe_ceilings
    local r
    for r in $(seq 1 "$ROUNDS"); do run_round "$r"; done
    if [ "$SOAK" -gt 0 ]; then
      log "soak: bench static at $RATE req/s for $SOAK s"
      DURATION=$SOAK run_k6 1 static keepalive soak "$RATE"
    fi
  fi
  if [ "$PAIRS_ONLY" = false ] && [ "$SWEEP_ONLY" = false ]; then
    memory_per_vus bare
    memory_per_vus static
    # Every VU of a churn run also holds the churn code (any VU may become the churn VU).
    memory_per_vus dynamic
  fi
  python3 "$BENCH_ROOT/scenarios/calibrate/report.py" summary "$OUT/results.jsonl" \
    --machine "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" | tee "$OUT/report.txt"
  log "calibration took $((SECONDS - t0)) s; results in $OUT/results.jsonl and $OUT/report.txt"
}

main "$@"
