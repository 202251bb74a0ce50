{{/* Helpers of the pre-delete hook (templates/loadtest/cleanup-hook.yaml), here so that
templates/validate.yaml and NOTES.txt can use them too. */}}

{{/* bench.cleanup.gateway: the Gateway the hook deletes first, as YAML {name, selector}: this
release's Gateway when its controller provisions a data plane for it (Envoy Gateway in
GatewayNamespace mode, NGINX Gateway Fabric, Istio); empty otherwise. NGINX Gateway Fabric removes
its NGINX Deployment, Service, ConfigMaps and Secret only while it runs (no owner references);
Envoy Gateway keeps its GatewayClass finalizer until it sees no Gateway of the class. selector:
the labels the controller puts on the data-plane pods (the hook waits until none is left). */}}
{{- define "bench.cleanup.gateway" -}}
{{- $c := .Values.controller }}
{{- $gw := .Values.routes.gateway }}
{{- if and $gw.enabled $gw.create (not .Values.externalController) (has $c (list "envoy-gateway" "nginx-gateway-fabric" "istio")) }}
{{- $name := include "bench.gateway.name" . }}
name: {{ $name | quote }}
{{- if eq $c "envoy-gateway" }}
selector: {{ printf "gateway.envoyproxy.io/owning-gateway-name=%s,gateway.envoyproxy.io/owning-gateway-namespace=%s" $name .Release.Namespace | quote }}
{{- else }}
selector: {{ printf "gateway.networking.k8s.io/gateway-name=%s" $name | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* bench.cleanup.leftovers: `items:`, the named objects uninstall would leave and the hook deletes,
each {namespace, group, version, resource, name}. The one list: the Roles grant delete on exactly
these names and charts/bench/README.md "Uninstall" lists them per preset (test_uninstall.py). */}}
{{- define "bench.cleanup.leftovers" -}}
{{- $ns := .Release.Namespace }}
{{- $c := .Values.controller }}
{{- $items := list }}
{{- /* the `helm test` pod (hook-delete-policy before-hook-creation: kept after a test) */}}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" "pods" "name" (printf "%s-test-%s" (include "bench.fullname" .) .Values.loadtest.target)) }}
{{- /* the TestRun check's `helm test` pod (templates/tests/testrun-test.yaml), kept likewise */}}
{{- if .Values.loadtest.enabled }}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" "pods" "name" (printf "%s-test-testrun" (include "bench.fullname" .))) }}
{{- end }}
{{- $values := index .Values $c | default dict }}
{{- $on := and (ne $c "none") (not .Values.externalController) $values.enabled }}
{{- $full := include "bench.subchartFullname" (list . $c) }}
{{- if and $on (eq $c "ingress-nginx") (dig "controller" "admissionWebhooks" "enabled" true $values) (not (dig "controller" "admissionWebhooks" "certManager" "enabled" false $values)) }}
{{- /* written by its admission-create Job (kube-webhook-certgen), owned by nothing */}}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" "secrets" "name" (printf "%s-admission" $full)) }}
{{- end }}
{{- if and $on (eq $c "haproxy") (dig "controller" "defaultTLSSecret" "enabled" true $values) (not (dig "controller" "defaultTLSSecret" "secret" "" $values)) }}
{{- /* a pre-install hook with hook-delete-policy before-hook-creation */}}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" "secrets" "name" (printf "%s-default-cert" $full | trunc 63 | trimSuffix "-")) }}
{{- end }}
{{- if and $on (eq $c "envoy-gateway") }}
{{- /* written by its certgen Job into the controller's namespace, owned by nothing */}}
{{- range list "envoy-gateway" "envoy" "envoy-rate-limit" "envoy-oidc-hmac" }}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" "secrets" "name" .) }}
{{- end }}
{{- end }}
{{- if and $on (eq $c "nginx-gateway-fabric") }}
{{- if dig "certGenerator" "enable" true $values }}
{{- /* its cert-generator's identity: pre-install hooks without a delete policy */}}
{{- range list "serviceaccounts" "roles" "rolebindings" }}
{{- $group := ternary "" "rbac.authorization.k8s.io" (eq . "serviceaccounts") }}
{{- $items = append $items (dict "namespace" $ns "group" $group "version" "v1" "resource" . "name" (printf "%s-cert-generator" $full | trunc 63 | trimSuffix "-")) }}
{{- end }}
{{- /* and the Secrets it wrote */}}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" "secrets" "name" (dig "certGenerator" "serverTLSSecretName" "server-tls" $values)) }}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" "secrets" "name" (dig "certGenerator" "agentTLSSecretName" "agent-tls" $values)) }}
{{- end }}
{{- end }}
{{- if and $on (eq $c "istio") }}
{{- /* istiod's self-signed root CA, written at its first start, owned by nothing */}}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" "secrets" "name" "istio-ca-secret") }}
{{- end }}
{{- $kps := index .Values "kube-prometheus-stack" | default dict }}
{{- if $kps.enabled }}
{{- $kpsFull := include "bench.subchartFullname" (list . "kube-prometheus-stack" 26) }}
{{- $op := $kps.prometheusOperator | default dict }}
{{- if and (dig "enabled" true $op) (dig "admissionWebhooks" "enabled" true $op) (not (dig "admissionWebhooks" "certManager" "enabled" false $op)) }}
{{- /* written by its admission-create Job (kube-webhook-certgen), owned by nothing */}}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" "secrets" "name" (printf "%s-admission" $kpsFull)) }}
{{- end }}
{{- if and (dig "enabled" true $op) (dig "kubeletService" "enabled" true $op) }}
{{- /* the operator creates and keeps the kubelet Service and Endpoints (cAdvisor metrics for the
dashboards), in kube-system by default; nothing deletes them */}}
{{- $kubeletNs := dig "kubeletService" "namespace" "kube-system" $op }}
{{- $kubelet := dig "kubeletService" "name" "" $op | default (printf "%s-kubelet" $kpsFull) }}
{{- $items = append $items (dict "namespace" $kubeletNs "group" "" "version" "v1" "resource" "services" "name" $kubelet) }}
{{- $items = append $items (dict "namespace" $kubeletNs "group" "" "version" "v1" "resource" "endpoints" "name" $kubelet) }}
{{- end }}
{{- $grafana := $kps.grafana | default dict }}
{{- if and (dig "enabled" true $grafana) (dig "testFramework" "enabled" true $grafana) }}
{{- /* Grafana's `helm test` objects, kept when the test failed (hook-succeeded) */}}
{{- $grafanaFull := $grafana.fullnameOverride | default (ternary .Release.Name (printf "%s-%s" .Release.Name ($grafana.nameOverride | default "grafana")) (contains ($grafana.nameOverride | default "grafana") .Release.Name)) | trunc 63 | trimSuffix "-" }}
{{- range list "pods" "configmaps" "serviceaccounts" }}
{{- $items = append $items (dict "namespace" $ns "group" "" "version" "v1" "resource" . "name" (printf "%s-test" $grafanaFull)) }}
{{- end }}
{{- end }}
{{- end }}
items: {{ toJson $items }}
{{- end }}

