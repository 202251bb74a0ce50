{{/* bench.loadtest.upgradePolicy (dict "root" $ "name" NAME "up" loadtest.controllerUpgrade): the
variables and validations of the upgrade admission policy (admission-policy.yaml says what it allows).
The runner's update (scenarios/lib/kube.js rollWorkload, restoreImage) sends the whole object, so
everything but the allowed changes must be equal to the object before. With no image set the pod
spec is compared whole; with one, CEL cannot compare "the pod spec but one container's image" in one
expression, so the template compares each field of PodSpec (containers aside) and of the named
container (image aside), and the other containers whole. The image may become `up.image`, or go
back to the `from` of the bench/churn-restore record the object carried before (the record, when
first written, must name the image the container had). */}}
{{- define "bench.loadtest.upgradePolicy" }}
{{- $root := .root }}
{{- $up := .up }}
{{- $c := $up.container }}
{{- /* the annotation that rolls the workload, as scenarios/contract.json's summary schema fixes it */}}
{{- $rolledAt := (fromJson ($root.Files.Get "scenarios/contract.json")).summarySchema.properties.controller_upgrade.properties.annotation.const }}
{{- /* PodSpec's fields in Kubernetes 1.30 (the policy's minimum), containers aside; pod-level
resources came with 1.32 */}}
{{- $podFields := list "volumes" "initContainers" "ephemeralContainers" "restartPolicy" "terminationGracePeriodSeconds" "activeDeadlineSeconds" "dnsPolicy" "nodeSelector" "serviceAccountName" "serviceAccount" "automountServiceAccountToken" "nodeName" "hostNetwork" "hostPID" "hostIPC" "shareProcessNamespace" "securityContext" "imagePullSecrets" "hostname" "subdomain" "affinity" "schedulerName" "tolerations" "hostAliases" "priorityClassName" "priority" "dnsConfig" "readinessGates" "runtimeClassName" "enableServiceLinks" "preemptionPolicy" "overhead" "topologySpreadConstraints" "setHostnameAsFQDN" "os" "hostUsers" "schedulingGates" "resourceClaims" }}
{{- if semverCompare ">=1.32-0" $root.Capabilities.KubeVersion.Version }}{{ $podFields = append $podFields "resources" }}{{ end }}
{{- /* Container's fields in Kubernetes 1.30, name and image aside */}}
{{- $containerFields := list "command" "args" "workingDir" "ports" "envFrom" "env" "resources" "resizePolicy" "restartPolicy" "volumeMounts" "volumeDevices" "livenessProbe" "readinessProbe" "startupProbe" "lifecycle" "terminationMessagePath" "terminationMessagePolicy" "imagePullPolicy" "securityContext" "stdin" "stdinOnce" "tty" }}
{{- $rollout := ternary (list "replicas" "strategy" "minReadySeconds" "revisionHistoryLimit" "progressDeadlineSeconds" "paused") (list "updateStrategy" "minReadySeconds" "revisionHistoryLimit") (eq $up.kind "Deployment") }}
variables:
  - name: templateAnnotations
    expression: "has(object.spec.template.metadata.annotations) ? object.spec.template.metadata.annotations : {}"
  - name: oldTemplateAnnotations
    expression: "has(oldObject.spec.template.metadata.annotations) ? oldObject.spec.template.metadata.annotations : {}"
  - name: annotations
    expression: "has(object.metadata.annotations) ? object.metadata.annotations : {}"
  - name: oldAnnotations
    expression: "has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"
  # bench's restore record, and the revision the workload's controller writes (as the backend policy)
  - name: written
    expression: "['bench/churn-restore', 'deployment.kubernetes.io/revision', 'deprecated.daemonset.template.generation']"
  {{- if $up.image }}
  - name: target
    expression: {{ printf "object.spec.template.spec.containers.filter(c, c.name == '%s')" $c | quote }}
  - name: oldTarget
    expression: {{ printf "oldObject.spec.template.spec.containers.filter(c, c.name == '%s')" $c | quote }}
  - name: record
    expression: "'bench/churn-restore' in variables.annotations ? variables.annotations['bench/churn-restore'] : ''"
  - name: oldRecord
    expression: "'bench/churn-restore' in variables.oldAnnotations ? variables.oldAnnotations['bench/churn-restore'] : ''"
  {{- end }}
