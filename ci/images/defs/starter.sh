# Starter image for the k6-operator: it runs `sh -c "curl ... -X PATCH http://<runner>:6565/v1/status"`
# to start the paused runners together. Debian root with curl (same base layer as bench/k6).
IMAGE_REF=bench/starter:local
IMAGE_PACKAGES=(curl)
IMAGE_CMD=(sh)
IMAGE_USER=65532:65532

image_add_files() { :; }
