{{/* What may reach k6-operator's initializer shell. k6-operator v1.5.0 (pkg/resources/jobs/initializer.go)
builds the initializer's command as one `sh -c` string:
  k6 archive <script> -e NAME="value" ... -O <archive> <arguments>
with every spec.initializer.env entry's literal value between double quotes and spec.arguments
(minus -o/--out, --linger, --verbose) unquoted. Inside double quotes sh still expands $, ` and \,
and a " ends the quoting; unquoted, every metacharacter counts. So each value that lands there is
held to an allowlist (one place, here): validate.yaml checks the user keys with their names,
testrun.yaml checks every rendered initializer env value and argument as a backstop.
Kubernetes' own $(VAR) expansion (env values, command, args) would also rewrite a value on the
runner, while the initializer's shell runs it as a command substitution: `$` is refused everywhere.
spec.runner.envFrom and valueFrom entries never reach the line (k6-operator pastes only .env
values, and this chart gives valueFrom entries to the runners only).
One escape is used, for BENCH_ENVIRONMENT's JSON (bench.shell.escapeQuotes): inside double quotes sh
reads \" as a plain ", so a value whose every " is written \" and which holds no other \, $ or `
reaches k6 as the JSON; the backstop checks what is left once each \" is taken out. */}}

{{/* bench.shell.escapeQuotes TEXT: TEXT with every " written \" (see above). */}}
{{- define "bench.shell.escapeQuotes" -}}
{{- replace "\"" "\\\"" . }}
{{- end }}

{{/* Character classes (regexp bracket contents). url: RFC 3986 characters without the sub-delims sh
treats specially ($ ' ( ) * ; !); percent-encode anything else. env: printable ASCII without
" $ ' ; \ ` (no control character, no newline). argument: one k6 argument token. */}}
{{- define "bench.shell.urlChars" -}}A-Za-z0-9._~:/?#@&+,=%\[\]-{{- end }}
{{- define "bench.shell.envChars" -}}\x20!#%&(-:<-\[\]-_a-~{{- end }}
{{- define "bench.shell.argumentChars" -}}A-Za-z0-9_./:=,@+%-{{- end }}

{{- define "bench.shell.urlAllowed" -}}letters, digits and - . _ ~ : / ? # [ ] @ & + , = % (percent-encode anything else, e.g. %24 for $){{- end }}
{{- define "bench.shell.envAllowed" -}}printable ASCII except " $ ' ; \ ` (no newline or other control character){{- end }}
{{- define "bench.shell.argumentAllowed" -}}letters, digits and _ . / : = , @ + % -, arguments separated by single spaces{{- end }}

{{/* bench.shell.check (dict "key" KEY "value" VALUE "class" url|env|argument ["token" PART] ["hint" TEXT]):
fails naming KEY and the first character of VALUE (or of its PART) the initializer's line may not carry. */}}
{{- define "bench.shell.check" -}}
{{- $chars := include (printf "bench.shell.%sChars" .class) . }}
{{- $bad := regexFind (printf "[^%s]" $chars) (toString (.token | default .value)) }}
{{- if $bad }}
{{- fail (printf "%s %q: character %q is not allowed: k6-operator v1.5.0 pastes this value into its initializer's `sh -c` command line (k6 archive ... -e NAME=\"value\" ... <arguments>), where it could run a command. Allowed: %s.%s" .key (toString .value) $bad (include (printf "bench.shell.%sAllowed" .class) .) (.hint | default "")) }}
{{- end }}
{{- end }}

