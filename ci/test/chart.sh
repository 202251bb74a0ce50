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
passed=0 failed=0 skipped=0

pass() { passed=$((passed + 1)); printf '  ok    %s\n' "$1"; }
skip() { skipped=$((skipped + 1)); printf '  SKIPPED  %s\n' "$1"; }
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
  # The presets are the product: their absence is an error, never a quiet skip of their checks.
  compgen -G "$BENCH_ROOT/values/*.yaml" >/dev/null || die "no presets in $BENCH_ROOT/values/"
  cp "$BENCH_ROOT"/values/*.yaml "$dir/values/"
}

# render_cases: "name|values files (space separated)" for defaults, every preset and CI overlay.
# Experiment presets and overlays (no `controller:` key) are rendered on top of the traefik preset,
# and alone unless they send load through an ingress or a Gateway (both need a controller).
# An overlay with a "# api-versions: ..." line renders as on a cluster with those APIs (CRDs).
render_cases() {
  echo "defaults|"
  local f name
  for f in "$COPY"/values/*.yaml; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .yaml)
    grep -q '^controller:' "$f" || ! grep -qE '^  target: (ingress|gateway)$' "$f" || { experiment_with_traefik "$f"; continue; }
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

# values_args FILES: -f for each file, after the runner image fixture (the chart has no default
# runner image and refuses to render without one; runner_image_required checks that refusal).
experiment_with_traefik() { echo "values/traefik+$(basename "$1" .yaml)|$COPY/values/traefik.yaml $1"; }

values_args() { local f; printf -- '-f\n%s\n' "$RUNNER_VALUES"; for f in $1; do printf -- '-f\n%s\n' "$f"; done; }

# write_runner_values FILE: the runner image a user builds with `make runner-image`.
write_runner_values() {
  cat > "$1" <<'YAML'
# the image `make runner-image IMAGE=registry.example/bench/k6:v0.51.0` would push
loadtest:
  runner:
    image:
      repository: registry.example/bench/k6
      tag: v0.51.0
YAML
}

# api_versions FILES: the API versions the files' "# api-versions:" lines ask for.
api_versions() { local f; for f in $1; do sed -n 's/^# api-versions: //p' "$f"; done | tr ' ' '\n' | sed '/^$/d'; }
api_args() { local v; for v in $(api_versions "$1"); do printf -- '--api-versions\n%s\n' "$v"; done; }

lint_charts() {
  log "helm lint (v3 and v4)"
  local case name files args
  for bin in helm helm4; do
    check "$bin lint charts/bench (defaults + runner image)" "$bin" lint --strict "$COPY/charts/bench" -f "$RUNNER_VALUES"
    # No `helm lint` of the repository root: lint does not render subchart templates, so it passed
    # with charts/bench's scenarios stripped (and without a runner image); root_chart_renders checks it.
    while IFS='|' read -r name files; do
      [ -n "$files" ] || continue
      # helm lint has no --api-versions: overlays that need CRDs are only rendered (below).
      [ -z "$(api_versions "$files")" ] || { skip "$bin lint charts/bench with $name (needs API versions lint cannot take; rendered below)"; continue; }
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
  check "kubeconform schemas reject a wrong HTTPRoute field (Gateway API v1.4.0 CRDs)" kubeconform_rejects_bad_httproute
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

# The same for the Gateway API schemas: the traefik + traefik-gateway render with a parentRef field
# misspelled must be refused, or the Gateway and HTTPRoute validations above prove nothing.
kubeconform_rejects_bad_httproute() {
  local src="$WORK/render-helm-values_traefik_traefik-gateway.yaml" bad="$WORK/bad-httproute.yaml"
  grep -q '^kind: HTTPRoute$' "$src" && grep -q '^      sectionName: https$' "$src" || { echo "no HTTPRoute with a sectionName in $src"; return 1; }
  sed 's/^      sectionName: https$/      sektionName: https/' "$src" > "$bad"
  if kubeconform_file "$bad"; then echo "kubeconform accepted parentRefs[0].sektionName"; return 1; fi
}

bad_values() {
  log "bad values: each file must be rejected with its expected message"
  local f expect out count=0 bin
  for f in "$COPY"/charts/bench/tests/bad-values/*.yaml; do
    count=$((count + 1))
    expect=$(sed -n 's/^# expect: //p' "$f" | head -n 1)
    [ -n "$expect" ] || { fail "$(basename "$f"): no '# expect:' line"; continue; }
    for bin in helm helm4; do
      if out=$("$bin" template "$RELEASE" "$COPY/charts/bench" -n "$NAMESPACE" -f "$RUNNER_VALUES" -f "$f" 2>&1 >/dev/null); then
        fail "$bin rejects $(basename "$f")" "rendered without error"
      elif grep -qE -- "$expect" <<<"$out"; then
        pass "$bin rejects $(basename "$f")"
      else
        fail "$bin rejects $(basename "$f") with /$expect/" "$out"
      fi
    done
  done
  # A guard, not a check: fewer files than this means files went missing (counted as a failure only).
  [ "$count" -ge 20 ] || fail "bad-values suite has $count files (< 20)"
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
chart["dependencies"] = [d for d in chart["dependencies"] if d["name"] in ("k6-operator", "traefik", "nginx-ingress")]
assert [d["version"] for d in chart["dependencies"] if d["name"] == "k6-operator"] == ["4.5.0"]
yaml.safe_dump(chart, open(path, "w"), sort_keys=False)
PY
  # The controllers' charts cannot be downloaded here: empty stand-ins with their names and pinned
  # versions (and an appVersion of their own) show what the TestRun records about the controller's
  # chart, for a plain dependency (traefik) and an aliased one (nginx-ingress as nginx-inc).
  local stand_in
  for stand_in in traefik nginx-ingress; do
    mkdir -p "$dir/bench/charts/$stand_in"
    printf 'apiVersion: v2\nname: %s\nversion: %s\nappVersion: stand-in-app\n' "$stand_in" \
      "$(sed -n "/^  - name: $stand_in\$/{n;/alias:/n;s/^    version: //p}" "$CHART_SRC/Chart.yaml")" \
      > "$dir/bench/charts/$stand_in/Chart.yaml"
  done
  check "k6-operator chart in the module is 4.5.0" grep -q '^version: 4.5.0$' "$dir/bench/charts/k6-operator/Chart.yaml"
  for bin in helm helm4; do
    out="$WORK/with-k6-operator-$bin.yaml"
    if "$bin" template "$RELEASE" "$dir/bench" -n "$NAMESPACE" --kube-version "$KUBE_VERSION" \
        -f "$RUNNER_VALUES" -f "$COPY/values/traefik.yaml" > "$out" 2> "$out.err"; then
      pass "$bin template with the k6-operator subchart ($(grep -c '^kind:' "$out") objects)"
    else
      fail "$bin template with the k6-operator subchart" "$(cat "$out.err")"
    fi
  done
  out="$WORK/with-k6-operator-helm.yaml"
  check "with k6-operator: TestRun CRD, manager Deployment and TestRun hook rendered" \
    renders_operator_and_testrun "$out"
  check "kubeconform with the k6-operator subchart" kubeconform_file "$out"
  check "the runners' BENCH_ENVIRONMENT names the controller's chart from Chart.yaml and the preset's image tag" \
    records_controller_chart "$out" traefik-37.3.0 v3.6.12
  out="$WORK/with-k6-operator-nginx-inc.yaml"
  helm template "$RELEASE" "$dir/bench" -n "$NAMESPACE" --kube-version "$KUBE_VERSION" -f "$RUNNER_VALUES" \
    -f "$COPY/values/nginx-inc.yaml" > "$out" 2>&1 || true
  check "an aliased controller is recorded by its chart's name (nginx-ingress, not the alias nginx-inc)" \
    records_controller_chart "$out" "nginx-ingress-$(sed -n '/^  - name: nginx-ingress$/{n;n;s/^    version: //p}' "$CHART_SRC/Chart.yaml")" stand-in-app
  check "with -n $NAMESPACE the k6-operator renders no Namespace (helm --create-namespace owns it)" \
    no_namespace_objects "$WORK/with-k6-operator-helm.yaml"
  out="$WORK/with-k6-operator-default-ns.yaml"
  helm template "$RELEASE" "$dir/bench" -n default --kube-version "$KUBE_VERSION" -f "$RUNNER_VALUES" \
    -f "$COPY/values/traefik.yaml" > "$out" 2>&1 || true
  check "in namespace default the operator goes to $RELEASE-system, created once by this chart" \
    operator_in_system_namespace "$out"
  check "k6-operator's schema refuses a k6-operator.enabled key (why the switch is loadtest.operator.enabled)" \
    refuses_subchart_enabled "$dir/bench"
  for bin in helm helm4; do
    check "$bin: k6-operator.installCRDs=false renders no CRD (uninstall keeps them), the manager and the TestRun still" \
      crds_outside_release "$bin" "$dir/bench"
  done
  check "the README's command for the CRDs alone renders testruns.k6.io and privateloadzones.k6.io, no release annotations" \
    crds_alone "$dir/bench/charts/k6-operator"
}

# crds_outside_release BIN CHART: with k6-operator.installCRDs=false the release owns no CRD, so
# `helm uninstall` leaves the cluster's TestRuns alone; without the TestRun API the install is refused.
crds_outside_release() {
  local bin=$1 chart=$2 out
  if out=$("$bin" template "$RELEASE" "$chart" -n "$NAMESPACE" --kube-version "$KUBE_VERSION" -f "$RUNNER_VALUES" \
      --set k6-operator.installCRDs=false 2>&1 >/dev/null); then
    echo "rendered without the TestRun API"; return 1
  fi
  grep -q 'k6-operator.installCRDs=false: this release installs no k6 CRDs and the cluster has none' <<<"$out" || { echo "$out"; return 1; }
  out=$("$bin" template "$RELEASE" "$chart" -n "$NAMESPACE" --kube-version "$KUBE_VERSION" -f "$RUNNER_VALUES" \
    --set k6-operator.installCRDs=false --api-versions k6.io/v1alpha1/TestRun) || return 1
  ! grep -q '^kind: CustomResourceDefinition$' <<<"$out" || { echo "a CRD was rendered"; return 1; }
  grep -q 'image: "*ghcr.io/grafana/k6-operator:controller-v1.5.0' <<<"$out" || { echo "no k6-operator manager"; return 1; }
  grep -q '^kind: TestRun$' <<<"$out" || { echo "no TestRun"; return 1; }
}

# crds_alone CHART: the CRDs a cluster admin installs once (charts/bench/README.md, "Keeping the
# TestRun CRD"): both of them, valid, and with no Helm release annotations (no release owns them).
crds_alone() {
  local out="$WORK/k6-crds.yaml"
  helm template k6-crds "$1" --show-only templates/crds/testrun.yaml --show-only templates/crds/plz.yaml > "$out" || return 1
  [ "$(grep '^  name: ' "$out" | sort | tr '\n' ' ')" = "  name: privateloadzones.k6.io   name: testruns.k6.io " ] ||
    { grep '^  name: ' "$out"; return 1; }
  ! grep -q 'meta.helm.sh/release' "$out" || { echo "release annotations in the CRDs"; return 1; }
  kubeconform_file "$out"
}

# nginx-inc without GitHub (charts/bench/README.md, "Air-gapped: the nginx-inc preset"): Helm loads the
# nginx-ingress chart's schema `$ref`s from raw.githubusercontent.com when it validates values. The
# real chart cannot be downloaded here (the README has the run with it), so a stand-in nginx-ingress
# chart holds one such `$ref`, and every request goes to a proxy that is not there (the same outcome
# with or without internet). On v3 and v4: the plain render fails naming the host; the README's two
# steps work: bench's own schema checks the values with the controller off, then
# --skip-schema-validation renders the release.
nginx_inc_air_gapped() {
  log "nginx-inc without GitHub: the README's two steps (helm v3 and v4)"
  local dir="$WORK/air-gapped" bin
  mkdir -p "$dir"
  cp -r "$COPY/charts/bench" "$dir/bench"
  "$BENCH_CACHE/venv-chart/bin/python" - "$CHART_SRC/Chart.yaml" "$dir/bench" <<'PY'
import json, os, sys, yaml
source, chart_dir = sys.argv[1:]
deps = [d for d in yaml.safe_load(open(source))["dependencies"] if d["name"] == "nginx-ingress"]
chart = yaml.safe_load(open(f"{chart_dir}/Chart.yaml"))
chart["dependencies"] = deps
yaml.safe_dump(chart, open(f"{chart_dir}/Chart.yaml", "w"), sort_keys=False)
stand_in = f"{chart_dir}/charts/nginx-ingress"
os.makedirs(stand_in)
yaml.safe_dump({"apiVersion": "v2", "name": "nginx-ingress", "version": deps[0]["version"]}, open(f"{stand_in}/Chart.yaml", "w"))
ref = ("https://raw.githubusercontent.com/nginxinc/kubernetes-json-schema/master/v1.36.1/_definitions.json"
       "#/definitions/io.k8s.api.core.v1.ResourceRequirements")
schema = {"type": "object", "properties": {"controller": {"type": "object", "properties": {"resources": {"$ref": ref}}}}}
json.dump(schema, open(f"{stand_in}/values.schema.json", "w"))
PY
  for bin in helm helm4; do
    check "$bin: nginx-inc without GitHub: the plain render fails naming raw.githubusercontent.com" \
      air_gapped_render fails "$bin" "$dir/bench" "failing loading \"https://raw.githubusercontent.com/"
    check "$bin: nginx-inc without GitHub, step 1: bench's schema with the controller off refuses loadtest.rate=0, accepts the preset" \
      air_gapped_values_check "$bin" "$dir/bench"
    check "$bin: nginx-inc without GitHub, step 2: --skip-schema-validation renders the release and its TestRun" \
      air_gapped_render renders "$bin" "$dir/bench" '^kind: TestRun$' --skip-schema-validation
  done
}

# air_gapped_render fails|renders BIN CHART PATTERN [ARGS...]: the nginx-inc preset rendered with every
# HTTP(S) request sent to a port nothing listens on; PATTERN must be in the error or the output.
air_gapped_render() {
  local want=$1 bin=$2 chart=$3 pattern=$4 out rc=0; shift 4
  out=$(without_network "$bin" template "$RELEASE" "$chart" -n "$NAMESPACE" --kube-version "$KUBE_VERSION" \
    -f "$RUNNER_VALUES" -f "$COPY/values/nginx-inc.yaml" "$@" 2>&1) || rc=$?
  if [ "$want" = fails ] && [ "$rc" -eq 0 ]; then echo "rendered"; return 1; fi
  if [ "$want" = renders ] && [ "$rc" -ne 0 ]; then echo "$out"; return 1; fi
  grep -qE -- "$pattern" <<<"$out" || { echo "no /$pattern/ in:"; head -n 20 <<<"$out"; return 1; }
}

air_gapped_values_check() {
  local bin=$1 chart=$2 out off=(--set nginx-inc.enabled=false,controller=none,loadtest.target=clusterip)
  air_gapped_render renders "$bin" "$chart" '^kind: TestRun$' "${off[@]}" || return 1
  air_gapped_render fails "$bin" "$chart" "at '/loadtest/rate': minimum: got 0, want 1" "${off[@]}" --set loadtest.rate=0
}

# without_network CMD...: CMD with HTTP(S) proxies set to a free port on 127.0.0.1 (nothing listens).
without_network() {
  local proxy="http://127.0.0.1:$(free_port)"
  env HTTPS_PROXY="$proxy" https_proxy="$proxy" HTTP_PROXY="$proxy" http_proxy="$proxy" NO_PROXY= no_proxy= "$@"
}

renders_operator_and_testrun() {
  grep -q '^  name: testruns.k6.io$' "$1" || { echo "no testruns.k6.io CRD"; return 1; }
  grep -q 'image: "*ghcr.io/grafana/k6-operator:controller-v1.5.0' "$1" || { echo "no k6-operator v1.5.0 manager"; return 1; }
  grep -q '^kind: TestRun$' "$1" || { echo "no TestRun"; return 1; }
}

# records_controller_chart RENDER CHART VERSION: the TestRun's BENCH_ENVIRONMENT records them.
records_controller_chart() {
  "$BENCH_CACHE/venv-chart/bin/python" - "$@" <<'PY'
import json, sys, yaml
path, chart, version = sys.argv[1:]
runs = [d for d in yaml.safe_load_all(open(path)) if d and d.get("kind") == "TestRun"]
assert runs, open(path).read()[-2000:]
env = {e["name"]: e.get("value") for e in runs[0]["spec"]["runner"]["env"]}
info = json.loads(env["BENCH_ENVIRONMENT"])
print(f"BENCH_ENVIRONMENT: {info}")
assert info["controller_chart"] == chart and info["controller_version"] == version, (chart, version, info)
assert info["backend_replicas"] == 5, info
PY
}

no_namespace_objects() {
  ! grep -q '^kind: Namespace$' "$1" || { grep -A3 '^kind: Namespace$' "$1"; return 1; }
}

operator_in_system_namespace() {
  "$BENCH_CACHE/venv-chart/bin/python" - "$1" "$RELEASE-system" <<'PY'
import sys, yaml
path, system = sys.argv[1:]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
namespaces = [d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"]
assert namespaces == [system], f"Namespaces rendered: {namespaces}"
manager = [d for d in docs if d["kind"] == "Deployment" and "k6-operator" in d["metadata"]["name"]]
assert manager and manager[0]["metadata"]["namespace"] == system, [m["metadata"] for m in manager]
print(f"Namespace {system}, manager {manager[0]['metadata']['name']} in it")
PY
}

refuses_subchart_enabled() {
  local out
  if out=$(helm template "$RELEASE" "$1" -f "$RUNNER_VALUES" --set k6-operator.enabled=true 2>&1); then
    echo "accepted k6-operator.enabled"; return 1
  fi
  grep -q "additional properties 'enabled' not allowed" <<<"$out" || { echo "$out"; return 1; }
}

# The chart has no default runner image (no public image has k6 v0.51.0 + xk6-kubernetes v0.9.0): the
# defaults and every controller preset alone must be refused with a message naming the key and the
# command that builds one, and render once loadtest is off (the stack without a run).
runner_image_required() {
  log "runner image: refused without one, naming loadtest.runner.image.repository and make runner-image"
  local bin f out name
  for bin in helm helm4; do
    for f in "" "$COPY"/values/{traefik,ingress-nginx,nginx-inc,haproxy}.yaml; do
      name=${f:+values/$(basename "$f")}; name=${name:-defaults}
      if out=$("$bin" template "$RELEASE" "$COPY/charts/bench" -n "$NAMESPACE" ${f:+-f "$f"} 2>&1 >/dev/null); then
        fail "$bin refuses $name without a runner image" "rendered without error"
      elif grep -q 'loadtest.runner.image.repository is empty' <<<"$out" && grep -q 'make runner-image IMAGE=<registry/repo:tag>' <<<"$out"; then
        pass "$bin refuses $name without a runner image (names the key and make runner-image)"
      else
        fail "$bin refuses $name without a runner image, naming the key and make runner-image" "$out"
      fi
    done
    check "$bin renders the defaults with loadtest.enabled=false and no runner image" \
      "$bin" template "$RELEASE" "$COPY/charts/bench" -n "$NAMESPACE" --set loadtest.enabled=false
  done
  check "make runner-image: usage without IMAGE; build + push, build + kind load (stand-in docker and kind)" runner_image_target
}

runner_image_target() {
  grep -q '^runner-image:.*##' "$BENCH_ROOT/Makefile" || { echo "no runner-image target in Makefile"; return 1; }
  bash -n "$BENCH_ROOT/ci/tools/runner-image.sh"
  # without IMAGE it stops with the usage line, before looking for a builder
  local out
  if out=$(bash "$BENCH_ROOT/ci/tools/runner-image.sh" "" "" 2>&1); then echo "accepted an empty IMAGE"; return 1; fi
  grep -q 'usage: make runner-image IMAGE=' <<<"$out" || { echo "$out"; return 1; }
  # with stand-in docker and kind on PATH that record their calls: build + push, build + kind load,
  # and the --set flags it prints are the chart's two keys
  local fake="$WORK/fake-builders" calls
  mkdir -p "$fake"
  printf '#!/bin/sh\necho "$(basename "$0") $*" >> "%s/calls"\n' "$fake" > "$fake/docker"
  cp "$fake/docker" "$fake/kind"; chmod +x "$fake/docker" "$fake/kind"
  out=$(PATH="$fake:$PATH" BENCH_IMAGE_BUILDER=docker bash "$BENCH_ROOT/ci/tools/runner-image.sh" reg.example:5000/bench/k6:v1 "" 2>/dev/null) || return 1
  grep -q -- '--set loadtest.runner.image.repository=reg.example:5000/bench/k6,loadtest.runner.image.tag=v1$' <<<"$out" || { echo "$out"; return 1; }
  PATH="$fake:$PATH" BENCH_IMAGE_BUILDER=docker bash "$BENCH_ROOT/ci/tools/runner-image.sh" bench/k6:v1 kind >/dev/null 2>&1 || return 1
  calls=$(cat "$fake/calls")
  [ "$calls" = "docker build -t reg.example:5000/bench/k6:v1 -f $BENCH_ROOT/ci/k6/Dockerfile $BENCH_ROOT
docker push reg.example:5000/bench/k6:v1
docker build -t bench/k6:v1 -f $BENCH_ROOT/ci/k6/Dockerfile $BENCH_ROOT
kind load docker-image bench/k6:v1 --name kind" ] || { echo "calls: $calls"; return 1; }
}

# The repository root is a chart whose only dependency is charts/bench: rendering it (lint does not
# render subchart templates) must give the same objects as charts/bench with the same values, nested
# under `bench:`. The root .helmignore used to strip charts/bench/scenarios with the root's scenarios/.
root_chart_renders() {
  log "repository root chart renders like charts/bench"
  local nested="$WORK/root-values.yaml" bin
  "$BENCH_CACHE/venv-chart/bin/python" - "$RUNNER_VALUES" "$COPY/values/traefik.yaml" "$nested" <<'PY'
import sys, yaml
def merge(a, b):
    for k, v in b.items():
        a[k] = merge(a.get(k) or {}, v) if isinstance(v, dict) and isinstance(a.get(k), dict) else v
    return a
values = {}
for path in sys.argv[1:3]:
    merge(values, yaml.safe_load(open(path)) or {})
yaml.safe_dump({"bench": values}, open(sys.argv[3], "w"))
PY
  for bin in helm helm4; do
    check "$bin template of the repository root equals charts/bench (traefik preset)" \
      same_objects "$bin" "$nested"
  done
}

# same_objects BIN NESTED_VALUES: kind/name lists of both renders, compared.
same_objects() {
  local bin=$1 nested=$2 root chart
  root=$("$bin" template "$RELEASE" "$COPY" -n "$NAMESPACE" --kube-version "$KUBE_VERSION" -f "$nested") || return 1
  chart=$("$bin" template "$RELEASE" "$COPY/charts/bench" -n "$NAMESPACE" --kube-version "$KUBE_VERSION" \
    -f "$RUNNER_VALUES" -f "$COPY/values/traefik.yaml") || return 1
  diff <(kinds_and_names <<<"$root") <(kinds_and_names <<<"$chart") || return 1
  echo "$(kinds_and_names <<<"$root" | wc -l) objects in both"
  grep -q '^kind: TestRun$' <<<"$root" || { echo "no TestRun from the root"; return 1; }
}

kinds_and_names() {
  "$BENCH_CACHE/venv-chart/bin/python" -c '
import sys, yaml
for d in yaml.safe_load_all(sys.stdin):
    if d: print(d["kind"], d["metadata"]["name"])' | sort
}

# One contract between chart and scenarios: every value scenarios/lib/config.js refuses, helm
# refuses too. Each case feeds the same value to `helm template` (through values) and to real k6
# loading config.js (through BENCH_*); a valid value per variable is accepted by both, so the check
# can fail either way.
# name|values key|BENCH variable|value (JSON)|valid
PARITY_CASES='
duration 0s|loadtest.duration|BENCH_DURATION|"0s"|no
duration 0.0m|loadtest.duration|BENCH_DURATION|"0.0m"|no
duration 90s|loadtest.duration|BENCH_DURATION|"90s"|yes
timeout 0ms|loadtest.timeout|BENCH_TIMEOUT|"0ms"|no
timeout 1500ms|loadtest.timeout|BENCH_TIMEOUT|"1500ms"|yes
churn hold 0s|loadtest.churn.pattern|BENCH_CHURN_PATTERN|"5:0s"|no
churn 1001 replicas|loadtest.churn.pattern|BENCH_CHURN_PATTERN|"1001:1s"|no
churn second step 0ms|loadtest.churn.pattern|BENCH_CHURN_PATTERN|"5:12s,7:0ms"|no
churn 1000:1s,0:2s|loadtest.churn.pattern|BENCH_CHURN_PATTERN|"1000:1s,0:2s"|yes
pod-kill period 0s|loadtest.churn.podkillInterval|BENCH_PODKILL_INTERVAL|"0s"|no
roll period 0h|loadtest.churn.rollInterval|BENCH_ROLL_INTERVAL|"0h"|no
roll period 45s|loadtest.churn.rollInterval|BENCH_ROLL_INTERVAL|"45s"|yes
run id starting with -|loadtest.runId|BENCH_TESTID|"-run"|no
run id of 64 characters|loadtest.runId|BENCH_TESTID|"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"|no
run id with a space|loadtest.runId|BENCH_TESTID|"run 1"|no
run id run-2.b_c|loadtest.runId|BENCH_TESTID|"run-2.b_c"|yes
rate 0|loadtest.rate|BENCH_RATE|0|no
rate 1000001|loadtest.rate|BENCH_RATE|1000001|no
rate 50|loadtest.rate|BENCH_RATE|50|yes
connections 0|loadtest.connections|BENCH_CONNECTIONS|0|no
connections 100001|loadtest.connections|BENCH_CONNECTIONS|100001|no
max connections below connections|loadtest.maxConnections|BENCH_MAX_CONNECTIONS|50|no
max connections 100001|loadtest.maxConnections|BENCH_MAX_CONNECTIONS|100001|no
max connections 300|loadtest.maxConnections|BENCH_MAX_CONNECTIONS|300|yes
path without /|loadtest.path|BENCH_PATH|"bytes/1k"|no
path with #|loadtest.path|BENCH_PATH|"/a#b"|no
path /bytes/4k|loadtest.path|BENCH_PATH|"/bytes/4k"|yes
keep-alive maybe|loadtest.keepalive|BENCH_KEEPALIVE|"maybe"|no
environment key with a space|loadtest.environment|BENCH_ENVIRONMENT|{"Node Type": "c6i"}|no
environment node_type|loadtest.environment|BENCH_ENVIRONMENT|{"node_type": "c6i"}|yes
gateway name with a capital|routes.gateway.name|BENCH_GATEWAY_NAME|"Edge"|no
gateway name ending with -|routes.gateway.name|BENCH_GATEWAY_NAME|"edge-"|no
gateway name edge.gw-1|routes.gateway.name|BENCH_GATEWAY_NAME|"edge.gw-1"|yes
gateway namespace with a space|routes.gateway.namespace|BENCH_GATEWAY_NAMESPACE|"edge ns"|no
gateway namespace edge|routes.gateway.namespace|BENCH_GATEWAY_NAMESPACE|"edge"|yes
gateway listener with a dot|routes.gateway.listener.name|BENCH_GATEWAY_LISTENER|"web.tls"|no
gateway listener of 64 characters|routes.gateway.listener.name|BENCH_GATEWAY_LISTENER|"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"|no
gateway listener web-tls|routes.gateway.listener.name|BENCH_GATEWAY_LISTENER|"web-tls"|yes
gateway URL without a scheme|loadtest.gatewayUrl|BENCH_URL_GATEWAY|"bench.bench.svc"|no
gateway URL with a query|loadtest.gatewayUrl|BENCH_URL_GATEWAY|"https://bench.bench.svc/?a=1"|no
gateway URL https://bench.bench.svc:8443|loadtest.gatewayUrl|BENCH_URL_GATEWAY|"https://bench.bench.svc:8443"|yes
route kind grpcroute|loadtest.routes.kind|BENCH_ROUTE_KIND|"grpcroute"|no
route kind both|loadtest.routes.kind|BENCH_ROUTE_KIND|"both"|yes
route count 0|loadtest.routes.count|BENCH_ROUTE_COUNT|0|no
route count 10001|loadtest.routes.count|BENCH_ROUTE_COUNT|10001|no
route count 500|loadtest.routes.count|BENCH_ROUTE_COUNT|500|yes
route count "0" as text|loadtest.routes.count|BENCH_ROUTE_COUNT|"0"|no
route count "750" as text|loadtest.routes.count|BENCH_ROUTE_COUNT|"750"|yes
route interval 0s|loadtest.routes.interval|BENCH_ROUTE_INTERVAL|"0s"|no
route interval 500ms|loadtest.routes.interval|BENCH_ROUTE_INTERVAL|"500ms"|yes
route timeout 0ms|loadtest.routes.timeout|BENCH_ROUTE_TIMEOUT|"0ms"|no
route timeout 1m30s|loadtest.routes.timeout|BENCH_ROUTE_TIMEOUT|"1m30s"|yes
route domain with capitals|loadtest.routes.domain|BENCH_ROUTE_DOMAIN|"Routes.Example"|no
route domain routes.example.com|loadtest.routes.domain|BENCH_ROUTE_DOMAIN|"routes.example.com"|yes
route backend without a port|loadtest.routes.backends|BENCH_ROUTE_BACKENDS|"svc"|no
route backend port 70000|loadtest.routes.backends|BENCH_ROUTE_BACKENDS|"svc:70000"|no
route backend port 0|loadtest.routes.backends|BENCH_ROUTE_BACKENDS|"a:80,svc:0"|no
route backends a:80,b-headless:8080|loadtest.routes.backends|BENCH_ROUTE_BACKENDS|"a:80,b-headless:8080"|yes
routes listener Web_1|routes.gateway.routesListener.name|BENCH_GATEWAY_LISTENER|"Web_1"|no
routes listener plain-http|routes.gateway.routesListener.name|BENCH_GATEWAY_LISTENER|"plain-http"|yes
'

schema_scenario_parity() {
  log "chart/scenario contract: the same values through helm and through scenarios/lib/config.js (real k6)"
  local k6bin probe_dir="$WORK/parity" name key var value valid n=0 verdicts
  k6bin=$(bash "$BENCH_ROOT/ci/k6/build.sh")
  mkdir -p "$probe_dir"
  cp -r "$COPY/charts/bench/scenarios/lib" "$probe_dir/lib"
  # One k6 process for every case: loadConfig gets each case's variable as its environment (the
  # same object shape as __ENV) and the verdict is printed as "<n> ok" or "<n> refused: <message>".
  cat > "$probe_dir/probe.js" <<'JS'
import { loadConfig } from './lib/config.js';
JSON.parse(__ENV.PARITY_CASES).forEach(([n, name, value]) => {
  try {
    loadConfig({ [name]: value });
    console.log(`${n} ok`);
  } catch (e) {
    console.log(`${n} refused: ${e.message}`);
  }
});
export default function () {}
JS
  local cases_json="[]"
  while IFS='|' read -r name key var value valid; do
    [ -n "$name" ] || continue
    n=$((n + 1))
    cases_json=$(parity_add_case "$cases_json" "$n" "$var" "$value")
  done <<<"$PARITY_CASES"
  verdicts=$(cd "$probe_dir" && "$k6bin" inspect --log-format raw -e PARITY_CASES="$cases_json" probe.js 2>&1 >/dev/null) ||
    { fail "parity: k6 loads the probe" "$verdicts"; return; }
  n=0
  while IFS='|' read -r name key var value valid; do
    [ -n "$name" ] || continue
    n=$((n + 1))
    parity_values "$key" "$value" > "$probe_dir/values-$n.yaml"
    check "parity: $name: helm $( [ "$valid" = yes ] && echo accepts || echo refuses ) it" \
      helm_verdict "$valid" "$probe_dir/values-$n.yaml"
    check "parity: $name: the scenarios $( [ "$valid" = yes ] && echo accept || echo refuse ) it" \
      k6_verdict "$valid" "$(grep -E "^$n (ok|refused)" <<<"$verdicts" | head -n 1)"
  done <<<"$PARITY_CASES"
  # A guard, not a check: fewer cases means the table lost lines (counted as a failure only).
  [ "$n" -ge 25 ] || fail "parity cases: $n (< 25)"
}

# parity_add_case JSON N VAR VALUE_JSON: JSON with [N, VAR, the text the chart would put in VAR] added.
parity_add_case() {
  "$BENCH_CACHE/venv-chart/bin/python" -c '
import json, sys
cases, n, var, value = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
cases.append([n, var, json.dumps(value) if isinstance(value, dict) else str(value)])
print(json.dumps(cases))' "$@"
}

# parity_values KEY JSON: a values file setting the dotted KEY to the JSON value.
parity_values() {
  "$BENCH_CACHE/venv-chart/bin/python" -c '
import json, sys, yaml
keys, value = sys.argv[1].split("."), json.loads(sys.argv[2])
for k in reversed(keys):
    value = {k: value}
print(yaml.safe_dump(value))' "$1" "$2"
}

helm_verdict() {
  local valid=$1 values=$2 out bin
  for bin in helm helm4; do
    if out=$("$bin" template "$RELEASE" "$COPY/charts/bench" -n "$NAMESPACE" -f "$RUNNER_VALUES" -f "$values" 2>&1 >/dev/null); then
      [ "$valid" = yes ] || { echo "$bin accepted $(cat "$values")"; return 1; }
    else
      [ "$valid" = no ] || { echo "$bin refused: $out"; return 1; }
    fi
  done
}

# k6_verdict VALID "N ok" | "N refused: message"
k6_verdict() {
  case $2 in
    *" ok") [ "$1" = yes ] || { echo "config.js accepted it"; return 1; } ;;
    *" refused: "*) [ "$1" = no ] || { echo "config.js refused it: ${2#* refused: }"; return 1; } ;;
    *) echo "no verdict from k6: '$2'"; return 1 ;;
  esac
}

# bench.controllerCharts (the aliased controllers' real chart names, which helm replaces by the alias
# when it loads the chart) must match Chart.yaml's dependencies.
controller_chart_names() {
  "$BENCH_CACHE/venv-chart/bin/python" - "$CHART_SRC/Chart.yaml" "$CHART_SRC/templates/_helpers.tpl" <<'PY'
import re, sys, yaml
deps = {d.get("alias", d["name"]): d["name"] for d in yaml.safe_load(open(sys.argv[1]))["dependencies"]}
text = open(sys.argv[2]).read()
block = re.search(r'define "bench.controllerCharts" -}}\n(.*?)\n{{- end }}', text, re.S).group(1)
mapping = yaml.safe_load(block)
for controller, chart in mapping.items():
    assert deps.get(controller) == chart, f"{controller}: helper says {chart}, Chart.yaml says {deps.get(controller)}"
print(mapping)
PY
}

# The e2e's Traefik (ci/e2e/manifests/traefik.yaml, a stand-in for the traefik subchart, which
# cannot be downloaded here) must run the preset's configuration: every argument the preset adds,
# its global settings and its metrics port, filled in from values/traefik.yaml. The manifest is
# rendered the way ci/e2e/lib.sh applies it and compared with the preset.
e2e_traefik_matches_preset() {
  local rendered="$WORK/e2e-traefik.yaml"
  python3 "$BENCH_ROOT/ci/e2e/traefik-preset.py" "$BENCH_ROOT/values/traefik.yaml" \
    "$BENCH_ROOT/ci/e2e/manifests/traefik.yaml" > "$rendered" || return 1
  python3 "$BENCH_ROOT/ci/e2e/traefik-preset.py" "$BENCH_ROOT/values/traefik.yaml" \
    "$BENCH_ROOT/ci/e2e/manifests/prometheus.yaml" > "$WORK/e2e-prometheus.yaml" || return 1
  "$BENCH_CACHE/venv-chart/bin/python" - "$BENCH_ROOT/values/traefik.yaml" "$rendered" "$WORK/e2e-prometheus.yaml" <<'PY'
import sys, yaml
preset = yaml.safe_load(open(sys.argv[1]))["traefik"]
docs = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d]
deployment = next(d for d in docs if d["kind"] == "Deployment")
container = deployment["spec"]["template"]["spec"]["containers"][0]
args = container["args"]
missing = [a for a in preset.get("additionalArguments", []) if a not in args]
assert not missing, f"preset arguments missing from the e2e Traefik: {missing}"
for key, value in preset.get("global", {}).items():
    want = f"--global.{key}={str(value).lower()}"
    assert want in args, f"{want} missing"
port = preset["ports"]["metrics"]["port"]
assert f"--entryPoints.metrics.address=:{port}" in args, args
assert {"name": "metrics", "containerPort": port} in container["ports"], container["ports"]
metrics_service = next(d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "traefik-metrics")
assert metrics_service["spec"]["ports"][0]["port"] == port
assert f":{port}'" in open(sys.argv[3]).read() or f":{port}]" in open(sys.argv[3]).read(), "Prometheus scrapes another port"
assert not [a for a in args if "BENCH_TRAEFIK" in str(a)], "unfilled placeholder"
# the one difference, on purpose: the preset runs on the host network, which on this machine would
# bind Traefik on the host's external interface (test traffic stays on loopback and pod networks)
assert preset.get("hostNetwork") is True and not deployment["spec"]["template"]["spec"].get("hostNetwork")
print(f"{len(preset.get('additionalArguments', []))} preset arguments, metrics :{port}, global settings: all in the e2e Traefik")
PY
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
  local files=("$CHART_SRC/values.yaml" "$CHART_SRC/Chart.yaml" "$CHART_SRC"/ci/*.yaml "$CHART_SRC"/tests/*.yaml
    "$BENCH_ROOT"/values/*.yaml)
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
  RUNNER_VALUES="$WORK/runner-image-values.yaml"
  write_runner_values "$RUNNER_VALUES"
  log "rendering a copy of charts/bench without its dependencies (they cannot be downloaded here)"
  lint_charts
  run_unittests
  render_and_validate
  runner_image_required
  root_chart_renders
  bad_values
  scenarios_from_testrun
  schema_scenario_parity
  with_k6_operator_subchart
  nginx_inc_air_gapped
  chart_lock
  check "bench.controllerCharts matches Chart.yaml's aliases" controller_chart_names
  check "the e2e Traefik runs the traefik preset's arguments and ports" e2e_traefik_matches_preset
  lint_yaml
  log "chart tests took $((SECONDS - t0)) s"
  echo "chart: $passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
}

main "$@"
