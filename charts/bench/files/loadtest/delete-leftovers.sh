#!/bin/sh
# Run by the chart's pre-delete hook (templates/loadtest/cleanup-hook.yaml), last: deletes the named
# objects `helm uninstall` would leave behind (Secrets the subcharts' certificate Jobs wrote, hook
# objects without a delete policy, the `helm test` pods, kube-prometheus-stack's kubelet Service).
# /cleanup/leftovers.txt holds one object a line, its collection's API path and its name, rendered
# by the chart (bench.cleanup.leftovers); the hook's Roles allow delete on exactly these names.
# An object already absent counts as deleted. Nothing is pasted into this script.
set -eu

. "$(dirname "$0")/api.sh"
LIST=${LEFTOVERS:-/cleanup/leftovers.txt}

deleted=0 absent=0
# (a last line without its newline still counts)
while read -r collection name || [ -n "$collection" ]; do
  [ -n "$collection" ] || continue
  # only API paths and object names of the shapes the chart renders
  case "$collection/$name" in
    *[!a-z0-9./-]*) echo "refusing a malformed line: $collection $name"; exit 1 ;;
  esac
  status=$(call DELETE "$collection/$name")
  case $status in
    200|202) deleted=$((deleted + 1)); echo "deleted $collection/$name" ;;
    404) absent=$((absent + 1)) ;;
    *) echo "deleting $collection/$name: HTTP $status"; cat "$BODY"; exit 1 ;;
  esac
done < "$LIST"
echo "leftovers: $deleted deleted, $absent already absent"
