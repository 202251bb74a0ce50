{{/* Whole-object comparison for the runner's admission policies. A policy lists the places where the
runner may change something as a tree of nodes; every node is compared map by map with the object
before: each key but the node's `skip` keys must be present on both sides and equal, and none may
come or go. A key that is itself a node is skipped at its parent and compared one level down; any
other skipped key is free (spec.replicas, the restore record) and bounded by a validation of its own.
So a field Kubernetes adds later is compared too: nothing is allowed by leaving it off a list.

A node: dict "id" ID "parent" PARENT_ID "key" KEY "skip" (list KEYS) "what" TEXT, or "new"/"old" CEL
expressions in place of parent and key; the top node is id "obj" (object and oldObject). dyn(): CEL
type-checks a native object as its schema's record type, which it cannot iterate; at run time the
object is a map either way. */}}

{{/* bench.loadtest.compareVariables NODES: the policy variables new_ID and old_ID of each node. */}}
{{- define "bench.loadtest.compareVariables" }}
{{- range . }}
{{- $new := .new | default (ternary "dyn(object)" (printf "'%s' in variables.new_%s ? dyn(variables.new_%s['%s']) : dyn({})" .key .parent .parent .key) (eq .id "obj")) }}
{{- $old := .old | default (ternary "dyn(oldObject)" (printf "'%s' in variables.old_%s ? dyn(variables.old_%s['%s']) : dyn({})" .key .parent .parent .key) (eq .id "obj")) }}
- name: {{ printf "new_%s" .id }}
  expression: {{ $new | quote }}
- name: {{ printf "old_%s" .id }}
  expression: {{ $old | quote }}
{{- end }}
{{- end }}

{{/* bench.loadtest.compareValidations NODES: one validation per node, its message naming the node
and the keys of it the runner may change. */}}
{{- define "bench.loadtest.compareValidations" }}
{{- range . }}
{{- $skip := .skip | default list | toJson | replace "\"" "'" }}
- expression: {{ printf "variables.new_%s.all(k, k in %s || (k in variables.old_%s && variables.old_%s[k] == variables.new_%s[k])) && variables.old_%s.all(k, k in %s || k in variables.new_%s)" .id $skip .id .id .id .id $skip .id | quote }}
  message: {{ printf "the load-test runner may not change %s%s: compared whole with the object before" .what (ternary "" (printf " beyond %s" (join ", " .skip)) (empty .skip)) | quote }}
{{- end }}
{{- end }}
