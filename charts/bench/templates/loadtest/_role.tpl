{{/* bench.loadtest.roleRule (dict "rule" R "root" $): one rule of scenarios/contract.json runnerRole as
an RBAC rule, its usedBy as a comment: target backend names the backend Deployment, dataplane the data
plane's (loadtest.dataplaneScale.deployment), parameters the object dataplane-scale sets the replicas on
(loadtest.dataplaneScale.parameters.name), upgrade the controller's workload (loadtest.controllerUpgrade.name)
on the rule of its kind only (the other kind's rule renders nothing; upgrade's pods rule names no object),
stream the stream backend's Deployment (long-lived); namespace and controller rules name no object. */}}
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
  {{- else if eq $r.target "stream" }}
  resourceNames: [{{ include "bench.stream.fullname" .root | quote }}]
  {{- else if and (eq $r.target "upgrade") (ne $r.resource "pods") }}
  resourceNames: [{{ include "bench.controllerUpgrade.name" .root | quote }}]
  {{- else if not (has $r.target (list "namespace" "controller" "upgrade")) }}
  {{- fail (printf "scenarios/contract.json runnerRole: target %q of the %s rule is neither backend, namespace, controller, dataplane, parameters, upgrade nor stream" $r.target $r.resource) }}
  {{- end }}
  verbs: {{ toJson $r.verbs }}
{{- end }}
{{- end }}

{{/* bench.loadtest.ruleGranted (dict "rule" R "root" $): "true" when the runner gets rule R of
scenarios/contract.json runnerRole: it names no scenario (onlyFor) or loadtest.scenario is one of
them; a rule with via only when loadtest.dataplaneScale.via is that one (default deployment); for
long-lived a rule with a disruption only when loadtest.longLived.disruptions holds it, reload's route
rule only for the kind of route it creates (bench.stream.routeKind). */}}
{{- define "bench.loadtest.ruleGranted" -}}
{{- $r := .rule }}
{{- $lt := .root.Values.loadtest }}
{{- if and (or (not $r.onlyFor) (has $lt.scenario $r.onlyFor)) (or (not $r.via) (eq $r.via ($lt.dataplaneScale.via | default "deployment"))) }}
{{- $kind := get (dict "httproutes" "httproute" "ingresses" "ingress") $r.resource }}
{{- if or (not $r.disruption) (ne $lt.scenario "long-lived") (and (has $r.disruption $lt.longLived.disruptions) (or (ne $r.disruption "reload") (eq $kind (include "bench.stream.routeKind" .root)))) }}true{{ end }}
{{- end }}
{{- end }}
