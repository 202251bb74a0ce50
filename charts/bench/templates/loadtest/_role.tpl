{{/* bench.loadtest.roleRule (dict "rule" R "root" $): one rule of scenarios/contract.json runnerRole as
an RBAC rule, its usedBy as a comment: target backend names the backend Deployment, dataplane the data
plane's (loadtest.dataplaneScale.deployment), parameters the object dataplane-scale sets the replicas on
(loadtest.dataplaneScale.parameters.name), upgrade the controller's workload (loadtest.controllerUpgrade.name)
on the rule of its kind only (the other kind's rule renders nothing; upgrade's pods rule names no object);
namespace and controller rules name no object. */}}
{{- define "bench.loadtest.roleRule" }}
{{- $r := .rule -}}
{{- $kind := .root.Values.loadtest.controllerUpgrade.kind }}
{{- if not (and (eq $r.target "upgrade") (ne $r.resource "pods") (ne $r.resource (printf "%ss" (lower $kind)))) }}
# {{ $r.usedBy }}
- apiGroups: [{{ $r.apiGroup | quote }}]
  resources: [{{ $r.resource | quote }}]
  {{- if eq $r.target "backend" }}
  resourceNames: [{{ include "bench.backend.fullname" .root | quote }}]
  {{- else if eq $r.target "dataplane" }}
  resourceNames: [{{ include "bench.dataplaneScale.deployment" .root | quote }}]
  {{- else if eq $r.target "parameters" }}
  resourceNames: [{{ include "bench.dataplaneScale.parameters.name" .root | quote }}]
  {{- else if and (eq $r.target "upgrade") (ne $r.resource "pods") }}
  resourceNames: [{{ include "bench.controllerUpgrade.name" .root | quote }}]
  {{- else if not (has $r.target (list "namespace" "controller" "upgrade")) }}
  {{- fail (printf "scenarios/contract.json runnerRole: target %q of the %s rule is neither backend, namespace, controller, dataplane, parameters nor upgrade" $r.target $r.resource) }}
  {{- end }}
  verbs: {{ toJson $r.verbs }}
{{- end }}
{{- end }}