{{/* bench.loadtest.arguments: the TestRun's spec.arguments (k6 flags of the runners; k6-operator also
pastes them, bar -o, onto the initializer's line): the run's testid and controller tags, remote write
when there is a URL, then loadtest.extraArguments. */}}
{{- define "bench.loadtest.arguments" -}}
{{- /* experiment too: k6 tags dropped_iterations with the run's tags only, and a --tag here
replaces the script's run tags (the script also sets it on each scenario, which is merged). */}}
{{- $args := list (printf "--tag testid=%s" (include "bench.runId" .)) (printf "--tag controller=%s" .Values.controller) (printf "--tag experiment=%s" .Values.loadtest.scenario) }}
{{- if include "bench.remoteWriteUrl" . }}{{ $args = append $args "-o experimental-prometheus-rw" }}{{ end }}
{{- with .Values.loadtest.extraArguments }}{{ $args = append $args . }}{{ end }}
{{- join " " $args }}
{{- end }}

{{/* bench.loadtest.executorFlags: k6 flags that set what the scenario's executors set from the loadtest
keys (VUs, duration, iterations, stages, segments, rate limit, start paused) or that override its
environment. k6 refuses the mix (exit 104), or the run silently measures something else. Long names;
the short letters of the same flags. */}}
{{- define "bench.loadtest.executorFlags" -}}
--vus --duration --iterations --stage --execution-segment --execution-segment-sequence --max --rps --paused --env
{{- end }}
{{- define "bench.loadtest.executorShortFlags" -}}udismpe{{- end }}

{{/* bench.loadtest.checkArguments (dict "key" KEY "value" ARGUMENTS): the arguments' characters and
spacing (k6-operator splits spec.arguments on single spaces, with no quoting), then no flag of
bench.loadtest.executorFlags. */}}
{{- define "bench.loadtest.checkArguments" -}}
{{- $value := toString .value }}
{{- $key := .key }}
{{- range $token := splitList " " $value }}
{{- include "bench.shell.check" (dict "key" $key "value" $value "token" $token "class" "argument" "hint" " Spaces separate arguments: a value cannot hold one.") }}
{{- end }}
{{- if not (regexMatch "^([^ ]+( [^ ]+)*)?$" $value) }}
{{- fail (printf "%s %q: separate arguments with single spaces, none leading or trailing: k6-operator splits on every single space, and an empty argument stops k6" .key $value) }}
{{- end }}
{{- if and $value (not (hasPrefix "-" $value)) }}
{{- fail (printf "%s %q: expected k6 flags, starting with - (k6-operator refuses a TestRun whose arguments start with a bare word)" .key $value) }}
{{- end }}
{{- $long := splitList " " (include "bench.loadtest.executorFlags" .) }}
{{- $short := splitList "" (include "bench.loadtest.executorShortFlags" .) }}
{{- range $token := splitList " " $value }}
{{- $hit := has (regexReplaceAll "=.*$" $token "") $long }}
{{- /* a short cluster such as -qu10: letters up to the first that takes a value (k6's -o, -a, -c) */}}
{{- if and (hasPrefix "-" $token) (not (hasPrefix "--" $token)) }}
{{- $stop := false }}
{{- range $letter := splitList "" (regexFind "^[A-Za-z]*" (trimPrefix "-" $token)) }}
{{- if not $stop }}
{{- if has $letter $short }}{{ $hit = true }}{{ end }}
{{- if has $letter (list "o" "a" "c") }}{{ $stop = true }}{{ end }}
{{- end }}
{{- end }}
{{- end }}
{{- if $hit }}
{{- if or (hasPrefix "--env" $token) (regexMatch "^-[A-Za-z]*e" $token) }}
{{- fail (printf "%s %q: %q sets the runners' environment: use loadtest.extraEnv (or valueFrom/envFrom for secrets); BENCH_* variables come from the loadtest keys" $.key $value $token) }}
{{- end }}
{{- fail (printf "%s %q: %q sets k6's executor options (VUs, duration, iterations, stages, segments, rate limit or paused start), which the scenario builds from loadtest.rate, duration, connections, maxConnections and parallelism: k6 exits 104 on the mix. Set those keys instead" $.key $value $token) }}
{{- end }}
{{- end }}
{{- end }}
