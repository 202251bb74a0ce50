{{/* Gateway API route: names, the listener and the data-plane URL (routes.gateway, values.yaml).
The controller-specific facts (default GatewayClass, listener port, data-plane Service name) live
here only; charts/bench/README.md ("Gateway API") says where each was read in the controller's source. */}}

{{/* bench.targetHost: the Host header of the path under test (BENCH_TARGET_HOST): the Ingress rule's
host through the ingress, the HTTPRoute's through the Gateway, none on the Service paths. */}}
{{- define "bench.targetHost" -}}
{{- if eq .Values.loadtest.target "ingress" }}{{ .Values.routes.ingress.host }}
{{- else if eq .Values.loadtest.target "gateway" }}{{ include "bench.gateway.hostname" . }}
{{- end }}
{{- end }}

{{/* bench.gateway.name: the Gateway the HTTPRoute attaches to: routes.gateway.name, else the
chart's fullname ("bench" for release bench). */}}
{{- define "bench.gateway.name" -}}
{{- .Values.routes.gateway.name | default (include "bench.fullname" .) }}
{{- end }}

{{/* bench.gateway.namespace: a created Gateway lives in the release namespace; an existing one in
routes.gateway.namespace (empty = the release namespace). */}}
{{- define "bench.gateway.namespace" -}}
{{- if .Values.routes.gateway.create }}{{ .Release.Namespace }}
{{- else }}{{ .Values.routes.gateway.namespace | default .Release.Namespace }}
{{- end }}
{{- end }}

{{/* bench.gateway.controllerClass: the GatewayClass the selected controller's own chart or
controller creates (empty: none; Envoy Gateway's chart creates none, so its preset has this chart
create one). traefik: gatewayClass.name (its chart's default "traefik"); NGINX Gateway Fabric:
nginxGateway.gatewayClassName ("nginx"); istio: "istio", which istiod creates unless its class
controller is off (values/istio.yaml turns it off and has this chart create the class, so uninstall
removes it). */}}
{{- define "bench.gateway.controllerClass" -}}
{{- $c := .Values.controller }}
{{- $values := index .Values $c | default dict }}
{{- if eq $c "traefik" }}{{ dig "gatewayClass" "name" "" $values | default "traefik" }}
{{- else if eq $c "nginx-gateway-fabric" }}{{ dig "nginxGateway" "gatewayClassName" "" $values | default "nginx" }}
{{- else if eq $c "istio" }}istio
{{- end }}
{{- end }}

{{/* bench.gateway.className: routes.gateway.className, else the controller's own class. */}}
{{- define "bench.gateway.className" -}}
{{- .Values.routes.gateway.className | default (include "bench.gateway.controllerClass" .) }}
{{- end }}

{{/* bench.gateway.tls: "true" when the listener terminates TLS (it follows routes.ingress.tls, so
both routes serve the same certificate). */}}
{{- define "bench.gateway.tls" -}}
{{- if .Values.routes.ingress.tls.enabled }}true{{ end }}
{{- end }}

{{/* bench.gateway.listenerName: routes.gateway.listener.name, else https or http. */}}
{{- define "bench.gateway.listenerName" -}}
{{- .Values.routes.gateway.listener.name | default (ternary "https" "http" (eq (include "bench.gateway.tls" .) "true")) }}
{{- end }}

{{/* bench.gateway.sectionName: the listener the HTTPRoute attaches to (parentRefs sectionName,
BENCH_GATEWAY_LISTENER): the created Gateway's listener, or for an existing Gateway
routes.gateway.listener.name as given (empty = every listener that admits the route). */}}
{{- define "bench.gateway.sectionName" -}}
{{- if .Values.routes.gateway.create }}{{ include "bench.gateway.listenerName" . }}
{{- else }}{{ .Values.routes.gateway.listener.name }}
{{- end }}
{{- end }}

