{{/* What the runner's admission policies are built from (admission-policy.yaml): whether they render,
their names, the replicas each may set and the nodes of the objects they compare whole. */}}

{{/* bench.loadtest.policiesRendered: "true" when the policies render: loadtest on, not opted out, and a
Kubernetes of 1.30 or later (the v1 API is GA there). The version alone decides: renderers that pass
no API list (helm template, a GitOps tool) must not drop them. */}}
{{- define "bench.loadtest.policiesRendered" -}}
{{- if and .Values.loadtest.enabled .Values.loadtest.admissionPolicy.enabled (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) }}true{{ end }}
{{- end }}

{{/* bench.loadtest.policyPrefix: the start of the policies' names. They are cluster-scoped: release and
namespace alone can collide (release a in x-y and release a-bench-x in y), so a hash of the two
follows them. */}}
{{- define "bench.loadtest.policyPrefix" -}}
{{- printf "%s-%s-loadtest-%s" (include "bench.fullname" .) .Release.Namespace (include "bench.releaseHash" .) }}
{{- end }}

{{/* bench.releaseHash: 8 hex digits of namespace/fullname. A name the release gives an object outside its
namespace (a policy, a Role in the controller's or kube-system) carries it: release and namespace
names alone collide between two releases on one cluster. */}}
{{- define "bench.releaseHash" -}}
{{- printf "%s/%s" .Release.Namespace (include "bench.fullname" .) | sha256sum | trunc 8 }}
{{- end }}

{{/* bench.hashedName (list $ BASE): BASE (cut to 54 characters) and the release hash, at most 63. */}}
{{- define "bench.hashedName" -}}
{{- printf "%s-%s" (trunc 54 (index . 1) | trimSuffix "-") (include "bench.releaseHash" (index . 0)) }}
{{- end }}

{{/* bench.loadtest.replicasBounds (list $ POLICY): {"min", "max", "why"} as JSON: the replicas the
policy lets the runner set, from the values that say what the run scales to. The backend: from 0 (a
churn step may be 0) to loadtest.churn.maxReplicas, or else the largest of backend.replicas and the
churn pattern's steps; the data plane
and a parameters object: the levels' bounds, 1 to 100 (the run goes back to the replicas it found,
which the values do not name); the stream backend: loadtest.longLived.replicas to 2 more. */}}
{{- define "bench.loadtest.replicasBounds" -}}
{{- $root := index . 0 }}
{{- $policy := index . 1 }}
{{- if eq $policy "backend" }}
{{- $max := int $root.Values.backend.replicas }}
{{- $pattern := include "bench.loadtest.effective" (dict "root" $root "key" "loadtest.churn.pattern" "value" $root.Values.loadtest.churn.pattern) }}
{{- range $step := splitList "," $pattern | compact }}
{{- $max = max $max (atoi (first (splitList ":" $step))) }}
{{- end }}
{{- $set := int $root.Values.loadtest.churn.maxReplicas }}
{{- if $set }}
{{- dict "min" 0 "max" $set "why" (printf "loadtest.churn.maxReplicas %d" $set) | toJson }}
{{- else }}
{{- dict "min" 0 "max" $max "why" (printf "backend.replicas %d and the steps of loadtest.churn.pattern %s" (int $root.Values.backend.replicas) $pattern) | toJson }}
{{- end }}
{{- else if eq $policy "stream" }}
{{- $r := int $root.Values.loadtest.longLived.replicas }}
{{- dict "min" $r "max" (add $r 2) "why" "loadtest.longLived.replicas and the 2 more its backend disruption adds" | toJson }}
{{- else }}
{{- dict "min" 1 "max" 100 "why" "the bounds of loadtest.dataplaneScale.levels" | toJson }}
{{- end }}
{{- end }}

{{/* bench.loadtest.workloadNodes (dict "what" TEXT "spec" KEYS "template" KEYS "templateAnnotations" KEYS
"annotations" KEYS): the comparison nodes (_compare.tpl) of a Deployment or DaemonSet: everything
compared whole but metadata's annotations (bar ANNOTATIONS, default the restore record), managedFields,
resourceVersion and generation (the API server's own), spec's SPEC keys (default replicas and the
template), the template's TEMPLATE keys, and, when TEMPLATE holds metadata, the template's annotations
bar TEMPLATEANNOTATIONS. As YAML, for fromYamlArray. */}}
{{- define "bench.loadtest.workloadNodes" -}}
{{- $what := .what }}
{{- $nodes := list
  (dict "id" "obj" "skip" (list "metadata" "spec") "what" $what)
  (dict "id" "meta" "parent" "obj" "key" "metadata" "skip" (list "annotations" "managedFields" "resourceVersion" "generation") "what" (printf "the metadata of %s" $what))
  (dict "id" "ann" "parent" "meta" "key" "annotations" "skip" (.annotations | default (list "bench/churn-restore")) "what" (printf "the annotations of %s" $what))
  (dict "id" "spec" "parent" "obj" "key" "spec" "skip" (.spec | default (list "replicas" "template")) "what" (printf "the spec of %s" $what))
  (dict "id" "tpl" "parent" "spec" "key" "template" "skip" (.template | default list) "what" (printf "the pod template of %s" $what)) }}
{{- if has "metadata" (.template | default list) }}
{{- $nodes = append $nodes (dict "id" "tmeta" "parent" "tpl" "key" "metadata" "skip" (list "annotations") "what" (printf "the pod template's metadata (labels, finalizers, ...) of %s" $what)) }}
{{- $nodes = append $nodes (dict "id" "tann" "parent" "tmeta" "key" "annotations" "skip" .templateAnnotations "what" (printf "the pod template's annotations of %s" $what)) }}
{{- end }}
{{- toYaml $nodes }}
{{- end }}

{{/* bench.loadtest.unboundedRights: the runner's rights as lines "verbs resource [names] in namespace
NS", for NOTES when the policies are left out (loadtest.admissionPolicy.allowUnbounded). */}}
{{- define "bench.loadtest.unboundedRights" -}}
{{- $root := . }}
{{- $nsOf := dict "controller" (include "bench.controllerRestart.namespace" .) "dataplane" (include "bench.dataplaneScale.namespace" .) "parameters" (include "bench.dataplaneScale.parameters.namespace" .) "upgrade" (include "bench.controllerUpgrade.namespace" .) }}
{{- range (fromJson (.Files.Get "scenarios/contract.json")).runnerRole.rules }}
{{- $rule := . }}
{{- if include "bench.loadtest.ruleGranted" (dict "rule" . "root" $root) }}
{{- range include "bench.loadtest.roleRule" (dict "rule" . "root" $root) | fromYamlArray }}
   - {{ join ", " .verbs }} {{ index .resources 0 }}{{ with .resourceNames }} {{ join ", " . }}{{ else }} (any){{ end }} in namespace {{ get $nsOf $rule.target | default $root.Release.Namespace }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
