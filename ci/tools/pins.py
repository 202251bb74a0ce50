"""The pinned versions, each read from its one source, for the tests and `make docs`.

Sources (every other place reads one of them, is written from them by `make docs`, or is listed
below as a recorded or checked copy):
  scenarios/runner/versions.env   the runner: k6, xk6-kubernetes, the image build's Go, xk6, Alpine
  scenarios/calibrate/versions.env  the calibration's vegeta
  backends/stream/versions.env    the stream backend's image build: its Go
  ci/versions.env                 the harness: Kubernetes, CoreDNS, helm, kubeconform, k6-operator...
  values/traefik.yaml             TRAEFIK_VERSION, the preset's traefik.image.tag (Helm reads it)
  charts/bench/Chart.yaml         GATEWAY_API_VERSION, its bench.dev/gateway-api-version annotation
  charts/bench/Chart.yaml         CHART_<ALIAS> (CHART_TRAEFIK, CHART_K6_OPERATOR...), each subchart's version
Derived: KUBE_MINOR (1.N of KUBERNETES_VERSION) and KUBE_RENDER_VERSION (1.N.0, what the chart is
rendered and validated for).

A mention is a version written in prose the way MENTIONS describes it ("Traefik v3.6.12", "helm
v3.22.0"): `make docs` (doc-figures.py --write) rewrites every mention to its pin, and --check
fails naming the file, the line and the pin. Any other copy of a pinned version in a tracked file
is a stray literal (`stray_literals`, test_pins.py), unless the file or line is listed below:
RECORDED (what a past run or a source read at a tag recorded), CHECKED (a tool's own format,
checked by a test), UNRELATED (the same digits, another thing) or TOOLING (this code's examples).
The subcharts' versions are kept where written as mentions but not scanned for other copies: the
chart README's source tables cite them beside tags and commits.
"""
import functools
import pathlib
import re
import subprocess
from typing import NamedTuple

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENV_FILES = ("scenarios/runner/versions.env", "scenarios/calibrate/versions.env", "ci/versions.env",
             "backends/stream/versions.env")
TRAEFIK_PRESET = "values/traefik.yaml"
CHART_YAML = "charts/bench/Chart.yaml"
# A pin's value: a release string (letters only as a leading v or in a suffix like -rc.1).
VALUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+-]*$")
LINE = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")
V = r"(v?\d+\.\d+\.\d+)"  # a full version in a mention; the group is what `make docs` rewrites
VV = r"(v\d+\.\d+\.\d+)"  # the same with its v (where a bare number is another thing's version)


class Pin(NamedTuple):
    key: str
    value: str
    source: str  # path:line of the one place the value is written


class PinError(Exception):
    """A pin file that does not follow the format (the message names the file and line)."""


def read_env(path, text=None, root=ROOT):
    """{KEY: Pin} of a KEY=value pin file. Each pin needs a `# why` comment right above it."""
    text = (root / path).read_text() if text is None else text
    pins, previous = {}, ""
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{number}"
        if not line.strip() or line.startswith("#"):
            previous = line
            continue
        match = LINE.match(line)
        if not match:
            raise PinError(f"{where}: {line!r} is not KEY=value (KEY in capitals, no spaces around =)")
        key, value = match.groups()
        if not VALUE.match(value):
            raise PinError(f"{where}: {key}={value!r}: a value is one release string, no quotes, spaces or comments")
        if not previous.startswith("#"):
            raise PinError(f"{where}: {key} has no `# why` comment on the line above it")
        if key in pins:
            raise PinError(f"{where}: {key} already pinned at {pins[key].source}")
        pins[key] = Pin(key, value, where)
        previous = line
    return pins


def block_scalar(text, keys, where):
    """(value, line number) of a scalar in a block-mapping YAML file, e.g. ("traefik", "image", "tag").
    A line walk, not a YAML library: `make docs` runs on any python3 (test_pins.py holds the result
    against PyYAML's). Quotes around the value are dropped."""
    depth, indent = 0, -1
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        spaces = len(line) - len(line.lstrip())
        if depth and spaces <= indent:
            break  # left the block of the key matched last, without the rest of the path
        match = re.match(r"^ *" + re.escape(keys[depth]) + r":(?:\s+(.*?))?\s*(?:#.*)?$", line)
        if match and spaces > indent:
            depth, indent = depth + 1, spaces
            if depth == len(keys):
                return match.group(1).strip("\"'"), number
    raise PinError(f"{where}: no {'.'.join(keys)}")


