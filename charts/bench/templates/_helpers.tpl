{{/* Names, labels and the shared computations of the bench chart. */}}

{{/* bench.name: the chart name, or nameOverride. */}}
{{- define "bench.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* bench.fullname: prefix of every resource: the release name when it contains the chart name
(release "bench" -> "bench", so the backend Deployment is "bench-backend"), else release-chart. */}}
{{- define "bench.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* bench.chart: chart name and version for the helm.sh/chart label. */}}
{{- define "bench.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* bench.selectorLabels: stable labels for selectors (no version, no helm.sh/chart). */}}
{{- define "bench.selectorLabels" -}}
app.kubernetes.io/name: {{ include "bench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* bench.labels: every label of every resource. */}}
{{- define "bench.labels" -}}
helm.sh/chart: {{ include "bench.chart" . }}
{{ include "bench.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: bench
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* bench.backend.fullname: name of the backend Deployment and its ClusterIP Service. */}}
{{- define "bench.backend.fullname" -}}
{{- printf "%s-backend" (include "bench.fullname" .) }}
{{- end }}

{{/* bench.backend.selectorLabels: the pods the Services select and the churn acts on. */}}
{{- define "bench.backend.selectorLabels" -}}
{{ include "bench.selectorLabels" . }}
app.kubernetes.io/component: backend
{{- end }}

{{/* bench.runId: the run id (k6 testid tag, BENCH_TESTID, the TestRun's bench/testid label).
loadtest.runId as given, else a new one for this render: <release>-r<revision>-<UTC time>, e.g.
bench-r3-20261123t173000z, so every install and upgrade starts a run whose series never mix with an
earlier one (the time tells apart a reinstall that starts again at revision 1). Computed once per
render: the first call stores it in .Values.loadtest (one values map is shared by all of this
chart's templates), so the TestRun, the runner env and NOTES carry the same id; _runIdChecked there
marks the id as generated or looked up once (validate.yaml, the TestRun and NOTES all ask for it). A given id that a
TestRun in the namespace already carries (an upgrade with --reuse-values) is refused: its series
would mix with the earlier run's (lookup answers on install/upgrade, not in helm template). */}}
{{- define "bench.runId" -}}
{{- $lt := .Values.loadtest }}
{{- if not $lt.runId }}
{{- $release := .Release.Name | trunc 36 | trimSuffix "-" }}
{{- $_ := set $lt "runId" (printf "%s-r%d-%s" $release (int .Release.Revision) (dateInZone "20060102t150405z" now "UTC")) }}
{{- $_ := set $lt "_runIdChecked" true }}
{{- else if not $lt._runIdChecked }}
{{- range (lookup "k6.io/v1alpha1" "TestRun" .Release.Namespace "").items }}
{{- if eq (dig "metadata" "labels" "bench/testid" "" .) $lt.runId }}
{{- fail (printf "loadtest.runId %q was already used by TestRun %s/%s: this run's series would mix with that run's in Prometheus. Give a new id, or leave loadtest.runId empty for a generated one" $lt.runId .metadata.namespace .metadata.name) }}
{{- end }}
{{- end }}
{{- $_ := set $lt "_runIdChecked" true }}
{{- end }}
{{- $lt.runId }}
{{- end }}

{{/* bench.settingText VALUE: a scenario setting's value as text: bench.text, or "" when unset (null),
which the scenarios read as their own default. */}}
{{- define "bench.settingText" -}}
{{- if not (kindIs "invalid" .) }}{{ include "bench.text" . }}{{ end }}
{{- end }}

{{/* bench.loadtest.effective (dict "root" $ "key" VALUES_KEY "value" VALUE): what the scenario will use
for a setting the chart itself needs (the VU ceiling, NOTES): VALUE when set, else the entry script's
own default (bench.loadtest.scriptDefault), else the contract's default of the variable whose
valuesKey is KEY (scenarios/contract.json). */}}
{{- define "bench.loadtest.effective" -}}
{{- $text := include "bench.settingText" .value }}
{{- if $text }}{{ $text }}{{ else }}
{{- $own := include "bench.loadtest.scriptDefault" (dict "root" .root "key" .key) }}
{{- if $own }}{{ $own }}{{ else }}
{{- range (fromJson (.root.Files.Get "scenarios/contract.json")).variables.list }}{{ if eq (toString .valuesKey) $.key }}{{ .default }}{{ end }}{{ end }}
{{- end }}
{{- end }}
{{- end }}

{{/* bench.loadtest.scriptDefault (dict "root" $ "key" VALUES_KEY): the default the entry script
(scenarios/<loadtest.scenario>.js) gives the variable of KEY in its experiment({defaults: {...}})
as a literal (BENCH_RATE: '100'), else "". Read from the script's text: a default computed at run
time is not known here, and the scenario applies it all the same. */}}
{{- define "bench.loadtest.scriptDefault" -}}
{{- $script := .root.Files.Get (printf "scenarios/%s.js" .root.Values.loadtest.scenario) }}
{{- $defaults := regexFind "defaults:\\s*\\{[^}]*\\}" $script }}
{{- range (fromJson (.root.Files.Get "scenarios/contract.json")).variables.list }}{{ if eq (toString .valuesKey) $.key }}
{{- $literal := printf "\\b%s:\\s*['\"]([^'\"]+)['\"]" .name }}
{{- if regexMatch $literal $defaults }}{{ regexReplaceAll (printf "(?s)^.*%s.*$" $literal) $defaults "${1}" }}{{ end }}
{{- end }}{{ end }}
{{- end }}

{{/* bench.text VALUE: a value as text for an env var or argument. Helm reads a values file's numbers as
float64, which print as 1e+06 from 1,000,000 up: whole numbers print as integers (%d). */}}
{{- define "bench.text" -}}
{{- if and (or (kindIs "float64" .) (kindIs "float32" .)) (eq (float64 .) (float64 (int64 .))) }}
{{- printf "%d" (int64 .) }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{/* bench.image: "repository:tag" of an image dict; an empty tag leaves repository as given (it may
carry its own tag or @digest). */}}
{{- define "bench.image" -}}
{{- if toString .tag }}
{{- printf "%s:%s" .repository (toString .tag) }}
{{- else }}
{{- .repository }}
{{- end }}
{{- end }}

{{/* bench.controllerCharts: controller name (the dependency's alias or name in Chart.yaml) -> the
chart's own name; ci/test/chart/test_repository.py checks it against Chart.yaml. */}}
{{- define "bench.controllerCharts" -}}
ingress-nginx: ingress-nginx
nginx-inc: nginx-ingress
traefik: traefik
haproxy: kubernetes-ingress
envoy-gateway: gateway-helm
nginx-gateway-fabric: nginx-gateway-fabric
istio: istiod
{{- end }}

{{/* bench.controllerKeys: the controller names, which are also their subchart value keys. */}}
{{- define "bench.controllerKeys" -}}
ingress-nginx nginx-inc traefik haproxy envoy-gateway nginx-gateway-fabric istio
{{- end }}

{{/* bench.ingressClassName: routes.ingress.className, or the default class of the controller chart;
empty for the Gateway API controllers, which get no Ingress here. */}}
{{- define "bench.ingressClassName" -}}
{{- $defaults := dict "ingress-nginx" "nginx" "nginx-inc" "nginx" "traefik" "traefik" "haproxy" "haproxy" }}
{{- default (get $defaults .Values.controller) .Values.routes.ingress.className }}
{{- end }}

{{/* bench.subchartFullname (list $ NAME [MAXLEN]): the fullname a subchart (chart or alias NAME)
gives its resources, following the usual helper: fullnameOverride, else the release name when it
contains NAME, else release-NAME, truncated to MAXLEN (63; kube-prometheus-stack uses 26). */}}
{{- define "bench.subchartFullname" -}}
{{- $root := index . 0 }}
{{- $name := index . 1 }}
{{- $max := 63 }}
{{- if gt (len .) 2 }}{{ $max = index . 2 }}{{ end }}
{{- $values := index $root.Values $name | default dict }}
{{- if $values.fullnameOverride }}
{{- $values.fullnameOverride | trunc $max | trimSuffix "-" }}
{{- else }}
{{- $short := default $name $values.nameOverride }}
{{- if contains $short $root.Release.Name }}
{{- $root.Release.Name | trunc $max | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" $root.Release.Name $short | trunc $max | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* bench.controllerService: the Service of the selected controller subchart. */}}
{{- define "bench.controllerService" -}}
{{- $c := .Values.controller }}
{{- $full := include "bench.subchartFullname" (list . $c) }}
{{- if eq $c "ingress-nginx" }}{{ printf "%s-controller" $full | trunc 63 | trimSuffix "-" }}
{{- else if eq $c "nginx-inc" }}{{ printf "%s-controller" $full | trunc 63 | trimSuffix "-" }}
{{- else }}{{ $full }}
{{- end }}
{{- end }}

{{/* bench.url.ingress: base URL of the ingress path: loadtest.ingressUrl, else the Service of an
ingress controller's subchart. Empty for the Gateway API controllers (Envoy Gateway, NGINX Gateway
Fabric, Istio): their charts make no Service that serves Ingresses (the control plane's Services are
its xDS, agent or webhook ports, and istiod's Gateway Envoy happens to be named <release>-istio), so
a name built here would send the ingress path to the wrong place. `paths` then compares the Gateway
with the Service paths, and loadtest.target ingress is refused (validate.yaml). */}}
{{- define "bench.url.ingress" -}}
{{- if .Values.loadtest.ingressUrl }}
{{- .Values.loadtest.ingressUrl | trimSuffix "/" }}
{{- else if has .Values.controller (list "ingress-nginx" "nginx-inc" "traefik" "haproxy") }}
{{- $scheme := ternary "https" "http" .Values.routes.ingress.tls.enabled }}
{{- printf "%s://%s.%s.svc" $scheme (include "bench.controllerService" .) .Release.Namespace }}
{{- end }}
{{- end }}

{{- define "bench.url.clusterip" -}}
{{- printf "http://%s.%s.svc" (include "bench.backend.fullname" .) .Release.Namespace }}
{{- end }}

{{/* The node port is reached on the runner's own node: NODE_IP comes from the downward API. */}}
{{- define "bench.url.nodeport" -}}
{{- printf "http://$(NODE_IP):%d" (int .Values.routes.nodePort.port) }}
{{- end }}

{{- define "bench.url.pod" -}}
{{- printf "http://%s-headless.%s.svc:%d" (include "bench.backend.fullname" .) .Release.Namespace (int .Values.backend.port) }}
{{- end }}

{{/* bench.remoteWriteUrl: monitoring.remoteWrite.url, else this release's kube-prometheus-stack
Prometheus (its fullname helper truncates to 26 characters), else empty. */}}
{{- define "bench.remoteWriteUrl" -}}
{{- if .Values.monitoring.remoteWrite.url }}
{{- .Values.monitoring.remoteWrite.url }}
{{- else if (index .Values "kube-prometheus-stack").enabled }}
{{- $full := include "bench.subchartFullname" (list . "kube-prometheus-stack" 26) }}
{{- printf "http://%s-prometheus.%s.svc:9090/api/v1/write" $full .Release.Namespace }}
{{- end }}
{{- end }}

{{/* bench.scenarioKey PATH: ConfigMap key of a scenario file. Keys cannot hold '/', so
scenarios/lib/x.js becomes lib--x.js; the volume's items map it back to lib/x.js. */}}
{{- define "bench.scenarioKey" -}}
{{- trimPrefix "scenarios/" . | replace "/" "--" }}
{{- end }}

{{/* bench.containerSecurityContext: non-root, read-only root filesystem, no privileges. */}}
{{- define "bench.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end }}

{{/* bench.loadtest.environment: JSON for BENCH_ENVIRONMENT, what the run ran on, so a summary
(settings.environment) and its report say how to reproduce it: the controller's chart from
Chart.yaml and, when its subchart is present, its app version (not for an externalController);
backend replicas; runner parallelism and CPU; node placement of runners and backend; then
loadtest.environment. */}}
{{- define "bench.loadtest.environment" -}}
{{- $lt := .Values.loadtest }}
{{- $env := dict "backend_replicas" (int .Values.backend.replicas) "runner_parallelism" (int $lt.parallelism) }}
{{- $resources := $lt.runner.resources | default dict }}
{{- $_ := set $env "runner_cpu" (toString (dig "limits" "cpu" (dig "requests" "cpu" "unset" $resources) $resources)) }}
{{- $_ := set $env "runner_nodes" (include "bench.nodeSelectorText" $lt.runner.nodeSelector) }}
{{- $_ := set $env "backend_nodes" (include "bench.nodeSelectorText" .Values.backend.nodeSelector) }}
{{- if eq $lt.scenario "long-lived" }}
{{- /* the stream backend is bench's own build: which one served the streams */}}
{{- $_ := set $env "stream_image" (include "bench.image" $lt.longLived.image) }}
{{- end }}
{{- if not .Values.externalController }}
{{- /* Helm renames an aliased dependency (and its subchart) to the alias when it loads the chart,
so the chart's real name comes from bench.controllerCharts; the version from the loaded subchart. */}}
{{- with (get (.Subcharts | default dict) .Values.controller) }}
{{- $chart := get (include "bench.controllerCharts" $ | fromYaml) $.Values.controller }}
{{- $_ := set $env "controller_chart" (printf "%s-%s" $chart .Chart.Version) }}
{{- /* the image the preset runs (traefik: image.tag, ingress controllers: controller.image.tag, Envoy
Gateway: deployment.envoyGateway.image.tag, NGINX Gateway Fabric: nginxGateway.image.tag), else the
chart's appVersion: the traefik preset pins a newer patch than its chart's appVersion */}}
{{- $values := index $.Values $.Values.controller }}
{{- $tag := dig "image" "tag" (dig "controller" "image" "tag" (dig "deployment" "envoyGateway" "image" "tag" (dig "nginxGateway" "image" "tag" "" $values) $values) $values) $values }}
{{- $_ := set $env "controller_version" (toString ($tag | default .Chart.AppVersion)) }}
{{- end }}
{{- end }}
{{- if eq $lt.scenario "controller-restart" }}
{{- /* what controller-restart deletes: the controller, or its control plane (and which object) */}}
{{- $_ := set $env "controller_restart_pods" (trim (printf "%s %s" $lt.controllerRestart.pods (include "bench.placeholders" (list $lt.controllerRestart.controlPlane .)))) }}
{{- end }}
{{- if eq $lt.scenario "dataplane-scale" }}
{{- /* what dataplane-scale scales */}}
{{- $_ := set $env "dataplane_scaled" (printf "Deployment %s/%s" (include "bench.dataplaneScale.namespace" .) (include "bench.dataplaneScale.deployment" .)) }}
{{- $via := include "bench.dataplaneScale.via" . | fromJson }}
{{- if $via.kind }}
{{- $_ := set $env "dataplane_scaled" (printf "%s through %s %s/%s %s" $env.dataplane_scaled $via.kind (include "bench.dataplaneScale.parameters.namespace" .) (include "bench.dataplaneScale.parameters.name" .) $via.replicas) }}
{{- end }}
{{- end }}
{{- if eq $lt.scenario "controller-upgrade" }}
{{- /* what controller-upgrade rolls */}}
{{- $_ := set $env "controller_upgraded" (printf "%s %s/%s" $lt.controllerUpgrade.kind (include "bench.controllerUpgrade.namespace" .) (include "bench.controllerUpgrade.name" .)) }}
{{- end }}
{{- /* toJson escapes < > & as \u003c \u003e \u0026 (JSON alike): written plainly, as the initializer's
line takes no backslash but the one before a quote (loadtest/_shell.tpl) */}}
{{- toJson (mergeOverwrite $env ($lt.environment | default dict)) | replace "\\u003c" "<" | replace "\\u003e" ">" | replace "\\u0026" "&" }}
{{- end }}

{{/* bench.nodeSelectorText MAP: "key=value,..." sorted, or "any" for an empty node selector. */}}
{{- define "bench.nodeSelectorText" -}}
{{- $pairs := list }}
{{- range $k, $v := . }}{{ $pairs = append $pairs (printf "%s=%s" $k $v) }}{{ end }}
{{- $pairs | sortAlpha | join "," | default "any" }}
{{- end }}

{{/* bench.placeholders TEXT ROOT: TEXT with the literal placeholders {{ .Release.Name }} and
{{ .Release.Namespace }} replaced (never evaluated: no tpl on values). */}}
{{- define "bench.placeholders" -}}
{{- $text := toString (index . 0) }}
{{- $root := index . 1 }}
{{- $text | replace "{{ .Release.Name }}" $root.Release.Name | replace "{{ .Release.Namespace }}" $root.Release.Namespace }}
{{- end }}

{{/* bench.controllerRestart.namespace: where the controller's pods are (loadtest.controllerRestart.namespace,
empty = the release namespace). */}}
{{- define "bench.controllerRestart.namespace" -}}
{{- .Values.loadtest.controllerRestart.namespace | default .Release.Namespace }}
{{- end }}

{{/* bench.controllerRestart.selector: loadtest.controllerRestart.selector, placeholders replaced, as
JSON; fails on a value that is no label value once replaced. */}}
{{- define "bench.controllerRestart.selector" -}}
{{- $selector := dict }}
{{- range $key, $value := .Values.loadtest.controllerRestart.selector }}
{{- $text := include "bench.placeholders" (list $value $) }}
{{- if or (contains "{{" $text) (contains "}}" $text) }}
{{- fail (printf "loadtest.controllerRestart.selector.%s %q: templates are not evaluated here; the only placeholders are {{ .Release.Name }} and {{ .Release.Namespace }}, written exactly so" $key $text) }}
{{- end }}
{{- if not (and (le (len $text) 63) (regexMatch "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$" $text)) }}
{{- fail (printf "loadtest.controllerRestart.selector.%s %q: expected a label value (at most 63 letters, digits, - _ ., starting and ending with a letter or digit)" $key $text) }}
{{- end }}
{{- $_ := set $selector $key $text }}
{{- end }}
{{- toJson $selector }}
{{- end }}

{{/* bench.dataplaneScale.namespace: the data plane's namespace (loadtest.dataplaneScale.namespace,
empty = the release namespace). */}}
{{- define "bench.dataplaneScale.namespace" -}}
{{- .Values.loadtest.dataplaneScale.namespace | default .Release.Namespace }}
{{- end }}

{{/* bench.dataplaneScale.deployment: loadtest.dataplaneScale.deployment, placeholders replaced and
checked (bench.workloadName). */}}
{{- define "bench.dataplaneScale.deployment" -}}
{{- include "bench.workloadName" (dict "root" . "key" "dataplaneScale" "field" "deployment" "scenario" "dataplane-scale"
  "what" "the data plane's Deployment" "kind" "Deployment"
  "empty" "dataplane-scale scales that Deployment, so name the controller's data-plane Deployment (e.g. traefik)") }}
{{- end }}

{{/* bench.dataplaneScale.via: how dataplane-scale sets the replicas (loadtest.dataplaneScale.via), as
JSON: {} for the Deployment itself, else the entry of dataplaneVia in scenarios/contract.json (kind,
version, replicas: the field) with the apiGroup and resource of its runnerRole rule (target
parameters). */}}
{{- define "bench.dataplaneScale.via" -}}
{{- $via := .Values.loadtest.dataplaneScale.via | default "deployment" }}
{{- if eq $via "deployment" }}{}
{{- else }}
{{- $contract := .Files.Get "scenarios/contract.json" | fromJson }}
{{- $entry := get (get $contract "dataplaneVia" | default dict) $via }}
{{- range (get $contract "runnerRole" | default dict).rules }}
{{- if and $entry (eq .target "parameters") (eq (.via | default "") $via) }}
{{- $_ := set $entry "apiGroup" .apiGroup }}
{{- $_ := set $entry "resource" .resource }}
{{- end }}
{{- end }}
{{- if not (and $entry $entry.resource) }}
{{- fail (printf "loadtest.dataplaneScale.via %q: scenarios/contract.json has no dataplaneVia entry and runnerRole rule (target parameters) for it; allowed: deployment, %s" $via (without (keys (get $contract "dataplaneVia" | default dict)) "about" | sortAlpha | join ", ")) }}
{{- end }}
{{- toJson $entry }}
{{- end }}
{{- end }}

{{/* bench.dataplaneScale.parameters.namespace: the namespace of the object `via` names
(loadtest.dataplaneScale.parameters.namespace, empty = the data plane's). */}}
{{- define "bench.dataplaneScale.parameters.namespace" -}}
{{- .Values.loadtest.dataplaneScale.parameters.namespace | default (include "bench.dataplaneScale.namespace" .) }}
{{- end }}

{{/* bench.dataplaneScale.parameters.name: loadtest.dataplaneScale.parameters.name, placeholders replaced
and checked (bench.workloadName). */}}
{{- define "bench.dataplaneScale.parameters.name" -}}
{{- $via := include "bench.dataplaneScale.via" . | fromJson }}
{{- include "bench.workloadName" (dict "root" . "key" "dataplaneScale" "sub" "parameters" "field" "name" "scenario" "dataplane-scale"
  "what" (printf "the %s the steps set" $via.kind) "kind" $via.kind
  "empty" (printf "with via %s the steps set the replicas of that %s, so name it (NGINX Gateway Fabric's chart: <release>-proxy-config)" .Values.loadtest.dataplaneScale.via $via.kind)) }}
{{- end }}

{{/* bench.controllerUpgrade.namespace: the namespace of the workload controller-upgrade rolls
(loadtest.controllerUpgrade.namespace, empty = the release namespace). */}}
{{- define "bench.controllerUpgrade.namespace" -}}
{{- .Values.loadtest.controllerUpgrade.namespace | default .Release.Namespace }}
{{- end }}

{{/* bench.controllerUpgrade.name: loadtest.controllerUpgrade.name, placeholders replaced and checked
(bench.workloadName). */}}
{{- define "bench.controllerUpgrade.name" -}}
{{- include "bench.workloadName" (dict "root" . "key" "controllerUpgrade" "field" "name" "scenario" "controller-upgrade"
  "what" "the workload that rolls" "kind" .Values.loadtest.controllerUpgrade.kind
  "empty" "controller-upgrade rolls that workload, so name the controller's Deployment or DaemonSet (e.g. traefik)") }}
{{- end }}

{{/* bench.controllerUpgrade.container: loadtest.controllerUpgrade.container with the placeholders
{{ .Release.Name }} and {{ .Release.Namespace }} replaced (Traefik's chart names its container after
its fullname, <release>-traefik), checked as a container name (a DNS label); empty when unset. */}}
{{- define "bench.controllerUpgrade.container" -}}
{{- $value := .Values.loadtest.controllerUpgrade.container }}
{{- if $value }}
{{- $text := include "bench.placeholders" (list $value .) }}
{{- if or (contains "{{" $text) (contains "}}" $text) }}
{{- fail (printf "loadtest.controllerUpgrade.container %q: templates are not evaluated here; the only placeholders are {{ .Release.Name }} and {{ .Release.Namespace }}, written exactly so" $text) }}
{{- end }}
{{- if not (and (le (len $text) 63) (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $text)) }}
{{- fail (printf "loadtest.controllerUpgrade.container %q: expected a container name (lowercase letters, digits and -, at most 63, starting and ending with a letter or digit), as the controller's chart names it (the presets in values/ give it)" $text) }}
{{- end }}
{{- $text }}
{{- end }}
{{- end }}

{{/* bench.workloadName (dict "root" $ "key" K "field" F "scenario" S "what" W "kind" KIND "empty" E):
loadtest.K.F (with "sub" SUB: loadtest.K.SUB.F) with the placeholders {{ .Release.Name }}, {{ .Release.Namespace }} and
{{ include "bench.gateway.name" . }} replaced (as monitoring.podMonitors); fails where scenario S does
not apply (loadtest.K.applies false), when empty (E says why it is needed), and on a result that is no
object name (every template that names the object goes through here: the checks are made whichever
renders first). */}}
{{- define "bench.workloadName" -}}
{{- $root := .root }}
{{- $v := index $root.Values.loadtest .key }}
{{- $node := $v }}
{{- $key := printf "loadtest.%s.%s" .key .field }}
{{- if .sub }}
{{- $node = index $v .sub }}
{{- $key = printf "loadtest.%s.%s.%s" .key .sub .field }}
{{- end }}
{{- $value := index $node .field }}
{{- if not $v.applies }}
{{- fail (printf "loadtest.scenario %s does not apply to controller %s: %s (loadtest.%s.applies is false; the presets in values/ set it, with %s, where it applies)" .scenario $root.Values.controller $v.reason .key .what) }}
{{- end }}
{{- if not $value }}
{{- fail (printf "%s is empty: %s; the presets in values/ set it where it applies" $key .empty) }}
{{- end }}
{{- $text := include "bench.placeholders" (list $value $root) | replace "{{ include \"bench.gateway.name\" . }}" (include "bench.gateway.name" $root) }}
{{- if or (contains "{{" $text) (contains "}}" $text) }}
{{- fail (printf "%s %q: templates are not evaluated here; the only placeholders are {{ .Release.Name }}, {{ .Release.Namespace }} and {{ include \"bench.gateway.name\" . }}, written exactly so" $key $text) }}
{{- end }}
{{- if not (and (le (len $text) 253) (regexMatch "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$" $text)) }}
{{- fail (printf "%s %q: expected a %s name (lowercase letters, digits, - and ., at most 253, starting and ending with a letter or digit)" $key $text .kind) }}
{{- end }}
{{- $text }}
{{- end }}

{{/* bench.controllerRestart.selectorText: the selector as BENCH_CONTROLLER_SELECTOR takes it, key=value,... */}}
{{- define "bench.controllerRestart.selectorText" -}}
{{- $pairs := list }}
{{- range $k, $v := include "bench.controllerRestart.selector" . | fromJson }}{{ $pairs = append $pairs (printf "%s=%s" $k $v) }}{{ end }}
{{- $pairs | sortAlpha | join "," }}
{{- end }}