validations:
  # request.subResource is absent, not empty, on the object itself
  - expression: {{ printf "(!has(request.subResource) || request.subResource == '') && request.name == '%s'" .name | quote }}
    message: {{ printf "the load-test runner may update only %s %s itself (no scale or status subresource)" $up.kind .name | quote }}
  {{- if not $up.image }}
  - expression: "object.spec.template.spec == oldObject.spec.template.spec"
    message: {{ printf "the load-test runner may not change the controller's pod spec (image, serviceAccountName, command, volumes, ...): only the pod template's %s annotation (loadtest.controllerUpgrade.image is empty)" $rolledAt | quote }}
  {{- else }}
  - expression: >-
      variables.target.size() == 1 && variables.oldTarget.size() == 1
      && object.spec.template.spec.containers.map(c, c.name) == oldObject.spec.template.spec.containers.map(c, c.name)
      && object.spec.template.spec.containers.filter(c, c.name != '{{ $c }}') == oldObject.spec.template.spec.containers.filter(c, c.name != '{{ $c }}')
      {{- range $field := $containerFields }}
      && has(variables.target[0].{{ $field }}) == has(variables.oldTarget[0].{{ $field }})
      && (!has(variables.target[0].{{ $field }}) || variables.target[0].{{ $field }} == variables.oldTarget[0].{{ $field }})
      {{- end }}
      {{- range $field := $podFields }}
      && has(object.spec.template.spec.{{ $field }}) == has(oldObject.spec.template.spec.{{ $field }})
      && (!has(object.spec.template.spec.{{ $field }}) || object.spec.template.spec.{{ $field }} == oldObject.spec.template.spec.{{ $field }})
      {{- end }}
    message: {{ printf "the load-test runner may not change the controller's pod spec (serviceAccountName, command, volumes, other containers, ...): only container %s's image" $c | quote }}
  - expression: >-
      variables.target[0].image == variables.oldTarget[0].image
      || variables.target[0].image == '{{ $up.image }}'
      || variables.oldRecord.contains('"from":"' + variables.target[0].image + '"')
    message: {{ printf "the load-test runner may set container %s's image only to %s (loadtest.controllerUpgrade.image) or back to the image its bench/churn-restore record names" $c $up.image | quote }}
  - expression: >-
      variables.record == ''
      || (variables.oldRecord != '' ? variables.record.find('"from":"[^"]*"') == variables.oldRecord.find('"from":"[^"]*"')
          : variables.record.contains('"from":"' + variables.oldTarget[0].image + '"'))
    message: {{ printf "the bench/churn-restore record may name as the image to go back to only the image container %s had" $c | quote }}
  {{- end }}
  - expression: >-
      object.spec.selector == oldObject.spec.selector
      {{- range $field := $rollout }}
      && has(object.spec.{{ $field }}) == has(oldObject.spec.{{ $field }})
      && (!has(object.spec.{{ $field }}) || object.spec.{{ $field }} == oldObject.spec.{{ $field }})
      {{- end }}
      && object.spec.template.metadata.labels == oldObject.spec.template.metadata.labels
    message: {{ printf "the load-test runner may not change the controller's %s spec beyond its pod template (not its selector, %s or template labels)" $up.kind (join ", " $rollout) | quote }}
  - expression: >-
      variables.templateAnnotations.all(k, k == '{{ $rolledAt }}' || (k in variables.oldTemplateAnnotations && variables.oldTemplateAnnotations[k] == variables.templateAnnotations[k]))
      && variables.oldTemplateAnnotations.all(k, k == '{{ $rolledAt }}' || k in variables.templateAnnotations)
    message: {{ printf "the load-test runner may change only the %s annotation of the controller's pod template" $rolledAt | quote }}
  - expression: >-
      variables.annotations.all(k, k in variables.written || (k in variables.oldAnnotations && variables.oldAnnotations[k] == variables.annotations[k]))
      && variables.oldAnnotations.all(k, k in variables.written || k in variables.annotations)
      {{- range $field := list "labels" "ownerReferences" "finalizers" }}
      && has(object.metadata.{{ $field }}) == has(oldObject.metadata.{{ $field }})
      && (!has(object.metadata.{{ $field }}) || object.metadata.{{ $field }} == oldObject.metadata.{{ $field }})
      {{- end }}
    message: {{ printf "the load-test runner may change only the bench/churn-restore annotation of the controller's %s's metadata" $up.kind | quote }}
{{- end }}