def read_pins(root=ROOT):
    """Every pin by key, from its source (see the module's docstring)."""
    pins = {}
    for path in ENV_FILES:
        for key, pin in read_env(path, root=root).items():
            if key in pins:
                raise PinError(f"{pin.source}: {key} already pinned at {pins[key].source}")
            pins[key] = pin
    tag, number = block_scalar((root / TRAEFIK_PRESET).read_text(), ("traefik", "image", "tag"), TRAEFIK_PRESET)
    pins["TRAEFIK_VERSION"] = Pin("TRAEFIK_VERSION", tag, f"{TRAEFIK_PRESET}:{number}")
    gateway, number = block_scalar((root / CHART_YAML).read_text(), ("annotations", "bench.dev/gateway-api-version"), CHART_YAML)
    pins["GATEWAY_API_VERSION"] = Pin("GATEWAY_API_VERSION", gateway, f"{CHART_YAML}:{number}")
    pins.update(chart_pins(root))
    kube = pins["KUBERNETES_VERSION"]
    minor = ".".join(kube.value.lstrip("v").split(".")[:2])
    pins["KUBE_MINOR"] = Pin("KUBE_MINOR", minor, kube.source)
    pins["KUBE_RENDER_VERSION"] = Pin("KUBE_RENDER_VERSION", minor + ".0", kube.source)
    return pins


def _chart_dependencies(root):
    """(key, names, version, path:line) per Chart.yaml dependency; key CHART_<ALIAS> (CHART_TRAEFIK...),
    names its chart name and alias."""
    found, current = [], None
    for number, line in enumerate((root / CHART_YAML).read_text().splitlines(), 1):
        if line.startswith("  - name: "):
            current = {"name": line.split(": ", 1)[1].strip()}
        elif current is not None and line.startswith("    alias: "):
            current["alias"] = line.split(": ", 1)[1].strip()
        elif current is not None and line.startswith("    version: "):
            alias = current.get("alias", current["name"])
            found.append(("CHART_" + alias.upper().replace("-", "_"), {current["name"], alias},
                          line.split(": ", 1)[1].strip(), f"{CHART_YAML}:{number}"))
    return found


def chart_pins(root=ROOT):
    """CHART_<ALIAS>: each subchart's version as Chart.yaml pins it (Helm reads it there)."""
    return {key: Pin(key, version, source) for key, _, version, source in _chart_dependencies(root)}


@functools.lru_cache(maxsize=None)
def _chart_patterns():
    """A subchart's version written "<chart or alias> <version>" or "<name>-<version>" (its
    helm.sh/chart label), and in the presets tables (README.md, charts/bench/README.md) the version
    in a controller preset's row: after "chart", else the first one. With a v where Chart.yaml
    writes one (gateway-helm)."""
    found, versions = [], {}
    for key, names, version, _ in _chart_dependencies(ROOT):
        ver = VV if version.startswith("v") else r"(\d+\.\d+\.\d+)"
        versions[key] = ver
        found += [(key, re.compile(r"(?<![\w/.-])" + re.escape(name) + r"[- ]" + ver + r"(?![\w.])")) for name in sorted(names)]
    for preset in sorted((ROOT / "values").glob("*.yaml")):
        controller = re.search(r"^controller: *(\S+)", preset.read_text(), re.M)
        key = "CHART_" + (controller.group(1) if controller else "").upper().replace("-", "_")
        if key in versions:
            row = r"^\| `" + re.escape(preset.name) + r"` \| "
            found += [(key, re.compile(row + r"[^|]*?\bchart " + versions[key])),
                      (key, re.compile(row + r"(?![^|]*\bchart \d)[^|\d]*?" + versions[key]))]
    return found


def value(key, root=ROOT):
    """One pin's value, e.g. value("K6_VERSION") == "v1.8.1"."""
    return read_pins(root)[key].value


