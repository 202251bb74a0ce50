{{/* bench.loadtest.routesPolicy: the variables and validations of the routes admission policy
(admission-policy.yaml says what it allows). The runner's routes (scenarios/lib/routes.js buildRoute,
stream-disruptions.js reloadRoute) are fixed shapes: a run label, one host, rules to the run's backends,
the chart's Gateway and listener or IngressClass. A route is refused unless it has exactly that shape
with literals the installer wrote, so a label alone cannot put the runner's route on another host, a
Service of the namespace (Grafana, Prometheus) or another Gateway. Both kinds share one policy: the
checks of each are behind request.resource.resource, on dyn(object) (each kind's fields are unknown to
the other's type check). */}}
{{- define "bench.loadtest.routesPolicy" }}
{{- $runId := include "bench.runId" . }}
{{- $routes := include "bench.routes.selected" . }}
{{- $domain := include "bench.routes.domain" . | replace "." "[.]" }}
{{- $testHost := ternary "" (include "bench.targetHost" .) (empty (include "bench.stream.disrupts" (list . "reload"))) }}
{{- $backends := list }}
{{- range splitList "," (include "bench.routes.backends" .) | compact }}{{ $backends = append $backends (trim .) }}{{ end }}
{{- $listener := ternary (include "bench.routes.listenerName" .) (include "bench.gateway.sectionName" .) (not (empty $routes)) }}
{{- $class := include "bench.ingressClassName" . }}
{{- $hostOk := dict }}
{{- range $kind, $letter := dict "httproute" "h" "ingress" "i" }}
{{- $h := ternary "h" "r.host" (eq $kind "httproute") }}
{{- $terms := list }}
{{- if $routes }}{{ $terms = append $terms (printf "%s.matches('^%s-[0-9]+[.]%s$')" $h $letter $domain) }}{{ end }}
{{- if $testHost }}{{ $terms = append $terms (printf "%s == '%s'" $h $testHost) }}{{ end }}
{{- $_ := set $hostOk $kind (join " || " $terms | default "false") }}
{{- end }}
{{- $backendList := $backends | toJson | replace "\"" "'" }}
{{- $hosts := join " or " (compact (list (ternary "" (printf "h-<n>/i-<n>.%s" (include "bench.routes.domain" .)) (empty $routes)) $testHost)) }}
variables:
  - name: route
    expression: "dyn(object)"
  - name: httproute
    expression: "request.resource.resource == 'httproutes'"
validations:
  - expression: >-
      (request.operation == 'CREATE' || (has(oldObject.metadata.labels) && 'bench/route-run' in oldObject.metadata.labels && oldObject.metadata.labels['bench/route-run'] == '{{ $runId }}'))
      && (request.operation == 'DELETE' || (has(object.metadata.labels) && 'bench/route-run' in object.metadata.labels && object.metadata.labels['bench/route-run'] == '{{ $runId }}'))
    message: {{ printf "the load-test runner may create, change and delete only its own run's routes (label bench/route-run=%s)" $runId | quote }}
  # what a controller or the API server may add later stays as it is; the runner adds none of it
  - expression: >-
      request.operation == 'DELETE'
      || ['annotations', 'finalizers', 'ownerReferences'].all(f, !(f in variables.route.metadata)
           || (request.operation == 'UPDATE' && f in dyn(oldObject).metadata && dyn(oldObject).metadata[f] == variables.route.metadata[f]))
    message: "the load-test runner may not give a route annotations, finalizers or owner references"
  - expression: >-
      request.operation == 'DELETE' || !variables.httproute || (
        variables.route.spec.all(k, k in ['parentRefs', 'hostnames', 'rules'])
        && 'parentRefs' in variables.route.spec && variables.route.spec.parentRefs.size() > 0
        && variables.route.spec.parentRefs.all(p, p.all(k, k in ['group', 'kind', 'name', 'namespace', 'sectionName'])
             && p.name == '{{ include "bench.gateway.name" . }}' && 'namespace' in p && p.namespace == '{{ include "bench.gateway.namespace" . }}'
             && (!('group' in p) || p.group == 'gateway.networking.k8s.io') && (!('kind' in p) || p.kind == 'Gateway')
             && {{ if $listener }}'sectionName' in p && p.sectionName == '{{ $listener }}'{{ else }}!('sectionName' in p){{ end }}))
    message: {{ printf "the load-test runner's HTTPRoutes may hold only parentRefs, hostnames and rules, and attach only to Gateway %s/%s%s" (include "bench.gateway.namespace" .) (include "bench.gateway.name" .) (ternary "" (printf ", listener %s" $listener) (empty $listener)) | quote }}
  - expression: >-
      request.operation == 'DELETE' || !variables.httproute || (
        'hostnames' in variables.route.spec && variables.route.spec.hostnames.size() > 0
        && variables.route.spec.hostnames.all(h, {{ get $hostOk "httproute" }})
        && 'rules' in variables.route.spec
        && variables.route.spec.rules.all(r, r.all(k, k in ['matches', 'backendRefs'])
             && 'backendRefs' in r && r.backendRefs.all(b, b.all(k, k in ['group', 'kind', 'name', 'port', 'weight'])
                  && (!('group' in b) || b.group == '') && (!('kind' in b) || b.kind == 'Service')
                  && 'port' in b && (b.name + ':' + string(b.port)) in {{ $backendList }})))
    message: {{ printf "the load-test runner's HTTPRoutes may serve only the run's hosts (%s) and send them only to the run's backends %s (loadtest.routes.backends), with no filter" $hosts (join ", " $backends) | quote }}
  - expression: >-
      request.operation == 'DELETE' || variables.httproute || (
        variables.route.spec.all(k, k in ['ingressClassName', 'rules'])
        {{- if $class }}
        && 'ingressClassName' in variables.route.spec && variables.route.spec.ingressClassName == '{{ $class }}'
        {{- end }}
        && 'rules' in variables.route.spec && variables.route.spec.rules.size() > 0
        && variables.route.spec.rules.all(r, r.all(k, k in ['host', 'http']) && 'host' in r && ({{ get $hostOk "ingress" }})
             && 'http' in r && r.http.paths.all(p, p.all(k, k in ['path', 'pathType', 'backend'])
                  && p.backend.all(k, k == 'service') && 'service' in p.backend && 'number' in p.backend.service.port
                  && (p.backend.service.name + ':' + string(p.backend.service.port.number)) in {{ $backendList }})))
    message: {{ printf "the load-test runner's Ingresses may serve only the run's hosts (%s)%s and send them only to the run's backends %s (loadtest.routes.backends), with no TLS or default backend" $hosts (ternary "" (printf " through IngressClass %s" $class) (empty $class)) (join ", " $backends) | quote }}
{{- end }}
