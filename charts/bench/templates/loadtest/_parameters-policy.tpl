{{/* bench.loadtest.parametersPolicy (dict "name" NAME "via" VIA): the variables and validations of the
parameters admission policy (admission-policy.yaml says what it allows). VIA: bench.dataplaneScale.via
(kind, replicas: the field, spec.kubernetes.deployment.replicas for an NginxProxy). The runner's update
(scenarios/lib/kube.js scaleDeployment, restoreDeployment) sends the whole object, so everything but that
field and the restore record must equal the object before. CEL cannot drop one nested field and compare
the rest, so the object is compared map by map along the field's path: at each level every key but the
next one on the path is unchanged and none comes or goes (at the top, metadata aside: checked on its
own). dyn(): a custom resource's fields are maps at run time; without dyn the type check would read
them as the typed objects of the CRD's schema, which CEL cannot iterate. */}}
{{- define "bench.loadtest.parametersPolicy" }}
{{- $keys := splitList "." .via.replicas }}
variables:
  - name: new0
    expression: "dyn(object)"
  - name: old0
    expression: "dyn(oldObject)"
  {{- range $i, $key := initial $keys }}
  - name: {{ printf "new%d" (add1 $i) }}
    expression: {{ printf "'%s' in variables.new%d ? dyn(variables.new%d['%s']) : dyn({})" $key $i $i $key | quote }}
  - name: {{ printf "old%d" (add1 $i) }}
    expression: {{ printf "'%s' in variables.old%d ? dyn(variables.old%d['%s']) : dyn({})" $key $i $i $key | quote }}
  {{- end }}
  - name: annotations
    expression: "has(object.metadata.annotations) ? object.metadata.annotations : {}"
  - name: oldAnnotations
    expression: "has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"
validations:
  # request.subResource is absent, not empty, on the object itself
  - expression: {{ printf "(!has(request.subResource) || request.subResource == '') && request.name == '%s'" .name | quote }}
    message: {{ printf "the load-test runner may update only %s %s itself (no subresource)" .via.kind .name | quote }}
  - expression: >-
      {{- range $i := until (len $keys) }}
      {{- $skip := printf "k == '%s'%s" (index $keys $i) (ternary " || k == 'metadata'" "" (eq $i 0)) }}
      {{ if $i }}&& {{ end }}variables.new{{ $i }}.all(k, {{ $skip }} || (k in variables.old{{ $i }} && variables.old{{ $i }}[k] == variables.new{{ $i }}[k]))
      && variables.old{{ $i }}.all(k, {{ $skip }} || k in variables.new{{ $i }})
      {{- end }}
    message: {{ printf "the load-test runner may change only %s of %s %s (dataplane-scale's replicas), nothing else of the object" .via.replicas .via.kind .name | quote }}
  - expression: >-
      variables.annotations.all(k, k == 'bench/churn-restore' || (k in variables.oldAnnotations && variables.oldAnnotations[k] == variables.annotations[k]))
      && variables.oldAnnotations.all(k, k == 'bench/churn-restore' || k in variables.annotations)
      {{- range $field := list "labels" "ownerReferences" "finalizers" }}
      && has(object.metadata.{{ $field }}) == has(oldObject.metadata.{{ $field }})
      && (!has(object.metadata.{{ $field }}) || object.metadata.{{ $field }} == oldObject.metadata.{{ $field }})
      {{- end }}
    message: {{ printf "the load-test runner may change only the bench/churn-restore annotation of %s %s's metadata" .via.kind .name | quote }}
{{- end }}