{{/* bench.cleanup.collection: the API path of one leftover's collection. */}}
{{- define "bench.cleanup.collection" -}}
{{- if .group }}/apis/{{ .group }}/{{ .version }}{{ else }}/api/{{ .version }}{{ end }}/namespaces/{{ .namespace }}/{{ .resource }}
{{- end }}

{{/* bench.cleanup.rules: Role rules from {"group/resource": [names]}: delete on those names only. */}}
{{- define "bench.cleanup.rules" -}}
{{- range $key, $names := . }}
- apiGroups: [{{ index (splitList "/" $key) 0 | quote }}]
  resources: [{{ index (splitList "/" $key) 1 | quote }}]
  resourceNames: [{{ range $i, $n := $names }}{{ if $i }}, {{ end }}{{ $n | quote }}{{ end }}]
  verbs: ["delete"]
{{- end }}
{{- end }}

{{/* bench.cleanup.routes: "true" when runners of this release create routes the hook may have to
delete: a route experiment's, or long-lived's reload route (a runner stopped between its create and
its delete leaves it). */}}
{{- define "bench.cleanup.routes" -}}
{{- if and .Values.loadtest.enabled (or (include "bench.routes.selected" .) (include "bench.stream.disrupts" (list . "reload"))) }}true{{ end }}
{{- end }}

{{/* bench.cleanup.deadline: the hook Job's activeDeadlineSeconds: 60 s to start (the image pull
included), the TestRun's and the Gateway's waits (loadtest.cleanupHook.waitSeconds each), 60 s more
with routes to delete (one call each, up to 10000 per kind), 30 s for the leftovers (one call each).
templates/validate.yaml refuses a deadline that would outlast `helm uninstall`'s timeout. */}}
{{- define "bench.cleanup.deadline" -}}
{{- $lt := .Values.loadtest }}
{{- $wait := $lt.cleanupHook.waitSeconds }}
{{- $gateway := include "bench.cleanup.gateway" . | fromYaml }}
{{- $routes := eq (include "bench.cleanup.routes" .) "true" }}
{{- add 60 (ternary $wait 0 $lt.enabled) (ternary $wait 0 (not (empty $gateway.name))) (ternary 60 0 $routes) 30 }}
{{- end }}