# (pin key, pattern): how prose writes a pinned version; the pattern's one group is the version.
MENTIONS = [
    ("K6_VERSION", r"\bk6 " + V),
    ("K6_VERSION", r"\bbench/k6:" + V),
    ("K6_VERSION", r"\bbench/k6, tag: " + V),
    ("K6_VERSION", r"\| k6 \+ xk6-kubernetes \| " + V),
    ("XK6_KUBERNETES_VERSION", r"\bxk6-kubernetes " + V),
    ("K6_VERSION", r"^\| k6 \| " + V),
    ("XK6_KUBERNETES_VERSION", r"^\| xk6-kubernetes \| " + V),
    ("GO_VERSION", r"^\| Go \(image build\) \| (\d+\.\d+\.\d+)"),
    ("ALPINE_VERSION", r"^\| Alpine \(image base\) \| (\d+\.\d+\.\d+)"),
    ("XK6_KUBERNETES_VERSION", r"\| k6 \+ xk6-kubernetes \| v?[\d.]+ \+ " + V),
    ("ALPINE_VERSION", r"\bAlpine Linux (\d+\.\d+\.\d+)"),
    ("VEGETA_VERSION", r"\bvegeta " + VV),
    ("TRAEFIK_VERSION", r"\bTraefik " + V),
    ("TRAEFIK_VERSION", r"\bbench/traefik:" + V),
    ("TRAEFIK_VERSION", r"\bimage pinned to " + V),
    ("TRAEFIK_VERSION", r"\bpins the image to " + V),
    ("TRAEFIK_VERSION", r"\btraefik-\d+\.\d+\.\d+`?/`?" + V),
    ("TRAEFIK_VERSION", r"\| Traefik \| " + V),
    ("GATEWAY_API_VERSION", r"\bGateway API " + V),
    ("GATEWAY_API_VERSION", r"\bGateway API is pinned at " + V),
    ("GATEWAY_API_VERSION", r"\bgateway-api/releases/download/" + V),
    ("GATEWAY_API_VERSION", r"\bsigs\.k8s\.io/gateway-api@" + V),
    ("KUBERNETES_VERSION", r"\bKubernetes " + V),
    ("KUBERNETES_VERSION", r"\bkube-apiserver " + V),
    ("KUBERNETES_VERSION", r"\bkubectl " + V),
    ("KUBERNETES_VERSION", r"\bk8s\.io/kubernetes " + V),
    ("KUBERNETES_VERSION", r"\| Kubernetes \(local cluster\) \| " + V),
    ("KUBERNETES_VERSION", r"\bfrom the " + V + r" module graph"),
    ("KUBE_MINOR", r"\bKubernetes (\d+\.\d+)(?= JSON schemas| and the CRD schemas|,? the TestRun)"),
    ("KUBE_MINOR", r"\bvalid for Kubernetes (\d+\.\d+)(?![.\d])"),
    ("KUBE_RENDER_VERSION", r"--kube-version (\d+\.\d+\.\d+)"),
    ("COREDNS_VERSION", r"\bCoreDNS " + V),
    ("COREDNS_VERSION", r"\bbench/coredns:" + V),
    ("COREDNS_VERSION", r"\| CoreDNS \| " + V),
    ("HELM3_VERSION", r"\bhelm (v3\.\d+\.\d+)"),
    ("HELM3_VERSION", r"\| helm \| (v3\.\d+\.\d+)"),
    ("HELM4_VERSION", r"\bhelm (v4\.\d+\.\d+)"),
    ("HELM4_VERSION", r"\bhelm v3\.\d+\.\d+ and (v4\.\d+\.\d+)"),
    ("HELM4_VERSION", r"\| helm \| v3\.\d+\.\d+ and (v4\.\d+\.\d+)"),
    ("HELM_UNITTEST_VERSION", r"\bhelm-unittest " + V),
    ("HELM_UNITTEST_VERSION", r"\| helm-unittest, kubeconform \| " + V),
    ("KUBECONFORM_VERSION", r"\bkubeconform " + V),
    ("KUBECONFORM_VERSION", r"\| helm-unittest, kubeconform \| v?[\d.]+, " + V),
    ("KUBERNETES_VALIDATE_VERSION", r"\bkubernetes-validate " + V),
    ("KUBERNETES_VALIDATE_VERSION", r"\| kubernetes-validate \(schemas\), yamllint \| " + V),
    ("YAMLLINT_VERSION", r"\| kubernetes-validate \(schemas\), yamllint \| [\d.]+, " + V),
    ("K6_OPERATOR_VERSION", r"\bk6-operator " + VV),
    ("K6_OPERATOR_VERSION", r"\bbench/k6-operator:" + V),
    ("K6_OPERATOR_VERSION", r"\| k6-operator \| " + VV),
    ("K6_OPERATOR_VERSION", r"\bk6-operator:starter-" + VV),
    ("K6_OPERATOR_VERSION", r"\bk6-operator:controller-" + VV),
    ("K6_OPERATOR_VERSION", r"\bgithub\.com/grafana/k6-operator@" + V),
    ("K6_OPERATOR_VERSION", r"(?<![\w-])operator " + VV),
    ("PROMETHEUS_OPERATOR_VERSION", r"\bprometheus-operator " + V),
]
# Mentions only one file has: path -> [(pin key, pattern)].
FILE_MENTIONS = {
    # the e2e's Traefik is the preset's release; the run records it as the controller's version
    "charts/bench/ci/08-local-cluster-values.yaml": [("TRAEFIK_VERSION", r"^\s+controller_version: " + VV)],
}
_COMPILED = [(key, re.compile(pattern, re.M)) for key, pattern in MENTIONS]
_DOTTED = re.compile(r"\d\.\d")
_FILE_COMPILED = {path: [(key, re.compile(p, re.M)) for key, p in found] for path, found in FILE_MENTIONS.items()}

