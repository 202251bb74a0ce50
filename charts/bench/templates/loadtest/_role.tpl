{{/* bench.loadtest.roleRule (dict "rule" R "root" $): one rule of scenarios/contract.json runnerRole as
an RBAC rule, its usedBy as a comment: target backend names the backend Deployment, dataplane the data
plane's (loadtest.dataplaneScale.deployment); namespace and controller rules name no object. */}}
{{- define "bench.loadtest.roleRule" }}
{{- $r := .rule -}}
# {{ $r.usedBy }}
- apiGroups: [{{ $r.apiGroup | quote }}]
  resources: [{{ $r.resource | quote }}]
  {{- if eq $r.target "backend" }}
  resourceNames: [{{ include "bench.backend.fullname" .root | quote }}]
  {{- else if eq $r.target "dataplane" }}
  resourceNames: [{{ include "bench.dataplaneScale.deployment" .root | quote }}]
  {{- else if not (has $r.target (list "namespace" "controller")) }}
  {{- fail (printf "scenarios/contract.json runnerRole: target %q of the %s rule is neither backend, namespace, controller nor dataplane" $r.target $r.resource) }}
  {{- end }}
  verbs: {{ toJson $r.verbs }}
{{- end }}

