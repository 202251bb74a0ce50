{{/* bench.loadtest.parametersPolicy (dict "root" $ "name" NAME "via" VIA): the variables and validations of
the parameters admission policy (admission-policy.yaml says what it allows). VIA: bench.dataplaneScale.via
(kind, replicas: the field, spec.kubernetes.deployment.replicas for an NginxProxy). The runner's update
(scenarios/lib/kube.js scaleDeployment, restoreDeployment) sends the whole object, so everything but that
field and the restore record must equal the object before: compared whole (_compare.tpl) along the
field's path, every level but the next key on the path, and the metadata but its annotations and the
API server's own fields. The field itself stays within the levels' bounds. */}}
{{- define "bench.loadtest.parametersPolicy" }}
{{- $keys := splitList "." .via.replicas }}
{{- $what := printf "%s %s" .via.kind .name }}
{{- $bounds := include "bench.loadtest.replicasBounds" (list .root "parameters") | fromJson }}
{{- $nodes := list
  (dict "id" "obj" "skip" (list "metadata" (first $keys)) "what" $what)
  (dict "id" "meta" "parent" "obj" "key" "metadata" "skip" (list "annotations" "managedFields" "resourceVersion" "generation") "what" (printf "the metadata of %s" $what))
  (dict "id" "ann" "parent" "meta" "key" "annotations" "skip" (list "bench/churn-restore") "what" (printf "the annotations of %s" $what)) }}
{{- $parent := "obj" }}
{{- range $i, $key := initial $keys }}
{{- $nodes = append $nodes (dict "id" (printf "p%d" $i) "parent" $parent "key" $key "skip" (list (index $keys (add1 $i))) "what" (printf "%s of %s" (join "." (slice $keys 0 (add1 $i))) $what)) }}
{{- $parent = printf "p%d" $i }}
{{- end }}
{{- $field := last $keys }}
variables:
  {{- include "bench.loadtest.compareVariables" $nodes | trim | nindent 2 }}
validations:
  # request.subResource is absent, not empty, on the object itself
  - expression: {{ printf "(!has(request.subResource) || request.subResource == '') && request.name == '%s'" .name | quote }}
    message: {{ printf "the load-test runner may update only %s itself (no subresource)" $what | quote }}
  - expression: {{ printf "!('%s' in variables.new_%s) || ('%s' in variables.old_%s && variables.new_%s['%s'] == variables.old_%s['%s']) || (type(variables.new_%s['%s']) == int && variables.new_%s['%s'] >= %d && variables.new_%s['%s'] <= %d)" $field $parent $field $parent $parent $field $parent $field $parent $field $parent $field (int $bounds.min) $parent $field (int $bounds.max) | quote }}
    message: {{ printf "the load-test runner may set %s of %s only from %d to %d (%s)" .via.replicas $what (int $bounds.min) (int $bounds.max) $bounds.why | quote }}
  {{- include "bench.loadtest.compareValidations" $nodes | trim | nindent 2 }}
{{- end }}
