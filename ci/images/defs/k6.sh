# k6 runner and initializer image for the k6-operator: k6 + xk6-kubernetes (the versions of
# scenarios/runner/versions.env, built by scenarios/runner/build.sh) on a Debian root. The initializer
# runs `sh -c "mkdir ... && k6 archive ... && k6 inspect ... | grep ..."`, so the root keeps sh, mkdir,
# dirname, grep and cat (all in minbase); curl is there to share the base layer with bench/starter.
IMAGE_REF=bench/k6:local
IMAGE_PACKAGES=(curl)
IMAGE_ENTRYPOINT=(k6)
IMAGE_USER=65532:65532
IMAGE_ENV=(HOME=/tmp K6_NO_USAGE_REPORT=true K6_AUTO_EXTENSION_RESOLUTION=false)

image_add_files() {
  local k6
  k6=$(bash "$BENCH_ROOT/scenarios/runner/build.sh")
  install -D -m 0755 "$k6" "$1/usr/local/bin/k6"
}
