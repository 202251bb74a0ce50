# Sourced after lib/common.sh. ensure_venv NAME REQUIREMENTS: creates (once) a Python venv with
# the pinned REQUIREMENTS in $BENCH_CACHE/venvs/NAME-<hash of the requirements and the Python
# version> (it survives fresh clones), links it as .tools/NAME-venv and sets VENV_PYTHON. A matching
# stamp makes a warm call a file read. One venv per hash: a run of another commit beside this one
# (another clone, CI) never rebuilds the venv this one is using. Prints nothing on stdout.
ensure_venv() {
  local name=$1 req=$2 hash venv stamp lock_fd
  [ -f "$req" ] || die "no requirements file $req"
  # The interpreter is part of the name: two python3s on PATH (pyenv beside Debian's) each get
  # their own venv instead of rebuilding one under each other's feet.
  stamp="$(sha256sum "$req" | cut -d' ' -f1) $(python3 --version 2>&1)"
  hash=$(printf '%s' "$stamp" | sha256sum | cut -d' ' -f1)
  venv="$BENCH_CACHE/venvs/$name-${hash:0:12}"
  mkdir -p "$BENCH_CACHE/venvs" "$BENCH_TOOLS"
  # Several callers may start at once (two test parts, a clone beside this one): one install at a time.
  exec {lock_fd}>"$BENCH_CACHE/venvs/$name.lock"
  flock "$lock_fd"
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.bench-stamp" 2>/dev/null)" != "$stamp" ]; then
    python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
    log "creating the $name venv in $venv (pinned ${req#"$BENCH_ROOT"/})"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$req" >&2
    printf '%s\n' "$stamp" > "$venv/.bench-stamp"
  fi
  exec {lock_fd}>&-
  ln -sfn "$venv" "$BENCH_TOOLS/$name-venv"
  VENV_PYTHON="$venv/bin/python"
}
