{{/* bench.durationMs STRING: milliseconds of a duration such as 2s, 1500ms or 1m30s, one the schema
has let through (scenarios/contract.json durations: number + unit, repeated). Its units and term are
copies of the contract's (a template reading the contract on every call costs each render);
ci/test/chart/test_durations.py compares them and renders the contract's examples through it. */}}
{{- define "bench.durationMs" -}}
{{- $ms := 0.0 }}
{{- $units := dict "h" 3600000.0 "m" 60000.0 "s" 1000.0 "ms" 1.0 "us" 0.001 }}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(h|ms|us|m|s)" (toString .) -1 }}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" . }}
{{- $ms = addf $ms (mulf (float64 $number) (get $units (trimPrefix $number .))) }}
{{- end }}
{{- $ms }}
{{- end }}

{{/* bench.loadtest.maxConnections: the runners' VU ceiling (BENCH_MAX_CONNECTIONS).
loadtest.maxConnections when set; else enough VUs to keep sending through a stall in which every
request waits the whole timeout: rate x timeout (1000 req/s x 2 s = 2000), at least
loadtest.connections, at most 100000 (the scenarios' bound); rate, timeout and connections the
user left empty count with the scenarios' defaults (bench.loadtest.effective). k6 starts extra VUs only when all are
busy, so a healthy target never uses them. */}}
{{- define "bench.loadtest.maxConnections" -}}
{{- $lt := .Values.loadtest }}
{{- if $lt.maxConnections }}
{{- int $lt.maxConnections }}
{{- else }}
{{- $rate := include "bench.loadtest.effective" (dict "root" . "key" "loadtest.rate" "value" $lt.rate) }}
{{- $timeout := include "bench.loadtest.effective" (dict "root" . "key" "loadtest.timeout" "value" $lt.timeout) }}
{{- $connections := include "bench.loadtest.effective" (dict "root" . "key" "loadtest.connections" "value" $lt.connections) }}
{{- $inFlight := ceil (divf (mulf (float64 $rate) (float64 (include "bench.durationMs" $timeout))) 1000.0) | int64 }}
{{- min 100000 (max (int64 $connections) $inFlight) }}
{{- end }}
{{- end }}
