#!/usr/bin/env bash
# Chart tests, fast tier: helm lint (v3 and v4, chart and repository root), helm-unittest suites,
# kubeconform (strict, local schemas) on every preset and CI overlay, the bad-values suite (each
# file rejected with its expected message), Chart.lock consistency, yamllint.
#
# The dependency charts (controllers, kube-prometheus-stack, k6-operator) cannot be downloaded
# here. Every check runs on a copy of charts/bench whose Chart.yaml drops the dependency list, so
# only this chart's own templates render (the subcharts are absent, as if all were disabled; a
# preset's subchart values are then plain data). The copy keeps the repository layout (values/,
# symlinks resolved) so presets and test suites find each other by relative path.
# Closing line: "chart: N passed, N failed".
. "$(dirname "$0")/../lib/common.sh"

CHART_SRC="$BENCH_ROOT/charts/bench"
SCHEMAS="$BENCH_TOOLS/schemas"
KUBE_VERSION=1.34.0
RELEASE=bench
NAMESPACE=bench
passed=0 failed=0

pass() { passed=$((passed + 1)); printf '  ok    %s\n' "$1"; }
fail() { failed=$((failed + 1)); printf '  FAIL  %s\n' "$1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/        /' | head -n 40; }

# check NAME CMD...: one check; the command's output is shown only when it fails.
check() {
  local name=$1 out; shift
  if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$out"; fi
}

# make_offline_copy DIR: DIR/Chart.yaml (repository root wrapper), DIR/charts/bench without its
# dependency list, DIR/values, DIR/scenarios and DIR/dashboards (symlinks resolved).
make_offline_copy() {
  local dir=$1
  mkdir -p "$dir/charts"
  cp -rL "$CHART_SRC" "$dir/charts/bench"
  rm -rf "$dir/charts/bench/charts" "$dir/charts/bench/Chart.lock"
  "$BENCH_CACHE/venv-chart/bin/python" - "$dir/charts/bench/Chart.yaml" <<'PY'
import sys, yaml
path = sys.argv[1]
chart = yaml.safe_load(open(path))
chart.pop("dependencies", None)
yaml.safe_dump(chart, open(path, "w"), sort_keys=False)
PY
  cp "$BENCH_ROOT/Chart.yaml" "$dir/Chart.yaml"
  [ ! -f "$BENCH_ROOT/.helmignore" ] || cp "$BENCH_ROOT/.helmignore" "$dir/.helmignore"
  mkdir -p "$dir/values"
  cp "$BENCH_ROOT"/values/*.yaml "$dir/values/" 2>/dev/null || log "no presets in values/ yet"
}

# render_cases: "name|values files (space separated)" for defaults, every preset and CI overlay.
# Experiment presets (no `controller:` key) are rendered alone and on top of the traefik preset.
# An overlay with a "# api-versions: ..." line renders as on a cluster with those APIs (CRDs).
render_cases() {
  echo "defaults|"
  local f name
  for f in "$COPY"/values/*.yaml; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .yaml)
    echo "values/$name|$f"
    if ! grep -q '^controller:' "$f" && [ -f "$COPY/values/traefik.yaml" ]; then
      echo "values/traefik+$name|$COPY/values/traefik.yaml $f"
    fi
  done
  for f in "$COPY"/charts/bench/ci/*-values.yaml; do
    [ -e "$f" ] || continue
    echo "ci/$(basename "$f")|$f"
  done
}

values_args() { local f; for f in $1; do printf -- '-f\n%s\n' "$f"; done; }

# api_versions FILES: the API versions the files' "# api-versions:" lines ask for.
api_versions() { local f; for f in $1; do sed -n 's/^# api-versions: //p' "$f"; done | tr ' ' '\n' | sed '/^$/d'; }
api_args() { local v; for v in $(api_versions "$1"); do printf -- '--api-versions\n%s\n' "$v"; done; }

lint_charts() {
  log "helm lint (v3 and v4)"
  local case name files args
  for bin in helm helm4; do
    check "$bin lint charts/bench (defaults)" "$bin" lint --strict "$COPY/charts/bench"
    check "$bin lint repository root (charts/bench as its subchart)" "$bin" lint "$COPY"
    while IFS='|' read -r name files; do
      [ -n "$files" ] || continue
      # helm lint has no --api-versions: overlays that need CRDs are only rendered (below).
      [ -z "$(api_versions "$files")" ] || continue
      mapfile -t args < <(values_args "$files")
      check "$bin lint charts/bench with $name" "$bin" lint --strict "$COPY/charts/bench" "${args[@]}"
    done < <(render_cases)
  done
}

run_unittests() {
  log "helm-unittest suites"
  local out rc=0 summary total tests_passed
  out=$(HELM_PLUGINS="$BENCH_TOOLS/helm-plugins" helm unittest --color=false "$COPY/charts/bench" 2>&1) || rc=$?
  # Each test case counts as a check: "Tests:  N failed, M passed, T total" / "Tests:  M passed, T total".
  summary=$(printf '%s\n' "$out" | grep -E '^Tests:' | tail -n 1)
  tests_passed=$(printf '%s\n' "$summary" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
  total=$(printf '%s\n' "$summary" | grep -oE '[0-9]+ total' | grep -oE '[0-9]+' || echo 0)
  passed=$((passed + tests_passed)); failed=$((failed + total - tests_passed))
  printf '  unittest: %s\n' "${summary:-no summary line}"
  if [ "$rc" -ne 0 ] || [ "$total" -eq 0 ]; then
    failed=$((failed + 1)); printf '%s\n' "$out" | grep -vE '^\s*$' | grep -E 'FAIL|Error|- asserts|Expected|Actual|Path|\[' | head -n 80
  fi
  local suites
  suites=$(find "$COPY/charts/bench/tests" -maxdepth 1 -name '*_test.yaml' | wc -l)
  printf '  unittest: %s suites\n' "$suites"
}

kubeconform_file() {
  kubeconform -strict -summary -kubernetes-version "$KUBE_VERSION" \
    -schema-location "$SCHEMAS/kubernetes/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
    -schema-location "$SCHEMAS/crds/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json" \
    "$1"
}

# loadtest_enabled FILES...: false when the last file that sets loadtest.enabled sets it false.
loadtest_enabled() {
  "$BENCH_CACHE/venv-chart/bin/python" - "$@" <<'PY'
import sys, yaml
enabled = True
for path in sys.argv[1:]:
    lt = (yaml.safe_load(open(path)) or {}).get("loadtest") or {}
    enabled = lt.get("enabled", enabled)
sys.exit(0 if enabled else 1)
PY
}

# The rendered TestRun must exist (a k6.io/v1alpha1 document), to be validated against its CRD.
has_testrun() { grep -q '^kind: TestRun$' "$1"; }

render_and_validate() {
  log "render every preset and CI overlay; kubeconform strict with local schemas"
  local name files args out bin
  while IFS='|' read -r name files; do
    mapfile -t args < <(values_args "$files"; api_args "$files")
    for bin in helm helm4; do
      out="$WORK/render-$bin-${name//[\/+]/_}.yaml"
      if "$bin" template "$RELEASE" "$COPY/charts/bench" -n "$NAMESPACE" --kube-version "$KUBE_VERSION" \
          "${args[@]}" > "$out" 2> "$out.err"; then
        pass "$bin template $name ($(grep -c '^kind:' "$out") objects)"
      else
        fail "$bin template $name" "$(cat "$out.err")"; continue
      fi
    done
    out="$WORK/render-helm-${name//[\/+]/_}.yaml"
    [ -s "$out" ] || continue
    check "kubeconform $name" kubeconform_file "$out"
    if loadtest_enabled $files; then
      check "$name renders the TestRun hook" has_testrun "$out"
    fi
  done < <(render_cases)
  check "dashboards: one ConfigMap per dashboards/*.json" dashboards_match "$WORK/render-helm-defaults.yaml"
  check "kubeconform schemas reject a wrong TestRun field" kubeconform_rejects_bad_testrun
}

dashboards_match() {
  local want got
  want=$(find "$COPY/charts/bench/dashboards" -maxdepth 1 -name '*.json' | wc -l)
  got=$(grep -c '^  name: bench-dashboard-' "$1" || true)
  echo "dashboards/*.json: $want, ConfigMaps: $got"
  [ "$want" -eq "$got" ]
}

# The CRD schemas are strict: a misspelled TestRun field must fail, or the check above proves nothing.
kubeconform_rejects_bad_testrun() {
  local bad="$WORK/bad-testrun.yaml"
  sed 's/^  parallelism:/  paralelism:/' "$WORK/render-helm-defaults.yaml" > "$bad"
  if kubeconform_file "$bad"; then echo "kubeconform accepted spec.paralelism"; return 1; fi
}

bad_values() {
  log "bad values: each file must be rejected with its expected message"
  local f expect out count=0 bin
  for f in "$COPY"/charts/bench/tests/bad-values/*.yaml; do
    count=$((count + 1))
    expect=$(sed -n 's/^# expect: //p' "$f" | head -n 1)
    [ -n "$expect" ] || { fail "$(basename "$f"): no '# expect:' line"; continue; }
    for bin in helm helm4; do
      if out=$("$bin" template "$RELEASE" "$COPY/charts/bench" -n "$NAMESPACE" -f "$f" 2>&1 >/dev/null); then
        fail "$bin rejects $(basename "$f")" "rendered without error"
      elif grep -qE -- "$expect" <<<"$out"; then
        pass "$bin rejects $(basename "$f")"
      else
        fail "$bin rejects $(basename "$f") with /$expect/" "$out"
      fi
    done
  done
  if [ "$count" -ge 20 ]; then pass "bad-values suite has $count files (>= 20)"; else fail "bad-values suite has $count files (< 20)"; fi
}

# The TestRun's scripts, checked with real k6 the way the k6-operator initializer uses them: the
# ConfigMap is laid out through the TestRun's volume items (the Kubernetes projection, done here by
# a script), then every entry script goes through `k6 archive` with the initializer's env as `-e`
# flags and its archive arguments (spec.arguments without -o, as k6-operator v1.5.0 strips it), and
# `k6 inspect --execution-requirements`. This proves the lib/ imports resolve from the mounted tree
# and that each entry script accepts the chart's BENCH_* values in its init context.
scenarios_from_testrun() {
  log "scenarios: k6 archive + inspect on the TestRun's mounted tree (real k6 + xk6-kubernetes)"
  # the traefik preset's render: target ingress over https, which every scenario accepts
  # (tls-handshakes refuses plain http)
  local k6bin mount="$WORK/k6mount" rendered="$WORK/render-helm-values_traefik.yaml" script name
  k6bin=$(bash "$BENCH_ROOT/ci/k6/build.sh")
  mkdir -p "$mount"
  "$BENCH_CACHE/venv-chart/bin/python" - "$rendered" "$mount" "$WORK/k6env" "$WORK/k6args" <<'PY'
import os, sys, yaml
rendered, mount, env_out, args_out = sys.argv[1:]
docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
cm = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-scenarios"))
tr = next(d for d in docs if d["kind"] == "TestRun")
init = tr["spec"]["initializer"]
vol = next(v for v in init["volumes"] if v["name"] == "scenarios")
mount_path = next(m["mountPath"] for m in init["volumeMounts"] if m["name"] == "scenarios")
assert tr["spec"]["script"]["localFile"].startswith(mount_path + "/"), "localFile is not under the scenarios mount"
for item in vol["configMap"]["items"]:
    path = os.path.join(mount, item["path"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(cm["data"][item["key"]])
with open(env_out, "w") as f:
    for env in init["env"]:
        if "value" in env:
            f.write(f"-e\n{env['name']}={env['value']}\n")
args, skip = [], False
for word in tr["spec"]["arguments"].split(" "):
    if word in ("-o", "--out"):
        skip = True
        continue
    if skip and not word.startswith("-"):
        continue
    skip = False
    args.append(word)
open(args_out, "w").write("\n".join(a for a in args if a) + "\n")
PY
  local env_args arch_args
  mapfile -t env_args < "$WORK/k6env"
  mapfile -t arch_args < "$WORK/k6args"
  for script in "$mount"/*.js; do
    name=$(basename "$script" .js)
    check "scenario $name: k6 archive + inspect from the TestRun volume" \
      k6_archive_inspect "$k6bin" "$script" "$WORK/$name.tar" "${env_args[@]}" -- "${arch_args[@]}"
  done
}

# k6_archive_inspect K6 SCRIPT ARCHIVE ENV_ARGS... -- ARCHIVE_ARGS...
k6_archive_inspect() {
  local k6bin=$1 script=$2 archive=$3; shift 3
  local env_args=() arch_args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do env_args+=("$1"); shift; done
  shift
  arch_args=("$@")
  (cd "$WORK" && "$k6bin" archive "$script" "${env_args[@]}" -O "$archive" "${arch_args[@]}") &&
    (cd "$WORK" && "$k6bin" inspect --execution-requirements "$archive" >/dev/null)
}

# The one dependency whose source is reachable here: the k6-operator chart 4.5.0 ships inside the
# k6-operator v1.5.0 Go module (charts/k6-operator). Render charts/bench with it as a real subchart
# (other dependencies dropped) to check what the stripped copy cannot: its strict values schema
# accepts our values, the TestRun CRD and the manager render with the TestRun hook, and the whole
# render passes kubeconform. Nothing of it is committed.
with_k6_operator_subchart() {
  log "charts/bench with the real k6-operator 4.5.0 subchart (from the k6-operator v1.5.0 Go module)"
  local module dir="$WORK/with-k6-operator" out bin
  module=$(cd "$BENCH_CACHE" && go mod download -json github.com/grafana/k6-operator@v1.5.0 |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  mkdir -p "$dir"
  cp -rL "$CHART_SRC" "$dir/bench"
  rm -f "$dir/bench/Chart.lock"
  mkdir -p "$dir/bench/charts"
  cp -r "$module/charts/k6-operator" "$dir/bench/charts/k6-operator"
  chmod -R u+w "$dir"
  "$BENCH_CACHE/venv-chart/bin/python" - "$dir/bench/Chart.yaml" <<'PY'
import sys, yaml
path = sys.argv[1]
chart = yaml.safe_load(open(path))
chart["dependencies"] = [d for d in chart["dependencies"] if d["name"] in ("k6-operator", "traefik")]
assert [d["version"] for d in chart["dependencies"] if d["name"] == "k6-operator"] == ["4.5.0"]
yaml.safe_dump(chart, open(path, "w"), sort_keys=False)
PY
  # Traefik's chart cannot be downloaded: an empty stand-in with its name and pinned version (and an
  # appVersion of its own) shows what the TestRun records about the controller's chart.
  mkdir -p "$dir/bench/charts/traefik"
  printf 'apiVersion: v2\nname: traefik\nversion: %s\nappVersion: stand-in-app\n' \
    "$(sed -n '/^  - name: traefik$/{n;s/^    version: //p}' "$CHART_SRC/Chart.yaml")" > "$dir/bench/charts/traefik/Chart.yaml"
  check "k6-operator chart in the module is 4.5.0" grep -q '^version: 4.5.0$' "$dir/bench/charts/k6-operator/Chart.yaml"
  for bin in helm helm4; do
    out="$WORK/with-k6-operator-$bin.yaml"
    if "$bin" template "$RELEASE" "$dir/bench" -n "$NAMESPACE" --kube-version "$KUBE_VERSION" \
        -f "$COPY/values/traefik.yaml" > "$out" 2> "$out.err"; then
      pass "$bin template with the k6-operator subchart ($(grep -c '^kind:' "$out") objects)"
    else
      fail "$bin template with the k6-operator subchart" "$(cat "$out.err")"
    fi
  done
  out="$WORK/with-k6-operator-helm.yaml"
  check "with k6-operator: TestRun CRD, manager Deployment and TestRun hook rendered" \
    renders_operator_and_testrun "$out"
  check "kubeconform with the k6-operator subchart" kubeconform_file "$out"
  check "the runners' BENCH_ENVIRONMENT names the controller's chart from Chart.yaml and its app version" \
    records_controller_chart "$out"
  check "k6-operator's schema refuses a k6-operator.enabled key (why the switch is loadtest.operator.enabled)" \
    refuses_subchart_enabled "$dir/bench"
}

renders_operator_and_testrun() {
  grep -q '^  name: testruns.k6.io$' "$1" || { echo "no testruns.k6.io CRD"; return 1; }
  grep -q 'image: "*ghcr.io/grafana/k6-operator:controller-v1.5.0' "$1" || { echo "no k6-operator v1.5.0 manager"; return 1; }
  grep -q '^kind: TestRun$' "$1" || { echo "no TestRun"; return 1; }
}

records_controller_chart() {
  "$BENCH_CACHE/venv-chart/bin/python" - "$1" <<'PY'
import json, sys, yaml
runs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "TestRun"]
env = {e["name"]: e.get("value") for e in runs[0]["spec"]["runner"]["env"]}
info = json.loads(env["BENCH_ENVIRONMENT"])
print(f"BENCH_ENVIRONMENT: {info}")
assert info["controller_chart"] == "traefik-37.3.0" and info["controller_version"] == "stand-in-app", info
assert info["backend_replicas"] == 5, info
PY
}

refuses_subchart_enabled() {
  local out
  if out=$(helm template "$RELEASE" "$1" --set k6-operator.enabled=true 2>&1); then
    echo "accepted k6-operator.enabled"; return 1
  fi
  grep -q "additional properties 'enabled' not allowed" <<<"$out" || { echo "$out"; return 1; }
}

chart_lock() {
  log "Chart.lock matches Chart.yaml"
  check "Chart.lock digest and versions (chart-lock.py --check)" \
    "$BENCH_CACHE/venv-chart/bin/python" "$BENCH_ROOT/ci/tools/chart-lock.py" "$CHART_SRC" --check
  # helm's own check: `dependency build` verifies the lock digest first, and only then needs the
  # (unreachable) repositories. Reaching the repository error proves the lock is in sync.
  local dir="$WORK/lock" out
  mkdir -p "$dir"
  cp "$CHART_SRC/Chart.yaml" "$CHART_SRC/Chart.lock" "$dir/"
  out=$(HELM_REPOSITORY_CONFIG="$dir/repositories.yaml" HELM_CACHE_HOME="$dir/cache" helm dependency build "$dir" 2>&1 || true)
  if grep -q 'no repository definition' <<<"$out" && ! grep -q 'out of sync' <<<"$out"; then
    pass "helm dependency build accepts the Chart.lock digest"
  else
    fail "helm dependency build accepts the Chart.lock digest" "$out"
  fi
  check "no dependency chart sources committed" no_vendored_charts
}

no_vendored_charts() {
  local found
  found=$(git -C "$BENCH_ROOT" ls-files charts/bench/charts '*.tgz')
  [ -z "$found" ] || { echo "committed: $found"; return 1; }
}

lint_yaml() {
  log "yamllint"
  local files=("$CHART_SRC/values.yaml" "$CHART_SRC/Chart.yaml" "$CHART_SRC"/ci/*.yaml "$CHART_SRC"/tests/*.yaml)
  [ -z "$(ls "$BENCH_ROOT"/values/*.yaml 2>/dev/null)" ] || files+=("$BENCH_ROOT"/values/*.yaml)
  check "yamllint values, presets, CI overlays, suites" yamllint -s -d \
    '{extends: default, rules: {line-length: {max: 160}, document-start: disable, truthy: {check-keys: false}, comments: {min-spaces-from-content: 1}, braces: {max-spaces-inside: 1}, brackets: {max-spaces-inside: 1}, indentation: {indent-sequences: consistent}}}' \
    "${files[@]}"
}

main() {
  local t0=$SECONDS
  bash "$BENCH_ROOT/ci/tools/install.sh"
  log "tools ready in $((SECONDS - t0)) s"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-chart-test.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  COPY="$WORK/repo"
  make_offline_copy "$COPY"
  log "rendering a copy of charts/bench without its dependencies (they cannot be downloaded here)"
  lint_charts
  run_unittests
  render_and_validate
  bad_values
  scenarios_from_testrun
  with_k6_operator_subchart
  chart_lock
  lint_yaml
  log "chart tests took $((SECONDS - t0)) s"
  echo "chart: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

main "$@"