{{/* bench.gateway.listenerPort: routes.gateway.listener.port, else the controller's. Traefik serves
a listener only on the port of one of its entry points (websecure 8443, web 8000 in its chart);
the others open a proxy on the listener's port (443 or 80). */}}
{{- define "bench.gateway.listenerPort" -}}
{{- $tls := eq (include "bench.gateway.tls" .) "true" }}
{{- if .Values.routes.gateway.listener.port }}{{ .Values.routes.gateway.listener.port }}
{{- else if eq .Values.controller "traefik" }}
{{- $ports := dig "ports" (dict) (.Values.traefik | default dict) }}
{{- if $tls }}{{ dig "websecure" "port" 8443 $ports }}{{ else }}{{ dig "web" "port" 8000 $ports }}{{ end }}
{{- else }}{{ ternary 443 80 $tls }}
{{- end }}
{{- end }}

{{/* bench.gateway.hostname: the listener's and the HTTPRoute's hostname (the Host header the
runners send): routes.gateway.listener.hostname, else routes.ingress.host. */}}
{{- define "bench.gateway.hostname" -}}
{{- .Values.routes.gateway.listener.hostname | default .Values.routes.ingress.host }}
{{- end }}

{{/* bench.gateway.crdsFromSubchart: "true" when the selected controller's subchart brings the
Gateway API CRDs in its crds/ directory, which Helm installs before any template (traefik 37.3.0:
Gateway API v1.4.0 standard channel; Envoy Gateway v1.6.0: Gateway API v1.4.0 experimental channel,
a superset). Then the
check for the API is skipped, as a dry run (helm template, install --dry-run) cannot see them yet. */}}
{{- define "bench.gateway.crdsFromSubchart" -}}
{{- $c := .Values.controller }}
{{- if and (has $c (list "traefik" "envoy-gateway")) (not .Values.externalController) (index .Values $c | default dict).enabled }}true{{ end }}
{{- end }}

{{/* bench.gateway.dataPlaneService: the Service the controller serves the Gateway through, in the
Gateway's namespace, or empty when the chart cannot know it (loadtest.gatewayUrl names it then).
traefik: its own Service (the Gateway provider configures the running Traefik); Envoy Gateway in
GatewayNamespace deploy mode (the preset): <gateway>; NGINX Gateway Fabric and Istio:
<gateway>-<class> (NGF hashes names over 63 characters, then the URL must be given). */}}
{{- define "bench.gateway.dataPlaneService" -}}
{{- $c := .Values.controller }}
{{- $gw := include "bench.gateway.name" . }}
{{- if eq $c "traefik" }}{{ include "bench.controllerService" . }}
{{- else if eq $c "envoy-gateway" }}
{{- if eq (dig "config" "envoyGateway" "provider" "kubernetes" "deploy" "type" "" (index .Values "envoy-gateway")) "GatewayNamespace" }}{{ $gw }}{{ end }}
{{- else if has $c (list "nginx-gateway-fabric" "istio") }}
{{- $name := printf "%s-%s" $gw (include "bench.gateway.className" .) }}
{{- if le (len $name) 63 }}{{ $name }}{{ end }}
{{- end }}
{{- end }}

{{/* bench.url.gateway: base URL of the Gateway's data plane: loadtest.gatewayUrl, else its Service.
Traefik's Service maps 443/80 to its entry points; the others' Services expose the listener port. */}}
{{- define "bench.url.gateway" -}}
{{- if .Values.loadtest.gatewayUrl }}
{{- .Values.loadtest.gatewayUrl | trimSuffix "/" }}
{{- else if and .Values.routes.gateway.enabled (not .Values.externalController) }}
{{- $svc := include "bench.gateway.dataPlaneService" . }}
{{- if $svc }}
{{- $tls := eq (include "bench.gateway.tls" .) "true" }}
{{- $scheme := ternary "https" "http" $tls }}
{{- $port := ternary "" (printf ":%s" (include "bench.gateway.listenerPort" .)) (or (eq .Values.controller "traefik") (eq (include "bench.gateway.listenerPort" .) (ternary "443" "80" $tls))) }}
{{- $ns := ternary .Release.Namespace (include "bench.gateway.namespace" .) (eq .Values.controller "traefik") }}
{{- printf "%s://%s.%s.svc%s" $scheme $svc $ns $port }}
{{- end }}
{{- end }}
{{- end }}
