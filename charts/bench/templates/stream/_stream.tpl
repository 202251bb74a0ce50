{{/* The stream backend of loadtest.scenario long-lived (backends/stream; values loadtest.longLived):
names, labels and the facts its routes need. The server's paths are fixed in its source: every
stream under /stream/ and the gRPC service bench.stream.v1.Ticks (scenarios/lib/ticks.proto). */}}

{{/* bench.stream.enabled: "true" when the run is long-lived, the one scenario the stream backend serves. */}}
{{- define "bench.stream.enabled" -}}
{{- if eq .Values.loadtest.scenario "long-lived" }}true{{ end }}
{{- end }}

{{/* bench.stream.fullname: the stream Deployment and its HTTP/1.1 Service (BENCH_STREAM_DEPLOYMENT). */}}
{{- define "bench.stream.fullname" -}}
{{- printf "%s-stream" (include "bench.fullname" .) }}
{{- end }}

{{/* bench.stream.selectorLabels: the stream pods; component stream, so neither the backend's
Services nor its churn (BENCH_POD_SELECTOR, component backend) ever select them. */}}
{{- define "bench.stream.selectorLabels" -}}
{{ include "bench.selectorLabels" . }}
app.kubernetes.io/component: stream
{{- end }}

{{/* bench.stream.path: the prefix every stream path of the server starts with (BENCH_STREAM_PATH). */}}
{{- define "bench.stream.path" -}}
/stream
{{- end }}

{{/* bench.stream.grpcPrefix: the gRPC service's path prefix, /<package>.<service>/ */}}
{{- define "bench.stream.grpcPrefix" -}}
/bench.stream.v1.Ticks/
{{- end }}

{{/* bench.stream.kinds: loadtest.longLived.kinds as BENCH_LONGLIVED_KINDS, comma-separated. */}}
{{- define "bench.stream.kinds" -}}
{{- join "," .Values.loadtest.longLived.kinds }}
{{- end }}

{{/* bench.stream.http: "true" when a kind the HTTP/1.1 Service carries is held (http, websocket). */}}
{{- define "bench.stream.http" -}}
{{- $kinds := .Values.loadtest.longLived.kinds }}
{{- if or (has "http" $kinds) (has "websocket" $kinds) }}true{{ end }}
{{- end }}

{{/* bench.stream.grpc: "true" when gRPC streams are held (the h2c Service and its route). */}}
{{- define "bench.stream.grpc" -}}
{{- if has "grpc" .Values.loadtest.longLived.kinds }}true{{ end }}
{{- end }}

{{/* bench.stream.disrupts (list $ NAME): "true" when loadtest.longLived.disruptions holds NAME
(reload, backend, controller): the runner's Role and admission policies grant only those rights. */}}
{{- define "bench.stream.disrupts" -}}
{{- $root := index . 0 }}
{{- if and (include "bench.stream.enabled" $root) (has (index . 1) $root.Values.loadtest.longLived.disruptions) }}true{{ end }}
{{- end }}

{{/* bench.stream.routeKind: the kind of long-lived's reload route (BENCH_ROUTE_KIND, its first kind):
the path under test's, ingress or httproute. */}}
{{- define "bench.stream.routeKind" -}}
{{- ternary "ingress" "httproute" (eq .Values.loadtest.target "ingress") }}
{{- end }}