# Files that keep the versions they were made with: what a past run recorded, or a source that was
# read at a tag. Never rewritten, never a stray literal. path -> why.
RECORDED = {
    "ci/tools/dashboards/fixtures/metrics.json": "the metric names as read in those releases' sources",
    "ci/test/report/testdata/controller-restart.json": "a summary a real run wrote (its provenance)",
    "ci/test/report/testdata/dataplane-scale.json": "controller-restart.json's recorded run, its section rewritten by hand",
    "ci/test/report/testdata/controller-upgrade.json": "dataplane-scale.json's recorded run, its section rewritten by hand",
    "ci/test/report/testdata/backend-failover.json": "dataplane-scale.json's recorded run, its section rewritten by hand",
    "ci/test/report/testdata/long-lived.json": "backend-failover.json's recorded run, its section rewritten by hand",
    "ci/test/report/test_provenance.py": "provenance objects as a real cluster returned them",
}
# Lines that record a measurement or a source read at a tag, in files that otherwise follow the pins:
# (path, a fragment of the line) -> why. Neither rewritten nor a stray literal.
RECORDED_LINES = {
    ("ci/README.md", "single-node Kubernetes v"): "the cluster the measurements of that section ran on",
    ("ci/README.md", "| what the churn did to Traefik"): "a measurement on that release",
    ("ci/e2e/README.md", "| cold: Traefik"): "a build time measured for that release",
    ("ci/e2e/README.md", "| cold: k6-operator"): "a build time measured for that release",
    ("scenarios/README.md", "Measured by the tests (ci/test/scenarios/routes/, two runs on"): "runs on that release",
    ("dashboards/report/README.md", "(`ci/test/report/testdata/routes-ab.json`"): "the release a recorded run used",
    ("ci/test/report/test_report.py", "# ---- the route experiments, from real runs"): "the release recorded runs used",
    ("ci/test/report/test_report.py", "deleted under 200 req/s, its runner's own summary"): "the release a recorded run used",
    ("charts/bench/README.md", "| helm/helm | `v"): "the source read at that tag",
    ("charts/bench/README.md", "| prometheus-operator/prometheus-operator | `v"): "the source read at that tag",
    ("ci/cluster/README.md", "Images (uncompressed):"): "image sizes measured for those releases",
    ("charts/bench/README.md", "| base (alias `istio-base`), istiod"): "the Gateway API each Istio release was built on",
    ("charts/bench/templates/monitoring/prometheus-networkpolicy.yaml", "prometheus-operator's labels (v"):
        "the source read at that tag",
}
# Copies a tool needs in its own format, each checked against the pin by a test. path -> checker.
CHECKED = {
    "scenarios/runner/xk6-bench/go.mod": "test_pins.py: its go.k6.io/k6 requirement is K6_VERSION",
    "ci/licences.tsv": "test_licences.py: each row's version is the one the scripts install",
    "requirements.txt": "pip's own pin file (PyYAML, as PYYAML_VERSION; test_pins.py)",
    "ci/tools/requirements-chart.txt": "pip's own pin file (kubernetes-validate, yamllint, PyYAML; test_pins.py)",
}
# The pin tooling itself: its examples, patterns and planted copies are not copies of the pins.
TOOLING = {"ci/tools/pins.py", "ci/tools/doc-figures.py"}
# Same digits, another thing: (path, fragment of the line) -> what it is.
UNRELATED = {
    ("charts/bench/values.yaml", 'tag: "1.37.0"'): "the busybox image of the hook pods",
    ("charts/bench/README.md", "--image=busybox:1.37.0"): "busybox, as in the hook pods",
    ("charts/bench/ci/06-shared-cluster-values.yaml", "bench/k6, tag: v0.1.0"): "an example runner image tag",
    ("ci/tools/schemas.py", 'help="e.g. '): "an example in its usage; the schema cache's key hashes this file",
}
# The tracked files scanned for mentions and stray literals: text, not images the tools draw.
SKIPPED_SUFFIXES = {".svg", ".png", ".lock"}


