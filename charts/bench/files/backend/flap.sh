#!/bin/sh
# backend-failover's toggler, beside the flapping backend pod's nginx: the flag file
# BENCH_FLAP_FILE exists (nginx does what its mode's line of flap.conf says) for
# BENCH_FLAP_UNHEALTHY_SECONDS, then is gone for BENCH_FLAP_HEALTHY_SECONDS, over and over, starting
# healthy. The settings come from the environment (the chart's values, checked at install) and are
# checked again here, since they reach `sleep`. POSIX sh.
set -eu

fail() {
  echo "flap.sh: $*" >&2
  exit 2
}

seconds() { # seconds NAME VALUE: a whole number of seconds from 1 to 3600
  case "$2" in
    '' | *[!0-9]* | 0*) fail "$1 '$2': expected a whole number of seconds from 1 to 3600" ;;
  esac
  [ "$2" -le 3600 ] || fail "$1 '$2': expected a whole number of seconds from 1 to 3600"
}

unhealthy=${BENCH_FLAP_UNHEALTHY_SECONDS-}
healthy=${BENCH_FLAP_HEALTHY_SECONDS-}
flag=${BENCH_FLAP_FILE-}
seconds BENCH_FLAP_UNHEALTHY_SECONDS "$unhealthy"
seconds BENCH_FLAP_HEALTHY_SECONDS "$healthy"
case "$flag" in
  /*) ;;
  *) fail "BENCH_FLAP_FILE '$flag': expected an absolute path" ;;
esac

# A restarted toggler starts healthy again; a stop leaves the pod healthy.
rm -f -- "$flag"
trap 'rm -f -- "$flag"; exit 0' TERM INT
n=0
while :; do
  sleep "$healthy" &
  wait $!
  n=$((n + 1))
  : >"$flag"
  echo "flap.sh: $(date -u +%H:%M:%S) flap $n: unhealthy for ${unhealthy}s"
  sleep "$unhealthy" &
  wait $!
  rm -f -- "$flag"
  echo "flap.sh: $(date -u +%H:%M:%S) flap $n: healthy for ${healthy}s"
done
