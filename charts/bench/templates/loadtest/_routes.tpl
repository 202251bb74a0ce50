{{/* Route experiments (route-propagation, route-change, route-scale): which scenarios they are, the
routes listener of the Gateway and the BENCH_ROUTE_* values (loadtest.routes, values.yaml). The
scenario list and the defaults are read from the scenarios' own files, so each lives in one place. */}}

{{/* bench.routes.scenarios: the route experiments, space-separated: the onlyFor of the httproutes
rule in scenarios/contract.json runnerRole (the scenarios that create routes) that names no
disruption (long-lived's reload creates one route beside its streams, through the test's listener). */}}
{{- define "bench.routes.scenarios" -}}
{{- $names := list }}
{{- range (fromJson (.Files.Get "scenarios/contract.json")).runnerRole.rules }}
{{- if and (eq .resource "httproutes") (not .disruption) }}{{ $names = concat $names .onlyFor }}{{ end }}
{{- end }}
{{- join " " $names }}
{{- end }}

{{/* bench.routes.selected: "true" when the TestRun runs a route experiment. */}}
{{- define "bench.routes.selected" -}}
{{- if and .Values.loadtest.enabled (has .Values.loadtest.scenario (splitList " " (include "bench.routes.scenarios" .))) }}true{{ end }}
{{- end }}

{{/* bench.scenarioDefault (list $ NAME): the default of BENCH_* variable NAME in scenarios/lib/config.js
(DEFAULTS); fails when it cannot be read, rather than guess. */}}
{{- define "bench.scenarioDefault" -}}
{{- $root := index . 0 }}
{{- $name := index . 1 }}
{{- $line := regexFind (printf "\\b%s: '[^']*'" $name) ($root.Files.Get "scenarios/lib/config.js") }}
{{- if not $line }}
{{- fail (printf "scenarios/lib/config.js in the chart has no default for %s" $name) }}
{{- end }}
{{- $line | trimPrefix (printf "%s: '" $name) | trimSuffix "'" }}
{{- end }}

{{/* bench.routes.kinds: the kinds the run creates, "httproute", "ingress" or "httproute ingress". */}}
{{- define "bench.routes.kinds" -}}
{{- $kind := .Values.loadtest.routes.kind | default (include "bench.scenarioDefault" (list . "BENCH_ROUTE_KIND")) }}
{{- ternary "httproute ingress" $kind (eq $kind "both") }}
{{- end }}

{{/* bench.routes.domain: loadtest.routes.domain, else the scenarios' default. */}}
{{- define "bench.routes.domain" -}}
{{- .Values.loadtest.routes.domain | default (include "bench.scenarioDefault" (list . "BENCH_ROUTE_DOMAIN")) }}
{{- end }}

{{/* bench.routes.gatewayListener: "true" when the created Gateway gets the routes listener: a route
experiment with HTTPRoutes is selected. Other runs keep the Gateway at one listener, so a routes
listener never changes what they measure (and an HTTPS Gateway opens no plain-HTTP port). */}}
{{- define "bench.routes.gatewayListener" -}}
{{- $gw := .Values.routes.gateway }}
{{- if and $gw.enabled $gw.create (include "bench.routes.selected" .) (has "httproute" (splitList " " (include "bench.routes.kinds" .))) }}true{{ end }}
{{- end }}

{{/* bench.routes.listenerName: the HTTPRoutes' sectionName (BENCH_GATEWAY_LISTENER): the created
Gateway's routes listener (routesListener.name, else "routes"), or on an existing Gateway
routesListener.name as given (empty = every listener). */}}
{{- define "bench.routes.listenerName" -}}
{{- if .Values.routes.gateway.create }}{{ .Values.routes.gateway.routesListener.name | default "routes" }}
{{- else }}{{ .Values.routes.gateway.routesListener.name }}
{{- end }}
{{- end }}

{{/* bench.routes.listenerPort: routesListener.port, else the controller's plain-HTTP port (the
listener port bench.gateway.listenerPort gives without TLS: traefik its web entry point, 80 else). */}}
{{- define "bench.routes.listenerPort" -}}
{{- if .Values.routes.gateway.routesListener.port }}{{ .Values.routes.gateway.routesListener.port }}
{{- else if eq .Values.controller "traefik" }}{{ dig "ports" "web" "port" 8000 (.Values.traefik | default dict) }}
{{- else }}80
{{- end }}
{{- end }}

{{/* bench.url.routesGateway: plain-HTTP URL of the routes listener: loadtest.routes.gatewayUrl,
else the Gateway's data-plane Service (bench.gateway.dataPlaneService) on the listener's port;
Traefik's own Service maps port 80 to its web entry point. Empty when it cannot be derived. */}}
{{- define "bench.url.routesGateway" -}}
{{- if .Values.loadtest.routes.gatewayUrl }}
{{- .Values.loadtest.routes.gatewayUrl | trimSuffix "/" }}
{{- else if and .Values.routes.gateway.enabled .Values.routes.gateway.create (not .Values.externalController) }}
{{- $svc := include "bench.gateway.dataPlaneService" . }}
{{- if $svc }}
{{- $traefik := eq .Values.controller "traefik" }}
{{- $port := include "bench.routes.listenerPort" . }}
{{- $ns := ternary .Release.Namespace (include "bench.gateway.namespace" .) $traefik }}
{{- printf "http://%s.%s.svc%s" $svc $ns (ternary "" (printf ":%s" $port) (or $traefik (eq $port "80"))) }}
{{- end }}
{{- end }}
{{- end }}

{{/* bench.routes.backends: loadtest.routes.backends, else the chart's two backend Services
(templates/routes/services.yaml): the ClusterIP Service on 80 and the headless one on backend.port. */}}
{{- define "bench.routes.backends" -}}
{{- $backend := include "bench.backend.fullname" . }}
{{- .Values.loadtest.routes.backends | default (printf "%s:80,%s-headless:%d" $backend $backend (int .Values.backend.port)) }}
{{- end }}