def tracked_texts(root=ROOT):
    """{path: text} of the tracked text files (symlinks not followed); every file when root is a
    copy outside git (the tests' copies)."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, text=True)
    if listed.returncode == 0 and (root / ".git").exists():
        names = listed.stdout.split("\0")
    else:
        names = [str(p.relative_to(root)) for p in sorted(root.rglob("*")) if ".git" not in p.parts]
    texts = {}
    for name in filter(None, names):
        path = root / name
        if path.is_symlink() or not path.is_file() or path.suffix in SKIPPED_SUFFIXES:
            continue
        try:
            texts[name] = path.read_text()
        except UnicodeDecodeError:
            continue
    return texts


def _fixed_line(path, line):
    return path in RECORDED or path in CHECKED or path in ENV_FILES or path in TOOLING or any(
        p == path and fragment in line for (p, fragment) in (*RECORDED_LINES, *UNRELATED))


def mentions(path, text):
    """(line number, key, version written, start, end) of every mention in text, recorded lines left out."""
    found = []
    patterns = _COMPILED + _FILE_COMPILED.get(path, []) + _chart_patterns()
    for number, line in enumerate(text.splitlines(), 1):
        # every mention holds a dotted number: the other lines need no pattern (the scan stays fast)
        if not _DOTTED.search(line) or _fixed_line(path, line):
            continue
        for key, pattern in patterns:
            for match in pattern.finditer(line):
                found.append((number, key, match.group(1), match.start(1), match.end(1)))
    return found


def rewrite(path, text, pins):
    """text with every mention set to its pin (what `make docs` writes)."""
    lines = text.split("\n")
    spans = {(number, start, end): (key, written) for number, key, written, start, end in mentions(path, text)}
    # right to left within a line, so the earlier offsets stay valid
    for (number, start, end), (key, written) in sorted(spans.items(), key=lambda s: (s[0][0], -s[0][1])):
        want = pins[key].value
        if written.startswith("v") != want.startswith("v"):
            want = want.lstrip("v") if not written.startswith("v") else "v" + want
        line = lines[number - 1]
        lines[number - 1] = line[:start] + want + line[end:]
    return "\n".join(lines)


def stale(texts, pins):
    """'path:line: ...' for every mention that differs from its pin."""
    bad = []
    for path, text in sorted(texts.items()):
        for number, key, written, _, _ in mentions(path, text):
            if written.lstrip("v") != pins[key].value.lstrip("v"):
                bad.append(f"{path}:{number}: says {written} where {pins[key].source} pins {key}={pins[key].value}")
    return bad


def _literal(value):
    """A pattern for value as a whole version (v optional), not part of a longer number."""
    return re.compile(r"(?<![\w.])v?" + re.escape(value.lstrip("v")) + r"(?![\w]|\.\d)")


def stray_literals(texts, pins):
    """'path:line: ...' for every copy of a pinned full version that is neither a mention nor allowed."""
    bad = []
    # the subcharts' versions are kept by `make docs` where written as mentions, but not scanned for
    # copies: the chart README's source tables cite them beside tags and commits
    full = {k: p for k, p in pins.items() if re.fullmatch(r"v?\d+\.\d+\.\d+", p.value) and not k.startswith("CHART_")}
    for path, text in sorted(texts.items()):
        covered = {}
        for number, key, _, start, end in mentions(path, text):
            covered.setdefault(number, []).append((start, end))
        present = [(k, p) for k, p in full.items() if p.value.lstrip("v") in text]  # the rest cannot match
        for number, line in enumerate(text.splitlines(), 1) if present else ():
            if _fixed_line(path, line):
                continue
            for key, pin in present:
                if pin.source == f"{path}:{number}":
                    continue  # the pin itself (values/traefik.yaml's tag, Chart.yaml's annotation)
                for match in _literal(pin.value).finditer(line):
                    if any(match.start() < e and s < match.end() for s, e in covered.get(number, [])):
                        continue
                    bad.append(f"{path}:{number}: {match.group()} is {key} ({pin.source}): read the pin file, "
                               "or write it as a mention `make docs` keeps (ci/tools/pins.py MENTIONS)")
    return bad
