{{/* bench.loadtest.gcEnv: GOGC and GOMEMLIMIT env entries of the runners (loadtest.runner.gc).
GOGC=off without a memory limit would let the heap grow until the pod is killed, so a limit is
required then. GOMEMLIMIT is memoryLimitPercent of resources.limits.memory, in MiB. */}}
{{- define "bench.loadtest.gcEnv" -}}
{{- $runner := .Values.loadtest.runner }}
{{- $gc := $runner.gc }}
{{- $limit := dig "limits" "memory" "" ($runner.resources | default dict) | toString }}
{{- if $gc.gogc }}
- {name: GOGC, value: {{ $gc.gogc | quote }}}
{{- end }}
{{- if $limit }}
{{- $bytes := include "bench.quantityBytes" (dict "key" "loadtest.runner.resources.limits.memory" "value" $limit) | float64 }}
{{- $mib := divf (mulf $bytes $gc.memoryLimitPercent) (mulf 100 1048576) | floor | int64 }}
- {name: GOMEMLIMIT, value: {{ printf "%dMiB" $mib | quote }}}
{{- else if eq $gc.gogc "off" }}
{{- fail "loadtest.runner.gc.gogc=off needs loadtest.runner.resources.limits.memory (e.g. 1Gi): without a limit the runner's heap grows until the pod is killed. Set a memory limit, or a number for gogc (e.g. \"400\")." }}
{{- end }}
{{- end }}

{{/* bench.quantityBytes (dict "key" KEY "value" QUANTITY): a Kubernetes memory quantity (1Gi, 512Mi,
2G, 1500000000) in bytes, or a failure naming KEY. */}}
{{- define "bench.quantityBytes" -}}
{{- $m := regexFind "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$" .value }}
{{- if not $m }}
{{- fail (printf "%s=%q: expected a memory quantity like 512Mi, 1Gi or 2G" .key .value) }}
{{- end }}
{{- $unit := regexFind "(Ki|Mi|Gi|Ti|k|M|G|T)$" .value }}
{{- $number := trimSuffix $unit .value | float64 }}
{{- $scale := get (dict "" 1.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12) $unit }}
{{- mulf $number $scale }}
{{- end }}
