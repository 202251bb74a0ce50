# Prometheus for the e2e: Debian's package (2.42; remote-write receiver and native histograms are
# enabled by flags in ci/e2e/manifests/prometheus.yaml). Runs as nobody; config and data are volumes.
IMAGE_REF=bench/prometheus:local
IMAGE_PACKAGES=(prometheus)
IMAGE_ENTRYPOINT=(/usr/bin/prometheus)
IMAGE_USER=65534:65534

image_add_files() { :; }
