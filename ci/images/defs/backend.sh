# The benchmark backend: Debian's nginx, run as a non-root user. The chart mounts
# charts/bench/files/backend/nginx.conf and runs make-bodies.sh (POSIX sh + coreutils) in an init
# container; the image also carries both, with the placeholders filled for port 8080, so it serves
# the published responses on its own.
IMAGE_REF=bench/backend:local
# nginx-light: the smallest Debian nginx with every module nginx.conf uses (core http, rewrite).
IMAGE_PACKAGES=(nginx-light)
IMAGE_ENTRYPOINT=(nginx -e stderr -g "daemon off;")
IMAGE_CMD=(-c /etc/bench/nginx.conf)
# Any uid works: every path nginx writes is under /tmp (see nginx.conf).
IMAGE_USER=101:101

image_add_files() {
  local src="$BENCH_ROOT/charts/bench/files/backend"
  install -d "$1/etc/bench" "$1/usr/local/bin" "$1/usr/share/bench"
  install -m 0755 "$src/make-bodies.sh" "$1/usr/local/bin/make-bodies.sh"
  sh "$src/make-bodies.sh" "$1/usr/share/bench/bodies"
  sed -e 's#BENCH_PORT#8080#' -e 's#BENCH_BODIES_DIR#/usr/share/bench/bodies#' \
    "$src/nginx.conf" > "$1/etc/bench/nginx.conf"
}
