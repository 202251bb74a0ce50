{{/* bench.loadtest.pod (dict "root" $ "initializer" BOOL): pod spec of the TestRun's runners and
initializer. Both get every BENCH_* variable (k6-operator gives the initializer's env values to `k6
archive` and `k6 inspect` as -e NAME="value" on a `sh -c` line, so a script builds the same options
in both), with two differences the line forces: BENCH_URL_NODEPORT is a fixed address there, since
Kubernetes' $(NODE_IP) would run as a command substitution, and BENCH_ENVIRONMENT's quotes are
escaped. References (valueFrom, envFrom) reach the runners only. */}}
{{- define "bench.loadtest.pod" -}}
{{- $root := .root }}
{{- $lt := $root.Values.loadtest }}
{{- $urls := dict "ingress" (include "bench.url.ingress" $root) "clusterip" (include "bench.url.clusterip" $root) "nodeport" (include "bench.url.nodeport" $root) "pod" (include "bench.url.pod" $root) "gateway" (include "bench.url.gateway" $root) }}
{{- $gw := $root.Values.routes.gateway }}
{{- $routes := eq (include "bench.routes.selected" $root) "true" }}
{{- if .initializer }}
{{- $_ := set $urls "nodeport" (printf "http://127.0.0.1:%d" (int $root.Values.routes.nodePort.port)) }}
{{- end }}
{{- $remoteWrite := include "bench.remoteWriteUrl" $root }}
image: {{ include "bench.image" $lt.runner.image | quote }}
imagePullPolicy: {{ $lt.runner.image.pullPolicy | quote }}
serviceAccountName: {{ include "bench.fullname" $root }}-loadtest
{{- if .initializer }}
# the initializer only archives and inspects the script (no API call runs in k6's init context): no token
automountServiceAccountToken: "false"
{{- end }}
metadata:
  labels:
    {{- include "bench.selectorLabels" $root | nindent 4 }}
    app.kubernetes.io/component: loadtest
    bench/testid: {{ include "bench.runId" $root | quote }}
{{- with $lt.runner.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if not .initializer }}
# k6-operator's default liveness probe asks the runner's REST API (/v1/status), which k6 stops when its
# test ends: three failures, 30 s into the end-of-test summary, and the kubelet kills the runner before
# it prints its summary. This one allows 90 s, longer than the end-of-run record's retries
# (scenarios/lib/run-end.js RUN_END_TIMEOUT_MS) after the last push.
livenessProbe:
  httpGet: {path: /v1/status, port: 6565, scheme: HTTP}
  periodSeconds: 10
  failureThreshold: 9
{{- end }}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
containerSecurityContext:
  {{- include "bench.containerSecurityContext" $root | nindent 2 }}
{{- with $lt.runner.resources }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $lt.runner.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $lt.runner.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $lt.runner.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
env:
  # the runner's node, for the NodePort URL (not a BENCH_* name: scenarios reject unknown ones)
  - name: NODE_IP
    valueFrom:
      fieldRef:
        fieldPath: status.hostIP
  - {name: BENCH_TARGET_URL, value: {{ get $urls $lt.target | quote }}}
  - {name: BENCH_TARGET_HOST, value: {{ include "bench.targetHost" $root | quote }}}
  - {name: BENCH_PATH, value: {{ $lt.path | quote }}}
  - {name: BENCH_URL_INGRESS, value: {{ get $urls "ingress" | quote }}}
  - {name: BENCH_URL_CLUSTERIP, value: {{ get $urls "clusterip" | quote }}}
  - {name: BENCH_URL_NODEPORT, value: {{ get $urls "nodeport" | quote }}}
  - {name: BENCH_URL_POD, value: {{ get $urls "pod" | quote }}}
  # a route experiment probes its HTTPRoutes through the plain-HTTP routes listener (bench.url.routesGateway)
  - {name: BENCH_URL_GATEWAY, value: {{ ternary (include "bench.url.routesGateway" $root) (get $urls "gateway") $routes | quote }}}
  # the Gateway the route experiments attach their HTTPRoutes to (parentRefs); empty without routes.gateway
  - {name: BENCH_GATEWAY_NAME, value: {{ ternary (include "bench.gateway.name" $root) "" $gw.enabled | quote }}}
  - {name: BENCH_GATEWAY_NAMESPACE, value: {{ ternary (include "bench.gateway.namespace" $root) "" $gw.enabled | quote }}}
  - {name: BENCH_GATEWAY_LISTENER, value: {{ ternary (ternary (include "bench.routes.listenerName" $root) (include "bench.gateway.sectionName" $root) $routes) "" $gw.enabled | quote }}}
  # route experiments (loadtest.routes; empty = the scenario's default)
  - {name: BENCH_INGRESS_CLASS, value: {{ include "bench.ingressClassName" $root | quote }}}
  {{- /* long-lived's reload route is of the path under test's kind (bench.stream.routeKind) */}}
  - {name: BENCH_ROUTE_KIND, value: {{ ternary (include "bench.stream.routeKind" $root) $lt.routes.kind (eq $lt.scenario "long-lived") | quote }}}
  - {name: BENCH_ROUTE_COUNT, value: {{ include "bench.text" $lt.routes.count | quote }}}
  - {name: BENCH_ROUTE_INTERVAL, value: {{ $lt.routes.interval | quote }}}
  - {name: BENCH_ROUTE_TIMEOUT, value: {{ $lt.routes.timeout | quote }}}
  - {name: BENCH_ROUTE_DOMAIN, value: {{ $lt.routes.domain | quote }}}
  - {name: BENCH_ROUTE_BACKENDS, value: {{ include "bench.routes.backends" $root | quote }}}
  # scenario settings: empty unless the user set the key, so the scenario's own default wins
  # (scenarios/contract.json states the defaults; the entry script may give its own)
  - {name: BENCH_RATE, value: {{ include "bench.settingText" $lt.rate | quote }}}
  - {name: BENCH_DURATION, value: {{ include "bench.settingText" $lt.duration | quote }}}
  - {name: BENCH_WARMUP, value: {{ include "bench.settingText" $lt.warmup | quote }}}
  - {name: BENCH_CONNECTIONS, value: {{ include "bench.settingText" $lt.connections | quote }}}
  - {name: BENCH_MAX_CONNECTIONS, value: {{ include "bench.loadtest.maxConnections" $root | quote }}}
  - {name: BENCH_TIMEOUT, value: {{ include "bench.settingText" $lt.timeout | quote }}}
  - {name: BENCH_KEEPALIVE, value: {{ include "bench.settingText" $lt.keepalive | quote }}}
  - {name: BENCH_INSECURE_TLS, value: {{ include "bench.settingText" $lt.insecureTls | quote }}}
  - {name: BENCH_NAMESPACE, value: {{ $root.Release.Namespace | quote }}}
  - {name: BENCH_DEPLOYMENT, value: {{ include "bench.backend.fullname" $root | quote }}}
  - {name: BENCH_POD_SELECTOR, value: {{ printf "app.kubernetes.io/name=%s,app.kubernetes.io/instance=%s,app.kubernetes.io/component=backend" (include "bench.name" $root) $root.Release.Name | quote }}}
  - {name: BENCH_CHURN_PATTERN, value: {{ include "bench.settingText" $lt.churn.pattern | quote }}}
  - {name: BENCH_PODKILL_INTERVAL, value: {{ include "bench.settingText" $lt.churn.podkillInterval | quote }}}
  - {name: BENCH_ROLL_INTERVAL, value: {{ include "bench.settingText" $lt.churn.rollInterval | quote }}}
  - {name: BENCH_TESTID, value: {{ include "bench.runId" $root | quote }}}
  - {name: BENCH_SUMMARY_DIR, value: /tmp}
  # the garbage collector held off so its pauses stay out of the tails (loadtest.runner.gc)
  {{- include "bench.loadtest.gcEnv" $root | nindent 2 }}
  - {name: K6_NO_USAGE_REPORT, value: "true"}
  - {name: K6_AUTO_EXTENSION_RESOLUTION, value: "false"}
  {{- if $remoteWrite }}
  - {name: K6_PROMETHEUS_RW_SERVER_URL, value: {{ $remoteWrite | quote }}}
  - {name: K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM, value: "true"}
  {{- end }}
  # what the run ran on, for the summary's settings.environment; the initializer's copy has its JSON
  # quotes escaped (\"), the one form of a quote its `sh -c` line keeps as a quote (_shell.tpl)
  {{- $environment := include "bench.loadtest.environment" $root }}
  - {name: BENCH_ENVIRONMENT, value: {{ ternary (include "bench.shell.escapeQuotes" $environment) $environment .initializer | quote }}}
  {{- if eq $lt.scenario "controller-restart" }}
  # controller-restart's own settings, from loadtest.controllerRestart (the runner's Role reaches those pods)
  - {name: BENCH_CONTROLLER_NAMESPACE, value: {{ include "bench.controllerRestart.namespace" $root | quote }}}
  - {name: BENCH_CONTROLLER_SELECTOR, value: {{ include "bench.controllerRestart.selectorText" $root | quote }}}
  - {name: BENCH_CONTROLLER_HOLD, value: {{ $lt.controllerRestart.hold | quote }}}
  - {name: BENCH_CONTROLLER_READY_TIMEOUT, value: {{ $lt.controllerRestart.readyTimeout | quote }}}
  {{- end }}
  {{- if eq $lt.scenario "dataplane-scale" }}
  # dataplane-scale's own settings, from loadtest.dataplaneScale (the runner's Role reaches that Deployment)
  {{- $dp := $lt.dataplaneScale }}
  - {name: BENCH_DATAPLANE_NAMESPACE, value: {{ include "bench.dataplaneScale.namespace" $root | quote }}}
  - {name: BENCH_DATAPLANE_DEPLOYMENT, value: {{ include "bench.dataplaneScale.deployment" $root | quote }}}
  {{- $via := include "bench.dataplaneScale.via" $root | fromJson }}
  {{- if $via.kind }}
  # the steps set the replicas of the object the data plane's controller copies them from (loadtest.dataplaneScale.via)
  - {name: BENCH_DATAPLANE_PARAMETERS_KIND, value: {{ printf "%s.%s" $via.kind $via.apiGroup | quote }}}
  - {name: BENCH_DATAPLANE_PARAMETERS_NAMESPACE, value: {{ include "bench.dataplaneScale.parameters.namespace" $root | quote }}}
  - {name: BENCH_DATAPLANE_PARAMETERS_NAME, value: {{ include "bench.dataplaneScale.parameters.name" $root | quote }}}
  - {name: BENCH_DATAPLANE_PARAMETERS_REPLICAS, value: {{ $via.replicas | quote }}}
  {{- end }}
  - {name: BENCH_DATAPLANE_LEVELS, value: {{ $dp.levels | replace " " "" | quote }}}
  - {name: BENCH_DATAPLANE_MODE, value: {{ $dp.mode | quote }}}
  - {name: BENCH_DATAPLANE_HOLD, value: {{ $dp.hold | quote }}}
  - {name: BENCH_DATAPLANE_READY_TIMEOUT, value: {{ $dp.readyTimeout | quote }}}
  {{- end }}
  {{- if eq $lt.scenario "controller-upgrade" }}
  # controller-upgrade's own settings, from loadtest.controllerUpgrade (the runner's Role reaches that workload)
  {{- $up := $lt.controllerUpgrade }}
  - {name: BENCH_UPGRADE_KIND, value: {{ $up.kind | quote }}}
  - {name: BENCH_UPGRADE_NAMESPACE, value: {{ include "bench.controllerUpgrade.namespace" $root | quote }}}
  - {name: BENCH_UPGRADE_NAME, value: {{ include "bench.controllerUpgrade.name" $root | quote }}}
  - {name: BENCH_UPGRADE_CONTAINER, value: {{ include "bench.controllerUpgrade.container" $root | quote }}}
  - {name: BENCH_UPGRADE_IMAGE, value: {{ $up.image | quote }}}
  - {name: BENCH_UPGRADE_FROM, value: {{ $up.currentImage | quote }}}
  - {name: BENCH_UPGRADE_HOLD, value: {{ $up.hold | quote }}}
  - {name: BENCH_UPGRADE_READY_TIMEOUT, value: {{ $up.readyTimeout | quote }}}
  {{- end }}
  {{- if eq $lt.scenario "backend-failover" }}
  # backend-failover's own settings, from loadtest.backendFailover (the flapping pod's schedule too)
  {{- $bf := $lt.backendFailover }}
  - {name: BENCH_FAILOVER_MODE, value: {{ $bf.mode | quote }}}
  - {name: BENCH_FAILOVER_UNHEALTHY, value: {{ printf "%ds" ($bf.unhealthySeconds | int) | quote }}}
  - {name: BENCH_FAILOVER_HEALTHY, value: {{ printf "%ds" ($bf.healthySeconds | int) | quote }}}
  - {name: BENCH_FAILOVER_PORT, value: {{ $root.Values.backend.port | int | toString | quote }}}
  - {name: BENCH_FAILOVER_ERRORS_PER_FLAP, value: {{ $bf.errorsPerFlap | int | toString | quote }}}
  {{- end }}
  {{- if eq $lt.scenario "long-lived" }}
  # long-lived's own settings, from loadtest.longLived (the stream Deployment, its routes and the
  # runner's rights are built from the same keys); controller reuses controller-restart's
  {{- $ll := $lt.longLived }}
  - {name: BENCH_LONGLIVED_KINDS, value: {{ include "bench.stream.kinds" $root | quote }}}
  - {name: BENCH_LONGLIVED_STREAMS, value: {{ include "bench.settingText" $ll.streams | quote }}}
  - {name: BENCH_LONGLIVED_INTERVAL, value: {{ $ll.interval | quote }}}
  {{- /* the scenario reads an empty value as its default list: no disruption is the word none */}}
  - {name: BENCH_LONGLIVED_DISRUPTIONS, value: {{ join "," $ll.disruptions | default "none" | quote }}}
  - {name: BENCH_LONGLIVED_HOLD, value: {{ $ll.hold | quote }}}
  - {name: BENCH_STREAM_PATH, value: {{ include "bench.stream.path" $root | quote }}}
  - {name: BENCH_STREAM_DEPLOYMENT, value: {{ include "bench.stream.fullname" $root | quote }}}
  - {name: BENCH_STREAM_REPLICAS, value: {{ $ll.replicas | int | toString | quote }}}
  {{- if has "controller" $ll.disruptions }}
  - {name: BENCH_CONTROLLER_NAMESPACE, value: {{ include "bench.controllerRestart.namespace" $root | quote }}}
  - {name: BENCH_CONTROLLER_SELECTOR, value: {{ include "bench.controllerRestart.selectorText" $root | quote }}}
  - {name: BENCH_CONTROLLER_HOLD, value: {{ $lt.controllerRestart.hold | quote }}}
  - {name: BENCH_CONTROLLER_READY_TIMEOUT, value: {{ $lt.controllerRestart.readyTimeout | quote }}}
  {{- end }}
  {{- end }}
  # the entry script's own settings (loadtest.settings), as every BENCH_* above: runners and initializer
  {{- range $name, $value := $lt.settings }}
  - {name: {{ $name }}, value: {{ include "bench.text" $value | quote }}}
  {{- end }}
  {{- range $name, $value := $lt.extraEnv }}
  {{- if kindIs "map" $value }}
  {{- /* a reference (valueFrom): the runners' env only. k6-operator pastes the initializer's env
  onto its `sh -c` line, and the initializer needs no secret (k6 archive only reads the script). */}}
  {{- if not $.initializer }}
  - name: {{ $name }}
    valueFrom:
      {{- toYaml $value.valueFrom | nindent 6 }}
  {{- end }}
  {{- else }}
  - {name: {{ $name }}, value: {{ include "bench.text" $value | quote }}}
  {{- end }}
  {{- end }}
{{- /* Secret and ConfigMap references for every variable they hold: the runners only (k6-operator
passes envFrom to no command line, but the initializer needs none of it). */}}
{{- if and (not .initializer) $lt.runner.envFrom }}
envFrom:
  {{- toYaml $lt.runner.envFrom | nindent 2 }}
{{- end }}
volumes:
  - name: scenarios
    configMap:
      name: {{ include "bench.fullname" $root }}-scenarios
      items:
        {{- range $path, $_ := $root.Files.Glob "scenarios/{*.js,lib/*.js,lib/*.proto}" }}
        - key: {{ include "bench.scenarioKey" $path }}
          path: {{ trimPrefix "scenarios/" $path }}
        {{- end }}
  - name: tmp
    emptyDir: {}
volumeMounts:
  - {name: scenarios, mountPath: /bench/scenarios, readOnly: true}
  - {name: tmp, mountPath: /tmp}
{{- end }}
