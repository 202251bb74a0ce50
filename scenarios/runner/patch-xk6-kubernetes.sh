#!/usr/bin/env bash
# Adapts xk6-kubernetes (the module as the Go proxy serves it, unpacked into DIR) to k6 v1, at build
# time: bench never copies its source. xk6-kubernetes v0.9.0 is the newest release the proxies serve
# and it is written against k6 v0.x, whose JavaScript runtime was goja; k6 v1 runs sobek (goja's fork)
# and `modules.VU.Runtime()` returns a `*sobek.Runtime`. The same types under another import path, so
# the adaptation is the import line, plus the one k6 test helper that became internal in k6 v1.
# Every edit must match exactly once: a new xk6-kubernetes release that moved a line stops the build
# here, naming the file and the line, instead of building something else.
# Usage: patch-xk6-kubernetes.sh DIR     (needs bash, awk; runs in the image's build stage too)
set -euo pipefail

dir=${1:?usage: patch-xk6-kubernetes.sh DIR}

# replace_line FILE OLD NEW: FILE's one line equal to OLD becomes NEW (NEW empty: the line goes).
replace_line() {
  local file=$dir/$1 old=$2 new=$3 count
  [ -f "$file" ] || { echo "patch-xk6-kubernetes: $1 not found in $dir" >&2; exit 1; }
  count=$(awk -v old="$old" '$0 == old { n++ } END { print n + 0 }' "$file")
  if [ "$count" != 1 ]; then
    echo "patch-xk6-kubernetes: expected the line '$old' once in $1, found it $count times:" \
      "this xk6-kubernetes is not the release the patch was written for (scenarios/runner/versions.env)" >&2
    exit 1
  fi
  awk -v old="$old" -v new="$new" '$0 == old { if (new != "") print new; next } { print }' "$file" > "$file.patched"
  mv "$file.patched" "$file"
}

chmod -R u+w "$dir"
# The JS binding: goja's types are sobek's in k6 v1 (the alias keeps every other line as it is).
replace_line kubernetes.go $'\t"github.com/dop251/goja"' $'\tgoja "github.com/grafana/sobek"'
# Its tests: the same runtime, and a warn-level log hook of bench's own for k6's lib/testutils one.
replace_line kubernetes_test.go $'\t"github.com/dop251/goja"' $'\tgoja "github.com/grafana/sobek"'
replace_line kubernetes_test.go $'\t"go.k6.io/k6/lib/testutils"' ""
replace_line kubernetes_test.go $'\ttestLog.AddHook(&testutils.SimpleLogrusHook{' $'\ttestLog.AddHook(&benchWarnHook{'
cat > "$dir/bench_hook_test.go" <<'GO'
package kubernetes

import "github.com/sirupsen/logrus"

// benchWarnHook stands for k6 v0.x's lib/testutils.SimpleLogrusHook (internal in k6 v1): the tests
// only register it, so it keeps nothing.
type benchWarnHook struct{ HookedLevels []logrus.Level }

func (h *benchWarnHook) Levels() []logrus.Level { return h.HookedLevels }
func (h *benchWarnHook) Fire(*logrus.Entry) error { return nil }
GO
