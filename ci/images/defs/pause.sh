# Pod sandbox image: containerd's sandbox_image points at it (ci/cluster/up.sh). No Debian root:
# one static C program that holds the pod's namespaces until it is told to stop.
IMAGE_REF=bench/pause:3.10
IMAGE_PACKAGES=()
IMAGE_ENTRYPOINT=(/pause)
IMAGE_USER=65535:65535

image_add_files() {
  apt_install gcc libc6-dev
  gcc -static -Os -s -Wall -Werror -o "$1/pause" "$IMAGES_DIR/pause/pause.c"
}
