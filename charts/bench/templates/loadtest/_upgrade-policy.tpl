{{/* bench.loadtest.upgradePolicy (dict "root" $ "name" NAME "up" loadtest.controllerUpgrade): the
variables and validations of the upgrade admission policy (admission-policy.yaml says what it allows).
The runner's update (scenarios/lib/kube.js rollWorkload, restoreImage) sends the whole object, so the
object is compared whole with the one before (_compare.tpl) but the pod template's roll annotation,
the restore record and, with an image set, the one container's image. That image may only become one
of two literals the installer wrote, `up.image` or `up.currentImage`: the restore record is the
runner's own writing and is never read here. */}}
{{- define "bench.loadtest.upgradePolicy" }}
{{- $root := .root }}
{{- $up := .up }}
{{- $c := include "bench.controllerUpgrade.container" $root }}
{{- /* the annotation that rolls the workload, as scenarios/contract.json's summary schema fixes it */}}
{{- $rolledAt := (fromJson ($root.Files.Get "scenarios/contract.json")).summarySchema.properties.controller_upgrade.properties.annotation.const }}
{{- $what := printf "the controller's %s %s" $up.kind .name }}
{{- /* a DaemonSet's template generation is the API server's own count, bumped on each template change */}}
{{- $annotations := ternary (list "bench/churn-restore" "deprecated.daemonset.template.generation") (list "bench/churn-restore") (eq $up.kind "DaemonSet") }}
{{- $nodes := include "bench.loadtest.workloadNodes" (dict "what" $what "spec" (list "template") "template" (ternary (list "metadata" "spec") (list "metadata") (not (empty $up.image))) "templateAnnotations" (list $rolledAt) "annotations" $annotations) | fromYamlArray }}
{{- if $up.image }}
{{- $one := printf "containers.filter(c, c.name == '%s')" $c }}
{{- $nodes = append $nodes (dict "id" "pod" "parent" "tpl" "key" "spec" "skip" (list "containers") "what" (printf "the pod spec of %s (serviceAccountName, volumes, ...)" $what)) }}
{{- $nodes = append $nodes (dict "id" "ctr" "new" (printf "object.spec.template.spec.%s.size() == 1 ? dyn(object.spec.template.spec.%s[0]) : dyn({})" $one $one) "old" (printf "oldObject.spec.template.spec.%s.size() == 1 ? dyn(oldObject.spec.template.spec.%s[0]) : dyn({})" $one $one) "skip" (list "image") "what" (printf "container %s of %s (command, args, env, ...)" $c $what)) }}
{{- end }}
variables:
  {{- include "bench.loadtest.compareVariables" $nodes | trim | nindent 2 }}
validations:
  # request.subResource is absent, not empty, on the object itself
  - expression: {{ printf "(!has(request.subResource) || request.subResource == '') && request.name == '%s'" .name | quote }}
    message: {{ printf "the load-test runner may update only %s %s itself (no scale or status subresource)" $up.kind .name | quote }}
  {{- if $up.image }}
  - expression: >-
      object.spec.template.spec.containers.map(c, c.name) == oldObject.spec.template.spec.containers.map(c, c.name)
      && object.spec.template.spec.{{ printf "containers.filter(c, c.name != '%s')" $c }} == oldObject.spec.template.spec.{{ printf "containers.filter(c, c.name != '%s')" $c }}
      && object.spec.template.spec.{{ printf "containers.filter(c, c.name == '%s')" $c }}.size() == 1
    message: {{ printf "the load-test runner may not change the controller's containers but container %s's image (no other container, none added or removed)" $c | quote }}
  - expression: >-
      variables.new_ctr.image == variables.old_ctr.image || variables.new_ctr.image in {{ list $up.image $up.currentImage | toJson | replace "\"" "'" }}
    message: {{ printf "the load-test runner may set container %s's image only to %s (loadtest.controllerUpgrade.image) or %s (loadtest.controllerUpgrade.currentImage)" $c $up.image $up.currentImage | quote }}
  {{- end }}
  {{- include "bench.loadtest.compareValidations" $nodes | trim | nindent 2 }}
{{- end }}
