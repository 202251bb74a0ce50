{{/* bench.backend.podTemplate (dict "root" . "flapping" bool): the backend Deployment's pod template,
and backend-failover's flapping pod's (deployment.yaml, flapping.yaml): the same image, nginx.conf and
probes, plus for the flapping one the label bench/flapping, its nginx.conf with flap.conf in place
(configmap.yaml) and the toggler container (flap.sh) sharing the flag file's emptyDir. */}}
{{- define "bench.backend.podTemplate" -}}
{{- $root := .root }}
{{- $flapping := .flapping }}
{{- $b := $root.Values.backend -}}
metadata:
  labels:
    {{- include "bench.backend.selectorLabels" $root | nindent 4 }}
    {{- if $flapping }}
    bench/flapping: "true"
    {{- end }}
  annotations:
    checksum/config: {{ include (print $root.Template.BasePath "/backend/configmap.yaml") $root | sha256sum }}
    {{- with $b.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: {{ $b.terminationGracePeriodSeconds }}
  {{- with $b.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 101
    runAsGroup: 101
    seccompProfile:
      type: RuntimeDefault
  initContainers:
    - name: make-bodies
      image: {{ include "bench.image" $b.image | quote }}
      imagePullPolicy: {{ $b.image.pullPolicy | quote }}
      command: ["sh", "/etc/bench/make-bodies.sh", "/srv/bodies"]
      securityContext:
        {{- include "bench.containerSecurityContext" $root | nindent 8 }}
      volumeMounts:
        - {name: config, mountPath: /etc/bench, readOnly: true}
        - {name: bodies, mountPath: /srv/bodies}
  containers:
    - name: nginx
      image: {{ include "bench.image" $b.image | quote }}
      imagePullPolicy: {{ $b.image.pullPolicy | quote }}
      command: ["nginx", "-e", "stderr", "-c", {{ ternary "/etc/bench/nginx-flapping.conf" "/etc/bench/nginx.conf" $flapping | quote }}, "-g", "daemon off;"]
      ports:
        - name: http
          containerPort: {{ $b.port }}
          protocol: TCP
      {{- if $b.preStopSleepSeconds }}
      lifecycle:
        preStop:
          sleep:
            seconds: {{ $b.preStopSleepSeconds }}
      {{- end }}
      {{- with $b.readinessProbe }}
      readinessProbe:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $b.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- include "bench.containerSecurityContext" $root | nindent 8 }}
      volumeMounts:
        - {name: config, mountPath: /etc/bench, readOnly: true}
        - {name: bodies, mountPath: /srv/bodies, readOnly: true}
        - {name: tmp, mountPath: /tmp}
        {{- if $flapping }}
        - {name: flap, mountPath: /flap, readOnly: true}
        {{- end }}
    {{- if $flapping }}
    {{- $bf := $root.Values.loadtest.backendFailover }}
    # the toggler: the schedule reaches it as environment variables only (flap.sh checks them again)
    - name: flap
      image: {{ include "bench.image" $b.image | quote }}
      imagePullPolicy: {{ $b.image.pullPolicy | quote }}
      command: ["sh", "/etc/bench/flap.sh"]
      env:
        - {name: BENCH_FLAP_UNHEALTHY_SECONDS, value: {{ $bf.unhealthySeconds | int | toString | quote }}}
        - {name: BENCH_FLAP_HEALTHY_SECONDS, value: {{ $bf.healthySeconds | int | toString | quote }}}
        - {name: BENCH_FLAP_FILE, value: /flap/unhealthy}
      resources:
        requests: {cpu: 5m, memory: 8Mi}
        limits: {memory: 16Mi}
      securityContext:
        {{- include "bench.containerSecurityContext" $root | nindent 8 }}
      volumeMounts:
        - {name: config, mountPath: /etc/bench, readOnly: true}
        - {name: flap, mountPath: /flap}
    {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "bench.backend.fullname" $root }}
    - name: bodies
      emptyDir:
        sizeLimit: 8Mi
    - name: tmp
      emptyDir: {}
    {{- if $flapping }}
    - name: flap
      emptyDir:
        sizeLimit: 1Mi
    {{- end }}
  {{- with $b.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $b.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $b.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
