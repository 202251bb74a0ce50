# Prometheus for the e2e: the binary of Debian's package (2.42; remote-write receiver and native
# histograms are enabled by flags in ci/e2e/manifests/prometheus.yaml). It links only libc, so it
# goes on the curl root shared with bench/k6 and bench/starter instead of the package's own 300 MB
# of dependencies. Runs as nobody; config and data are volumes.
IMAGE_REF=bench/prometheus:local
IMAGE_PACKAGES=(curl)
IMAGE_ENTRYPOINT=(/usr/local/bin/prometheus)
IMAGE_USER=65534:65534

image_add_files() {
  local deb_dir
  deb_dir=$(mktemp -d)
  # The package file only (apt's download needs no install); its version is whatever bookworm
  # serves, the same as the images' root.
  (cd "$deb_dir" && apt-get download -qq -o APT::Sandbox::User=root prometheus) || {
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    (cd "$deb_dir" && apt-get download -qq -o APT::Sandbox::User=root prometheus)
  }
  dpkg-deb -x "$deb_dir"/prometheus_*.deb "$deb_dir/x"
  install -D -m 0755 "$deb_dir/x/usr/bin/prometheus" "$1/usr/local/bin/prometheus"
  rm -rf "$deb_dir"
}
