#!/bin/sh
# Writes the fixed-size response bodies the backend serves under /bytes/ into directory $1.
# POSIX sh and coreutils only: it runs in the backend image's init container and in local tests.
set -eu
dir=${1:?usage: make-bodies.sh DIR}
mkdir -p "$dir"
write_body() { head -c "$2" /dev/zero | tr '\0' 'x' > "$dir/$1"; }
write_body 0 0
write_body 1k 1024
write_body 4k 4096
write_body 100k 102400
write_body 1m 1048576
